/*
 * common.c — see common.h.
 */
#include "config.h"
#include "common.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *tool_name = "recordio";
volatile int tool_interrupted;

void tool_init(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
	tool_name = slash ? slash + 1 : (argv0 ? argv0 : "recordio");
	/* libtool wrappers run the real binary as lt-NAME */
	if (!strncmp(tool_name, "lt-", 3))
		tool_name += 3;
}

static void vreport(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

void tool_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	tool_try_help();
}

void tool_try_help(void)
{
	fprintf(stderr, "Try '%s --help'.\n", tool_name);
	exit(EXIT_USAGE);
}

void tool_check_output_prefix(const char *option, const char *prefix)
{
	const char *slash = strrchr(prefix, '/');
	const char *base = slash ? slash + 1 : prefix;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		tool_usage_error("%s: '%s' is a directory; give a file prefix such as %s%strain",
		                 option, prefix, prefix, *base ? "/" : "");
}

void tool_refuse_output_dir(const char *option, const char *prefix)
{
	struct stat st;
	if (stat(prefix, &st) == 0 && S_ISDIR(st.st_mode))
		tool_usage_error("%s: '%s' is a directory (the shards would go beside it, as "
		                 "%s-00000-of-...); give a file prefix such as %s/train",
		                 option, prefix, prefix, prefix);
}

uint64_t tool_parse_u64(const char *option, const char *value)
{
	char *end;
	errno = 0;
	if (!value || !*value || *value == '-')
		tool_usage_error("%s: expected a non-negative integer, got '%s'", option,
		                 value ? value : "");
	unsigned long long v = strtoull(value, &end, 10);
	if (errno || *end)
		tool_usage_error("%s: expected a non-negative integer, got '%s'", option, value);
	return v;
}

uint64_t tool_parse_size(const char *option, const char *value)
{
	/* Digits with an optional fraction, then the suffix. strtod alone would
	 * also take blanks, a sign, hex, exponents, "inf" and "nan". */
	const char *p = value ? value : "";
	size_t len = strspn(p, "0123456789"), digits = len;
	if (p[len] == '.') {
		size_t frac = strspn(p + len + 1, "0123456789");
		digits += frac;
		len += 1 + frac;
	}
	char num[32];
	if (digits == 0 || len >= sizeof num)
		tool_usage_error("%s: expected a size such as 64M, got '%s'", option, p);
	memcpy(num, p, len);
	num[len] = '\0';
	double v = strtod(num, NULL);
	const char *end = p + len;
	uint64_t mult = 1;
	if (*end) {
		int si = end[1] == 'B' || end[1] == 'b';
		uint64_t base = si ? 1000 : 1024;
		switch (*end) {
		case 'k': case 'K': mult = base; break;
		case 'm': case 'M': mult = base * base; break;
		case 'g': case 'G': mult = base * base * base; break;
		case 't': case 'T': mult = base * base * base * base; break;
		case 'b': case 'B': mult = 1; si = 0; break;
		default: tool_usage_error("%s: unknown size suffix in '%s'", option, value);
		}
		if (end[1 + si] != '\0' && !(end[1 + si] == 'i' && end[2 + si] == 'B' && !end[3 + si]))
			tool_usage_error("%s: unknown size suffix in '%s'", option, value);
	}
	double bytes = v * (double)mult;
	if (bytes >= 18446744073709551616.0) /* 2^64 */
		tool_usage_error("%s: '%s' is too large", option, value);
	return (uint64_t)bytes;
}

int tool_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	tool_error("standard output: %s", strerror(errno ? errno : EIO));
	return -1;
}

const char *tool_format_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

double tool_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tool_progress_init(tool_progress *p, int quiet)
{
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->start = p->last = tool_now();
}

void tool_progress_update(tool_progress *p, uint64_t records, uint64_t bytes, const char *what)
{
	if (!p->enabled)
		return;
	double now = tool_now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	char b[32];
	double secs = now - p->start;
	fprintf(stderr, "\r%s: %s %llu records, %s, %.1f MB/s   ", tool_name, what ? what : "",
	        (unsigned long long)records, tool_format_bytes(b, sizeof b, bytes),
	        secs > 0 ? (double)bytes / secs / 1e6 : 0.0);
	fflush(stderr);
}

void tool_progress_done(tool_progress *p)
{
	if (p->enabled) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
}

int tool_is_stdin(const char *path)
{
	return !strcmp(path, "-");
}

const char *tool_input_name(const char *path)
{
	return tool_is_stdin(path) ? "standard input" : path;
}

int tool_reader_open(rio_reader **r, const char *path, const rio_reader_opts *opts)
{
	if (tool_is_stdin(path))
		return rio_reader_open_fd(r, STDIN_FILENO, tool_input_name(path), opts);
	return rio_reader_open(r, path, opts);
}

int tool_is_stream(const char *path)
{
	struct stat st;
	return tool_is_stdin(path) ||
	       (stat(path, &st) == 0 &&
	        (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)));
}

int tool_expand_shards(const char *spec, rio_shardset *set)
{
	rio_error err;
	if (!*spec)
		tool_usage_error("an empty FILE argument ('')");
	if (tool_is_stdin(spec)) {
		set->paths = malloc(sizeof *set->paths);
		if (!set->paths || !(set->paths[0] = strdup(spec))) {
			free(set->paths);
			set->paths = NULL;
			set->count = 0;
			tool_error("out of memory");
			return -1;
		}
		set->count = 1;
		return 0;
	}
	int rc = rio_shardset_expand(spec, set, &err);
	if (rc < 0) {
		tool_error("%s", err.message);
		return -1;
	}
	return 0;
}

int tool_expand_all(char *const *specs, int n, rio_shardset *all)
{
	all->count = 0;
	all->paths = NULL;
	for (int i = 0, stdin_seen = 0; i < n; i++) {
		if (tool_is_stdin(specs[i]) && stdin_seen++)
			tool_usage_error("'-' (standard input) given twice: it can be read only once");
		rio_shardset one;
		if (tool_expand_shards(specs[i], &one) < 0) {
			rio_shardset_free(all);
			return -1;
		}
		char **grown = realloc(all->paths, (all->count + one.count) * sizeof *grown);
		if (!grown) {
			tool_error("out of memory");
			rio_shardset_free(&one);
			rio_shardset_free(all);
			return -1;
		}
		all->paths = grown;
		memcpy(all->paths + all->count, one.paths, one.count * sizeof *one.paths);
		all->count += one.count;
		free(one.paths); /* the path strings now belong to `all` */
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	tool_interrupted = 1;
}

void tool_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* --- added for cat/verify/index/info ------------------------------------- */

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* reject overlong forms, surrogates and values past U+10FFFF */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

int tool_utf8_valid(const void *s, size_t len)
{
	const unsigned char *p = s, *end = p + len;
	while (p < end) {
		size_t n = utf8_len(p, (size_t)(end - p));
		if (n == 0)
			return 0;
		p += n;
	}
	return 1;
}

void tool_json_number(FILE *out, double v, int digits)
{
	if (isfinite(v))
		fprintf(out, "%.*g", digits, v);
	else
		fputs("null", out);
}

void tool_json_member(FILE *out, const char *key, double v, int digits)
{
	fprintf(out, "\"%s\": ", key);
	tool_json_number(out, v, digits);
	fputs(", ", out);
}

void tool_json_string(FILE *out, const void *s, size_t len)
{
	const unsigned char *p = s, *end = p + len;
	putc('"', out);
	while (p < end) {
		unsigned char c = *p;
		switch (c) {
		case '"': fputs("\\\"", out); p++; continue;
		case '\\': fputs("\\\\", out); p++; continue;
		case '\n': fputs("\\n", out); p++; continue;
		case '\r': fputs("\\r", out); p++; continue;
		case '\t': fputs("\\t", out); p++; continue;
		case '\b': fputs("\\b", out); p++; continue;
		case '\f': fputs("\\f", out); p++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			p++;
			continue;
		}
		size_t n = utf8_len(p, (size_t)(end - p));
		if (n == 0) {
			fprintf(out, "\\u%04x", c); /* a stray byte: shown as U+00XX */
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
	putc('"', out);
}

void tool_base64(FILE *out, const void *data, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	char buf[4096];
	size_t n = 0, i = 0;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		buf[n++] = tab[v >> 18];
		buf[n++] = tab[(v >> 12) & 63];
		buf[n++] = tab[(v >> 6) & 63];
		buf[n++] = tab[v & 63];
		if (n + 4 > sizeof buf) {
			fwrite(buf, 1, n, out);
			n = 0;
		}
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
		buf[n++] = tab[v >> 18];
		buf[n++] = tab[(v >> 12) & 63];
		buf[n++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		buf[n++] = '=';
	}
	fwrite(buf, 1, n, out);
}

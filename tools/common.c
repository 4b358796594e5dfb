/*
 * common.c — see common.h.
 */
#include "config.h"
#include "common.h"
#include "clock.h"
#include "json.h"
#include "size.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	char msg[256];
	uint64_t bytes;
	if (rio__size_parse(value, UINT64_MAX, &bytes, msg, sizeof msg) < 0)
		tool_usage_error("%s: %s", option, msg);
	return bytes;
}

int tool_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	tool_error("standard output: %s", strerror(errno ? errno : EIO));
	return -1;
}

void tool_progress_init(tool_progress *p, int quiet)
{
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->start = p->last = rio__now();
}

void tool_progress_update(tool_progress *p, uint64_t records, uint64_t bytes, const char *what)
{
	if (!p->enabled)
		return;
	double now = rio__now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	char b[32];
	double secs = now - p->start;
	fprintf(stderr, "\r%s: %s %llu records, %s, %.1f MB/s   ", tool_name, what ? what : "",
	        (unsigned long long)records, rio__format_bytes(b, sizeof b, bytes),
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

/* recordio-train's, until it calls lib/ itself (common.h) */
void tool_json_number(FILE *out, double v, int digits)
{
	rio__json_number(out, v, digits);
}

void tool_json_member(FILE *out, const char *key, double v, int digits)
{
	rio__json_member(out, key, v, digits);
}

const char *tool_format_bytes(char *buf, size_t size, uint64_t bytes)
{
	return rio__format_bytes(buf, size, bytes);
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

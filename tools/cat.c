/*
 * cat.c — recordio-cat: print the records of TFRecord shards.
 *
 * Reads each shard with rio_reader (every CRC checked, compression detected)
 * and prints each record in one of four formats: a readable dump of the
 * tf.train.Example (the default), one lossless JSON object per record, the
 * payload in hex, or the raw payload. Records before a damage are printed;
 * the damage is then reported with its file and byte offset and the tool
 * exits 1, so a pipeline never mistakes a damaged shard for a short one.
 *
 * A payload that is not a tf.train.Example is not an error: the example
 * format shows it as text or hex, the json format as {"_raw": "<base64>"}
 * (a string value, where a feature is always an object, so the two cannot
 * be confused).
 */
#include "config.h"
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum format { FMT_EXAMPLE, FMT_JSON, FMT_HEX, FMT_RAW };

/* How many values of a list the example format shows before "...". */
#define SHOW_VALUES 8
/* How many bytes of a bytes value (and of a raw payload) it shows. */
#define SHOW_BYTES 64

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... FILE...\n"
	        "Print the records of TFRecord shards (plain, .gz, .zz or .lz4).\n"
	        "Each FILE may be a shard, a glob, a comma-separated list or a PREFIX\n"
	        "naming PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4]; '-' is standard input,\n"
	        "and a pipe or FIFO reads as a file (its compression found from its bytes).\n"
	        "\n"
	        "  -c, --count          print only the number of records in all FILEs\n"
	        "  -n, --head N         stop after N records in total\n"
	        "  -f, --format FORMAT  example (default): a readable dump of each\n"
	        "                         tf.train.Example; a payload that is not one\n"
	        "                         is shown as text or hex\n"
	        "                       json: one JSON object per record, lossless:\n"
	        "                         {\"name\": {\"int64\": [3]}, ...}\n"
	        "                       hex: each payload in lowercase hex, one a line\n"
	        "                       raw: each payload as is, followed by a newline\n"
	        "  -h, --help           show this help and exit\n"
	        "\n"
	        "Exit status: 0 success, 1 damaged or unreadable shard, 2 usage error.\n",
	        tool_name);
}

/* ---- example format ---------------------------------------------------- */

/* Prints bytes C-style quoted, at most `max` of them, then `..."`. */
static void print_c_string(FILE *out, const uint8_t *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;
	putc('"', out);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c >= 0x20 && c < 0x7f)
				putc(c, out);
			else
				fprintf(out, "\\x%02x", c);
		}
	}
	putc('"', out);
	if (n < len)
		fprintf(out, "... (%zu bytes)", len);
}

static void print_hex(FILE *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char buf[8192];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		buf[k++] = digits[p[i] >> 4];
		buf[k++] = digits[p[i] & 15];
		if (k == sizeof buf) {
			fwrite(buf, 1, k, out);
			k = 0;
		}
	}
	fwrite(buf, 1, k, out);
}

static int is_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\t' && p[i] != '\r') || p[i] >= 0x7f)
			return 0;
	return 1;
}

/* One bytes value: quoted text when it is text, else (pixels, encoded
 * images, ...) its length and the first bytes in hex, which read better
 * than a wall of \x escapes. */
static void print_bytes_value(FILE *out, const uint8_t *v, size_t len)
{
	size_t probe = len < SHOW_BYTES ? len : SHOW_BYTES;
	if (is_text(v, probe)) {
		print_c_string(out, v, len, SHOW_BYTES);
		return;
	}
	size_t n = len < SHOW_BYTES / 2 ? len : SHOW_BYTES / 2;
	fprintf(out, "<%zu bytes: ", len);
	print_hex(out, v, n);
	fputs(n < len ? "...>" : ">", out);
}

/* Prints one feature's values for the example format; returns 0 or the
 * library's error. */
static int print_feature_values(FILE *out, const rio_feature *f)
{
	size_t shown = f->count < SHOW_VALUES ? f->count : SHOW_VALUES;
	switch (f->kind) {
	case RIO_FEATURE_FLOAT: {
		float v[SHOW_VALUES];
		int64_t n = rio_feature_floats(f, v, SHOW_VALUES);
		if (n < 0)
			return (int)n;
		for (size_t i = 0; i < shown; i++)
			fprintf(out, " %g", (double)v[i]);
		break;
	}
	case RIO_FEATURE_INT64: {
		int64_t v[SHOW_VALUES];
		int64_t n = rio_feature_int64s(f, v, SHOW_VALUES);
		if (n < 0)
			return (int)n;
		for (size_t i = 0; i < shown; i++)
			fprintf(out, " %lld", (long long)v[i]);
		break;
	}
	case RIO_FEATURE_BYTES: {
		size_t cursor = 0, len;
		const uint8_t *val;
		int rc;
		for (size_t i = 0; i < shown && (rc = rio_feature_bytes_next(f, &cursor, &val, &len)) == 1;
		     i++) {
			putc(' ', out);
			print_bytes_value(out, val, len);
		}
		break;
	}
	default:
		break;
	}
	if (f->count > shown)
		fputs(" ...", out);
	return 0;
}

static int print_example(FILE *out, const char *path, const rio_record *rec)
{
	fprintf(out, "record %llu (%s, offset %llu, %zu bytes)", (unsigned long long)rec->index, path,
	        (unsigned long long)rec->offset, rec->size);
	if (!tool_payload_is_example(rec->data, rec->size)) {
		fputs(": not a tf.train.Example\n", out);
		size_t n = rec->size < SHOW_BYTES ? rec->size : SHOW_BYTES;
		if (is_text(rec->data, n)) {
			fputs("  text: ", out);
			print_c_string(out, rec->data, rec->size, SHOW_BYTES);
		} else {
			fputs("  hex: ", out);
			print_hex(out, rec->data, n);
			if (n < rec->size)
				fputs("...", out);
		}
		putc('\n', out);
		return 0;
	}
	putc('\n', out);
	rio_example_iter it;
	rio_feature f;
	int rc, any = 0;
	rio_example_iter_init(&it, rec->data, rec->size);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		any = 1;
		fputs("  ", out);
		fwrite(f.name, 1, f.name_len, out);
		fprintf(out, ": %s[%zu]", rio_feature_kind_name(f.kind), f.count);
		if ((rc = print_feature_values(out, &f)) < 0)
			return rc;
		putc('\n', out);
	}
	if (rc < 0)
		return rc;
	if (!any)
		fputs("  (no features)\n", out);
	return 0;
}

/* ---- json format -------------------------------------------------------- */

static void json_float(FILE *out, float v)
{
	if (isnan(v))
		fputs("\"NaN\"", out);
	else if (isinf(v))
		fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
	else
		fprintf(out, "%.9g", (double)v);
}

/* A growable scratch buffer for decoded lists. */
typedef struct scratch {
	void *p;
	size_t cap;
} scratch;

static void *scratch_get(scratch *s, size_t bytes)
{
	if (bytes > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < bytes)
			cap *= 2;
		void *p = realloc(s->p, cap);
		if (!p)
			return NULL;
		s->p = p;
		s->cap = cap;
	}
	return s->p;
}

static int print_json(FILE *out, const rio_record *rec, scratch *s)
{
	if (!tool_payload_is_example(rec->data, rec->size)) {
		fputs("{\"_raw\": \"", out);
		tool_base64(out, rec->data, rec->size);
		fputs("\"}\n", out);
		return 0;
	}
	rio_example_iter it;
	rio_feature f;
	int rc, first = 1;
	rio_example_iter_init(&it, rec->data, rec->size);
	putc('{', out);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		if (!first)
			fputs(", ", out);
		first = 0;
		tool_json_string(out, f.name, f.name_len);
		fprintf(out, ": {\"%s\": [", rio_feature_kind_name(f.kind));
		switch (f.kind) {
		case RIO_FEATURE_FLOAT: {
			float *v = scratch_get(s, (f.count + 1) * sizeof *v);
			if (!v)
				return -ENOMEM;
			int64_t n = rio_feature_floats(&f, v, f.count);
			if (n < 0)
				return (int)n;
			for (int64_t i = 0; i < n && (size_t)i < f.count; i++) {
				if (i)
					fputs(", ", out);
				json_float(out, v[i]);
			}
			break;
		}
		case RIO_FEATURE_INT64: {
			int64_t *v = scratch_get(s, (f.count + 1) * sizeof *v);
			if (!v)
				return -ENOMEM;
			int64_t n = rio_feature_int64s(&f, v, f.count);
			if (n < 0)
				return (int)n;
			for (int64_t i = 0; i < n && (size_t)i < f.count; i++)
				fprintf(out, i ? ", %lld" : "%lld", (long long)v[i]);
			break;
		}
		case RIO_FEATURE_BYTES: {
			size_t cursor = 0, len;
			const uint8_t *val;
			int i = 0;
			while ((rc = rio_feature_bytes_next(&f, &cursor, &val, &len)) == 1) {
				fputs(i++ ? ", \"" : "\"", out);
				tool_base64(out, val, len);
				putc('"', out);
			}
			if (rc < 0)
				return rc;
			break;
		}
		default:
			break;
		}
		fputs("]}", out);
	}
	if (rc < 0)
		return rc;
	fputs("}\n", out);
	return 0;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"count", no_argument, NULL, 'c'},
		{"head", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int count_only = 0, opt;
	uint64_t head = UINT64_MAX;
	enum format fmt = FMT_EXAMPLE;

	tool_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "cn:f:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': count_only = 1; break;
		case 'n': head = tool_parse_u64("--head", optarg); break;
		case 'f':
			if (!strcmp(optarg, "example"))
				fmt = FMT_EXAMPLE;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "hex"))
				fmt = FMT_HEX;
			else if (!strcmp(optarg, "raw"))
				fmt = FMT_RAW;
			else
				tool_usage_error("--format: expected example, json, hex or raw, got '%s'",
				                 optarg);
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	if (optind >= argc)
		tool_usage_error("no FILE given");

	rio_shardset shards;
	if (tool_expand_all(argv + optind, argc - optind, &shards) < 0)
		return EXIT_DATA;
	int status = EXIT_OK;

	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	rio_reader_opts ropts;
	rio_reader_opts_init(&ropts);
	scratch s = {NULL, 0};
	uint64_t total = 0;

	/* a failed standard output stops the reading too (reported at the end) */
	for (size_t j = 0; status == EXIT_OK && j < shards.count && total < head && !ferror(stdout);
	     j++) {
		const char *path = shards.paths[j];
		rio_reader *r;
		int rc = tool_reader_open(&r, path, &ropts);
		if (rc < 0) {
			tool_error("%s: %s", tool_input_name(path), rio_strerror(rc));
			status = EXIT_DATA;
			break;
		}
		rio_record rec;
		while (total < head && !ferror(stdout) && (rc = rio_reader_next(r, &rec)) == 1) {
			total++;
			if (count_only)
				continue;
			switch (fmt) {
			case FMT_EXAMPLE: rc = print_example(stdout, tool_input_name(path), &rec); break;
			case FMT_JSON: rc = print_json(stdout, &rec, &s); break;
			case FMT_HEX:
				print_hex(stdout, rec.data, rec.size);
				putchar('\n');
				break;
			case FMT_RAW:
				fwrite(rec.data, 1, rec.size, stdout);
				putchar('\n');
				break;
			}
			if (rc < 0) {
				/* validated above, so only a library surprise gets here */
				fflush(stdout);
				tool_error("%s: offset %llu (record %llu): %s", path,
				           (unsigned long long)rec.offset,
				           (unsigned long long)rec.index, rio_strerror(rc));
				status = EXIT_DATA;
				break;
			}
			rc = 1;
		}
		if (rc < 0 && status == EXIT_OK) {
			const rio_error *e = rio_reader_error(r);
			fflush(stdout);
			if (e && e->message[0])
				tool_error("%s", e->message);
			else
				tool_error("%s: %s", path, rio_strerror(rc));
			status = EXIT_DATA;
		}
		rio_reader_close(r);
	}
	if (count_only && status == EXIT_OK)
		printf("%llu\n", (unsigned long long)total);

	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	rio_shardset_free(&shards);
	free(s.p);
	return status;
}

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
 * be confused). tf.train.SequenceExamples show their context and every
 * feature list; the records of a TensorBoard event file (its first record
 * is the file header) show as Events. The json format stays lossless: when
 * rio_payload_inspect() finds parts the decoded view leaves out (unknown
 * fields, overridden values) or a name is not UTF-8, the object also gets
 * the whole payload as a "_raw" member.
 */
#include "config.h"
#include "common.h"
#include "grow.h"
#include "json.h"

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
	        "Each FILE may be a shard, a glob, a comma-separated list, a directory (its\n"
	        "shard files) or a PREFIX naming PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4];\n"
	        "'-' is standard input, and a pipe or FIFO reads as a file (its compression\n"
	        "found from its bytes).\n"
	        TOOL_SHARDS_SUBSET_HELP
	        "\n"
	        "  -c, --count          print only the number of records in all FILEs\n"
	        "  -n, --head N         stop after N records in total\n"
	        "  -f, --format FORMAT  example (default): a readable dump of each\n"
	        "                         tf.train.Example or SequenceExample (or\n"
	        "                         TensorBoard Event); another payload is shown\n"
	        "                         as text or hex\n"
	        "                       json: one JSON object per record, lossless:\n"
	        "                         {\"name\": {\"int64\": [3]}, ...}; parts not\n"
	        "                         decoded are kept in \"_raw\" (base64)\n"
	        "                       hex: each payload in lowercase hex, one a line\n"
	        "                       raw: each payload as is, followed by a newline\n"
	        "  -h, --help           show this help and exit\n"
	        "\n"
	        TOOL_REMOTE_HELP
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

/* One feature line of the example format: INDENT name: kind[count] values. */
static int print_feature_line(FILE *out, const char *indent, const rio_feature *f)
{
	fputs(indent, out);
	fwrite(f->name, 1, f->name_len, out);
	fprintf(out, ": %s[%zu]", rio_feature_kind_name(f->kind), f->count);
	int rc = print_feature_values(out, f);
	putc('\n', out);
	return rc;
}

/* The features of an Example, or the context of a SequenceExample. */
static int print_features(FILE *out, const char *indent, const rio_record *rec)
{
	rio_example_iter it;
	rio_feature f;
	int rc, any = 0;
	rio_example_iter_init(&it, rec->data, rec->size);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		any = 1;
		if ((rc = print_feature_line(out, indent, &f)) < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	if (!any)
		fprintf(out, "%s(no features)\n", indent);
	return 0;
}

/* The feature lists of a SequenceExample: per list its steps, one a line
 * (the first SHOW_VALUES of them). */
static int print_feature_lists(FILE *out, const rio_record *rec)
{
	rio_feature_lists_iter it;
	rio_feature_list fl;
	int rc, any = 0;
	rio_feature_lists_iter_init(&it, rec->data, rec->size);
	while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
		rio_feature_list_iter li;
		rio_feature f;
		size_t step = 0;
		any = 1;
		fputs("    ", out);
		fwrite(fl.name, 1, fl.name_len, out);
		fprintf(out, ": %zu step%s\n", fl.count, fl.count == 1 ? "" : "s");
		rio_feature_list_iter_init(&li, &fl);
		while (step < SHOW_VALUES && (rc = rio_feature_list_iter_next(&li, &f)) == 1) {
			fprintf(out, "      [%zu] %s[%zu]", step++, rio_feature_kind_name(f.kind), f.count);
			if ((rc = print_feature_values(out, &f)) < 0)
				return rc;
			putc('\n', out);
		}
		if (rc < 0)
			return rc;
		if (fl.count > step)
			fputs("      ...\n", out);
	}
	if (rc < 0)
		return rc;
	if (!any)
		fputs("    (no feature lists)\n", out);
	return 0;
}

/* An Event of a TensorBoard event file, after its record line: 1 when
 * printed, 0 when the record does not parse as one. */
static int print_event(FILE *out, const rio_record *rec)
{
	rio_event ev;
	if (rio_event_parse(rec->data, rec->size, &ev) != 0)
		return 0;
	fprintf(out, ": TensorBoard event\n  step %lld, wall time %.17g\n", (long long)ev.step,
	        ev.wall_time);
	if (ev.file_version) {
		fputs("  file_version: ", out);
		print_c_string(out, (const uint8_t *)ev.file_version, ev.file_version_len, SHOW_BYTES);
		putc('\n', out);
	}
	rio_summary_iter it;
	rio_summary_value v;
	rio_summary_iter_init(&it, &ev);
	while (rio_summary_iter_next(&it, &v) == 1) { /* checked by rio_event_parse */
		double x;
		fputs("  ", out);
		print_c_string(out, (const uint8_t *)v.tag, v.tag_len, SHOW_BYTES);
		if (rio_summary_value_scalar(&v, &x) == 1)
			fprintf(out, ": %g\n", x);
		else
			fprintf(out, ": (a %zu-byte value that is not a scalar)\n", v.value_size);
	}
	if (ev.other_fields)
		fprintf(out, "  (%zu more field%s not shown)\n", ev.other_fields,
		        ev.other_fields == 1 ? "" : "s");
	return 1;
}

static int print_example(FILE *out, const char *path, const rio_record *rec, int events)
{
	rio_payload_info info;
	int rc = rio_payload_inspect(rec->data, rec->size, &info);
	if (rc < 0)
		return rc;
	fprintf(out, "record %llu (%s, offset %llu, %zu bytes)", (unsigned long long)rec->index, path,
	        (unsigned long long)rec->offset, rec->size);
	if (info.kind == RIO_PAYLOAD_RAW && events && print_event(out, rec))
		return 0;
	if (info.kind == RIO_PAYLOAD_RAW) {
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
	if (info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE) {
		fputs(": tf.train.SequenceExample\n  context:\n", out);
		if ((rc = print_features(out, "    ", rec)) < 0)
			return rc;
		fputs("  feature lists:\n", out);
		rc = print_feature_lists(out, rec);
	} else {
		putc('\n', out);
		rc = print_features(out, "  ", rec);
	}
	if (rc == 0 && info.unrepresented)
		fprintf(out, "  (%zu more part%s not shown: unknown fields or overridden values; "
		        "--format json keeps them in \"_raw\")\n",
		        info.unrepresented, info.unrepresented == 1 ? "" : "s");
	return rc;
}

/* ---- json format -------------------------------------------------------- */

/* A number as JSON with `digits` significant digits (9 round-trips a
 * float, 17 a double); NaN and infinities as the strings protobuf's JSON
 * mapping uses, so the output stays valid JSON and loses nothing. */
static void json_real(FILE *out, double v, int digits)
{
	if (isnan(v))
		fputs("\"NaN\"", out);
	else if (isinf(v))
		fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
	else
		fprintf(out, "%.*g", digits, v);
}

/* A growable scratch buffer for decoded lists. */
typedef struct scratch {
	void *p;
	size_t cap;
} scratch;

static void *scratch_get(scratch *s, size_t bytes)
{
	return rio__grow(&s->p, &s->cap, bytes, 1, 4096) ? NULL : s->p;
}

/* One feature's value as JSON: {"KIND": [values]}. */
static int json_feature(FILE *out, const rio_feature *f, scratch *s)
{
	int rc;
	fprintf(out, "{\"%s\": [", rio_feature_kind_name(f->kind));
	switch (f->kind) {
	case RIO_FEATURE_FLOAT: {
		float *v = scratch_get(s, (f->count + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		int64_t n = rio_feature_floats(f, v, f->count);
		if (n < 0)
			return (int)n;
		for (int64_t i = 0; i < n && (size_t)i < f->count; i++) {
			if (i)
				fputs(", ", out);
			json_real(out, (double)v[i], 9);
		}
		break;
	}
	case RIO_FEATURE_INT64: {
		int64_t *v = scratch_get(s, (f->count + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		int64_t n = rio_feature_int64s(f, v, f->count);
		if (n < 0)
			return (int)n;
		for (int64_t i = 0; i < n && (size_t)i < f->count; i++)
			fprintf(out, i ? ", %lld" : "%lld", (long long)v[i]);
		break;
	}
	case RIO_FEATURE_BYTES: {
		size_t cursor = 0, len;
		const uint8_t *val;
		int i = 0;
		while ((rc = rio_feature_bytes_next(f, &cursor, &val, &len)) == 1) {
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
	return 0;
}

/* The features of an Example (or a SequenceExample's context) as the
 * members of an object, without its braces: returns how many, or an error.
 * Clears *exact when a name is not valid UTF-8 (its JSON string would not
 * give the bytes back). */
static int json_features(FILE *out, const rio_record *rec, scratch *s, int *exact)
{
	rio_example_iter it;
	rio_feature f;
	int rc, n = 0;
	rio_example_iter_init(&it, rec->data, rec->size);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		fputs(n++ ? ", " : "", out);
		if (!rio__utf8_valid(f.name, f.name_len))
			*exact = 0;
		rio__json_string(out, f.name, f.name_len);
		fputs(": ", out);
		if ((rc = json_feature(out, &f, s)) < 0)
			return rc;
	}
	return rc < 0 ? rc : n;
}

/* The feature lists of a SequenceExample: {"name": [{"KIND": [...]}, ...]}. */
static int json_feature_lists(FILE *out, const rio_record *rec, scratch *s, int *exact)
{
	rio_feature_lists_iter it;
	rio_feature_list fl;
	int rc, first = 1;
	rio_feature_lists_iter_init(&it, rec->data, rec->size);
	putc('{', out);
	while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
		rio_feature_list_iter li;
		rio_feature f;
		int step = 0;
		fputs(first ? "" : ", ", out);
		first = 0;
		if (!rio__utf8_valid(fl.name, fl.name_len))
			*exact = 0;
		rio__json_string(out, fl.name, fl.name_len);
		fputs(": [", out);
		rio_feature_list_iter_init(&li, &fl);
		while ((rc = rio_feature_list_iter_next(&li, &f)) == 1) {
			fputs(step++ ? ", " : "", out);
			if ((rc = json_feature(out, &f, s)) < 0)
				return rc;
		}
		if (rc < 0)
			return rc;
		putc(']', out);
	}
	if (rc < 0)
		return rc;
	putc('}', out);
	return 0;
}

/* The "_raw" member (with its leading ", " when `sep`). */
static void json_raw_member(FILE *out, const rio_record *rec, int sep)
{
	fputs(sep ? ", \"_raw\": \"" : "\"_raw\": \"", out);
	tool_base64(out, rec->data, rec->size);
	putc('"', out);
}

/* An Event of a TensorBoard event file: 1 when printed, 0 when the record
 * does not parse as one (the caller prints it as any other payload). */
static int json_event(FILE *out, const rio_record *rec)
{
	rio_event ev;
	if (rio_event_parse(rec->data, rec->size, &ev) != 0)
		return 0;
	int exact = ev.other_fields == 0;
	fputs("{\"_type\": \"Event\", \"wall_time\": ", out);
	json_real(out, ev.wall_time, 17);
	fprintf(out, ", \"step\": %lld", (long long)ev.step);
	if (ev.file_version) {
		fputs(", \"file_version\": ", out);
		rio__json_string(out, ev.file_version, ev.file_version_len);
		if (!rio__utf8_valid(ev.file_version, ev.file_version_len))
			exact = 0;
	}
	if (ev.summary) {
		rio_summary_iter it;
		rio_summary_value v;
		int i = 0;
		fputs(", \"summary\": [", out);
		rio_summary_iter_init(&it, &ev);
		while (rio_summary_iter_next(&it, &v) == 1) { /* checked by rio_event_parse */
			double x;
			fputs(i++ ? ", {\"tag\": " : "{\"tag\": ", out);
			rio__json_string(out, v.tag, v.tag_len);
			if (rio_summary_value_scalar(&v, &x) == 1) {
				fputs(", \"value\": ", out);
				json_real(out, x, 17);
			}
			putc('}', out);
			if (v.other_fields || !rio__utf8_valid(v.tag, v.tag_len))
				exact = 0; /* metadata, a tensor, an image, ... */
		}
		putc(']', out);
	}
	if (!exact)
		json_raw_member(out, rec, 1);
	fputs("}\n", out);
	return 1;
}

static int print_json(FILE *out, const rio_record *rec, scratch *s, int events)
{
	rio_payload_info info;
	int rc = rio_payload_inspect(rec->data, rec->size, &info);
	if (rc < 0)
		return rc;
	if (info.kind == RIO_PAYLOAD_RAW && events && json_event(out, rec))
		return 0;
	if (info.kind == RIO_PAYLOAD_RAW) {
		putc('{', out);
		json_raw_member(out, rec, 0);
		fputs("}\n", out);
		return 0;
	}
	int exact = info.unrepresented == 0;
	if (info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE) {
		fputs("{\"_type\": \"SequenceExample\", \"context\": {", out);
		if ((rc = json_features(out, rec, s, &exact)) < 0)
			return rc;
		fputs("}, \"feature_lists\": ", out);
		if ((rc = json_feature_lists(out, rec, s, &exact)) < 0)
			return rc;
		if (!exact)
			json_raw_member(out, rec, 1);
		fputs("}\n", out);
		return 0;
	}
	/* an Example: its features are the members */
	putc('{', out);
	if ((rc = json_features(out, rec, s, &exact)) < 0)
		return rc;
	if (!exact)
		json_raw_member(out, rec, rc > 0);
	fputs("}\n", out);
	return 0;
}

/* ---- main --------------------------------------------------------------- */

/* What the command line asks for. */
typedef struct cat_opts {
	int count_only;
	uint64_t head; /* records to print at most */
	enum format fmt;
	rio_remote_opts remote;
} cat_opts;

static void parse_options(int argc, char **argv, cat_opts *c)
{
	static const struct option longopts[] = {
		{"count", no_argument, NULL, 'c'},
		{"head", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		TOOL_REMOTE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	int opt;
	c->count_only = 0;
	c->head = UINT64_MAX;
	c->fmt = FMT_EXAMPLE;
	rio_remote_opts_init(&c->remote);
	while ((opt = getopt_long(argc, argv, "cn:f:h", longopts, NULL)) != -1) {
		if (tool_remote_option(opt, optarg, &c->remote))
			continue;
		switch (opt) {
		case 'c': c->count_only = 1; break;
		case 'n': c->head = tool_parse_u64("--head", optarg); break;
		case 'f':
			if (!strcmp(optarg, "example"))
				c->fmt = FMT_EXAMPLE;
			else if (!strcmp(optarg, "json"))
				c->fmt = FMT_JSON;
			else if (!strcmp(optarg, "hex"))
				c->fmt = FMT_HEX;
			else if (!strcmp(optarg, "raw"))
				c->fmt = FMT_RAW;
			else
				tool_usage_error("--format: expected example, json, hex or raw, got '%s'",
				                 optarg);
			break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	if (optind >= argc)
		tool_usage_error("no FILE given");
}

/* Prints one record in the chosen format: 0, or a negative code. */
static int print_record(const cat_opts *c, const char *path, const rio_record *rec, scratch *s,
                        int events)
{
	switch (c->fmt) {
	case FMT_EXAMPLE: return print_example(stdout, tool_input_name(path), rec, events);
	case FMT_JSON: return print_json(stdout, rec, s, events);
	case FMT_HEX:
		print_hex(stdout, rec->data, rec->size);
		putchar('\n');
		return 0;
	case FMT_RAW:
		fwrite(rec->data, 1, rec->size, stdout);
		putchar('\n');
		return 0;
	}
	return 0;
}

/* Prints (or counts) the records of one shard, up to the head: EXIT_OK, or
 * EXIT_DATA after reporting. */
static int cat_shard(const cat_opts *c, const char *path, scratch *s, uint64_t *total)
{
	rio_reader_opts ropts;
	rio_reader_opts_init(&ropts);
	ropts.remote = c->remote;
	rio_reader *r;
	rio_error err;
	int rc = tool_reader_open(&r, path, &ropts, &err);
	if (rc < 0) {
		tool_error("%s", err.message);
		return EXIT_DATA;
	}
	int status = EXIT_OK;
	rio_record rec;
	int events = 0; /* a TensorBoard event file: its first record says so */
	while (*total < c->head && !ferror(stdout) && (rc = rio_reader_next(r, &rec)) == 1) {
		(*total)++;
		if (c->count_only)
			continue;
		if (rec.index == 0)
			events = rio_event_is_file_header(rec.data, rec.size);
		rc = print_record(c, path, &rec, s, events);
		if (rc < 0) {
			/* validated above, so only a library surprise gets here */
			fflush(stdout);
			tool_error("%s: offset %llu (record %llu): %s", path, (unsigned long long)rec.offset,
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
	return status;
}

int main(int argc, char **argv)
{
	cat_opts c;
	tool_init(argv[0]);
	parse_options(argc, argv, &c);

	rio_shardset shards;
	if (tool_expand_all(argv + optind, argc - optind, &shards, &c.remote) < 0)
		return EXIT_DATA;
	int status = EXIT_OK;

	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	scratch s = {NULL, 0};
	uint64_t total = 0;

	/* a failed standard output stops the reading too (reported at the end) */
	for (size_t j = 0; status == EXIT_OK && j < shards.count && total < c.head && !ferror(stdout);
	     j++)
		status = cat_shard(&c, shards.paths[j], &s, &total);
	if (c.count_only && status == EXIT_OK)
		printf("%llu\n", (unsigned long long)total);

	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	rio_shardset_free(&shards);
	free(s.p);
	return status;
}

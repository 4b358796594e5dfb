/*
 * info.c — recordio-info: what a set of shards holds.
 *
 * Reads every record of every shard (all CRCs checked) and reports, per
 * shard and in total, the records, the file size, the size of the
 * uncompressed record stream and the compression; then the record sizes and
 * a schema summary of the tf.train.Example payloads: for every feature name
 * its kind(s), the shortest and longest list, for bytes features the
 * shortest and longest value, and in how many records it appears. The
 * context of tf.train.SequenceExample payloads joins that table; their
 * feature lists get one of their own (kinds, steps per list, values per
 * step). A shard whose first record is a TensorBoard file header is an
 * event file: its events are summarised (steps, tags) instead.
 *
 * Memory stays bounded whatever the data: features, feature lists and
 * event tags each live in an open-addressing hash table of at most
 * MAX_FEATURES names (more are counted as "untracked"), and records are
 * views into the reader's buffer.
 */
#include "config.h"
#include "common.h"
#include "json.h"
#include "size.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FEATURES 4096u
#define TABLE_SIZE 8192u /* a power of two, twice MAX_FEATURES */

typedef struct feat {
	char *name; /* NULL: empty slot */
	size_t name_len;
	unsigned kinds; /* bit (1 << rio_feature_kind) per kind seen */
	uint64_t min_len, max_len; /* values per list; a feature list: steps */
	uint64_t records;          /* an event tag: the values with it */
	uint64_t last_record; /* global record number + 1 of the last count */
	int have_vbytes;
	uint64_t min_vbytes, max_vbytes; /* bytes per value, bytes lists */
	int have_steps;
	uint64_t min_step_len, max_step_len; /* a feature list: values per step */
	uint64_t scalars;                    /* an event tag: values that are scalars */
} feat;

/* One hash table of names. */
typedef struct table {
	feat slot[TABLE_SIZE];
	size_t n;
	uint64_t untracked; /* occurrences whose name did not fit */
} table;

typedef struct shard_info {
	const char *path;
	uint64_t records, file_bytes, stream_bytes;
	rio_compression compression;
	int events; /* a TensorBoard event file */
} shard_info;

static struct {
	table features; /* of Examples and SequenceExample contexts */
	table lists;    /* SequenceExample feature lists */
	table tags;     /* event summary tags */
	int out_of_memory;  /* a name could not be stored: the summary is wrong */
	uint64_t records, examples, sequences, events;
	uint64_t unrepresented; /* records with parts a decoded view leaves out */
	uint64_t event_files;
	int64_t min_step, max_step; /* of the events that are not file headers */
	uint64_t stepped_events;
	uint64_t min_size, max_size, sum_size;
	uint64_t raw_min, raw_max; /* sizes of records that are none of those */
} S = {.min_size = UINT64_MAX, .raw_min = UINT64_MAX};

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... FILE...|PREFIX\n"
	        "Summarize TFRecord shards (plain, .gz, .zz or .lz4): records, file and\n"
	        "stream bytes and compression per shard and in total, record sizes, and\n"
	        "the features of the tf.train.Example payloads (kinds, list lengths, how\n"
	        "many records have each), the feature lists of SequenceExamples, and the\n"
	        "events, steps and tags of TensorBoard event files. Every record is read\n"
	        "and every CRC checked.\n"
	        "Each FILE may be a shard, a glob, a comma-separated list, a directory or a\n"
	        "PREFIX; '-' is standard input, and a pipe or FIFO reads as a file.\n"
	        TOOL_SHARDS_SUBSET_HELP
	        "\n"
	        "  -J, --json    print one JSON object instead of tables\n"
	        "  -h, --help    show this help and exit\n"
	        "\n"
	        "Exit status: 0 success, 1 a shard damaged or unreadable, 2 usage error.\n",
	        tool_name);
}

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The slot of `name` in `t`, inserted if new; NULL when the table is full
 * (counted as untracked) or out of memory. */
static feat *lookup(table *t, const char *name, size_t len)
{
	size_t i = (size_t)hash_name(name, len) & (TABLE_SIZE - 1);
	for (;;) {
		feat *f = &t->slot[i];
		if (!f->name) {
			if (t->n >= MAX_FEATURES) {
				t->untracked++;
				return NULL;
			}
			f->name = malloc(len + 1);
			if (!f->name) {
				S.out_of_memory = 1;
				return NULL;
			}
			memcpy(f->name, name, len);
			f->name[len] = '\0';
			f->name_len = len;
			f->min_len = UINT64_MAX;
			f->min_vbytes = UINT64_MAX;
			f->min_step_len = UINT64_MAX;
			t->n++;
			return f;
		}
		if (f->name_len == len && !memcmp(f->name, name, len))
			return f;
		i = (i + 1) & (TABLE_SIZE - 1);
	}
}

static void min_max(uint64_t v, uint64_t *lo, uint64_t *hi)
{
	if (v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

/* Counts a table entry once per record (a name repeated in one record
 * counts once). */
static void count_record(feat *e, uint64_t recno)
{
	if (e->last_record != recno) {
		e->records++;
		e->last_record = recno;
	}
}

/* Adds one feature to its entry: kind, length, bytes per value. */
static void add_feature(feat *e, const rio_feature *f)
{
	e->kinds |= 1u << f->kind;
	min_max(f->count, &e->min_len, &e->max_len);
	if (f->kind == RIO_FEATURE_BYTES) {
		size_t cursor = 0, len;
		const uint8_t *v;
		while (rio_feature_bytes_next(f, &cursor, &v, &len) == 1) {
			e->have_vbytes = 1;
			min_max(len, &e->min_vbytes, &e->max_vbytes);
		}
	}
}

/* The features of an Example, or the context of a SequenceExample. */
static void add_features(const rio_record *rec, uint64_t recno)
{
	rio_example_iter it;
	rio_feature f;
	rio_example_iter_init(&it, rec->data, rec->size);
	while (rio_example_iter_next(&it, &f) == 1) {
		feat *e = lookup(&S.features, f.name, f.name_len);
		if (e) {
			add_feature(e, &f);
			count_record(e, recno);
		}
	}
}

/* The feature lists of a SequenceExample: kinds of their steps, steps per
 * list, values per step. */
static void add_feature_lists(const rio_record *rec, uint64_t recno)
{
	rio_feature_lists_iter it;
	rio_feature_list fl;
	rio_feature_lists_iter_init(&it, rec->data, rec->size);
	while (rio_feature_lists_iter_next(&it, &fl) == 1) {
		feat *e = lookup(&S.lists, fl.name, fl.name_len);
		if (!e)
			continue;
		count_record(e, recno);
		min_max(fl.count, &e->min_len, &e->max_len);
		rio_feature_list_iter li;
		rio_feature f;
		rio_feature_list_iter_init(&li, &fl);
		while (rio_feature_list_iter_next(&li, &f) == 1) {
			e->kinds |= 1u << f.kind;
			e->have_steps = 1;
			min_max(f.count, &e->min_step_len, &e->max_step_len);
		}
	}
}

/* A record of an event file: 1 when it is an Event (counted), 0 if not. */
static int add_event(const rio_record *rec)
{
	rio_event ev;
	if (rio_event_parse(rec->data, rec->size, &ev) != 0)
		return 0;
	S.events++;
	if (!ev.file_version) { /* the header's step means nothing */
		if (!S.stepped_events || ev.step < S.min_step)
			S.min_step = ev.step;
		if (!S.stepped_events || ev.step > S.max_step)
			S.max_step = ev.step;
		S.stepped_events++;
	}
	rio_summary_iter it;
	rio_summary_value v;
	rio_summary_iter_init(&it, &ev);
	while (rio_summary_iter_next(&it, &v) == 1) {
		feat *e = lookup(&S.tags, v.tag, v.tag_len);
		double x;
		if (!e)
			continue;
		e->records++;
		if (rio_summary_value_scalar(&v, &x) == 1)
			e->scalars++;
	}
	return 1;
}

static void add_record(const rio_record *rec, int event_file)
{
	uint64_t recno = ++S.records; /* 1-based, for last_record */
	S.sum_size += rec->size;
	min_max(rec->size, &S.min_size, &S.max_size);
	if (event_file && add_event(rec))
		return;
	rio_payload_info info;
	if (rio_payload_inspect(rec->data, rec->size, &info) != 0 || info.kind == RIO_PAYLOAD_RAW) {
		min_max(rec->size, &S.raw_min, &S.raw_max);
		return;
	}
	if (info.unrepresented)
		S.unrepresented++;
	add_features(rec, recno);
	if (info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE) {
		S.sequences++;
		add_feature_lists(rec, recno);
	} else {
		S.examples++;
	}
}

/* Reads one shard into `si` and the totals; returns 0 or -1 (reported). */
static int scan_shard(const char *path, shard_info *si)
{
	rio_reader_opts ro;
	rio_reader_opts_init(&ro);
	rio_reader *r;
	int rc = tool_reader_open(&r, path, &ro);
	si->path = path;
	if (rc < 0) {
		tool_error("%s: %s", tool_input_name(path), rio_strerror(rc));
		return -1;
	}
	rio_record rec;
	while ((rc = rio_reader_next(r, &rec)) == 1) {
		if (rec.index == 0 && rio_event_is_file_header(rec.data, rec.size)) {
			si->events = 1;
			S.event_files++;
		}
		add_record(&rec, si->events);
		si->records++;
	}
	if (rc < 0) {
		const rio_error *e = rio_reader_error(r);
		tool_error("%s", e && e->message[0] ? e->message : rio_strerror(rc));
		rio_reader_close(r);
		return -1;
	}
	si->compression = rio_reader_compression(r);
	si->stream_bytes = rio_reader_bytes(r);
	struct stat st;
	/* a pipe's size is what was read from it */
	si->file_bytes = !tool_is_stdin(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode)
	                     ? (uint64_t)st.st_size
	                     : rio_reader_file_bytes(r);
	rio_reader_close(r);
	return 0;
}

static int cmp_feat(const void *a, const void *b)
{
	const feat *x = *(const feat *const *)a, *y = *(const feat *const *)b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

/* The order in which a feature's kinds are listed, in text and JSON. */
static const rio_feature_kind kind_order[] = {RIO_FEATURE_BYTES, RIO_FEATURE_FLOAT,
                                              RIO_FEATURE_INT64, RIO_FEATURE_NONE};
#define NKINDS (sizeof kind_order / sizeof kind_order[0])

/* "float", "int64|none", ... into buf. */
static const char *kinds_text(char *buf, size_t size, unsigned kinds)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NKINDS; i++) {
		if (!(kinds & (1u << kind_order[i])))
			continue;
		int w = snprintf(buf + n, size - n, "%s%s", n ? "|" : "",
		                 rio_feature_kind_name(kind_order[i]));
		if (w > 0 && (size_t)w < size - n)
			n += (size_t)w;
	}
	return buf;
}

/* A feature name for the text table: printable bytes as is, others \xNN. */
static int print_name(const feat *f)
{
	int n = 0;
	for (size_t i = 0; i < f->name_len; i++) {
		unsigned char c = (unsigned char)f->name[i];
		if (c >= 0x20 && c < 0x7f)
			n += printf("%c", c);
		else
			n += printf("\\x%02x", c);
	}
	return n;
}

/* A table's entries sorted by name (malloc'd; NULL when out of memory). */
static feat **sorted(table *t)
{
	feat **fs = malloc((t->n ? t->n : 1) * sizeof *fs);
	size_t n = 0;
	if (!fs)
		return NULL;
	for (size_t i = 0; i < TABLE_SIZE; i++)
		if (t->slot[i].name)
			fs[n++] = &t->slot[i];
	qsort(fs, n, sizeof *fs, cmp_feat);
	return fs;
}

/* The three tables, sorted. */
typedef struct sorted_tables {
	feat **features, **lists, **tags;
} sorted_tables;

static uint64_t raw_records(void)
{
	return S.records - S.examples - S.sequences - S.events;
}

/* Prints a table of features (lists: 0) or feature lists (lists: 1) in
 * aligned columns: name, kinds, lengths, records. Returns -1 when out of
 * memory. */
static int print_feature_table(const table *t, feat **fs, int lists)
{
	int nw = 4, kw = 5, lw = 0;
	char (*mid)[128] = malloc((t->n ? t->n : 1) * sizeof *mid);
	if (!mid)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		const feat *f = fs[i];
		char k[64];
		int l = (int)f->name_len;
		if (l > nw)
			nw = l;
		l = (int)strlen(kinds_text(k, sizeof k, f->kinds));
		if (l > kw)
			kw = l;
		if (lists && f->have_steps)
			l = snprintf(mid[i], sizeof mid[i], "steps %llu..%llu, values per step %llu..%llu",
			             (unsigned long long)f->min_len, (unsigned long long)f->max_len,
			             (unsigned long long)f->min_step_len,
			             (unsigned long long)f->max_step_len);
		else if (lists)
			l = snprintf(mid[i], sizeof mid[i], "steps %llu..%llu",
			             (unsigned long long)f->min_len, (unsigned long long)f->max_len);
		else if (f->have_vbytes)
			l = snprintf(mid[i], sizeof mid[i], "length %llu..%llu (bytes per value %llu..%llu)",
			             (unsigned long long)f->min_len, (unsigned long long)f->max_len,
			             (unsigned long long)f->min_vbytes, (unsigned long long)f->max_vbytes);
		else
			l = snprintf(mid[i], sizeof mid[i], "length %llu..%llu",
			             (unsigned long long)f->min_len, (unsigned long long)f->max_len);
		if (l > lw)
			lw = l;
	}
	if (nw > 40)
		nw = 40;
	for (size_t i = 0; i < t->n; i++) {
		const feat *f = fs[i];
		char k[64];
		fputs("  ", stdout);
		int n = print_name(f);
		printf("%*s  %-*s  %-*s  in %llu record%s\n", n < nw ? nw - n : 0, "", kw,
		       f->kinds ? kinds_text(k, sizeof k, f->kinds) : "-", lw, mid[i],
		       (unsigned long long)f->records, f->records == 1 ? "" : "s");
	}
	free(mid);
	if (t->untracked)
		printf("more than %u names: %llu occurrences of other names not shown\n", MAX_FEATURES,
		       (unsigned long long)t->untracked);
	return 0;
}

/* "TensorBoard event file: 21 events, steps 0-9, tags: accuracy (10), loss (10)". */
static void print_events(feat **tags)
{
	if (S.event_files == 1)
		printf("TensorBoard event file: ");
	else
		printf("TensorBoard event files (%llu): ", (unsigned long long)S.event_files);
	printf("%llu event%s", (unsigned long long)S.events, S.events == 1 ? "" : "s");
	if (S.stepped_events)
		printf(", steps %lld-%lld", (long long)S.min_step, (long long)S.max_step);
	printf(", tags:");
	if (!S.tags.n)
		printf(" none");
	for (size_t i = 0; i < S.tags.n; i++) {
		printf(i ? ", " : " ");
		print_name(tags[i]);
		printf(" (%llu)", (unsigned long long)tags[i]->records);
	}
	putchar('\n');
	if (S.tags.untracked)
		printf("more than %u tags: %llu values of other tags not shown\n", MAX_FEATURES,
		       (unsigned long long)S.tags.untracked);
}

/* Returns -1 when out of memory (a table not printed). */
static int print_text(const shard_info *sh, size_t nsh, const sorted_tables *st)
{
	char b1[32], b2[32];
	int w = 5;
	for (size_t i = 0; i < nsh; i++)
		if ((int)strlen(sh[i].path) > w)
			w = (int)strlen(sh[i].path);
	if (w < 16)
		w = 16;
	uint64_t recs = 0, fb = 0, sb = 0;
	printf("%-*s  %10s  %10s  %10s  %s\n", w, "shard", "records", "bytes", "stream", "compression");
	for (size_t i = 0; i < nsh; i++) {
		printf("%-*s  %10llu  %10s  %10s  %s\n", w, sh[i].path,
		       (unsigned long long)sh[i].records,
		       rio__format_bytes(b1, sizeof b1, sh[i].file_bytes),
		       rio__format_bytes(b2, sizeof b2, sh[i].stream_bytes),
		       rio_compression_name(sh[i].compression));
		recs += sh[i].records;
		fb += sh[i].file_bytes;
		sb += sh[i].stream_bytes;
	}
	if (nsh > 1) {
		char t[64];
		snprintf(t, sizeof t, "total (%zu shards)", nsh);
		printf("%-*s  %10llu  %10s  %10s\n", w, t, (unsigned long long)recs,
		       rio__format_bytes(b1, sizeof b1, fb), rio__format_bytes(b2, sizeof b2, sb));
	}
	if (S.records == 0) {
		printf("no records\n");
		return 0;
	}
	printf("record sizes: %llu..%llu bytes (mean %.1f)\n", (unsigned long long)S.min_size,
	       (unsigned long long)S.max_size, (double)S.sum_size / (double)S.records);
	if (S.event_files)
		print_events(st->tags);
	if (S.examples + S.sequences == 0) {
		if (raw_records())
			printf("%s are not tf.train.Example: raw records, sizes %llu..%llu\n",
			       S.events ? "other payloads" : "payloads", (unsigned long long)S.raw_min,
			       (unsigned long long)S.raw_max);
		return 0;
	}
	if (S.sequences == 0)
		printf("features (in %llu of %llu records parsed as Examples):\n",
		       (unsigned long long)S.examples, (unsigned long long)S.records);
	else if (S.examples == 0)
		printf("context features (in %llu of %llu records parsed as SequenceExamples):\n",
		       (unsigned long long)S.sequences, (unsigned long long)S.records);
	else
		printf("features (of %llu Examples, and context of %llu SequenceExamples, in %llu "
		       "records):\n",
		       (unsigned long long)S.examples, (unsigned long long)S.sequences,
		       (unsigned long long)S.records);
	if (print_feature_table(&S.features, st->features, 0) < 0)
		return -1;
	if (S.sequences) {
		printf("feature lists (in %llu of %llu records parsed as SequenceExamples):\n",
		       (unsigned long long)S.sequences, (unsigned long long)S.records);
		if (print_feature_table(&S.lists, st->lists, 1) < 0)
			return -1;
	}
	if (raw_records())
		printf("%llu records are not Examples (raw payloads, sizes %llu..%llu)\n",
		       (unsigned long long)raw_records(), (unsigned long long)S.raw_min,
		       (unsigned long long)S.raw_max);
	if (S.unrepresented)
		printf("%llu record%s hold%s unknown fields or overridden values (recordio-cat "
		       "--format json keeps them in \"_raw\")\n",
		       (unsigned long long)S.unrepresented, S.unrepresented == 1 ? "" : "s",
		       S.unrepresented == 1 ? "s" : "");
	return 0;
}

/* "kinds": ["bytes", ...] */
static void json_kinds(unsigned kinds)
{
	int first = 1;
	printf("\"kinds\": [");
	for (size_t k = 0; k < NKINDS; k++) {
		if (kinds & (1u << kind_order[k])) {
			printf("%s\"%s\"", first ? "" : ", ", rio_feature_kind_name(kind_order[k]));
			first = 0;
		}
	}
	putchar(']');
}

/* Prints the objects of a JSON array of features (lists: 0) or feature
 * lists (lists: 1): name, kinds, min/max length (values per list, or steps),
 * records, and min/max bytes per value (values per step) when known. */
static void json_feature_table(feat **fs, size_t n, int lists)
{
	const char *len_key = lists ? "steps" : "length";
	const char *per_key = lists ? "step_length" : "value_bytes";
	for (size_t i = 0; i < n; i++) {
		const feat *f = fs[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		rio__json_string(stdout, f->name, f->name_len);
		printf(", ");
		json_kinds(f->kinds);
		printf(", \"min_%s\": %llu, \"max_%s\": %llu, \"records\": %llu", len_key,
		       (unsigned long long)f->min_len, len_key, (unsigned long long)f->max_len,
		       (unsigned long long)f->records);
		if (lists ? f->have_steps : f->have_vbytes)
			printf(", \"min_%s\": %llu, \"max_%s\": %llu", per_key,
			       (unsigned long long)(lists ? f->min_step_len : f->min_vbytes), per_key,
			       (unsigned long long)(lists ? f->max_step_len : f->max_vbytes));
		putchar('}');
	}
}

static void print_json(const shard_info *sh, size_t nsh, const sorted_tables *st)
{
	uint64_t recs = 0, fb = 0, sb = 0;
	printf("{\"shards\": [");
	for (size_t i = 0; i < nsh; i++) {
		printf("%s\n  {\"path\": ", i ? "," : "");
		rio__json_string(stdout, sh[i].path, strlen(sh[i].path));
		printf(", \"records\": %llu, \"file_bytes\": %llu, \"stream_bytes\": %llu, "
		       "\"compression\": \"%s\", \"tensorboard\": %s}",
		       (unsigned long long)sh[i].records, (unsigned long long)sh[i].file_bytes,
		       (unsigned long long)sh[i].stream_bytes, rio_compression_name(sh[i].compression),
		       sh[i].events ? "true" : "false");
		recs += sh[i].records;
		fb += sh[i].file_bytes;
		sb += sh[i].stream_bytes;
	}
	printf("],\n \"total\": {\"shards\": %zu, \"records\": %llu, \"file_bytes\": %llu, "
	       "\"stream_bytes\": %llu},\n",
	       nsh, (unsigned long long)recs, (unsigned long long)fb, (unsigned long long)sb);
	printf(" \"record_size\": {\"min\": %llu, \"max\": %llu, \"mean\": ",
	       (unsigned long long)(S.records ? S.min_size : 0), (unsigned long long)S.max_size);
	rio__json_number(stdout, S.records ? (double)S.sum_size / (double)S.records : 0.0, 10);
	printf("},\n");
	printf(" \"examples\": %llu,\n \"sequence_examples\": %llu,\n \"events\": %llu,\n"
	       " \"raw_records\": %llu,\n \"records_not_fully_decoded\": %llu,\n \"features\": [",
	       (unsigned long long)S.examples, (unsigned long long)S.sequences,
	       (unsigned long long)S.events, (unsigned long long)raw_records(),
	       (unsigned long long)S.unrepresented);
	json_feature_table(st->features, S.features.n, 0);
	printf("],\n \"untracked_features\": %llu,\n \"feature_lists\": [",
	       (unsigned long long)S.features.untracked);
	json_feature_table(st->lists, S.lists.n, 1);
	printf("],\n \"untracked_feature_lists\": %llu,\n \"tensorboard\": ",
	       (unsigned long long)S.lists.untracked);
	if (!S.event_files) {
		printf("null}\n");
		return;
	}
	printf("{\"files\": %llu, \"events\": %llu, ", (unsigned long long)S.event_files,
	       (unsigned long long)S.events);
	if (S.stepped_events)
		printf("\"min_step\": %lld, \"max_step\": %lld, ", (long long)S.min_step,
		       (long long)S.max_step);
	else
		printf("\"min_step\": null, \"max_step\": null, ");
	printf("\"tags\": [");
	for (size_t i = 0; i < S.tags.n; i++) {
		const feat *f = st->tags[i];
		printf("%s{\"name\": ", i ? ", " : "");
		rio__json_string(stdout, f->name, f->name_len);
		printf(", \"values\": %llu, \"scalars\": %llu}", (unsigned long long)f->records,
		       (unsigned long long)f->scalars);
	}
	printf("], \"untracked_tags\": %llu}}\n", (unsigned long long)S.tags.untracked);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, opt;

	tool_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "Jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J': json = 1; break;
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
	size_t nsh = shards.count;
	shard_info *sh = calloc(nsh ? nsh : 1, sizeof *sh);
	if (!sh) {
		tool_error("out of memory");
		status = EXIT_DATA;
	}
	for (size_t i = 0; status == EXIT_OK && i < nsh; i++)
		if (scan_shard(shards.paths[i], &sh[i]) < 0)
			status = EXIT_DATA;

	if (status == EXIT_OK) {
		sorted_tables st = {NULL, NULL, NULL};
		if (S.out_of_memory || !(st.features = sorted(&S.features)) ||
		    !(st.lists = sorted(&S.lists)) || !(st.tags = sorted(&S.tags))) {
			tool_error("out of memory collecting the feature table");
			status = EXIT_DATA;
		} else if (json) {
			print_json(sh, nsh, &st);
		} else if (print_text(sh, nsh, &st) < 0) {
			tool_error("out of memory printing the feature table");
			status = EXIT_DATA;
		}
		free(st.features);
		free(st.lists);
		free(st.tags);
	}
	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	table *tables[] = {&S.features, &S.lists, &S.tags};
	for (size_t t = 0; t < 3; t++)
		for (size_t i = 0; i < TABLE_SIZE; i++)
			free(tables[t]->slot[i].name);
	rio_shardset_free(&shards);
	free(sh);
	return status;
}

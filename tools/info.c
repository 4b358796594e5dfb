/*
 * info.c — recordio-info: what a set of shards holds.
 *
 * Reads every record of every shard (all CRCs checked) and reports, per
 * shard and in total, the records, the file size, the size of the
 * uncompressed record stream and the compression; then the record sizes and
 * a schema summary of the tf.train.Example payloads: for every feature name
 * its kind(s), the shortest and longest list, for bytes features the
 * shortest and longest value, and in how many records it appears.
 *
 * Memory stays bounded whatever the data: features live in one open-
 * addressing hash table of at most MAX_FEATURES names (more are counted as
 * "untracked"), and records are views into the reader's buffer.
 */
#include "config.h"
#include "common.h"

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
	uint64_t min_len, max_len;
	uint64_t records;
	uint64_t last_record; /* global record number + 1 of the last count */
	int have_vbytes;
	uint64_t min_vbytes, max_vbytes; /* bytes per value, bytes lists */
} feat;

typedef struct shard_info {
	const char *path;
	uint64_t records, file_bytes, stream_bytes;
	rio_compression compression;
} shard_info;

static struct {
	feat table[TABLE_SIZE];
	size_t nfeat;
	uint64_t untracked; /* feature occurrences whose name did not fit */
	int out_of_memory;  /* a name could not be stored: the summary is wrong */
	uint64_t records, examples;
	uint64_t min_size, max_size, sum_size;
	uint64_t raw_min, raw_max; /* sizes of records that are not Examples */
} S = {.min_size = UINT64_MAX, .raw_min = UINT64_MAX};

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... FILE...|PREFIX\n"
	        "Summarize TFRecord shards (plain, .gz, .zz or .lz4): records, file and\n"
	        "stream bytes and compression per shard and in total, record sizes, and\n"
	        "the features of the tf.train.Example payloads (kinds, list lengths, how\n"
	        "many records have each). Every record is read and every CRC checked.\n"
	        "Each FILE may be a shard, a glob, a comma-separated list or a PREFIX;\n"
	        "'-' is standard input, and a pipe or FIFO reads as a file.\n"
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

/* The table slot of `name`, inserted if new; NULL when the table is full. */
static feat *lookup(const char *name, size_t len)
{
	size_t i = (size_t)hash_name(name, len) & (TABLE_SIZE - 1);
	for (;;) {
		feat *f = &S.table[i];
		if (!f->name) {
			if (S.nfeat >= MAX_FEATURES)
				return NULL;
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
			S.nfeat++;
			return f;
		}
		if (f->name_len == len && !memcmp(f->name, name, len))
			return f;
		i = (i + 1) & (TABLE_SIZE - 1);
	}
}

static void add_record(const rio_record *rec)
{
	uint64_t recno = ++S.records; /* 1-based, for last_record */
	S.sum_size += rec->size;
	if (rec->size < S.min_size)
		S.min_size = rec->size;
	if (rec->size > S.max_size)
		S.max_size = rec->size;
	if (!tool_payload_is_example(rec->data, rec->size)) {
		if (rec->size < S.raw_min)
			S.raw_min = rec->size;
		if (rec->size > S.raw_max)
			S.raw_max = rec->size;
		return;
	}
	S.examples++;
	rio_example_iter it;
	rio_feature f;
	rio_example_iter_init(&it, rec->data, rec->size);
	while (rio_example_iter_next(&it, &f) == 1) {
		feat *e = lookup(f.name, f.name_len);
		if (!e) {
			S.untracked++;
			continue;
		}
		e->kinds |= 1u << f.kind;
		if (f.count < e->min_len)
			e->min_len = f.count;
		if (f.count > e->max_len)
			e->max_len = f.count;
		if (e->last_record != recno) { /* a name repeated in one record counts once */
			e->records++;
			e->last_record = recno;
		}
		if (f.kind == RIO_FEATURE_BYTES) {
			size_t cursor = 0, len;
			const uint8_t *v;
			while (rio_feature_bytes_next(&f, &cursor, &v, &len) == 1) {
				e->have_vbytes = 1;
				if (len < e->min_vbytes)
					e->min_vbytes = len;
				if (len > e->max_vbytes)
					e->max_vbytes = len;
			}
		}
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
		add_record(&rec);
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

/* Returns -1 when out of memory (nothing of the feature table printed). */
static int print_text(const shard_info *sh, size_t nsh, feat **fs)
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
		       tool_format_bytes(b1, sizeof b1, sh[i].file_bytes),
		       tool_format_bytes(b2, sizeof b2, sh[i].stream_bytes),
		       rio_compression_name(sh[i].compression));
		recs += sh[i].records;
		fb += sh[i].file_bytes;
		sb += sh[i].stream_bytes;
	}
	if (nsh > 1) {
		char t[64];
		snprintf(t, sizeof t, "total (%zu shards)", nsh);
		printf("%-*s  %10llu  %10s  %10s\n", w, t, (unsigned long long)recs,
		       tool_format_bytes(b1, sizeof b1, fb), tool_format_bytes(b2, sizeof b2, sb));
	}
	if (S.records == 0) {
		printf("no records\n");
		return 0;
	}
	printf("record sizes: %llu..%llu bytes (mean %.1f)\n", (unsigned long long)S.min_size,
	       (unsigned long long)S.max_size, (double)S.sum_size / (double)S.records);
	if (S.examples == 0) {
		printf("payloads are not tf.train.Example: raw records, sizes %llu..%llu\n",
		       (unsigned long long)S.raw_min, (unsigned long long)S.raw_max);
		return 0;
	}
	printf("features (in %llu of %llu records parsed as Examples):\n",
	       (unsigned long long)S.examples, (unsigned long long)S.records);
	/* columns: name, kinds, "length A..B[ (bytes per value C..D)]", records */
	int nw = 4, kw = 5, lw = 0;
	char (*mid)[96] = malloc((S.nfeat ? S.nfeat : 1) * sizeof *mid);
	if (!mid)
		return -1;
	for (size_t i = 0; i < S.nfeat; i++) {
		const feat *f = fs[i];
		char k[64];
		int l = (int)f->name_len;
		if (l > nw)
			nw = l;
		l = (int)strlen(kinds_text(k, sizeof k, f->kinds));
		if (l > kw)
			kw = l;
		if (f->have_vbytes)
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
	for (size_t i = 0; i < S.nfeat; i++) {
		const feat *f = fs[i];
		char k[64];
		fputs("  ", stdout);
		int n = print_name(f);
		printf("%*s  %-*s  %-*s  in %llu record%s\n", n < nw ? nw - n : 0, "", kw,
		       kinds_text(k, sizeof k, f->kinds), lw, mid[i], (unsigned long long)f->records,
		       f->records == 1 ? "" : "s");
	}
	free(mid);
	if (S.examples < S.records)
		printf("%llu records are not Examples (raw payloads, sizes %llu..%llu)\n",
		       (unsigned long long)(S.records - S.examples), (unsigned long long)S.raw_min,
		       (unsigned long long)S.raw_max);
	if (S.untracked)
		printf("more than %u feature names: %llu occurrences of other names not shown\n",
		       MAX_FEATURES, (unsigned long long)S.untracked);
	return 0;
}

static void print_json(const shard_info *sh, size_t nsh, feat **fs)
{
	uint64_t recs = 0, fb = 0, sb = 0;
	printf("{\"shards\": [");
	for (size_t i = 0; i < nsh; i++) {
		printf("%s\n  {\"path\": ", i ? "," : "");
		tool_json_string(stdout, sh[i].path, strlen(sh[i].path));
		printf(", \"records\": %llu, \"file_bytes\": %llu, \"stream_bytes\": %llu, "
		       "\"compression\": \"%s\"}",
		       (unsigned long long)sh[i].records, (unsigned long long)sh[i].file_bytes,
		       (unsigned long long)sh[i].stream_bytes, rio_compression_name(sh[i].compression));
		recs += sh[i].records;
		fb += sh[i].file_bytes;
		sb += sh[i].stream_bytes;
	}
	printf("],\n \"total\": {\"shards\": %zu, \"records\": %llu, \"file_bytes\": %llu, "
	       "\"stream_bytes\": %llu},\n",
	       nsh, (unsigned long long)recs, (unsigned long long)fb, (unsigned long long)sb);
	printf(" \"record_size\": {\"min\": %llu, \"max\": %llu, \"mean\": %.1f},\n",
	       (unsigned long long)(S.records ? S.min_size : 0), (unsigned long long)S.max_size,
	       S.records ? (double)S.sum_size / (double)S.records : 0.0);
	printf(" \"examples\": %llu,\n \"raw_records\": %llu,\n \"features\": [",
	       (unsigned long long)S.examples, (unsigned long long)(S.records - S.examples));
	for (size_t i = 0; i < S.nfeat; i++) {
		const feat *f = fs[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		tool_json_string(stdout, f->name, f->name_len);
		printf(", \"kinds\": [");
		int first = 1;
		for (size_t k = 0; k < NKINDS; k++) {
			if (f->kinds & (1u << kind_order[k])) {
				printf("%s\"%s\"", first ? "" : ", ", rio_feature_kind_name(kind_order[k]));
				first = 0;
			}
		}
		printf("], \"min_length\": %llu, \"max_length\": %llu, \"records\": %llu",
		       (unsigned long long)f->min_len, (unsigned long long)f->max_len,
		       (unsigned long long)f->records);
		if (f->have_vbytes)
			printf(", \"min_value_bytes\": %llu, \"max_value_bytes\": %llu",
			       (unsigned long long)f->min_vbytes, (unsigned long long)f->max_vbytes);
		putchar('}');
	}
	printf("],\n \"untracked_features\": %llu}\n", (unsigned long long)S.untracked);
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
		feat **fs = S.out_of_memory ? NULL : malloc((S.nfeat ? S.nfeat : 1) * sizeof *fs);
		size_t n = 0;
		if (!fs) {
			tool_error("out of memory collecting the feature table");
			status = EXIT_DATA;
		} else {
			for (size_t i = 0; i < TABLE_SIZE; i++)
				if (S.table[i].name)
					fs[n++] = &S.table[i];
			qsort(fs, n, sizeof *fs, cmp_feat);
			if (json)
				print_json(sh, nsh, fs);
			else if (print_text(sh, nsh, fs) < 0) {
				tool_error("out of memory printing the feature table");
				status = EXIT_DATA;
			}
			free(fs);
		}
	}
	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	for (size_t i = 0; i < TABLE_SIZE; i++)
		free(S.table[i].name);
	rio_shardset_free(&shards);
	free(sh);
	return status;
}

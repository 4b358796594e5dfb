/*
 * pack.c — recordio-pack: converts a dataset into sharded TFRecord files.
 *
 * The command line picks a source (--from idx|tfrecord|csv|dir|lines, one
 * file each: pack_*.c) and a sharded output (shard_out.c); this file parses
 * options and pumps records from one to the other:
 *
 *   source ──► [--shuffle: held in memory, seeded Fisher-Yates] ──► shard_out
 *
 * --shards N splits the records into N contiguous ranges whose sizes differ
 * by at most one, which needs the record count before the first write. idx,
 * dir and csv sources know it when they open (csv reads its file once to
 * check it and infer column types); a shuffled input is counted as it is
 * loaded; lines and tfrecord inputs are read once just to count them, then
 * rewound. Counting first keeps one shard open at a time, whatever N is,
 * and makes shard k hold input records [k*n/N, (k+1)*n/N) in every mode.
 */
#include "config.h"
#include "clock.h"
#include "common.h"
#include "grow.h"
#include "pack.h"
#include "size.h"
#include "rng.h"
#include "set_commit.h"
#include "shard_out.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Exit status after SIGINT/SIGTERM: the shell's 128 + SIGINT. */
#define EXIT_INTERRUPTED 130

static void usage(void)
{
	printf(
	    "Usage: %s --from MODE --output PREFIX [OPTIONS] [INPUT...]\n"
	    "       %s --recover --output PREFIX\n"
	    "Converts a dataset into TFRecord shards PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4],\n"
	    "each with an index SHARD.idx (\"<offset> <framed size>\" per record).\n"
	    "\n"
	    "Modes:\n"
	    "  --from idx --images FILE --labels FILE\n"
	    "        IDX image/label files (MNIST, Fashion-MNIST; plain or gzip): one\n"
	    "        tf.train.Example per image with features 'image' (bytes: the raw\n"
	    "        uint8 pixels) and 'label' (int64).\n"
	    "  --from tfrecord INPUT...\n"
	    "        existing TFRecord files (any compression), payloads copied verbatim;\n"
	    "        an INPUT is a file, a glob, a comma-separated list, a directory (its\n"
	    "        shard files: a TFX split) or a shard PREFIX; a glob may pick part\n"
	    "        of a set ('in/t-0000[0-2]-of-00004*'), and a shard that it matches,\n"
	    "        or that a directory or PREFIX lists, must exist.\n"
	    "  --from csv [--label COLUMN] FILE\n"
	    "        a CSV file with a header row: one Example per row; the label column\n"
	    "        becomes an int64, columns whose values are all numbers (nan, inf\n"
	    "        and infinity too, counted in the summary) become a float each (an\n"
	    "        empty cell: NaN), the others bytes. Quoted fields (\"a,b\", \"\"),\n"
	    "        CRLF line ends and blank lines are handled.\n"
	    "  --from dir DIR\n"
	    "        the DIR/CLASS/FILE layout (ImageNet): one Example per regular file,\n"
	    "        features 'data' (bytes: the file), 'label' (int64: the index of\n"
	    "        CLASS among the sorted sub-directories), 'name' (bytes: CLASS/FILE).\n"
	    "        Files directly in DIR and hidden names are skipped.\n"
	    "  --from lines FILE...\n"
	    "        one raw record per line: the line without its newline.\n"
	    "  A FILE or INPUT '-' is standard input (lines, tfrecord).\n"
	    "\n"
	    "Options:\n"
	    "  -o, --output PREFIX      output prefix, e.g. out/train (required), or\n"
	    "                           s3://BUCKET/PREFIX (see below)\n"
	    "  -n, --shards N           write N shards (default 1); shard k holds input\n"
	    "                           records [k*n/N, (k+1)*n/N): counts differ by at\n"
	    "                           most one (lines and tfrecord inputs are read once\n"
	    "                           first to count them)\n"
	    "  -s, --shard-size SIZE    start a new shard when the next record would take\n"
	    "                           the shard's uncompressed bytes over SIZE (e.g. 64M,\n"
	    "                           100MB; more than 0); every shard holds at least\n"
	    "                           one record\n"
	    "  -c, --compression NAME   none (default), gzip, zlib or lz4\n"
	    "      --level N            compression level: gzip/zlib 1-9 (zlib's deflate;\n"
	    "                           default: ISA-L's fast deflate, else zlib's 6),\n"
	    "                           lz4 1-12\n"
	    "      --shuffle            write the records in a seeded random order (holds\n"
	    "                           the whole dataset in memory)\n"
	    "      --seed S             the shuffle's seed (default: random, printed)\n"
	    "      --max-record-size SIZE  the longest record, line or CSV field, 1 byte\n"
	    "                           to 256M (e.g. 64M; default and most 256M, what\n"
	    "                           the readers accept); a longer one is an error\n"
	    "                           naming it\n"
	    "  -f, --force              replace existing shards of PREFIX, and remove its\n"
	    "                           shards of another count or compression\n"
	    "      --fsync              fsync every file and the directory when done\n"
	    "      --recover            only finish an interrupted commit of PREFIX and\n"
	    "                           remove the staging files of dead runs (every run\n"
	    "                           does this first); no --from, no input\n"
	    "  -q, --quiet              no progress line and no summary\n"
	    "  -h, --help               this help\n"
	    "      --version            the library version\n"
	    "\n"
	    RIO__SIZE_HELP
	    "\n"
	    "Nothing is written under the final names until every shard is complete; on\n"
	    "an error or an interrupt no file is left behind. The set is replaced as a\n"
	    "whole through a journal PREFIX.commit: readers refuse the set while it\n"
	    "exists, and the next run on PREFIX finishes an interrupted commit.\n"
	    "An s3://BUCKET/PREFIX output is packed under $TMPDIR first, then uploaded\n"
	    "as a new generation PREFIX.gNNNNNN/ (multipart for shards over the part size)\n"
	    "and committed by the manifest PREFIX.manifest, written last: readers of\n"
	    "s3://BUCKET/PREFIX see the old set or the new one, whole. --force replaces\n"
	    "a set; the generation that was in force is kept for its readers, older\n"
	    "ones deleted.\n"
	    "\n"
	    TOOL_REMOTE_HELP
	    "Exit status: 0 success, 1 data or I/O error, 2 usage error, 130 interrupted.\n"
	    "\n"
	    "Example:\n"
	    "  %s --from idx --images train-images-idx3-ubyte.gz \\\n"
	    "      --labels train-labels-idx1-ubyte.gz --output out/train --shards 4\n",
	    tool_name, tool_name, tool_name);
}

/* ---- the shuffle: records held in one buffer, a seeded permutation ---- */

typedef struct record_store {
	uint8_t *data;
	uint64_t size;
	size_t cap;
	uint64_t *start; /* n + 1 offsets: record i is [start[i], start[i+1]) */
	uint64_t n;
	size_t ncap;
} record_store;

static int store_add(record_store *st, const uint8_t *data, size_t size)
{
	if (rio__grow(&st->data, &st->cap, (size_t)st->size + size, 1, 1 << 20) ||
	    rio__grow(&st->start, &st->ncap, (size_t)st->n + 2, sizeof *st->start, 4096))
		return -1;
	if (size)
		memcpy(st->data + st->size, data, size);
	st->start[st->n] = st->size;
	st->size += size;
	st->n++;
	st->start[st->n] = st->size;
	return 0;
}

static void store_free(record_store *st)
{
	free(st->data);
	free(st->start);
}

/* ---- the pump ---------------------------------------------------------- */

typedef struct pack_state {
	tool_progress progress;
	uint64_t seen; /* records read in the current phase */
	uint64_t seen_bytes;
} pack_state;

/* Every 256 records: the progress line. */
static void tick(pack_state *ps, size_t size, const char *what)
{
	ps->seen++;
	ps->seen_bytes += size;
	if ((ps->seen & 255) == 0)
		tool_progress_update(&ps->progress, ps->seen, ps->seen_bytes, what);
}

/* Hands every record of `src` to sink(ctx, data, size), or only counts them
 * when sink is NULL, drawing the progress line as `what`. 0, -1 after an
 * error was reported (by the source or the sink), -2 when interrupted. */
static int pump(pack_source *src, pack_state *ps, const char *what,
                int (*sink)(void *ctx, const uint8_t *data, size_t size), void *ctx)
{
	const uint8_t *d;
	size_t n;
	int rc;
	ps->seen = ps->seen_bytes = 0;
	while ((rc = src->next(src, &d, &n)) == 1) {
		if (tool_interrupted)
			return -2;
		if (sink && sink(ctx, d, n) < 0)
			return -1;
		tick(ps, n, what);
	}
	return rc < 0 ? -1 : 0;
}

/* Reads a streaming source once to count it, then rewinds it. */
static int count_source(pack_source *src, pack_state *ps)
{
	if (src->once) {
		/* the second pass would find it empty and write empty shards */
		tool_error("%s: not a regular file, so it cannot be read twice as --shards N "
		           "needs (a first pass counts the records); use --shard-size or --shuffle",
		           src->once);
		return -1;
	}
	int rc = pump(src, ps, "counting", NULL, NULL);
	if (rc < 0)
		return rc;
	src->total = ps->seen;
	return src->rewind(src);
}

/* pump() sinks: into the --shuffle store, and into the output. */
static int store_sink(void *st, const uint8_t *data, size_t size)
{
	if (store_add(st, data, size) < 0) {
		tool_error("out of memory holding %llu records for --shuffle",
		           (unsigned long long)((record_store *)st)->n);
		return -1;
	}
	return 0;
}

static int out_sink(void *out, const uint8_t *data, size_t size)
{
	return shard_out_write(out, data, size);
}

/* Writes the records of `st` in a seeded random order. */
static int write_shuffled(record_store *st, uint64_t seed, shard_out *out, pack_state *ps)
{
	uint64_t *perm = malloc((st->n ? st->n : 1) * sizeof *perm);
	if (!perm) {
		tool_error("out of memory for the shuffle of %llu records", (unsigned long long)st->n);
		return -1;
	}
	for (uint64_t i = 0; i < st->n; i++)
		perm[i] = i;
	rio__rng r; /* lib/rng.h: the loader's generator too */
	rio__rng_seed(&r, seed, 0, 0, 0);
	for (uint64_t i = st->n; i > 1; i--) {
		uint64_t j = rio__rng_below(&r, i), t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	ps->seen = ps->seen_bytes = 0;
	int rc = 0;
	for (uint64_t i = 0; i < st->n && !rc; i++) {
		if (tool_interrupted) {
			rc = -2;
			break;
		}
		uint64_t k = perm[i], size = st->start[k + 1] - st->start[k];
		if (shard_out_write(out, st->data + st->start[k], size) < 0)
			rc = -1;
		tick(ps, size, "packing");
	}
	free(perm);
	return rc;
}

/* ---- options ------------------------------------------------------------ */

enum {
	OPT_IMAGES = 256,
	OPT_LABELS,
	OPT_LABEL,
	OPT_LEVEL,
	OPT_SHUFFLE,
	OPT_SEED,
	OPT_FSYNC,
	OPT_RECOVER,
	OPT_VERSION,
	OPT_MAX_RECORD,
};

static const struct option long_options[] = {
	{"from", required_argument, NULL, 'F'},
	{"output", required_argument, NULL, 'o'},
	{"images", required_argument, NULL, OPT_IMAGES},
	{"labels", required_argument, NULL, OPT_LABELS},
	{"label", required_argument, NULL, OPT_LABEL},
	{"shards", required_argument, NULL, 'n'},
	{"shard-size", required_argument, NULL, 's'},
	{"compression", required_argument, NULL, 'c'},
	{"level", required_argument, NULL, OPT_LEVEL},
	{"shuffle", no_argument, NULL, OPT_SHUFFLE},
	{"seed", required_argument, NULL, OPT_SEED},
	{"max-record-size", required_argument, NULL, OPT_MAX_RECORD},
	{"force", no_argument, NULL, 'f'},
	{"fsync", no_argument, NULL, OPT_FSYNC},
	{"recover", no_argument, NULL, OPT_RECOVER},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	TOOL_REMOTE_LONGOPTS,
	{NULL, 0, NULL, 0},
};

typedef struct pack_opts {
	pack_args a;
	shard_out_opts out; /* shards, shard_size, level: 0 unless given */
	int shuffle, have_seed, quiet, recover;
	uint64_t seed;
	int s3;                 /* --output is an s3:// URL (pack_s3.c)    */
	rio_remote_opts remote; /* its uploads (and remote inputs' reads)  */
} pack_opts;

/* The options that take a number, a size or a name (one switch case each
 * in parse_options()). */
static void parse_value(pack_opts *o, int c, const char *value)
{
	uint64_t v;
	switch (c) {
	case 'n':
		v = tool_parse_u64("--shards", value);
		if (v < 1 || v > SHARD_OUT_MAX)
			tool_usage_error("--shards: expected 1 to %u, got '%s'", SHARD_OUT_MAX, value);
		o->out.shards = (uint32_t)v;
		break;
	case 's':
		o->out.shard_size = tool_parse_size("--shard-size", value);
		if (o->out.shard_size == 0)
			tool_usage_error("--shard-size: must be more than 0");
		break;
	case 'c': {
		rio_compression comp;
		if (rio_compression_parse(value, &comp) < 0 || comp == RIO_COMPRESSION_AUTO || !*value)
			tool_usage_error("--compression: expected none, gzip, zlib or lz4, got '%s'",
			                 value);
		o->out.compression = comp;
		break;
	}
	case OPT_LEVEL:
		v = tool_parse_u64("--level", value);
		if (v < 1 || v > 12)
			tool_usage_error("--level: expected 1 to 12, got '%s'", value);
		o->out.level = (int)v;
		break;
	case OPT_SEED:
		o->seed = tool_parse_u64("--seed", value);
		o->have_seed = 1;
		break;
	case OPT_MAX_RECORD:
		v = tool_parse_size("--max-record-size", value);
		if (v < 1 || v > PACK_MAX_RECORD)
			tool_usage_error("--max-record-size: expected 1 to %llu (256M, the readers' "
			                 "limit), got '%s'",
			                 (unsigned long long)PACK_MAX_RECORD, value);
		o->a.max_record_size = v;
		break;
	}
}

/* --output: a file prefix whose shard names the commit journal can list. */
static void check_output(pack_opts *o)
{
	if (!o->a.output || !*o->a.output)
		tool_usage_error("missing --output PREFIX");
	if (rio_is_url(o->a.output)) {
		if (strncasecmp(o->a.output, "s3://", 5))
			tool_usage_error("--output: '%s': a set can be written to s3:// only",
			                 o->a.output);
		if (o->recover)
			tool_usage_error("--recover: an S3 output has nothing to recover (a failed run "
			                 "leaves the set as it was)");
		o->s3 = 1;
	}
	tool_check_output_prefix("--output", o->a.output);
	const char *slash = strrchr(o->a.output, '/');
	const char *base = slash ? slash + 1 : o->a.output;
	/* the commit journal is a text file of names, one per line */
	if (strpbrk(base, "\t\n"))
		tool_usage_error("--output: '%s': a tab or a newline in a shard name is not supported",
		                 o->a.output);
}

/* --from and the options and inputs each mode takes. */
static void check_from(const pack_opts *o)
{
	const char *m = o->a.from;
	int idx = !strcmp(m, "idx"), csv = !strcmp(m, "csv");
	if (!idx && !csv && strcmp(m, "tfrecord") && strcmp(m, "dir") && strcmp(m, "lines"))
		tool_usage_error("--from: expected idx, tfrecord, csv, dir or lines, got '%s'", m);
	if (!idx && (o->a.images || o->a.labels))
		tool_usage_error("--images and --labels go with --from idx");
	if (!csv && o->a.label_column)
		tool_usage_error("--label goes with --from csv");
	if (idx) {
		if (!o->a.images || !o->a.labels)
			tool_usage_error("--from idx needs --images FILE and --labels FILE");
		if (o->a.ninputs)
			tool_usage_error("--from idx takes no input arguments (got '%s')", o->a.inputs[0]);
	} else if (o->a.ninputs == 0) {
		tool_usage_error("--from %s: missing input %s", m,
		                 !strcmp(m, "dir") ? "DIR" : csv ? "FILE" : "file");
	} else if ((csv || !strcmp(m, "dir")) && o->a.ninputs > 1) {
		tool_usage_error("--from %s takes one input, got %d", m, o->a.ninputs);
	}
}

/* The shard count or size, the compression level and the seed, together. */
static void check_combinations(pack_opts *o)
{
	if (o->out.shards && o->out.shard_size)
		tool_usage_error("--shards and --shard-size exclude each other");
	if (!o->out.shards && !o->out.shard_size)
		o->out.shards = 1;
	if (o->out.level) {
		rio_compression comp = o->out.compression;
		if (comp == RIO_COMPRESSION_NONE)
			tool_usage_error("--level needs --compression gzip, zlib or lz4");
		if (comp != RIO_COMPRESSION_LZ4 && o->out.level > 9)
			tool_usage_error("--level: %s levels are 1 to 9", rio_compression_name(comp));
	}
	if (o->have_seed && !o->shuffle)
		tool_usage_error("--seed needs --shuffle");
}

static void parse_options(pack_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof *o);
	o->out.compression = RIO_COMPRESSION_NONE;
	o->a.max_record_size = PACK_MAX_RECORD;
	rio_remote_opts_init(&o->remote);
	int c;
	while ((c = getopt_long(argc, argv, "F:o:n:s:c:fqh", long_options, NULL)) != -1) {
		if (tool_remote_option(c, optarg, &o->remote))
			continue;
		switch (c) {
		case 'F': o->a.from = optarg; break;
		case 'o': o->a.output = optarg; break;
		case OPT_IMAGES: o->a.images = optarg; break;
		case OPT_LABELS: o->a.labels = optarg; break;
		case OPT_LABEL: o->a.label_column = optarg; break;
		case 'n': case 's': case 'c': case OPT_LEVEL: case OPT_SEED: case OPT_MAX_RECORD:
			parse_value(o, c, optarg);
			break;
		case OPT_SHUFFLE: o->shuffle = 1; break;
		case 'f': o->out.force = 1; break;
		case OPT_FSYNC: o->out.fsync = 1; break;
		case OPT_RECOVER: o->recover = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(); exit(EXIT_OK);
		case OPT_VERSION: printf("%s %s\n", tool_name, rio_version()); exit(EXIT_OK);
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	o->a.inputs = argv + optind;
	o->a.ninputs = argc - optind;

	if (!o->a.from && !o->recover)
		tool_usage_error("missing --from (idx, tfrecord, csv, dir or lines)");
	check_output(o);
	if (o->recover) {
		if (o->a.from || o->a.ninputs)
			tool_usage_error("--recover takes --output PREFIX only (it writes no shards; got "
			                 "'%s')",
			                 o->a.from ? "--from" : o->a.inputs[0]);
		return;
	}
	/* an existing directory: refused after --recover, which may have to
	 * finish a journal that an older recordio-pack left for such a prefix */
	if (!o->s3)
		tool_refuse_output_dir("--output", o->a.output);
	check_combinations(o);
	check_from(o);
}

static int open_source(pack_source **src, const pack_args *a)
{
	const char *m = a->from;
	if (!strcmp(m, "idx"))
		return pack_idx_open(src, a);
	if (!strcmp(m, "tfrecord"))
		return pack_tfrecord_open(src, a);
	if (!strcmp(m, "csv"))
		return pack_csv_open(src, a);
	if (!strcmp(m, "dir"))
		return pack_dir_open(src, a);
	return pack_lines_open(src, a);
}

static uint64_t random_seed(void)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return seed;
}

/* The source's summary lines (pack_source.summary) as a string, or NULL. */
static char *source_notes(const pack_source *src)
{
	if (!src || !src->summary)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	src->summary(src, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* "packed ...", then the source's own lines (`notes`, may be NULL). */
static void print_summary(const pack_opts *o, shard_out *out, double secs, const char *notes)
{
	char b1[32], b2[32];
	uint64_t n = shard_out_records(out), bytes = shard_out_bytes(out);
	uint32_t shards = shard_out_count(out);
	if (secs <= 0)
		secs = 1e-9;
	printf("packed %llu records (%s", (unsigned long long)n, rio__format_bytes(b1, sizeof b1, bytes));
	if (o->out.compression != RIO_COMPRESSION_NONE)
		printf(", %s as %s", rio__format_bytes(b2, sizeof b2, shard_out_file_bytes(out)),
		       rio_compression_name(o->out.compression));
	printf(") into %u shard%s in %.2f s: %.0f records/s, %.1f MB/s", shards, shards == 1 ? "" : "s",
	       secs, (double)n / secs, (double)bytes / secs / 1e6);
	if (o->shuffle)
		printf("; shuffled with seed %llu", (unsigned long long)o->seed);
	putchar('\n');
	if (notes)
		fputs(notes, stdout);
}

static int pack(pack_opts *op);
static int main_s3(pack_opts *o);

int main(int argc, char **argv)
{
	pack_opts o;
	tool_init(argv[0]);
	parse_options(&o, argc, argv);
	o.out.prefix = o.a.output;
	if (o.shuffle && !o.have_seed)
		o.seed = random_seed();
	if (o.s3)
		return main_s3(&o);
	/* an interrupted earlier run on this prefix first: finish its commit,
	 * remove its staging files (set_commit.h) */
	int recovered = set_commit_recover(o.out.prefix);
	if (recovered < 0)
		return EXIT_DATA;
	if (o.recover) {
		if (!recovered && !o.quiet)
			printf("%s: nothing to recover\n", o.out.prefix);
		return tool_flush_stdout() < 0 ? EXIT_DATA : EXIT_OK;
	}
	return pack(&o);
}

/* --output s3://...: packed into a staging directory, then published. */
static int main_s3(pack_opts *o)
{
	char *stage = NULL;
	if (pack_s3_begin(o->a.output, o->out.force, &o->remote, &stage) < 0)
		return EXIT_DATA;
	o->out.prefix = stage;
	int status = pack(o);
	if (status == EXIT_OK && pack_s3_publish(o->a.output, stage, o->out.force, &o->remote,
	                                         o->quiet) < 0)
		status = EXIT_DATA;
	pack_s3_cleanup(stage);
	return status;
}

/* Packs the input into o->out: the exit status. */
static int pack(pack_opts *op)
{
	pack_opts o = *op;
	tool_catch_signals();

	double t0 = rio__now();
	pack_state ps;
	memset(&ps, 0, sizeof ps);
	tool_progress_init(&ps.progress, o.quiet);
	pack_source *src = NULL;
	shard_out *out = NULL;
	record_store st;
	memset(&st, 0, sizeof st);
	int rc = -1;
	char *notes = NULL;

	if (open_source(&src, &o.a) < 0)
		goto done;
	/* check the output before the (possibly long) counting or loading */
	if (shard_out_open(&out, &o.out) < 0)
		goto done;
	if (o.shuffle) {
		if ((rc = pump(src, &ps, "loading", store_sink, &st)) < 0)
			goto done;
		notes = source_notes(src);
		pack_source_close(src);
		src = NULL;
	} else if (o.out.shards > 1 && src->total == PACK_UNKNOWN) {
		if ((rc = count_source(src, &ps)) < 0)
			goto done;
	}
	shard_out_set_total(out, o.shuffle ? st.n : src->total);
	rc = o.shuffle ? write_shuffled(&st, o.seed, out, &ps)
	               : pump(src, &ps, "packing", out_sink, out);
	if (rc == 0 && tool_interrupted)
		rc = -2;
	if (rc == 0)
		rc = shard_out_finish(out);
	if (rc == 0 && src)
		notes = source_notes(src);
done:
	tool_progress_done(&ps.progress);
	if (rc == 0 && !o.quiet)
		print_summary(&o, out, rio__now() - t0, notes);
	free(notes);
	if (rc == -2 || (rc < 0 && tool_interrupted))
		tool_error("interrupted; nothing written");
	shard_out_close(out);
	pack_source_close(src);
	store_free(&st);
	if (rc == -2 || (rc < 0 && tool_interrupted))
		return EXIT_INTERRUPTED;
	return rc < 0 ? EXIT_DATA : EXIT_OK;
}

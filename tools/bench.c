/*
 * bench.c — recordio-bench: drive the loader over a set of shards and
 * report how fast it delivers batches.
 *
 * The tool is the loader's consumer and nothing more: it opens one loader
 * (loader.h) with the options given, takes every batch of E epochs with
 * rio_loader_next(), touches each one (one byte of every record, or of
 * every row of every decoded column, summed into a sink the compiler cannot
 * drop) and releases it at once. What it reports is then what a trainer
 * that does no work would see: records/s, payload MB/s and batches/s over
 * the wall time of the epochs (the loader's open, which reads the .idx
 * sidecars, is timed apart), how long the consumer waited for batches
 * (the loader's stats), the I/O backend, skipped records and the peak RSS.
 *
 * --dump-order writes where every delivered record came from, in delivery
 * order, so the loader's determinism (workers, io backend, ranks, seeds)
 * can be checked from the shell: tests/cli_bench.sh does.
 *
 * Errors follow the tools' convention: a bad option value exits 2 naming
 * it; damaged or missing data exits 1 with the loader's one-line message
 * (shard, offset, record).
 */
#include "config.h"
#include "common.h"
#include "clock.h"
#include "decimal.h"
#include "json.h"
#include "size.h"
#include "loader.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define EXIT_INTERRUPTED 130

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... SHARDS...\n"
	        "Read TFRecord shards through the recordio loader, as a trainer would, and\n"
	        "report its speed: records/s, MB/s of payload, batches/s, the time spent\n"
	        "waiting for batches, the I/O backend, skipped records and peak memory.\n"
	        "SHARDS are shard files, globs, comma-separated lists, directories or\n"
	        "PREFIXes, all read as one set.\n"
	        TOOL_SHARDS_SUBSET_HELP
	        "\n"
	        "Batches and order:\n"
	        "  -b, --batch N            records per batch (default 32)\n"
	        "  -e, --epochs E           read E epochs (default 1)\n"
	        "  -s, --shuffle MODE       none (default): shard order; buffer: shards in a\n"
	        "                           shuffled order through a shuffle buffer; global:\n"
	        "                           an exact permutation (uncompressed shards only)\n"
	        "      --shuffle-buffer N   records in the shuffle buffer (default 10000)\n"
	        "      --interleave N       shards read at once with --shuffle buffer\n"
	        "                           (default 4)\n"
	        "      --seed S             the shuffle's seed (default 0)\n"
	        "      --drop-remainder     do not deliver an epoch's last, short batch\n"
	        "\n"
	        "Ranks:\n"
	        "      --rank R --world W   read rank R's part of a world of W ranks\n"
	        "                           (default: from OMPI_*/PMI_*/SLURM_* variables,\n"
	        "                           else rank 0 of 1)\n"
	        "      --sharding MODE      auto (default), files or records\n"
	        "\n"
	        "Reading:\n"
	        "  -w, --workers N          reader/decoder threads (default 2)\n"
	        "      --io BACKEND         auto (default), uring or pread\n"
	        "      --direct             O_DIRECT for uncompressed shards\n"
	        "      --map                shuffled: read from mappings of the shards (mmap),\n"
	        "                           batches are views into them, no read and no\n"
	        "                           copy per record (faster; the mapped pages\n"
	        "                           count in the RSS)\n"
	        "      --cache SIZE         decompress compressed shards once into memory\n"
	        "                           when the rank's fit SIZE bytes (e.g. 1G), and\n"
	        "                           serve every epoch from there; with --decode,\n"
	        "                           each record decoded once too (default 0: off)\n"
	        "      --shard-cache DIR    remote shards (s3://, http(s)://) downloaded whole\n"
	        "                           into DIR once, verified, and read from there;\n"
	        "                           DIR may be shared by the processes of a host\n"
	        "      --shard-cache-limit SIZE  bytes of copies in DIR (default 0: no\n"
	        "                           limit); the least recently used copies no\n"
	        "                           process reads are deleted to make room, and a\n"
	        "                           shard that does not fit is read from the network\n"
	        "      --queue-depth N      io_uring entries per worker (default 128)\n"
	        "      --read-size SIZE     bytes per read request, 4K to 1G (default 256K)\n"
	        "      --prefetch N         ready batches queued ahead (default: 4, more\n"
	        "                           for small batches, about 512 records)\n"
	        "      --no-crc             do not check the data CRCs (lengths still are)\n"
	        "      --skip-damaged       skip damaged records (counted) instead of failing\n"
	        "\n"
	        "Decoding:\n"
	        "  -d, --decode SPEC        decode tf.train.Example records into dense\n"
	        "                           columns: name:type:length[:scale],... with type\n"
	        "                           u8, f32 or i64 (e.g. image:u8:784,label:i64:1)\n"
	        "\n"
	        "Output:\n"
	        "      --dump-order FILE    write \"<shard> <record>\" for every delivered\n"
	        "                           record, in delivery order, to FILE (shard: its\n"
	        "                           position in the sorted shard list; record: its\n"
	        "                           number in the shard, from 0)\n"
	        "  -J, --json               print one JSON object instead of a table\n"
	        "  -h, --help               show this help and exit\n"
	        "\n"
	        TOOL_REMOTE_HELP
	        "\n"
	        RIO__SIZE_HELP
	        "\n"
	        "Exit status: 0 success, 1 damaged, missing or unreadable data, 2 usage\n"
	        "error, 130 interrupted (the figures so far are printed).\n",
	        tool_name);
}

/* An integer option in [min, max]. */
static uint64_t parse_range(const char *option, const char *value, uint64_t min, uint64_t max)
{
	uint64_t v = tool_parse_u64(option, value);
	if (v < min || v > max)
		tool_usage_error("%s: expected %llu..%llu, got '%s'", option, (unsigned long long)min,
		                 (unsigned long long)max, value);
	return v;
}

/* The --dump-order file: "<shard> <index>\n" per record, formatted by hand
 * (fprintf would cost more than the loader itself per 100-byte record). */
typedef struct dump {
	FILE *f;
	const char *path;
} dump;

static void dump_batch(dump *d, const rio_batch *b)
{
	char buf[8192];
	char *p = buf;
	for (size_t i = 0; i < b->count; i++) {
		if (p > buf + sizeof buf - 48) {
			fwrite(buf, 1, (size_t)(p - buf), d->f);
			p = buf;
		}
		p = rio__put_u64(p, b->records[i].shard);
		*p++ = ' ';
		p = rio__put_u64(p, b->records[i].index);
		*p++ = '\n';
	}
	fwrite(buf, 1, (size_t)(p - buf), d->f);
}

/* One byte of every record (raw) or of every row of every column (decoded),
 * summed, so that the batch's memory is really read. */
static uint64_t touch(const rio_batch *b, uint64_t *payload)
{
	uint64_t sum = 0;
	if (b->ncolumns == 0) {
		for (size_t i = 0; i < b->count; i++) {
			*payload += b->records[i].size;
			if (b->records[i].size)
				sum += b->records[i].data[b->records[i].size / 2];
		}
		return sum;
	}
	for (size_t c = 0; c < b->ncolumns; c++) {
		const rio_batch_column *col = &b->columns[c];
		size_t row = col->length * rio_dtype_size(col->type);
		const uint8_t *p = col->host;
		if (!p || !row)
			continue;
		for (size_t i = 0; i < b->count; i++)
			sum += p[i * row + row / 2];
	}
	return sum;
}

/* The loader's error as one line (its message names the shard and offset). */
static void loader_error(const rio_loader *l, int rc)
{
	const rio_error *e = l ? rio_loader_error(l) : NULL;
	tool_error("%s", e && e->message[0] ? e->message : rio_strerror(rc));
}

typedef struct result {
	uint64_t records, bytes, batches, epochs;
	double seconds, open_seconds;
	/* the first epoch apart: the later ones are what a long run sees (the
	 * first may fill a --shard-cache or the page cache) */
	double first_seconds;
	uint64_t first_file_bytes;
	rio_loader_stats st;
	long peak_rss;
} result;

static void print_json(const rio_loader *l, const rio_loader_opts *o, const result *r)
{
	double s = r->seconds > 0 ? r->seconds : 1e-9;
	printf("{\"records\": %llu, \"bytes\": %llu, \"batches\": %llu, \"epochs\": %llu, ",
	       (unsigned long long)r->records, (unsigned long long)r->bytes,
	       (unsigned long long)r->batches, (unsigned long long)r->epochs);
	rio__json_member(stdout, "seconds", r->seconds, 9);
	rio__json_member(stdout, "open_s", r->open_seconds, 9);
	rio__json_member(stdout, "first_epoch_s", r->first_seconds, 9);
	printf("\"first_epoch_file_bytes\": %llu, ", (unsigned long long)r->first_file_bytes);
	rio__json_member(stdout, "records_per_s", (double)r->records / s, 10);
	rio__json_member(stdout, "bytes_per_s", (double)r->bytes / s, 12);
	rio__json_member(stdout, "batches_per_s", (double)r->batches / s, 10);
	rio__json_member(stdout, "wait_s", r->st.wait_seconds, 9);
	rio__json_member(stdout, "wait_fraction", r->st.wait_seconds / s, 4);
	rio__json_member(stdout, "remote_get_s", r->st.remote_get_seconds, 6);
	rio__json_member(stdout, "remote_gets_in_flight", r->st.remote_gets_in_flight, 3);
	printf("\"file_bytes\": %llu, \"peak_rss_bytes\": %ld, \"skipped\": %llu, "
	       "\"index_mismatches\": %llu, \"cache_bytes\": %llu, \"io\": \"%s\", \"route\": \"%s\", "
	       "\"workers\": %d, \"shuffle\": \"%s\", "
	       "\"batch\": %zu, \"shards\": %zu, \"records_per_epoch\": %llu, \"rank\": %d, "
	       "\"world\": %d, \"columns\": %zu}\n",
	       (unsigned long long)r->st.file_bytes, r->peak_rss, (unsigned long long)r->st.skipped,
	       (unsigned long long)r->st.index_mismatches,
	       (unsigned long long)r->st.cache_bytes, rio_io_name(r->st.io_uring ? RIO_IO_URING : RIO_IO_PREAD),
	       rio_loader_route(l), o->workers, rio_shuffle_name(o->shuffle),
	       o->batch_size, rio_loader_shards(l)->count,
	       (unsigned long long)rio_loader_records(l), rio_loader_rank(l), rio_loader_world(l),
	       o->ncolumns);
}

static void print_table(const rio_loader *l, const rio_loader_opts *o, const result *r)
{
	char b1[32], b2[32], b3[32];
	double s = r->seconds > 0 ? r->seconds : 1e-9;
	printf("shards:       %zu (rank %d of %d), %llu records per epoch\n",
	       rio_loader_shards(l)->count, rio_loader_rank(l), rio_loader_world(l),
	       (unsigned long long)rio_loader_records(l));
	printf("options:      batch %zu, %d workers, shuffle %s, %s%s\n", o->batch_size,
	       o->workers, rio_shuffle_name(o->shuffle), o->ncolumns ? "decoded" : "raw",
	       o->verify_crc ? "" : ", no CRC");
	printf("read:         %llu epochs, %llu records, %s payload, %s from files, %llu "
	       "batches in %.3f s (open %.3f s)\n",
	       (unsigned long long)r->epochs, (unsigned long long)r->records,
	       rio__format_bytes(b1, sizeof b1, r->bytes),
	       rio__format_bytes(b2, sizeof b2, r->st.file_bytes), (unsigned long long)r->batches,
	       r->seconds, r->open_seconds);
	printf("records/s:    %.0f\n", (double)r->records / s);
	printf("MB/s:         %.1f\n", (double)r->bytes / s / 1e6);
	printf("batches/s:    %.1f\n", (double)r->batches / s);
	printf("wait:         %.3f s (%.1f%% of wall time)\n", r->st.wait_seconds,
	       100.0 * r->st.wait_seconds / s);
	printf("io:           %s\n", rio_io_name(r->st.io_uring ? RIO_IO_URING : RIO_IO_PREAD));
	printf("route:        %s (the last epoch's path/reading: doc/loader.md)\n", rio_loader_route(l));
	if (o->cache)
		printf("cache:        %s\n",
		       r->st.cache_bytes ? rio__format_bytes(b3, sizeof b3, r->st.cache_bytes)
		                         : "not used (the shards do not fit or are damaged, or the "
		                           "options exclude it: see --cache in the manual)");
	printf("skipped:      %llu\n", (unsigned long long)r->st.skipped);
	if (r->st.index_mismatches)
		printf("bad .idx:     %llu (rebuilt from their shards)\n",
		       (unsigned long long)r->st.index_mismatches);
	printf("peak RSS:     %s\n", rio__format_bytes(b3, sizeof b3, (uint64_t)r->peak_rss));
}

/* What the command line asks for. */
typedef struct bench_args {
	rio_loader_opts o;
	uint64_t epochs;
	int json;
	const char *decode, *dump_path;
	int have_rank, have_world;
} bench_args;

enum {
	OPT_SHUFFLE_BUFFER = 256, OPT_INTERLEAVE, OPT_SEED, OPT_IO, OPT_DIRECT, OPT_MAP,
	OPT_CACHE, OPT_QUEUE_DEPTH, OPT_READ_SIZE, OPT_PREFETCH, OPT_RANK, OPT_WORLD, OPT_SHARDING,
	OPT_SKIP_DAMAGED, OPT_NO_CRC, OPT_DROP_REMAINDER, OPT_DUMP_ORDER, OPT_SHARD_CACHE,
	OPT_SHARD_CACHE_LIMIT,
};

static const struct option longopts[] = {
	{"batch", required_argument, NULL, 'b'},
	{"workers", required_argument, NULL, 'w'},
	{"shuffle", required_argument, NULL, 's'},
	{"shuffle-buffer", required_argument, NULL, OPT_SHUFFLE_BUFFER},
	{"interleave", required_argument, NULL, OPT_INTERLEAVE},
	{"seed", required_argument, NULL, OPT_SEED},
	{"epochs", required_argument, NULL, 'e'},
	{"io", required_argument, NULL, OPT_IO},
	{"direct", no_argument, NULL, OPT_DIRECT},
	{"map", no_argument, NULL, OPT_MAP},
	{"cache", required_argument, NULL, OPT_CACHE},
	{"shard-cache", required_argument, NULL, OPT_SHARD_CACHE},
	{"shard-cache-limit", required_argument, NULL, OPT_SHARD_CACHE_LIMIT},
	{"queue-depth", required_argument, NULL, OPT_QUEUE_DEPTH},
	{"read-size", required_argument, NULL, OPT_READ_SIZE},
	{"prefetch", required_argument, NULL, OPT_PREFETCH},
	{"rank", required_argument, NULL, OPT_RANK},
	{"world", required_argument, NULL, OPT_WORLD},
	{"sharding", required_argument, NULL, OPT_SHARDING},
	{"decode", required_argument, NULL, 'd'},
	{"skip-damaged", no_argument, NULL, OPT_SKIP_DAMAGED},
	{"no-crc", no_argument, NULL, OPT_NO_CRC},
	{"drop-remainder", no_argument, NULL, OPT_DROP_REMAINDER},
	{"dump-order", required_argument, NULL, OPT_DUMP_ORDER},
	{"json", no_argument, NULL, 'J'},
	{"help", no_argument, NULL, 'h'},
	TOOL_REMOTE_LONGOPTS,
	{NULL, 0, NULL, 0},
};

/* --shuffle, --io, --sharding: the loader's names (loader.h); a usage
 * error naming the option and listing them otherwise. */
static void parse_names(bench_args *a, int opt, const char *value)
{
	rio_error err;
	int rc;
	const char *option;
	switch (opt) {
	case 's': option = "--shuffle"; rc = rio_shuffle_parse(value, &a->o.shuffle, &err); break;
	case OPT_IO: option = "--io"; rc = rio_io_parse(value, &a->o.io, &err); break;
	default: option = "--sharding"; rc = rio_sharding_parse(value, &a->o.sharding, &err); break;
	}
	if (rc < 0)
		tool_usage_error("%s: %s", option, err.message);
}

/* The options that take a number or a size, each against the loader's
 * limits (loader.h). */
static void parse_number(bench_args *a, int opt, const char *value)
{
	rio_loader_opts *o = &a->o;
	switch (opt) {
	case 'b': o->batch_size = (size_t)parse_range("--batch", value, 1, RIO_LOADER_MAX_BATCH); break;
	case 'w': o->workers = (int)parse_range("--workers", value, 1, RIO_LOADER_MAX_WORKERS); break;
	case OPT_SHUFFLE_BUFFER:
		o->shuffle_buffer = (size_t)parse_range("--shuffle-buffer", value, 1,
		                                        RIO_LOADER_MAX_SHUFFLE_BUFFER);
		break;
	case OPT_INTERLEAVE:
		o->interleave = (size_t)parse_range("--interleave", value, 1, RIO_LOADER_MAX_INTERLEAVE);
		break;
	case OPT_SEED: o->seed = tool_parse_u64("--seed", value); break;
	case 'e': a->epochs = parse_range("--epochs", value, 1, 1u << 30); break;
	case OPT_CACHE: o->cache = tool_parse_size("--cache", value); break; /* 0: off */
	case OPT_SHARD_CACHE_LIMIT:
		o->shard_cache_limit = tool_parse_size("--shard-cache-limit", value); /* 0: none */
		break;
	case OPT_QUEUE_DEPTH:
		o->queue_depth = (unsigned)parse_range("--queue-depth", value, 1, RIO_LOADER_MAX_QUEUE_DEPTH);
		break;
	case OPT_READ_SIZE: {
		uint64_t v = tool_parse_size("--read-size", value);
		if (v < RIO_LOADER_MIN_READ_SIZE || v > RIO_LOADER_MAX_READ_SIZE)
			tool_usage_error("--read-size: expected %u..%u bytes, got '%s'",
			                 RIO_LOADER_MIN_READ_SIZE, RIO_LOADER_MAX_READ_SIZE, value);
		o->read_size = (size_t)v;
		break;
	}
	case OPT_PREFETCH:
		o->prefetch = (size_t)parse_range("--prefetch", value, 1, RIO_LOADER_MAX_PREFETCH);
		break;
	case OPT_RANK:
		o->rank = (int)parse_range("--rank", value, 0, RIO_LOADER_MAX_WORLD - 1);
		a->have_rank = 1;
		break;
	case OPT_WORLD:
		o->world = (int)parse_range("--world", value, 1, RIO_LOADER_MAX_WORLD);
		a->have_world = 1;
		break;
	}
}

/* The options into `a`; exits on a usage error or --help. */
static void parse_options(int argc, char **argv, bench_args *a)
{
	int opt;
	rio_loader_opts_init(&a->o);
	a->epochs = 1;
	while ((opt = getopt_long(argc, argv, "b:w:s:e:d:Jh", longopts, NULL)) != -1) {
		if (tool_remote_option(opt, optarg, &a->o.remote))
			continue;
		switch (opt) {
		case 's': case OPT_IO: case OPT_SHARDING: parse_names(a, opt, optarg); break;
		case 'b': case 'w': case 'e': case OPT_SHUFFLE_BUFFER: case OPT_INTERLEAVE:
		case OPT_SEED: case OPT_CACHE: case OPT_QUEUE_DEPTH: case OPT_READ_SIZE:
		case OPT_SHARD_CACHE_LIMIT:
		case OPT_PREFETCH: case OPT_RANK: case OPT_WORLD:
			parse_number(a, opt, optarg);
			break;
		case OPT_SHARD_CACHE:
			if (!*optarg)
				tool_usage_error("--shard-cache: an empty DIR ('')");
			a->o.shard_cache = optarg;
			break;
		case OPT_DIRECT: a->o.direct = 1; break;
		case OPT_MAP: a->o.map = 1; break;
		case 'd': a->decode = optarg; break;
		case OPT_SKIP_DAMAGED: a->o.on_damage = RIO_DAMAGE_SKIP; break;
		case OPT_NO_CRC: a->o.verify_crc = 0; break;
		case OPT_DROP_REMAINDER: a->o.drop_remainder = 1; break;
		case OPT_DUMP_ORDER:
			if (!*optarg)
				tool_usage_error("--dump-order: an empty FILE ('')");
			a->dump_path = optarg;
			break;
		case 'J': a->json = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	if (optind >= argc)
		tool_usage_error("no SHARDS given");
	if (a->have_rank != a->have_world)
		tool_usage_error("%s given without %s", a->have_rank ? "--rank" : "--world",
		                 a->have_rank ? "--world" : "--rank");
	if (a->have_rank && a->o.rank >= a->o.world)
		tool_usage_error("--rank: %d is not below --world %d", a->o.rank, a->o.world);
	if (a->o.shard_cache_limit && !a->o.shard_cache)
		tool_usage_error("--shard-cache-limit needs --shard-cache DIR");
}

/* --decode's columns (malloc'd, *n of them; NULL without --decode); a usage
 * error for a bad spec. */
static rio_column_spec *parse_decode(const char *decode, size_t *n)
{
	rio_column_spec *cols = NULL;
	*n = 0;
	if (!decode)
		return NULL;
	rio_error err;
	memset(&err, 0, sizeof err);
	int rc = rio_column_spec_parse(decode, &cols, n, &err);
	if (rc < 0)
		tool_usage_error("--decode: %s", err.message[0] ? err.message : rio_strerror(rc));
	return cols;
}

/* The SHARDS as one spec (malloc'd): a comma-separated list whose items
 * may be files, globs or PREFIXes (rio_shardset_expand takes all three).
 * NULL after reporting a stream among them or a lack of memory. */
static char *join_shards(char *const *args, int n)
{
	size_t speclen = 1;
	for (int i = 0; i < n; i++) {
		if (!args[i][0])
			tool_usage_error("an empty SHARDS argument ('')");
		/* the loader reads pieces at offsets, every epoch: only files that
		 * stay will do (the loader refuses a FIFO among the shards too) */
		if (tool_is_stream(args[i])) {
			tool_error("%s: not a regular file (a pipe, FIFO or device): the loader reads "
			           "shards at offsets, more than once; save the stream to a file",
			           tool_input_name(args[i]));
			return NULL;
		}
		speclen += strlen(args[i]) + 1;
	}
	char *spec = malloc(speclen);
	if (!spec) {
		tool_error("out of memory");
		return NULL;
	}
	spec[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i > 0)
			strcat(spec, ",");
		strcat(spec, args[i]);
	}
	return spec;
}

/* Takes every batch of `epochs` epochs (fewer when interrupted), touching
 * and dumping each, into r. EXIT_OK, or EXIT_DATA after reporting the
 * loader's error. */
static int run_epochs(rio_loader *l, uint64_t epochs, dump *d, result *r)
{
	volatile uint64_t sink; /* the touched bytes, kept from the optimiser */
	uint64_t sum = 0;
	int rc = 0, status = EXIT_OK;
	double t0 = rio__now();
	for (uint64_t e = 0; e < epochs && !tool_interrupted; e++) {
		rio_batch *b;
		while (!tool_interrupted && (rc = rio_loader_next(l, &b)) == 1) {
			sum += touch(b, &r->bytes);
			if (d->f)
				dump_batch(d, b);
			r->records += b->count;
			r->batches++;
			rio_loader_release(l, b);
		}
		if (rc < 0) {
			loader_error(l, rc);
			status = EXIT_DATA;
			break;
		}
		if (rc == 0 && r->epochs++ == 0) {
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			r->first_seconds = rio__now() - t0;
			r->first_file_bytes = st.file_bytes;
		}
	}
	r->seconds = rio__now() - t0;
	sink = sum;
	(void)sink;
	return status;
}

/* The loader's stats and the process's peak RSS into r, and its warning
 * (an .idx that disagreed with its shard: said, never silent). */
static void collect(const rio_loader *l, const rio_loader_opts *o, result *r)
{
	rio_loader_stats_get(l, &r->st);
	char warning[700];
	if (rio_loader_warning(l, warning, sizeof warning) > 0) {
		tool_error("warning: %s", warning);
		if (r->st.index_mismatches > 1)
			tool_error("warning: %llu .idx files disagreed with their shards in all",
			           (unsigned long long)r->st.index_mismatches);
	}
	if (o->ncolumns) /* decoded batches carry no sizes: the loader counts */
		r->bytes = r->st.bytes;
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		r->peak_rss = ru.ru_maxrss * 1024L;
}

/* Closes the --dump-order file: `status`, or EXIT_DATA after reporting a
 * write error when it was EXIT_OK. */
static int dump_close(dump *d, int status)
{
	if (!d->f)
		return status;
	int bad = ferror(d->f);
	errno = 0;
	if (fclose(d->f) != 0 || bad) {
		tool_error("%s: %s", d->path, strerror(errno ? errno : EIO));
		if (status == EXIT_OK)
			status = EXIT_DATA;
	}
	return status;
}

/* Opens the loader and reads; the figures go to standard output. */
static int bench(const char *spec, bench_args *a, dump *d)
{
	result r;
	memset(&r, 0, sizeof r);
	rio_loader *l = NULL;
	double t0 = rio__now();
	int rc = rio_loader_open(&l, spec, &a->o);
	r.open_seconds = rio__now() - t0;
	if (rc < 0) {
		loader_error(l, rc);
		rio_loader_close(l);
		/* the options passed the checks above; the loader may still find
		 * a combination it does not take (-EINVAL): a usage error */
		if (rc == -EINVAL)
			tool_try_help();
		return EXIT_DATA;
	}
	int status = run_epochs(l, a->epochs, d, &r);
	collect(l, &a->o, &r);
	if (status == EXIT_OK) {
		if (tool_interrupted) {
			tool_error("interrupted; the figures are for what was read");
			status = EXIT_INTERRUPTED;
		}
		if (a->json)
			print_json(l, &a->o, &r);
		else
			print_table(l, &a->o, &r);
		if (tool_flush_stdout() < 0)
			status = EXIT_DATA;
	}
	rio_loader_close(l);
	return status;
}

int main(int argc, char **argv)
{
	bench_args a;
	memset(&a, 0, sizeof a);
	tool_init(argv[0]);
	parse_options(argc, argv, &a);
	rio_column_spec *cols = parse_decode(a.decode, &a.o.ncolumns);
	a.o.columns = cols;

	char *spec = join_shards(argv + optind, argc - optind);
	if (!spec) {
		free(cols);
		return EXIT_DATA;
	}
	dump d = {NULL, a.dump_path};
	if (a.dump_path && !(d.f = fopen(a.dump_path, "w"))) {
		tool_error("%s: %s", a.dump_path, strerror(errno));
		free(cols);
		free(spec);
		return EXIT_DATA;
	}
	tool_catch_signals();
	int status = dump_close(&d, bench(spec, &a, &d));
	free(cols);
	free(spec);
	return status;
}

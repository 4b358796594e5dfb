/*
 * verify.c — recordio-verify: check the framing and every CRC of shards,
 * and their .idx sidecars.
 *
 * Each shard is read to its end with rio_reader (compression detected, both
 * CRCs of every record checked); when SHARD.idx exists, each of its entries
 * must name the offset and framed size of the record with that number, and
 * it must have one entry per record. A damaged shard is reported at its
 * first damage (with --all-errors at every damage, reading on under the
 * RIO_DAMAGE_REPORT policy, which returns each damage with its place).
 *
 * Why threads: one core doing read() plus CRC-32C stays well below what the
 * page cache delivers, so shards are verified in parallel: a fixed pool of
 * workers takes the next shard from a shared counter, and the main thread
 * prints each shard's result in argument order as soon as it and every
 * shard before it are done. A shard is the unit of work; one big shard gets
 * one core.
 */
#include "config.h"
#include "common.h"
#include "clock.h"
#include "grow.h"
#include "size.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct job {
	const char *path;   /* the shard (NULL when the spec did not expand) */
	/* results, written by the worker, read by main after `done` */
	int done;
	int failed;
	uint64_t records, damages;
	uint64_t file_bytes, stream_bytes;
	rio_compression compression;
	int idx_checked;
	char *errors; /* one or more lines, each ending in '\n', or NULL */
	size_t errors_len;
	uint64_t lines, unlisted; /* lines in `errors`; lines past MAX_LINES */
} job;

/* At most this many lines of skipped damage per shard (--all-errors): after
 * one bad byte a compressed stream is garbage to its end, and every record
 * would get a line. */
#define MAX_LINES 100

/* A run: the options, the jobs and what the workers share (under lock). */
typedef struct verify {
	int all_errors, quiet;
	size_t buffer_size;
	rio_remote_opts remote;
	job *jobs;
	size_t njobs;
	size_t next; /* next job to take, under lock */
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
} verify;

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... FILE...\n"
	        "Check the framing and both CRCs of every record of TFRecord shards (plain,\n"
	        ".gz, .zz or .lz4), and the SHARD.idx sidecar when there is one.\n"
	        "Each FILE may be a shard, a glob, a comma-separated list, a directory or a\n"
	        "PREFIX; '-' is standard input, and a pipe or FIFO reads as a file.\n"
	        TOOL_SHARDS_SUBSET_HELP
	        "\n"
	        "  -a, --all-errors       report every damage of a shard, not only the first\n"
	        "  -q, --quiet            print nothing for good shards, only errors\n"
	        "  -j, --threads N        verify N shards at once (default: online CPUs)\n"
	        "  -b, --buffer-size SIZE read size per shard, 4K to 1G (default 256K)\n"
	        "  -h, --help             show this help and exit\n"
	        "\n"
	        TOOL_REMOTE_HELP
	        "\n"
	        RIO__SIZE_HELP
	        "\n"
	        "Exit status: 0 all shards good, 1 a shard or index damaged or unreadable,\n"
	        "2 usage error.\n",
	        tool_name);
}

static void job_error(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_error(job *j, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	j->failed = 1;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	char *p = realloc(j->errors, j->errors_len + (size_t)n + 1);
	if (!p)
		return;
	memcpy(p + j->errors_len, line, (size_t)n);
	j->errors_len += (size_t)n;
	p[j->errors_len] = '\0';
	j->errors = p;
	j->lines++;
}

/* Lists one damage (at most MAX_LINES per shard, then only counts). */
static void note_damage(job *j, const char *message)
{
	j->damages++;
	if (j->lines >= MAX_LINES)
		j->unlisted++;
	else
		job_error(j, "%s", message);
}

static void verify_one(const verify *v, job *j)
{
	rio_reader_opts ro;
	rio_reader_opts_init(&ro);
	ro.buffer_size = v->buffer_size;
	ro.remote = v->remote;
	ro.on_damage = v->all_errors ? RIO_DAMAGE_REPORT : RIO_DAMAGE_FAIL;

	rio_reader *r;
	rio_error err;
	int rc = tool_reader_open(&r, j->path, &ro, &err);
	if (rc < 0) {
		job_error(j, "%s", err.message);
		return;
	}
	j->compression = rio_reader_compression(r);

	/* The sidecar, when there is one. */
	rio_index idx = {0};
	int have_idx = 0, idx_bad = 0;
	char *ipath = tool_is_stdin(j->path) ? NULL : rio_index_path(j->path);
	struct stat st;
	/* at a URL, the sidecar's GET says whether it is there */
	if (ipath && (rio_is_url(ipath) || stat(ipath, &st) == 0)) {
		rio_error ierr;
		rc = rio_index_read(ipath, &idx, &ierr);
		if (rc < 0 && !(rc == -ENOENT && rio_is_url(ipath)))
			job_error(j, "%s", ierr.message[0] ? ierr.message : rio_strerror(rc));
		else
			have_idx = rc == 0;
		j->idx_checked = rc != -ENOENT || !rio_is_url(ipath);
	}

	rio_record rec;
	uint64_t n = 0;
	while ((rc = rio_reader_next(r, &rec)) != 0) {
		if (rc < 0) {
			/* each damage once, with its place; under --all-errors the
			 * reader has skipped it and goes on unless it stopped */
			const rio_error *e = rio_reader_error(r);
			note_damage(j, e->message[0] ? e->message : rio_strerror(rc));
			if (rio_reader_stopped(r))
				break;
			continue;
		}
		/* The sidecar is compared up to the first damage only: after it
		 * the numbering is the reader's guess. */
		if (have_idx && !idx_bad && !j->damages) {
			if (n >= idx.count) {
				job_error(j,
				          "%s: %s: %llu entries, but the shard has more records "
				          "(record %llu at offset %llu)",
				          ipath, rio_strerror(RIO_EBADINDEX),
				          (unsigned long long)idx.count, (unsigned long long)n,
				          (unsigned long long)rec.offset);
				idx_bad = 1;
			} else if (idx.offset[n] != rec.offset ||
			           idx.framed_size[n] != rec.size + RIO_FRAME_OVERHEAD) {
				job_error(j,
				          "%s: line %llu (record %llu): %s: says offset %llu size %llu, "
				          "the record is at offset %llu size %llu",
				          ipath, (unsigned long long)n + 1, (unsigned long long)n,
				          rio_strerror(RIO_EBADINDEX), (unsigned long long)idx.offset[n],
				          (unsigned long long)idx.framed_size[n],
				          (unsigned long long)rec.offset,
				          (unsigned long long)(rec.size + RIO_FRAME_OVERHEAD));
				idx_bad = 1;
			}
		}
		n++;
	}
	if (j->unlisted)
		job_error(j, "%s: %llu more damaged records skipped, not listed", j->path,
		          (unsigned long long)j->unlisted);
	if (have_idx && !idx_bad && !j->damages && rc == 0 && idx.count != n)
		job_error(j, "%s: line %llu: %s: %llu entries, but the shard has %llu records", ipath,
		          (unsigned long long)n + 1, rio_strerror(RIO_EBADINDEX),
		          (unsigned long long)idx.count, (unsigned long long)n);

	j->records = n;
	j->stream_bytes = rio_reader_bytes(r);
	/* a pipe's size is what was read from it */
	j->file_bytes = !tool_is_stdin(j->path) && stat(j->path, &st) == 0 && S_ISREG(st.st_mode)
	                    ? (uint64_t)st.st_size
	                    : rio_reader_file_bytes(r);
	rio_reader_close(r);
	rio_index_free(&idx);
	free(ipath);
}

static void *worker(void *arg)
{
	verify *v = arg;
	for (;;) {
		pthread_mutex_lock(&v->lock);
		size_t i = v->next < v->njobs ? v->next++ : v->njobs;
		pthread_mutex_unlock(&v->lock);
		if (i >= v->njobs)
			return NULL;
		job *j = &v->jobs[i];
		if (j->path)
			verify_one(v, j);
		pthread_mutex_lock(&v->lock);
		j->done = 1;
		pthread_cond_broadcast(&v->done_cv);
		pthread_mutex_unlock(&v->lock);
	}
}

static void report(const verify *v, const job *j)
{
	char fb[32], sb[32];
	if (j->errors) {
		fflush(stdout);
		/* each line as "PROGRAM: message" */
		const char *p = j->errors;
		while (*p) {
			const char *nl = strchr(p, '\n');
			tool_error("%.*s", (int)(nl - p), p);
			p = nl + 1;
		}
	}
	if (v->quiet || !j->path)
		return;
	if (j->failed) {
		printf("%s: FAILED, %llu good records, %llu damaged\n", j->path,
		       (unsigned long long)j->records, (unsigned long long)j->damages);
	} else {
		printf("%s: OK, %llu records, %s (%s", j->path, (unsigned long long)j->records,
		       rio__format_bytes(fb, sizeof fb, j->file_bytes),
		       rio_compression_name(j->compression));
		if (j->compression != RIO_COMPRESSION_NONE)
			printf(", %s uncompressed", rio__format_bytes(sb, sizeof sb, j->stream_bytes));
		printf(")%s\n", j->idx_checked ? ", index OK" : "");
	}
	fflush(stdout);
}

/* The options into v; the number of threads (0: online CPUs) is returned.
 * Exits on a usage error or --help. */
static long parse_options(int argc, char **argv, verify *v)
{
	static const struct option longopts[] = {
		{"all-errors", no_argument, NULL, 'a'},
		{"quiet", no_argument, NULL, 'q'},
		{"threads", required_argument, NULL, 'j'},
		{"buffer-size", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		TOOL_REMOTE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	long threads = 0;
	int opt;
	rio_remote_opts_init(&v->remote);
	while ((opt = getopt_long(argc, argv, "aqj:b:h", longopts, NULL)) != -1) {
		if (tool_remote_option(opt, optarg, &v->remote))
			continue;
		switch (opt) {
		case 'a': v->all_errors = 1; break;
		case 'q': v->quiet = 1; break;
		case 'j': {
			uint64_t n = tool_parse_u64("--threads", optarg);
			if (n > 1024)
				tool_usage_error("--threads: at most 1024, got '%s'", optarg);
			threads = (long)n;
			break;
		}
		case 'b': {
			uint64_t n = tool_parse_size("--buffer-size", optarg);
			if (n < 4096 || n > (1u << 30))
				tool_usage_error("--buffer-size: expected 4K..1G, got '%s'", optarg);
			v->buffer_size = (size_t)n;
			break;
		}
		case 'h': usage(stdout); exit(EXIT_OK);
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	if (optind >= argc)
		tool_usage_error("no FILE given");
	return threads;
}

/* One job per shard of specs[0, n) into v->jobs, the expanded sets (to free
 * with the jobs, which point into them) into sets[0, n); a spec that does
 * not expand is a job that has already failed, so its message comes out in
 * argument order too. 0, or -1 when out of memory (reported). */
static int make_jobs(verify *v, char *const *specs, int n, rio_shardset *sets)
{
	size_t cap = 0;
	int stdin_seen = 0;
	for (int i = 0; i < n; i++) {
		rio_error err;
		const char *spec = specs[i];
		if (!spec[0])
			tool_usage_error("an empty FILE argument ('')");
		if (tool_is_stdin(spec) && stdin_seen++)
			tool_usage_error("'-' (standard input) given twice: it can be read only once");
		int rc;
		if (tool_is_stdin(spec)) /* the one path "-" */
			rc = tool_expand_shards(spec, &sets[i], &v->remote);
		else
			rc = rio_shardset_expand_remote(spec, &sets[i], &v->remote, &err);
		size_t need = v->njobs + (rc < 0 ? 1 : sets[i].count);
		if (need > cap) {
			if (rio__resize(&v->jobs, need * 2, sizeof *v->jobs)) {
				tool_error("out of memory");
				return -1;
			}
			cap = need * 2;
		}
		if (rc < 0) {
			job *j = &v->jobs[v->njobs++];
			memset(j, 0, sizeof *j);
			job_error(j, "%s", err.message[0] ? err.message : rio_strerror(rc));
			continue;
		}
		for (size_t k = 0; k < sets[i].count; k++) {
			job *j = &v->jobs[v->njobs++];
			memset(j, 0, sizeof *j);
			j->path = sets[i].paths[k];
		}
	}
	return 0;
}

/* Starts up to `threads` workers (0: online CPUs; at most one per job):
 * their ids (malloc'd, or NULL), *started of them. With none started, the
 * jobs are done here. */
static pthread_t *start_workers(verify *v, long threads, long *started)
{
	if (threads <= 0) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	if ((size_t)threads > v->njobs)
		threads = (long)v->njobs;
	pthread_t *tids = calloc((size_t)threads + 1, sizeof *tids);
	*started = 0;
	for (long t = 0; tids && t < threads; t++) {
		if (pthread_create(&tids[t], NULL, worker, v) != 0)
			break;
		(*started)++;
	}
	if (*started == 0) /* no threads at all: do the work here */
		worker(v);
	return tids;
}

/* Reports each job in order as soon as it is done, then the total line:
 * EXIT_OK, or EXIT_DATA when a shard failed or standard output did. */
static int report_all(verify *v, double t0, pthread_t *tids, long started)
{
	int status = EXIT_OK;
	uint64_t records = 0, bytes = 0, nfailed = 0;
	for (size_t i = 0; i < v->njobs; i++) {
		job *j = &v->jobs[i];
		pthread_mutex_lock(&v->lock);
		while (!j->done)
			pthread_cond_wait(&v->done_cv, &v->lock);
		pthread_mutex_unlock(&v->lock);
		report(v, j);
		if (j->failed) {
			status = EXIT_DATA;
			nfailed++;
		}
		records += j->records;
		bytes += j->file_bytes;
	}
	for (long t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	double secs = rio__now() - t0;

	if (!v->quiet && v->njobs > 1) {
		char b[32];
		printf("total: %llu files, %llu OK, %llu failed, %llu records, %s in %.2f s (%.2f GB/s)\n",
		       (unsigned long long)v->njobs, (unsigned long long)(v->njobs - nfailed),
		       (unsigned long long)nfailed, (unsigned long long)records,
		       rio__format_bytes(b, sizeof b, bytes), secs,
		       secs > 0 ? (double)bytes / secs / 1e9 : 0.0);
	}
	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	return status;
}

int main(int argc, char **argv)
{
	verify v = {
		.buffer_size = 256u << 10, /* measured best: the read stays in L2 for the CRC */
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.done_cv = PTHREAD_COND_INITIALIZER,
	};
	tool_init(argv[0]);
	long threads = parse_options(argc, argv, &v);

	int nspecs = argc - optind;
	rio_shardset *sets = calloc((size_t)nspecs, sizeof *sets);
	if (!sets || make_jobs(&v, argv + optind, nspecs, sets) < 0) {
		if (!sets)
			tool_error("out of memory");
		return EXIT_DATA;
	}

	double t0 = rio__now();
	long started;
	pthread_t *tids = start_workers(&v, threads, &started);
	int status = report_all(&v, t0, tids, started);

	for (size_t i = 0; i < v.njobs; i++)
		free(v.jobs[i].errors);
	free(v.jobs);
	for (int i = 0; i < nspecs; i++)
		rio_shardset_free(&sets[i]);
	free(sets);
	free(tids);
	return status;
}

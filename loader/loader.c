/*
 * loader.c — opening and closing a loader: the options checked, the I/O
 * backend chosen, the dataset opened (dataset.c), the pool and the workers
 * allocated; what it was opened over (shards, rank, world, sharding); and
 * close. An epoch's iteration is epoch.c's, the saved state state.c's, the
 * statistics report.c's.
 *
 * Everything an epoch's threads use (the chunks, the pool, the io rings) is
 * allocated here, once, and reused, so an epoch allocates only its plan.
 */
#include "config.h"
#include "clock.h"
#include "loader_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RIO_API void rio_loader_opts_init(rio_loader_opts *o)
{
	memset(o, 0, sizeof *o);
	o->rank = -1;
	o->world = -1;
	o->sharding = RIO_SHARD_AUTO;
	o->batch_size = 32;
	o->shuffle = RIO_SHUFFLE_NONE;
	o->shuffle_buffer = 10000;
	o->interleave = 4;
	o->workers = 2;
	o->prefetch = 0; /* automatic (loader.h) */
	o->hold = 2;
	o->chunk_bytes = 1 << 20;
	o->io = RIO_IO_AUTO;
	o->queue_depth = 128;
	o->read_size = 256 * 1024;
	o->verify_crc = 1;
	o->on_damage = RIO_DAMAGE_FAIL;
	o->max_record_size = RIO_DEFAULT_MAX_RECORD;
	rio_remote_opts_init(&o->remote);
}

static int bad_option(rio_loader *l, const char *what)
{
	return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
	                      "invalid loader option: %s", what);
}

/* An option outside [min, max] (the limits of loader.h): its name in the
 * message. */
static int out_of_range(rio_loader *l, const char *name, uint64_t min, uint64_t max)
{
	return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
	                      "invalid loader option: %s must be %llu to %llu", name,
	                      (unsigned long long)min, (unsigned long long)max);
}

#define IN_RANGE(v, min, max) ((uint64_t)(v) >= (uint64_t)(min) && (uint64_t)(v) <= (uint64_t)(max))

/* opts.prefetch 0: 4 batches, more for small ones, so that about
 * RIO__AUTO_AHEAD records are queued ahead (up to 16 batches): a thread's
 * wakeup costs about the time of a batch of 32 records of 4 KiB, and a
 * pool of a few such batches has the workers wait for the consumer's
 * wakeups rather than read (bench/loader.sh, section i). */
#define RIO__AUTO_AHEAD 512
static size_t auto_prefetch(size_t batch_size)
{
	size_t n = (RIO__AUTO_AHEAD + batch_size - 1) / batch_size;
	return n < 4 ? 4 : n > 16 ? 16 : n;
}

static int check_options(rio_loader *l)
{
	const rio_loader_opts *o = &l->o;
	if (!IN_RANGE(o->batch_size, 1, RIO_LOADER_MAX_BATCH))
		return out_of_range(l, "batch_size", 1, RIO_LOADER_MAX_BATCH);
	if (o->workers < 1 || o->workers > RIO_LOADER_MAX_WORKERS)
		return out_of_range(l, "workers", 1, RIO_LOADER_MAX_WORKERS);
	if (o->prefetch > RIO_LOADER_MAX_PREFETCH)
		return out_of_range(l, "prefetch", 0, RIO_LOADER_MAX_PREFETCH);
	if (!IN_RANGE(o->hold, 1, RIO_LOADER_MAX_PREFETCH))
		return out_of_range(l, "hold", 1, RIO_LOADER_MAX_PREFETCH);
	if (o->chunk_bytes < RIO_LOADER_MIN_CHUNK_BYTES)
		return out_of_range(l, "chunk_bytes", RIO_LOADER_MIN_CHUNK_BYTES, SIZE_MAX);
	if ((unsigned)o->shuffle > RIO_SHUFFLE_GLOBAL)
		return bad_option(l, "shuffle must be none, buffer or global");
	/* checked whatever the shuffle, as the tools check them */
	if (!IN_RANGE(o->shuffle_buffer, 1, RIO_LOADER_MAX_SHUFFLE_BUFFER))
		return out_of_range(l, "shuffle_buffer", 1, RIO_LOADER_MAX_SHUFFLE_BUFFER);
	if (!IN_RANGE(o->interleave, 1, RIO_LOADER_MAX_INTERLEAVE))
		return out_of_range(l, "interleave", 1, RIO_LOADER_MAX_INTERLEAVE);
	if ((unsigned)o->sharding > RIO_SHARD_RECORDS)
		return bad_option(l, "sharding must be auto, files or records");
	if (o->world > RIO_LOADER_MAX_WORLD || o->rank >= RIO_LOADER_MAX_WORLD)
		return out_of_range(l, "world", 1, RIO_LOADER_MAX_WORLD);
	if ((unsigned)o->io > RIO_IO_PREAD)
		return bad_option(l, "io must be auto, uring or pread");
	if ((unsigned)o->on_damage > RIO_DAMAGE_REPORT)
		return bad_option(l, "on_damage must be fail or skip");
	if (!IN_RANGE(o->queue_depth, 1, RIO_LOADER_MAX_QUEUE_DEPTH))
		return out_of_range(l, "queue_depth", 1, RIO_LOADER_MAX_QUEUE_DEPTH);
	if (!IN_RANGE(o->read_size, RIO_LOADER_MIN_READ_SIZE, RIO_LOADER_MAX_READ_SIZE))
		return out_of_range(l, "read_size", RIO_LOADER_MIN_READ_SIZE, RIO_LOADER_MAX_READ_SIZE);
	if (o->max_record_size == 0)
		return bad_option(l, "max_record_size must be positive");
	if (o->map && o->direct)
		return bad_option(l, "map and direct exclude each other (mapped pages are the "
		                     "page cache, which O_DIRECT bypasses)");
	if ((unsigned)o->reading > RIO_READ_DIRECT)
		return bad_option(l, "reading must be auto, buffered, map or direct");
	if (o->reading != RIO_READ_AUTO && ((o->map && o->reading != RIO_READ_MAP) ||
	                                    (o->direct && o->reading != RIO_READ_DIRECT)))
		return bad_option(l, "map or direct disagrees with reading");
	if (o->ncolumns && !o->columns)
		return bad_option(l, "ncolumns is set but columns is NULL");
	rio_error e;
	if (rio_remote_opts_check(&o->remote, &e) < 0)
		return bad_option(l, e.message);
	return 0;
}

/* opts.reading AUTO (and neither map nor direct): RIO_LOADER_READING, where
 * set, names the reading instead (a user's way past the choice for every
 * program on the loader: recordio-bench, recordio-train, Python). */
static int reading_from_env(rio_loader *l)
{
	const char *env = getenv("RIO_LOADER_READING");
	if (l->o.reading != RIO_READ_AUTO || l->o.map || l->o.direct || !env || !*env)
		return 0;
	rio_error e;
	if (rio_reading_parse(env, &l->o.reading, &e) < 0)
		return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "RIO_LOADER_READING=%s", e.message);
	return 0;
}

/* io_uring or pread: the option, then RIO_LOADER_IO for AUTO, then a probe. */
static int choose_io(rio_loader *l)
{
	rio_io_backend io = l->o.io;
	if (io == RIO_IO_AUTO) {
		const char *env = getenv("RIO_LOADER_IO");
		rio_error e;
		if (env && *env && rio_io_parse(env, &io, &e) < 0)
			return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "RIO_LOADER_IO=%s", e.message);
	}
	if (io == RIO_IO_URING && !rio__io_uring_available())
		return rio__error_set(&l->err, -ENOSYS, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "io_uring is not available here (kernel, seccomp or a build "
		                      "without liburing); use the pread backend");
	l->use_uring = io == RIO_IO_URING || (io == RIO_IO_AUTO && rio__io_uring_available());
	return 0;
}

static int open_workers(rio_loader *l)
{
	l->workers = calloc((size_t)l->o.workers, sizeof *l->workers);
	if (!l->workers)
		return -ENOMEM;
	l->nworkers = l->o.workers;
	for (int i = 0; i < l->nworkers; i++) {
		int rc = rio__worker_init(&l->workers[i], l);
		if (rc < 0 && l->use_uring && l->o.io != RIO_IO_URING) {
			/* the ring could not be set up after all (e.g. memlock): pread */
			for (int j = 0; j < i; j++)
				rio__worker_free(&l->workers[j]);
			rio__worker_free(&l->workers[i]);
			l->use_uring = 0;
			i = -1;
			continue;
		}
		if (rc < 0)
			return rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "setting up the %s backend",
			                      l->use_uring ? "io_uring" : "pread");
	}
	return 0;
}

RIO_API int rio_loader_open(rio_loader **out, const char *shards, const rio_loader_opts *opts)
{
	*out = NULL;
	rio_loader *l = calloc(1, sizeof *l);
	if (!l)
		return -ENOMEM;
	*out = l;
	if (opts)
		l->o = *opts;
	else
		rio_loader_opts_init(&l->o);
	rio__error_clear(&l->err);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->work_cv, NULL);
	pthread_cond_init(&l->done_cv, NULL);
	int rc = check_options(l);
	if (rc == 0)
		rc = rio__cpus_init(l);
	if (rc == 0)
		rc = reading_from_env(l);
	if (rc == 0)
		rc = choose_io(l);
	if (rc == 0)
		rc = rio__colplan_init(&l->cols, l->o.columns, l->o.ncolumns, l->o.batch_size,
		                       &l->err);
	if (rc == 0 && (rc = rio__dataset_open(&l->ds, shards, &l->o, &l->cols, &l->err)) < 0 &&
	    l->err.code == 0)
		rio__error_set(&l->err, rc, shards, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	for (size_t s = 0; rc == 0 && s < l->ds.nshards; s++)
		if (l->ds.shards[s].index_warning[0])
			rio__loader_warn(l, l->ds.shards[s].index_warning);
	/* io_uring reads through descriptors: shards whose source has none
	 * (source.h) are read through its read_at, on the pread backend */
	for (size_t s = 0; rc == 0 && s < l->ds.nshards; s++)
		if (l->ds.shards[s].src.ops && l->ds.shards[s].src.fd < 0)
			l->use_uring = 0;
	if (rc == 0 && l->o.prefetch == 0) /* automatic: at least ~512 records ahead */
		l->o.prefetch = auto_prefetch(l->o.batch_size);
	if (rc == 0)
		rc = rio__pool_init(&l->pool, l->o.prefetch + l->o.hold, l->o.batch_size,
		                    l->o.prefetch, &l->cols, &l->o, &l->err);
	if (rc == 0)
		rc = open_workers(l);
	l->stats.io_uring = l->use_uring;
	l->file_bytes = l->ds.cache_file_bytes;
	if (rc < 0 && l->err.code == 0)
		rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, "opening the loader");
	return rc;
}

/* ---- what the loader was opened over ---------------------------------- */

RIO_API const rio_shardset *rio_loader_shards(const rio_loader *l)
{
	return &l->ds.set;
}

RIO_API int rio_loader_rank(const rio_loader *l)
{
	return l->ds.rank;
}

RIO_API int rio_loader_world(const rio_loader *l)
{
	return l->ds.world;
}

RIO_API rio_sharding rio_loader_sharding(const rio_loader *l)
{
	return l->ds.sharding;
}

RIO_API uint64_t rio_loader_shard_records(const rio_loader *l, size_t shard)
{
	return shard < l->ds.nshards && l->ds.shards[shard].needed ? l->ds.shards[shard].count
	                                                           : UINT64_MAX;
}

RIO_API const rio_error *rio_loader_error(const rio_loader *l)
{
	return &l->err;
}

RIO_API void rio_loader_close(rio_loader *l)
{
	if (!l)
		return;
	rio__epoch_stop(l);
	rio__epoch_elastic_end(l);
	for (int i = 0; i < l->nworkers; i++)
		rio__worker_free(&l->workers[i]);
	free(l->workers);
	rio__pool_free(&l->pool, &l->cols);
	rio__colplan_free(&l->cols);
	rio__cpus_free(l);
	rio__dataset_close(&l->ds);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->work_cv);
	pthread_cond_destroy(&l->done_cv);
	free(l);
}

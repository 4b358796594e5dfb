/*
 * loader.c — the public calls: open, next, release, epochs, saved state,
 * statistics, close; and the start and stop of an epoch's threads.
 *
 * An epoch's threads (workers and the batcher) start at the first
 * rio_loader_next() of the epoch and are joined when the epoch ends, when
 * the caller moves to another epoch or restores a position, and at close.
 * Everything they use (the chunks, the pool, the io rings) is allocated at
 * open and reused, so an epoch allocates only its plan.
 */
#include "config.h"
#include "clock.h"
#include "loader_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	if (o->ncolumns && !o->columns)
		return bad_option(l, "ncolumns is set but columns is NULL");
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
	pthread_cond_init(&l->slot_cv, NULL);
	pthread_cond_init(&l->ready_cv, NULL);
	int rc = check_options(l);
	if (rc == 0)
		rc = rio__cpus_init(l);
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
	if (rc == 0 && l->o.prefetch == 0) /* automatic: at least ~512 records ahead */
		l->o.prefetch = auto_prefetch(l->o.batch_size);
	if (rc == 0)
		rc = rio__pool_init(&l->pool, l->o.prefetch + l->o.hold, l->o.batch_size, &l->cols,
		                    &l->o, &l->err);
	if (rc == 0)
		rc = open_workers(l);
	l->stats.io_uring = l->use_uring;
	l->stats.file_bytes = l->ds.cache_file_bytes;
	l->direct = l->ds.direct;
	if (rc < 0 && l->err.code == 0)
		rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, "opening the loader");
	return rc;
}

/* ---- an epoch's threads ----------------------------------------------- */

/* A thread that did not start: with opts.cpus, the likely reason is a set
 * of CPUs none of which this process may use. */
static int thread_error(rio_loader *l, int rc, const char *what)
{
	if (rc == -EINVAL && l->cpuset)
		return rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "starting %s: none of opts.cpus is a CPU this process may "
		                      "use", what);
	return rio__error_set(&l->err, rc == -EINVAL ? -EAGAIN : rc, NULL, RIO__UNKNOWN,
	                      RIO__UNKNOWN, "starting %s", what);
}

static int start_epoch(rio_loader *l)
{
	int rc = rio__plan_build(&l->plan, &l->ds, &l->o, l->epoch);
	if (rc == 0 && l->direct && (rc = rio__direct_plan(&l->plan, &l->ds, &l->o, l->epoch)) < 0)
		rio__plan_free(&l->plan);
	if (rc < 0)
		return rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "planning epoch %llu", (unsigned long long)l->epoch);
	l->streams = calloc(l->ds.npieces ? l->ds.npieces : 1, sizeof *l->streams);
	if (!l->streams) {
		rio__plan_free(&l->plan);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->ds.npieces; i++)
		l->streams[i].fd = -1;
	l->stop = 0;
	/* a saved position is a multiple of the batch size, or the end of the
	 * epoch after a short last batch: round up */
	l->next_task = l->direct ? (l->resume_skip + l->o.batch_size - 1) / l->o.batch_size : 0;
	l->slot_turn = l->next_task;

	l->done = NULL;
	l->direct_done = NULL;
	l->direct_ndone = 0;
	l->wake_ndone = 0;
	l->error = 0;
	l->epoch_done = 0;
	rio__error_clear(&l->batch_err);
	l->running = 1;
	/* records an .idx listed beyond what its shard holds: skipped by the
	 * rank that reads the shard's end (or owns an empty one) */
	for (size_t s = 0; s < l->ds.nshards; s++) {
		const rio__shard *sh = &l->ds.shards[s];
		if (!sh->missing)
			continue;
		int mine = sh->count == 0 ? (l->ds.sharding == RIO_SHARD_FILES
		                                     ? s % (size_t)l->ds.world == (size_t)l->ds.rank
		                                     : l->ds.rank == 0)
		                          : 0;
		for (size_t i = 0; i < l->ds.npieces && !mine; i++)
			mine = l->ds.pieces[i].shard == s &&
			       l->ds.pieces[i].first + l->ds.pieces[i].count == sh->count;
		if (mine)
			l->stats.skipped += sh->missing;
	}
	l->epoch_skip = l->resume_skip; /* read by the threads; the next epoch skips nothing */
	l->resume_skip = 0;
	for (int i = 0; i < l->nworkers; i++) {
		rc = rio__thread_start(l, &l->workers[i].thread,
		                       l->direct ? rio__direct_main : rio__worker_main, &l->workers[i]);
		if (rc < 0)
			return thread_error(l, rc, "a worker thread");
		l->workers[i].started = 1;
	}
	if (!l->direct) {
		rc = rio__thread_start(l, &l->batcher, rio__batcher_main, l);
		if (rc < 0)
			return thread_error(l, rc, "the batcher thread");
	}
	l->batcher_started = !l->direct;
	return 0;
}

static void stop_epoch(rio_loader *l)
{
	if (!l->running)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_broadcast(&l->work_cv);
	pthread_cond_broadcast(&l->done_cv);
	pthread_cond_broadcast(&l->slot_cv);
	pthread_mutex_unlock(&l->mu);
	for (int i = 0; i < l->nworkers; i++)
		if (l->workers[i].started) {
			pthread_join(l->workers[i].thread, NULL);
			l->workers[i].started = 0;
		}
	if (l->batcher_started) {
		pthread_join(l->batcher, NULL);
		l->batcher_started = 0;
	}
	/* everything back where it starts: chunks to their workers, queued
	 * batches to the free list (batches the consumer holds stay valid) */
	for (int i = 0; i < l->nworkers; i++) {
		rio__worker *w = &l->workers[i];
		for (int c = 0; c < RIO__CHUNKS_PER_WORKER; c++)
			w->chunks[c].lent = 0;
		w->free_chunks = RIO__CHUNKS_PER_WORKER;
	}
	l->done = NULL;
	rio__pool *p = &l->pool;
	l->direct_ndone = 0;
	while (l->direct_done) {
		rio__slot *s = l->direct_done;
		l->direct_done = s->next;
		s->next = p->free_list;
		p->free_list = s;
	}
	while (p->ready_count > 0) {
		rio__slot *s = p->ready[p->ready_head];
		p->ready_head = (p->ready_head + 1) % p->nslots;
		p->ready_count--;
		rio__slot_disown(p, s);
		s->next = p->free_list;
		p->free_list = s;
	}
	for (size_t i = 0; i < l->ds.npieces; i++) {
		rio__piece_stream_close(&l->streams[i]);
		free(l->streams[i].carry);
	}
	free(l->streams);
	l->streams = NULL;
	rio__plan_free(&l->plan);
	l->running = 0;
	l->stop = 0;
}

/* The rank's records in an ordinary epoch (an elastic one has its share
 * of the rest in ds.rank_records). */
static uint64_t usual_records(const rio_loader *l)
{
	return l->stages.n ? l->usual_records : l->ds.rank_records;
}

/* Ends an elastic epoch's share: the usual pieces back (threads stopped). */
static void elastic_end(rio_loader *l)
{
	if (!l->stages.n)
		return;
	free(l->ds.pieces);
	free(l->ds.runs);
	l->ds.runs = NULL;
	l->ds.pieces = l->usual_pieces;
	l->ds.npieces = l->usual_npieces;
	l->ds.rank_records = l->usual_records;
	l->usual_pieces = NULL;
	rio__stages_free(&l->stages);
	l->direct = l->ds.direct; /* ordinary epochs: from the cache again */
}

/* Waits on ready_cv under l->mu, until `deadline` (CLOCK_REALTIME) when it
 * is not NULL: returns 1 and sets *timed_out once the deadline passed. */
static int wait_ready(rio_loader *l, const struct timespec *deadline, int *timed_out)
{
	if (!deadline) {
		pthread_cond_wait(&l->ready_cv, &l->mu);
		return 0;
	}
	if (pthread_cond_timedwait(&l->ready_cv, &l->mu, deadline) == ETIMEDOUT) {
		*timed_out = 1;
		return 1;
	}
	return 0;
}

/* Pipeline: the next queued batch, or NULL at the end or on an error
 * (waits under l->mu), or on a timeout. */
static rio__slot *take_ready(rio_loader *l, const struct timespec *deadline, int *timed_out)
{
	rio__pool *p = &l->pool;
	while (p->ready_count == 0 && !l->epoch_done)
		if (wait_ready(l, deadline, timed_out))
			return NULL;
	if (p->ready_count == 0)
		return NULL;
	rio__slot *s = p->ready[p->ready_head];
	p->ready_head = (p->ready_head + 1) % p->nslots;
	p->ready_count--;
	return s;
}

/* Direct path: the slot of the next batch number, or NULL at the end of the
 * plan or when that batch failed (then l->error says why; the epoch ends
 * for the consumer as for the pipeline). A consumer faster than the
 * workers waits for several small batches at once, not for each: one
 * wakeup (a context switch, most of the time of a small batch) for
 * several batches. */
static rio__slot *take_direct(rio_loader *l, const struct timespec *deadline, int *timed_out)
{
	uint64_t want = l->batches_out;
	for (;;) {
		if (want >= l->plan.ntasks) {
			l->epoch_done = 1;
			return NULL;
		}
		for (rio__slot **pp = &l->direct_done; *pp; pp = &(*pp)->next)
			if ((*pp)->batch.number == want) {
				rio__slot *s = *pp;
				*pp = s->next;
				l->direct_ndone--;
				return s;
			}
		if (l->error < 0 && l->error_batch == want)
			return NULL;
		/* small batches: wait for about 256 records' worth (batches
		 * want.. are all to come: as many as are left, and at most
		 * what the slots not held can take); a large batch is worth
		 * a wakeup of its own. After an error some never come (the
		 * failed one, those a worker did not fill after it): each
		 * one then */
		uint64_t k = 256 / l->o.batch_size;
		if (k > l->o.prefetch)
			k = l->o.prefetch;
		if (l->error < 0)
			k = 1;
		if (k > l->plan.ntasks - want)
			k = l->plan.ntasks - want;
		if (k > l->pool.nslots - l->held)
			k = l->pool.nslots - l->held;
		l->wake_ndone = (size_t)(k > 1 ? k : 1);
		int out = wait_ready(l, deadline, timed_out);
		l->wake_ndone = 0;
		if (out)
			return NULL;
	}
}

RIO_API int rio_loader_next(rio_loader *l, rio_batch **batch)
{
	return rio_loader_next_timeout(l, batch, -1);
}

RIO_API int rio_loader_next_timeout(rio_loader *l, rio_batch **batch, int timeout_ms)
{
	*batch = NULL;
	if (l->held >= l->o.hold)
		return rio__error_set(&l->err, -ENOBUFS, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the consumer holds %zu batches (opts.hold): release one first",
		                      l->held);
	if (l->finished) {
		elastic_end(l);
		l->epoch++;
		l->position = 0;
		l->batches_out = 0;
		l->finished = 0;
	}
	if (!l->running) {
		int rc = start_epoch(l);
		if (rc < 0) {
			stop_epoch(l);
			return rc;
		}
	}
	struct timespec deadline;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	int timed_out = 0;
	double t0 = rio__now();
	pthread_mutex_lock(&l->mu);
	rio__slot *s = l->direct ? take_direct(l, timeout_ms >= 0 ? &deadline : NULL, &timed_out)
	                         : take_ready(l, timeout_ms >= 0 ? &deadline : NULL, &timed_out);
	l->stats.wait_seconds += rio__now() - t0;
	if (timed_out) {
		pthread_mutex_unlock(&l->mu);
		return -ETIMEDOUT; /* nothing handed out: the caller calls again */
	}
	if (s) {
		s->held = 1;
		l->held++;
		l->position += s->batch.count;
		l->batches_out++;
		l->stats.records += s->batch.count;
		l->stats.batches++;
		l->stats.bytes += s->bytes;
		pthread_mutex_unlock(&l->mu);
		*batch = &s->batch;
		return 1;
	}
	int err = l->error;
	rio_error e = l->batch_err;
	pthread_mutex_unlock(&l->mu);
	if (err < 0) {
		/* the error stays: the epoch is stopped where it failed */
		l->err = e;
		return err;
	}
	stop_epoch(l);
	l->finished = 1;
	return 0;
}

RIO_API void rio_loader_release(rio_loader *l, rio_batch *batch)
{
	if (!l || !batch)
		return;
	rio__slot *s = (rio__slot *)(void *)batch; /* the batch is a slot's first member */
	int freed = 0, one = 0;
	pthread_mutex_lock(&l->mu);
	if (s->held) {
		s->held = 0;
		l->held--;
		rio__slot_disown(&l->pool, s);
		s->next = l->pool.free_list;
		l->pool.free_list = s;
		freed = 1;
		/* one slot serves one waiting worker of the direct path; under
		 * O_DIRECT a given worker waits for its turn, and the
		 * pipeline's batcher is the only waiter */
		one = l->direct && !l->o.direct;
	}
	pthread_mutex_unlock(&l->mu);
	/* after unlocking: a waiter woken under the lock would take the CPU
	 * (the kernel lets a woken thread preempt its waker), find the lock
	 * held and hand the CPU back, twice the switches per batch */
	if (freed && one)
		pthread_cond_signal(&l->slot_cv);
	else if (freed)
		pthread_cond_broadcast(&l->slot_cv);
}

/* ---- sizes, epochs and positions -------------------------------------- */

RIO_API uint64_t rio_loader_records(const rio_loader *l)
{
	return usual_records(l);
}

RIO_API uint64_t rio_loader_full_batches(const rio_loader *l)
{
	return usual_records(l) / l->o.batch_size;
}

RIO_API uint64_t rio_loader_batches(const rio_loader *l)
{
	uint64_t full = rio_loader_full_batches(l);
	return full + (!l->o.drop_remainder && usual_records(l) % l->o.batch_size ? 1 : 0);
}

RIO_API uint64_t rio_loader_remaining(const rio_loader *l)
{
	return l->finished ? usual_records(l) : l->ds.rank_records - l->position;
}

RIO_API uint64_t rio_loader_epoch(const rio_loader *l)
{
	return l->finished ? l->epoch + 1 : l->epoch;
}

RIO_API uint64_t rio_loader_position(const rio_loader *l)
{
	return l->finished ? 0 : l->position;
}

RIO_API int rio_loader_set_epoch(rio_loader *l, uint64_t epoch)
{
	stop_epoch(l);
	elastic_end(l);
	l->epoch = epoch;
	l->position = 0;
	l->batches_out = 0;
	l->finished = 0;
	l->resume_skip = 0;
	/* start reading at once: the new epoch's first batches (a shuffle
	 * buffer's worth of records) fill while the caller evaluates */
	int rc = start_epoch(l);
	if (rc < 0)
		stop_epoch(l);
	return rc;
}

/* The saved state: fixed-size little-endian fields; in an elastic epoch
 * (format 2) then the stages before the current one (their count, then
 * each one's world and its ranks' positions); then a CRC-32C of all
 * before it. An ordinary epoch's state is format 1, as it always was. */
enum { STATE_WORDS = 16, STATE_SIZE = STATE_WORDS * 8 + 4 };
static const uint64_t STATE_MAGIC = 0x314c4f4952ull;  /* "RIOL1" */
static const uint64_t STATE_MAGIC2 = 0x324c4f4952ull; /* "RIOL2" */
enum { W_MAGIC, W_SEED, W_EPOCH, W_POSITION, W_RANK, W_WORLD, W_IDENT, W_RECORDS, W_BATCH,
       W_SHARDING = 12 };
/* The order in which a restore compares the words: the sharding before
 * the data's hash and the record count, which depend on it, so that a
 * state of another sharding is said to be one */
static const int state_order[STATE_WORDS] = {0, 1, 2, 3, 4, 5, W_SHARDING, 6, 7, 8, 9, 10, 11,
                                             13, 14, 15};

static void state_words(const rio_loader *l, uint64_t w[STATE_WORDS], uint64_t epoch,
                        uint64_t position)
{
	const rio_loader_opts *o = &l->o;
	uint64_t cols = 0;
	for (size_t c = 0; c < l->cols.ncols; c++)
		cols = (cols ^ l->cols.col_bytes[c]) * 0x100000001b3ull;
	uint64_t v[STATE_WORDS] = {
		STATE_MAGIC, o->seed, epoch, position, (uint64_t)l->ds.rank,
		(uint64_t)l->ds.world, l->ds.ident, usual_records(l), o->batch_size,
		(uint64_t)o->shuffle, o->shuffle == RIO_SHUFFLE_BUFFER ? o->shuffle_buffer : 0,
		o->shuffle == RIO_SHUFFLE_BUFFER ? o->interleave : 0, (uint64_t)l->ds.sharding,
		(uint64_t)o->drop_remainder, (uint64_t)o->on_damage, cols};
	memcpy(w, v, sizeof v);
}

static const char *const state_names[STATE_WORDS] = {
	"format", "seed", "epoch", "position", "rank", "world size", "data (shard record counts)",
	"record count", "batch size", "shuffle", "shuffle buffer", "interleave", "sharding",
	"drop remainder", "damage policy", "columns"};

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

RIO_API int rio_loader_state_save(const rio_loader *l, void *buf, size_t size)
{
	/* a finished epoch's stages are over: the next epoch is ordinary */
	const rio__stages *st = l->finished ? NULL : &l->stages;
	size_t words = STATE_WORDS;
	if (st && st->n)
		words += 1 + st->n + st->npos;
	size_t need = words * 8 + 4;
	if (need > INT_MAX)
		return -EOVERFLOW;
	if (size == 0)
		return (int)need;
	if (!buf || size < need)
		return -ENOSPC;
	uint64_t w[STATE_WORDS];
	state_words(l, w, rio_loader_epoch(l), rio_loader_position(l));
	uint8_t *p = buf;
	if (words > STATE_WORDS)
		w[W_MAGIC] = STATE_MAGIC2;
	for (int i = 0; i < STATE_WORDS; i++)
		put_le64(p + 8 * i, w[i]);
	if (words > STATE_WORDS) {
		uint8_t *q = p + 8 * STATE_WORDS;
		put_le64(q, st->n);
		q += 8;
		const uint64_t *pos = st->pos;
		for (size_t k = 0; k < st->n; k++) {
			put_le64(q, st->world[k]);
			q += 8;
			for (uint64_t r = 0; r < st->world[k]; r++, q += 8)
				put_le64(q, *pos++);
		}
	}
	uint32_t crc = rio_crc32c(0, p, words * 8);
	for (int i = 0; i < 4; i++)
		p[words * 8 + i] = (uint8_t)(crc >> (8 * i));
	return (int)need;
}

static int bad_state(rio_loader *l, const char *what)
{
	return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
	                      "the saved loader state %s", what);
}

/* Reads a blob: its words, and its stages (format 2; st->n 0 otherwise). */
static int state_parse(rio_loader *l, const void *buf, size_t size, uint64_t got[STATE_WORDS],
                       rio__stages *st)
{
	const uint8_t *p = buf;
	memset(st, 0, sizeof *st);
	if (!buf || size < STATE_SIZE || (size - 4) % 8)
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "a saved loader state is %d bytes or more, this one %zu",
		                      STATE_SIZE, size);
	size_t words = (size - 4) / 8;
	uint32_t crc = (uint32_t)p[words * 8] | (uint32_t)p[words * 8 + 1] << 8 |
	               (uint32_t)p[words * 8 + 2] << 16 | (uint32_t)p[words * 8 + 3] << 24;
	if (crc != rio_crc32c(0, p, words * 8))
		return bad_state(l, "is damaged (CRC mismatch)");
	for (int i = 0; i < STATE_WORDS; i++)
		got[i] = get_le64(p + 8 * i);
	if (got[W_MAGIC] == STATE_MAGIC)
		return words == STATE_WORDS ? 0 : bad_state(l, "is longer than its format");
	if (got[W_MAGIC] != STATE_MAGIC2)
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the saved loader state has another format (%llu, here %llu)",
		                      (unsigned long long)got[W_MAGIC],
		                      (unsigned long long)STATE_MAGIC);
	/* the stages: their count, then each world and its positions */
	const uint8_t *q = p + 8 * STATE_WORDS, *end = p + 8 * words;
	uint64_t n = q < end ? get_le64(q) : 0;
	q += 8;
	if (n == 0 || n > words)
		return bad_state(l, "has a damaged list of stages");
	for (uint64_t k = 0; k < n; k++) {
		uint64_t w = q < end ? get_le64(q) : 0;
		q += 8;
		if (w < 1 || w > RIO_LOADER_MAX_WORLD || w > (uint64_t)(end - q) / 8) {
			rio__stages_free(st);
			return bad_state(l, "has a damaged list of stages");
		}
		uint64_t *pos = malloc(w * sizeof *pos);
		if (!pos) {
			rio__stages_free(st);
			return -ENOMEM;
		}
		for (uint64_t r = 0; r < w; r++, q += 8)
			pos[r] = get_le64(q);
		int rc = rio__stages_push(st, w, pos);
		free(pos);
		if (rc < 0) {
			rio__stages_free(st);
			return rc;
		}
	}
	if (q != end) {
		rio__stages_free(st);
		return bad_state(l, "is longer than its list of stages");
	}
	got[W_MAGIC] = STATE_MAGIC;
	return 0;
}

/* This rank's share of what is left of `epoch` after stages `st` (taken
 * over: freed on failure), ready to run from `position`. */
static int elastic_install(rio_loader *l, uint64_t epoch, uint64_t position, rio__stages *st)
{
	int rc = rio__dataset_count_every_shard(&l->ds, &l->o, &l->err);
	rio__piece *pieces = NULL;
	rio__run *runs = NULL;
	size_t npieces = 0;
	uint64_t records = 0;
	if (rc == 0)
		rc = rio__elastic_pieces(&l->ds, &l->o, epoch, st, l->ds.rank, l->ds.world, &pieces,
		                         &npieces, &runs, &records, &l->err);
	if (rc == 0 && position > records)
		rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                    "the saved position %llu is past this rank's %llu records of "
		                    "the resumed epoch",
		                    (unsigned long long)position, (unsigned long long)records);
	if (rc < 0) {
		if (l->err.code == 0)
			rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			               "rebuilding the rest of epoch %llu", (unsigned long long)epoch);
		free(pieces);
		free(runs);
		rio__stages_free(st);
		return rc;
	}
	stop_epoch(l);
	elastic_end(l);
	/* counting every shard may have ruled the direct path out; buffer
	 * shuffling's shares have holes (elastic.c), which the pipeline reads,
	 * and so do the resumed epoch's pieces with opts.cache, read as
	 * without the cache */
	l->direct = l->ds.direct && l->o.shuffle != RIO_SHUFFLE_BUFFER && !l->ds.cache_bytes;
	l->usual_pieces = l->ds.pieces;
	l->usual_npieces = l->ds.npieces;
	l->usual_records = l->ds.rank_records;
	l->ds.pieces = pieces;
	l->ds.runs = runs;
	l->ds.npieces = npieces;
	l->ds.rank_records = records;
	l->stages = *st;
	l->epoch = epoch;
	l->position = position;
	l->batches_out = (position + l->o.batch_size - 1) / l->o.batch_size;
	l->finished = 0;
	l->resume_skip = position;
	return 0;
}

RIO_API int rio_loader_state_restore(rio_loader *l, const void *buf, size_t size)
{
	uint64_t got[STATE_WORDS], want[STATE_WORDS];
	rio__stages st;
	int rc = state_parse(l, buf, size, got, &st);
	if (rc < 0)
		return rc;
	state_words(l, want, got[W_EPOCH], got[W_POSITION]);
	for (int k = 0; k < STATE_WORDS; k++) {
		int i = state_order[k];
		if (got[i] != want[i]) {
			rio__stages_free(&st);
			return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "the saved loader state has another %s (%llu, here %llu)%s",
			                      state_names[i], (unsigned long long)got[i],
			                      (unsigned long long)want[i],
			                      i == W_WORLD ? ": restore every rank's state with "
			                                     "rio_loader_state_restore_all"
			                                   : "");
		}
	}
	if (st.n)
		return elastic_install(l, got[W_EPOCH], got[W_POSITION], &st);
	if (got[W_POSITION] > usual_records(l))
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the saved position %llu is past the epoch's %llu records",
		                      (unsigned long long)got[W_POSITION],
		                      (unsigned long long)usual_records(l));
	stop_epoch(l);
	elastic_end(l);
	l->epoch = got[W_EPOCH];
	l->position = got[W_POSITION];
	l->batches_out = (got[W_POSITION] + l->o.batch_size - 1) / l->o.batch_size;
	l->finished = 0;
	l->resume_skip = got[W_POSITION];
	return 0;
}

static int same_stages(const rio__stages *a, const rio__stages *b)
{
	return a->n == b->n && a->npos == b->npos &&
	       (!a->n || (!memcmp(a->world, b->world, a->n * sizeof *a->world) &&
	                  !memcmp(a->pos, b->pos, a->npos * sizeof *a->pos)));
}

RIO_API int rio_loader_state_restore_all(rio_loader *l, const void *const *blobs,
                                         const size_t *sizes, size_t n)
{
	if (!blobs || !sizes || n == 0)
		return bad_state(l, "list is empty");
	uint64_t got[STATE_WORDS], want[STATE_WORDS];
	rio__stages st, other;
	int rc = state_parse(l, blobs[0], sizes[0], got, &st);
	if (rc < 0)
		return rc;
	uint64_t world = got[W_WORLD], epoch = got[W_EPOCH];
	if (world != n) {
		rio__stages_free(&st);
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "%zu saved loader states for a world of %llu ranks", n,
		                      (unsigned long long)world);
	}
	if (world == (uint64_t)l->ds.world) { /* the same world: each rank its own */
		rio__stages_free(&st);
		return rio_loader_state_restore(l, blobs[l->ds.rank], sizes[l->ds.rank]);
	}
	/* the epoch's threads read the shards that counting them all may
	 * change (their places, the mappings): they stop first */
	stop_epoch(l);
	if ((rc = rio__dataset_count_every_shard(&l->ds, &l->o, &l->err)) < 0) {
		rio__stages_free(&st);
		return rc;
	}
	uint64_t *pos = malloc(n * sizeof *pos);
	if (!pos) {
		rio__stages_free(&st);
		return -ENOMEM;
	}
	for (size_t r = 0; r < n && rc == 0; r++) {
		if (r > 0 && (rc = state_parse(l, blobs[r], sizes[r], got, &other)) < 0)
			break;
		/* what another world size may change: rank, world, the rank's
		 * share of the data, the batch size, the position */
		state_words(l, want, epoch, got[W_POSITION]);
		want[W_RANK] = r;
		want[W_WORLD] = world;
		want[W_IDENT] = rio__dataset_ident(&l->ds, (int)r, (int)world);
		want[W_RECORDS] = got[W_RECORDS];
		want[W_BATCH] = got[W_BATCH];
		for (int k = 0; k < STATE_WORDS && rc == 0; k++) {
			int i = state_order[k];
			if (got[i] != want[i])
				rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
				                    "the saved loader state of rank %zu of %llu has another "
				                    "%s (%llu, here %llu)",
				                    r, (unsigned long long)world, state_names[i],
				                    (unsigned long long)got[i], (unsigned long long)want[i]);
		}
		if (rc == 0 && r > 0 && !same_stages(&st, &other))
			rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "the saved loader states of ranks 0 and %zu disagree on how "
			                    "the epoch was resumed before",
			                    r);
		if (r > 0)
			rio__stages_free(&other);
		pos[r] = got[W_POSITION];
	}
	int untouched = rc == 0 && st.n == 0;
	for (size_t r = 0; r < n && untouched; r++)
		untouched = pos[r] == 0;
	if (rc == 0 && !untouched)
		rc = rio__stages_push(&st, world, pos);
	free(pos);
	if (rc < 0) {
		rio__stages_free(&st);
		return rc;
	}
	if (!untouched)
		return elastic_install(l, epoch, 0, &st);
	/* saved at the start of an epoch: it runs as an ordinary one here */
	stop_epoch(l);
	elastic_end(l);
	l->epoch = epoch;
	l->position = l->batches_out = 0;
	l->finished = 0;
	l->resume_skip = 0;
	return 0;
}

/* ---- the rest --------------------------------------------------------- */

RIO_API void rio_loader_stats_get(const rio_loader *l, rio_loader_stats *stats)
{
	pthread_mutex_lock((pthread_mutex_t *)&l->mu);
	*stats = l->stats;
	stats->cache_bytes = l->ds.cache_bytes;
	pthread_mutex_unlock((pthread_mutex_t *)&l->mu);
}

RIO_API size_t rio_loader_warning(const rio_loader *l, char *buf, size_t size)
{
	pthread_mutex_lock((pthread_mutex_t *)&l->mu);
	size_t n = strlen(l->warning);
	if (size > 0)
		snprintf(buf, size, "%s", l->warning);
	pthread_mutex_unlock((pthread_mutex_t *)&l->mu);
	return n;
}

void rio__loader_warn(rio_loader *l, const char *text)
{
	l->stats.index_mismatches++;
	if (!l->warning[0])
		snprintf(l->warning, sizeof l->warning, "%s", text);
}

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
	stop_epoch(l);
	elastic_end(l);
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
	pthread_cond_destroy(&l->slot_cv);
	pthread_cond_destroy(&l->ready_cv);
	free(l);
}

/*
 * epoch.c — an epoch's iteration: its threads started at the first
 * rio_loader_next() of the epoch (the path that serves it chosen then,
 * route.c) and joined when the epoch ends, when the caller moves to
 * another epoch or restores a position, and at close; the batches handed
 * out and given back (through the pool); the epoch's sizes and position.
 */
#include "config.h"
#include "clock.h"
#include "loader_internal.h"
#include "parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The epoch's path and reading (route.h): the one place they are chosen,
 * and counted in the stats. The page cache is asked only where the choice
 * depends on it (reading AUTO). */
static void choose_route(rio_loader *l)
{
	rio__case c;
	rio__dataset_case(&l->ds, rio__route_asked(&l->o) == RIO_READ_AUTO, &c);
	c.elastic = l->stages.n > 0;
	l->route = rio__route_choose(&l->o, &c);
	rio_error e;
	if (l->route.reading == RIO__READ_MAP && rio__dataset_map(&l->ds, &e) < 0) {
		c.mappable = 0; /* no mapping (address space): another way */
		l->route = rio__route_choose(&l->o, &c);
	}
	l->routed = 1;
}

static int start_epoch(rio_loader *l)
{
	choose_route(l);
	int rc = rio__plan_build(&l->plan, &l->ds, &l->o, l->epoch);
	if (rc == 0 && l->route.placed && (rc = rio__plan_batches(&l->plan, &l->ds, &l->o, l->epoch)) < 0)
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
	l->next_task = 0;
	l->done = NULL;
	/* the placed path: a task per batch; a saved position is a multiple
	 * of the batch size, or the end of the epoch after a short last
	 * batch: round up */
	if (l->route.placed) {
		uint64_t first = (l->resume_skip + l->o.batch_size - 1) / l->o.batch_size;
		rio__placed_parts(l, first);
		rio__pool_epoch(&l->pool,
		                rio__placed_ahead(l) ? RIO__ORDER_TURNS : RIO__ORDER_CLAIMS, first,
		                l->plan.ntasks);
	} else
		rio__pool_epoch(&l->pool, RIO__ORDER_FIFO, 0, 0);
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
		                       l->route.placed ? rio__placed_main : rio__worker_main,
		                       &l->workers[i]);
		if (rc < 0)
			return thread_error(l, rc, "a worker thread");
		l->workers[i].started = 1;
	}
	if (!l->route.placed) {
		rc = rio__thread_start(l, &l->batcher, rio__batcher_main, l);
		if (rc < 0)
			return thread_error(l, rc, "the batcher thread");
	}
	l->batcher_started = !l->route.placed;
	return 0;
}

void rio__epoch_stop(rio_loader *l)
{
	if (!l->running)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_broadcast(&l->work_cv);
	pthread_cond_broadcast(&l->done_cv);
	pthread_mutex_unlock(&l->mu);
	rio__pool_stop(&l->pool);
	rio__parts_stop(l->parts);
	for (int i = 0; i < l->nworkers; i++)
		if (l->workers[i].started) {
			pthread_join(l->workers[i].thread, NULL);
			l->workers[i].started = 0;
		}
	rio__parts_free(l->parts);
	l->parts = NULL;
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
	rio__pool_reset(&l->pool);
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
uint64_t rio__usual_records(const rio_loader *l)
{
	return l->stages.n ? l->usual_records : l->ds.rank_records;
}

/* Ends an elastic epoch's share: the usual pieces back (threads stopped). */
void rio__epoch_elastic_end(rio_loader *l)
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
}

RIO_API int rio_loader_next(rio_loader *l, rio_batch **batch)
{
	return rio_loader_next_timeout(l, batch, -1);
}

RIO_API int rio_loader_next_timeout(rio_loader *l, rio_batch **batch, int timeout_ms)
{
	*batch = NULL;
	size_t held = rio__pool_held(&l->pool);
	if (held >= l->o.hold)
		return rio__error_set(&l->err, -ENOBUFS, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the consumer holds %zu batches (opts.hold): release one first",
		                      held);
	if (l->finished) {
		rio__epoch_elastic_end(l);
		l->epoch++;
		l->position = 0;
		l->batches_out = 0;
		l->finished = 0;
	}
	if (!l->running) {
		int rc = start_epoch(l);
		if (rc < 0) {
			rio__epoch_stop(l);
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
	double t0 = rio__now();
	rio__slot *s = NULL;
	rio_error e;
	int rc = rio__pool_next(&l->pool, timeout_ms >= 0 ? &deadline : NULL, &s, &e);
	pthread_mutex_lock(&l->mu);
	l->stats.wait_seconds += rio__now() - t0;
	if (rc == 1) {
		l->stats.records += s->batch.count;
		l->stats.batches++;
		l->stats.bytes += s->bytes;
	}
	pthread_mutex_unlock(&l->mu);
	if (rc == -ETIMEDOUT)
		return rc; /* nothing handed out: the caller calls again */
	if (rc == 1) {
		l->position += s->batch.count;
		l->batches_out++;
		*batch = &s->batch;
		return 1;
	}
	if (rc < 0) {
		/* the error stays: the epoch is stopped where it failed */
		l->err = e;
		return rc;
	}
	rio__epoch_stop(l);
	l->finished = 1;
	return 0;
}

RIO_API void rio_loader_release(rio_loader *l, rio_batch *batch)
{
	if (!l || !batch)
		return;
	/* the batch is a slot's first member */
	rio__pool_release(&l->pool, (rio__slot *)(void *)batch);
}

/* ---- sizes, epochs and positions -------------------------------------- */

RIO_API uint64_t rio_loader_records(const rio_loader *l)
{
	return rio__usual_records(l);
}

RIO_API uint64_t rio_loader_full_batches(const rio_loader *l)
{
	return rio__usual_records(l) / l->o.batch_size;
}

RIO_API uint64_t rio_loader_batches(const rio_loader *l)
{
	uint64_t full = rio_loader_full_batches(l);
	return full + (!l->o.drop_remainder && rio__usual_records(l) % l->o.batch_size ? 1 : 0);
}

RIO_API uint64_t rio_loader_remaining(const rio_loader *l)
{
	return l->finished ? rio__usual_records(l) : l->ds.rank_records - l->position;
}

RIO_API const char *rio_loader_route(const rio_loader *l)
{
	return l->routed ? rio__route_name(l->route) : "";
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
	rio__epoch_stop(l);
	rio__epoch_elastic_end(l);
	l->epoch = epoch;
	l->position = 0;
	l->batches_out = 0;
	l->finished = 0;
	l->resume_skip = 0;
	/* start reading at once: the new epoch's first batches (a shuffle
	 * buffer's worth of records) fill while the caller evaluates */
	int rc = start_epoch(l);
	if (rc < 0)
		rio__epoch_stop(l);
	return rc;
}

/*
 * pool.c — every move of a batch slot (pool.h draws them), under the
 * pool's own lock: the free list, the pipeline's ready queue, the placed
 * path's filed batches and the order they are handed out in, the
 * consumer's batches, and the epoch's end or error.
 *
 * Wakeups are made after unlocking where a thread is likely to wait for
 * them: the kernel lets a woken thread preempt its waker, and one woken
 * under the lock finds it held and hands the CPU back, twice the switches
 * per batch. With small batches these hand-offs, not the bytes, set the
 * pace (doc/loader.md), hence the placed path's consumer waits for several
 * batches at once and a released slot wakes one claiming worker.
 */
#include "config.h"
#include "grow.h"
#include "internal.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- under the lock --------------------------------------------------- */

static void spare_locked(rio__pool *p, const rio__recbuf *bufs, size_t n)
{
	/* out of memory: the list stays as it is, and what does not fit is freed */
	(void)rio__grow(&p->spare, &p->capspare, p->nspare + n, sizeof *p->spare, 256);
	for (size_t k = 0; k < n; k++) {
		if (p->nspare < p->capspare)
			p->spare[p->nspare++] = bufs[k];
		else
			free(bufs[k].data);
	}
}

static void push_free(rio__pool *p, rio__slot *s)
{
	s->next = p->free_list;
	p->free_list = s;
}

static rio__slot *pop_free(rio__pool *p)
{
	rio__slot *s = p->free_list;
	p->free_list = s->next;
	s->next = NULL;
	s->arena_used = 0;
	return s;
}

/* A slot's record buffers (a released raw batch of buffer shuffling) to the
 * spare list, and the slot to the free list. */
static void free_slot(rio__pool *p, rio__slot *s)
{
	spare_locked(p, s->owned, s->nowned);
	s->nowned = 0;
	push_free(p, s);
}

/* The epoch's first error, by batch number where batches have one. */
static void set_error(rio__pool *p, uint64_t batch, int rc, const rio_error *err)
{
	if (p->error < 0 && (p->order == RIO__ORDER_FIFO || batch >= p->error_batch))
		return;
	p->error = rc;
	p->error_batch = batch;
	if (err && err->code)
		p->err = *err;
	else
		rio__error_set(&p->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
}

/* ---- epochs ----------------------------------------------------------- */

void rio__pool_epoch(rio__pool *p, rio__order order, uint64_t first, uint64_t nbatches)
{
	pthread_mutex_lock(&p->mu);
	p->order = order;
	p->stop = 0;
	p->ended = 0;
	p->error = 0;
	p->error_batch = 0;
	rio__error_clear(&p->err);
	p->next_batch = p->turn = p->next_out = first;
	p->nbatches = nbatches;
	p->wake_nfiled = 0;
	pthread_mutex_unlock(&p->mu);
}

void rio__pool_stop(rio__pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->slot_cv);
	pthread_cond_broadcast(&p->ready_cv);
	pthread_mutex_unlock(&p->mu);
}

void rio__pool_reset(rio__pool *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->filed) {
		rio__slot *s = p->filed;
		p->filed = s->next;
		free_slot(p, s);
	}
	p->nfiled = 0;
	while (p->ready_count > 0) {
		rio__slot *s = p->ready[p->ready_head];
		p->ready_head = (p->ready_head + 1) % p->nslots;
		p->ready_count--;
		free_slot(p, s);
	}
	p->stop = 0;
	pthread_mutex_unlock(&p->mu);
}

/* ---- FIFO: the batcher ------------------------------------------------- */

rio__slot *rio__pool_take(rio__pool *p)
{
	pthread_mutex_lock(&p->mu);
	while (!p->stop && !p->free_list)
		pthread_cond_wait(&p->slot_cv, &p->mu);
	rio__slot *s = p->stop ? NULL : pop_free(p);
	pthread_mutex_unlock(&p->mu);
	return s;
}

void rio__pool_publish(rio__pool *p, rio__slot *s)
{
	pthread_mutex_lock(&p->mu);
	p->ready[(p->ready_head + p->ready_count) % p->nslots] = s;
	p->ready_count++;
	pthread_mutex_unlock(&p->mu);
	pthread_cond_signal(&p->ready_cv);
}

void rio__pool_put(rio__pool *p, rio__slot *s)
{
	pthread_mutex_lock(&p->mu);
	free_slot(p, s);
	pthread_mutex_unlock(&p->mu);
	pthread_cond_broadcast(&p->slot_cv);
}

void rio__pool_finish(rio__pool *p, int rc, const rio_error *err)
{
	pthread_mutex_lock(&p->mu);
	if (rc < 0)
		set_error(p, 0, rc, err);
	p->ended = 1;
	pthread_mutex_unlock(&p->mu);
	pthread_cond_broadcast(&p->ready_cv);
}

/* ---- CLAIMS and TURNS: the placed path's workers ------------------------ */

size_t rio__pool_claim(rio__pool *p, size_t most, rio__slot **slots, uint64_t *first)
{
	size_t k = 0;
	pthread_mutex_lock(&p->mu);
	while (!p->stop && p->next_batch < p->nbatches && !p->free_list)
		pthread_cond_wait(&p->slot_cv, &p->mu);
	*first = p->next_batch;
	while (!p->stop && k < most && p->free_list && p->next_batch < p->nbatches) {
		slots[k++] = pop_free(p);
		p->next_batch++;
	}
	pthread_mutex_unlock(&p->mu);
	return k;
}

uint64_t rio__pool_claim_batches(rio__pool *p, uint64_t most, uint64_t *first)
{
	uint64_t k = 0;
	pthread_mutex_lock(&p->mu);
	*first = p->next_batch;
	if (!p->stop && p->next_batch < p->nbatches) {
		k = p->nbatches - p->next_batch < most ? p->nbatches - p->next_batch : most;
		p->next_batch += k;
	}
	pthread_mutex_unlock(&p->mu);
	return k;
}

rio__slot *rio__pool_take_turn(rio__pool *p, uint64_t b)
{
	pthread_mutex_lock(&p->mu);
	while (!p->stop && (p->turn != b || !p->free_list))
		pthread_cond_wait(&p->slot_cv, &p->mu);
	rio__slot *s = NULL;
	if (!p->stop) {
		s = pop_free(p);
		p->turn++;
	}
	pthread_mutex_unlock(&p->mu);
	if (s)
		pthread_cond_broadcast(&p->slot_cv); /* the next batch's turn */
	return s;
}

void rio__pool_file(rio__pool *p, rio__slot *const *slots, size_t k, uint64_t first,
                    size_t failed, int rc, const rio_error *err)
{
	pthread_mutex_lock(&p->mu);
	for (size_t j = 0; j < k; j++) {
		if (j < failed) {
			slots[j]->next = p->filed;
			p->filed = slots[j];
			p->nfiled++;
			continue;
		}
		if (j == failed)
			set_error(p, first + j, rc, err);
		free_slot(p, slots[j]); /* failed, or not filled after it */
	}
	/* the consumer, when it waits, waits for several batches at once */
	int wake = failed < k || p->error < 0 || p->nfiled >= p->wake_nfiled || !p->free_list;
	pthread_mutex_unlock(&p->mu);
	if (failed < k)
		pthread_cond_broadcast(&p->slot_cv);
	if (wake)
		pthread_cond_broadcast(&p->ready_cv);
}

/* ---- the consumer ------------------------------------------------------ */

/* Waits on ready_cv until `deadline` (NULL: no limit); 1 once it passed. */
static int wait_ready(rio__pool *p, const struct timespec *deadline)
{
	if (!deadline) {
		pthread_cond_wait(&p->ready_cv, &p->mu);
		return 0;
	}
	return pthread_cond_timedwait(&p->ready_cv, &p->mu, deadline) == ETIMEDOUT;
}

/* FIFO: the next published batch, 0 at the end (or its error). */
static int next_published(rio__pool *p, const struct timespec *deadline, rio__slot **out)
{
	while (p->ready_count == 0 && !p->ended)
		if (wait_ready(p, deadline))
			return -ETIMEDOUT;
	if (p->ready_count == 0)
		return p->error;
	*out = p->ready[p->ready_head];
	p->ready_head = (p->ready_head + 1) % p->nslots;
	p->ready_count--;
	return 1;
}

/* CLAIMS, TURNS: the batch numbered next_out, 0 at the end, or the error
 * of that batch. A consumer faster than the workers waits for several
 * small batches at once, not for each: one wakeup (a context switch, most
 * of the time of a small batch) for several batches. */
static int next_numbered(rio__pool *p, const struct timespec *deadline, rio__slot **out)
{
	for (;;) {
		if (p->next_out >= p->nbatches)
			return 0;
		for (rio__slot **pp = &p->filed; *pp; pp = &(*pp)->next)
			if ((*pp)->batch.number == p->next_out) {
				*out = *pp;
				*pp = (*pp)->next;
				p->nfiled--;
				p->next_out++;
				return 1;
			}
		if (p->error < 0 && p->error_batch == p->next_out)
			return p->error;
		/* small batches: wait for about 256 records' worth (those
		 * from next_out on are all to come: as many as are left, and
		 * at most what the slots not held can take); a large batch is
		 * worth a wakeup of its own. After an error some never come
		 * (the failed one, those a worker did not fill after it):
		 * each one then */
		uint64_t k = 256 / p->batch_size;
		if (k > p->prefetch)
			k = p->prefetch;
		if (p->error < 0)
			k = 1;
		if (k > p->nbatches - p->next_out)
			k = p->nbatches - p->next_out;
		if (k > p->nslots - p->held)
			k = p->nslots - p->held;
		p->wake_nfiled = (size_t)(k > 1 ? k : 1);
		int out_of_time = wait_ready(p, deadline);
		p->wake_nfiled = 0;
		if (out_of_time)
			return -ETIMEDOUT;
	}
}

int rio__pool_next(rio__pool *p, const struct timespec *deadline, rio__slot **out, rio_error *err)
{
	rio__slot *s = NULL;
	pthread_mutex_lock(&p->mu);
	int rc = p->order == RIO__ORDER_FIFO ? next_published(p, deadline, &s)
	                                     : next_numbered(p, deadline, &s);
	if (rc == 1) {
		s->held = 1;
		p->held++;
		*out = s;
	} else if (rc < 0 && rc != -ETIMEDOUT) {
		*err = p->err;
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

size_t rio__pool_held(rio__pool *p)
{
	pthread_mutex_lock(&p->mu);
	size_t n = p->held;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void rio__pool_release(rio__pool *p, rio__slot *s)
{
	int freed = 0;
	pthread_mutex_lock(&p->mu);
	if (s->held) {
		s->held = 0;
		p->held--;
		free_slot(p, s);
		freed = 1;
	}
	/* one slot serves one claiming worker of the placed path; under
	 * TURNS a given worker waits for its turn, and the pipeline's
	 * batcher is the only waiter */
	int one = p->order == RIO__ORDER_CLAIMS;
	pthread_mutex_unlock(&p->mu);
	if (freed && one)
		pthread_cond_signal(&p->slot_cv);
	else if (freed)
		pthread_cond_broadcast(&p->slot_cv);
}

/* ---- memory that passes between threads -------------------------------- */

void rio__pool_spare(rio__pool *p, const rio__recbuf *bufs, size_t n)
{
	pthread_mutex_lock(&p->mu);
	spare_locked(p, bufs, n);
	pthread_mutex_unlock(&p->mu);
}

void rio__pool_spares_take(rio__pool *p, rio__recbuf *out, size_t n)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < n && p->nspare > 0; i++)
		if (!out[i].data)
			out[i] = p->spare[--p->nspare];
	pthread_mutex_unlock(&p->mu);
}

/* room for `n` entries in the free-row list */
static int free_rows_room(rio__pool *p, size_t n)
{
	return rio__grow(&p->free_rows, &p->capfree_rows, p->nfree_rows + n, sizeof *p->free_rows,
	                 1024);
}

/* A new block of rows (at least n, 256 or more), under the lock. */
static int rows_block(rio__pool *p, size_t row_bytes, size_t n)
{
	size_t k = n > 256 ? n : 256;
	uint8_t **blocks = realloc(p->row_blocks, (p->nrow_blocks + 1) * sizeof *blocks);
	if (!blocks)
		return -ENOMEM;
	p->row_blocks = blocks;
	if (free_rows_room(p, k) < 0)
		return -ENOMEM;
	size_t bytes;
	uint8_t *b = __builtin_mul_overflow(k, row_bytes, &bytes) ? NULL : malloc(bytes);
	if (!b)
		return -ENOMEM;
	p->row_blocks[p->nrow_blocks++] = b;
	for (size_t i = 0; i < k; i++)
		p->free_rows[p->nfree_rows++] = b + i * row_bytes;
	return 0;
}

int rio__rows_take(rio__pool *p, size_t row_bytes, uint8_t **out, size_t n)
{
	pthread_mutex_lock(&p->mu);
	int rc = p->nfree_rows < n ? rows_block(p, row_bytes, n) : 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		out[i] = p->free_rows[--p->nfree_rows];
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void rio__rows_give(rio__pool *p, uint8_t *const *rows, size_t n)
{
	pthread_mutex_lock(&p->mu);
	/* without room, those rows stay unused until the pool is freed */
	if (free_rows_room(p, n) == 0)
		for (size_t i = 0; i < n; i++)
			p->free_rows[p->nfree_rows++] = rows[i];
	pthread_mutex_unlock(&p->mu);
}

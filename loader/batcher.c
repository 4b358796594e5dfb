/*
 * batcher.c — the batcher thread: takes the workers' chunks in task order,
 * passes the records through the shuffle buffer (BUFFER mode), and copies
 * them into batches from the pool, which it queues for the consumer.
 *
 * Ordering is decided here and only here: chunks are consumed strictly by
 * task number, and the shuffle buffer draws from an RNG seeded with (seed,
 * epoch, rank), so the output never depends on which worker was faster.
 * Every record leaves its chunk before the chunk goes back to its worker,
 * so no batch or buffer entry ever pins a worker's memory: copied into a
 * batch, or (buffer shuffling) taken over with the storage its worker put
 * it in (a pool row, decoded; a buffer of its own, raw), so the batcher
 * copies nothing into the shuffle buffer.
 */
#include "config.h"
#include "grow.h"
#include "loader_internal.h"
#include "rng.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
	uint8_t *data; /* the payload (raw) or the decoded row */
	size_t size, cap;
	uint32_t shard;
	uint64_t index;
} entry;

typedef struct batcher {
	rio_loader *l;
	rio__slot *slot;  /* the batch being filled, or NULL */
	size_t fill;
	uint64_t number;  /* the next batch's number in the epoch */
	uint64_t discard; /* records still to drop (resume) */
	uint64_t bytes;   /* payload bytes in the batch */
	entry *buf;       /* the shuffle buffer */
	size_t nbuf, capbuf;
	rio__recbuf spare[64]; /* record buffers done with, for the pool */
	size_t nspare;
	uint8_t *freed[64];    /* decoded rows emitted, for the pool */
	size_t nfreed;
	rio__rng rng;
	rio_error err;    /* where the epoch failed */
} batcher;

/* Queues the filled batch. Returns 0, or -ECANCELED when stopping. */
static int publish(batcher *b)
{
	rio_loader *l = b->l;
	rio__slot *s = b->slot;
	s->batch.count = b->fill;
	s->batch.epoch = l->epoch;
	s->batch.number = b->number++;
	s->bytes = b->bytes;
	if (!l->cols.ncols && !s->nowned) /* arena offsets become pointers */
		for (size_t i = 0; i < b->fill; i++)
			s->recs[i].data = s->arena + (uintptr_t)s->recs[i].data;
	int rc = rio__pool_to_device(&l->pool, s, b->fill, &l->cols);
	if (rc < 0)
		rio__pool_put(&l->pool, s);
	else
		rio__pool_publish(&l->pool, s);
	b->slot = NULL;
	b->fill = 0;
	b->bytes = 0;
	if (rc < 0)
		rio__error_set(&b->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		               "copying a batch to the device failed");
	return rc;
}

static int take_slot(batcher *b);

/* Appends a shuffle-buffer entry's buffer itself to the raw batch being
 * filled; the batch owns it until released. */
static int emit_owned(batcher *b, entry *e)
{
	if (!b->slot && take_slot(b) < 0)
		return -ECANCELED;
	rio__slot *s = b->slot;
	rio_batch_record *r = &s->recs[b->fill];
	r->shard = e->shard;
	r->index = e->index;
	r->data = e->data;
	r->size = e->size;
	s->owned[s->nowned++] = (rio__recbuf){e->data, e->cap};
	b->bytes += e->size;
	if (++b->fill == b->l->pool.batch_size)
		return publish(b);
	return 0;
}

/* Waits for a free pool slot for the next batch; -ECANCELED when stopping. */
static int take_slot(batcher *b)
{
	b->slot = rio__pool_take(&b->l->pool);
	return b->slot ? 0 : -ECANCELED;
}

/* Appends one record (payload or row `data`) to the batch being filled. */
static int emit(batcher *b, const uint8_t *data, size_t size, uint32_t shard, uint64_t index)
{
	rio_loader *l = b->l;
	if (b->discard > 0) {
		b->discard--;
		return 0;
	}
	if (!b->slot && take_slot(b) < 0)
		return -ECANCELED;
	rio__slot *s = b->slot;
	rio_batch_record *r = &s->recs[b->fill];
	r->shard = shard;
	r->index = index;
	if (l->cols.ncols) {
		r->data = NULL;
		r->size = 0;
		rio__row_to_columns(&l->cols, data, s->cols, b->fill);
	} else {
		int rc = rio__slot_reserve(s, size);
		if (rc < 0) {
			rio__error_set(&b->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			               "growing a batch's payload memory");
			return rc;
		}
		if (size) /* an empty record may meet an arena not allocated yet */
			memcpy(s->arena + s->arena_used, data, size);
		r->data = (const uint8_t *)(uintptr_t)s->arena_used; /* made a pointer at publish */
		r->size = size;
		s->arena_used += size;
	}
	b->bytes += size;
	if (++b->fill == l->pool.batch_size)
		return publish(b);
	return 0;
}

/* Storage an entry no longer needs goes back to the pool, a few at a time
 * (keeping off the lock): decoded rows to its rows, raw record buffers to
 * its spares. */
static void flush_storage(batcher *b)
{
	if (b->nfreed)
		rio__rows_give(&b->l->pool, b->freed, b->nfreed);
	if (b->nspare)
		rio__pool_spare(&b->l->pool, b->spare, b->nspare);
	b->nfreed = 0;
	b->nspare = 0;
}

static void release_storage(batcher *b, entry *e)
{
	if (!e->data)
		return;
	if (b->nfreed == sizeof b->freed / sizeof b->freed[0] ||
	    b->nspare == sizeof b->spare / sizeof b->spare[0])
		flush_storage(b);
	if (b->l->cols.ncols)
		b->freed[b->nfreed++] = e->data;
	else
		b->spare[b->nspare++] = (rio__recbuf){e->data, e->cap};
	e->data = NULL;
}

/* Emits a shuffle-buffer entry. Raw batches take the entry's buffer itself,
 * so a payload is copied only once, by its worker (chunk.c); decoded rows
 * are copied into the columns and the row goes back to the pool. */
static int emit_entry(batcher *b, entry *e)
{
	if (b->l->cols.ncols || b->discard > 0) {
		int rc = emit(b, e->data, e->size, e->shard, e->index);
		release_storage(b, e);
		return rc;
	}
	if (!b->slot && take_slot(b) < 0)
		return -ECANCELED; /* the entry keeps its buffer */
	int rc = emit_owned(b, e);
	e->data = NULL; /* the batch's now (published or not) */
	return rc;
}

/* One record through the shuffle buffer, which takes over its storage (a
 * worker's record buffer or decoded row: no copy): while the buffer fills,
 * records go in; once full, a random entry goes out and the new record
 * takes its place. */
static int shuffle_add(batcher *b, uint8_t *data, size_t size, size_t cap, uint32_t shard,
                       uint64_t index)
{
	size_t want = b->l->o.shuffle_buffer;
	entry *e;
	if (b->nbuf < want) {
		if (b->nbuf == b->capbuf) {
			size_t n = rio__grow_cap(b->capbuf, b->nbuf + 1, 1024);
			if (n > want)
				n = want;
			if (rio__resize(&b->buf, n, sizeof *b->buf))
				return -ENOMEM;
			b->capbuf = n;
		}
		e = &b->buf[b->nbuf++];
	} else {
		e = &b->buf[rio__rng_below(&b->rng, b->nbuf)];
		int rc = emit_entry(b, e);
		if (rc < 0)
			return rc;
	}
	*e = (entry){data, size, cap, shard, index};
	return 0;
}

/* At the end of the epoch: the buffer's records in random order. */
static int shuffle_drain(batcher *b)
{
	while (b->nbuf > 0) {
		size_t j = (size_t)rio__rng_below(&b->rng, b->nbuf);
		int rc = emit_entry(b, &b->buf[j]);
		if (rc < 0)
			return rc;
		b->buf[j] = b->buf[--b->nbuf];
	}
	return 0;
}

/* Waits for chunk `task` from the workers; NULL when stopping. */
static rio__chunk *take_chunk(rio_loader *l, uint64_t task)
{
	pthread_mutex_lock(&l->mu);
	rio__chunk *c = NULL;
	while (!l->stop) {
		rio__chunk **pp = &l->done;
		while (*pp && (*pp)->task != task)
			pp = &(*pp)->next;
		if (*pp) {
			c = *pp;
			*pp = c->next;
			break;
		}
		pthread_cond_wait(&l->done_cv, &l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return c;
}

/* Returns a chunk to its worker, and counts what its task skipped: under
 * SKIP every record the plan gave the task is either delivered or skipped
 * (the records of a chunk that is dropped, `live` == 0, all skipped), plus
 * the records it found past those an .idx lists. Counting what was not
 * delivered, rather than each damage met, gives the same counts in every
 * shuffle mode whatever the damage spans. */
static void give_back(rio_loader *l, rio__chunk *c, int live)
{
	uint64_t planned = l->plan.tasks[c->task].count;
	pthread_mutex_lock(&l->mu);
	c->lent = 0;
	c->owner->free_chunks++;
	if (l->o.on_damage != RIO_DAMAGE_FAIL)
		l->stats.skipped += (live && c->nrec <= planned ? planned - c->nrec : planned) + c->extra;
	rio__shard *sh = &l->ds.shards[l->plan.tasks[c->task].shard];
	if (c->index_mismatch && !sh->index_warned) { /* one .idx, counted once */
		char text[600];
		sh->index_warned = 1;
		snprintf(text, sizeof text,
		         "%s.idx: disagrees with its shard (the stream holds records past its "
		         "entries, or fewer than it lists): those were counted as skipped; "
		         "rebuild it with 'recordio-index --force'",
		         sh->path);
		rio__loader_warn(l, text);
	}
	rio__count_file_bytes(l, c->file_bytes);
	pthread_cond_broadcast(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
}

static int consume(batcher *b, rio__chunk *c)
{
	rio_loader *l = b->l;
	/* a decoded row: its bytes in the batch, and its stride in c->rows */
	size_t rb = l->cols.row_bytes, stride = l->cols.row_stride;
	for (size_t i = 0; i < c->nrec; i++) {
		const rio__chunk_rec *r = &c->recs[i];
		int rc;
		/* the shuffle buffer takes the row itself, or the record's own
		 * buffer (which stay the chunk's when it fails) */
		if (c->row_ptrs) {
			if ((rc = shuffle_add(b, c->rowp[i], rb, rb, r->shard, r->index)) == 0)
				c->rowp[i] = NULL;
		} else if (c->own_recs) {
			rc = shuffle_add(b, c->own[i].data, r->size, c->own[i].cap, r->shard, r->index);
			if (rc == 0)
				c->own[i] = (rio__recbuf){NULL, 0};
		} else {
			rc = emit(b, rb ? c->rows + i * stride : c->buf + r->off, rb ? rb : r->size,
			          r->shard, r->index);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

void *rio__batcher_main(void *arg)
{
	rio_loader *l = arg;
	batcher b = {0};
	b.l = l;
	b.discard = l->epoch_skip;
	b.number = (l->epoch_skip + l->pool.batch_size - 1) / l->pool.batch_size;
	rio__rng_seed(&b.rng, l->o.seed, l->epoch, (uint64_t)l->ds.rank, RIO__RNG_SHUFFLE_BUFFER);
	int rc = l->pool.device_copy ? rio__cuda_set_device(l->o.device) : 0;
	/* compressed pieces that ended at a bad data CRC found after their
	 * later tasks had gone on: those tasks' chunks are dropped */
	uint8_t *dead = calloc(l->ds.npieces ? l->ds.npieces : 1, 1);
	if (!dead)
		rc = -ENOMEM;
	for (uint64_t t = 0; t < l->plan.ntasks && rc == 0; t++) {
		rio__chunk *c = take_chunk(l, t);
		if (!c) {
			rc = -ECANCELED;
			break;
		}
		uint32_t piece = l->plan.global ? 0 : l->plan.tasks[t].piece;
		int live = l->plan.global || !dead[piece];
		if (live)
			rc = consume(&b, c);
		if (rc == 0 && live && c->error < 0) {
			rc = c->error;
			b.err = c->err;
		}
		if (live && c->dead)
			dead[piece] = 1;
		give_back(l, c, live);
	}
	free(dead);
	if (rc == 0 && l->o.shuffle == RIO_SHUFFLE_BUFFER)
		rc = shuffle_drain(&b);
	if (rc == 0 && b.fill > 0 && !l->o.drop_remainder)
		rc = publish(&b);
	if (b.slot) /* a short batch that is dropped, or an error */
		rio__pool_put(&l->pool, b.slot);
	/* what the shuffle buffer still holds (after an error or a stop)
	 * goes back to the pool */
	for (size_t i = 0; i < b.nbuf; i++)
		release_storage(&b, &b.buf[i]);
	flush_storage(&b);
	free(b.buf);

	/* a stop (-ECANCELED) is no error: the consumer stopped the epoch */
	rio__pool_finish(&l->pool, rc == -ECANCELED ? 0 : rc, &b.err);
	return NULL;
}

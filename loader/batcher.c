/*
 * batcher.c — the batcher thread: takes the workers' chunks in task order,
 * passes the records through the shuffle buffer (BUFFER mode), and copies
 * them into batches from the pool, which it queues for the consumer.
 *
 * Ordering is decided here and only here: chunks are consumed strictly by
 * task number, and the shuffle buffer draws from an RNG seeded with (seed,
 * epoch, rank), so the output never depends on which worker was faster.
 * Every record is copied out of its chunk (into the shuffle buffer or a
 * batch) before the chunk goes back to its worker, so no batch or buffer
 * entry ever pins a worker's memory.
 */
#include "config.h"
#include "loader_internal.h"
#include "rng.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RNG_SHUFFLE_BUFFER = 3 };

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
	rio__recbuf stash[64]; /* spare record buffers taken from the pool */
	size_t nstash;
	uint8_t *freed[64];    /* decoded rows emitted, for the pool */
	size_t nfreed;
	rio__rng rng;
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
	pthread_mutex_lock(&l->mu);
	if (rc < 0) {
		rio__slot_disown(&l->pool, s);
		s->next = l->pool.free_list;
		l->pool.free_list = s;
	} else {
		rio__pool *p = &l->pool;
		p->ready[(p->ready_head + p->ready_count) % p->nslots] = s;
		p->ready_count++;
		pthread_cond_signal(&l->ready_cv);
	}
	pthread_mutex_unlock(&l->mu);
	b->slot = NULL;
	b->fill = 0;
	b->bytes = 0;
	if (rc < 0)
		rio__error_set(&l->batch_err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
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
	rio_loader *l = b->l;
	pthread_mutex_lock(&l->mu);
	while (!l->stop && !l->pool.free_list)
		pthread_cond_wait(&l->slot_cv, &l->mu);
	rio__slot *s = l->stop ? NULL : l->pool.free_list;
	if (s)
		l->pool.free_list = s->next;
	pthread_mutex_unlock(&l->mu);
	if (!s)
		return -ECANCELED;
	b->slot = s;
	s->arena_used = 0;
	s->nowned = 0;
	return 0;
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
		const rio__colplan *cp = &l->cols;
		r->data = NULL;
		r->size = 0;
		for (size_t c = 0; c < cp->ncols; c++)
			memcpy((uint8_t *)s->cols[c].host + b->fill * cp->col_bytes[c],
			       data + cp->col_offset[c], cp->col_bytes[c]);
	} else {
		int rc = rio__slot_reserve(s, size);
		if (rc < 0) {
			rio__error_set(&l->batch_err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
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

/* A spare record buffer: from released batches or an earlier epoch's
 * shuffle buffer (taken a few at a time, to keep off the lock), or {NULL,
 * 0}: entry_set then allocates one. */
static rio__recbuf take_spare(batcher *b)
{
	rio_loader *l = b->l;
	if (b->nstash == 0) {
		pthread_mutex_lock(&l->mu);
		while (l->pool.nspare > 0 && b->nstash < sizeof b->stash / sizeof b->stash[0])
			b->stash[b->nstash++] = l->pool.spare[--l->pool.nspare];
		pthread_mutex_unlock(&l->mu);
	}
	rio__recbuf spare = {NULL, 0};
	if (b->nstash > 0)
		spare = b->stash[--b->nstash];
	return spare;
}

/* Emits a shuffle-buffer entry. Raw batches take the entry's buffer itself
 * (the entry gets a spare one back), so the payload is copied only once,
 * into the shuffle buffer; decoded rows are copied into the columns. */
static int emit_entry(batcher *b, entry *e)
{
	rio_loader *l = b->l;
	if (l->cols.ncols || b->discard > 0)
		return emit(b, e->data, e->size, e->shard, e->index);
	int rc = emit_owned(b, e);
	if (rc < 0)
		return rc;
	rio__recbuf spare = take_spare(b);
	e->data = spare.data;
	e->cap = spare.cap;
	e->size = 0;
	return 0;
}

/* Gives emitted decoded rows back to the pool, a few at a time. */
static void flush_rows(batcher *b)
{
	if (!b->nfreed)
		return;
	pthread_mutex_lock(&b->l->mu);
	rio__rows_give(&b->l->pool, b->freed, b->nfreed);
	pthread_mutex_unlock(&b->l->mu);
	b->nfreed = 0;
}

static void free_row(batcher *b, uint8_t *row)
{
	if (b->nfreed == sizeof b->freed / sizeof b->freed[0])
		flush_rows(b);
	b->freed[b->nfreed++] = row;
}

/* Room for one more entry in the shuffle buffer (it grows to `want`). */
static int buffer_room(batcher *b, size_t want)
{
	if (b->nbuf < b->capbuf)
		return 0;
	size_t n = b->capbuf ? b->capbuf * 2 : 1024;
	if (n > want)
		n = want;
	entry *e = realloc(b->buf, n * sizeof *e);
	if (!e)
		return -ENOMEM;
	memset(e + b->capbuf, 0, (n - b->capbuf) * sizeof *e);
	b->buf = e;
	b->capbuf = n;
	return 0;
}

/* A decoded row through the shuffle buffer: the buffer takes the row the
 * worker decoded into (no copy); the entry it replaces is copied into the
 * batch and its row goes back to the pool. Draws as shuffle_add(). */
static int shuffle_add_row(batcher *b, uint8_t *row, uint32_t shard, uint64_t index)
{
	size_t want = b->l->o.shuffle_buffer;
	entry *e;
	if (b->nbuf < want) {
		if (buffer_room(b, want) < 0)
			return -ENOMEM;
		e = &b->buf[b->nbuf++];
	} else {
		e = &b->buf[rio__rng_below(&b->rng, b->nbuf)];
		int rc = emit(b, e->data, e->size, e->shard, e->index);
		if (rc < 0)
			return rc;
		free_row(b, e->data);
	}
	*e = (entry){row, b->l->cols.row_bytes, b->l->cols.row_bytes, shard, index};
	return 0;
}

static int entry_set(entry *e, const uint8_t *data, size_t size, uint32_t shard, uint64_t index)
{
	if (size > e->cap || !e->data) { /* never NULL: views of empty records too */
		size_t cap = size ? size : 1;
		uint8_t *d = realloc(e->data, cap);
		if (!d)
			return -ENOMEM;
		e->data = d;
		e->cap = cap;
	}
	if (size)
		memcpy(e->data, data, size);
	e->size = size;
	e->shard = shard;
	e->index = index;
	return 0;
}

/* One record through the shuffle buffer: while it fills, records go in;
 * once full, a random entry goes out and the new record takes its place. */
static int shuffle_add(batcher *b, const uint8_t *data, size_t size, uint32_t shard,
                       uint64_t index)
{
	size_t want = b->l->o.shuffle_buffer;
	if (b->nbuf < want) {
		if (buffer_room(b, want) < 0)
			return -ENOMEM;
		entry *e = &b->buf[b->nbuf];
		if (!e->data) {
			rio__recbuf spare = take_spare(b);
			e->data = spare.data;
			e->cap = spare.cap;
		}
		b->nbuf++;
		return entry_set(e, data, size, shard, index);
	}
	entry *e = &b->buf[rio__rng_below(&b->rng, b->nbuf)];
	int rc = emit_entry(b, e);
	return rc < 0 ? rc : entry_set(e, data, size, shard, index);
}

/* At the end of the epoch: the buffer's records in random order. */
static int shuffle_drain(batcher *b)
{
	while (b->nbuf > 0) {
		size_t j = (size_t)rio__rng_below(&b->rng, b->nbuf);
		entry *e = &b->buf[j];
		int rc = emit_entry(b, e);
		if (rc < 0)
			return rc;
		if (b->l->chunk_rows) { /* the row goes back to the pool */
			free_row(b, e->data);
			e->data = NULL;
		}
		entry tmp = *e; /* keep the storage: swap with the last */
		*e = b->buf[b->nbuf - 1];
		b->buf[--b->nbuf] = tmp;
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
	l->stats.file_bytes += c->file_bytes;
	pthread_cond_broadcast(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
}

static int consume(batcher *b, rio__chunk *c)
{
	rio_loader *l = b->l;
	int buffered = l->o.shuffle == RIO_SHUFFLE_BUFFER;
	size_t rb = l->cols.row_bytes;
	for (size_t i = 0; i < c->nrec; i++) {
		const rio__chunk_rec *r = &c->recs[i];
		if (c->row_ptrs) { /* the shuffle buffer takes the row itself */
			int rc = shuffle_add_row(b, c->rowp[i], r->shard, r->index);
			if (rc < 0)
				return rc;
			c->rowp[i] = NULL;
			continue;
		}
		const uint8_t *data = rb ? c->rows + i * rb : c->buf + r->off;
		size_t size = rb ? rb : r->size;
		int rc = buffered ? shuffle_add(b, data, size, r->shard, r->index)
		                  : emit(b, data, size, r->shard, r->index);
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
	rio__rng_seed(&b.rng, l->o.seed, l->epoch, (uint64_t)l->ds.rank, RNG_SHUFFLE_BUFFER);
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
			l->batch_err = c->err;
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
	if (b.slot) { /* a short batch that is dropped, or an error */
		pthread_mutex_lock(&l->mu);
		rio__slot_disown(&l->pool, b.slot);
		b.slot->next = l->pool.free_list;
		l->pool.free_list = b.slot;
		pthread_mutex_unlock(&l->mu);
	}
	/* the shuffle buffer's storage stays for the next epoch: raw
	 * records' buffers go to the pool's spares, decoded rows are the
	 * pool's */
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < b.capbuf; i++) {
		entry *e = &b.buf[i];
		if (!e->data)
			continue;
		if (l->chunk_rows)
			rio__rows_give(&l->pool, &e->data, 1);
		else if (l->cols.ncols)
			free(e->data);
		else
			rio__pool_spare(&l->pool, &(rio__recbuf){e->data, e->cap}, 1);
	}
	rio__pool_spare(&l->pool, b.stash, b.nstash);
	rio__rows_give(&l->pool, b.freed, b.nfreed);
	pthread_mutex_unlock(&l->mu);
	free(b.buf);

	pthread_mutex_lock(&l->mu);
	if (rc < 0 && rc != -ECANCELED) {
		l->error = rc;
		if (l->batch_err.code == 0)
			rio__error_set(&l->batch_err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	l->epoch_done = 1;
	pthread_cond_broadcast(&l->ready_cv);
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

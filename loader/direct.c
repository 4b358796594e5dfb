/*
 * direct.c — the direct path: workers read each batch straight into its
 * pool slot, with no copy and no batcher thread.
 *
 * When every record's place is known in advance — uncompressed shards, with
 * no shuffle or a global one, and damage failing the epoch (so no record
 * drops out and shifts the rest) — batch b holds exactly the records at
 * positions [b * batch_size, (b + 1) * batch_size) of the epoch's sequence.
 * A worker then takes a free slot and the next batch number together (so
 * slots go to batches in order and the earliest unfinished batch always
 * has one), reads that batch's records into the slot (raw: into its arena,
 * where the views point; decoded: into a scratch buffer, decoded straight
 * into the slot's columns), checks the CRCs and files the slot as done. The
 * consumer takes done slots strictly by batch number, so the order is the
 * plan's whatever the number of workers. Everything else (compressed
 * shards, buffer shuffling, skipping damage) takes the pipeline of
 * worker.c and batcher.c.
 */
#include "config.h"
#include "loader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rio__direct_eligible(const rio_loader_opts *o)
{
	return (o->shuffle == RIO_SHUFFLE_NONE || o->shuffle == RIO_SHUFFLE_GLOBAL) &&
	       o->on_damage == RIO_DAMAGE_FAIL;
}

typedef struct place {
	uint32_t shard;
	uint64_t rec;
	uint64_t offset;
	uint32_t framed;
	size_t at;  /* where its frame lands in the read buffer */
	size_t req; /* the read that brings it */
} place;

static int grow_places(rio__worker *w, size_t n)
{
	if (n <= w->nplaces)
		return 0;
	void *p = realloc(w->places, n * (sizeof(place) + sizeof(rio__io_req)));
	if (!p)
		return -ENOMEM;
	w->places = p;
	w->nplaces = n;
	return 0;
}

static int by_file_offset(const void *a, const void *b)
{
	const rio__io_req *x = *(rio__io_req *const *)a, *y = *(rio__io_req *const *)b;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Runs a window of reads; under O_DIRECT in file order (the scattered reads
 * of a shuffled batch then walk a disk forwards). Reads from the page cache
 * gain nothing from the order, and the sort costs more than it saves. */
static int read_window(rio__worker *w, rio__io_req *reqs, size_t n, int direct)
{
	if (n < 3 || !direct)
		return rio__io_run(w->io, reqs, n);
	rio__io_req **order = malloc(n * sizeof *order);
	rio__io_req *sorted = malloc(n * sizeof *sorted);
	if (!order || !sorted) {
		free(order);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		order[k] = &reqs[k];
	qsort(order, n, sizeof *order, by_file_offset);
	for (size_t k = 0; k < n; k++)
		sorted[k] = *order[k];
	int rc = rio__io_run(w->io, sorted, n);
	for (size_t k = 0; k < n; k++)
		order[k]->result = sorted[k].result;
	free(order);
	free(sorted);
	return rc;
}

/* Reads batch `b`'s records into `s`. Returns 0 or an error in w->err. */
static int fill(rio__worker *w, rio__slot *s, uint64_t b)
{
	rio_loader *l = w->l;
	const rio__task *t = &l->plan.tasks[b];
	size_t n = (size_t)t->count;
	int rc = grow_places(w, n);
	if (rc < 0)
		return rc;
	place *pl = w->places;
	rio__io_req *reqs = (rio__io_req *)(void *)(pl + w->nplaces);
	int into_arena = !l->cols.ncols, odirect = 0;

	/* where each record is, and one read per run of adjacent records */
	size_t nreq = 0, total = 0;
	for (size_t i = 0; i < n; i++) { /* locate each record once */
		uint64_t ord = l->plan.perm ? l->plan.perm[t->first + i] : t->first + i;
		uint32_t piece;
		rio__dataset_locate(&l->ds, ord, &piece, &pl[i].shard, &pl[i].rec);
		if (l->plan.perm) {
			/* a shuffled batch's index entries are cache misses: ask
			 * for them all before the first is needed */
			__builtin_prefetch(&l->ds.shards[pl[i].shard].offset[pl[i].rec]);
			__builtin_prefetch(&l->ds.shards[pl[i].shard].framed[pl[i].rec]);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		pl[i].offset = sh->offset[pl[i].rec];
		pl[i].framed = sh->framed[pl[i].rec];
		if (sh->fd_direct >= 0)
			into_arena = 0, odirect = 1;
	}
	/* adjacent records share a read up to read_size bytes (under O_DIRECT
	 * the run's aligned range: the requests of a batch in file order are
	 * then a few large reads, not one per record) */
	size_t run_max = l->o.read_size;
	uint64_t run_end = 0; /* where the last record of the last read ends */
	for (size_t i = 0; i < n; i++) {
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		rio__io_req *last = nreq ? &reqs[nreq - 1] : NULL;
		int fd = sh->fd_direct >= 0 ? sh->fd_direct : sh->fd;
		uint64_t end = pl[i].offset + pl[i].framed;
		if (last && last->fd == fd && run_end == pl[i].offset) {
			uint64_t len = fd == sh->fd_direct
			                   ? ((end + RIO__IO_ALIGN - 1) & ~(uint64_t)(RIO__IO_ALIGN - 1)) -
			                         last->offset
			                   : last->len + pl[i].framed;
			if (len <= run_max) {
				size_t at0 = (size_t)(uintptr_t)last->buf;
				pl[i].at = at0 + (size_t)(pl[i].offset - last->offset);
				pl[i].req = nreq - 1;
				last->len = (size_t)len;
				total = at0 + (size_t)len;
				run_end = end;
				continue;
			}
		}
		uint64_t off = pl[i].offset, len = pl[i].framed;
		if (fd == sh->fd_direct)
			pl[i].at = rio__io_align(&off, &len, &total);
		else
			pl[i].at = total;
		pl[i].req = nreq;
		reqs[nreq++] = (rio__io_req){fd, off, (size_t)len, (void *)(uintptr_t)total, 0};
		total += (size_t)len;
		run_end = end;
	}
	uint8_t *base;
	if (into_arena) {
		s->arena_used = 0;
		if ((rc = rio__slot_reserve(s, total)) < 0)
			return rc;
		base = s->arena;
	} else {
		rio__chunk *c = &w->chunks[0];
		if ((rc = rio__chunk_grow(c, 0, total)) < 0)
			return rc;
		rio__io_register(w->io, c->buf, c->cap); /* O_DIRECT: fixed buffer */
		base = c->buf;
		if (!l->cols.ncols) {
			/* O_DIRECT read into the scratch buffer: the payloads move
			 * to the slot's arena (the views must outlive the scratch) */
			s->arena_used = 0;
			if ((rc = rio__slot_reserve(s, total)) < 0)
				return rc;
		}
	}
	for (size_t r = 0; r < nreq; r++)
		reqs[r].buf = base + (uintptr_t)reqs[r].buf;

	/* read a window of about read_size bytes, then check (and decode) its
	 * records while they are still in the cache; then the next window */
	uint8_t *dst[l->cols.ncols ? l->cols.ncols : 1];
	for (size_t c = 0; c < l->cols.ncols; c++)
		dst[c] = s->cols[c].host;
	uint64_t bytes = 0, file_bytes = 0;
	size_t i = 0;
	for (size_t r0 = 0; r0 < nreq;) {
		/* under O_DIRECT nothing is in the cache to keep: the whole
		 * batch's reads go out at once (queue depth, not one window) */
		size_t r1 = r0 + 1, span = reqs[r0].len;
		while (r1 < nreq && (odirect || span + reqs[r1].len <= run_max))
			span += reqs[r1++].len;
		if ((rc = read_window(w, reqs + r0, r1 - r0, odirect)) < 0)
			return rio__error_set(&w->err, rc, l->ds.shards[pl[i].shard].path,
			                      reqs[r0].offset, RIO__UNKNOWN, "read failed");
		for (size_t r = r0; r < r1; r++)
			file_bytes += (uint64_t)reqs[r].result;
		for (; i < n && pl[i].req < r1; i++) {
			const rio__shard *sh = &l->ds.shards[pl[i].shard];
			const rio__io_req *q = &reqs[pl[i].req];
			size_t got_end = (size_t)((uint8_t *)q->buf - base) + (size_t)q->result;
			size_t avail = got_end > pl[i].at ? got_end - pl[i].at : 0;
			if (avail > pl[i].framed)
				avail = pl[i].framed;
			uint64_t len;
			int d = rio__loader_frame_entry(l, base + pl[i].at, avail, pl[i].framed, &len);
			if (d < 0) /* the direct path runs under FAIL only */
				return rio__frame_error(&w->err, d, sh->path, pl[i].offset, pl[i].rec,
				                        avail, len, l->o.max_record_size);
			const uint8_t *data = base + pl[i].at + RIO_HEADER_SIZE;
			rio_batch_record *br = &s->recs[i];
			br->shard = pl[i].shard;
			br->index = pl[i].rec;
			if (l->cols.ncols) {
				char detail[300];
				br->data = NULL;
				br->size = 0;
				d = rio__decode_into(&l->cols, data, (size_t)len, dst, i, detail,
				                     sizeof detail);
				if (d < 0)
					return rio__error_set(&w->err, d, sh->path, pl[i].offset,
					                      pl[i].rec, "%s", detail);
				bytes += l->cols.row_bytes;
			} else {
				if (!into_arena) {
					memcpy(s->arena + s->arena_used, data, (size_t)len);
					data = s->arena + s->arena_used;
					s->arena_used += (size_t)len;
				}
				br->data = data;
				br->size = (size_t)len;
				bytes += len;
			}
		}
		r0 = r1;
	}
	s->batch.count = n;
	s->batch.epoch = l->epoch;
	s->batch.number = b;
	s->bytes = bytes;
	if ((rc = rio__pool_to_device(&l->pool, s, n, &l->cols)) < 0)
		return rio__error_set(&w->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "copying a batch to the device failed");
	pthread_mutex_lock(&l->mu);
	l->stats.file_bytes += file_bytes;
	pthread_mutex_unlock(&l->mu);
	return 0;
}

void *rio__direct_main(void *arg)
{
	rio__worker *w = arg;
	rio_loader *l = w->l;
	if (l->pool.device_copy)
		rio__cuda_set_device(l->o.device);
	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!l->stop && l->next_task < l->plan.ntasks && !l->pool.free_list)
			pthread_cond_wait(&l->slot_cv, &l->mu);
		if (l->stop || l->next_task >= l->plan.ntasks)
			break;
		uint64_t b = l->next_task++;
		rio__slot *s = l->pool.free_list;
		l->pool.free_list = s->next;
		pthread_mutex_unlock(&l->mu);

		rio__error_clear(&w->err);
		int rc = fill(w, s, b);
		if (rc < 0 && w->err.code == 0)
			rio__error_set(&w->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);

		pthread_mutex_lock(&l->mu);
		if (rc < 0) {
			if (l->error == 0 || b < l->error_batch) {
				l->error = rc;
				l->error_batch = b;
				l->batch_err = w->err;
			}
			s->next = l->pool.free_list;
			l->pool.free_list = s;
			pthread_cond_broadcast(&l->slot_cv);
		} else {
			s->next = l->direct_done;
			l->direct_done = s;
		}
		pthread_cond_broadcast(&l->ready_cv);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int rio__direct_plan(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o)
{
	uint64_t n = ds->rank_records, bs = o->batch_size;
	uint64_t nb = n / bs + (!o->drop_remainder && n % bs ? 1 : 0);
	rio__plan_free_tasks(p);
	p->tasks = malloc((nb ? nb : 1) * sizeof *p->tasks);
	if (!p->tasks)
		return -ENOMEM;
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t first = b * bs;
		p->tasks[b] = (rio__task){0, 0, first, n - first < bs ? n - first : bs, b};
	}
	p->ntasks = nb;
	return 0;
}

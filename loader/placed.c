/*
 * placed.c — the placed path (named for its records' places, all known in
 * advance): workers read each batch straight into its pool slot, with no
 * copy and no batcher thread. ("direct" means O_DIRECT only: opts.direct.)
 *
 * When every record's place is known in advance — uncompressed shards, with
 * no shuffle or a global one (or buffer shuffling from mappings, whose
 * order plan.c works out as a permutation), and damage failing the epoch
 * (so no record drops out and shifts the rest) — batch b holds
 * exactly the records at positions [b * batch_size, (b + 1) * batch_size)
 * of the epoch's sequence.
 * A worker then takes a free slot and the next batch number together (so
 * slots go to batches in order and the earliest unfinished batch always
 * has one), reads that batch's records into the slot (raw: into its arena,
 * where the views point; decoded: into a scratch buffer, decoded straight
 * into the slot's columns), checks the CRCs and files the slot as done. The
 * consumer takes done slots strictly by batch number, so the order is the
 * plan's whatever the number of workers. Read from mappings (the route's
 * MAP: route.c) nothing is read or copied: the batches are views into the
 * mappings (fill_mapped); so too with opts.cache, from the decompressed
 * copies (cache.c); with O_DIRECT, and from remote shards, run_ahead
 * reads ahead itself. Which of
 * these serves an epoch, and whether this path does at all (compressed
 * shards, buffer shuffling with reads and skipping damage take the
 * pipeline of worker.c and batcher.c), is route.c's choice.
 */
#include "config.h"
#include "loader_internal.h"
#include "parts.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* Locates batch `b`'s records and plans their reads: places from pl[0],
 * requests appended at reqs[*nreq], landing at buffer offsets from *total
 * (offsets, made pointers once the buffer is known). Adjacent records share
 * a read of up to read_size bytes; under O_DIRECT that read is the run's
 * aligned range, so a batch in file order is a few large reads, not one per
 * record. A batch's reads are its own (none spans two batches). */
static void plan_batch(rio__worker *w, uint64_t b, place *pl, rio__io_req *reqs, size_t *nreq,
                       size_t *total)
{
	rio_loader *l = w->l;
	const rio__task *t = &l->plan.tasks[b];
	size_t n = (size_t)t->count;
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
	size_t run_max = l->o.read_size;
	uint64_t run_end = 0; /* where the last record of the last read ends */
	size_t first_req = *nreq;
	for (size_t i = 0; i < n; i++) {
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		pl[i].offset = sh->offset[pl[i].rec];
		pl[i].framed = sh->framed[pl[i].rec];
		rio__io_req *last = *nreq > first_req ? &reqs[*nreq - 1] : NULL;
		int fd = rio__shard_fd(l, sh);
		uint64_t end = pl[i].offset + pl[i].framed;
		/* the same file: the same descriptor and, for sources that have
		 * none (fd -1: every remote shard), the same source */
		if (last && last->fd == fd && last->src == &sh->src && run_end == pl[i].offset) {
			uint64_t len = fd != sh->src.fd
			                   ? ((end + RIO__IO_ALIGN - 1) & ~(uint64_t)(RIO__IO_ALIGN - 1)) -
			                         last->offset
			                   : last->len + pl[i].framed;
			if (len <= run_max) {
				size_t at0 = (size_t)(uintptr_t)last->buf;
				pl[i].at = at0 + (size_t)(pl[i].offset - last->offset);
				pl[i].req = *nreq - 1;
				last->len = (size_t)len;
				*total = at0 + (size_t)len;
				run_end = end;
				continue;
			}
		}
		uint64_t off = pl[i].offset, len = pl[i].framed;
		if (fd != sh->src.fd)
			pl[i].at = rio__io_align(&off, &len, total);
		else
			pl[i].at = *total;
		pl[i].req = *nreq;
		reqs[(*nreq)++] =
		        (rio__io_req){fd, off, (size_t)len, (void *)(uintptr_t)*total, 0, &sh->src};
		*total += (size_t)len;
		run_end = end;
	}
}

/* Checks (and decodes) records [i0, i1) of the batch whose places start at
 * pl into slot `s`, each where its read (reqs[pl[i].req]) put the bytes
 * from the read's offset on: raw views point there, or, with `copy` (a
 * scratch buffer, or the epoch's parts), at their copy in the slot's
 * arena. Adds the delivered bytes to *bytes. 0 or an error in w->err. */
static int deliver(rio__worker *w, rio__slot *s, const place *pl, size_t i0, size_t i1,
                   const rio__io_req *reqs, int copy, uint64_t *bytes)
{
	rio_loader *l = w->l;
	uint8_t *dst[l->cols.ncols ? l->cols.ncols : 1];
	for (size_t c = 0; c < l->cols.ncols; c++)
		dst[c] = s->cols[c].host;
	for (size_t i = i0; i < i1; i++) {
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		const rio__io_req *q = &reqs[pl[i].req];
		size_t into = (size_t)(pl[i].offset - q->offset); /* the record in its read */
		const uint8_t *frame = (const uint8_t *)q->buf + into;
		size_t avail = (size_t)q->result > into ? (size_t)q->result - into : 0;
		if (avail > pl[i].framed)
			avail = pl[i].framed;
		uint64_t len = 0;
		/* a decompressed copy's data CRCs were checked as it was made
		 * (cache.c), and nothing writes to it since */
		int d = rio__frame_check_entry(frame, avail, pl[i].framed,
		                               l->o.max_record_size, l->o.verify_crc && !sh->cache,
		                               &len);
		if (d < 0) /* the placed path runs under FAIL only */
			return rio__frame_error(&w->err, d, sh->path, pl[i].offset, pl[i].rec, avail, len,
			                        l->o.max_record_size);
		const uint8_t *data = frame + RIO_HEADER_SIZE;
		rio_batch_record *br = &s->recs[i];
		br->shard = pl[i].shard;
		br->index = pl[i].rec;
		if (l->cols.ncols) {
			char detail[300];
			br->data = NULL;
			br->size = 0;
			d = rio__decode_into(&l->cols, data, (size_t)len, dst, i, detail, sizeof detail);
			if (d < 0)
				return rio__error_set(&w->err, d, sh->path, pl[i].offset, pl[i].rec, "%s",
				                      detail);
			*bytes += l->cols.row_bytes;
		} else {
			if (copy) {
				memcpy(s->arena + s->arena_used, data, (size_t)len);
				data = s->arena + s->arena_used;
				s->arena_used += (size_t)len;
			}
			br->data = data;
			br->size = (size_t)len;
			*bytes += len;
		}
	}
	return 0;
}

/* A filled batch: its header, the device copy, the bytes read. */
static int finish(rio__worker *w, rio__slot *s, uint64_t b, size_t n, uint64_t bytes,
                  uint64_t file_bytes)
{
	rio_loader *l = w->l;
	s->batch.count = n;
	s->batch.epoch = l->epoch;
	s->batch.number = b;
	s->bytes = bytes;
	int rc = rio__pool_to_device(&l->pool, s, n, &l->cols);
	if (rc < 0)
		return rio__error_set(&w->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "copying a batch to the device failed");
	w->file_bytes += file_bytes; /* counted when the batch is filed */
	return 0;
}

/* Where a batch's `total` framed bytes land: the slot's arena when the
 * records are handed out raw, else the worker's scratch (chunk 0), from
 * which they are decoded into the slot's columns. */
static int batch_bytes(rio__worker *w, rio__slot *s, size_t total, uint8_t **base)
{
	int rc;
	if (!w->l->cols.ncols) {
		s->arena_used = 0;
		if ((rc = rio__slot_reserve(s, total)) < 0)
			return rc;
		*base = s->arena;
	} else {
		rio__chunk *c = &w->chunks[0];
		if ((rc = rio__chunk_grow(c, 0, total ? total : 1)) < 0)
			return rc;
		*base = c->buf;
	}
	return 0;
}

/* Buffered reads: batch `b`'s records read straight into the slot's arena
 * (raw) or the worker's scratch (decoded), a window of about read_size at
 * a time, each window checked (and decoded) while it is still in the
 * cache. Returns 0 or an error in w->err. */
static int fill(rio__worker *w, rio__slot *s, uint64_t b)
{
	rio_loader *l = w->l;
	size_t n = (size_t)l->plan.tasks[b].count;
	int rc = grow_places(w, n);
	if (rc < 0)
		return rc;
	place *pl = w->places;
	rio__io_req *reqs = (rio__io_req *)(void *)(pl + w->nplaces);
	size_t nreq = 0, total = 0;
	plan_batch(w, b, pl, reqs, &nreq, &total);
	uint8_t *base;
	if ((rc = batch_bytes(w, s, total, &base)) < 0)
		return rc;
	for (size_t r = 0; r < nreq; r++)
		reqs[r].buf = base + (uintptr_t)reqs[r].buf;
	uint64_t bytes = 0, file_bytes = 0;
	size_t i = 0, window = l->o.read_size;
	/* sources that read many requests at once (remote shards: a round
	 * trip each) get the whole batch in one window, fetched together */
	for (size_t r = 0; r < nreq; r++)
		if (reqs[r].fd < 0 && reqs[r].src->ops->read_many)
			window = SIZE_MAX;
	for (size_t r0 = 0; r0 < nreq;) {
		size_t r1 = r0 + 1, span = reqs[r0].len;
		while (r1 < nreq && span + reqs[r1].len <= window)
			span += reqs[r1++].len;
		if ((rc = rio__io_run(w->io, reqs + r0, r1 - r0)) < 0)
			return rio__io_failed(w->io, &w->err, rc, l->ds.shards[pl[i].shard].path,
			                      reqs[r0].offset);
		for (size_t r = r0; r < r1; r++)
			file_bytes += (uint64_t)reqs[r].result;
		size_t i1 = i;
		while (i1 < n && pl[i1].req < r1)
			i1++;
		if ((rc = deliver(w, s, pl, i, i1, reqs, 0, &bytes)) < 0)
			return rc;
		i = i1;
		r0 = r1;
	}
	return finish(w, s, b, n, bytes, file_bytes);
}

/* Mapped shards (opts.map, shuffled) and the cache's copies (opts.cache, in
 * any order): batch `b`'s records are not copied at all (from decoded rows,
 * cache.c, only their values are, into the columns).
 * Their frames are checked where they lie in the mappings; a raw batch's
 * views point into them (valid until the loader is closed: the mappings
 * outlive every batch), a decoded batch is decoded from them straight into
 * the slot's columns. No system call, no copy per record. The bytes past a
 * shard's size at open are missing (a truncated frame, an error naming the
 * file and the offset), never touched. A shuffled record's page is a cache
 * miss the hardware does not foresee; the records RIO__MAP_AHEAD places on
 * are prefetched, so that several misses are in flight during each check
 * (prefetching across a worker's small batches too measured no gain).
 * Returns 0 or an error in w->err. */
#define RIO__MAP_AHEAD 8

/* The prefetch helpers are always inlined: GCC 12 takes a function whose
 * only effect is __builtin_prefetch for one without side effects, and a
 * call of it that is not inlined is dropped with its prefetches (which
 * made them look useless once, on rows). */
#if defined(__GNUC__)
#define PREFETCH_HELPER static inline __attribute__((always_inline)) void
#else
#define PREFETCH_HELPER static inline void
#endif

PREFETCH_HELPER prefetch_record(const rio__shard *sh, const place *p)
{
	if (sh->rows || p->offset + p->framed > sh->map_len)
		return;
	for (size_t k = 0; k < p->framed; k += 64)
		__builtin_prefetch(sh->map + p->offset + k);
}

/* Rows asked for this far ahead of the one copied: a shuffled row is a
 * cache miss (the rows of a dataset are tens of MiB), and the copy of one
 * row has only its own 13 lines in flight; with the next rows' lines asked
 * for too, a batch's gather took 11.7k cycles against 21.4k (Fashion-MNIST,
 * batch 128, buffer shuffling, a timer around gather_rows; 4 rows ahead:
 * 13.5k, 16: 12.6k). */
enum { GATHER_AHEAD = 8 };

PREFETCH_HELPER prefetch_row(const rio__dataset *ds, const place *p)
{
	const rio__rowpack *pk = ds->shards[p->shard].rows;
	if (!pk)
		return;
	const uint8_t *row = pk->data + (size_t)p->rec * pk->stride;
	for (size_t at = 0; at < pk->stride; at += 64)
		__builtin_prefetch(row + at);
}

/* The batch's records that are decoded rows (cache.c), copied one after
 * another into the worker's scratch, each place's `at` saying where: one
 * copy a row, whose cache misses overlap, the next rows' asked for. Widening
 * each row where it lies, with the same prefetching, measured 2-5 % slower
 * on a 2-core AMD EPYC (without it, twice as slow). */
static int gather_rows(rio__worker *w, place *pl, size_t n, const uint8_t **scratch)
{
	const rio__dataset *ds = &w->l->ds;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (ds->shards[pl[i].shard].rows)
			total += ds->shards[pl[i].shard].rows->stride;
	if (total == 0)
		return 0;
	rio__chunk *c = &w->chunks[0];
	int rc = rio__chunk_grow(c, 0, total);
	if (rc < 0)
		return rc;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (i + GATHER_AHEAD < n)
			prefetch_row(ds, &pl[i + GATHER_AHEAD]);
		const rio__rowpack *pk = ds->shards[pl[i].shard].rows;
		if (!pk)
			continue;
		memcpy(c->buf + at, pk->data + (size_t)pl[i].rec * pk->stride, pk->stride);
		pl[i].at = at;
		at += pk->stride;
	}
	*scratch = c->buf;
	return 0;
}

/* Record i of the batch, a decoded row gathered at scratch + at, into the
 * slot's columns. */
static void deliver_row(rio_loader *l, rio__slot *s, const place *p, size_t i,
                        const uint8_t *scratch, uint64_t *bytes)
{
	const rio__shard *sh = &l->ds.shards[p->shard];
	rio__rowpack_to_columns(sh->rows, &l->cols, scratch + p->at, s->cols, i);
	rio_batch_record *br = &s->recs[i];
	br->shard = p->shard;
	br->index = p->rec;
	br->data = NULL;
	br->size = 0;
	*bytes += l->cols.row_bytes;
}

static int fill_mapped(rio__worker *w, rio__slot *s, uint64_t b)
{
	rio_loader *l = w->l;
	const rio__task *t = &l->plan.tasks[b];
	const uint64_t *perm = l->plan.perm;
	size_t n = (size_t)t->count;
	int rc = grow_places(w, n);
	if (rc < 0)
		return rc;
	place *pl = w->places;
	rio__io_req *reqs = (rio__io_req *)(void *)(pl + w->nplaces);
	/* locate each, index entries asked for early; a decoded row needs
	 * none (gather_rows finds it by its record number) */
	for (size_t i = 0; i < n; i++) {
		uint32_t piece;
		rio__dataset_locate(&l->ds, perm ? perm[t->first + i] : t->first + i, &piece,
		                    &pl[i].shard, &pl[i].rec);
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		if (perm && !sh->rows) {
			__builtin_prefetch(&sh->offset[pl[i].rec]);
			__builtin_prefetch(&sh->framed[pl[i].rec]);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		if (sh->rows)
			continue;
		pl[i].offset = sh->offset[pl[i].rec];
		pl[i].framed = sh->framed[pl[i].rec];
		pl[i].req = i;
	}
	s->arena_used = 0;
	const uint8_t *scratch = NULL;
	if ((rc = gather_rows(w, pl, n, &scratch)) < 0)
		return rc;
	if (perm)
		for (size_t i = 0; i < n && i < RIO__MAP_AHEAD; i++)
			prefetch_record(&l->ds.shards[pl[i].shard], &pl[i]);
	uint64_t bytes = 0, file_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		if (perm && i + RIO__MAP_AHEAD < n)
			prefetch_record(&l->ds.shards[pl[i + RIO__MAP_AHEAD].shard], &pl[i + RIO__MAP_AHEAD]);
		const rio__shard *sh = &l->ds.shards[pl[i].shard];
		if (sh->rows) {
			deliver_row(l, s, &pl[i], i, scratch, &bytes);
			continue;
		}
		uint64_t off = pl[i].offset;
		/* the bytes the file had at open (past them: a truncated frame) */
		size_t got = off < sh->map_len ? sh->map_len - (size_t)off : 0;
		if (got > pl[i].framed)
			got = pl[i].framed;
		reqs[i] = (rio__io_req){sh->src.fd, off, got, (void *)(uintptr_t)(sh->map + off),
		                        (ssize_t)got, &sh->src};
		file_bytes += sh->cache ? 0 : got; /* a decompressed copy: no file read */
		if ((rc = deliver(w, s, pl, i, i + 1, reqs, 0, &bytes)) < 0)
			return rc;
	}
	return finish(w, s, b, n, bytes, file_bytes);
}

/* Files the slots of batches b0 .. b0 + k - 1 with the pool: those before
 * `failed` filled, the one at `failed` (when < k) failed with rc (its
 * place in w->err), the rest not filled; and counts the bytes read. */
static void file_batches(rio__worker *w, rio__slot *const *slots, size_t k, uint64_t b0,
                         size_t failed, int rc)
{
	rio__count_file_bytes(w->l, w->file_bytes);
	w->file_bytes = 0;
	if (rc < 0 && w->err.code == 0)
		rio__error_set(&w->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	rio__pool_file(&w->l->pool, slots, k, b0, failed, rc, &w->err);
}

/* ---- O_DIRECT and remote shards: batches read ahead ---------------------
 * No page-cache readahead works for O_DIRECT, nor for shards read over the
 * network (remote sources: each read is a round trip), and one batch's
 * reads are few: a worker claims the next batches of about
 * RIO__DIRECT_AHEAD records at once (a claim; for remote shards in shard
 * order, rio__placed_ahead's bytes of them), reads them all into a scratch buffer with every
 * request in flight (in file order; remote ones through the source's
 * read_many, which fetches the nearby records of the claim's batches
 * together, in parts run in parallel), and then fills their slots one
 * by one. While it fills them, the reads of its next claim are already in
 * flight into its other scratch buffer (two claims, w->chunks[0] and [1],
 * taking turns), so the device is not idle while batches are checked and
 * copied. Batches claimed ahead have no slot yet, so slots go to batches
 * strictly in batch order (the pool's TURNS): the earliest unfinished batch
 * is always the next to get one, and every batch holding a slot is an
 * earlier one, which the consumer takes and releases. */
#define RIO__DIRECT_AHEAD 1024

typedef struct claim {
	uint64_t b0, k;   /* batches [b0, b0 + k); k 0: none */
	place *pl;        /* their places ... */
	rio__io_req *reqs;
	size_t *first, *req0; /* ... batch j's from first[j], reads from req0[j] */
	rio__io_req **order, *sorted; /* the reads in file order, as run */
	size_t nreq;
	rio__chunk *c;    /* the scratch buffer the reads land in */
	rio__io *io;      /* the backend that reads them */
	int rc;           /* the reads' outcome (each request says its own) */
	rio_error err;    /* the first failed read's line from the epoch's
	                   * parts (code 0: none, or not read from them) */
} claim;

/* Takes the next claim of up to `ahead` batches into *cl (cl->k 0 when
 * there is none left, or on stop). */
static void take_claim(rio_loader *l, uint64_t ahead, claim *cl)
{
	cl->k = rio__pool_claim_batches(&l->pool, ahead, &cl->b0);
}

/* Plans claim `cl`'s reads and starts them (the scratch buffers then
 * registered, both, as no read is in flight). Returns 0 or an error, in
 * cl->rc too, the reads not started. */
static int start_claim(rio__worker *w, claim *cl)
{
	rio_loader *l = w->l;
	size_t nreq = 0, total = 0, np = 0;
	cl->nreq = 0;
	for (uint64_t j = 0; j < cl->k; j++) {
		cl->first[j] = np;
		cl->req0[j] = nreq;
		plan_batch(w, cl->b0 + j, cl->pl + np, cl->reqs, &nreq, &total);
		np += (size_t)l->plan.tasks[cl->b0 + j].count;
	}
	cl->first[cl->k] = np;
	cl->req0[cl->k] = nreq;
	if ((cl->rc = rio__chunk_grow(cl->c, 0, total ? total : 1)) < 0)
		return cl->rc;
	if (l->parts) { /* the epoch's parts read ahead: taken at finish, the
		                 * scratch only for bytes two parts hold */
		for (size_t r = 0; r < nreq; r++)
			cl->reqs[r].buf = cl->c->buf + (uintptr_t)cl->reqs[r].buf;
		cl->nreq = nreq;
		return 0;
	}
	void *bufs[RIO__IO_FIXED];
	size_t lens[RIO__IO_FIXED];
	unsigned nb = 0;
	for (unsigned i = 0; i < RIO__IO_FIXED && i < RIO__CHUNKS_PER_WORKER; i++)
		if (w->chunks[i].buf) {
			bufs[nb] = w->chunks[i].buf;
			lens[nb++] = w->chunks[i].cap;
		}
	rio__io_register(cl->io, bufs, lens, nb); /* fixed buffers */
	for (size_t r = 0; r < nreq; r++) {
		cl->reqs[r].buf = cl->c->buf + (uintptr_t)cl->reqs[r].buf;
		cl->order[r] = &cl->reqs[r];
	}
	/* in file order: the scattered reads of a shuffled batch walk forwards */
	qsort(cl->order, nreq, sizeof *cl->order, by_file_offset);
	for (size_t r = 0; r < nreq; r++)
		cl->sorted[r] = *cl->order[r];
	cl->nreq = nreq;
	cl->rc = rio__io_start(cl->io, cl->sorted, nreq);
	if (cl->rc < 0) /* nothing in flight: the claim's batches fail */
		rio__io_finish(cl->io);
	return cl->rc;
}

/* The shard that read `q` is of (its source is the shard's). */
static uint32_t req_shard(const rio_loader *l, const rio__io_req *q)
{
	const rio__shard *sh =
	        (const rio__shard *)(const void *)((const char *)q->src - offsetof(rio__shard, src));
	return (uint32_t)(sh - l->ds.shards);
}

/* Claim `cl`'s bytes, once its batches are filled: released to the
 * epoch's parts (which it got them from). */
static void release_claim(rio_loader *l, claim *cl)
{
	for (size_t r = 0; l->parts && r < cl->nreq; r++)
		if (cl->reqs[r].result > 0)
			rio__parts_release(l->parts, req_shard(l, &cl->reqs[r]), cl->reqs[r].offset,
			                   (size_t)cl->reqs[r].result);
}

/* Waits for claim `cl`'s reads; each request then says how it went, and
 * cl->rc is an error only where nothing was read (no submission). */
static void finish_claim(rio__worker *w, claim *cl)
{
	rio_loader *l = w->l;
	cl->err.code = 0;
	if (l->parts) { /* the claim's bytes where their parts hold them, as they come */
		for (size_t r = 0; r < cl->nreq; r++) {
			rio__io_req *q = &cl->reqs[r];
			rio_error e = {0};
			const void *at;
			q->result = rio__parts_get(l->parts, req_shard(l, q), q->offset, q->len, q->buf,
			                           &at, &e);
			q->buf = (void *)(uintptr_t)at;
			if (q->result < 0 && !cl->err.code)
				cl->err = e;
		}
		return;
	}
	if (cl->rc == 0)
		cl->rc = rio__io_finish(cl->io);
	for (size_t r = 0; r < cl->nreq; r++)
		cl->order[r]->result = cl->sorted[r].result;
	for (size_t r = 0; r < cl->nreq && cl->rc < 0; r++)
		if (cl->reqs[r].result < 0)
			cl->rc = 0; /* the batches that a failed read hits say so */
}

/* Fills the slots of claim `cl`'s batches (read: finish_claim) one by one,
 * in batch order. Returns 1 on stop, else 0. */
static int deliver_claim(rio__worker *w, claim *cl)
{
	rio_loader *l = w->l;
	place *pl = cl->pl;
	rio__io_req *reqs = cl->reqs;
	for (uint64_t j = 0; j < cl->k; j++) {
		uint64_t b = cl->b0 + j;
		rio__slot *s = rio__pool_take_turn(&l->pool, b);
		if (!s)
			return 1; /* stop */

		rio__error_clear(&w->err);
		int brc = cl->rc;
		size_t f0 = cl->first[j], f1 = cl->first[j + 1];
		if (brc < 0 && f1 > f0)
			rio__error_set(&w->err, brc, l->ds.shards[pl[f0].shard].path, pl[f0].offset,
			               RIO__UNKNOWN, "read failed");
		uint64_t file_bytes = 0, bytes = 0;
		for (size_t r = cl->req0[j]; r < cl->req0[j + 1] && brc == 0; r++) {
			if (reqs[r].result < 0 && cl->err.code) { /* the source's line */
				w->err = cl->err;
				brc = cl->err.code;
			} else if (reqs[r].result < 0) {
				const place *p = &pl[f0];
				while (p->req != r)
					p++;
				brc = rio__error_set(&w->err, (int)reqs[r].result,
				                     l->ds.shards[p->shard].path, reqs[r].offset,
				                     RIO__UNKNOWN, "read failed");
			} else {
				file_bytes += (uint64_t)reqs[r].result;
			}
		}
		if (brc == 0 && !l->cols.ncols) { /* room for the payloads */
			size_t need = 0;
			for (size_t i = f0; i < f1; i++)
				need += pl[i].framed;
			s->arena_used = 0;
			brc = rio__slot_reserve(s, need);
		}
		if (brc == 0)
			brc = deliver(w, s, pl + f0, 0, f1 - f0, reqs, !l->cols.ncols, &bytes);
		if (brc == 0)
			brc = finish(w, s, b, f1 - f0, bytes, file_bytes);
		file_batches(w, &s, 1, b, brc < 0 ? 0 : 1, brc);
	}
	return 0;
}

/* Remote shards' claims without the epoch's parts (rio__placed_parts
 * could not make them): the loader's requests in flight (inflight parts
 * of part_size) shared by its workers' claims, two a worker (so the read
 * ahead holds at most part_size x inflight bytes), between 4 MiB and
 * 64 MiB a claim, and at most RIO__REMOTE_AHEAD_RECORDS records (the
 * claim's places and requests). With the parts, a claim is about a part
 * (at most RIO__REMOTE_AHEAD_MAX): its batches are filled as soon as that
 * part is in. */
#define RIO__REMOTE_AHEAD_MIN (4ull << 20)
#define RIO__REMOTE_AHEAD_MAX (64ull << 20)
#define RIO__REMOTE_AHEAD_RECORDS 65536u

/* 1 when the epoch reads remote shards in shard order on the placed path
 * (sources read through read_many, not a descriptor), 2 when every shard
 * it reads is such (read ahead in parts, rio__placed_parts), else 0;
 * *bytes and *records of the shards it reads. */
static int remote_in_order(const rio_loader *l, uint64_t *bytes, uint64_t *records)
{
	*bytes = *records = 0;
	if (l->route.reading != RIO__READ_BUFFERED || l->plan.perm)
		return 0;
	int remote = 0, all = 1;
	for (size_t i = 0; i < l->ds.nshards; i++) {
		const rio__shard *sh = &l->ds.shards[i];
		if (!sh->needed)
			continue;
		*bytes += sh->data_end;
		*records += sh->count;
		int r = sh->src.fd < 0 && sh->src.ops && sh->src.ops->read_many;
		remote |= r;
		all &= r && sh->src.ops->read_start;
	}
	return remote ? 1 + all : 0;
}

/* The records a claim holds: RIO__DIRECT_AHEAD under O_DIRECT; for an
 * epoch in shard order that reads remote shards, those of a claim's bytes;
 * else 0 (no claims). A shuffled epoch of remote shards keeps a read per
 * batch: a claim's records, spread over the whole set, would have the
 * engine fetch the bytes between them too (nearby ranges are read
 * together), many times what they hold. */
/* The records of a claim of remote shards in shard order, read from the
 * epoch's parts (`parts`) or by the claims themselves. */
static uint64_t remote_claim_records(const rio_loader *l, int parts, uint64_t bytes,
                                     uint64_t records)
{
	uint64_t want = parts ? l->o.remote.part_size
	                      : l->o.remote.part_size * l->o.remote.inflight /
	                                (2 * (uint64_t)l->nworkers);
	want = !parts && want < RIO__REMOTE_AHEAD_MIN ? RIO__REMOTE_AHEAD_MIN
	       : want > RIO__REMOTE_AHEAD_MAX         ? RIO__REMOTE_AHEAD_MAX
	                                              : want;
	uint64_t per = records ? (bytes + records - 1) / records : 1;
	uint64_t n = want / (per ? per : 1);
	return n < 1 ? 1 : n > RIO__REMOTE_AHEAD_RECORDS ? RIO__REMOTE_AHEAD_RECORDS : n;
}

uint64_t rio__placed_ahead(const rio_loader *l)
{
	if (l->route.reading == RIO__READ_DIRECT)
		return RIO__DIRECT_AHEAD;
	uint64_t bytes, records;
	if (!remote_in_order(l, &bytes, &records))
		return 0;
	return remote_claim_records(l, l->parts != NULL, bytes, records);
}

/* The parts of the epoch's bytes (parts.h) from batch `first` on, when
 * every shard it reads is remote and read in shard order: the records'
 * frames, each shard's in one stretch, in parts of part_size (at most
 * RIO__REMOTE_AHEAD_MAX, as the claims without parts were), inflight + 2 x
 * workers of them asked for ahead (so that `inflight` GETs run while each
 * worker fills batches from the two parts its claim, about a part, spans),
 * or as many as the largest claim spans. l->parts, or NULL: the claims
 * read their own bytes (no memory; a shard read in two stretches). */
void rio__placed_parts(rio_loader *l, uint64_t first)
{
	uint64_t bytes, records;
	rio__parts *ps = NULL;
	l->parts = NULL;
	uint64_t part = l->o.remote.part_size < RIO__REMOTE_AHEAD_MAX ? l->o.remote.part_size
	                                                                : RIO__REMOTE_AHEAD_MAX;
	if (remote_in_order(l, &bytes, &records) != 2 ||
	    rio__parts_new(&ps, (size_t)part, l->ds.nshards) < 0)
		return;
	/* the claims (run_ahead takes batches `ahead` at a time from `first`)
	 * and the most parts one spans: the earliest claim's parts must fit in
	 * the window, or its worker would wait for parts that later claims'
	 * hold (a batch larger than a part) */
	uint64_t ahead = remote_claim_records(l, 1, bytes, records) / l->o.batch_size;
	ahead = ahead > 1 ? ahead : 1;
	uint64_t claim_bytes = 0, stretches = 0, span = 0;
	int rc = 0;
	uint32_t in = UINT32_MAX; /* the stretch being gathered: shard `in`'s [lo, hi) */
	uint64_t lo = 0, hi = 0;
	for (uint64_t b = first; rc == 0 && b < l->plan.ntasks; b++) {
		const rio__task *t = &l->plan.tasks[b];
		if ((b - first) % ahead == 0) { /* a claim starts */
			uint64_t s = claim_bytes / part + 2 + stretches;
			span = s > span ? s : span;
			claim_bytes = stretches = 0;
		}
		for (uint64_t i = 0; rc == 0 && i < t->count; i++) {
			uint32_t piece, shard;
			uint64_t rec;
			rio__dataset_locate(&l->ds, t->first + i, &piece, &shard, &rec);
			const rio__shard *sh = &l->ds.shards[shard];
			uint64_t off = sh->offset[rec], end = off + sh->framed[rec];
			claim_bytes += sh->framed[rec];
			if (shard == in && off == hi) {
				hi = end;
				continue;
			}
			stretches++;
			if (in != UINT32_MAX)
				rc = rio__parts_add(ps, in, &l->ds.shards[in].src, lo, hi);
			in = shard;
			lo = off;
			hi = end;
		}
	}
	uint64_t s = claim_bytes / part + 2 + stretches;
	span = s > span ? s : span;
	if (rc == 0 && in != UINT32_MAX)
		rc = rio__parts_add(ps, in, &l->ds.shards[in].src, lo, hi);
	size_t window = l->o.remote.inflight + 2 * (size_t)l->nworkers;
	if (rc == 0)
		rc = rio__parts_start(ps, window > span ? window : (size_t)span);
	if (rc < 0) {
		rio__parts_free(ps);
		return;
	}
	l->parts = ps;
}

/* The worker that reads ahead: claims taken two at a time, the next one's
 * reads in flight while the current one's batches are filled. O_DIRECT on
 * io_uring: the next claim's reads start once the current one's are done
 * (one ring, its fixed buffers registered while nothing is in flight).
 * On the pread backend each claim has a backend of its own, so that
 * remote shards' GETs (started by rio__io_start) of both claims are in
 * flight at once, within part_size x inflight bytes in all
 * (rio__placed_ahead); local files on pread are read when the claim is
 * finished, while the other workers' claims are filled. */
static void run_ahead(rio__worker *w, uint64_t records)
{
	rio_loader *l = w->l;
	uint64_t ahead = records / l->o.batch_size;
	ahead = ahead > 1 ? ahead : 1;
	size_t nmax = (size_t)(ahead * l->o.batch_size); /* places per claim */
	claim cl[2];
	memset(cl, 0, sizeof cl);
	int rc = grow_places(w, 2 * nmax);
	size_t *idx = malloc(4 * ((size_t)ahead + 1) * sizeof *idx);
	void *ord = malloc(2 * nmax * (sizeof(rio__io_req *) + sizeof(rio__io_req)));
	if (rc == 0 && (!idx || !ord))
		rc = -ENOMEM;
	if (rc < 0) { /* no memory: the next batch fails, in its turn */
		claim one;
		take_claim(l, 1, &one);
		rio__slot *s = one.k ? rio__pool_take_turn(&l->pool, one.b0) : NULL;
		if (s) {
			rio__error_clear(&w->err);
			file_batches(w, &s, 1, one.b0, 0, rc);
		}
		free(idx);
		free(ord);
		return;
	}
	rio__io *other = NULL; /* on pread, claim 1's backend */
	if (!l->use_uring && rio__io_open(&other, 0, l->o.queue_depth, l->o.read_size) < 0)
		other = NULL; /* no memory: one backend, the claims read in turn */
	for (int i = 0; i < 2; i++) {
		cl[i].io = i && other ? other : w->io;
		cl[i].pl = (place *)w->places + (size_t)i * nmax;
		cl[i].reqs = (rio__io_req *)(void *)((place *)w->places + w->nplaces) + (size_t)i * nmax;
		cl[i].first = idx + (size_t)(2 * i) * ((size_t)ahead + 1);
		cl[i].req0 = cl[i].first + (size_t)ahead + 1;
		cl[i].order = (rio__io_req **)ord + (size_t)i * nmax;
		cl[i].sorted = (rio__io_req *)(void *)((rio__io_req **)ord + 2 * nmax) + (size_t)i * nmax;
		cl[i].c = &w->chunks[i];
		cl[i].c->huge = 1; /* filled whole, claim after claim (chunk.c) */
	}
	int cur = 0;
	take_claim(l, ahead, &cl[cur]);
	if (cl[cur].k)
		start_claim(w, &cl[cur]);
	while (cl[cur].k) {
		claim *c = &cl[cur], *n = &cl[1 - cur];
		take_claim(l, ahead, n);
		if (other && n->k)
			start_claim(w, n); /* in flight with c's */
		finish_claim(w, c);
		if (!other && n->k)
			start_claim(w, n); /* in flight while c's batches are filled */
		int stopped = deliver_claim(w, c);
		if (!stopped)
			release_claim(l, c);
		c->k = 0;
		if (stopped && n->k) {
			if (!l->parts) /* no read may outlive its buffer (the parts'
			                * are the parts' own: nothing to wait for) */
				finish_claim(w, n);
			n->k = 0;
		}
		cur = 1 - cur;
	}
	rio__io_close(other);
	free(idx);
	free(ord);
}
#define RIO__CLAIM_RECORDS 128
#define RIO__CLAIM_MAX 8

void *rio__placed_main(void *arg)
{
	rio__worker *w = arg;
	rio_loader *l = w->l;
	if (l->pool.device_copy)
		rio__cuda_set_device(l->o.device);
	uint64_t ahead = rio__placed_ahead(l);
	if (ahead) {
		run_ahead(w, ahead);
		return NULL;
	}
	/* small batches are claimed a few at a time (about RIO__CLAIM_RECORDS
	 * records, at most a third of the slots) and filed together: one lock and
	 * one wakeup for several batches */
	size_t most = RIO__CLAIM_RECORDS / l->o.batch_size;
	if (most > l->pool.nslots / 3)
		most = l->pool.nslots / 3;
	if (most > RIO__CLAIM_MAX)
		most = RIO__CLAIM_MAX;
	if (most < 1)
		most = 1;
	rio__slot *slot[RIO__CLAIM_MAX];
	uint64_t b0;
	size_t k;
	while ((k = rio__pool_claim(&l->pool, most, slot, &b0)) > 0) {
		/* filled in order; a failed batch stops the claim (its error
		 * stays in w->err), the later ones are not filled */
		size_t failed = k;
		int rc = 0;
		for (size_t j = 0; j < k && rc == 0; j++) {
			rio__error_clear(&w->err);
			/* views of the mappings or of the cache's copies, or
			 * reads into the slot: as the route says (route.c) */
			rc = l->route.reading == RIO__READ_MAP || l->route.reading == RIO__READ_MEMORY
			         ? fill_mapped(w, slot[j], b0 + j)
			         : fill(w, slot[j], b0 + j);
			if (rc < 0)
				failed = j;
		}
		file_batches(w, slot, k, b0, failed, rc);
	}
	return NULL;
}

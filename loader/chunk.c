/*
 * chunk.c — a worker's chunk: the records of one task, in the worker's own
 * buffer, shared by the three kinds of task (worker.c: uncompressed ranges
 * and global reads; piece_stream.c: compressed pieces) and by the placed
 * path's scratch buffer (placed.c). Frames are checked by frame_scan.h.
 */
#include "config.h"
#include "grow.h"
#include "loader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Under O_DIRECT and for read-ahead claims (c->huge), buffers are backed
 * by transparent huge pages where they are large enough
 * (rio__huge_alloc): an O_DIRECT read into 4 KiB pages becomes one
 * scatter-gather segment per page, and a device that takes a few hundred
 * segments per request then sees ~300 KiB requests whatever read_size is;
 * into huge pages, adjacent reads merge into requests of megabytes, as the
 * page cache's readahead gets (bench/loader.sh j). A read-ahead claim's
 * buffer (placed.c) is filled whole, claim after claim: its first filling
 * takes a fault per 2 MiB, not per 4 KiB page (on the remote engine's
 * thread, which writes it: 35600 faults for 256 MiB read from S3, 3600 in
 * huge pages). Only there: a huge page is resident whole, which would
 * raise the RSS of buffers read partly. */

int rio__chunk_grow(rio__chunk *c, size_t keep, size_t need)
{
	if (need <= c->cap && c->buf) /* after it, a buffer is always there */
		return 0;
	size_t cap = rio__grow_cap(c->cap, need ? need : 1, 1 << 20); /* never 0 */
	uint8_t *b = c->huge ? rio__huge_alloc(RIO__IO_ALIGN, cap)
	                     : rio__aligned_alloc(RIO__IO_ALIGN, cap);
	if (!b)
		return -ENOMEM;
	if (keep)
		memcpy(b, c->buf, keep);
	free(c->buf);
	c->buf = b;
	c->cap = cap;
	return 0;
}

int rio__chunk_add(rio__chunk *c, const rio__colplan *cp, size_t off, size_t size, uint32_t shard,
                   uint64_t index)
{
	if (rio__grow(&c->recs, &c->rec_cap, c->nrec + 1, sizeof *c->recs, 256))
		return -ENOMEM;
	if (cp->ncols && !c->row_ptrs &&
	    rio__grow(&c->rows, &c->rows_cap, c->nrec + 1, cp->row_stride, 256))
		return -ENOMEM;
	c->recs[c->nrec++] = (rio__chunk_rec){off, size, shard, index};
	return 0;
}

int rio__chunk_decode_last(rio__chunk *c, rio_loader *l, const char *path, uint64_t offset)
{
	const rio__colplan *cp = &l->cols;
	if (!cp->ncols)
		return 0;
	rio__chunk_rec *r = &c->recs[c->nrec - 1];
	uint8_t *row = rio__chunk_row(c, l, c->nrec - 1);
	if (!row)
		return -ENOMEM;
	char detail[300];
	int rc = rio__decode_row(cp, c->buf + r->off, r->size, row, detail, sizeof detail);
	if (rc == 0)
		return 0;
	c->nrec--; /* never delivered, whatever the policy */
	if (l->o.on_damage != RIO_DAMAGE_FAIL)
		return 0; /* counted as planned and not delivered (batcher.c) */
	return rio__error_set(&c->err, rc, path, offset, r->index, "%s", detail);
}

uint8_t *rio__chunk_row(rio__chunk *c, rio_loader *l, size_t i)
{
	if (!c->row_ptrs)
		return c->rows + i * l->cols.row_stride;
	if (rio__grow_zeroed(&c->rowp, &c->rowp_cap, i + 1, sizeof *c->rowp, 256))
		return NULL;
	if (!c->rowp[i]) { /* rows for this slot and the empty ones after it */
		uint8_t *got[64];
		size_t want = 0, end = i + 64 < c->rowp_cap ? i + 64 : c->rowp_cap;
		for (size_t k = i; k < end; k++)
			want += !c->rowp[k];
		int rc = rio__rows_take(&l->pool, l->cols.row_stride, got, want);
		if (rc < 0)
			return NULL;
		for (size_t k = i; k < end; k++)
			if (!c->rowp[k])
				c->rowp[k] = got[--want];
	}
	return c->rowp[i];
}

int rio__chunk_own(rio__chunk *c, rio_loader *l)
{
	if (rio__grow_zeroed(&c->own, &c->own_cap, c->nrec, sizeof *c->own, 256))
		return -ENOMEM;
	/* buffers released batches gave back, for the slots without one */
	size_t want = 0;
	for (size_t i = 0; i < c->nrec; i++)
		want += !c->own[i].data;
	if (want)
		rio__pool_spares_take(&l->pool, c->own, c->nrec);
	for (size_t i = 0; i < c->nrec; i++) {
		rio__recbuf *o = &c->own[i];
		size_t size = c->recs[i].size;
		if (size > o->cap || !o->data) { /* never NULL: views of empty records too */
			size_t cap = size ? size : 1;
			uint8_t *d = realloc(o->data, cap);
			if (!d)
				return -ENOMEM;
			o->data = d;
			o->cap = cap;
		}
		if (size)
			memcpy(o->data, c->buf + c->recs[i].off, size);
	}
	return 0;
}

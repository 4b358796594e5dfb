/*
 * worker.c — a worker thread: claims the plan's tasks in order and turns
 * each into a chunk of checked (and decoded) records.
 *
 * Three kinds of task:
 *   - a range of an uncompressed shard: one read of the bytes between two
 *     entries of the sparse index (io_uring or pread), then the frames are
 *     parsed in memory and both CRCs checked;
 *   - a range of a compressed shard: the piece's reader (a stream) is passed
 *     from task to task in order, and its records are copied into the chunk;
 *   - a global-shuffle task: one read per record, all submitted at once, at
 *     the offsets the full index gives.
 * Damage is handled as the reader does: an error with the file, offset and
 * record under FAIL; skipped and counted under SKIP. A worker holds at most
 * RIO__CHUNKS_PER_WORKER chunks; it waits for the batcher to give one back
 * before claiming another task (that is the backpressure).
 */
#include "config.h"
#include "loader_internal.h"
#include "stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 4096u

/* ---- chunk memory ----------------------------------------------------- */

/* Makes the chunk's buffer hold `need` bytes, keeping its first `keep`
 * bytes (a compressed chunk grows as it fills; a read starts afresh). */
static int chunk_grow(rio__chunk *c, size_t keep, size_t need)
{
	if (need <= c->cap)
		return 0;
	size_t cap = c->cap ? c->cap : 1 << 20;
	while (cap < need)
		cap *= 2;
	uint8_t *b = rio__aligned_alloc(ALIGN, cap);
	if (!b)
		return -ENOMEM;
	if (keep)
		memcpy(b, c->buf, keep);
	free(c->buf);
	c->buf = b;
	c->cap = cap;
	return 0;
}

static int chunk_add(rio__chunk *c, const rio__colplan *cp, size_t off, size_t size,
                     uint32_t shard, uint64_t index)
{
	if (c->nrec == c->rec_cap) {
		size_t n = c->rec_cap ? c->rec_cap * 2 : 256;
		rio__chunk_rec *r = realloc(c->recs, n * sizeof *r);
		if (!r)
			return -ENOMEM;
		c->recs = r;
		c->rec_cap = n;
	}
	if (cp->ncols && c->nrec == c->rows_cap) {
		size_t n = c->rows_cap ? c->rows_cap * 2 : 256;
		uint8_t *r = realloc(c->rows, n * cp->row_bytes);
		if (!r)
			return -ENOMEM;
		c->rows = r;
		c->rows_cap = n;
	}
	c->recs[c->nrec++] = (rio__chunk_rec){off, size, shard, index};
	return 0;
}

/* Decodes the record just added; on a mismatch drops it (SKIP) or fails. */
static int chunk_decode_last(rio__chunk *c, rio_loader *l, const char *path, uint64_t offset)
{
	const rio__colplan *cp = &l->cols;
	if (!cp->ncols)
		return 0;
	rio__chunk_rec *r = &c->recs[c->nrec - 1];
	char detail[300];
	int rc = rio__decode_row(cp, c->buf + r->off, r->size, c->rows + (c->nrec - 1) * cp->row_bytes,
	                         detail, sizeof detail);
	if (rc == 0)
		return 0;
	if (l->o.on_damage != RIO_DAMAGE_FAIL) {
		c->nrec--;
		c->skipped++;
		return 0;
	}
	return rio__error_set(&c->err, rc, path, offset, r->index, "%s", detail);
}

/* ---- frames in memory (uncompressed and global tasks) ----------------- */

/* Checks the frame at p (avail bytes): 1 valid with *len set, or a damage
 * code (RIO_ECORRUPT_LENGTH, RIO_ETOOLARGE, RIO_ETRUNCATED,
 * RIO_ECORRUPT_DATA). */
int rio__frame_check(const rio_loader *l, const uint8_t *p, size_t avail, uint64_t *len)
{
	if (avail < RIO_HEADER_SIZE)
		return RIO_ETRUNCATED;
	if (!rio__frame_header_valid(p, len))
		return RIO_ECORRUPT_LENGTH;
	if (*len > l->o.max_record_size)
		return RIO_ETOOLARGE;
	if (avail - RIO_HEADER_SIZE < *len + RIO_FOOTER_SIZE)
		return RIO_ETRUNCATED;
	if (l->o.verify_crc) {
		uint8_t want[RIO_FOOTER_SIZE];
		rio_frame_footer(want, p + RIO_HEADER_SIZE, (size_t)*len);
		if (memcmp(want, p + RIO_HEADER_SIZE + *len, RIO_FOOTER_SIZE) != 0)
			return RIO_ECORRUPT_DATA;
	}
	return 1;
}

/* The next offset after `pos` where a whole valid frame starts, or avail. */
static size_t resync(const rio_loader *l, const uint8_t *buf, size_t pos, size_t avail)
{
	for (size_t p = pos + 1; p + RIO_HEADER_SIZE <= avail; p++) {
		uint64_t len;
		if (rio__frame_check(l, buf + p, avail - p, &len) == 1)
			return p;
	}
	return avail;
}

/* Parses records [first, first + count) of a shard from `buf` (avail
 * bytes read from file offset `base`, where record `at` starts). Records
 * are numbered by frame, as the index counts them: a frame whose data CRC
 * fails keeps its number when it is skipped, and so does a damaged header
 * up to the next valid frame (taken as one record: a bit flip's damage; the
 * index cannot tell how many frames longer damage spans). Under SKIP a
 * range that ends early just ends. */
static int parse_range(rio__chunk *c, rio_loader *l, const rio__task *t, size_t start,
                       size_t avail, uint64_t base, uint64_t at, int at_file_end)
{
	const rio__shard *s = &l->ds.shards[t->shard];
	size_t pos = start;
	uint64_t index = at, end = t->first + t->count;
	/* the shard's last task also checks that nothing follows its last
	 * record (a torn write, or garbage an index would not show) */
	int check_tail = at_file_end && end == s->count;
	while (index < end || (check_tail && pos < avail)) {
		uint64_t len;
		int rc = rio__frame_check(l, c->buf + pos, avail - pos, &len);
		uint64_t off = base + (pos - start);
		if (rc == RIO_ETRUNCATED && (!at_file_end || pos == avail)) {
			/* the bytes end where the index lists another record: after
			 * skipped damage that is expected (the damage took its
			 * place); otherwise the shard and its index disagree */
			if (l->o.on_damage != RIO_DAMAGE_FAIL)
				return 0;
			return rio__error_set(&c->err, RIO_EBADINDEX, s->path, off, index,
			                      "the shard ends before the record its index lists");
		}
		if (rc == 1 && index >= end) { /* a whole frame the index does not list */
			if (l->o.on_damage == RIO_DAMAGE_FAIL)
				return rio__error_set(&c->err, RIO_EBADINDEX, s->path, off, index,
				                      "a record follows the last one its index lists");
			c->skipped++;
			pos += RIO_FRAME_OVERHEAD + (size_t)len;
			continue;
		}
		if (rc < 0) {
			/* damage before `first` is counted by the task (or the
			 * rank) whose records it hit; a cut ends this one too */
			int mine = index >= t->first || rc == RIO_ETRUNCATED;
			if (mine && l->o.on_damage == RIO_DAMAGE_FAIL)
				return rio__error_set(&c->err, rc, s->path, off, index, NULL);
			c->skipped += (uint64_t)mine;
			if (rc == RIO_ETRUNCATED)
				return 0; /* the file ends here */
			/* either way the damage stands for one record, as the
			 * index (and a scan) number it */
			pos = rc == RIO_ECORRUPT_DATA ? pos + RIO_FRAME_OVERHEAD + (size_t)len
			                              : resync(l, c->buf, pos, avail);
			index++;
			if (pos >= avail)
				return 0;
			continue;
		}
		if (index >= t->first) {
			if ((rc = chunk_add(c, &l->cols, pos + RIO_HEADER_SIZE, (size_t)len, t->shard,
			                    index)) < 0 ||
			    (rc = chunk_decode_last(c, l, s->path, off)) < 0)
				return rc;
		}
		index++;
		pos += RIO_FRAME_OVERHEAD + (size_t)len;
	}
	return 0;
}

static int run_uncompressed(rio__worker *w, rio__chunk *c, const rio__task *t)
{
	rio_loader *l = w->l;
	const rio__shard *s = &l->ds.shards[t->shard];
	uint64_t k0 = t->first / RIO__CKPT;
	uint64_t k1 = (t->first + t->count + RIO__CKPT - 1) / RIO__CKPT;
	uint64_t from = s->ckpt[k0];
	uint64_t to = k1 * RIO__CKPT >= s->count ? s->data_end : s->ckpt[k1];
	int at_file_end = to == s->data_end;
	uint64_t afrom = from, ato = to;
	int fd = s->fd;
	if (s->fd_direct >= 0) {
		fd = s->fd_direct;
		afrom = from & ~(uint64_t)(ALIGN - 1);
		ato = (to + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
	}
	int rc = chunk_grow(c, 0, (size_t)(ato - afrom) + RIO_HEADER_SIZE);
	if (rc < 0)
		return rc;
	rio__io_req req = {fd, afrom, (size_t)(ato - afrom), c->buf, 0};
	rc = rio__io_run(w->io, &req, 1);
	if (rc < 0)
		return rio__error_set(&c->err, rc, s->path, afrom, RIO__UNKNOWN, "read failed");
	c->file_bytes += (uint64_t)req.result;
	size_t start = (size_t)(from - afrom);
	size_t avail = (size_t)req.result;
	if (avail > (size_t)(to - afrom))
		avail = (size_t)(to - afrom);
	if (avail < start)
		avail = start;
	return parse_range(c, l, t, start, avail, from, k0 * RIO__CKPT, at_file_end);
}

/* ---- compressed ranges: the piece's stream, in turn ------------------- */

/* Decompresses more of the piece's stream into the chunk, after its `*used`
 * bytes, aiming at `want` bytes in all (at least one read). Returns the
 * bytes added, 0 at the end of the stream, or the codec's error. */
static ssize_t stream_more(rio__chunk *c, rio__piece_stream *ps, size_t *used, size_t want,
                           size_t step)
{
	size_t need = want > *used + step ? want : *used + step;
	int rc = chunk_grow(c, *used, need);
	if (rc < 0)
		return rc;
	ssize_t n = rio__istream_read(ps->in, c->buf + *used, need - *used);
	if (n > 0)
		*used += (size_t)n;
	return n;
}

/* Damage in a compressed stream stops the piece (nothing decoded after it
 * can be trusted, as the reader says): an error under FAIL, else counted. */
static int stream_damage(rio__chunk *c, rio_loader *l, rio__piece_stream *ps, int code,
                         const char *path, uint64_t off, const char *detail)
{
	ps->ended = 1;
	if (l->o.on_damage == RIO_DAMAGE_FAIL)
		return detail ? rio__error_set(&c->err, code, path, off, ps->pos, "%s", detail)
		              : rio__error_set(&c->err, code, path, off, ps->pos, NULL);
	c->skipped++;
	return 0;
}

/* Drops the bytes the chunk has parsed so far, [0, *p), keeping the rest:
 * a task that starts inside a piece skips the head of the stream in
 * buffers of one read, whatever the size of the head. Only while the
 * chunk holds no record (their offsets point into the buffer). */
static void stream_compact(rio__chunk *c, rio__piece_stream *ps, size_t *p, size_t *used)
{
	if (c->nrec > 0 || *p == 0)
		return;
	memmove(c->buf, c->buf + *p, *used - *p);
	ps->base += *p;
	*used -= *p;
	*p = 0;
}

/* Records [first, first + count) of a compressed piece. The stream is
 * decompressed straight into the chunk and the frames are checked there;
 * bytes past the task's last record (a frame cut by the read) are carried
 * to the piece's next task. The task that ends the shard reads on to the
 * end of the stream: what follows the last record (a record the index does
 * not list, damage, a cut or a bad checksum in the codec's trailer) is
 * found there, as the uncompressed path checks a shard's tail; and a
 * stream that ends before the records its index lists is an error too. */
static int run_compressed(rio__worker *w, rio__chunk *c, const rio__task *t)
{
	rio_loader *l = w->l;
	const rio__shard *s = &l->ds.shards[t->shard];
	rio__piece_stream *ps = &l->streams[t->piece];

	pthread_mutex_lock(&l->mu);
	while (!l->stop && ps->next_seq != t->seq)
		pthread_cond_wait(&l->work_cv, &l->mu);
	int stop = l->stop;
	pthread_mutex_unlock(&l->mu);
	if (stop)
		return 0;

	int rc = 0;
	if (!ps->in && !ps->ended) {
		ps->fd = open(s->path, O_RDONLY | O_CLOEXEC);
		if (ps->fd < 0)
			rc = -errno;
		else
			rc = rio__istream_open(&ps->in, ps->fd, s->comp);
		if (rc < 0)
			rc = rio__error_set(&c->err, rc, s->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		ps->pos = 0;
		ps->base = 0;
	}
	uint64_t end = t->first + t->count;
	int check_end = end == s->count;
	uint64_t file_before = ps->in ? rio__istream_file_bytes(ps->in) : 0;
	size_t used = 0, p = 0;
	if (rc == 0 && ps->ncarry > 0) {
		if ((rc = chunk_grow(c, 0, ps->ncarry)) == 0)
			memcpy(c->buf, ps->carry, ps->ncarry);
		used = ps->ncarry;
		ps->ncarry = 0;
	}
	/* read about what the task's records take, so little is carried */
	uint64_t avg = s->count ? s->data_end / s->count + 1 : 4096;
	size_t step = l->o.read_size;
	while (rc == 0 && ps->in && !ps->ended && (ps->pos < end || check_end)) {
		uint64_t off = ps->base + p;
		size_t avail = used - p;
		uint64_t len = 0;
		if (avail >= RIO_HEADER_SIZE && !rio__frame_header_valid(c->buf + p, &len)) {
			rc = stream_damage(c, l, ps, RIO_ECORRUPT_LENGTH, s->path, off, NULL);
			break;
		}
		if (avail >= RIO_HEADER_SIZE && len > l->o.max_record_size) {
			rc = stream_damage(c, l, ps, RIO_ETOOLARGE, s->path, off, NULL);
			break;
		}
		if (avail < RIO_HEADER_SIZE || avail - RIO_HEADER_SIZE < len + RIO_FOOTER_SIZE) {
			stream_compact(c, ps, &p, &used);
			size_t frame_end = p + RIO_HEADER_SIZE + (size_t)len + RIO_FOOTER_SIZE;
			/* the task's records in one go; a head being skipped, or
			 * the tail being checked, a read at a time */
			size_t ahead = ps->pos >= t->first && ps->pos < end
			                       ? (size_t)((end - ps->pos) * avg) + 4096
			                       : 0;
			ssize_t n = stream_more(c, ps, &used,
			                        used + ahead > frame_end ? used + ahead : frame_end, step);
			if (n < 0 && (n == RIO_ETRUNCATED || n == RIO_ECOMPRESSED)) {
				rc = stream_damage(c, l, ps, (int)n, s->path, ps->base + used,
				                   rio__istream_detail(ps->in));
				break;
			}
			if (n < 0) { /* an I/O error is no damage to skip */
				rc = rio__error_set(&c->err, (int)n, s->path, ps->base + used, ps->pos,
				                    "%s", rio__istream_detail(ps->in));
				break;
			}
			if (n == 0) { /* the end of the stream */
				if (used > p)
					rc = stream_damage(c, l, ps, RIO_ETRUNCATED, s->path, off, NULL);
				else if (ps->pos < end)
					rc = stream_damage(c, l, ps, RIO_EBADINDEX, s->path, off,
					                   "the stream ends before the record its index "
					                   "lists");
				ps->ended = 1;
				break;
			}
			continue;
		}
		if (l->o.verify_crc) {
			uint8_t want_crc[RIO_FOOTER_SIZE];
			rio_frame_footer(want_crc, c->buf + p + RIO_HEADER_SIZE, (size_t)len);
			if (memcmp(want_crc, c->buf + p + RIO_HEADER_SIZE + len, RIO_FOOTER_SIZE)) {
				rc = stream_damage(c, l, ps, RIO_ECORRUPT_DATA, s->path, off, NULL);
				break;
			}
		}
		if (ps->pos >= end) { /* a whole record after the shard's last one */
			rc = stream_damage(c, l, ps, RIO_EBADINDEX, s->path, off,
			                   "a record follows the last one its index lists");
			break;
		}
		if (ps->pos >= t->first &&
		    ((rc = chunk_add(c, &l->cols, p + RIO_HEADER_SIZE, (size_t)len, t->shard,
		                     ps->pos)) < 0 ||
		     (rc = chunk_decode_last(c, l, s->path, off)) < 0))
			break;
		ps->pos++;
		p += RIO_FRAME_OVERHEAD + (size_t)len;
	}
	/* carry what was read past the task's records */
	if (rc == 0 && used > p && !ps->ended) {
		if (used - p > ps->capcarry) {
			uint8_t *nc = realloc(ps->carry, used - p);
			if (!nc)
				rc = -ENOMEM;
			else
				ps->carry = nc, ps->capcarry = used - p;
		}
		if (rc == 0)
			memcpy(ps->carry, c->buf + p, used - p);
		ps->ncarry = rc == 0 ? used - p : 0;
	}
	ps->base += p;
	if (ps->in) {
		c->file_bytes += rio__istream_file_bytes(ps->in) - file_before;
		const rio__piece *pc = &l->ds.pieces[t->piece];
		if (rc < 0 || ps->ended || end >= pc->first + pc->count)
			rio__piece_stream_close(ps);
	}
	pthread_mutex_lock(&l->mu);
	ps->next_seq++;
	pthread_cond_broadcast(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
	return rc;
}

void rio__piece_stream_close(rio__piece_stream *ps)
{
	rio__istream_close(ps->in);
	ps->in = NULL;
	if (ps->fd >= 0)
		close(ps->fd);
	ps->fd = -1;
	ps->ncarry = 0;
}

/* ---- global shuffle: scattered reads ---------------------------------- */

static int run_global(rio__worker *w, rio__chunk *c, const rio__task *t)
{
	rio_loader *l = w->l;
	size_t n = (size_t)t->count;
	rio__io_req *reqs = malloc(n * sizeof *reqs);
	uint32_t *shard = malloc(n * sizeof *shard);
	uint64_t *recno = malloc(n * sizeof *recno);
	int rc = reqs && shard && recno ? 0 : -ENOMEM;
	size_t total = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint32_t piece;
		rio__dataset_locate(&l->ds, l->plan.perm[t->first + i], &piece, &shard[i], &recno[i]);
		const rio__shard *s = &l->ds.shards[shard[i]];
		uint64_t off = s->offset[recno[i]], len = s->framed[recno[i]];
		int fd = s->fd;
		if (s->fd_direct >= 0) {
			fd = s->fd_direct;
			rio__io_align(&off, &len, &total);
		}
		reqs[i] = (rio__io_req){fd, off, (size_t)len, (void *)(uintptr_t)total, 0};
		total += (size_t)len;
	}
	if (rc == 0)
		rc = chunk_grow(c, 0, total);
	for (size_t i = 0; i < n && rc == 0; i++)
		reqs[i].buf = c->buf + (uintptr_t)reqs[i].buf;
	if (rc == 0) {
		rc = rio__io_run(w->io, reqs, n);
		if (rc < 0)
			rc = rio__error_set(&c->err, rc, l->ds.shards[shard[0]].path, RIO__UNKNOWN,
			                    RIO__UNKNOWN, "read failed");
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const rio__shard *s = &l->ds.shards[shard[i]];
		uint64_t off = s->offset[recno[i]];
		size_t skip = (size_t)(off - reqs[i].offset);
		size_t pos = (size_t)((uint8_t *)reqs[i].buf - c->buf) + skip;
		size_t got = reqs[i].result > (ssize_t)skip ? (size_t)reqs[i].result - skip : 0;
		if (got > s->framed[recno[i]])
			got = s->framed[recno[i]];
		c->file_bytes += got;
		uint64_t len;
		int d = rio__frame_check(l, c->buf + pos, got, &len);
		if (d == 1 && len + RIO_FRAME_OVERHEAD != s->framed[recno[i]])
			d = RIO_EBADINDEX;
		if (d < 0) {
			if (l->o.on_damage == RIO_DAMAGE_FAIL) {
				rc = rio__error_set(&c->err, d, s->path, off, recno[i],
				                    d == RIO_EBADINDEX ? "the frame there is not the size "
				                                         "the index gives"
				                                       : NULL);
				break;
			}
			c->skipped++;
			continue;
		}
		if ((rc = chunk_add(c, &l->cols, pos + RIO_HEADER_SIZE, (size_t)len, shard[i],
		                    recno[i])) < 0 ||
		    (rc = chunk_decode_last(c, l, s->path, off)) < 0)
			break;
	}
	free(reqs);
	free(shard);
	free(recno);
	return rc;
}

/* ---- the thread ------------------------------------------------------- */

static void run_task(rio__worker *w, rio__chunk *c, uint64_t task)
{
	rio_loader *l = w->l;
	const rio__task *t = &l->plan.tasks[task];
	c->task = task;
	c->nrec = 0;
	c->skipped = 0;
	c->file_bytes = 0;
	rio__error_clear(&c->err);
	int rc;
	if (l->plan.global)
		rc = run_global(w, c, t);
	else if (l->ds.shards[t->shard].comp != RIO_COMPRESSION_NONE)
		rc = run_compressed(w, c, t);
	else
		rc = run_uncompressed(w, c, t);
	if (rc < 0 && c->err.code == 0)
		rio__error_set(&c->err, rc, l->ds.shards[t->shard].path, RIO__UNKNOWN, RIO__UNKNOWN,
		               NULL);
	c->error = rc < 0 ? rc : 0;
}

/* The piece stream of task `t` when it is a compressed range, else NULL. */
static rio__piece_stream *stream_of(rio_loader *l, uint64_t t)
{
	if (l->plan.global || t >= l->plan.ntasks)
		return NULL;
	const rio__task *task = &l->plan.tasks[t];
	if (l->ds.shards[task->shard].comp == RIO_COMPRESSION_NONE)
		return NULL;
	return &l->streams[task->piece];
}

/* May `w` claim the next task? Not while it has no free chunk, nor when the
 * task continues a compressed piece another worker is reading: that worker
 * takes it when done, so the stream (and its caches) stays on one thread
 * instead of bouncing between workers at every task. */
static int can_claim(rio__worker *w)
{
	rio_loader *l = w->l;
	if (w->free_chunks == 0)
		return 0;
	rio__piece_stream *ps = stream_of(l, l->next_task);
	return !ps || !ps->busy || ps->owner == w;
}

void *rio__worker_main(void *arg)
{
	rio__worker *w = arg;
	rio_loader *l = w->l;
	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!l->stop && l->next_task < l->plan.ntasks && !can_claim(w))
			pthread_cond_wait(&l->work_cv, &l->mu);
		if (l->stop || l->next_task >= l->plan.ntasks)
			break;
		uint64_t task = l->next_task++;
		rio__piece_stream *ps = stream_of(l, task);
		if (ps) {
			ps->busy = 1;
			ps->owner = w;
		}
		rio__chunk *c = NULL;
		for (int i = 0; i < RIO__CHUNKS_PER_WORKER && !c; i++)
			if (!w->chunks[i].lent)
				c = &w->chunks[i];
		c->lent = 1;
		w->free_chunks--;
		pthread_mutex_unlock(&l->mu);

		run_task(w, c, task);

		pthread_mutex_lock(&l->mu);
		c->next = l->done;
		l->done = c;
		pthread_cond_signal(&l->done_cv);
		if (ps) { /* this worker claims the piece's next task first, if any */
			ps->busy = 0;
			pthread_cond_broadcast(&l->work_cv);
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int rio__worker_init(rio__worker *w, rio_loader *l)
{
	memset(w, 0, sizeof *w);
	w->l = l;
	w->free_chunks = RIO__CHUNKS_PER_WORKER;
	for (int i = 0; i < RIO__CHUNKS_PER_WORKER; i++)
		w->chunks[i].owner = w;
	int rc = rio__io_open(&w->io, l->use_uring, l->o.queue_depth, l->o.read_size);
	if (rc < 0 || !l->use_uring)
		return rc;
	/* the shards' descriptors, registered with the worker's ring */
	size_t n = 2 * l->ds.nshards;
	int *fds = malloc((n ? n : 1) * sizeof *fds);
	if (fds) {
		for (size_t s = 0; s < l->ds.nshards; s++) {
			fds[2 * s] = l->ds.shards[s].fd;
			fds[2 * s + 1] = l->ds.shards[s].fd_direct;
		}
		rio__io_register_files(w->io, fds, n);
		free(fds);
	}
	return 0;
}

void rio__worker_free(rio__worker *w)
{
	for (int i = 0; i < RIO__CHUNKS_PER_WORKER; i++) {
		free(w->chunks[i].buf);
		free(w->chunks[i].recs);
		free(w->chunks[i].rows);
	}
	free(w->places);
	rio__io_close(w->io);
	memset(w, 0, sizeof *w);
}

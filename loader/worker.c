/*
 * worker.c — a worker thread: claims the plan's tasks in order and turns
 * each into a chunk of checked (and decoded) records.
 *
 * Three kinds of task:
 *   - a range of an uncompressed shard: one read of the bytes between two
 *     entries of the sparse index (io_uring or pread), then the frames are
 *     parsed in memory and both CRCs checked (here);
 *   - a range of a compressed shard: the piece's decompressing stream is
 *     passed from task to task in order (piece_stream.c);
 *   - a global-shuffle task: one read per record, all submitted at once, at
 *     the offsets the full index gives (here).
 * Damage is handled as the reader does: an error with the file, offset and
 * record under FAIL; skipped and counted under SKIP. A worker holds at most
 * RIO__CHUNKS_PER_WORKER chunks; it waits for the batcher to give one back
 * before claiming another task (that is the backpressure).
 */
#include "config.h"
#include "loader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- frames in memory (uncompressed and global tasks) ----------------- */

/* The next offset after `pos` where a valid header starts, or avail. */
static size_t resync(const rio_loader *l, const uint8_t *buf, size_t pos, size_t avail)
{
	size_t q = rio__frame_resync(buf, pos + 1, avail, l->o.max_record_size);
	return q + RIO_HEADER_SIZE <= avail ? q : avail;
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
		uint64_t len = 0; /* set by the frame check (GCC 12 cannot tell) */
		int rc = rio__loader_frame(l, c->buf + pos, avail - pos, &len);
		uint64_t off = base + (pos - start);
		if (rc == RIO_ETRUNCATED && (!at_file_end || pos == avail)) {
			/* the bytes end where the index lists another record: after
			 * skipped damage that is expected (the damage took its
			 * place); otherwise the shard and its index disagree */
			if (l->o.on_damage != RIO_DAMAGE_FAIL)
				return 0;
			return rio__error_set(&c->err, RIO_EBADINDEX, s->path, off, index,
			                      "the shard ends before the record its .idx lists");
		}
		if (rc == 1 && index >= end) { /* a whole frame the index does not list */
			if (l->o.on_damage == RIO_DAMAGE_FAIL)
				return rio__error_set(&c->err, RIO_EBADINDEX, s->path, off, index,
				                      "a record follows the last one its .idx lists");
			c->extra++;
			pos += rio__frame_size(len);
			continue;
		}
		if (rc < 0) {
			/* damage before `first` is counted by the task (or the
			 * rank) whose records it hit; a cut ends this one too */
			int mine = index >= t->first || rc == RIO_ETRUNCATED;
			rio__recover act = rio__frame_recovery(rc, 0);
			if (mine && rio__damage_action(l->o.on_damage, rc, 0) == RIO__RECOVER_STOP)
				return rio__frame_error(&c->err, rc, s->path, off, index, avail - pos, len,
				                        l->o.max_record_size);
			if (act == RIO__RECOVER_END)
				return 0; /* the file ends here */
			/* either way the damage stands for one record, as the
			 * index (and a scan) number it */
			pos = act == RIO__RECOVER_NEXT ? pos + rio__frame_size(len)
			                               : resync(l, c->buf, pos, avail);
			index++;
			if (pos >= avail)
				return 0;
			continue;
		}
		if (index >= t->first) {
			if ((rc = rio__chunk_add(c, &l->cols, pos + RIO_HEADER_SIZE, (size_t)len,
			                         t->shard, index)) < 0 ||
			    (rc = rio__chunk_decode_last(c, l, s->path, off)) < 0)
				return rc;
		}
		index++;
		pos += rio__frame_size(len);
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
	int fd = rio__shard_fd(l, s);
	if (fd != s->src.fd) {
		afrom = from & ~(uint64_t)(RIO__IO_ALIGN - 1);
		ato = (to + RIO__IO_ALIGN - 1) & ~(uint64_t)(RIO__IO_ALIGN - 1);
	}
	int rc = rio__chunk_grow(c, 0, (size_t)(ato - afrom) + RIO_HEADER_SIZE);
	if (rc < 0)
		return rc;
	rio__io_req req = {fd, afrom, (size_t)(ato - afrom), c->buf, 0, &s->src};
	rc = rio__io_run(w->io, &req, 1);
	if (rc < 0)
		return rio__io_failed(w->io, &c->err, rc, s->path, afrom);
	c->file_bytes += (uint64_t)req.result;
	size_t start = (size_t)(from - afrom);
	size_t avail = (size_t)req.result;
	if (avail > (size_t)(to - afrom))
		avail = (size_t)(to - afrom);
	if (avail < start)
		avail = start;
	return parse_range(c, l, t, start, avail, from, k0 * RIO__CKPT, at_file_end);
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
		int fd = rio__shard_fd(l, s);
		if (fd != s->src.fd) {
			rio__io_align(&off, &len, &total);
		}
		reqs[i] = (rio__io_req){fd, off, (size_t)len, (void *)(uintptr_t)total, 0, &s->src};
		total += (size_t)len;
	}
	if (rc == 0)
		rc = rio__chunk_grow(c, 0, total);
	for (size_t i = 0; i < n && rc == 0; i++)
		reqs[i].buf = c->buf + (uintptr_t)reqs[i].buf;
	if (rc == 0 && l->route.reading == RIO__READ_MAP) {
		/* mapped shards (plan.c): copies, not reads; bytes past the
		 * file's size at open read as missing (a truncated frame) */
		for (size_t i = 0; i < n; i++) {
			const rio__shard *s = &l->ds.shards[shard[i]];
			size_t got = reqs[i].offset < s->map_len ? s->map_len - (size_t)reqs[i].offset : 0;
			if (got > reqs[i].len)
				got = reqs[i].len;
			if (got)
				memcpy(reqs[i].buf, s->map + reqs[i].offset, got);
			reqs[i].result = (ssize_t)got;
		}
	} else if (rc == 0) {
		rc = rio__io_run(w->io, reqs, n);
		if (rc < 0)
			rc = rio__io_failed(w->io, &c->err, rc, l->ds.shards[shard[0]].path,
			                    RIO__UNKNOWN);
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
		uint64_t len = 0; /* set by the frame check (GCC 12 cannot tell) */
		int d = rio__loader_frame_entry(l, c->buf + pos, got, s->framed[recno[i]], &len);
		if (d < 0) {
			if (rio__damage_action(l->o.on_damage, d, 0) == RIO__RECOVER_STOP) {
				rc = rio__frame_error(&c->err, d, s->path, off, recno[i], got, len,
				                      l->o.max_record_size);
				break;
			}
			continue; /* counted as planned and not delivered */
		}
		if ((rc = rio__chunk_add(c, &l->cols, pos + RIO_HEADER_SIZE, (size_t)len, shard[i],
		                         recno[i])) < 0 ||
		    (rc = rio__chunk_decode_last(c, l, s->path, off)) < 0)
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
	c->extra = 0;
	c->index_mismatch = 0;
	c->file_bytes = 0;
	c->dead = 0;
	rio__error_clear(&c->err);
	int rc;
	if (l->plan.global)
		rc = run_global(w, c, t);
	else if (l->ds.shards[t->shard].comp != RIO_COMPRESSION_NONE)
		rc = rio__run_compressed(w, c, t);
	else
		rc = run_uncompressed(w, c, t);
	/* the records the task delivers (all of them before an error) */
	int orc = c->own_recs ? rio__chunk_own(c, l) : 0;
	if (rc == 0 && orc < 0)
		rc = orc;
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
 * task continues a compressed piece another worker claimed the last task
 * of and has not let go: it would only wait for its turn with a chunk in
 * hand. A worker lets go of a piece as soon as its task has framed the
 * records when they are to be decoded (piece_stream.c: another worker then
 * decompresses on while it decodes), else when its task is done, which
 * usually lets it take the next one itself (the stream and its caches stay
 * on one core). */
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
		if (ps && ps->busy && ps->owner == w) { /* kept for itself: let go */
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
	for (int i = 0; i < RIO__CHUNKS_PER_WORKER; i++) {
		w->chunks[i].owner = w;
		int buffered = l->o.shuffle == RIO_SHUFFLE_BUFFER;
		w->chunks[i].row_ptrs = buffered && l->cols.ncols > 0;
		w->chunks[i].own_recs = buffered && l->cols.ncols == 0;
		w->chunks[i].huge = l->ds.direct; /* O_DIRECT reads may land there */
	}
	int rc = rio__io_open(&w->io, l->use_uring, l->o.queue_depth, l->o.read_size);
	if (rc < 0 || !l->use_uring)
		return rc;
	/* the shards' descriptors, registered with the worker's ring */
	size_t n = 2 * l->ds.nshards;
	int *fds = malloc((n ? n : 1) * sizeof *fds);
	if (fds) {
		for (size_t s = 0; s < l->ds.nshards; s++) {
			fds[2 * s] = l->ds.shards[s].src.fd;
			fds[2 * s + 1] = l->ds.shards[s].src.fd_direct;
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
		free(w->chunks[i].rowp); /* the rows are the pool's */
		for (size_t k = 0; k < w->chunks[i].own_cap; k++)
			free(w->chunks[i].own[k].data);
		free(w->chunks[i].own);
	}
	free(w->places);
	rio__io_close(w->io);
	memset(w, 0, sizeof *w);
}

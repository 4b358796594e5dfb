/*
 * piece_stream.c — the tasks of a compressed piece (gzip, zlib, lz4).
 *
 * A compressed stream cannot be entered in the middle, so a piece has one
 * decompressing stream that its tasks pass along in order (their `seq`):
 * a task waits for its turn, decompresses straight into its chunk, and
 * frames the records there (header CRC, size limit); the bytes it read past
 * its last record are carried to the piece's next task. Then it gives the
 * turn on, and only then checks the data CRCs and decodes the Examples: so
 * while one worker decompresses, another decodes the previous task, and
 * even a single compressed shard uses more than one core. Raw records only
 * have CRCs to check, which is cheapest while the bytes just decompressed
 * are in the core's cache: they are checked while framing, and the worker
 * keeps the piece's next task for itself (moving the stream between cores
 * would cost more than it saves).
 *
 * Damage in a compressed stream stops the piece, as the reader does
 * (nothing decoded after it can be trusted): an error under FAIL, counted
 * once under SKIP. Damage found while framing ends the stream at once (the
 * frames a task passes over before its first record have their data CRCs
 * checked then, for the stream must not run on past damage there). A
 * data CRC that fails in the second phase is found after later tasks may
 * have gone on: the chunk is marked `dead` there, and the batcher (which
 * takes chunks in task order) drops the piece's later chunks and their
 * counts. Either way the outcome depends on the data alone.
 *
 * The task that ends the shard reads on to the end of the stream: what
 * follows the last record (a record the index does not list, damage, a cut
 * or a bad checksum in the codec's trailer) is found there, as the
 * uncompressed path checks a shard's tail; and a stream that ends before
 * the records its index lists is an error too.
 */
#include "config.h"
#include "loader_internal.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the framing phase met that stops the piece (code 0: nothing). */
typedef struct stream_stop {
	int code;
	rio_error err;
} stream_stop;

/* Decompresses more of the piece's stream into the chunk, after its `*used`
 * bytes, aiming at `want` bytes in all (at least one read). Returns the
 * bytes added, 0 at the end of the stream, or the codec's error. */
static ssize_t stream_more(rio__chunk *c, rio__piece_stream *ps, size_t *used, size_t want,
                           size_t step)
{
	size_t need = want > *used + step ? want : *used + step;
	int rc = rio__chunk_grow(c, *used, need);
	if (rc < 0)
		return rc;
	ssize_t n = rio__istream_read(ps->in, c->buf + *used, need - *used);
	if (n > 0)
		*used += (size_t)n;
	return n;
}

/* Damage met while framing: the stream ends there. */
static void stream_damage(stream_stop *st, rio__piece_stream *ps, int code, const char *path,
                          uint64_t off, const char *detail)
{
	ps->ended = 1;
	st->code = code;
	if (detail)
		rio__error_set(&st->err, code, path, off, ps->pos, "%s", detail);
	else
		rio__error_set(&st->err, code, path, off, ps->pos, NULL);
}

/* Drops the bytes the chunk has framed so far, [0, *p), keeping the rest:
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

/* Waits for the task's turn on its piece's stream; 0, or 1 when stopping. */
static int wait_turn(rio_loader *l, rio__piece_stream *ps, const rio__task *t)
{
	pthread_mutex_lock(&l->mu);
	while (!l->stop && ps->next_seq != t->seq)
		pthread_cond_wait(&l->work_cv, &l->mu);
	int stop = l->stop;
	pthread_mutex_unlock(&l->mu);
	return stop;
}

/* Gives the stream to the piece's next task; `release` lets any worker
 * claim that task now, else this worker keeps the first claim on it until
 * it has finished (worker.c's can_claim). */
static void pass_turn(rio_loader *l, rio__piece_stream *ps, int release)
{
	pthread_mutex_lock(&l->mu);
	ps->next_seq++;
	if (release)
		ps->busy = 0;
	pthread_cond_broadcast(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
}

/* Phase one, holding the turn: frames records [t->first, end) of the
 * stream into the chunk (their data CRCs checked too when `crc_now`),
 * reading on to the end of the stream when the task ends the shard.
 * Returns 0 or an error that is not damage (I/O, memory: in c->err);
 * damage goes to *st. */
static int frame_records(rio__chunk *c, rio_loader *l, const rio__task *t, rio__piece_stream *ps,
                         int crc_now, size_t *p_out, size_t *used_out, stream_stop *st)
{
	const rio__shard *s = &l->ds.shards[t->shard];
	uint64_t end = t->first + t->count;
	int check_end = end == s->count;
	size_t used = *used_out, p = 0;
	/* read about what the task's records take, so little is carried */
	uint64_t avg = s->count ? s->data_end / s->count + 1 : 4096;
	size_t step = l->o.read_size;
	int rc = 0;
	while (ps->in && !ps->ended && (ps->pos < end || check_end)) {
		uint64_t off = ps->base + p;
		size_t avail = used - p;
		uint64_t len = 0; /* stays 0 while the header is not all there */
		/* (no buffer before the first read: no pointer into it) */
		const uint8_t *at = avail ? c->buf + p : NULL;
		int d = rio__frame_check(at, avail, 0, l->o.max_record_size, 0, &len);
		if (d < 0) { /* a bad length (the data CRC comes below) */
			stream_damage(st, ps, d, s->path, off, NULL);
			break;
		}
		if (d == RIO__FRAME_MORE) {
			stream_compact(c, ps, &p, &used);
			size_t frame_end = p + rio__frame_size(len);
			/* the task's records in one go; a head being skipped, or
			 * the tail being checked, a read at a time */
			size_t ahead = ps->pos >= t->first && ps->pos < end
			                       ? (size_t)((end - ps->pos) * avg) + 4096
			                       : 0;
			ssize_t n = stream_more(c, ps, &used,
			                        used + ahead > frame_end ? used + ahead : frame_end, step);
			if (n == RIO_ETRUNCATED || n == RIO_ECOMPRESSED) {
				stream_damage(st, ps, (int)n, s->path, ps->base + used,
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
					stream_damage(st, ps, RIO_ETRUNCATED, s->path, off, NULL);
				else if (ps->pos < end)
					stream_damage(st, ps, RIO_EBADINDEX, s->path, off,
					              "the stream ends before the record its .idx lists");
				ps->ended = 1;
				break;
			}
			continue;
		}
		if ((crc_now || ps->pos < t->first) && l->o.verify_crc &&
		    !rio__frame_data_ok(c->buf + p, len)) {
			/* checked while the bytes are hot in this core's cache;
			 * and always in the head before the task's records, as
			 * the stream must not run on past damage there */
			stream_damage(st, ps, RIO_ECORRUPT_DATA, s->path, off, NULL);
			break;
		}
		if (ps->pos >= end) { /* a frame after the shard's last record */
			int whole = !l->o.verify_crc || rio__frame_data_ok(c->buf + p, len);
			if (whole && l->o.on_damage != RIO_DAMAGE_FAIL) {
				/* the shard holds more than its .idx lists: each
				 * one counted as skipped */
				c->extra++;
				c->index_mismatch = 1;
				p += rio__frame_size(len);
				continue;
			}
			stream_damage(st, ps, whole ? RIO_EBADINDEX : RIO_ECORRUPT_DATA, s->path, off,
			              whole ? "a record follows the last one its .idx lists" : NULL);
			break;
		}
		if (ps->pos >= t->first &&
		    (rc = rio__chunk_add(c, &l->cols, p + RIO_HEADER_SIZE, (size_t)len, t->shard,
		                         ps->pos)) < 0)
			break;
		ps->pos++;
		p += rio__frame_size(len);
	}
	*p_out = p;
	*used_out = used;
	return rc;
}

/* Phase two, after the turn has passed on: the data CRCs (unless phase one
 * checked them) and the decoding of the framed records, whose frames start
 * at stream offset buf0 + their place in the buffer. Keeps the records
 * that pass (compacting the chunk); returns 0, RIO_ECORRUPT_DATA at the
 * first bad data CRC (the piece ends there: the records from it on are
 * dropped), or a decoding error under FAIL; the error's place is in *e. */
static int check_records(rio__chunk *c, rio_loader *l, const rio__shard *s, uint64_t buf0,
                         int crc, rio_error *e)
{
	const rio__colplan *cp = &l->cols;
	size_t kept = 0;
	int rc = 0;
	for (size_t i = 0; i < c->nrec; i++) {
		rio__chunk_rec r = c->recs[i];
		uint64_t off = buf0 + r.off - RIO_HEADER_SIZE;
		const uint8_t *frame = c->buf + r.off - RIO_HEADER_SIZE;
		if (crc && l->o.verify_crc && !rio__frame_data_ok(frame, r.size)) {
			rc = rio__error_set(e, RIO_ECORRUPT_DATA, s->path, off, r.index, NULL);
			break;
		}
		if (cp->ncols) {
			char detail[300];
			uint8_t *row = rio__chunk_row(c, l, kept);
			if (!row) {
				rc = -ENOMEM;
				break;
			}
			int d = rio__decode_row(cp, c->buf + r.off, r.size, row, detail, sizeof detail);
			if (d < 0 && l->o.on_damage == RIO_DAMAGE_FAIL) {
				rc = rio__error_set(e, d, s->path, off, r.index, "%s", detail);
				break;
			}
			if (d < 0)
				continue; /* counted as planned and not delivered */
		}
		c->recs[kept++] = r;
	}
	c->nrec = kept;
	return rc;
}

int rio__run_compressed(rio__worker *w, rio__chunk *c, const rio__task *t)
{
	rio_loader *l = w->l;
	const rio__shard *s = &l->ds.shards[t->shard];
	rio__piece_stream *ps = &l->streams[t->piece];
	if (wait_turn(l, ps, t))
		return 0;

	/* phase one: frame the task's records, holding the turn */
	int rc = 0;
	if (!ps->in && !ps->ended) {
		ps->fd = s->src.ops->stream(&s->src, &c->err);
		rc = ps->fd < 0 ? ps->fd : rio__istream_open(&ps->in, ps->fd, s->comp);
		if (rc < 0 && ps->fd >= 0)
			rc = rio__error_set(&c->err, rc, s->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		ps->pos = 0;
		ps->base = 0;
	}
	uint64_t file_before = ps->in ? rio__istream_file_bytes(ps->in) : 0;
	size_t used = 0, p = 0;
	if (rc == 0 && ps->ncarry > 0) {
		if ((rc = rio__chunk_grow(c, 0, ps->ncarry)) == 0)
			memcpy(c->buf, ps->carry, ps->ncarry);
		used = ps->ncarry;
		ps->ncarry = 0;
	}
	/* raw records: CRCs while framing (the bytes are hot, and the stream
	 * stays with this worker); decoded ones: both in phase two */
	int decode = l->cols.ncols > 0;
	stream_stop st = {0};
	if (rc == 0)
		rc = frame_records(c, l, t, ps, !decode, &p, &used, &st);
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
	uint64_t buf0 = ps->base; /* the stream offset of c->buf[0] */
	ps->base += p;
	uint64_t end = t->first + t->count;
	if (ps->in) {
		c->file_bytes += rio__istream_file_bytes(ps->in) - file_before;
		const rio__piece *pc = &l->ds.pieces[t->piece];
		if (rc < 0 || ps->ended || end >= pc->first + pc->count)
			rio__piece_stream_close(ps);
	}
	/* phase two: check and decode, while another worker decompresses the
	 * next task. What it finds comes before anything phase one met further
	 * on. */
	pass_turn(l, ps, decode);
	rio_error e;
	int bad = check_records(c, l, s, buf0, decode, &e);
	if (bad < 0 && bad != RIO_ECORRUPT_DATA) { /* a record off the columns, FAIL */
		c->err = e;
		return bad;
	}
	if (bad == 0 && rc < 0)
		return rc; /* I/O: c->err says where */
	if (bad == RIO_ECORRUPT_DATA) {
		st.code = bad;
		st.err = e;
		c->dead = 1; /* later tasks of the piece may have gone on */
	}
	if (st.code == 0)
		return 0;
	if (st.code == RIO_EBADINDEX)
		c->index_mismatch = 1;
	if (l->o.on_damage == RIO_DAMAGE_FAIL) {
		c->err = st.err;
		return st.code;
	}
	return 0; /* what it did not deliver is counted (batcher.c) */
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

/*
 * io.c — the two read backends behind rio__io_run().
 *
 * A request is cut into pieces of at most read_size bytes. pread reads them
 * in order. io_uring keeps up to queue_depth pieces in flight, resubmits the
 * rest of a piece that came back short, and stops a request at the end of
 * the file (a piece that reads 0 bytes). A request's result is the number of
 * bytes read contiguously from its start. rio__io_start puts a run's first
 * queue_depth pieces in flight and returns (pread: nothing yet), so that the
 * caller can work while they are read; rio__io_finish reads the rest and
 * waits for them all. On pread, the pieces of sources that read many at
 * once (source.h: read_many, the remote kind) are read in one call per
 * kind, so that a shuffled batch's records are fetched together and in
 * parallel rather than one round trip each; those of a kind that reads in
 * two halves (read_start) are put in flight by rio__io_start, so that a
 * worker fills one claim's batches while the next claim's requests run.
 */
#include "config.h"
#include "io.h"
#include "internal.h"
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

typedef struct piece {
	size_t req;
	uint64_t offset;
	size_t len;
	uint8_t *buf;
	size_t done;
	int eof;
	int err;
} piece;

struct rio__io {
	int use_uring;
	unsigned depth;
	size_t read_size;
	piece *pieces;
	size_t cap;
	uint8_t *fixed[RIO__IO_FIXED]; /* the registered buffers, or NULL */
	size_t fixed_len[RIO__IO_FIXED];
	/* the run started and not yet finished (rio__io_start) */
	rio__io_req *reqs;
	size_t nreqs, np, next, inflight;
	size_t *retry; /* pieces whose rest must be read again */
	size_t nretry;
	int rc;
	int *file_slot;  /* registered files: fd -> its slot, or -1 */
	size_t nfile_slot;
	rio__io_req *many; /* pieces given to a source's read_many */
	size_t *many_piece; /* and which piece each is */
	size_t many_cap;
	/* on pread, the pieces put in flight by rio__io_start (read_start):
	 * io->many[0, pending_n), what their read_finish is given */
	const rio__source_ops *pending_ops;
	void *pending;
	size_t pending_n;
	rio_error err;   /* the last run's first failure's line, if a source
	                  * gave one (code 0: none)                        */
#ifdef HAVE_LIBURING
	struct io_uring ring;
#endif
};

int rio__io_open(rio__io **out, int use_uring, unsigned queue_depth, size_t read_size)
{
	*out = NULL;
	rio__io *io = calloc(1, sizeof *io);
	if (!io)
		return -ENOMEM;
	io->depth = queue_depth ? queue_depth : 128;
	io->read_size = read_size ? read_size : 256 * 1024;
	if (use_uring) {
#ifdef HAVE_LIBURING
		int rc = io_uring_queue_init(io->depth, &io->ring, 0);
		if (rc < 0) {
			free(io);
			return rc;
		}
		io->use_uring = 1;
#else
		free(io);
		return -ENOSYS;
#endif
	}
	*out = io;
	return 0;
}

void rio__io_close(rio__io *io)
{
	if (!io)
		return;
#ifdef HAVE_LIBURING
	if (io->use_uring)
		io_uring_queue_exit(&io->ring);
#endif
	if (io->pending) /* no request may outlive the memory it reads into */
		io->pending_ops->read_finish(io->pending, NULL);
	free(io->pieces);
	free(io->retry);
	free(io->file_slot);
	free(io->many);
	free(io->many_piece);
	free(io);
}

void rio__io_register_files(rio__io *io, const int *fds, size_t n)
{
#ifdef HAVE_LIBURING
	if (!io->use_uring || io->file_slot || n == 0 || n > 32768)
		return;
	int maxfd = -1;
	for (size_t i = 0; i < n; i++)
		maxfd = fds[i] > maxfd ? fds[i] : maxfd;
	if (maxfd < 0)
		return;
	int *slot = malloc(((size_t)maxfd + 1) * sizeof *slot);
	if (!slot)
		return;
	for (int fd = 0; fd <= maxfd; fd++)
		slot[fd] = -1;
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			slot[fds[i]] = (int)i;
	if (io_uring_register_files(&io->ring, fds, (unsigned)n) < 0) {
		free(slot);
		return;
	}
	io->file_slot = slot;
	io->nfile_slot = (size_t)maxfd + 1;
#else
	(void)io, (void)fds, (void)n;
#endif
}

void rio__io_register(rio__io *io, void *const *bufs, const size_t *lens, unsigned n)
{
#ifdef HAVE_LIBURING
	if (!io->use_uring || n > RIO__IO_FIXED)
		return;
	unsigned same = 1;
	for (unsigned i = 0; i < RIO__IO_FIXED; i++)
		if (i < n ? io->fixed[i] != bufs[i] || io->fixed_len[i] != lens[i] : io->fixed[i] != NULL)
			same = 0;
	if (same)
		return;
	if (io->fixed[0])
		io_uring_unregister_buffers(&io->ring);
	struct iovec iov[RIO__IO_FIXED];
	for (unsigned i = 0; i < RIO__IO_FIXED; i++) {
		io->fixed[i] = NULL;
		io->fixed_len[i] = 0;
		if (i < n)
			iov[i] = (struct iovec){bufs[i], lens[i]};
	}
	if (n && io_uring_register_buffers(&io->ring, iov, n) == 0)
		for (unsigned i = 0; i < n; i++) {
			io->fixed[i] = bufs[i];
			io->fixed_len[i] = lens[i];
		}
#else
	(void)io, (void)bufs, (void)lens, (void)n;
#endif
}

int rio__io_uring_available(void)
{
#ifdef HAVE_LIBURING
	struct io_uring ring;
	if (io_uring_queue_init(2, &ring, 0) < 0)
		return 0;
	io_uring_queue_exit(&ring);
	return 1;
#else
	return 0;
#endif
}

static int split(rio__io *io, const rio__io_req *reqs, size_t n, size_t *npieces)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += reqs[i].len ? (reqs[i].len + io->read_size - 1) / io->read_size : 0;
	if (count > io->cap) {
		piece *p = realloc(io->pieces, count * sizeof *p);
		if (!p)
			return -ENOMEM;
		io->pieces = p;
		io->cap = count;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t at = 0; at < reqs[i].len; at += io->read_size) {
			size_t len = reqs[i].len - at < io->read_size ? reqs[i].len - at : io->read_size;
			io->pieces[k++] = (piece){i, reqs[i].offset + at, len,
			                          (uint8_t *)reqs[i].buf + at, 0, 0, 0};
		}
	*npieces = k;
	return 0;
}

/* Room in io->many for np pieces. */
static int many_room(rio__io *io, size_t np)
{
	if (np <= io->many_cap)
		return 0;
	rio__io_req *m = realloc(io->many, np * sizeof *m);
	if (m)
		io->many = m;
	size_t *mp = m ? realloc(io->many_piece, np * sizeof *mp) : NULL;
	if (!mp)
		return -ENOMEM;
	io->many_piece = mp;
	io->many_cap = np;
	return 0;
}

/* The pieces of sources of kind `ops` not read yet, from piece k0 on, into
 * io->many (and which piece each is); their count. */
static size_t many_collect(rio__io *io, const rio__io_req *reqs, size_t np, size_t k0,
                           const rio__source_ops *ops)
{
	size_t m = 0;
	for (size_t k = k0; k < np; k++) {
		const piece *p = &io->pieces[k];
		const rio__io_req *q = &reqs[p->req];
		if (q->fd < 0 && q->src->ops == ops && !p->done && !p->eof && !p->err) {
			io->many[m] = (rio__io_req){-1, p->offset, p->len, p->buf, 0, q->src};
			io->many_piece[m++] = k;
		}
	}
	return m;
}

/* io->many[0, m)'s results into their pieces: read, short (eof) or failed;
 * e's line kept as the run's first failure's. */
static void many_take(rio__io *io, size_t m, const rio_error *e)
{
	if (e->code && !io->err.code)
		io->err = *e;
	for (size_t i = 0; i < m; i++) {
		piece *p = &io->pieces[io->many_piece[i]];
		ssize_t r = io->many[i].result;
		if (r < 0)
			p->err = (int)r;
		else
			p->done = (size_t)r;
		p->eof = r >= 0 && p->done < p->len;
	}
}

/* The pieces whose source reads many at once (source.h), in one read_many
 * call per kind of source: each piece read, short (eof) or failed. */
static int read_many(rio__io *io, const rio__io_req *reqs, size_t np)
{
	if (many_room(io, np) < 0)
		return -ENOMEM;
	for (size_t k0 = 0; k0 < np; k0++) {
		const piece *p0 = &io->pieces[k0];
		const rio__io_req *q0 = &reqs[p0->req];
		if (q0->fd >= 0 || !q0->src->ops->read_many || p0->done || p0->eof || p0->err)
			continue;
		size_t m = many_collect(io, reqs, np, k0, q0->src->ops);
		rio_error e = {0};
		q0->src->ops->read_many(io->many, m, &e);
		many_take(io, m, &e);
	}
	return 0;
}

/* On pread: the pieces of the first kind of source that reads in two
 * halves (source.h: read_start) put in flight, to be waited for by
 * many_finish (the rest is read then, as before). Without memory for it,
 * nothing is started: rio__io_finish reads them all. */
static void many_start(rio__io *io, const rio__io_req *reqs, size_t np)
{
	const rio__source_ops *ops = NULL;
	for (size_t k = 0; k < np && !ops; k++) {
		const rio__io_req *q = &reqs[io->pieces[k].req];
		if (q->fd < 0 && q->src->ops->read_start)
			ops = q->src->ops;
	}
	if (!ops || many_room(io, np) < 0)
		return;
	size_t m = many_collect(io, reqs, np, 0, ops);
	rio_error e = {0};
	ops->read_start(io->many, m, &io->pending, &e);
	if (!io->pending) { /* nothing in flight: every result is set */
		many_take(io, m, &e);
		return;
	}
	if (e.code && !io->err.code)
		io->err = e;
	io->pending_ops = ops;
	io->pending_n = m;
}

/* Waits for what many_start put in flight and takes its results. */
static void many_finish(rio__io *io)
{
	if (!io->pending)
		return;
	rio_error e = {0};
	io->pending_ops->read_finish(io->pending, &e);
	io->pending = NULL;
	many_take(io, io->pending_n, &e);
	io->pending_n = 0;
}

static int read_pread(rio__io *io, const rio__io_req *reqs, size_t np)
{
	int rc = read_many(io, reqs, np);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < np; k++) {
		piece *p = &io->pieces[k];
		while (p->done < p->len && !p->eof && !p->err) {
			const rio__io_req *q = &reqs[p->req];
			ssize_t r = q->fd >= 0 ? pread(q->fd, p->buf + p->done, p->len - p->done,
			                               (off_t)(p->offset + p->done))
			                       : q->src->ops->read_at(q->src, p->buf + p->done,
			                                              p->len - p->done,
			                                              p->offset + p->done);
			if (r < 0 && q->fd < 0) {
				errno = (int)-r;
				r = -1;
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				p->err = -errno;
				break;
			}
			if (r == 0) {
				p->eof = 1;
				break;
			}
			p->done += (size_t)r;
		}
	}
	return 0;
}

#ifdef HAVE_LIBURING
/* Puts pieces in flight up to the queue depth and submits them; with
 * `wait`, waits for at least one completion. */
static int uring_submit(rio__io *io, int wait)
{
	while (io->inflight < io->depth && (io->nretry > 0 || io->next < io->np)) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
		if (!sqe)
			break;
		size_t k = io->nretry > 0 ? io->retry[--io->nretry] : io->next++;
		piece *p = &io->pieces[k];
		uint8_t *dst = p->buf + p->done;
		unsigned n = (unsigned)(p->len - p->done);
		int fd = io->reqs[p->req].fd;
		int slot = (size_t)fd < io->nfile_slot ? io->file_slot[fd] : -1;
		int fixed = -1;
		for (int i = 0; i < RIO__IO_FIXED && fixed < 0; i++)
			if (io->fixed[i] && dst >= io->fixed[i] && dst + n <= io->fixed[i] + io->fixed_len[i])
				fixed = i;
		if (fixed >= 0)
			io_uring_prep_read_fixed(sqe, slot >= 0 ? slot : fd, dst, n, p->offset + p->done,
			                         fixed);
		else
			io_uring_prep_read(sqe, slot >= 0 ? slot : fd, dst, n, p->offset + p->done);
		if (slot >= 0)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, k);
		io->inflight++;
	}
	int s = wait ? io_uring_submit_and_wait(&io->ring, 1) : io_uring_submit(&io->ring);
	return s < 0 && s != -EINTR ? s : 0;
}

/* Takes the completions there are; a short piece goes back to be read on. */
static void uring_reap(rio__io *io)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	io_uring_for_each_cqe(&io->ring, head, cqe)
	{
		seen++;
		io->inflight--;
		piece *p = &io->pieces[io_uring_cqe_get_data64(cqe)];
		int res = cqe->res;
		if (res == -EAGAIN || res == -EINTR || (res > 0 && p->done + (size_t)res < p->len)) {
			if (res > 0)
				p->done += (size_t)res;
			size_t *nr = realloc(io->retry, (io->nretry + 1) * sizeof *nr);
			if (!nr) {
				io->rc = -ENOMEM;
				p->err = -ENOMEM;
				continue;
			}
			io->retry = nr;
			io->retry[io->nretry++] = (size_t)io_uring_cqe_get_data64(cqe);
		} else if (res < 0) {
			p->err = res;
		} else if (res == 0) {
			p->eof = 1;
		} else {
			p->done += (size_t)res;
		}
	}
	io_uring_cq_advance(&io->ring, seen);
}

static void read_uring(rio__io *io)
{
	while (io->rc == 0 && (io->next < io->np || io->inflight > 0 || io->nretry > 0)) {
		int s = uring_submit(io, 1);
		if (s < 0)
			io->rc = s;
		uring_reap(io);
	}
	/* on a failure, wait for what is in flight before returning */
	while (io->inflight > 0) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&io->ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&io->ring, cqe);
		io->inflight--;
	}
	io->nretry = 0;
}
#endif

int rio__io_start(rio__io *io, rio__io_req *reqs, size_t n)
{
	io->reqs = reqs;
	io->nreqs = n;
	io->next = io->inflight = io->nretry = 0;
	io->np = 0;
	io->err.code = 0;
	io->err.message[0] = 0;
	io->rc = split(io, reqs, n, &io->np);
#ifdef HAVE_LIBURING
	if (io->rc == 0 && io->use_uring)
		io->rc = uring_submit(io, 0);
#endif
	if (io->rc == 0 && !io->use_uring)
		many_start(io, reqs, io->np);
	return io->rc;
}

int rio__io_finish(rio__io *io)
{
	rio__io_req *reqs = io->reqs;
	size_t n = io->nreqs, np = io->np;
	int rc = io->rc;
	if (rc == -ENOMEM && np == 0) /* split failed: nothing was read */
		n = 0;
#ifdef HAVE_LIBURING
	if (io->use_uring) {
		read_uring(io);
		rc = io->rc;
	} else
#endif
	{
		many_finish(io);
		if (rc == 0)
			rc = read_pread(io, reqs, np);
	}
	io->reqs = NULL;
	io->nreqs = io->np = 0;
	/* each request: bytes read contiguously from its start */
	for (size_t i = 0; i < n; i++)
		reqs[i].result = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int stopped = 0;
		for (; k < np && io->pieces[k].req == i; k++) {
			piece *p = &io->pieces[k];
			if (stopped)
				continue;
			if (p->err < 0) {
				reqs[i].result = p->err;
				if (rc == 0)
					rc = p->err;
				stopped = 1;
				continue;
			}
			reqs[i].result += (ssize_t)p->done;
			if (p->done < p->len)
				stopped = 1;
		}
	}
	return rc;
}

int rio__io_failed(const rio__io *io, rio_error *err, int rc, const char *path, uint64_t offset)
{
	if (io->err.code) {
		*err = io->err;
		return io->err.code;
	}
	return rio__error_set(err, rc, path, offset, RIO__UNKNOWN, "read failed");
}

int rio__io_run(rio__io *io, rio__io_req *reqs, size_t n)
{
	rio__io_start(io, reqs, n);
	return rio__io_finish(io);
}

/*
 * io.h — the loader's reads: io_uring through liburing, or pread.
 *
 * Each worker owns one rio__io (its own ring: nothing is shared between
 * threads). A worker asks for a batch of reads at once — one large range cut
 * into read_size requests, or the scattered records of a global-shuffle task
 * — and io_uring keeps up to queue_depth of them in flight; pread runs them
 * one after another. Both fill the same buffers with the same bytes.
 */
#ifndef RIO_LOADER_IO_H
#define RIO_LOADER_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rio__io rio__io;
struct rio_error; /* recordio.h */

typedef struct rio__io_req {
	int fd;
	uint64_t offset;
	size_t len;
	void *buf;
	ssize_t result; /* bytes read (short only at the end of the file) or
	                 * a negative errno                                */
	const struct rio__source *src; /* fd < 0: read through its read_at
	                 * (source.h), on the pread backend only           */
} rio__io_req;

/* Opens a backend: use_uring 1 for io_uring (-ENOSYS, -EPERM... when the
 * kernel or the sandbox refuses it), 0 for pread. */
int rio__io_open(rio__io **out, int use_uring, unsigned queue_depth, size_t read_size);
/* Runs all `n` requests (large ones split into read_size pieces); each
 * request's `result` is set. Returns 0, or the first negative errno. */
int rio__io_run(rio__io *io, rio__io_req *reqs, size_t n);
void rio__io_close(rio__io *io);
/* After a run failed with `rc`: sets *err to its first failure as the
 * source told it (read_many, source.h: a remote read's URL, HTTP status
 * and S3 error code), else to "read failed" naming `path` and `offset`.
 * Returns the error's code. */
int rio__io_failed(const rio__io *io, struct rio_error *err, int rc, const char *path,
                   uint64_t offset);

/* The same as rio__io_run in two halves: start puts the first queue_depth
 * pieces in flight (io_uring; pread reads nothing yet) and returns, finish
 * reads the rest, waits for all and sets the results; finish's return is
 * run's. One run at a time per rio__io; `reqs` and the buffers stay
 * untouched by the caller in between. */
int rio__io_start(rio__io *io, rio__io_req *reqs, size_t n);
int rio__io_finish(rio__io *io);

/* Registers the n (at most RIO__IO_FIXED) buffers [bufs[i], bufs[i] +
 * lens[i]) with io_uring as fixed buffers (replacing earlier ones): reads
 * that land inside one use READ_FIXED, which saves mapping the pages for
 * every O_DIRECT request. A no-op for pread and where registration fails
 * (the reads then go the plain way). Never while a run is in flight. */
#define RIO__IO_FIXED 2
void rio__io_register(rio__io *io, void *const *bufs, const size_t *lens, unsigned n);

/* Registers the files the reads will name (fds[i] >= 0; -1 entries are
 * left out) with io_uring: reads of them then skip the kernel's per-request
 * file lookup and reference count. A no-op for pread and where
 * registration fails. */
void rio__io_register_files(rio__io *io, const int *fds, size_t n);

/* O_DIRECT alignment: every read starts, ends and lands on 4 KiB. */
#define RIO__IO_ALIGN 4096u

/* Widens the read [*offset, *offset + *len) to RIO__IO_ALIGN boundaries and
 * moves its place in the buffer, *at, up to one; returns where the wanted
 * bytes start in the buffer. */
static inline size_t rio__io_align(uint64_t *offset, uint64_t *len, size_t *at)
{
	uint64_t a = *offset & ~(uint64_t)(RIO__IO_ALIGN - 1);
	uint64_t end = (*offset + *len + RIO__IO_ALIGN - 1) & ~(uint64_t)(RIO__IO_ALIGN - 1);
	*at = (*at + RIO__IO_ALIGN - 1) & ~(size_t)(RIO__IO_ALIGN - 1);
	size_t start = *at + (size_t)(*offset - a);
	*offset = a;
	*len = end - a;
	return start;
}

/* 1 when io_uring can be set up here (a probe ring is created and freed). */
int rio__io_uring_available(void);

#endif /* RIO_LOADER_IO_H */

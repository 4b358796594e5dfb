/*
 * source.h — where a shard's bytes come from: the one interface between the
 * loader and its storage. The dataset (dataset.c) opens each shard through
 * a source and keeps it in rio__shard.src; the plan, the workers and the
 * batcher read through what the source gives (a descriptor for positional
 * reads, a mapping, a stream) and never ask what kind it is. Local files
 * (source_file.c) are the one kind today; object storage plugs in here.
 *
 * The contract, for every kind:
 *   - open:     src->path set by the caller; fills src->size (the object's
 *               bytes, fixed for the loader's life: a source whose object
 *               changes while open must fail its reads, never return other
 *               bytes) and src->fd. Fails with a one-line rio_error naming
 *               the path. src->fd_direct stays -1.
 *   - direct:   optional (NULL: never). Opens src->fd_direct, a descriptor
 *               whose reads bypass the page cache (O_DIRECT: offsets,
 *               lengths and buffers aligned to 4 KiB, io.h); where the
 *               storage refuses it, -1 and 0 returned, or with `required`
 *               an error.
 *   - fd:       a descriptor that pread() and io_uring read at offsets
 *               (io.c), from any thread at once; or -1 when the source has
 *               none: the loader then reads through read_at with the pread
 *               backend (io_uring needs descriptors).
 *   - read_at:  up to `len` bytes at `offset` into buf, from any thread at
 *               once: the count (short only at the end of the object) or a
 *               negative errno. Every source has it.
 *   - read_many: optional (NULL: each request is read through read_at).
 *               Reads n requests at once (io.h's rio__io_req with fd -1
 *               and src a source of this kind; any number of sources),
 *               from any thread: where a request costs a round trip (the
 *               remote kind), the nearby bytes of one object are fetched
 *               together and the requests run in parallel
 *               (rio__remote_read_many). Sets every request's result as
 *               read_at returns it; 0 or the first error, its one line in
 *               *err (may be NULL). The pread backend (io.c) uses it.
 *   - read_start, read_finish: optional, with read_many: read_many in two
 *               halves, so that the caller works while the requests run
 *               (the pread backend's rio__io_start puts them in flight,
 *               rio__io_finish waits). read_start leaves in *pending what
 *               read_finish must be given, whatever it returns (NULL: no
 *               memory, every result set, nothing in flight); the requests
 *               and their buffers stay untouched by the caller until
 *               read_finish, which sets every result: 0 or the first error.
 *   - take_held: optional (NULL: none). Bytes [offset, offset + len) that
 *               the source holds already (a remote shard's first part,
 *               taken at open) in a buffer of `cap` bytes or more, handed
 *               over (the caller frees it with free()), *got the count
 *               (short only at the object's end); or NULL: not held, read
 *               them. Each held buffer is handed over once.
 *   - stream:   a new descriptor that read() takes the whole object
 *               through, in order from its first byte (a pipe will do): a
 *               compressed shard is read this way (its offsets are in the
 *               decompressed stream). The caller closes it. A negative
 *               errno, the message in *err, when it cannot be had.
 *   - map:      optional (NULL: never mapped). Maps the object read-only
 *               into src->map (src->size bytes), for views and copies of
 *               shuffled records without a read each (route.h: MAP);
 *               unmap undoes it.
 *   - resident: optional (NULL: unknown, taken as not resident). The share
 *               of the object's bytes that reading would not take from the
 *               device (the page cache), 0 to 1: route.h picks how to read
 *               from it. Cheap enough for every epoch's start.
 *   - close:    frees what open and map took; src is left closed (fd -1).
 *
 * None of these prints or exits; errors are returned, with rio_error's
 * one line where the operation takes one.
 */
#ifndef RIO_LOADER_SOURCE_H
#define RIO_LOADER_SOURCE_H

#include "loader.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rio__source rio__source;
struct rio__io_req; /* io.h */

typedef struct rio__source_ops {
	const char *name; /* the kind, e.g. "file" */
	int (*open)(rio__source *src, rio_error *err);
	ssize_t (*read_at)(const rio__source *src, void *buf, size_t len, uint64_t offset);
	int (*stream)(const rio__source *src, rio_error *err);
	int (*direct)(rio__source *src, int required, rio_error *err);
	int (*map)(rio__source *src, rio_error *err);
	void (*unmap)(rio__source *src);
	double (*resident)(const rio__source *src);
	void (*close)(rio__source *src);
	int (*read_many)(struct rio__io_req *reqs, size_t n, rio_error *err);
	int (*read_start)(struct rio__io_req *reqs, size_t n, void **pending, rio_error *err);
	int (*read_finish)(void *pending, rio_error *err);
	void *(*take_held)(const rio__source *src, uint64_t offset, size_t len, size_t cap,
	                   ssize_t *got);
} rio__source_ops;

struct rio__source {
	const rio__source_ops *ops;
	const char *path;     /* the caller's, kept while open              */
	uint64_t size;        /* the object's bytes, at open               */
	int fd;               /* positional reads, or -1 (read_at)         */
	int fd_direct;        /* O_DIRECT reads, or -1                     */
	const uint8_t *map;   /* map: the object, size bytes; or NULL     */
	void *priv;           /* the kind's own state                      */
	const struct rio__source_ctx *ctx; /* what it shares, or NULL: given
	                       * to rio__source_open                       */
};

/* What the sources of one loader share: made by its dataset (dataset.c),
 * lent to each source at open and outliving them. */
typedef struct rio__source_ctx {
	struct rio__shard_cache *cache; /* the remote kind's copies on local
	                       * disk (shard_cache.h), or NULL            */
	struct rio__remote *remote; /* the remote kind's one client
	                       * (recordio/remote/remote.h, thread-safe):
	                       * the AWS settings read once, one engine
	                       * thread and one `inflight` for the loader,
	                       * and the requests of all its shards coalesced
	                       * together (read_many); or NULL: each remote
	                       * source opens its own                      */
} rio__source_ctx;

/* The local files' kind (source_file.c). */
extern const rio__source_ops rio__source_file;
/* s3:// and http(s):// URLs (source_remote.c). */
extern const rio__source_ops rio__source_remote;

/* The kind that serves `path`: remote for a URL, else local files. */
const rio__source_ops *rio__source_kind(const char *path);

/* 1 when there is a file (an object) at `path`, of whichever kind serves
 * it (a sidecar's probe: an error is taken as not there); `ctx` as for
 * rio__source_open. */
int rio__source_exists(const char *path, const rio__source_ctx *ctx);
/* The remote kind's (source_remote.c). */
int rio__source_remote_exists(const char *url, const rio__source_ctx *ctx);

/* Opens `path` with the kind that serves it: src->ops, src->path and the
 * rest set (src closed again on an error), sharing what `ctx` holds (may
 * be NULL; it must outlive src). */
int rio__source_open(rio__source *src, const char *path, const rio__source_ctx *ctx,
                     rio_error *err);
/* Closes src (a closed or zeroed one too: fd and fd_direct -1 or 0 with
 * ops NULL). */
void rio__source_close(rio__source *src);

#endif /* RIO_LOADER_SOURCE_H */

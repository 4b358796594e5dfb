/*
 * shard_cache.h — the loader's shard cache on local disk (opts.shard_cache,
 * --shard-cache DIR, --shard-cache-limit SIZE): whole remote shards
 * downloaded once, verified, and served from the local disk while the
 * loader lives and in later runs.
 *
 * The directory may be shared by several ranks and processes on one host.
 * What is in it:
 *   rio-KKKKKKKKKKKKKKKK.shard        a complete, verified copy of a shard;
 *   rio-KKKKKKKKKKKKKKKK.idx          ... of a shard's .idx sidecar; K is a
 *                                     hash of the URL, the size and the
 *                                     ETag (a replaced object is another
 *                                     entry)
 *   rio-K.part-PID-SIZE               a download in progress by PID (SIZE:
 *                                     the bytes it will take)
 *   rio-cache.lock                    the lock of the directory (flock)
 * Anything else in DIR is not the cache's: it is never read, counted or
 * deleted (mosaicml/streaming issue 988).
 *
 * The rules:
 *   - a download goes to its .part name and is renamed to .shard only once
 *     complete and verified (its size, and for a shard every record's
 *     CRCs, checked
 *     through a reader as the bytes arrive and are written: one pass),
 *     so a half-written or damaged file is never served; a
 *     .part whose process is gone (killed mid-way) is deleted at the next
 *     open of the cache;
 *   - a copy in use is held with a shared flock(2) for as long as the
 *     loader has the shard open (which is its whole life: every shard the
 *     rank reads this epoch and later ones); eviction takes the least
 *     recently used copies that no process holds (a non-blocking
 *     exclusive flock succeeds) until the new one fits, under the
 *     directory's lock, which is also held when a copy is opened and
 *     locked, so no copy is deleted between the two;
 *   - a shard that cannot fit (larger than the limit, or the limit taken
 *     by copies in use) is not cached: the caller streams it from the
 *     network. Nothing ever waits for room (streaming issue 417);
 *   - two processes wanting the same shard: the second waits for the
 *     first's download (its .part) to end, then uses its copy.
 */
#ifndef RIO_LOADER_SHARD_CACHE_H
#define RIO_LOADER_SHARD_CACHE_H

#include "internal.h"

#include <stdint.h>

struct rio__robj;
typedef struct rio__shard_cache rio__shard_cache;

/* Opens the cache in `dir` (made when missing), limited to `limit` bytes
 * of copies (0: no limit), deleting the .part files of processes that are
 * gone. Errors name the directory. */
int rio__shard_cache_open(rio__shard_cache **out, const char *dir, uint64_t limit,
                          rio_error *err);
void rio__shard_cache_close(rio__shard_cache *c);

/* The local copy of the remote object `o`, a shard whose records are
 * checked as it is downloaded when `records`, else an object of any kind
 * (a shard's .idx: its size checked): a descriptor of the complete,
 * verified copy (held with a shared flock until it is closed: the caller
 * closes it) and its path in *path (malloc'd), downloaded first when
 * missing. RIO__SHARD_CACHE_STREAM (1) when it does not fit (the caller
 * reads from the network); a negative error otherwise (a download that
 * failed, or a copy that is damaged: named in err). */
#define RIO__SHARD_CACHE_STREAM 1
/* A download's parts in flight (of part_size, 8 MiB by default: 32 MiB
 * held), the next asked for as soon as one is written; downloads run
 * inflight / RIO__SHARD_CACHE_PARTS at once (dataset.c), so that they
 * keep as many parts in flight as the read-ahead does */
#define RIO__SHARD_CACHE_PARTS 4
int rio__shard_cache_get(rio__shard_cache *c, struct rio__robj *o, int records, int *fd,
                         char **path, rio_error *err);

#endif /* RIO_LOADER_SHARD_CACHE_H */

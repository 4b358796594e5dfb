/*
 * parts.h — an epoch's bytes read ahead in parts: for shards in order from
 * sources that read in two halves (source.h: read_start, read_finish; the
 * remote kind), the byte ranges the epoch reads, cut at multiples of the
 * part size of each object (the aligned ranges a plain parallel download
 * asks for: one GET a part, the same requests as curl's), asked for in
 * epoch order, `window` of them at a time, the next as soon as one is used
 * up. The placed path's workers (placed.c) check and copy their claims'
 * records into the batches straight from the parts as they come in, so a
 * claim's batches wait only for their own bytes, and `inflight` GETs stay
 * in flight whatever the claims' sizes and boundaries.
 *
 * Thread-safe: the workers read through one rio__parts at once. A part is
 * kept until all its bytes were released (each byte is got and released
 * once), then its buffer goes to the next part.
 */
#ifndef RIO_LOADER_PARTS_H
#define RIO_LOADER_PARTS_H

#include "loader.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rio__source;
typedef struct rio__parts rio__parts;

/* An empty set of parts of `part` bytes for shards 0 .. nshards - 1. 0 or
 * -ENOMEM. */
int rio__parts_new(rio__parts **out, size_t part, size_t nshards);
/* Adds bytes [from, to) of shard `shard` (read through `src`) as the next
 * the epoch reads: 0, or -EINVAL when the shard's bytes so far do not end
 * at `from` (a shard read in two stretches, or backwards: not in order;
 * the caller reads another way), -ENOMEM. */
int rio__parts_add(rio__parts *ps, uint32_t shard, const struct rio__source *src, uint64_t from,
                   uint64_t to);
/* Asks for the first parts (after the last add), at most `window` asked
 * for and not used up at once from now on: at least as many as one
 * reader holds at once (got and not released), or it waits for ever. 0 or
 * -ENOMEM (nothing asked for). */
int rio__parts_start(rio__parts *ps, size_t window);
/* Bytes [offset, offset + len) of shard `shard`, waiting for the parts
 * that hold them: *at points at them, in their part when one holds them
 * all (no copy), else at `scratch` (len bytes), where they are copied. The
 * count (short only where the object ended early), or a negative error
 * with its line in *err (the source's: the URL, the HTTP status;
 * -ECANCELED after rio__parts_stop; -EINVAL for bytes no add gave). The
 * bytes stay there until rio__parts_release of them. */
ssize_t rio__parts_get(rio__parts *ps, uint32_t shard, uint64_t offset, size_t len,
                       void *scratch, const void **at, rio_error *err);
/* The caller is done with bytes [offset, offset + len) of shard `shard`
 * (what a get gave): a part whose bytes are all released is freed, and
 * the next part asked for. Each byte is released once. */
void rio__parts_release(rio__parts *ps, uint32_t shard, uint64_t offset, size_t len);
/* Makes every wait for a part that is not asked for return -ECANCELED
 * (the epoch stops: the workers that would use up the parts before it may
 * be gone). */
void rio__parts_stop(rio__parts *ps);
/* Waits for the parts still in flight (no read outlives its buffer) and
 * frees everything. The readers must be gone. NULL is a no-op. */
void rio__parts_free(rio__parts *ps);

#endif /* RIO_LOADER_PARTS_H */

/*
 * remote_whole.h — a remote shard fetched whole and mapped, for the epochs
 * whose route reads it so (route.h: a globally shuffled epoch of remote
 * shards whose records, asked for a batch at a time, would cost a GET
 * each): the remote source's map (source_remote.c).
 *
 * Why: a globally shuffled batch's records lie far apart in the set, so
 * coalescing nearby ranges (RIO__REMOTE_COALESCE_GAP) merges nothing and
 * every record costs a request; fetching the shard whole costs a request
 * per part_size bytes, once for the loader's life.
 */
#ifndef RIO_LOADER_REMOTE_WHOLE_H
#define RIO_LOADER_REMOTE_WHOLE_H

#include "source.h"

struct rio__robj;

/* Maps src (src->map, src->size bytes, read-only). `o`: the object,
 * fetched whole (parallel ranged GETs of part_size) into a private spill:
 * an unlinked file in $TMPDIR (or /tmp), its blocks reserved first
 * (posix_fallocate), taken only while it leaves at least half of that
 * file system's free space free (else -ENOSPC, named in err); the spill
 * goes when src is unmapped or the process ends, and it is never in the
 * shard cache's directory. NULL: src->fd, the shard cache's local copy, is
 * mapped as a local file. Unmapped by rio__source_file.unmap. */
int rio__remote_whole_map(rio__source *src, struct rio__robj *o, rio_error *err);

/* 0 when `bytes` fetched whole leave at least half of the spill's file
 * system's free space free, else -ENOSPC with a line naming `name` (may be
 * NULL): checked for all of an epoch's shards before any is fetched
 * (dataset.c), and for each as it is. */
int rio__remote_whole_room(uint64_t bytes, const char *name, rio_error *err);

/* The RIO_REMOTE_WHOLE environment variable, read at the loader's open
 * (dataset.c): "auto" or unset (0: route.c's estimate decides), "always"
 * (1), "never" (-1: the coalesced ranged GETs); another value is an error
 * naming it. For tests and for measuring the two ways. */
int rio__remote_whole_mode(int *mode, rio_error *err);

#endif /* RIO_LOADER_REMOTE_WHOLE_H */

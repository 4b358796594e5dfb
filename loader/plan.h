/*
 * plan.h — in which order a rank reads its share (dataset.h) each epoch.
 *
 * The plan (rio__plan) is rebuilt for every epoch from the seed, the
 * epoch and the rank only: a list of tasks, each a run of records one worker
 * reads as a unit (a chunk). Workers run tasks in any order and at any
 * speed; the batcher consumes them in task order, so the plan alone fixes
 * what the rank delivers. That is the determinism rule.
 */
#ifndef RIO_LOADER_PLAN_H
#define RIO_LOADER_PLAN_H

#include "dataset.h"
#include "loader.h"
#include "rng.h"

#include <stdint.h>

/* One unit of work. RANGE tasks read records [first, first + count) of
 * `shard`; GLOBAL tasks read positions [first, first + count) of the
 * epoch's permutation. `seq` orders the tasks of one piece (a compressed
 * piece's tasks pass one reader along). */
typedef struct rio__task {
	uint32_t piece;
	uint32_t shard;
	uint64_t first;
	uint64_t count;
	uint64_t seq;
} rio__task;

typedef struct rio__plan {
	rio__task *tasks;
	uint64_t ntasks;
	uint64_t *perm;         /* GLOBAL: rank ordinals in delivery order   */
	int global;
} rio__plan;

/* Builds epoch `epoch`'s plan. */
int rio__plan_build(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                    uint64_t epoch);
void rio__plan_free(rio__plan *p);
/* The placed path's plan: p (built by rio__plan_build) made one task per
 * batch over the order it gives (with BUFFER, the shuffle buffer's order as
 * the permutation rio__plan_buffer_perm makes): task b is positions [b *
 * batch_size, ...) of the epoch's sequence. 0 or -ENOMEM. */
int rio__plan_batches(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                      uint64_t epoch);

/* The shuffle buffer's moves (batcher.c: shuffle_add, shuffle_drain)
 * replayed on numbers rather than records, with its own RNG stream: the
 * order a rank's BUFFER epoch delivers, found without reading any data
 * (elastic.c replays interrupted stages with it; placed.c, with opts.map,
 * runs that order as a permutation). */
#define RIO__RNG_SHUFFLE_BUFFER 3
typedef struct rio__bufsim {
	uint64_t *buf;
	size_t nbuf, want;
	rio__rng rng;
} rio__bufsim;
/* For rank `rank`'s epoch `epoch` of `records` records. 0 or -ENOMEM. */
int rio__bufsim_init(rio__bufsim *b, const rio_loader_opts *o, uint64_t epoch, int rank,
                     uint64_t records);
/* One number in: 1 with *out the number that leaves the buffer for it, or
 * 0 while the buffer fills. */
int rio__bufsim_push(rio__bufsim *b, uint64_t in, uint64_t *out);
/* The end of the epoch: 1 with *out the next number out, 0 once empty. */
int rio__bufsim_drain(rio__bufsim *b, uint64_t *out);
void rio__bufsim_free(rio__bufsim *b);

/* BUFFER with opts.map (the placed path): p's tasks, a BUFFER plan of
 * ds's pieces (without holes), made the permutation p->perm of the rank's
 * ordinals that the shuffle buffer delivers them in: the same order as the
 * pipeline's for the same seed, epoch and rank. 0 or -ENOMEM. */
int rio__plan_buffer_perm(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                          uint64_t epoch);

#endif /* RIO_LOADER_PLAN_H */

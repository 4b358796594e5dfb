/*
 * start.h — where a run starts: afresh, from rank 0's initial parameters,
 * or from a checkpoint (--resume): read on rank 0 before anything else
 * opens, planned (resume.h) and, once the parts are up, placed by the
 * strategy. Also the pieces of a checkpoint every strategy places the
 * same way: the tensors and the --embed tables, broadcast from rank 0.
 */
#ifndef RIO_TRAINER_START_H
#define RIO_TRAINER_START_H

#include "strategy_ops.h"

/* Collective, --resume, before the loaders open: rank 0 reads
 * DIR/checkpoint into *ck (kept there until placed; none: said, and the
 * run starts afresh) and checks what must match before the loaders open
 * (seed, optimizer, shard count); every rank gets the plan. A failure:
 * one line, and every rank exits (1; 2 for a refused plan). */
void tr_start_read(const tr_config *c, tr_ckpt *ck, tr_resume_plan *plan);

/* Collective, once the strategy is open: afresh (c->plan.resume 0) rank
 * 0's initial parameters on every rank; or rank 0's checkpoint ck
 * matched against the model and the data, its training seconds, and the
 * strategy's place() (ck freed on rank 0). */
void tr_start(const tr_parts *p, tr_strategy_state *s, tr_ckpt *ck);

/* Collective, in a strategy's place() where every rank steps together
 * (allreduce, pipeline): the cursor, the epoch's sums and the optimizer's
 * step count from rank 0's checkpoint c (NULL elsewhere). */
void tr_start_counters(const tr_parts *p, const tr_ckpt *c);

/* Collective, in a strategy's place(): the parameters (which 0) and the
 * optimizer's state buffers (1, 2) of rank 0's checkpoint c (NULL
 * elsewhere), each broadcast, checked, and handed to fn on every rank. */
typedef void (*tr_place_fn)(void *ctx, int which, const float *host);
void tr_start_tensors(const tr_parts *p, const tr_ckpt *c, tr_place_fn fn, void *ctx);

/* The same for every --embed table t (whole, vocab x dim floats). */
typedef void (*tr_place_table_fn)(void *ctx, int t, int which, const float *host);
void tr_start_tables(const tr_parts *p, const tr_ckpt *c, tr_place_table_fn fn, void *ctx);

#endif /* RIO_TRAINER_START_H */

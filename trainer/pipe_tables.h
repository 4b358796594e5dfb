/*
 * pipe_tables.h — the --embed tables under model parallelism (--pipeline,
 * --tensor; strategy_pipeline.c). The lookup belongs to the first stage:
 * its ranks hold every table whole, with its dense gradient and optimizer
 * state, in the parameter store (each rank of a tensor group a copy, all
 * alike); the other stages hold none. A step pools the batch's rows into
 * the first layer's last input columns before its microbatches go; each
 * microbatch's input gradient of those columns is kept at its rows of the
 * batch (pipe_stage.h's dbatch), and after the step the whole batch's goes
 * through the tables' backward, as data-parallel training's does. The
 * tables' dense gradient is summed over the stage's D data-parallel ranks
 * and updated by the tables' own optimizer on the same global batch, as
 * under --strategy allreduce (embed_run.h). Checkpoints hold the tables
 * whole (rank 0 is a first-stage rank), so a run resumes in any layout.
 */
#ifndef RIO_TRAINER_PIPE_TABLES_H
#define RIO_TRAINER_PIPE_TABLES_H

#include "layout.h"
#include "strategy_ops.h"

/* Stage `stage`'s share of memory: on the first, the tables whole and the
 * pooled block with its gradient (rows x the pooled width); else nothing. */
void tr_pipe_tables_need(const tr_parts *p, int stage, tr_need *n);

/* The first stage: the tables' regions asked of the store (before it
 * opens); later, once the stage's network is built, the tables made (from
 * the seed) and the network's input gradient of their columns asked for.
 * 0, or -ENOMEM / -EINVAL. Elsewhere nothing. */
void tr_pipe_tables_plan(const tr_parts *p, const tr_layout *l);
int tr_pipe_tables_build(const tr_parts *p, const tr_layout *l);

/* The first stage, a batch read (go: it has one, its ids made unique by
 * tr_step_batch_at): the pooled block as one more part of `in`; without
 * one, no rows of this rank's in the step's table gradient. */
void tr_pipe_tables_input(tr_model *m, tr_input *in, int go);

/* The first stage, after the step's schedule: the tables' dense gradient
 * from the batch's input gradient (dbatch, rows x the pooled width; zero
 * without a batch), summed over the stage's data-parallel ranks
 * (collective over l->data). 1 when every value of the sum is finite. */
int tr_pipe_tables_grad(tr_model *m, const tr_layout *l, const float *dbatch, int rows, int go);

/* The first stage: the step applied to the tables (as the dense layers':
 * 1 / the global batch, the global step). */
void tr_pipe_tables_update(tr_model *m, float grad_scale, uint64_t step);

/* --pipeline-schedule async: the first stage holds two batches, the step's
 * and the next (read ahead), so a second lookup state (the ids made
 * unique, the pooled block) beside the tables' own, which is the step's
 * batch's. swap exchanges the two: around the read of the next batch, so
 * that it is made in this one; and at the step's end, when the next batch
 * becomes the step's. The tables need no stash: a pooled lookup's
 * gradient does not depend on their values, and the block a batch's
 * microbatches use, pooled when it is read (before the step's update, as
 * its first forwards run on the newest weights), is the version its
 * forwards used. init: 0 or -ENOMEM (nothing without tables). */
typedef struct tr_pipe_lookup {
	int n;
	int64_t *uniq[TR_MAX_EMBED], *pos[TR_MAX_EMBED];
	size_t nuniq[TR_MAX_EMBED];
	const int64_t *ids[TR_MAX_EMBED];
	float *block;
} tr_pipe_lookup;
int tr_pipe_lookup_init(tr_pipe_lookup *k, const tr_embed_run *e);
void tr_pipe_lookup_swap(tr_pipe_lookup *k, tr_embed_run *e);
void tr_pipe_lookup_free(tr_pipe_lookup *k);

/* Collective, on resume: the checkpoint's tables (rank 0's c) placed on
 * the first stage's ranks. */
void tr_pipe_tables_place(const tr_parts *p, const tr_ckpt *c);

/* Rank 0 (a first-stage rank): the tables whole into its checkpoint c.
 * 0, or -1 with a message (out of memory). */
int tr_pipe_tables_collect(const tr_parts *p, tr_ckpt *c, char *err, size_t errlen);

#endif /* RIO_TRAINER_PIPE_TABLES_H */

/*
 * step.h — what every strategy's training step and evaluation share: the
 * next batch as the model's input, its --embed ids checked and their rows
 * pooled in (pulled from the servers first under ps and hybrid, by the
 * strategy's hook), --straggler's slowdown, a rank's evaluation pass
 * over its part of the test data, and --eval-every's copies.
 */
#ifndef RIO_TRAINER_STEP_H
#define RIO_TRAINER_STEP_H

#include "strategy_ops.h"

#include <stdint.h>

/* Pulls the rows of the batch's --embed ids into the tables' scratch. */
typedef void (*tr_pull_fn)(void *ctx);

/* The step's batch (tr_data_next) with its --embed ids checked and made
 * unique: 1, or 0 when this rank's epoch ended early (with `must`, a
 * failure), *failed set with a message when the data failed. */
int tr_step_batch(const tr_parts *p, rio_batch **b, tr_input *in, int must, int *failed,
                  double *wait, char *err, size_t errlen);
/* The same for global step `step` (a pipeline reading the next step's
 * batch ahead: --synthetic's batch is the step's). */
int tr_step_batch_at(const tr_parts *p, uint64_t step, rio_batch **b, tr_input *in, int must,
                     int *failed, double *wait, char *err, size_t errlen);

/* --embed: the batch's rows (pull: from the servers; NULL: the whole
 * tables) pooled into the model's last input block. */
void tr_step_embed_input(tr_model *m, tr_input *in, tr_pull_fn pull, void *ctx);

/* 1 when the model runs on a GPU. */
int tr_step_on_gpu(const tr_model *m);

/* --straggler, --straggler-random: how many times its compute time this
 * rank takes at global step `step` (1: not slowed); deterministic: the
 * random draw depends only on the seed, the rank and the step. And the
 * sleep that makes a step of `compute` seconds take f times as long. */
double tr_step_slowdown(const tr_config *c, uint64_t step);
void tr_step_straggle(double f, double compute);

/* A segment of a strategy whose ranks step together (allreduce, a
 * pipeline): steps until the epoch's end, --max-steps or a
 * --checkpoint-every step (tr_segment). `step` takes one step on every
 * rank: 0; or -1 on a rank whose data failed (its message in err) and 1
 * on the others, which ends the job. `after` (or NULL) runs after each
 * step's report. Each step adds `gradients` to the cursor's count. */
typedef int (*tr_step_fn)(void *ctx, char *err, size_t errlen);
typedef void (*tr_after_fn)(void *ctx);
int tr_step_segment(const tr_parts *p, tr_segment *seg, tr_step_fn step, tr_after_fn after,
                    void *ctx, uint64_t gradients, char *err, size_t errlen);

/* 1 when the step about to run is its segment's last (the epoch's end,
 * --max-steps or a --checkpoint-every step follows it); the same on every
 * rank. */
int tr_step_segment_last(const tr_parts *p);

/* The epoch's figures every strategy takes from the cursor, f zeroed
 * first. */
void tr_step_figures(const tr_parts *p, tr_epoch_figures *f);

/* The optimizer's step count and the epoch's sums into rank 0's
 * checkpoint c. */
void tr_step_collect_cursor(const tr_parts *p, tr_ckpt *c);

/* Every batch of this rank's part of the test data (none on a rank
 * without), as the model's input, handed to fn. 0, or -1 with a message in
 * err when the data failed. */
typedef void (*tr_batch_fn)(void *ctx, tr_input *in);
int tr_step_test_batches(const tr_parts *p, tr_batch_fn fn, void *ctx, char *err, size_t errlen);

/* This rank's evaluation pass: every batch of its part of the test data
 * (none on a rank without), forward and loss, into sums (loss, correct,
 * records; not yet summed over the ranks). 0, or -1 with a message in err
 * when the data or the GPU failed. */
int tr_step_evaluate(const tr_parts *p, tr_pull_fn pull, void *ctx, double sums[3], char *err,
                     size_t errlen);

/* --eval-every (step_copies.c), for the strategies whose ranks step
 * together: after a step, when one is due, a copy of the n parameters
 * this rank holds (the network's: the whole model, or its stage's part)
 * kept in `copies` with what had been trained; the ranks agree on running
 * out of memory. */
void tr_step_keep_copy(const tr_parts *p, tr_copies *copies, size_t n);
/* Collective: each copy every rank holds placed as the network's n
 * parameters and handed to fn (which evaluates it through the strategy),
 * then dropped; the parameters as before afterwards. 0, or -1 with the
 * first message. */
int tr_step_eval_copies(const tr_parts *p, tr_copies *copies, size_t n, tr_copy_fn fn,
                        void *ctx, char *err, size_t errlen);

#endif /* RIO_TRAINER_STEP_H */

/*
 * strategy_ops.h — how the ranks train together (--strategy): one table of
 * operations per strategy, each in a file of its own (strategy_allreduce.c;
 * strategy_ps.c and strategy_hybrid.c, over the parameter servers' common
 * part ps_run.c), listed once in strategy.c. The run loop (train.c), the
 * checkpoints (save.c, start.c) and main.c call only these: none of them
 * asks which strategy runs. A new strategy is a new file, its options and
 * one line of strategy.c.
 *
 * The operations get the run's parts (tr_parts): the configuration, the
 * data, the model, the parameter store and the cursor. Those marked
 * collective are called by every rank together; a failure there is agreed
 * on inside (one line, every rank exits) unless the operation returns it.
 */
#ifndef RIO_TRAINER_STRATEGY_OPS_H
#define RIO_TRAINER_STRATEGY_OPS_H

#include "checkpoint.h"
#include "copies.h"
#include "cursor.h"
#include "data.h"
#include "fit.h"
#include "model.h"
#include "run_config.h"
#include "store.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tr_parts {
	const tr_config *cfg;
	tr_data *data;
	tr_model *model;
	tr_store *store;
	tr_cursor *cursor;
} tr_parts;

/* A strategy's state on this rank: each strategy's own struct, which
 * begins with this one. */
typedef struct tr_strategy_state {
	const tr_parts *p;
} tr_strategy_state;

/* A segment of training: steps from where the cursor is, to the epoch's
 * end, to --max-steps, or to a --checkpoint-every step. */
typedef struct tr_segment {
	/* in: called after each step on the ranks that train, with the
	 * step's summed loss and records (the progress line, TensorBoard's
	 * step loss), where the strategy has them on rank 0 at each step */
	void (*stepped)(void *ctx, double loss, double count);
	void *ctx;
	/* out, the same on every rank */
	int stopped;   /* --max-steps reached with steps of the epoch left   */
	int mid_epoch; /* ended before the epoch's end: a checkpoint is due,
	                * or stopped                                        */
} tr_segment;

/* An epoch's figures, on rank 0. */
typedef struct tr_epoch_figures {
	double loss, correct, count;  /* the epoch's sums over the ranks that
	                               * train                               */
	double count_before;          /* ... of count, what a resumed epoch
	                               * had before this process took it up  */
	uint64_t steps;               /* the epoch's (the most any worker took) */
	uint64_t skipped;             /* steps skipped: not finite            */
	uint64_t last_step;           /* the global step after the epoch's last
	                               * (the rate's, TensorBoard's)         */
	double data_wait, exchange, optimizer; /* seconds, a training rank's */
	double bytes_per_step;        /* a training rank's, sent and received */
	uint64_t grad_overflows;      /* steps skipped: a 16-bit sum overflowed */
	/* with parameter servers */
	const char *servers;          /* the strategy's name; NULL: none      */
	double server_bytes_per_step;
	uint64_t updates, gradients, dropped, staleness_max;
	double staleness_mean;
	int workers;
	uint64_t *worker_steps;       /* workers of them (malloc'd: free it)  */
	/* model parallelism (strategy_pipeline.c) */
	char layout[32];              /* "D2xP2xT1"; "": not split            */
	double bubble;                /* the ranks' idle share (every wait
	                               * for a message) of the steps, each
	                               * its longest rank's schedule (GPipe's) */
	double pipe_bytes, tensor_bytes, data_bytes; /* a step's, by kind: the
	                               * most any rank sends and receives    */
} tr_epoch_figures;

/* Collective: an --eval-every copy placed as the model's parameters (its
 * figures in `copy`, params unused): evaluate it and report it, unless
 * an earlier copy `failed` (then evaluate only, so that no rank waits).
 * 0, or -1 with a message in err. */
typedef int (*tr_copy_fn)(void *ctx, const tr_copy *copy, int failed, char *err,
                          size_t errlen);

typedef struct tr_strategy_ops {
	const char *name;       /* as --strategy names it                     */
	const char *data_unit;  /* the ranks that read the data, in messages:
	                         * "ranks" or "workers"                      */
	/* who reads the data and who serves, checked against the world
	 * (collective-free): 0, or -1 with a one-line usage error */
	int (*roles)(const tr_options *o, const tr_world *w, tr_roles *r, char *err,
	             size_t errlen);
	/* what this rank will hold of a model of these sizes and the tables,
	 * before anything is allocated (fit.h) */
	void (*memory_need)(const tr_parts *p, tr_need *n);
	/* collective: this rank's part made: the model's buffers asked of the
	 * store and placed, the steps per epoch agreed (the cursor's
	 * epoch_steps), the rate's schedule set */
	void (*open)(tr_strategy_state **s, const tr_parts *p);
	/* collective: the starting parameters, rank 0's, on every rank (host
	 * NULL where the strategy has tensor_part: each rank makes its own
	 * part from the seed, tr_mlp_init_layer) */
	void (*place_fresh)(tr_strategy_state *s, const float *host);
	/* collective: rank 0's checkpoint c (NULL elsewhere) placed: the
	 * cursor, the tensors, the tables, the loader positions; rank 0 says
	 * where the run resumes */
	void (*place)(tr_strategy_state *s, const tr_ckpt *c);
	/* collective: epoch's figures start from zero */
	void (*epoch_begin)(tr_strategy_state *s);
	/* collective: a segment (tr_segment). 0, or 1 with a message in err
	 * when this rank failed (every rank then agrees on it) */
	int (*segment)(tr_strategy_state *s, tr_segment *seg, char *err, size_t errlen);
	/* collective: the test data evaluated with the model as it is, this
	 * rank's part summed onto rank 0 into sums (loss, correct, records).
	 * 0, or -1 with a message when this rank's data failed */
	int (*evaluate)(tr_strategy_state *s, double sums[3], char *err, size_t errlen);
	/* collective: the epoch's figures into rank 0's f */
	void (*figures)(tr_strategy_state *s, tr_epoch_figures *f);
	/* collective: the --eval-every copies of the epoch, each placed and
	 * handed to fn, then dropped; the model's own parameters afterwards
	 * as before. 0, or -1 with the first message */
	int (*eval_copies)(tr_strategy_state *s, tr_copy_fn fn, void *ctx, char *err, size_t errlen);
	/* after an epoch's end: the next one's steps (the cursor's), the
	 * strategy's counts of an epoch from zero */
	uint64_t (*next_epoch_steps)(tr_strategy_state *s);
	/* collective: the strategy's state into rank 0's checkpoint c (NULL
	 * elsewhere), which holds the run's common fields already. 0, or -1
	 * with a message (rank 0 out of memory) */
	int (*collect)(tr_strategy_state *s, tr_ckpt *c, char *err, size_t errlen);
	/* model parallelism, where no rank holds the whole model: this rank's
	 * part of the tensors, which it writes into checkpoints and reads
	 * from them itself (checkpoint_split.h); collect then leaves c's
	 * tensors NULL, a resume reads the file but them on rank 0
	 * (tr_ckpt_read_meta) and place reads each rank's. NULL: collect puts
	 * the whole model in rank 0's c, and place takes it from there */
	const struct tr_ckpt_part *(*tensor_part)(tr_strategy_state *s);
	/* the banner's words for the strategy: `line` after the model's
	 * sizes, `tail` after the device */
	void (*describe)(tr_strategy_state *s, char *line, size_t len, char *tail, size_t tlen);
	void (*close)(tr_strategy_state *s);
} tr_strategy_ops;

/* The registry (strategy.c): the strategy --strategy names (tr_strategy,
 * strategy.h, its number in checkpoints), or NULL. */
const tr_strategy_ops *tr_strategy_get(tr_strategy id);
/* The operations a run's options choose: --strategy's, or model
 * parallelism's (strategy_pipeline.c) with --pipeline or --tensor. */
const tr_strategy_ops *tr_strategy_of(const tr_options *o);

#endif /* RIO_TRAINER_STRATEGY_OPS_H */

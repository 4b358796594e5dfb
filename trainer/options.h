/*
 * options.h — recordio-train's command line, parsed into one struct. Parsing
 * never prints or exits: the caller (main.c, rank 0) reports. The options
 * are a table (options_table.h, options.c): a new option is a row there
 * and its field here.
 */
#ifndef RIO_TRAINER_OPTIONS_H
#define RIO_TRAINER_OPTIONS_H

#include "loader.h"
#include "backend.h"
#include "mlp.h"
#include "optim.h"
#include "strategy.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tr_options {
	const char *train, *test;      /* shard specs                        */
	char *x[TR_MLP_MAX_INPUTS];    /* input feature names (malloc'd)     */
	int nx;
	const char *y;                 /* label feature                      */
	int classes;
	int hidden[TR_MLP_MAX_LAYERS - 1];
	int nhidden;
	int batch;                     /* per rank (0 when global is given)  */
	int global_batch;              /* 0: weak scaling with `batch`       */
	int eval_batch;
	uint64_t epochs;
	uint64_t max_steps;            /* 0: no limit                        */
	tr_optim_config optim;         /* lr, momentum, ...; scale and steps
	                                * are set once the world is known   */
	int lr_scaling;                /* 1: linear (Goyal et al.)           */
	double warmup_epochs;
	uint64_t seed;
	int workers;
	int loader_cpus_spare;         /* --loader-cpus spare (1) or rank (0) */
	rio_shuffle shuffle;
	rio_sharding sharding;
	size_t shuffle_buffer;
	int64_t cache;                 /* --cache: bytes, 0 off, -1 auto      */
	const char *shard_cache;       /* --shard-cache DIR, or NULL          */
	int64_t shard_cache_limit;     /* --shard-cache-limit: bytes, 0 none  */
	int64_t remote_part_size;      /* --remote-part-size: bytes a GET     */
	int remote_inflight;           /* --remote-inflight: requests at once */
	int remote_attempts;           /* --remote-attempts                   */
	int remote_stall;              /* --remote-stall: seconds             */
	const char *metrics;
	const char *checkpoint;
	uint64_t checkpoint_every;     /* steps; 0: at the end of each epoch */
	int resume;
	tr_device device;
	tr_precision precision;        /* --precision: fp32 (0) or bf16      */
	size_t bucket_bytes;
	int reduce;                    /* tr_reduce_mode (reducer.h): 0 auto */
	int grad_compression;          /* tr_grad_comp (reducer.h): 0 none   */
	int shard_optimizer;           /* 1: each rank updates its slices    */
	int threads;                   /* OpenBLAS threads per rank; 0: auto */
	int quiet;
	int synthetic;                 /* 1: --synthetic, batches made in memory */
	int synthetic_inputs;          /* --synthetic=N; 0: from the data, or 784 */
	const char *tensorboard;       /* event file directory (rank 0)      */
	uint64_t tensorboard_every;    /* steps between train/step_loss      */
	uint64_t eval_every;           /* --eval-every: steps (clocks) between
	                                * copies of the parameters evaluated
	                                * at the epoch's end; 0: none        */

	/* --strategy and what goes with it (ps.h) */
	tr_strategy strategy;
	int servers;                   /* --servers S (ps; 1 by default)     */
	int64_t staleness;             /* --staleness K; TR_STALENESS_INF    */
	int staleness_lr;              /* --staleness-lr: lr / clock gap     */
	int backup_workers;            /* --backup-workers B (K = 0)         */
	tr_straggler straggler[TR_MAX_STRAGGLERS]; /* --straggler R:F,...   */
	int nstraggler;
	double straggler_p, straggler_f; /* --straggler-random P:F:SEED      */
	uint64_t straggler_seed;
	tr_embed_option embed[TR_MAX_EMBED]; /* --embed                      */
	int nembed;

	/* model parallelism: the world as D x P x T (layout.h) */
	int pipeline;                  /* --pipeline P: stages (1: none)     */
	int tensor;                    /* --tensor T: a layer's slices (1)   */
	int microbatches;              /* --microbatches M (0: the default)  */
	int pipe_schedule;             /* tr_pipe_schedule                   */
	int stage_first[TR_MLP_MAX_LAYERS + 1]; /* --stages: stage s has layers
	                                * [stage_first[s], stage_first[s + 1]) */
	int nstages;                   /* ... how many ranges (0: balanced)  */
	int layout_only;               /* --layout: print the placement, exit */
	int64_t memory_limit;          /* --memory-limit: bytes a rank may
	                                * hold (0: the host's limit shared)  */
} tr_options;

/* 0 on success, 1 for --help, 2 for --version, -1 with a one-line message
 * in err on a usage error. */
int tr_options_parse(int argc, char **argv, tr_options *o, char *err, size_t errlen);
void tr_options_free(tr_options *o);
void tr_options_usage(FILE *f);

#endif /* RIO_TRAINER_OPTIONS_H */

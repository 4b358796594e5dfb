/*
 * strategy.h — how the ranks train together (--strategy), and the knobs of
 * the parameter-server strategies: the names options.c parses and ps.h
 * runs. Plain values, no MPI, so options.c stays MPI-free.
 */
#ifndef RIO_TRAINER_STRATEGY_H
#define RIO_TRAINER_STRATEGY_H

#include <stdint.h>

typedef enum tr_strategy {
	TR_STRATEGY_ALLREDUCE = 0, /* every rank a worker; gradients allreduced */
	TR_STRATEGY_PS = 1,        /* the first S ranks serve the parameters     */
	TR_STRATEGY_HYBRID = 2,    /* embedding tables on servers, dense layers
	                            * allreduced among the workers              */
} tr_strategy;

/* --pipeline-schedule: the order of a pipeline's microbatches (layout.h,
 * pipe_schedule.c) */
typedef enum tr_pipe_schedule {
	TR_PIPE_1F1B = 0,       /* one forward, one backward: at most P in flight */
	TR_PIPE_GPIPE = 1,      /* all forwards, then all backwards              */
	TR_PIPE_SEQUENTIAL = 2, /* the batch whole, one stage at a time          */
	TR_PIPE_ASYNC = 3,      /* 1f1b without a flush between batches, two
	                         * weight versions (PipeDream-2BW)             */
	TR_PIPE_EAGER_1F1B = 4, /* 1f1b with one more forward ahead: at most
	                         * P + 1 in flight, slack where stages meet    */
} tr_pipe_schedule;

/* --staleness inf: fully asynchronous */
#define TR_STALENESS_INF INT64_MAX

enum { TR_MAX_STRAGGLERS = 64, TR_MAX_EMBED = 8 };

/* --embed FEATURE:VOCAB:DIM: an int64 feature's ids looked up in a table */
typedef struct tr_embed_option {
	char feature[128];
	int64_t vocab;
	int dim;
} tr_embed_option;

/* --straggler R:F: rank R takes F times its own compute time per step */
typedef struct tr_straggler {
	int rank;
	double factor;
} tr_straggler;

#endif /* RIO_TRAINER_STRATEGY_H */

/*
 * run.h — one rank's training run: everything main.c sets up, and the two
 * things it does over and over: a training step (step.c) and an
 * evaluation pass (step.c).
 */
#ifndef RIO_TRAINER_RUN_H
#define RIO_TRAINER_RUN_H

#include "loader.h"
#include "backend.h"
#include "mlp.h"
#include "optim.h"
#include "options.h"
#include "ps.h"
#include "embed_run.h"
#include "reducer.h"
#include "synthetic.h"
#include "world.h"

#include <stdint.h>

enum { TR_RUN_MAX_COLUMNS = TR_MLP_MAX_INPUTS + TR_MAX_EMBED + 1 };

typedef struct tr_run {
	tr_options o;
	tr_world w;
	tr_math *math;
	tr_mlp net;
	tr_optim opt;
	tr_reducer red;            /* allreduce; under ps only its timer     */
	int data_rank, data_world; /* the loader's sharding: the rank and the
	                            * world, or under ps the worker's index
	                            * and the workers (-1, 0 on a server)   */
	tr_ps_server *ps_server;   /* ps: this rank's side, the other NULL   */
	tr_ps_worker *ps_worker;
	MPI_Comm wcomm;            /* hybrid: the workers (MPI_COMM_NULL)     */
	tr_embed_run embed;        /* --embed (embed.n 0 without)             */
	tr_ps_stats ps_epoch;      /* ps, a server: the epoch's counts so far */
	double ps_bytes0;          /* ps, a worker: its bytes when the epoch began */
	/* --eval-every under allreduce: the copies of this epoch (a server
	 * keeps its own under ps) */
	tr_ps_snapshot *snap;
	int nsnap, capsnap;
	double train_seconds;      /* training seconds since the run began, to
	                            * the epoch in progress (a resumed run's
	                            * from DIR/clock)                        */
	double t_epoch0;           /* when this process began the epoch in
	                            * progress (0: between epochs)          */
	double total_samples;      /* allreduce: records trained on since the
	                            * start (all ranks)                      */
	uint64_t total_gradients;  /* allreduce: each step's ranks, summed    */
	/* the data, as the checkpoint keeps it: the loader's sharding, and
	 * every shard's records (UINT64_MAX: no rank counted it) */
	rio_sharding sharding;
	uint64_t nshards, *shard_records;
	rio_loader *train, *test;  /* train is NULL with --synthetic           */
	uint64_t cache_bytes;      /* --cache: the training data held decompressed */
	int *loader_cpus;          /* --loader-cpus spare: the loaders' CPUs   */
	int nloader_cpus;          /* ... how many (0: the rank's own)         */
	tr_synthetic synth_pool;
	tr_synthetic *synth;       /* --synthetic: &synth_pool, else NULL    */
	rio_column_spec specs[TR_RUN_MAX_COLUMNS]; /* inputs, --embed ids, label */
	int batch;                 /* records per rank and step               */
	uint64_t steps_per_epoch;  /* agreed by all ranks                     */
	uint64_t own_steps;        /* ps: this worker's steps per epoch (its
	                            * full batches; 0 on a server)           */
	uint64_t epoch_steps;      /* of the epoch in progress: steps_per_epoch,
	                            * or after an elastic resume the steps done
	                            * plus what the rest of it gives          */
	float *staging;            /* host copy of grads for MPI (== grads on
	                            * the CPU)                               */
	float *eval_stats;         /* backend: loss and correct of an eval    */

	/* where the run is */
	uint64_t epoch, step_in_epoch, global_step, skipped_steps;
	double ep_loss, ep_correct, ep_count; /* the epoch so far, all ranks */
	/* what of the epoch was done before this process took it up (a
	 * resumed epoch's): its rates count the rest only */
	double ep_count0;
	uint64_t step0;

	/* this epoch's time on this rank */
	double t_wait, t_optimizer, t_step;
	uint64_t ep_skipped;
} tr_run;

/* One training step on every rank (collective). 0; or, when some rank's
 * data failed, -1 on those ranks (with a message in err) and 1 on the
 * others: then every rank calls tr_world_agree(), which ends the job. */
int tr_run_step(tr_run *r, char *err, size_t errlen);

/* Evaluates the whole test set: this rank's part, summed onto rank 0 into
 * sums[0..2] (loss, correct, records). Collective. 0, or -1 with a message
 * in err when this rank's data failed: every rank then calls
 * tr_world_agree(). */
int tr_run_eval(tr_run *r, double sums[3], char *err, size_t errlen);

/* ps: one worker step: the next batch, forward, backward, the gradient
 * pushed to the servers and the parameters pulled back; `last` marks the
 * segment's last step. 0; 1 when the servers said stop (another worker
 * failed); -1 when this worker's data failed (message in err; the servers
 * were told, and its segment is over). */
int tr_ps_step(tr_run *r, int last, char *err, size_t errlen);

/* --straggler: this rank's slowdown at this step (1: none), and the sleep
 * that makes a step of `compute` seconds take f times as long. */
double tr_run_slowdown(const tr_run *r);
void tr_run_straggle(double f, double compute);

#endif /* RIO_TRAINER_RUN_H */

/*
 * ps_run.h — a run's parameter-server parts (ps_run.c), called by main.c
 * under --strategy ps.
 */
#ifndef RIO_TRAINER_PS_RUN_H
#define RIO_TRAINER_PS_RUN_H

#include "run.h"

/* Makes this rank's server (rank < S) or worker, once the model and the
 * optimizer's configuration are set. 0 or -ENOMEM. */
int tr_ps_open(tr_run *r);
void tr_ps_close(tr_run *r);

/* The parameters (which 0), or the optimizer's first or second state
 * buffer (1, 2), from a whole host copy: a worker takes the parameters,
 * a server its slice of each. */
void tr_ps_place(tr_run *r, int which, const float *host);
/* Collective: every server's slice of `which` into rank 0's host copy
 * (hybrid: worker 0's dense layers and their optimizer state). */
void tr_ps_collect(tr_run *r, int which, float *host);
/* The same for --embed table t: a server takes its rows of a whole host
 * copy; rank 0 gathers every server's rows into one. */
void tr_ps_place_table(tr_run *r, int t, int which, const float *host);
void tr_ps_collect_table(tr_run *r, int t, int which, float *host);

/* Collective: one segment of training (ps.h), which ends at the epoch's
 * end, at --max-steps, or at a --checkpoint-every step. *stopped: some
 * worker reached --max-steps; *mid_epoch: some worker has steps of the
 * epoch left. 1 when this rank failed (message in err; every rank then
 * calls tr_world_agree), else 0. */
int tr_ps_segment(tr_run *r, int *stopped, int *mid_epoch, char *err, size_t errlen);

/* The epoch's figures, on rank 0 (collective). */
typedef struct tr_ps_figures {
	double loss, correct, count;   /* the workers' steps                  */
	double count_before;           /* ... of them, the records a resumed
	                                * epoch had before the resume        */
	uint64_t skipped_steps;        /* the workers' non-finite batches     */
	double data_wait, exchange;    /* a worker's mean, seconds            */
	uint64_t updates, gradients, dropped, skipped_server; /* server 0's   */
	uint64_t staleness_max;        /* over the servers                    */
	double staleness_mean;
	double bytes_per_step;         /* a worker's messages, sent and received */
	int nworkers;
	const uint64_t *worker_steps;  /* nworkers                            */
	uint64_t *worker_steps_block;  /* free() it                           */
} tr_ps_figures;
void tr_ps_epoch_figures(tr_run *r, tr_ps_figures *f);

/* --eval-every under allreduce: keeps a copy of the parameters (every
 * rank), trained `seconds` so far. 0 or -ENOMEM. */
int tr_snapshot_take(tr_run *r, double seconds);

/* Collective, at an epoch's end: evaluates every copy kept this epoch
 * (under ps, by the servers) on the test data, rank 0 writing a line per
 * copy to `metrics` (may be NULL), then drops them. Leaves the workers'
 * parameters changed (the next step's pull, or the caller, restores them).
 * 0; -1 with a message in err when this rank failed (every rank then
 * calls tr_world_agree). */
int tr_snapshots_eval(tr_run *r, FILE *metrics, char *err, size_t errlen);

#endif /* RIO_TRAINER_PS_RUN_H */

/*
 * ps_run.h — what the strategies with parameter servers share (ps.h has
 * the protocol): ranks 0..S-1 serve, the others are workers that read the
 * data; a server's or a worker's side made (its buffers in the parameter
 * store), the worker's step and the segments, evaluation with the servers
 * serving --embed rows, the epoch's figures (ps_run.c), the checkpoint's
 * counters, slices and tables (ps_ckpt.c). What differs between the
 * strategies — where the dense layers live and how a worker's step treats
 * them — comes in a tr_ps_dense table: strategy_ps.c (on the servers) and
 * strategy_hybrid.c (on the workers, summed over them by a reducer).
 */
#ifndef RIO_TRAINER_PS_RUN_H
#define RIO_TRAINER_PS_RUN_H

#include "ps.h"
#include "strategy_ops.h"

typedef struct tr_ps_run tr_ps_run;

typedef struct tr_ps_dense {
	int on_servers;  /* the servers hold the dense layers (else the workers) */
	int lockstep;    /* the workers step together: an epoch is what every
	                  * worker can do (else each does all its batches)   */
	/* a worker, after its backward (its gradients in the model's staging
	 * copy): the dense layers' part of the step; 1 when another worker
	 * failed, else 0 with *apply (0: the step is skipped, the servers'
	 * rows too). NULL: nothing (the servers apply it) */
	int (*exchange)(tr_ps_run *r, int rows, int nonfinite, int failed, int *apply);
	/* collective: the dense buffer `which` (0 parameters, 1-2 optimizer
	 * state) into rank 0's host copy; NULL: the servers' slices */
	void (*collect)(tr_ps_run *r, int which, float *host);
	/* a worker: the dense optimizer's state buffer `which` (1, 2) from a
	 * host copy (NULL: the workers keep none) */
	void (*place_state)(tr_ps_run *r, int which, const float *host);
} tr_ps_dense;

struct tr_ps_run {
	tr_strategy_state base;
	const tr_parts *p;
	const tr_ps_dense *dense;
	tr_ps_server *server;      /* this rank's side; the other NULL         */
	tr_ps_worker *worker;
	int r_reply;               /* the store's region of the replies (GPU)  */
	tr_ps_stats epoch;         /* a server: the epoch's counts so far      */
	double bytes0;             /* a worker: its bytes when the epoch began */
	uint64_t steps_per_epoch;  /* the most any worker has                  */
	uint64_t own_steps;        /* this worker's (lockstep: every worker's) */
	/* this epoch's time on this rank */
	double t_wait, exchange;
};

/* The roles: servers first. */
int tr_ps_roles(const tr_options *o, const tr_world *w, tr_roles *r, char *err, size_t errlen);

/* What this rank holds: a server its slices (and with dense_on_servers of
 * the model, with its optimizer state and at --staleness 0 a gradient per
 * worker), a worker the model (else with its optimizer state) and a
 * batch's rows. */
void tr_ps_memory_need(const tr_parts *p, tr_need *n, int dense_on_servers);

/* Opening, in three steps (a strategy adds its own between them): the
 * run's fields; the model's buffers asked of the store (a worker's
 * gradients at grads_place, its optimizer state at state_place, -1:
 * none); then, collective, the store opened (the shared regions over
 * `node`), the steps per epoch agreed, the schedule, the model, this
 * rank's server (its slices, the tables' rows) or worker. */
void tr_ps_begin(tr_ps_run *r, const tr_parts *p, const tr_ps_dense *dense);
void tr_ps_plan(tr_ps_run *r, int grads_place, int state_place);
void tr_ps_open(tr_ps_run *r, MPI_Comm node);
void tr_ps_close(tr_ps_run *r);

/* The shared operations (strategy_ops.h), on a tr_ps_run. */
void tr_ps_place_fresh(tr_strategy_state *s, const float *host);
void tr_ps_place(tr_strategy_state *s, const tr_ckpt *c);
void tr_ps_epoch_begin(tr_strategy_state *s);
int tr_ps_segment(tr_strategy_state *s, tr_segment *seg, char *err, size_t errlen);
int tr_ps_evaluate(tr_strategy_state *s, double sums[3], char *err, size_t errlen);
void tr_ps_figures(tr_strategy_state *s, tr_epoch_figures *f);
int tr_ps_eval_copies(tr_strategy_state *s, tr_copy_fn fn, void *ctx, char *err, size_t errlen);
uint64_t tr_ps_next_epoch_steps(tr_strategy_state *s);
int tr_ps_collect(tr_strategy_state *s, tr_ckpt *c, char *err, size_t errlen);
void tr_ps_describe(tr_strategy_state *s, char *line, size_t len, char *tail, size_t tlen);

/* The operations of a tr_strategy_ops that ps and hybrid share. */
#define TR_PS_SHARED_OPS                                                                         \
	.data_unit = "workers", .roles = tr_ps_roles, .place_fresh = tr_ps_place_fresh,          \
	.place = tr_ps_place, .epoch_begin = tr_ps_epoch_begin, .segment = tr_ps_segment,        \
	.evaluate = tr_ps_evaluate, .figures = tr_ps_figures, .eval_copies = tr_ps_eval_copies, \
	.next_epoch_steps = tr_ps_next_epoch_steps, .collect = tr_ps_collect

#endif /* RIO_TRAINER_PS_RUN_H */

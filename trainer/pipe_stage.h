/*
 * pipe_stage.h — this rank's stage of a pipeline (--pipeline P): its
 * layers' network, the activations its schedule holds, the messages to and
 * from the stages beside it, and a step's schedule (--pipeline-schedule).
 *
 * A step splits the rank's batch into M microbatches. Each goes forward
 * through the stages and back; the activations between stages and their
 * gradients are non-blocking MPI point-to-point messages over the
 * pipeline's communicator, their receives posted ahead so that they
 * arrive while the stage computes. The first stage reads the data and
 * sends the batch's labels straight to the last stage, in one message at
 * the step's start (the last stage reads no data). The gradients of the
 * microbatches are summed into `acc`: after the step it holds the batch's
 * gradient of the stage's layers, as data-parallel training would have it
 * (up to floating-point order). Schedules:
 *   sequential  M = 1: one stage busy at a time;
 *   gpipe       every forward, then every backward: M microbatches'
 *               activations held;
 *   1f1b        stage p runs P - 1 - p forwards ahead, then alternates one
 *               forward and one backward: at most P - p held.
 *   eager-1f1b  1f1b with one more forward ahead: stage p < P - 1 runs
 *               P - p forwards ahead (slack for the next stage, whose
 *               input is then ready a forward early), the last stage
 *               none; then each alternates one forward and one backward:
 *               min(P - p + 1, M) held on stage p < P - 1, min(2, M) on
 *               the last (its backward need not wait for the stage before
 *               to take the previous input gradient): P + 1 at most, on
 *               the first.
 *   async       1f1b without the flush between batches (PipeDream-2BW):
 *               while a step's last backwards run, the next batch's first
 *               P - 1 - p forwards run in their place, on the newest
 *               weights; every microbatch of a batch, forward and
 *               backward, uses the version its first forward used (the
 *               stash), the newest as the step before last left it. At
 *               most P - p held, across the batches.
 * The last stage takes the loss of a microbatch at its backward, so that
 * the loss's gradient is never kept across microbatches. The first stage
 * keeps its microbatches' input gradients, where its net computes one, in
 * the batch's row order (dbatch): the --embed tables' backward takes the
 * whole batch's after the step.
 *
 * --grad-compression bf16|fp16 (tr_stage_compress): the activations and
 * their gradients go in 16 bits, half the bytes: cast on send (reducer.h's
 * tr_comp_narrow_msg, nearest even), widened into fp32 on receive. fp16
 * is scaled by a power of two per message, from its largest magnitude,
 * sent as the message's last element: no finite value overflows 65504,
 * and small ones keep their bits (an activation of 1e6 or 1e-7 as one of
 * 1). An infinity that still arrives (the sender's own) is seen by the
 * receiver (st->overflowed) and the step is skipped on every rank,
 * counted as a grad_overflow. Evaluation's messages stay fp32.
 */
#ifndef RIO_TRAINER_PIPE_STAGE_H
#define RIO_TRAINER_PIPE_STAGE_H

#include "mlp.h"
#include "pipe_trace.h"
#include "reducer.h"

#include <mpi.h>
#include <stdint.h>

typedef struct tr_stage {
	tr_mlp *net;           /* the stage's layers (the model's network, with
	                        * relu_last before the last stage and the input
	                        * gradient after the first)                 */
	MPI_Comm comm;         /* the pipeline's: its rank s is stage s       */
	int P, p;              /* stages, this rank's                         */
	int schedule;          /* tr_pipe_schedule                            */
	int M, batch, mb;      /* microbatches, a step's rows, the largest's   */
	int slots;             /* microbatches whose activations are held      */
	int rows_cap;          /* rows the network and buffers hold           */
	int w_in, w_out;       /* the stage's input and output widths         */
	float *acc;            /* the step's gradient (lent, nparams floats)  */
	float *in;             /* p > 0: activations received, rows_cap x w_in */
	float *dout;           /* p < P - 1: their gradients, slots x mb x w_out */
	float *blank;          /* p == 0: zeros, sent when this rank has no batch */
	int64_t *labels;       /* the last stage's (received); the first's zeros */
	float *dbatch;         /* p == 0 with the net's input gradient (--embed's
	                        * block): each microbatch's, at its rows of the
	                        * batch, batch x net->dinput_cols             */
	MPI_Request *req;      /* 4 x slots + 1                               */
	float *stash;          /* async: the weight version the step's batch
	                        * uses (lent, nparams); else NULL: the net's */
	/* microbatches by their index g across steps (slot g % slots): the
	 * step's batch's first, the next receive to post (p > 0), the
	 * backwards done, the receives' end this step; the step's batch's
	 * forwards the step before ran, and whether it sent its labels */
	int64_t g0, posted, freed, post_end;
	int fwd_ahead, labels_sent;
	double slow;           /* --straggler: the step's slowdown (step.h's
	                        * tr_step_slowdown; 1 or 0: none): each
	                        * microbatch's forward and backward take
	                        * this many times their compute            */
	/* since cleared (the caller zeroes them): seconds of steps' schedules
	 * spent waiting for a message (a receive, a send's slot, the step's
	 * drain: the stage's idle time; all else in a schedule is its
	 * compute), seconds of steps' schedules, bytes sent and received by
	 * messages */
	double idle, busy, bytes;
	tr_grad_comp comp;     /* the messages' 16 bits, or none              */
	uint16_t *h_in, *h_dout; /* compressed: what is received (in, dout's
	                        * shapes), widened into in and dout          */
	uint16_t *h_out, *h_din; /* compressed: what is sent, by slot        */
	int overflowed;        /* compressed: a message received held an
	                        * infinity (cleared by the caller)           */
	tr_pipe_trace *trace;  /* RIO_PIPE_TRACE's timeline (lent), or NULL   */
} tr_stage;

/* A stage over `net` (built with max_rows >= tr_stage_rows()), its buffers
 * allocated (host memory: the CPU); on the first stage, when the net
 * computes an input gradient (tr_mlp_want_dinput), dbatch too. 0 or
 * -ENOMEM. */
int tr_stage_init(tr_stage *st, tr_mlp *net, MPI_Comm comm, int P, int p, int schedule, int M,
                  int batch, int eval_rows, float *acc);
void tr_stage_free(tr_stage *st);
/* --grad-compression: the messages of activations and their gradients in
 * `comp`'s 16 bits from now on (before the first step). 0 or -ENOMEM. */
int tr_stage_compress(tr_stage *st, tr_grad_comp comp);

/* The activation slots a stage holds (and so its network's rows): for
 * planning, before it exists. */
int tr_stage_slots(int P, int p, int schedule, int M);
int tr_stage_rows(int P, int p, int schedule, int M, int batch, int eval_rows);

/* One step's schedule on every stage of the pipeline together. `in`: the
 * first stage's batch (NULL there when the rank has none: zeros go, and
 * the step is not applied); unused elsewhere. Gradients summed into acc
 * (the step's first backward writes it, the weight-gradient GEMMs of the
 * later ones add into it: beta 1, no pass of its own); the last stage adds each microbatch's summed loss and
 * correct count into stats[0..1]. Async: `cont` 1 on every stage when the
 * next step follows at once, and then `next` is the first stage's next
 * batch (NULL: zeros), whose first forwards this step runs, on the net's
 * parameters (the newest), the step's batch on st->stash; its messages
 * are left in flight. `cont` 0 drains: every message through. */
void tr_stage_step(tr_stage *st, const tr_input *in, const tr_input *next, int cont,
                   float *stats);

/* Evaluation, one batch at a time through the pipeline. The first stage
 * calls tr_stage_eval_send for each of its batches, then with NULL to end
 * (rows -1: its data failed); the others call tr_stage_eval_recv until it
 * returns 0 (the end) or -1 (the first stage failed); the last stage adds
 * the loss and correct count of each batch into stats and its rows into
 * *records. */
void tr_stage_eval_send(tr_stage *st, const tr_input *in, int failed, float *stats,
                        double *records);
int tr_stage_eval_recv(tr_stage *st, float *stats, double *records);

#endif /* RIO_TRAINER_PIPE_STAGE_H */

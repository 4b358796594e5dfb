/*
 * pipe_stage.c — a pipeline stage's schedule and messages (pipe_stage.h).
 */
#include "config.h"
#include "pipe_stage.h"
#include "clock.h"
#include "pipe_trace.h"
#include "step.h"
#include "strategy.h"

#include <cblas.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Message tags on the pipeline's communicator: between two stages, each
 * kind goes in order, so a receive posted for microbatch m gets m. */
enum { TAG_ACT = 1, TAG_GRAD = 2, TAG_LABELS = 3, TAG_EVAL = 4 };

/* 1f1b, eager-1f1b and async: the forwards stage p runs ahead of its
 * first backward. 1f1b and async: P - 1 - p (async's of this batch or the
 * next), the fewest that keep every stage busy. eager-1f1b: one more on
 * every stage but the last, P - p, so that the next stage's input is a
 * forward ahead of its need: at P = 2 the stages otherwise meet at every
 * microbatch (the first stage's forward of m + 1 ends as the last's
 * backward of m does), and any spread of either's compute idles both
 * (doc/parallelism.md, "Study"). The last stage runs none ahead: its
 * backward of m is what the stage before waits for. */
static int forwards_ahead(int P, int p, int schedule, int M)
{
	int ahead = schedule != TR_PIPE_EAGER_1F1B ? P - 1 - p : p < P - 1 ? P - p : 0;
	return ahead < M ? ahead : M;
}

int tr_stage_slots(int P, int p, int schedule, int M)
{
	if (schedule == TR_PIPE_ASYNC) /* the ahead (of this batch or the next) and one */
		return P - p;
	if (schedule == TR_PIPE_1F1B || schedule == TR_PIPE_EAGER_1F1B) {
		/* the ahead and one (1f1b: P - p); eager-1f1b's last stage two:
		 * its backward of m + 1 need not wait for the stage before to
		 * take m's input gradient (a send's slot), nor its receive of
		 * m + 1's activations for m's backward (the slack the other way) */
		int held = forwards_ahead(P, p, schedule, M) + 1;
		if (schedule == TR_PIPE_EAGER_1F1B && held < 2)
			held = 2;
		return held < M ? held : M;
	}
	return M;
}

int tr_stage_rows(int P, int p, int schedule, int M, int batch, int eval_rows)
{
	int mb = (batch + M - 1) / M, held = tr_stage_slots(P, p, schedule, M) * mb;
	return held > eval_rows ? held : eval_rows;
}

int tr_stage_init(tr_stage *st, tr_mlp *net, MPI_Comm comm, int P, int p, int schedule, int M,
                  int batch, int eval_rows, float *acc)
{
	memset(st, 0, sizeof *st);
	st->net = net;
	st->comm = comm;
	st->P = P;
	st->p = p;
	st->schedule = schedule;
	st->M = M;
	st->batch = batch;
	st->mb = (batch + M - 1) / M;
	st->slots = tr_stage_slots(P, p, schedule, M);
	st->rows_cap = tr_stage_rows(P, p, schedule, M, batch, eval_rows);
	st->w_in = net->sizes[0];
	st->w_out = net->sizes[net->nlayers];
	st->acc = acc;
	size_t cap = (size_t)st->rows_cap, lab = cap > (size_t)batch ? cap : (size_t)batch;
	int ok = (st->req = malloc((4 * (size_t)st->slots + 1) * sizeof *st->req)) != NULL;
	if (ok && p > 0)
		ok = (st->in = calloc(cap * (size_t)st->w_in, sizeof(float))) != NULL;
	if (ok && p < P - 1)
		ok = (st->dout = calloc((size_t)st->slots * st->mb * (size_t)st->w_out,
		                        sizeof(float))) != NULL;
	if (ok && p == 0)
		ok = (st->blank = calloc(cap * (size_t)st->w_in, sizeof(float))) != NULL;
	if (ok)
		ok = (st->labels = calloc(lab, sizeof *st->labels)) != NULL;
	if (ok && p == 0 && net->dinput)
		ok = (st->dbatch = calloc((size_t)batch * (size_t)net->dinput_cols,
		                          sizeof(float))) != NULL;
	if (!ok) {
		tr_stage_free(st);
		return -ENOMEM;
	}
	for (int i = 0; i < 4 * st->slots + 1; i++)
		st->req[i] = MPI_REQUEST_NULL;
	return 0;
}

void tr_stage_free(tr_stage *st)
{
	free(st->req);
	free(st->in);
	free(st->dout);
	free(st->blank);
	free(st->labels);
	free(st->dbatch);
	free(st->h_in);
	free(st->h_dout);
	free(st->h_out);
	free(st->h_din);
	memset(st, 0, sizeof *st);
}

/* A 16-bit message's elements past its values: the scale's exponent
 * (reducer.h's tr_comp_narrow_msg). */
enum { MSG_EXTRA = 1 };

int tr_stage_compress(tr_stage *st, tr_grad_comp comp)
{
	size_t in = (size_t)st->slots * ((size_t)st->mb * st->w_in + MSG_EXTRA);
	size_t out = (size_t)st->slots * ((size_t)st->mb * st->w_out + MSG_EXTRA);
	if (!comp || st->P == 1)
		return 0;
	int ok = 1;
	if (st->p > 0)
		ok = (st->h_in = malloc(in * 2)) && (st->h_din = malloc(in * 2));
	if (ok && st->p < st->P - 1)
		ok = (st->h_dout = malloc(out * 2)) && (st->h_out = malloc(out * 2));
	if (!ok)
		return -ENOMEM; /* what was allocated goes with tr_stage_free */
	st->comp = comp;
	return 0;
}

/* A message's element: a float, or its 16 bits under compression. */
static MPI_Datatype elem_type(const tr_stage *st) { return st->comp ? MPI_UINT16_T : MPI_FLOAT; }
static double elem_bytes(const tr_stage *st) { return st->comp ? 2.0 : (double)sizeof(float); }
/* A message's elements for n values: n, and the scale's under compression */
static int elems(const tr_stage *st, int n) { return st->comp ? n + MSG_EXTRA : n; }

/* The n values of v to send (elems(n) elements): v itself, or cast into h
 * with their scale (compressed). */
static void *outgoing(tr_stage *st, uint16_t *h, const float *v, int n)
{
	if (!st->comp)
		return (void *)v;
	tr_comp_narrow_msg(st->comp, h, v, (size_t)n);
	return h;
}

/* The requests of slot k: the activations in (received), the output's
 * gradient in, the activations out (sent), the input's gradient out; and
 * the labels'. */
static MPI_Request *r_in(tr_stage *st, int k) { return &st->req[k]; }
static MPI_Request *r_dout(tr_stage *st, int k) { return &st->req[st->slots + k]; }
static MPI_Request *r_out(tr_stage *st, int k) { return &st->req[2 * st->slots + k]; }
static MPI_Request *r_din(tr_stage *st, int k) { return &st->req[3 * st->slots + k]; }
static MPI_Request *r_labels(tr_stage *st) { return &st->req[4 * st->slots]; }

/* Waits for a request, traced as `kind` (NULL: not) for microbatch m;
 * every wait, for a receive, for a send's slot or in the drain, is the
 * stage's idle time (the bubble's). */
static void wait_for(tr_stage *st, MPI_Request *r, const char *kind, int m)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	double t0 = rio__now();
	MPI_Wait(r, MPI_STATUS_IGNORE);
	double t1 = rio__now();
	st->idle += t1 - t0;
	if (kind)
		tr_pipe_trace_add(st->trace, kind, m, t0, t1);
}

/* A message posted (pipe_trace.h's iA, iG, rA, rG) for microbatch m. */
static void posted(const tr_stage *st, const char *kind, int m)
{
	if (st->trace) {
		double t = rio__now();
		tr_pipe_trace_add(st->trace, kind, m, t, t);
	}
}

/* Microbatch m's first row and rows: the batch split as evenly as can be. */
static void span(const tr_stage *st, int m, int *lo, int *rows)
{
	*lo = (int)((int64_t)m * st->batch / st->M);
	*rows = (int)((int64_t)(m + 1) * st->batch / st->M) - *lo;
}

/* The network as microbatch slot k sees it: its activations and input
 * gradient at the slot's rows, on weight version `w`. */
static tr_mlp view(const tr_stage *st, int k, float *w)
{
	tr_mlp v = *st->net;
	v.params = w;
	size_t at = (size_t)k * st->mb;
	for (int l = 0; l < v.nlayers; l++) {
		v.out[l] += at * (size_t)v.sizes[l + 1];
		if (v.out16[l]) /* --precision bf16: the hidden layers' as bf16 */
			v.out16[l] += at * (size_t)v.sizes[l + 1];
	}
	v.in16_row0 = (int)at;
	if (v.dinput)
		v.dinput += at * (size_t)v.dinput_cols;
	return v;
}

static float *in_slot(const tr_stage *st, int k) { return st->in + (size_t)k * st->mb * st->w_in; }
static float *dout_slot(const tr_stage *st, int k)
{
	return st->dout + (size_t)k * st->mb * st->w_out;
}

static int slot_of(const tr_stage *st, int64_t g) { return (int)(g % st->slots); }

/* Slot k of a 16-bit buffer of `width` columns (and a message's scale). */
static uint16_t *h_slot(const tr_stage *st, uint16_t *h, int k, int width)
{
	return h + (size_t)k * ((size_t)st->mb * width + MSG_EXTRA);
}

/* A receive into slot k of f (width columns, `rows` rows): f itself, or
 * its 16 bits into h, widened into f when it arrives (arrived()). */
static void *incoming(const tr_stage *st, uint16_t *h, float *f, int k, int width)
{
	return st->comp ? (void *)h_slot(st, h, k, width) : (void *)(f + (size_t)k * st->mb * width);
}

/* Waits for the receive r of `rows` rows into slot k of f (and h): a
 * compressed one is widened once, as it arrives, scaled back, and an
 * infinity in it (the sender's own: scaled, no finite value overflows)
 * noted. */
static void arrived(tr_stage *st, MPI_Request *r, uint16_t *h, float *f, int k, int width,
                    int rows, const char *kind, int m)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	wait_for(st, r, kind, m);
	if (!st->comp)
		return;
	float *to = f + (size_t)k * st->mb * width;
	size_t n = (size_t)rows * width;
	tr_comp_widen_msg(st->comp, to, h_slot(st, h, k, width), n);
	st->overflowed |= tr_has_inf(to, n);
}

/* Stage p > 0: the receive of microbatch g's activations into its slot (g
 * of the step's batch or, async, of the next). */
static void post_in(tr_stage *st, int64_t g)
{
	int k = slot_of(st, g), m = (int)((g - st->g0) % st->M), lo, rows;
	span(st, m, &lo, &rows);
	MPI_Irecv(incoming(st, st->h_in, st->in, k, st->w_in), elems(st, rows * st->w_in),
	          elem_type(st), st->p - 1, TAG_ACT, st->comm, r_in(st, k));
	posted(st, "rA", m);
	st->bytes += elems(st, rows * st->w_in) * elem_bytes(st);
}

/* Stage p > 0: the receives of every microbatch before post_end whose
 * slot is free (its backward done). */
static void post_ready(tr_stage *st)
{
	while (st->p > 0 && st->posted < st->post_end && st->posted < st->freed + st->slots)
		post_in(st, st->posted++);
}

/* Microbatch m's input (slot k): rows of the first stage's batch (or of
 * zeros), or the activations received into its slot (waited for). */
static void input_of(tr_stage *st, int m, int k, const tr_input *batch, tr_input *x)
{
	int lo, rows;
	span(st, m, &lo, &rows);
	memset(x, 0, sizeof *x);
	x->rows = rows;
	x->labels = st->labels + lo;
	if (st->p == 0 && batch) {
		x->nparts = batch->nparts;
		for (int i = 0; i < batch->nparts; i++) {
			size_t at = (size_t)lo * batch->width[i];
			x->part[i] = batch->part[i] ? batch->part[i] + at : NULL;
			x->part16[i] = batch->part16[i] ? batch->part16[i] + at : NULL;
			x->width[i] = batch->width[i];
		}
		x->labels = batch->labels + lo;
		return;
	}
	x->nparts = 1;
	x->width[0] = st->w_in;
	x->part[0] = st->p == 0 ? st->blank : in_slot(st, k);
	if (st->p > 0)
		arrived(st, r_in(st, k), st->h_in, st->in, k, st->w_in, rows, "wA", m);
}

/* --straggler: a microbatch's compute, begun at t0, made to take st->slow
 * times as long (a slow stage: its neighbours wait for its messages);
 * traced as `kind` for microbatch m. */
static void straggle(const tr_stage *st, double t0, const char *kind, int m)
{
	if (st->slow > 1)
		tr_step_straggle(st->slow, rio__now() - t0);
	if (st->trace)
		tr_pipe_trace_add(st->trace, kind, m, t0, rio__now());
}

/* Microbatch g (m of its batch) forward, on weight version w. */
static void forward(tr_stage *st, int64_t g, int m, const tr_input *batch, float *w)
{
	int k = slot_of(st, g), lo, rows;
	span(st, m, &lo, &rows);
	tr_input x;
	input_of(st, m, k, batch, &x);
	tr_mlp v = view(st, k, w);
	wait_for(st, r_out(st, k), "sA", m); /* the slot's last activations are sent */
	double t0 = rio__now();
	tr_mlp_forward(&v, &x);
	st->net->params16_stale = v.params16_stale; /* bf16: rounded once */
	straggle(st, t0, "F", m);
	if (st->p == st->P - 1)
		return; /* the loss at the backward */
	int n = rows * st->w_out;
	void *act = outgoing(st, st->h_out ? h_slot(st, st->h_out, k, st->w_out) : NULL,
	                     v.out[v.nlayers - 1], n);
	MPI_Isend(act, elems(st, n), elem_type(st), st->p + 1, TAG_ACT, st->comm, r_out(st, k));
	posted(st, "iA", m);
	MPI_Irecv(incoming(st, st->h_dout, st->dout, k, st->w_out), elems(st, n), elem_type(st),
	          st->p + 1, TAG_GRAD, st->comm, r_dout(st, k));
	posted(st, "rG", m);
	st->bytes += 2.0 * elems(st, n) * elem_bytes(st);
}

/* The biases' gradients of a microbatch's backward (in v's grads) into
 * acc: copied (the step's first) or added (the weights' the backward's
 * GEMMs sum into acc themselves). */
static void add_biases(tr_stage *st, const tr_mlp *v, int first)
{
	for (int l = 0; l < v->nlayers; l++) {
		size_t at = v->b_off[l];
		int n = v->sizes[l + 1];
		if (first)
			memcpy(st->acc + at, v->grads + at, (size_t)n * sizeof(float));
		else
			cblas_saxpy(n, 1.0f, v->grads + at, 1, st->acc + at, 1);
	}
}

/* Microbatch m of the step's batch backward, on the version its forward
 * used; its gradient summed into acc (written by the step's first). */
static void backward(tr_stage *st, int m, const tr_input *batch, float *w, float *stats)
{
	int64_t g = st->g0 + m;
	int k = slot_of(st, g), lo, rows;
	span(st, m, &lo, &rows);
	tr_input x;
	input_of(st, m, k, batch, &x);
	tr_mlp v = view(st, k, w);
	tr_mlp_bind16(&v, &x); /* bf16: the input as the forward rounded it */
	if (st->p == st->P - 1)
		wait_for(st, r_labels(st), "wL", m);
	else
		arrived(st, r_dout(st, k), st->h_dout, st->dout, k, st->w_out, rows, "wG", m);
	wait_for(st, r_din(st, k), "sG", m); /* the slot's last input gradient is sent */
	double t0 = rio__now();
	if (st->p == st->P - 1)
		tr_mlp_loss(&v, &x, stats, 1);
	else
		tr_mlp_output_grad(&v, dout_slot(st, k), rows);
	v.wsum = st->acc; /* the weights' gradients summed by their GEMMs */
	v.wsum_first = m == 0;
	tr_mlp_backward(&v, &x, NULL, NULL);
	add_biases(st, &v, m == 0);
	straggle(st, t0, "B", m);
	st->freed = g + 1;
	if (st->p == 0) {
		if (st->dbatch) /* at the microbatch's rows of the batch */
			memcpy(st->dbatch + (size_t)lo * v.dinput_cols, v.dinput,
			       (size_t)rows * v.dinput_cols * sizeof(float));
		return;
	}
	int n = rows * st->w_in;
	void *din = outgoing(st, st->h_din ? h_slot(st, st->h_din, k, st->w_in) : NULL, v.dinput, n);
	MPI_Isend(din, elems(st, n), elem_type(st), st->p - 1, TAG_GRAD, st->comm, r_din(st, k));
	posted(st, "iG", m);
	st->bytes += elems(st, n) * elem_bytes(st);
	post_ready(st); /* the slot is free: a later microbatch's */
}

/* The labels of a batch (`in`; NULL: zeros), first stage to last: sent at
 * the step's start, or under async by the step before, when the batch's
 * first forwards go. The last stage receives them at the step's start. */
static void send_labels(tr_stage *st, const tr_input *in)
{
	if (st->P == 1)
		return;
	if (st->p == 0) {
		wait_for(st, r_labels(st), "sL", -1); /* the batch before's are through */
		const int64_t *y = in ? in->labels : st->labels; /* zeros without a batch */
		MPI_Isend(y, st->batch, MPI_INT64_T, st->P - 1, TAG_LABELS, st->comm, r_labels(st));
	}
}

static void recv_labels(tr_stage *st)
{
	if (st->p == st->P - 1 && st->P > 1) {
		MPI_Irecv(st->labels, st->batch, MPI_INT64_T, 0, TAG_LABELS, st->comm,
		          r_labels(st));
		st->bytes += (double)st->batch * sizeof(int64_t);
	}
}

/* 1f1b, eager-1f1b and async: the forwards ahead (forwards_ahead; less those the
 * step before ran), then one forward and one backward; the last backwards
 * alternate with the next batch's first forwards when `cont` (async). */
static void one_f_one_b(tr_stage *st, const tr_input *in, const tr_input *next, int cont,
                        float *w, float *stats)
{
	int M = st->M, ahead = forwards_ahead(st->P, st->p, st->schedule, M);
	for (int m = st->fwd_ahead; m < ahead; m++)
		forward(st, st->g0 + m, m, in, w);
	for (int i = 0; i + ahead < M; i++) {
		forward(st, st->g0 + i + ahead, i + ahead, in, w);
		backward(st, i, in, w, stats);
	}
	if (cont && st->p == 0) {
		send_labels(st, next);
		st->labels_sent = 1;
	}
	for (int i = M - ahead; i < M; i++) {
		int j = i - (M - ahead); /* the next batch's microbatch, on the newest weights */
		if (cont)
			forward(st, st->g0 + M + j, j, next, st->net->params);
		backward(st, i, in, w, stats);
	}
	st->fwd_ahead = cont ? ahead : 0;
}

void tr_stage_step(tr_stage *st, const tr_input *in, const tr_input *next, int cont,
                   float *stats)
{
	double t0 = rio__now();
	int M = st->M;
	float *w = st->stash ? st->stash : st->net->params; /* the batch's weight version */
	if (!st->labels_sent)
		send_labels(st, in);
	st->labels_sent = 0;
	recv_labels(st);
	st->post_end = st->g0 + (cont ? 2 : 1) * (int64_t)M;
	post_ready(st);
	if (st->schedule != TR_PIPE_GPIPE && st->schedule != TR_PIPE_SEQUENTIAL) {
		one_f_one_b(st, in, next, cont, w, stats);
	} else { /* gpipe; sequential is gpipe of one microbatch */
		for (int m = 0; m < M; m++)
			forward(st, m, m, in, w);
		for (int m = 0; m < M; m++)
			backward(st, m, in, w, stats);
	}
	if (cont) { /* the next batch's first microbatches in flight */
		st->g0 += M;
	} else { /* every message of the step is through: its buffers are free */
		double td = rio__now();
		for (int i = 0; i < 4 * st->slots + 1; i++)
			wait_for(st, &st->req[i], NULL, 0);
		tr_pipe_trace_add(st->trace, "D", -1, td, rio__now());
		st->g0 = st->posted = st->freed = 0;
	}
	double t1 = rio__now();
	st->busy += t1 - t0;
	tr_pipe_trace_add(st->trace, "S", -1, t0, t1);
}

/* ---- evaluation ---------------------------------------------------------------- */

/* A batch's rows forward through the stage; the last stage's loss. */
static void eval_forward(tr_stage *st, const tr_input *x, float *stats, double *records)
{
	tr_mlp v = *st->net;
	tr_mlp_forward(&v, x);
	if (st->p < st->P - 1) {
		int n = x->rows * st->w_out;
		MPI_Send(&x->rows, 1, MPI_INT, st->p + 1, TAG_EVAL, st->comm);
		MPI_Send(v.out[v.nlayers - 1], n, MPI_FLOAT, st->p + 1, TAG_EVAL, st->comm);
		return;
	}
	tr_mlp_loss(&v, x, stats, 0);
	*records += x->rows;
}

/* First stage to last: a batch's rows (0: the end, -1: the first stage's
 * data failed), then its labels; ahead of the activations, which the last
 * stage receives after them. */
enum { TAG_EVAL_LABELS = 5 };

void tr_stage_eval_send(tr_stage *st, const tr_input *in, int failed, float *stats,
                        double *records)
{
	int rows = in ? in->rows : failed ? -1 : 0;
	if (st->P > 1) {
		MPI_Send(&rows, 1, MPI_INT, st->P - 1, TAG_EVAL_LABELS, st->comm);
		if (rows > 0)
			MPI_Send(in->labels, rows, MPI_INT64_T, st->P - 1, TAG_EVAL_LABELS, st->comm);
	}
	if (!in) {
		if (st->P > 1)
			MPI_Send(&rows, 1, MPI_INT, 1, TAG_EVAL, st->comm);
		return;
	}
	eval_forward(st, in, stats, records);
}

int tr_stage_eval_recv(tr_stage *st, float *stats, double *records)
{
	int rows, said;
	if (st->p == st->P - 1) {
		MPI_Recv(&said, 1, MPI_INT, 0, TAG_EVAL_LABELS, st->comm, MPI_STATUS_IGNORE);
		if (said > 0)
			MPI_Recv(st->labels, said, MPI_INT64_T, 0, TAG_EVAL_LABELS, st->comm,
			         MPI_STATUS_IGNORE);
	}
	MPI_Recv(&rows, 1, MPI_INT, st->p - 1, TAG_EVAL, st->comm, MPI_STATUS_IGNORE);
	if (rows <= 0) {
		if (st->p < st->P - 1)
			MPI_Send(&rows, 1, MPI_INT, st->p + 1, TAG_EVAL, st->comm);
		return rows < 0 ? -1 : 0;
	}
	MPI_Recv(st->in, rows * st->w_in, MPI_FLOAT, st->p - 1, TAG_EVAL, st->comm,
	         MPI_STATUS_IGNORE);
	tr_input x = {.nparts = 1, .rows = rows, .labels = st->labels};
	x.part[0] = st->in;
	x.width[0] = st->w_in;
	eval_forward(st, &x, stats, records);
	return 1;
}

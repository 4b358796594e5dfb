/*
 * strategy_pipeline.c — model parallelism (--pipeline P, --tensor T; the
 * world as D x P x T, layout.h): each rank holds one stage's contiguous
 * layers, under tensor parallelism its slices of them (tensor_slice.h),
 * the parameter store holding that part alone (its parameters, gradients,
 * their sum over microbatches and the optimizer's state); a
 * step runs the stage's schedule of microbatches (pipe_stage.h), then
 * sums the stage's gradient over the D ranks that hold the same stage
 * (the data communicator), and every rank learns the step's loss, count
 * and flags from one small allreduce over the world. The update is the
 * data-parallel one on the same global batch: SGD, Adam, LARS (a stage
 * holds whole layers, so each layer's norms are its own), skipped on
 * every rank when any value is not finite.
 *
 * Only the first stage's ranks read the data (each data-parallel group its
 * own part: reader d of D); the last stage gets the labels from the first
 * (pipe_stage.h); the T ranks of a tensor group read the same batches.
 *
 * Tensor parallelism (Megatron-LM): the first layer of a pair keeps its
 * slice of output units, the second its slice of input columns; the
 * second's partial outputs are summed over the tensor group before its
 * bias (one allreduce forward), and the first's input gradient likewise
 * (one allreduce backward), so the logits are whole on every rank of the
 * group. LARS's norms of a sliced layer are summed over the group: the
 * whole layer's. Weight decay is elementwise: the whole layer's already.
 *
 * --embed: the lookup belongs to the first stage, which holds the tables
 * whole (pipe_tables.h): its pooled block goes in the first layer's input,
 * and the batch's input gradient of it comes back to the tables' backward.
 *
 * Checkpoints hold the whole model, as data-parallel training writes it,
 * but no rank holds it whole: each rank of data group 0 writes the part it
 * owns into the file, and a resume has each rank read its own
 * (checkpoint_split.h); the tables go whole through rank 0, which holds
 * them.
 *
 * --pipeline-schedule async (PipeDream-2BW, pipe_stage.h): the first
 * stage reads the next step's batch during the step, and the stage keeps
 * a second weight version, the stash: step t's batch runs on the newest
 * weights as they were before step t - 1's update, and its gradient
 * updates the newest: W(t+1) = W(t) - lr grad(W(t-1)). A segment's last
 * step (the epoch's end, --max-steps, a checkpoint) reads nothing ahead:
 * the pipeline drains, as 1f1b's does, and the next step's batch runs on
 * the newest weights. So a checkpoint, written drained, holds the whole
 * state (the newest version; the stash is not needed), and a resume goes
 * on as the unbroken run with the same checkpoints.
 *
 * --grad-compression bf16|fp16: the activations and their gradients go
 * between stages in 16 bits (pipe_stage.h; fp16 scaled a message at a
 * time: no finite value overflows), and the stage's gradient
 * is summed over its D ranks in 16 bits as the allreduce strategy's mpi
 * reducer sums a bucket (reducer_half.c's casts and user-defined op: fp16
 * divided by D first, widened and multiplied back), and so are the tensor
 * group's sums (fp16 divided by T); an infinity in any skips the step on
 * every rank, counted as a grad_overflow. The --embed tables' sum stays
 * fp32.
 */
#include "config.h"
#include "exit_status.h"
#include "clock.h"
#include "pipe_stage.h"
#include "pipe_tables.h"
#include "start.h"
#include "step.h"
#include "options_value.h"
#include "checkpoint_split.h"
#include "tensor_slice.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048, HEAD_GRADS = TR_MLP_EXTRA, HEAD_OVERFLOW, HEAD };
enum { SPANS = 128 }; /* steps' schedule seconds kept before their maxima are taken */

typedef struct pipeline {
	tr_strategy_state base;
	const tr_parts *p;
	tr_layout l;             /* the configuration's, with the stages       */
	tr_slice sl;             /* this rank's part of the model              */
	tr_stage st;
	size_t n;                /* its parameters                             */
	double tensor_bytes;     /* this epoch's, by the tensor allreduces     */
	int r_acc;               /* the store's region of the gradients' sum  */
	uint64_t steps_per_epoch;
	double t_wait, t_exchange, t_optimizer; /* this epoch's, seconds      */
	double steps;            /* this epoch's, in this process              */
	/* the bubble's span: each step's longest schedule over the ranks,
	 * summed (rank 0's, this epoch), from the steps' own schedule
	 * seconds, kept SPANS at a time until their maxima are taken */
	double span_sum, span[SPANS];
	int nspan;
	int r_stash;             /* async: the store's region of the stash     */
	int carried;             /* async: the step's batch's first forwards ran
	                          * in the step before (it did not drain)     */
	struct held {            /* the first stage's batches: the step's, and
	                          * (async) the next step's, read ahead       */
		int have, go, failed, nonfinite;
		rio_batch *b;
		tr_input in;
		char err[MSG];
	} batch[2];
	int cur;                 /* which is the step's                        */
	tr_pipe_lookup ahead;    /* async, --embed: the lookup of the batch not
	                          * the step's (pipe_tables.h)                */
	tr_grad_comp comp;       /* --grad-compression                         */
	uint16_t *cacc;          /* ... D > 1: the stage's gradient in 16 bits,
	                          * summed over D                              */
	uint16_t *tens16;        /* ... T > 1: a tensor sum's values, 16 bits  */
	MPI_Op op;               /* ... both summed by this 16-bit op          */
	tr_copies copies;        /* --eval-every: this epoch's, of this rank's
	                          * part                                      */
	tr_ckpt_part part;       /* checkpoints: this rank's part of the file */
	tr_slice_run *owned, *held; /* ... its runs (part's)                  */
} pipeline;

static int roles(const tr_options *o, const tr_world *w, tr_roles *r, char *err, size_t errlen)
{
	tr_layout l;
	if (tr_layout_shape(&l, o, w->rank, w->size, err, errlen) < 0)
		return -1;
	*r = (tr_roles){.data_rank = l.p == 0 ? l.d : -1, .data_world = l.D};
	return 0;
}

/* The microbatches: --microbatches, or 4 x P (at most the batch); 1 for
 * sequential, or without a pipeline. */
static int microbatches(const tr_config *c)
{
	const tr_options *o = &c->o;
	if (o->pipe_schedule == TR_PIPE_SEQUENTIAL || (o->pipeline == 1 && !o->microbatches))
		return 1;
	if (o->microbatches)
		return o->microbatches;
	int m = 4 * o->pipeline;
	return m < c->batch ? m : c->batch;
}

static int eval_rows(const tr_config *c) { return c->o.test ? c->o.eval_batch : 0; }

/* The stage's block, with its gradient, their sum and the optimizer's
 * state; and the activations its schedule holds. */
static void memory_need(const tr_parts *p, tr_need *n)
{
	const tr_config *c = p->cfg;
	tr_layout l = c->layout;
	tr_layout_stages(&l, &c->o, p->model->sizes, p->model->nlayers);
	tr_slice sl;
	tr_slice_of(&sl, &l, p->model->sizes, p->model->nlayers);
	double states = tr_optim_states(c->o.optim.kind), f = sizeof(float);
	char what[320];
	snprintf(what, sizeof what, "stage %d's %zu parameters (values, gradient, its sum over "
	         "microbatches, optimizer state)", l.p, sl.nparams);
	tr_need_add(n, (double)sl.nparams * f * (3 + states), what);
	if (c->o.precision == TR_PRECISION_BF16) {
		snprintf(what, sizeof what, "stage %d's bf16 copy of its parameters", l.p);
		tr_need_add(n, (double)sl.nparams * sizeof(tr_bf16), what);
	}
	if (c->o.pipe_schedule == TR_PIPE_ASYNC) {
		snprintf(what, sizeof what, "stage %d's stashed weight version (async)", l.p);
		tr_need_add(n, (double)sl.nparams * f, what);
	}
	const int *s = sl.sizes;
	int layers = sl.nlayers, widest = 0;
	double act = 0;
	int rows = tr_stage_rows(l.P, l.p, c->o.pipe_schedule, microbatches(c), c->batch,
	                         eval_rows(c));
	for (int i = 1; i <= layers; i++) {
		act += s[i];
		widest = s[i] > widest ? s[i] : widest;
	}
	act += 2.0 * widest + 2.0 * s[0]; /* backward's scratch, the input and its gradient */
	snprintf(what, sizeof what, "stage %d's activations (%d rows held)", l.p, rows);
	tr_need_add(n, act * rows * f, what);
	tr_pipe_tables_need(p, l.p, n);
}

/* ---- open --------------------------------------------------------------------- */

/* The optimizer over the stage's block: each layer's W and b (LARS). */
static int build_optimizer(tr_model *m, const tr_store *s, size_t n)
{
	tr_optim_config cfg = m->opt.cfg;
	tr_mlp *net = &m->net;
	int rc = tr_optim_init(&m->opt, m->math, n, &cfg, tr_store_floats(s, m->r_state[0]),
	                       tr_store_floats(s, m->r_state[1]));
	tr_param_block blocks[2 * TR_MLP_MAX_LAYERS];
	for (int i = 0; rc == 0 && i < net->nlayers; i++) {
		blocks[2 * i] = (tr_param_block){net->w_off[i],
		                                 (size_t)net->sizes[i] * (size_t)net->sizes[i + 1], 1};
		blocks[2 * i + 1] = (tr_param_block){net->b_off[i], (size_t)net->sizes[i + 1], 0};
	}
	return rc == 0 ? tr_optim_set_blocks(&m->opt, blocks, 2 * net->nlayers) : rc;
}

/* The store's regions of the stage's block, allocated. 0 or -ENOMEM. */
static int open_store(pipeline *a, char *msg, size_t len)
{
	const tr_parts *p = a->p;
	tr_model *m = p->model;
	tr_store *s = p->store;
	int states = tr_optim_states(p->cfg->o.optim.kind);
	m->r_params = tr_store_add(s, "the stage's parameters", a->n, sizeof(float),
	                           TR_PLACE_BACKEND);
	m->r_grads = tr_store_add(s, "the stage's gradients", a->n + TR_MLP_EXTRA, sizeof(float),
	                          TR_PLACE_BACKEND);
	a->r_acc = tr_store_add(s, "the stage's gradients summed over microbatches", a->n,
	                        sizeof(float), TR_PLACE_BACKEND);
	for (int i = 0; i < states; i++)
		m->r_state[i] = tr_store_add(s, "the stage's optimizer state", a->n, sizeof(float),
		                             TR_PLACE_BACKEND);
	if (p->cfg->o.precision == TR_PRECISION_BF16)
		m->r_params16 = tr_store_add(s, "the stage's parameters' bf16 copy", a->n,
		                             sizeof(tr_bf16), TR_PLACE_BACKEND);
	if (p->cfg->o.pipe_schedule == TR_PIPE_ASYNC)
		a->r_stash = tr_store_add(s, "the stage's stashed weight version", a->n,
		                          sizeof(float), TR_PLACE_BACKEND);
	tr_pipe_tables_plan(p, &a->l);
	snprintf(msg, len, "out of memory for stage %d's %zu parameters", a->l.p, a->n);
	return tr_store_open(s, MPI_COMM_NULL, msg, len);
}

/* The sum of x[0, n) over comm's `ranks` in place, in 16 bits through h
 * (n values), as the allreduce strategy's mpi reducer sums a bucket:
 * fp16 divided by the ranks first, so that the sum cannot overflow where
 * the values did not, and multiplied back after. 1 when a sum is an
 * infinity. */
static int sum16(pipeline *a, float *x, size_t n, uint16_t *h, MPI_Comm comm, int ranks)
{
	float scale = a->comp == TR_COMP_FP16 ? (float)ranks : 1.0f;
	tr_comp_narrow(a->comp, h, x, n, 1.0f / scale);
	MPI_Allreduce(MPI_IN_PLACE, h, (int)n, MPI_UINT16_T, a->op, comm);
	tr_comp_widen(a->comp, x, h, n, scale);
	return tr_has_inf(x, n);
}

/* The tensor group's sum of n floats in place: a pair's partial outputs,
 * or its first layer's input gradient; in 16 bits under compression. */
static void tensor_sum(void *ctx, float *x, size_t n)
{
	pipeline *a = ctx;
	if (a->tens16)
		a->st.overflowed |= sum16(a, x, n, a->tens16, a->l.tensor, a->l.T);
	else
		MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, a->l.tensor);
	/* a ring's bytes, sent and received */
	double elem = a->tens16 ? sizeof(uint16_t) : sizeof(float);
	a->tensor_bytes += 2.0 * (a->l.T - 1) / a->l.T * (double)n * elem * 2;
}

/* LARS: a sliced layer's norms, the whole layer's (block 2j is layer j's
 * W; the group's squares summed). */
static void whole_norms(void *ctx, int block, float *wn, float *gn)
{
	pipeline *a = ctx;
	if (a->sl.split[block / 2] == TR_SPLIT_NONE)
		return;
	float sq[2] = {*wn * *wn, *gn * *gn};
	MPI_Allreduce(MPI_IN_PLACE, sq, 2, MPI_FLOAT, MPI_SUM, a->l.tensor);
	*wn = sqrtf(sq[0]);
	*gn = sqrtf(sq[1]);
}

/* Tensor parallelism: where the network's partial sums are summed. */
static void tensor_sums(pipeline *a, tr_mlp *net)
{
	net->reduce = tensor_sum;
	net->reduce_ctx = a;
	for (int j = 0; j < a->sl.nlayers; j++) {
		net->sum_din[j] = a->sl.split[j] == TR_SPLIT_COLUMNS;
		net->sum_out[j] = a->sl.split[j] == TR_SPLIT_ROWS;
	}
}

/* --grad-compression: the stage's messages, its gradient's sum over D,
 * and the tensor group's sums (rows of the widest layer at most), in 16
 * bits. 0 or -ENOMEM. */
static int compress(pipeline *a, tr_grad_comp comp, int rows)
{
	if (!comp)
		return 0;
	a->comp = comp;
	if (tr_stage_compress(&a->st, comp) < 0)
		return -1;
	int widest = 0;
	for (int i = 0; i <= a->sl.nlayers; i++)
		widest = a->sl.sizes[i] > widest ? a->sl.sizes[i] : widest;
	if (a->l.D > 1 && !(a->cacc = malloc(a->n * sizeof *a->cacc)))
		return -1;
	if (a->l.T > 1 && !(a->tens16 = malloc((size_t)rows * widest * sizeof *a->tens16)))
		return -1;
	return a->l.D > 1 || a->l.T > 1 ? tr_comp_op_create(comp, &a->op) : 0;
}

/* The stage's gradient summed over its D ranks in place: fp32, or in 16
 * bits. 1 when a 16-bit sum is an infinity. */
static int data_sum(pipeline *a, float *acc)
{
	if (a->cacc)
		return sum16(a, acc, a->n, a->cacc, a->l.data, a->l.D);
	MPI_Allreduce(MPI_IN_PLACE, acc, (int)a->n, MPI_FLOAT, MPI_SUM, a->l.data);
	return 0;
}

/* --precision bf16: the stage's GEMMs in bf16, as data-parallel training's
 * (model.c), the optimizer writing the weights' bf16 copy as it updates;
 * a stage after the first computes its input's gradient in bf16 too (the
 * GEMM data-parallel training does at that layer). */
static int use_bf16(tr_model *m, const tr_store *s, int dinput16)
{
	tr_bf16 *p16 = tr_store_get(s, m->r_params16);
	int rc = tr_mlp_use_bf16(&m->net, p16, 1);
	tr_optim_write16(&m->opt, p16);
	m->net.dinput16 = dinput16;
	return rc;
}

/* The stage's network and optimizer in the store's regions, its schedule's
 * buffers. 0 or -ENOMEM. */
static int build_stage(pipeline *a)
{
	const tr_config *c = a->p->cfg;
	tr_model *m = a->p->model;
	const tr_layout *l = &a->l;
	int M = microbatches(c);
	int rows = tr_stage_rows(l->P, l->p, c->o.pipe_schedule, M, c->batch, eval_rows(c));
	const tr_store *s = a->p->store;
	int rc = tr_mlp_init(&m->net, m->math, a->sl.sizes, a->sl.nlayers, rows,
	                     tr_store_floats(s, m->r_params), tr_store_floats(s, m->r_grads));
	m->net.relu_last = l->p < l->P - 1;
	tensor_sums(a, &m->net);
	if (rc == 0 && l->p > 0)
		rc = tr_mlp_want_dinput(&m->net, 0, a->sl.sizes[0]);
	if (rc == 0) /* --embed: the tables, and the input gradient of their block */
		rc = tr_pipe_tables_build(a->p, l);
	if (rc == 0)
		rc = build_optimizer(m, s, a->n);
	if (rc == 0 && m->r_params16 >= 0) /* bf16: the optimizer's pass writes the copy */
		rc = use_bf16(m, s, l->p > 0);
	if (l->T > 1) {
		m->opt.whole_norms = whole_norms;
		m->opt.norms_ctx = a;
	}
	m->staging = m->net.grads;
	if (rc == 0 && !(m->eval_stats = tr_math_alloc(m->math, 2)))
		rc = -1;
	if (rc == 0)
		rc = tr_stage_init(&a->st, &m->net, l->pipe, l->P, l->p, c->o.pipe_schedule, M,
		                   c->batch, eval_rows(c), tr_store_floats(s, a->r_acc));
	if (rc == 0)
		rc = compress(a, (tr_grad_comp)c->o.grad_compression, rows);
	if (rc == 0 && c->o.pipe_schedule == TR_PIPE_ASYNC) {
		a->st.stash = tr_store_floats(s, a->r_stash);
		rc = tr_pipe_lookup_init(&a->ahead, &m->embed);
	}
	return rc;
}

/* Collective: what no layout check before could see (it needs the
 * batch and the world), agreed on. */
static void check_open(const tr_config *c)
{
	char msg[MSG] = "";
	int bad = 1;
	if (microbatches(c) > c->batch)
		snprintf(msg, sizeof msg, "--microbatches %d: more than the %d records of a rank's "
		         "batch", microbatches(c), c->batch);
	else
		bad = 0;
	tr_world_agree(&c->w, bad, msg, EXIT_USAGE);
}

static void put_tensor(void *ctx, int which, size_t at, size_t n, const float *src);
static void fetch_tensor(void *ctx, int which, size_t at, size_t n, float *dst);

/* This rank's part of a checkpoint: its runs of the whole model, those it
 * owns (written by data group 0) and all it holds (read). 0, or -ENOMEM
 * with a message. */
static int open_part(pipeline *a, char *err, size_t errlen)
{
	const tr_model *m = a->p->model;
	a->part = (tr_ckpt_part){.writes = a->l.d == 0, .fetch = fetch_tensor,
	                         .put = put_tensor, .ctx = a};
	a->owned = tr_ckpt_part_runs(&a->sl, &a->l, m->sizes, m->nlayers, 1, &a->part.nowned);
	a->held = tr_ckpt_part_runs(&a->sl, &a->l, m->sizes, m->nlayers, 0, &a->part.nheld);
	a->part.owned = a->owned;
	a->part.held = a->held;
	if (a->owned && a->held)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static const tr_ckpt_part *tensor_part(tr_strategy_state *s)
{
	pipeline *a = (pipeline *)s;
	a->part.tensors = 1 + tr_optim_state_count(&a->p->model->opt);
	return &a->part;
}

static void open_pipeline(tr_strategy_state **out, const tr_parts *p)
{
	const tr_config *c = p->cfg;
	tr_model *m = p->model;
	check_open(c);
	pipeline *a = calloc(1, sizeof *a);
	tr_world_agree(&c->w, !a, "out of memory", EXIT_DATA);
	a->op = MPI_OP_NULL;
	a->base.p = a->p = p;
	*out = &a->base;
	a->l = c->layout;
	tr_layout_stages(&a->l, &c->o, m->sizes, m->nlayers);
	tr_slice_of(&a->sl, &a->l, m->sizes, m->nlayers);
	a->n = a->sl.nparams;
	char msg[MSG] = "";
	int rc = open_part(a, msg, sizeof msg);
	if (rc == 0)
		rc = open_store(a, msg, sizeof msg);
	if (rc == 0 && c->o.synthetic && a->l.p == 0)
		rc = tr_data_synthetic(p->data, m->math, m->sizes[0], c, a->l.d);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	/* steps per epoch: what every reader can do with full batches */
	uint64_t mine = a->l.p == 0 ? tr_data_full_batches(p->data, c) : UINT64_MAX;
	a->steps_per_epoch = tr_world_min_u64(&c->w, mine);
	tr_model_schedule(m, c, a->steps_per_epoch);
	rc = build_stage(a);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	a->st.trace = tr_pipe_trace_open(c->w.rank, msg, sizeof msg); /* RIO_PIPE_TRACE */
	tr_world_agree(&c->w, *msg != '\0', msg, EXIT_DATA);
	if (a->steps_per_epoch == 0)
		snprintf(msg, sizeof msg, "--train %s: a first stage's rank has fewer records than "
		         "one batch of %d", c->o.train, c->batch);
	tr_world_agree(&c->w, a->steps_per_epoch == 0, msg, EXIT_DATA);
	p->cursor->epoch_steps = a->steps_per_epoch;
	if (!c->o.quiet) /* which rank holds which layers */
		tr_layout_print(&a->l, &c->w, m->sizes, m->nlayers, c->o.nembed, stdout);
}

/* ---- the starting point ---------------------------------------------------------- */

/* n floats from `at` of buffer `which` (0 the parameters, 1 and 2 the
 * optimizer's state) of this rank's part, from and to host memory (a
 * checkpoint's blocks; after a put of the parameters, the caller calls
 * tr_mlp_params_changed). */
static void put_tensor(void *ctx, int which, size_t at, size_t n, const float *src)
{
	tr_model *m = ((pipeline *)ctx)->p->model;
	tr_math_from_host(m->math, tr_optim_buffer(&m->opt, m->net.params, which) + at, src, n);
}

static void fetch_tensor(void *ctx, int which, size_t at, size_t n, float *dst)
{
	tr_model *m = ((pipeline *)ctx)->p->model;
	tr_math_to_host(m->math, dst, tr_optim_buffer(&m->opt, m->net.params, which) + at, n);
}

/* Buffer `which` of this rank's part from the whole model's `host`. */
static void place_tensor(void *ctx, int which, const float *host)
{
	pipeline *a = ctx;
	tr_model *m = a->p->model;
	float *mine = malloc(a->n * sizeof *mine);
	tr_world_agree(&a->p->cfg->w, !mine, "out of memory", EXIT_DATA);
	/* (read only: to_whole 0) */
	tr_slice_copy(&a->sl, &a->l, m->sizes, m->nlayers, (float *)host, mine, 0);
	put_tensor(a, which, 0, a->n, mine);
	free(mine);
	if (which == 0) /* bf16: the weights' copy made again from these */
		tr_mlp_params_changed(&m->net);
}

/* tr_mlp_init_layer's layer `layer` (its region of the whole model from
 * `at`) into the runs of `mine` that fall in it. */
struct fresh {
	const float *layer;
	size_t at, len;
	float *mine;
};

static void fresh_run(void *ctx, const tr_slice_run *r)
{
	struct fresh *f = ctx;
	if (r->whole_at >= f->at && r->whole_at < f->at + f->len)
		memcpy(f->mine + r->mine_at, f->layer + (r->whole_at - f->at), r->n * sizeof(float));
}

/* The starting parameters: rank 0's whole model (host), or with host NULL
 * this rank's part made here from the seed, a layer at a time (the same
 * values: each layer has its own stream), never the whole model. */
static void place_fresh(tr_strategy_state *s, const float *host)
{
	pipeline *a = (pipeline *)s;
	tr_model *m = a->p->model;
	if (host) {
		place_tensor(s, 0, host);
		return;
	}
	tr_mlp all;
	tr_mlp_layout(&all, m->sizes, m->nlayers);
	size_t widest = 0;
	for (int j = 0; j < a->sl.nlayers; j++) {
		int i = a->sl.first + j;
		size_t len = (size_t)(m->sizes[i] + 1) * (size_t)m->sizes[i + 1];
		widest = len > widest ? len : widest;
	}
	float *mine = malloc(a->n * sizeof *mine), *layer = malloc(widest * sizeof *layer);
	tr_world_agree(&a->p->cfg->w, !mine || !layer, "out of memory", EXIT_DATA);
	for (int j = 0; j < a->sl.nlayers; j++) {
		int i = a->sl.first + j;
		struct fresh f = {layer, all.w_off[i], (size_t)(m->sizes[i] + 1) * (size_t)m->sizes[i + 1],
		                  mine};
		tr_mlp_init_layer(m->sizes, i, a->p->cfg->o.seed, layer);
		tr_slice_each_run(&a->sl, &a->l, m->sizes, m->nlayers, 0, fresh_run, &f);
	}
	put_tensor(a, 0, 0, a->n, mine);
	tr_mlp_params_changed(&m->net);
	free(mine);
	free(layer);
}

/* Collective, on resume: the counters, the stage's block of each tensor
 * of the whole model, each reader's loader position. */
static void place(tr_strategy_state *s, const tr_ckpt *c)
{
	pipeline *a = (pipeline *)s;
	const tr_parts *p = a->p;
	const tr_config *cfg = p->cfg;
	tr_cursor *k = p->cursor;
	tr_start_counters(p, c);
	/* each rank its own runs, from the file (never the whole model) */
	tr_ckpt_split_read(&cfg->w, cfg->o.checkpoint, c, tensor_part(s));
	tr_mlp_params_changed(&p->model->net); /* bf16: the weights' copy */
	tr_pipe_tables_place(p, c);
	/* the readers' positions: each its own, or, when the run has another
	 * number of readers than the checkpoint's, the rest of the epoch
	 * re-sharded over them */
	uint32_t from = cfg->plan.elastic_from;
	if (!cfg->o.synthetic && !tr_data_resharded(p->data, cfg, k->epoch))
		tr_data_restore(p->data, cfg, c, from != 0, "rank");
	uint64_t rest = p->data->train ? rio_loader_remaining(p->data->train) / (uint64_t)cfg->batch
	                               : UINT64_MAX;
	rest = tr_world_min_u64(&cfg->w, rest);
	k->epoch_steps = cfg->o.synthetic ? a->steps_per_epoch : k->step_in_epoch + rest;
	if (cfg->w.rank == 0 && !cfg->o.quiet)
		printf("resumed from %s/checkpoint written by D%uxP%uxT%u: epoch %llu, step %llu of "
		       "%llu%s\n", cfg->o.checkpoint, c->layout[0], c->layout[1], c->layout[2],
		       (unsigned long long)k->epoch + 1, (unsigned long long)k->step_in_epoch,
		       (unsigned long long)k->epoch_steps,
		       from ? "; the rest of the epoch re-sharded over this run's readers" : "");
}

/* ---- a step -------------------------------------------------------------------- */

/* Collective: the stage's gradient summed over its data-parallel ranks,
 * then the step's head (loss, correct, count, flags, and whether any
 * stage's sum is not finite) over the world, into head. */
static void exchange(pipeline *a, const struct held *h, float *head)
{
	const tr_config *c = a->p->cfg;
	double t0 = rio__now();
	float *acc = a->st.acc;
	if (a->l.D > 1 && data_sum(a, acc))
		a->st.overflowed = 1;
	head[HEAD_OVERFLOW] = (float)a->st.overflowed;
	a->st.overflowed = 0;
	/* --embed (the first stage): the tables' gradient, summed too */
	int finite = tr_pipe_tables_grad(a->p->model, &a->l, a->st.dbatch, h->in.rows,
	                                 h->have && h->go);
	for (size_t i = 0; i < a->n && finite; i++)
		finite = isfinite(acc[i]);
	head[HEAD_GRADS] = finite ? 0.0f : 1.0f;
	MPI_Allreduce(MPI_IN_PLACE, head, HEAD, MPI_FLOAT, MPI_SUM, c->w.comm);
	a->t_exchange += rio__now() - t0;
	tr_pipe_trace_add(a->st.trace, "X", -1, t0, rio__now());
}

/* The first stage: global step `at`'s batch into h. */
static void read_batch(pipeline *a, uint64_t at, struct held *h)
{
	const tr_parts *p = a->p;
	h->b = NULL;
	h->failed = 0;
	int rc = tr_step_batch_at(p, at, &h->b, &h->in, 0, &h->failed, &a->t_wait, h->err,
	                          sizeof h->err);
	h->go = rc == 1 && !h->failed;
	h->nonfinite = h->go && h->b && tr_data_nonfinite(p->cfg, p->data, h->b);
	tr_pipe_tables_input(p->model, &h->in, h->go);
	h->have = 1;
}

/* Async: the stash := the newest version: before the update of a step
 * that reads ahead (the next batch's first forwards ran on it), or at the
 * start of a step after a drain. */
static void stash_newest(pipeline *a)
{
	if (a->st.stash)
		memcpy(a->st.stash, a->p->model->net.params, a->n * sizeof(float));
}

/* Collective (every rank, the same count): the kept steps' longest
 * schedules over the world, added into span_sum on rank 0. */
static void spans_reduce(pipeline *a)
{
	double most[SPANS];
	MPI_Reduce(a->span, most, a->nspan, MPI_DOUBLE, MPI_MAX, 0, a->p->cfg->w.comm);
	if (a->p->cfg->w.rank == 0)
		for (int i = 0; i < a->nspan; i++)
			a->span_sum += most[i];
	a->nspan = 0;
}

/* A step's schedule seconds, kept (every rank steps together: the same
 * count everywhere); their maxima taken every SPANS steps. */
static void keep_span(pipeline *a, double seconds)
{
	a->span[a->nspan++] = seconds;
	if (a->nspan == SPANS)
		spans_reduce(a);
}

/* One training step on every rank (collective). 0; or, when some rank's
 * data failed, -1 on those ranks (with a message in err) and 1 on the
 * others. */
static int step(pipeline *a, char *err, size_t errlen)
{
	const tr_parts *p = a->p;
	tr_model *m = p->model;
	tr_cursor *k = p->cursor;
	struct held *h = &a->batch[a->cur], *next = &a->batch[!a->cur];
	int first = a->l.p == 0, last = a->l.p == a->l.P - 1;
	int cont = a->st.stash && !tr_step_segment_last(p);
	if (!a->carried)
		stash_newest(a);
	if (first && !h->have)
		read_batch(a, k->global_step, h);
	if (first && cont) { /* --embed: its lookup in its own */
		tr_pipe_lookup_swap(&a->ahead, &m->embed);
		read_batch(a, k->global_step + 1, next);
		tr_pipe_lookup_swap(&a->ahead, &m->embed);
	}
	int go = first && h->go, nonfinite = first && h->nonfinite;
	float *stats = m->net.grads + a->n;
	memset(stats, 0, TR_MLP_EXTRA * sizeof *stats);
	const tr_input *ahead = first && cont && next->go ? &next->in : NULL;
	a->st.slow = tr_step_slowdown(p->cfg, k->global_step); /* --straggler */
	double busy = a->st.busy;
	tr_stage_step(&a->st, go ? &h->in : NULL, ahead, cont, stats);
	keep_span(a, a->st.busy - busy);
	/* a tensor group's ranks count the batch once: its rank 0 */
	int once = a->l.t == 0;
	float head[HEAD] = {0};
	if (last && once) {
		head[TR_EXTRA_LOSS] = stats[0];
		head[TR_EXTRA_CORRECT] = stats[1];
		nonfinite |= !isfinite(stats[0]);
	}
	if (first && once && go)
		head[TR_EXTRA_COUNT] = (float)h->in.rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)(first && h->failed);
	exchange(a, h, head);
	if (cont) /* the next batch's lookup, the next step's */
		tr_pipe_lookup_swap(&a->ahead, &m->embed);
	if (h->b)
		rio_loader_release(p->data->train, h->b);
	h->have = 0;
	a->cur = cont ? !a->cur : a->cur;
	a->carried = cont;
	if (first && h->failed) {
		snprintf(err, errlen, "%s", h->err);
		return -1;
	}
	if (head[TR_EXTRA_FAILED] > 0)
		return 1;
	int apply = head[TR_EXTRA_NONFINITE] == 0 && head[HEAD_GRADS] == 0 &&
	            head[HEAD_OVERFLOW] == 0 && head[TR_EXTRA_COUNT] >= 1;
	if (cont)
		stash_newest(a);
	if (apply) {
		double t0 = rio__now();
		tr_optim_begin(&m->opt, 1.0f / head[TR_EXTRA_COUNT], k->global_step);
		tr_optim_update(&m->opt, m->net.params, a->st.acc, 0, a->n);
		tr_pipe_tables_update(m, 1.0f / head[TR_EXTRA_COUNT], k->global_step);
		a->t_optimizer += rio__now() - t0;
		tr_pipe_trace_add(a->st.trace, "O", -1, t0, rio__now());
		k->ep_loss += head[TR_EXTRA_LOSS];
		k->ep_correct += head[TR_EXTRA_CORRECT];
		k->ep_count += head[TR_EXTRA_COUNT];
	} else {
		k->skipped_steps++;
		k->ep_skipped++;
		k->ep_overflows += head[HEAD_OVERFLOW] > 0;
	}
	tr_pipe_trace_step(a->st.trace);
	k->global_step++;
	k->step_in_epoch++;
	a->steps++;
	return 0;
}

static int step_of(void *ctx, char *err, size_t errlen) { return step(ctx, err, errlen); }

/* After a step: an --eval-every copy of this rank's part when one is due
 * (async: the newest version, the one a checkpoint holds). */
static void after_step(void *ctx)
{
	pipeline *a = ctx;
	tr_step_keep_copy(a->p, &a->copies, a->n);
}

static int segment(tr_strategy_state *s, tr_segment *seg, char *err, size_t errlen)
{
	pipeline *a = (pipeline *)s;
	return tr_step_segment(a->p, seg, step_of, after_step, a, (uint64_t)a->l.D, err, errlen);
}

typedef struct eval_ctx {
	pipeline *a;
	double records;
} eval_ctx;

/* The first stage: a test batch into the pipeline. */
static void eval_batch(void *ctx, tr_input *in)
{
	eval_ctx *e = ctx;
	tr_step_embed_input(e->a->p->model, in, NULL, NULL);
	tr_stage_eval_send(&e->a->st, in, 0, e->a->p->model->eval_stats, &e->records);
}

/* The first stage: every test batch through the pipeline, then its end
 * (or that the data failed). 0, or -1 with a message. */
static int evaluate_first(pipeline *a, double *records, char *err, size_t errlen)
{
	eval_ctx e = {a, 0};
	int rc = tr_step_test_batches(a->p, eval_batch, &e, err, errlen);
	tr_stage_eval_send(&a->st, NULL, rc < 0, a->p->model->eval_stats, &e.records);
	*records = e.records;
	return rc;
}

static int evaluate(tr_strategy_state *s, double sums[3], char *err, size_t errlen)
{
	pipeline *a = (pipeline *)s;
	tr_model *m = a->p->model;
	double records = 0, tensor_bytes = a->tensor_bytes; /* a step's, not these */
	int overflowed = a->st.overflowed; /* a test batch's skips no step */
	int rc = 0;
	tr_math_zero(m->math, m->eval_stats, 2);
	if (a->l.p == 0)
		rc = evaluate_first(a, &records, err, errlen);
	else
		while ((rc = tr_stage_eval_recv(&a->st, m->eval_stats, &records)) > 0) {
		}
	/* the last stage's sums, once a tensor group */
	int counts = a->l.p == a->l.P - 1 && a->l.t == 0;
	float st[2] = {0, 0};
	if (counts)
		tr_math_to_host(m->math, st, m->eval_stats, 2);
	sums[0] = counts ? st[0] : 0;
	sums[1] = counts ? st[1] : 0;
	sums[2] = counts ? records : 0;
	tr_world_sum_to_root(&a->p->cfg->w, sums, 3);
	a->tensor_bytes = tensor_bytes;
	a->st.overflowed = overflowed;
	if (rc < 0 && a->l.p > 0) /* the first stage says why */
		snprintf(err, errlen, "the first stage's test data failed");
	return rc < 0 && a->l.p == 0 ? -1 : 0;
}

/* ---- figures, checkpoints ----------------------------------------------------- */

static void epoch_begin(tr_strategy_state *s)
{
	pipeline *a = (pipeline *)s;
	a->t_wait = a->t_exchange = a->t_optimizer = a->steps = 0;
	a->st.idle = a->st.busy = a->st.bytes = a->tensor_bytes = 0;
	a->span_sum = 0;
	a->nspan = 0;
}

static void figures(tr_strategy_state *s, tr_epoch_figures *f)
{
	pipeline *a = (pipeline *)s;
	const tr_parts *p = a->p;
	tr_step_figures(p, f);
	f->data_wait = a->t_wait;
	f->exchange = a->t_exchange;
	f->optimizer = a->t_optimizer;
	tr_layout_name(&a->l, f->layout, sizeof f->layout);
	/* the bubble: the share of the ranks' steps they did not compute, as
	 * GPipe's (P - 1) / (M + P - 1) counts it: each step lasts its longest
	 * rank's schedule (so a stage done early, waiting at the step's end in
	 * the exchange, idles too), and a rank computes whenever its schedule
	 * is not waiting for a message (a receive, a send's slot, the drain).
	 * Bytes a step: the most any rank moved, by kind (the data allreduce
	 * as a ring moves it: 2 (D - 1) / D x the stage's gradient, 16 bits
	 * an element under compression, and the --embed tables' in fp32,
	 * sent and received) */
	int D = a->l.D;
	double steps = a->steps > 0 ? a->steps : 1;
	double compute = a->st.busy - a->st.idle, sum;
	spans_reduce(a);
	double grad = (double)a->n * (a->cacc ? sizeof(uint16_t) : sizeof(float));
	double bytes = grad + (double)p->model->embed.floats * sizeof(float);
	double mine[3] = {a->st.bytes / steps, D > 1 ? 2.0 * (D - 1) / D * bytes * 2 : 0,
	                  a->tensor_bytes / steps};
	double most[3];
	MPI_Reduce(&compute, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, p->cfg->w.comm);
	MPI_Reduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, 0, p->cfg->w.comm);
	double span = a->span_sum * p->cfg->w.size; /* every rank's steps, each the longest */
	f->bubble = a->l.P > 1 && span > 0 ? 1 - sum / span : 0;
	f->pipe_bytes = most[0];
	f->data_bytes = most[1];
	f->tensor_bytes = most[2];
	f->bytes_per_step = f->pipe_bytes + f->data_bytes + f->tensor_bytes;
	f->grad_overflows = p->cursor->ep_overflows;
}

/* Collective: every copy kept this epoch, each rank's part of it placed
 * and evaluated through the pipeline as the epoch's end evaluates (the
 * test set through the stages), then the parts' own parameters back. */
static int eval_copies(tr_strategy_state *s, tr_copy_fn fn, void *ctx, char *err, size_t errlen)
{
	pipeline *a = (pipeline *)s;
	return tr_step_eval_copies(a->p, &a->copies, a->n, fn, ctx, err, errlen);
}

static uint64_t next_epoch_steps(tr_strategy_state *s) { return ((pipeline *)s)->steps_per_epoch; }

/* Rank 0: the readers' loader positions alone (the first stage's rank of
 * each data group, tensor rank 0), in order: reader d's is world rank
 * d x P x T's. */
static void keep_readers(const tr_layout *l, tr_ckpt *c)
{
	int every = l->P * l->T;
	for (uint32_t r = 0; r < c->nblobs; r++)
		if (r % (uint32_t)every) {
			free(c->blob[r]);
			c->blob[r] = NULL;
		}
	for (int d = 0; d < l->D; d++) {
		c->blob[d] = c->blob[d * every];
		c->blob_size[d] = c->blob_size[d * every];
	}
	c->nblobs = c->world = (uint32_t)l->D;
}

/* Rank 0: what the checkpoint keeps besides the tensors, which each rank
 * of data group 0 writes itself (tensor_part): the readers' positions,
 * the cursor, the tables. */
static int collect(tr_strategy_state *s, tr_ckpt *c, char *err, size_t errlen)
{
	pipeline *a = (pipeline *)s;
	const tr_parts *p = a->p;
	if (c)
		keep_readers(&a->l, c);
	if (a->l.d != 0)
		return 0;
	if (c)
		tr_step_collect_cursor(p, c);
	return tr_pipe_tables_collect(p, c, err, errlen);
}

static void describe(tr_strategy_state *s, char *line, size_t len, char *tail, size_t tlen)
{
	pipeline *a = (pipeline *)s;
	const tr_config *c = a->p->cfg;
	char name[32];
	tr_layout_name(&a->l, name, sizeof name);
	snprintf(line, len, "layout %s, %s schedule of %d microbatch%s, %d records per data-parallel "
	         "group and step, %llu steps per epoch%s", name, tr_pipe_schedule_name(c->o.pipe_schedule),
	         a->st.M, a->st.M > 1 ? "es" : "", c->batch, (unsigned long long)a->steps_per_epoch,
	         a->p->data->synth ? " of synthetic data" : "");
	if (a->l.D > 1)
		snprintf(tail, tlen, ", each stage's gradients summed by MPI_Allreduce");
}

static void close_pipeline(tr_strategy_state *s)
{
	pipeline *a = (pipeline *)s;
	tr_pipe_trace_close(a->st.trace);
	tr_stage_free(&a->st);
	tr_pipe_lookup_free(&a->ahead);
	if (a->op != MPI_OP_NULL)
		MPI_Op_free(&a->op);
	free(a->cacc);
	free(a->tens16);
	tr_copies_free(&a->copies);
	free(a->owned);
	free(a->held);
	free(a);
}

const tr_strategy_ops tr_pipeline_ops = {
	.name = "allreduce", /* checkpoints: the whole model, as allreduce keeps it */
	.data_unit = "first-stage ranks",
	.roles = roles,
	.memory_need = memory_need,
	.open = open_pipeline,
	.place_fresh = place_fresh,
	.place = place,
	.epoch_begin = epoch_begin,
	.segment = segment,
	.evaluate = evaluate,
	.figures = figures,
	.eval_copies = eval_copies,
	.next_epoch_steps = next_epoch_steps,
	.collect = collect,
	.tensor_part = tensor_part,
	.describe = describe,
	.close = close_pipeline,
};

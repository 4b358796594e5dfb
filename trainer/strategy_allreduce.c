/*
 * strategy_allreduce.c — --strategy allreduce (the default): every rank
 * holds the whole model and trains on its part of the data; the gradients
 * are summed over the ranks by the reducer (reducer.h).
 *
 * A step: take the next batch (timing the wait), forward, loss; the
 * step's loss, correct count, record count and flags (a NaN or an
 * infinity in the rank's input or loss, a data error) are summed over the
 * ranks ahead of the gradients (the reducer's head), while backward runs.
 * As each layer's gradients are final they are staged to host memory (on
 * a GPU with several ranks: one rank's stay on the device, checked for
 * NaNs there) and handed to the reducer, whose buckets are summed over the
 * ranks while backward goes on; each bucket is updated by the optimizer as
 * soon as its sum is in (on one rank: at once, while it is in cache), in
 * one pass. When any rank saw a non-finite value, all skip the update; a
 * bucket whose sum is not finite (backward overflowed) is not applied, and
 * the step counts as skipped. The --embed tables' dense gradient is summed
 * by a second reducer, and applied with the step. A rank whose data fails
 * (damage, a label outside --classes) still takes part in the step's
 * collectives, with nothing to add and a flag set, so that every rank
 * learns of it at the same moment and none is left waiting.
 *
 * With --reduce shm (auto on one host) the gradients are in the host's
 * shared window, and with --shard-optimizer the parameters and the
 * optimizer's state too: one copy for the host, each rank updating its
 * slices (the parameter store places them; nothing is copied).
 */
#include "config.h"
#include "exit_status.h"
#include "clock.h"
#include "reducer.h"
#include "save.h"
#include "start.h"
#include "step.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

typedef struct allreduce {
	tr_strategy_state base;
	const tr_parts *p;
	tr_reducer red;          /* the gradients                             */
	tr_reducer tables;       /* --embed: the tables' dense gradient       */
	int sharded;             /* --shard-optimizer: the host's one copy    */
	uint64_t steps_per_epoch;
	tr_copies copies;        /* --eval-every: this epoch's                 */
	/* this epoch's time on this rank */
	double t_wait, t_optimizer, t_tables;
	unsigned char *bad;   /* one rank on a GPU: each bucket's NaN flag       */
} allreduce;

/* One rank on a GPU: its gradient is the step's sum, kept and checked
 * on the device; with several ranks the reducer sums host copies. */
static int sums_on_device(const allreduce *a)
{
	return tr_step_on_gpu(a->p->model) && a->p->cfg->w.size == 1;
}

static int roles(const tr_options *o, const tr_world *w, tr_roles *r, char *err, size_t errlen)
{
	*r = (tr_roles){.data_rank = w->rank, .data_world = w->size};
	return 0;
}

/* Every rank holds the model and every table whole, each with its
 * gradient and optimizer state, and the activations of its batch (each
 * layer's output, backward's two scratch buffers). */
static void memory_need(const tr_parts *p, tr_need *n)
{
	const tr_options *o = &p->cfg->o;
	double states = tr_optim_states(o->optim.kind), f = sizeof(float);
	double P = (double)p->model->nparams;
	char what[320];
	snprintf(what, sizeof what, "the model of %.0f parameters (its values, gradient and "
	         "optimizer state)", P);
	tr_need_add(n, P * f * (2 + states), what);
	const tr_model *m = p->model;
	double act = 0, widest = 0;
	for (int l = 1; l <= m->nlayers; l++) {
		act += m->sizes[l];
		widest = m->sizes[l] > widest ? m->sizes[l] : widest;
	}
	snprintf(what, sizeof what, "the activations of %d rows", m->rows);
	tr_need_add(n, (act + 2 * widest) * m->rows * f, what);
	tr_need_tables(n, o);
}

/* ---- open --------------------------------------------------------------------- */

/* The reducers' memory in the host's window (shm), asked of the store. */
typedef struct shm_regions {
	int ctl, sum, tables_ctl, tables_sum;
} shm_regions;

static void plan_buffers(allreduce *a, int shm, shm_regions *g)
{
	const tr_parts *p = a->p;
	const tr_options *o = &p->cfg->o;
	tr_model *m = p->model;
	int cpu = o->device == TR_DEVICE_CPU;
	tr_model_places at = {
		.params = a->sharded ? TR_PLACE_HOST_SHARED : TR_PLACE_BACKEND,
		/* shm: the gradients (CPU) or their staging copy (GPU) live in the
		 * host's shared window, where the other ranks read them */
		.grads = shm && cpu ? TR_PLACE_RANK_SHARED : TR_PLACE_BACKEND,
		.staging = cpu ? -1 : shm ? TR_PLACE_RANK_SHARED : TR_PLACE_HOST,
		.state = a->sharded ? TR_PLACE_HOST_SHARED : TR_PLACE_BACKEND,
		/* bf16: the copy the GEMMs read is written by the update, the
		 * rank's own (sharded: the host's one copy, each rank writing its
		 * slices of it as it updates them: half the pass on 2 ranks) */
		.update16 = 1,
		.params16_shared = a->sharded,
		.tables = TR_PLACE_BACKEND,
		.table_grads = shm ? TR_PLACE_RANK_SHARED : TR_PLACE_BACKEND,
	};
	tr_model_plan(m, p->cfg, p->data, p->store, &at);
	*g = (shm_regions){-1, -1, -1, -1};
	if (!shm)
		return;
	g->ctl = tr_store_add(p->store, "the reducer's counters",
	                      tr_reducer_shm_bytes(m->nparams, o->bucket_bytes), 1,
	                      TR_PLACE_RANK_SHARED);
	g->sum = tr_store_add(p->store, "the gradients' sum", m->nparams, sizeof(float),
	                      TR_PLACE_HOST_SHARED);
	if (m->r_tables < 0)
		return;
	size_t floats = m->table_floats;
	g->tables_ctl = tr_store_add(p->store, "the tables' reducer's counters",
	                             tr_reducer_shm_bytes(floats, o->bucket_bytes), 1,
	                             TR_PLACE_RANK_SHARED);
	g->tables_sum = tr_store_add(p->store, "the tables' gradient's sum", floats, sizeof(float),
	                             TR_PLACE_HOST_SHARED);
}

/* The reducers over the store's buffers. 0, -ENOMEM or -EINVAL. */
static int open_reducers(allreduce *a, tr_reduce_mode mode, const shm_regions *g)
{
	const tr_parts *p = a->p;
	const tr_options *o = &p->cfg->o;
	tr_model *m = p->model;
	const tr_store *s = p->store;
	size_t n = m->nparams;
	int at = m->r_staging >= 0 ? m->r_staging : m->r_grads;
	tr_reducer_shm_mem shm = {tr_store_window(s), g->ctl >= 0 ? tr_store_offset(s, g->ctl) : 0,
	                          tr_store_offset(s, at), tr_store_floats(s, g->sum), a->sharded};
	tr_grad_comp comp = (tr_grad_comp)o->grad_compression;
	int rc = tr_reducer_init_comp(&a->red, p->cfg->w.comm, mode, m->staging, n,
	                              o->bucket_bytes, m->staging + n, TR_MLP_EXTRA,
	                              g->ctl >= 0 ? &shm : NULL, comp);
	if (rc < 0 || !m->embed.n)
		return rc;
	tr_embed_run *e = &m->embed;
	tr_reducer_shm_mem tshm = {
		tr_store_window(s), g->tables_ctl >= 0 ? tr_store_offset(s, g->tables_ctl) : 0,
		tr_store_offset(s, m->r_table_grads), tr_store_floats(s, g->tables_sum), 0};
	return tr_reducer_init_comp(&a->tables, p->cfg->w.comm, mode, e->grads, e->floats,
	                            o->bucket_bytes, e->grads + e->floats, 0,
	                            g->tables_ctl >= 0 ? &tshm : NULL, comp);
}

/* Collective: how the gradients are summed, and whether the update is
 * sharded; the host's communicator for the window (MPI_COMM_NULL: none). */
static tr_reduce_mode choose_mode(allreduce *a, MPI_Comm *node)
{
	const tr_config *c = a->p->cfg;
	const tr_options *o = &c->o;
	char msg[MSG] = "";
	int cpu = o->device == TR_DEVICE_CPU;
	/* compressed: the slices over MPI (shm sends nothing to compress) */
	int mode = tr_reducer_mode(c->w.comm, (tr_reduce_mode)o->reduce,
	                           cpu && !o->grad_compression, node);
	if (mode < 0)
		snprintf(msg, sizeof msg, "--reduce shm: the ranks are not all on one host (or "
		         "cannot share memory); use --reduce alltoall or mpi");
	tr_world_agree(&c->w, mode < 0, msg, EXIT_DATA);
	int shm = mode == TR_REDUCE_SHM && c->w.size > 1;
	/* shm: the parameters and the optimizer's state, one copy per host,
	 * each rank updating its slices: asked for, or by default under
	 * --precision bf16 (where --eval-every allows), where the other ranks'
	 * forwards read only the bf16 copy the update writes (half the fp32
	 * lines to fetch from the core that updated them, which made the
	 * sharded fp32 update no faster on 2 cores) and the replicated update
	 * was 15 % of a 2-rank step of 784-256-128-10 */
	int can = cpu && o->optim.kind != TR_OPT_LARS && shm;
	a->sharded = can && (o->shard_optimizer ||
	                     (o->precision == TR_PRECISION_BF16 && !o->eval_every));
	if (o->shard_optimizer && !a->sharded)
		snprintf(msg, sizeof msg, "--shard-optimizer: needs the sums in shared memory (every "
		         "rank on one host, more than one), the CPU and SGD or Adam");
	tr_world_agree(&c->w, o->shard_optimizer && !a->sharded, msg, EXIT_DATA);
	return (tr_reduce_mode)mode;
}

static void open_allreduce(tr_strategy_state **out, const tr_parts *p)
{
	const tr_config *c = p->cfg;
	const tr_options *o = &c->o;
	tr_model *m = p->model;
	allreduce *a = calloc(1, sizeof *a);
	tr_world_agree(&c->w, !a, "out of memory", EXIT_DATA);
	a->base.p = a->p = p;
	*out = &a->base;
	MPI_Comm node;
	tr_reduce_mode mode = choose_mode(a, &node);
	shm_regions g;
	plan_buffers(a, node != MPI_COMM_NULL, &g);
	char msg[MSG] = "";
	snprintf(msg, sizeof msg, "out of memory for a model of %zu parameters", m->nparams);
	int rc = tr_store_open(p->store, node, msg, sizeof msg);
	if (rc == 0 && o->synthetic)
		rc = tr_data_synthetic(p->data, m->math, m->sizes[0], c, c->w.rank);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	/* steps per epoch: what every rank can do with full batches */
	a->steps_per_epoch = tr_world_min_u64(&c->w, tr_data_full_batches(p->data, c));
	tr_model_schedule(m, c, a->steps_per_epoch);
	rc = tr_model_build(m, c, p->data, p->store);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	rc = open_reducers(a, mode, &g);
	if (rc == 0 && sums_on_device(a) && !(a->bad = calloc(a->red.nbuckets, 1)))
		rc = -ENOMEM;
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	if (a->steps_per_epoch == 0) { /* every rank says so: the fewest records, not its own */
		uint64_t fewest = tr_world_min_u64(&c->w, rio_loader_records(p->data->train));
		snprintf(msg, sizeof msg,
		         "--train %s: a rank has fewer records (%llu) than one batch of %d", o->train,
		         (unsigned long long)fewest, c->batch);
	}
	tr_world_agree(&c->w, a->steps_per_epoch == 0, msg, EXIT_DATA);
	p->cursor->epoch_steps = a->steps_per_epoch;
}

/* ---- the starting point ---------------------------------------------------------- */

/* Parameters or optimizer state from the host: under a sharded update they
 * are the host's one copy (with their bf16 copy), written by one rank (then
 * fenced). */
static void load(allreduce *a, float *dst, const float *host)
{
	const tr_parts *p = a->p;
	tr_mlp *net = &p->model->net;
	int writer = !a->sharded || p->cfg->w.rank == 0;
	if (writer)
		tr_math_from_host(p->model->math, dst, host, p->model->nparams);
	if (!a->sharded) {
		tr_mlp_params_changed(net);
	} else if (dst == net->params && net->params16) {
		/* the host's one bf16 copy, rounded by its writer (fenced with
		 * the parameters) rather than by every rank's next forward */
		if (writer)
			tr_to_bf16(net->math, net->params16, net->params, net->nparams);
		net->params16_stale = 0;
	}
}

static void place_fresh(tr_strategy_state *s, const float *host)
{
	allreduce *a = (allreduce *)s;
	load(a, a->p->model->net.params, host);
}

static void place_tensor(void *ctx, int which, const float *host)
{
	allreduce *a = ctx;
	tr_model *m = a->p->model;
	load(a, tr_optim_buffer(&m->opt, m->net.params, which), host);
}

/* Collective, on resume: the counters, then the tensors, then each rank's
 * loader position. */
static void place(tr_strategy_state *s, const tr_ckpt *c)
{
	allreduce *a = (allreduce *)s;
	const tr_parts *p = a->p;
	const tr_config *cfg = p->cfg;
	tr_cursor *k = p->cursor;
	tr_model *m = p->model;
	tr_start_counters(p, c);
	tr_start_tensors(p, c, place_tensor, a);
	tr_store_fence(p->store);
	tr_start_tables(p, c, tr_embed_run_place, &m->embed);
	m->embed.opt.t = m->opt.t;
	uint32_t from = cfg->plan.elastic_from;
	if (p->data->train && !tr_data_resharded(p->data, cfg, k->epoch))
		tr_data_restore(p->data, cfg, c, from != 0, "rank");
	/* the steps of the epoch in progress: those done, and what every rank
	 * can do with full batches of its rest (after an elastic resume, its
	 * share of the rest re-sharded over this world, at any world size
	 * after one) */
	k->epoch_steps = !p->data->train
	                         ? a->steps_per_epoch
	                         : k->step_in_epoch +
	                                   tr_world_min_u64(&cfg->w,
	                                                    rio_loader_remaining(p->data->train) /
	                                                            (uint64_t)cfg->batch);
	if (cfg->w.rank != 0 || cfg->o.quiet)
		return;
	if (from)
		printf("resumed from %s/checkpoint written by %u ranks: epoch %llu, step %llu of %llu; "
		       "the global batch of %d kept (%d per rank), the rest of the epoch re-sharded\n",
		       cfg->o.checkpoint, from, (unsigned long long)k->epoch + 1,
		       (unsigned long long)k->step_in_epoch, (unsigned long long)k->epoch_steps,
		       cfg->batch * cfg->w.size, cfg->batch);
	else
		printf("resumed from %s/checkpoint: epoch %llu, step %llu of %llu\n", cfg->o.checkpoint,
		       (unsigned long long)k->epoch + 1, (unsigned long long)k->step_in_epoch,
		       (unsigned long long)a->steps_per_epoch);
}

/* ---- a step -------------------------------------------------------------------- */

typedef struct step_ctx {
	allreduce *a;
	size_t staged;      /* GPU: grads [0, staged) copied to the host      */
	int decided;        /* the head's sums are in and were read           */
	int apply;          /* ... and say the step is to be applied          */
	int partial;        /* a bucket's sum was not finite: not applied     */
} step_ctx;

/* Once the head's sums are in: whether the step is applied, and how. */
static int decide(step_ctx *s, int wait)
{
	allreduce *a = s->a;
	if (s->decided)
		return 1;
	if (!tr_reducer_head_in(&a->red, wait))
		return 0;
	const float *sum = a->red.head_out;
	s->decided = 1;
	s->apply = sum[TR_EXTRA_FAILED] == 0 && sum[TR_EXTRA_NONFINITE] == 0 &&
	           sum[TR_EXTRA_COUNT] >= 1;
	if (s->apply)
		tr_optim_begin(&a->p->model->opt, 1.0f / sum[TR_EXTRA_COUNT],
		               a->p->cursor->global_step);
	return 1;
}

/* A sharded update (reducer.h, shm): the reducer hands this rank its
 * slice of a bucket, the parameters and state being the host's one copy. */
static void update_slice(void *ctx, size_t begin, size_t end, int finite)
{
	step_ctx *s = ctx;
	allreduce *a = s->a;
	decide(s, 1); /* the reducer calls once the head is in */
	if (!s->apply || !finite || begin == end)
		return;
	double t0 = rio__now();
	tr_model *m = a->p->model;
	tr_optim_update(&m->opt, m->net.params, a->red.sum, begin, end);
	a->t_optimizer += rio__now() - t0;
}

/* One rank on a GPU: the sum is the device's own gradient. The buckets
 * taken now (in order and contiguous: one rank posts them as they are
 * final) are checked on the device in one pass, a flag each, and each run
 * of finite buckets is updated in one launch: one wait per layer, not one
 * per bucket (256 KiB buckets made 320 waits a step on an 80 MB model).
 * The buckets applied and skipped are those of the host's path. */
static void update_on_device(step_ctx *s, int wait, int whole)
{
	allreduce *a = s->a;
	tr_model *m = a->p->model;
	size_t first = 0, last = 0, begin, end;
	while (tr_reducer_take(&a->red, wait, &begin, &end, NULL)) {
		if (last == 0)
			first = begin;
		last = end;
	}
	if (last == 0)
		return;
	size_t per = a->red.bucket, k0 = first / per, nb = (last - first + per - 1) / per;
	unsigned char *bad = a->bad + k0;
	int nbad = tr_math_nonfinite(m->math, m->net.grads + first, last - first, per, bad);
	if (nbad < 0) /* the device failed: the step's sync says so */
		memset(bad, 1, nb);
	if (nbad != 0)
		s->partial = 1;
	if (!s->apply || whole)
		return;
	double t0 = rio__now();
	for (size_t k = 0; k < nb;) {
		while (k < nb && bad[k])
			k++;
		size_t run = k;
		while (k < nb && !bad[k])
			k++;
		if (k > run) {
			size_t b = first + run * per, e = first + k * per;
			tr_optim_update(&m->opt, m->net.params, m->net.grads, b, e < last ? e : last);
		}
	}
	a->t_optimizer += rio__now() - t0;
}

/* Updates every bucket whose sum is in (with wait: every bucket, waiting
 * for them), once the head says whether and how: a bucket is updated when
 * the step is applied and its own sum is finite, whatever the order the
 * buckets come in, so the result is the same on every rank and run. (A
 * sharded reducer has updated this rank's slices itself.) */
static void update_buckets(step_ctx *s, int wait)
{
	allreduce *a = s->a;
	tr_model *m = a->p->model;
	size_t np = m->nparams;
	int gpu = tr_step_on_gpu(m), on_device = sums_on_device(a);
	if (!decide(s, wait))
		return;
	int whole = !tr_optim_bucketwise(&m->opt);
	size_t begin, end;
	int finite;
	if (on_device)
		update_on_device(s, wait, whole);
	else
		while (tr_reducer_take(&a->red, wait, &begin, &end, &finite)) {
			if (!finite)
				s->partial = 1;
			if (!s->apply || !finite || whole || a->red.sharded)
				continue;
			double t0 = rio__now();
			/* on a GPU, the host's sum goes back */
			if (gpu)
				tr_math_from_host(m->math, m->net.grads + begin, a->red.sum + begin,
				                  end - begin);
			tr_optim_update(&m->opt, m->net.params, gpu ? m->net.grads : a->red.sum, begin,
			                end);
			a->t_optimizer += rio__now() - t0;
		}
	/* an optimizer that needs whole layers: one pass once all are in */
	if (wait && whole && s->apply && !s->partial) {
		double t0 = rio__now();
		if (gpu && !on_device)
			tr_math_from_host(m->math, m->net.grads, a->red.sum, np);
		tr_optim_update(&m->opt, m->net.params, gpu ? m->net.grads : a->red.sum, 0, np);
		a->t_optimizer += rio__now() - t0;
	}
}

/* Called by backward after each layer: grads [0, end) are final, and
 * params [0, end) are read no more by this step. */
static void grads_ready(void *ctx, size_t end)
{
	step_ctx *s = ctx;
	tr_model *m = s->a->p->model;
	if (tr_step_on_gpu(m) && !sums_on_device(s->a) && end > s->staged) {
		tr_math_to_host(m->math, m->staging + s->staged, m->net.grads + s->staged,
		                end - s->staged);
		s->staged = end;
	}
	tr_reducer_ready(&s->a->red, end);
	update_buckets(s, 0);
}

/* --embed: the tables' dense gradient summed over the ranks (every rank,
 * failed or not), applied when the step is, whole. */
static void tables_step(allreduce *a, const step_ctx *s)
{
	tr_model *m = a->p->model;
	tr_embed_run *e = &m->embed;
	double t0 = rio__now();
	tr_embed_run_dense_grad(e);
	tr_reducer_begin(&a->tables);
	tr_reducer_head(&a->tables);
	tr_reducer_flush(&a->tables);
	size_t begin, end;
	int finite;
	while (tr_reducer_take(&a->tables, 1, &begin, &end, &finite)) {
	}
	const float *sum = a->red.head_out;
	if (s->apply && !s->partial)
		tr_embed_run_update(e, a->tables.sum, 1.0f / sum[TR_EXTRA_COUNT],
		                    a->p->cursor->global_step);
	a->t_tables += rio__now() - t0;
}

/* The rank's forward and loss of its batch (when it has one: go), the
 * head written and started: 1 when the rank goes on to backward, 0 when
 * it only takes part (a GPU that failed is this rank's failure, told in
 * the head). */
static int forward(allreduce *a, const rio_batch *b, tr_input *in, int go, int *failed,
                   int *rows, char *err, size_t errlen)
{
	const tr_parts *p = a->p;
	tr_model *m = p->model;
	size_t np = m->nparams;
	float *extras = m->net.grads + np, *head = m->staging + np;
	int nonfinite = 0;
	*rows = 0;
	if (go) {
		*rows = in->rows;
		nonfinite = b && tr_data_nonfinite(p->cfg, p->data, b);
		tr_step_embed_input(m, in, NULL, NULL);
		tr_mlp_forward(&m->net, in);
		tr_mlp_loss(&m->net, in, extras, 1);
		/* the loss and correct count (on a GPU, the wait for forward) */
		if (tr_math_to_host(m->math, head, extras, TR_MLP_EXTRA) < 0) {
			snprintf(err, errlen, "the GPU failed during a training step");
			*failed = 1;
			go = 0;
			*rows = 0;
		}
		nonfinite |= !isfinite(head[TR_EXTRA_LOSS]);
	}
	if (!go)
		memset(head, 0, TR_MLP_EXTRA * sizeof *head);
	/* the head goes ahead of the gradients: by the time the first bucket is
	 * in, every rank knows the global batch and whether to apply the step */
	head[TR_EXTRA_COUNT] = (float)*rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)*failed;
	tr_reducer_head(&a->red);
	return go;
}

/* The rank's backward, its gradients handed to the reducer as each layer
 * is done (or, when it has no batch, its part: nothing); then the rest
 * summed and applied. */
static void backward(allreduce *a, step_ctx *s, int go, rio_batch **b, const tr_input *in,
                     int rows, double t1)
{
	const tr_parts *p = a->p;
	tr_model *m = p->model;
	size_t np = m->nparams;
	if (go) {
		tr_mlp_backward(&m->net, in, grads_ready, s);
		if (m->embed.n)
			tr_embed_run_backward(&m->embed, m->net.dinput, rows);
		/* --straggler: this rank's gradients come late */
		double f = tr_step_slowdown(p->cfg, p->cursor->global_step);
		if (f > 1) {
			tr_math_sync(m->math);
			tr_step_straggle(f, rio__now() - t1);
		}
		/* on the CPU the batch is read no more: back to the loader now,
		 * so that its worker fills the next one while this rank waits
		 * for the others' gradients rather than after (on a core per
		 * rank, that fill had cost real data 3% against --synthetic) */
		if (*b && !tr_step_on_gpu(m)) {
			rio_loader_release(p->data->train, *b);
			*b = NULL;
		}
	} else {
		/* this rank failed, or its epoch ended early (damaged records
		 * were skipped): it still takes part, adding nothing */
		memset(m->staging, 0, np * sizeof *m->staging);
		tr_reducer_ready(&a->red, np);
	}
	tr_reducer_flush(&a->red);
	update_buckets(s, 1);
	if (m->embed.n) /* the tables, densely: every rank, failed or not */
		tables_step(a, s);
}

/* One training step on every rank (collective). 0; or, when some rank's
 * data failed, -1 on those ranks (with a message in err) and 1 on the
 * others: then every rank agrees on it, which ends the job. */
static int step(allreduce *a, char *err, size_t errlen)
{
	const tr_parts *p = a->p;
	tr_model *m = p->model;
	tr_cursor *k = p->cursor;
	rio_batch *b = NULL;
	tr_input in;
	int failed = 0, rows;
	int rc = tr_step_batch(p, &b, &in, 0, &failed, &a->t_wait, err, errlen);
	double t1 = rio__now();
	tr_math_zero(m->math, m->net.grads + m->nparams, TR_MLP_EXTRA);
	tr_reducer_begin(&a->red);
	step_ctx s = {.a = a};
	a->red.update = update_slice;
	a->red.update_ctx = &s;
	int go = rc == 1 && !failed;
	for (int t = 0; t < m->embed.n && !go; t++)
		m->embed.nuniq[t] = 0; /* no rows of this rank's in the tables' sum */
	go = forward(a, b, &in, go, &failed, &rows, err, errlen);
	backward(a, &s, go, &b, &in, rows, t1);
	if (tr_math_sync(m->math) < 0 && !failed) {
		snprintf(err, errlen, "the GPU failed during a training step");
		failed = 1;
	}
	if (b)
		rio_loader_release(p->data->train, b);
	if (failed)
		return -1;
	const float *sum = a->red.head_out;
	if (sum[TR_EXTRA_FAILED] > 0)
		return 1;
	if (!s.apply || s.partial) {
		k->skipped_steps++;
		k->ep_skipped++;
		k->ep_overflows += s.apply && (a->red.overflowed || a->tables.overflowed);
	} else {
		k->ep_loss += sum[TR_EXTRA_LOSS];
		k->ep_correct += sum[TR_EXTRA_CORRECT];
		k->ep_count += sum[TR_EXTRA_COUNT];
	}
	k->global_step++;
	k->step_in_epoch++;
	return 0;
}

/* ---- segments, evaluation, figures ------------------------------------------- */

static int step_of(void *ctx, char *err, size_t errlen) { return step(ctx, err, errlen); }

/* After a step: an --eval-every copy of the whole model when one is due. */
static void after_step(void *ctx)
{
	allreduce *a = ctx;
	tr_step_keep_copy(a->p, &a->copies, a->p->model->nparams);
}

static int segment(tr_strategy_state *s, tr_segment *seg, char *err, size_t errlen)
{
	allreduce *a = (allreduce *)s;
	return tr_step_segment(a->p, seg, step_of, after_step, a, (uint64_t)a->p->cfg->w.size, err,
	                       errlen);
}

static int evaluate(tr_strategy_state *s, double sums[3], char *err, size_t errlen)
{
	allreduce *a = (allreduce *)s;
	int rc = tr_step_evaluate(a->p, NULL, NULL, sums, err, errlen);
	tr_world_sum_to_root(&a->p->cfg->w, sums, 3);
	return rc;
}

static void epoch_begin(tr_strategy_state *s)
{
	allreduce *a = (allreduce *)s;
	a->t_wait = a->t_optimizer = a->t_tables = 0;
	a->red.seconds = 0;
}

static void figures(tr_strategy_state *s, tr_epoch_figures *f)
{
	allreduce *a = (allreduce *)s;
	const tr_parts *p = a->p;
	int W = p->cfg->w.size;
	tr_step_figures(p, f);
	f->data_wait = a->t_wait;
	f->exchange = a->red.seconds + a->t_tables;
	f->optimizer = a->t_optimizer;
	/* what a ring allreduce of a step's gradients moves through one rank,
	 * sent and received: 2 (W - 1) / W x their bytes (the dense layers and
	 * the --embed tables, densely) */
	double floats = (double)p->model->nparams + (double)p->model->embed.floats;
	size_t bytes = p->cfg->o.grad_compression ? sizeof(uint16_t) : sizeof(float);
	f->bytes_per_step = W > 1 ? 2.0 * (W - 1) / W * floats * bytes * 2 : 0;
	f->grad_overflows = p->cursor->ep_overflows;
}

/* Collective: every copy kept this epoch evaluated (each rank its own, all
 * alike), then the epoch's own parameters back. */
static int eval_copies(tr_strategy_state *s, tr_copy_fn fn, void *ctx, char *err, size_t errlen)
{
	allreduce *a = (allreduce *)s;
	return tr_step_eval_copies(a->p, &a->copies, a->p->model->nparams, fn, ctx, err, errlen);
}

static uint64_t next_epoch_steps(tr_strategy_state *s) { return ((allreduce *)s)->steps_per_epoch; }

/* Rank 0: the model, the optimizer's state and the tables, its own. */
static int collect(tr_strategy_state *s, tr_ckpt *c, char *err, size_t errlen)
{
	allreduce *a = (allreduce *)s;
	const tr_parts *p = a->p;
	if (!c)
		return 0;
	tr_model *m = p->model;
	size_t n = m->nparams;
	tr_step_collect_cursor(p, c);
	c->params = malloc(n * sizeof(float));
	c->state1 = malloc(n * sizeof(float));
	if (tr_optim_state_count(&m->opt) == 2)
		c->state2 = malloc(n * sizeof(float));
	if (!c->params || !c->state1 || (tr_optim_state_count(&m->opt) == 2 && !c->state2)) {
		snprintf(err, errlen, "out of memory writing a checkpoint");
		return -1;
	}
	tr_math_to_host(m->math, c->params, m->net.params, n);
	tr_math_to_host(m->math, c->state1, m->opt.state1, n);
	if (c->state2)
		tr_math_to_host(m->math, c->state2, m->opt.state2, n);
	return tr_save_tables(p, c, tr_embed_run_fetch, &m->embed, 0, err, errlen);
}

static void describe(tr_strategy_state *s, char *line, size_t len, char *tail, size_t tlen)
{
	allreduce *a = (allreduce *)s;
	const tr_config *c = a->p->cfg;
	snprintf(line, len, "%d records per rank and step, %llu steps per epoch%s", c->batch,
	         (unsigned long long)a->steps_per_epoch,
	         a->p->data->synth ? " of synthetic data" : "");
	if (c->w.size > 1)
		snprintf(tail, tlen, ", gradients summed by %s%s", tr_reduce_mode_name(a->red.mode),
		         a->sharded ? ", each rank updating its slices" : "");
}

static void close_allreduce(tr_strategy_state *s)
{
	allreduce *a = (allreduce *)s;
	tr_reducer_free(&a->red);
	tr_reducer_free(&a->tables);
	tr_copies_free(&a->copies);
	free(a->bad);
	free(a);
}

const tr_strategy_ops tr_allreduce_ops = {
	.name = "allreduce",
	.data_unit = "ranks",
	.roles = roles,
	.memory_need = memory_need,
	.open = open_allreduce,
	.place_fresh = place_fresh,
	.place = place,
	.epoch_begin = epoch_begin,
	.segment = segment,
	.evaluate = evaluate,
	.figures = figures,
	.eval_copies = eval_copies,
	.next_epoch_steps = next_epoch_steps,
	.collect = collect,
	.describe = describe,
	.close = close_allreduce,
};

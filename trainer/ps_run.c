/*
 * ps_run.c — what the strategies with parameter servers share (ps_run.h):
 * a server's or a worker's side, the worker's step and the segments, the
 * evaluation, the --eval-every copies and the epoch's figures (the
 * checkpoint's pieces: ps_ckpt.c).
 */
#include "config.h"
#include "exit_status.h"
#include "ps_run.h"
#include "clock.h"
#include "step.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

int tr_ps_roles(const tr_options *o, const tr_world *w, tr_roles *r, char *err, size_t errlen)
{
	/* the data is the workers' */
	int S = o->servers, W = w->size - S;
	*r = (tr_roles){.data_rank = w->rank < S ? -1 : w->rank - S, .data_world = W,
	                .server = w->rank < S};
	if (W < 1)
		snprintf(err, errlen, "--strategy %s with %d server%s needs at least %d ranks "
		         "(servers and one worker or more); this run has %d",
		         tr_strategy_get(o->strategy)->name, S, S > 1 ? "s" : "", S + 1,
		         w->size);
	else if (o->backup_workers >= W)
		snprintf(err, errlen, "--backup-workers %d: leaves no gradient of %d workers to apply",
		         o->backup_workers, W);
	return W < 1 || o->backup_workers >= W ? -1 : 0;
}

void tr_ps_memory_need(const tr_parts *p, tr_need *n, int dense_on_servers)
{
	const tr_config *c = p->cfg;
	const tr_options *o = &c->o;
	double states = tr_optim_states(o->optim.kind), f = sizeof(float);
	double P = (double)p->model->nparams;
	int server = c->roles.server, S = o->servers, W = c->roles.data_world;
	int sync = o->staleness == 0;
	char what[320];
	if (server && dense_on_servers) {
		size_t lo, hi;
		tr_ps_slice((size_t)P, S, c->w.rank, &lo, &hi);
		double slice = (double)(hi - lo);
		snprintf(what, sizeof what, "the model's slice of %.0f parameters (its values, "
		         "gradient%s and optimizer state on a server)", slice, sync ? "s" : "");
		tr_need_add(n, slice * f * (2 + states + (sync ? W : 0)), what);
	} else if (!server) {
		double copies = 2 + (dense_on_servers ? 0 : states);
		snprintf(what, sizeof what, "the model of %.0f parameters (its values, gradient%s)", P,
		         copies > 2 ? " and optimizer state" : "");
		tr_need_add(n, P * f * copies, what);
	}
	for (int i = 0; i < o->nembed; i++) {
		const tr_embed_option *e = &o->embed[i];
		double dim = e->dim, bytes;
		if (server) {
			int64_t lo, hi;
			tr_embed_rows_of(e->vocab, S, c->w.rank, &lo, &hi);
			double rws = (double)(hi - lo);
			bytes = rws * dim * f * (1 + states + sync) + (sync ? rws * 12 : 0);
		} else {
			double ids = (double)p->model->rows * (double)p->data->specs[o->nx + i].length;
			bytes = ids * (16 + 2 * dim * f);
		}
		snprintf(what, sizeof what, "--embed %s:%lld:%d (%s)", e->feature, (long long)e->vocab,
		         e->dim, server ? "a server's rows, with their optimizer state"
		                        : "a batch's rows on a worker");
		tr_need_add(n, bytes, what);
	}
}

/* ---- open ------------------------------------------------------------------------ */

void tr_ps_begin(tr_ps_run *r, const tr_parts *p, const tr_ps_dense *dense)
{
	r->base.p = r->p = p;
	r->dense = dense;
	r->r_reply = -1;
}

void tr_ps_plan(tr_ps_run *r, int grads_place, int state_place)
{
	const tr_parts *p = r->p;
	const tr_config *c = p->cfg;
	if (c->roles.server)
		return; /* a server's slices are its own (ps_server.c) */
	int gpu = c->o.device == TR_DEVICE_CUDA;
	tr_model_places at = {.params = TR_PLACE_BACKEND, .grads = grads_place,
	                      .staging = gpu ? TR_PLACE_HOST : -1, .state = state_place,
	                      .tables = -1, .table_grads = -1};
	tr_model_plan(p->model, c, p->data, p->store, &at);
	/* the replies land in the host copy: on the CPU, the parameters */
	if (gpu && r->dense->on_servers)
		r->r_reply = tr_store_add(p->store, "the servers' replies", p->model->nparams,
		                          sizeof(float), TR_PLACE_HOST);
}

/* This rank's server (rank < S) or worker, once the model and the
 * optimizer's configuration are set. 0 or -ENOMEM. */
static int open_side(tr_ps_run *r)
{
	const tr_parts *p = r->p;
	const tr_config *c = p->cfg;
	const tr_options *o = &c->o;
	tr_model *m = p->model;
	int S = o->servers;
	size_t dense = r->dense->on_servers ? m->nparams : 0;
	tr_grad_comp comp = dense ? (tr_grad_comp)o->grad_compression : TR_COMP_NONE;
	int pull16 = dense && o->precision == TR_PRECISION_BF16; /* both sides */
	if (c->roles.server) {
		r->server = calloc(1, sizeof *r->server);
		if (!r->server)
			return -ENOMEM;
		int rc = tr_ps_server_init(r->server, c->w.comm, S, c->roles.data_world, m->math,
		                           dense, &m->opt.cfg, o->staleness, o->staleness_lr,
		                           o->backup_workers, o->eval_every);
		rc = rc < 0 ? rc : tr_ps_server_compress(r->server, comp, c->roles.data_world);
		return rc < 0 || !pull16 ? rc : tr_ps_server_pull16(r->server);
	}
	r->worker = calloc(1, sizeof *r->worker);
	if (!r->worker)
		return -ENOMEM;
	float *reply = r->r_reply >= 0 ? tr_store_floats(p->store, r->r_reply) : m->net.params;
	int rc = tr_ps_worker_init(r->worker, c->w.comm, S, dense, reply);
	r->worker->embed = &m->embed;
	rc = rc < 0 ? rc : tr_ps_worker_compress(r->worker, comp, c->roles.data_world);
	return rc < 0 || !pull16 ? rc : tr_ps_worker_pull16(r->worker);
}

/* A server's rows of every --embed table. 0 or -ENOMEM. */
static int open_tables(tr_ps_run *r)
{
	const tr_config *c = r->p->cfg;
	const tr_options *o = &c->o;
	int rc = 0;
	if (!r->server)
		return 0;
	tr_embed_table t[TR_MAX_EMBED];
	tr_embed_run_tables(t, o->embed, o->nembed, r->p->data->specs + o->nx);
	for (int i = 0; rc == 0 && i < o->nembed; i++)
		rc = tr_ps_server_add_table(r->server, &t[i], i, o->seed, &r->p->model->opt.cfg);
	return rc;
}

/* A worker does every full batch of its own data, so an epoch's steps
 * differ between workers when their shards do; the rate's schedule counts
 * the most steps any worker has. In lockstep (the workers sum their dense
 * gradients every step) an epoch is what every worker can do. */
static void agree_steps(tr_ps_run *r)
{
	const tr_parts *p = r->p;
	const tr_config *c = p->cfg;
	uint64_t mine = r->server ? 0 : c->roles.server ? 0 : tr_data_full_batches(p->data, c);
	r->steps_per_epoch = tr_world_max_u64(&c->w, mine);
	char msg[MSG] = "";
	if (r->steps_per_epoch == 0)
		snprintf(msg, sizeof msg, "--train %s: every worker has fewer records than one "
		         "batch of %d", c->o.train, c->batch);
	tr_world_agree(&c->w, r->steps_per_epoch == 0, msg, EXIT_DATA);
	if (r->dense->lockstep) {
		mine = tr_world_min_u64(&c->w, c->roles.server ? UINT64_MAX : mine);
		if (mine == 0) { /* no step at all: the run would train nothing */
			uint64_t fewest = tr_world_min_u64(
				&c->w, c->roles.server ? UINT64_MAX : rio_loader_records(p->data->train));
			snprintf(msg, sizeof msg, "--train %s: a worker has fewer records (%llu) than "
			         "one batch of %d, and under hybrid the workers step together",
			         c->o.train, (unsigned long long)fewest, c->batch);
		}
		tr_world_agree(&c->w, mine == 0, msg, EXIT_DATA);
	}
	r->own_steps = p->cursor->epoch_steps = mine;
}

void tr_ps_open(tr_ps_run *r, MPI_Comm node)
{
	const tr_parts *p = r->p;
	const tr_config *c = p->cfg;
	tr_model *m = p->model;
	char msg[MSG] = "";
	snprintf(msg, sizeof msg, "out of memory for a model of %zu parameters", m->nparams);
	int rc = tr_store_open(p->store, node, msg, sizeof msg);
	if (rc == 0 && c->o.synthetic && !c->roles.server)
		rc = tr_data_synthetic(p->data, m->math, m->sizes[0], c, c->w.rank);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	agree_steps(r);
	tr_model_schedule(m, c, r->steps_per_epoch);
	rc = tr_model_build(m, c, p->data, p->store);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	rc = open_side(r);
	tr_world_agree(&c->w, rc < 0, "out of memory for the parameter server's buffers",
	               EXIT_DATA);
	rc = open_tables(r);
	tr_world_agree(&c->w, rc < 0, "out of memory for the --embed tables", EXIT_DATA);
}

void tr_ps_close(tr_ps_run *r)
{
	if (r->server) {
		tr_ps_server_free(r->server);
		free(r->server);
	}
	if (r->worker) {
		tr_ps_worker_free(r->worker);
		free(r->worker);
	}
	r->server = NULL;
	r->worker = NULL;
}

/* ---- a worker's step ------------------------------------------------------------- */

static void pull_rows(void *ctx) { tr_ps_pull_rows(((tr_ps_run *)ctx)->worker); }

/* The worker's forward and backward of its batch, the gradients and the
 * step's loss in the host copy. */
static void compute(tr_ps_run *r, const rio_batch *b, tr_input *in, int *nonfinite,
                    double *exchange, int *failed, char *err, size_t errlen)
{
	const tr_parts *p = r->p;
	tr_model *m = p->model;
	size_t np = m->nparams;
	*nonfinite = b && tr_data_nonfinite(p->cfg, p->data, b);
	double tp = rio__now();
	tr_step_embed_input(m, in, pull_rows, r); /* the batch's rows pulled */
	*exchange += rio__now() - tp;
	tr_math_zero(m->math, m->net.grads + np, TR_MLP_EXTRA);
	tr_mlp_forward(&m->net, in);
	tr_mlp_loss(&m->net, in, m->net.grads + np, 1);
	tr_mlp_backward(&m->net, in, NULL, NULL);
	if (m->embed.n)
		tr_embed_run_backward(&m->embed, m->net.dinput, in->rows);
	/* the gradients and the step's loss to the host (the CPU's are there
	 * already) */
	if (tr_math_to_host(m->math, m->staging, m->net.grads, np + TR_MLP_EXTRA) < 0) {
		snprintf(err, errlen, "the GPU failed during a training step");
		*failed = 1;
	}
	*nonfinite |= !isfinite(m->staging[np + TR_EXTRA_LOSS]);
}

/* One worker step: the next batch, forward, backward, the gradient pushed
 * to the servers and the parameters pulled back; `last` marks the
 * segment's last step. 0; 1 when the servers said stop (another worker
 * failed); -1 when this worker's data failed (message in err; the servers
 * were told, and its segment is over). */
static int step(tr_ps_run *r, int last, char *err, size_t errlen)
{
	const tr_parts *p = r->p;
	tr_model *m = p->model;
	tr_cursor *k = p->cursor;
	tr_ps_worker *pw = r->worker;
	size_t np = m->nparams;
	const float *head = m->staging + np;
	rio_batch *b = NULL;
	tr_input in;
	int failed = 0, nonfinite = 0;
	tr_step_batch(p, &b, &in, 1, &failed, &r->t_wait, err, errlen);
	double t1 = rio__now();
	double rows = 0, exchange = 0;
	if (!failed) {
		rows = in.rows;
		compute(r, b, &in, &nonfinite, &exchange, &failed, err, errlen);
	}
	if (b)
		rio_loader_release(p->data->train, b);
	tr_step_straggle(tr_step_slowdown(p->cfg, k->global_step), rio__now() - t1);
	double t2 = rio__now();
	double loss = failed ? 0 : head[TR_EXTRA_LOSS], correct = failed ? 0 : head[TR_EXTRA_CORRECT];
	if (r->dense->exchange) {
		int apply = 0;
		if (r->dense->exchange(r, (int)rows, nonfinite, failed, &apply) && !failed) {
			r->exchange += rio__now() - t2 + exchange;
			return 1; /* another worker failed: it tells the servers */
		}
		nonfinite = !apply; /* one verdict for the servers' rows too */
	}
	if (!failed && pw->comp) { /* an overflow is skipped as a NaN is */
		int over = tr_ps_narrow(pw, m->staging);
		k->ep_overflows += over && !nonfinite;
		nonfinite |= over;
	}
	uint32_t flags = failed ? TR_PS_PULL | TR_PS_LAST | TR_PS_FAILED
	                        : TR_PS_PUSH | (last ? TR_PS_LAST : 0) |
	                                  (nonfinite ? TR_PS_NONFINITE : 0) |
	                                  (m->embed.n ? TR_PS_SPARSE : 0);
	tr_ps_send(pw, flags, m->staging, k->global_step, rows);
	int stop = tr_ps_wait(pw);
	if (!failed && r->dense->on_servers &&
	    tr_math_from_host(m->math, m->net.params, pw->params, np) < 0) {
		snprintf(err, errlen, "the GPU failed during a training step");
		failed = 1; /* told to the others at the segment's end */
	}
	r->exchange += rio__now() - t2 + exchange; /* the exchange, exposed */
	if (failed)
		return -1;
	if (!nonfinite) {
		k->ep_loss += loss;
		k->ep_correct += correct;
		k->ep_count += rows;
	} else {
		k->ep_skipped++;
		k->skipped_steps++;
	}
	k->global_step++;
	k->step_in_epoch++;
	return stop ? 1 : 0;
}

/* A worker's segment: from its first pull to the reply to its last
 * message. -1 when its data failed (message in err). */
static int worker_segment(tr_ps_run *r, char *err, size_t errlen)
{
	const tr_parts *p = r->p;
	const tr_options *o = &p->cfg->o;
	tr_model *m = p->model;
	tr_cursor *k = p->cursor;
	tr_ps_worker *pw = r->worker;
	uint64_t max = o->max_steps, every = o->checkpoint_every;
	int over = k->step_in_epoch >= k->epoch_steps || (max && k->global_step >= max);
	tr_ps_send(pw, TR_PS_PULL | (over ? TR_PS_LAST : 0), NULL, 0, 0);
	int stop = tr_ps_wait(pw);
	if (!stop)
		tr_math_from_host(m->math, m->net.params, pw->params, m->nparams);
	if (over)
		return 0;
	while (!stop) {
		int last = k->step_in_epoch + 1 >= k->epoch_steps || (max && k->global_step + 1 >= max) ||
		           (every && (k->global_step + 1) % every == 0);
		int rc = step(r, last, err, errlen);
		if (rc < 0)
			return -1;
		if (last)
			return 0;
		stop = rc == 1;
	}
	/* another worker failed: end the segment here */
	tr_ps_send(pw, TR_PS_PULL | TR_PS_LAST, NULL, 0, 0);
	tr_ps_wait(pw);
	return 0;
}

/* A server's segment: it serves, and counts. 1 when out of memory. */
static int server_segment(tr_ps_run *r, char *err, size_t errlen)
{
	int failed = 0;
	int rc = tr_ps_serve(r->server, 1);
	if (rc == -ENOMEM) {
		snprintf(err, errlen, "server %d: out of memory (a copy of the parameters for "
		         "--eval-every, or the rows pushed)", r->p->cfg->w.rank);
		failed = 1;
	}
	tr_ps_stats *e = &r->epoch, *g = &r->server->st;
	e->updates += g->updates;
	e->gradients += g->gradients;
	e->dropped += g->dropped;
	e->skipped += g->skipped;
	e->staleness_sum += g->staleness_sum;
	e->samples += g->samples;
	if (g->staleness_max > e->staleness_max)
		e->staleness_max = g->staleness_max;
	return failed;
}

int tr_ps_segment(tr_strategy_state *st, tr_segment *seg, char *err, size_t errlen)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_config *c = r->p->cfg;
	const tr_cursor *k = r->p->cursor;
	int failed = r->server ? server_segment(r, err, errlen)
	                       : worker_segment(r, err, errlen) < 0;
	/* every rank learns how the segment ended */
	int local[2] = {r->worker && c->o.max_steps && k->global_step >= c->o.max_steps,
	                r->worker && k->step_in_epoch < k->epoch_steps};
	int all[2];
	MPI_Allreduce(local, all, 2, MPI_INT, MPI_MAX, c->w.comm);
	seg->stopped = all[0];
	seg->mid_epoch = all[1];
	return failed;
}

/* ---- evaluation, figures, copies --------------------------------------------------- */

int tr_ps_evaluate(tr_strategy_state *st, double sums[3], char *err, size_t errlen)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_parts *p = r->p;
	int failed = 0;
	/* a parameter server has no test data: it adds nothing, but serves the
	 * rows of --embed tables the workers evaluate with */
	if (r->server && r->server->ntables && tr_ps_serve(r->server, 0) == -ENOMEM) {
		snprintf(err, errlen, "server %d: out of memory", p->cfg->w.rank);
		failed = 1;
	}
	if (tr_step_evaluate(p, r->worker ? pull_rows : NULL, r, sums, err, errlen) < 0)
		failed = 1;
	if (r->worker && p->model->embed.n) { /* the servers stop serving rows */
		tr_ps_send(r->worker, TR_PS_PULL | TR_PS_LAST, NULL, 0, 0);
		tr_ps_wait(r->worker);
	}
	tr_world_sum_to_root(&p->cfg->w, sums, 3);
	return failed ? -1 : 0;
}

void tr_ps_epoch_begin(tr_strategy_state *st)
{
	tr_ps_run *r = (tr_ps_run *)st;
	r->t_wait = r->exchange = 0;
}

/* The servers' counts of the epoch: server 0's updates, the staleness
 * over all, into rank 0's f (collective). */
static void server_figures(tr_ps_run *r, tr_epoch_figures *f)
{
	const tr_config *c = r->p->cfg;
	tr_ps_stats *e = &r->epoch;
	double sv[3] = {e->staleness_sum, (double)e->gradients, (double)e->dropped};
	double ssum[3] = {0, 0, 0};
	MPI_Reduce(sv, ssum, 3, MPI_DOUBLE, MPI_SUM, 0, c->w.comm);
	uint64_t smax = e->staleness_max, gmax = 0;
	MPI_Reduce(&smax, &gmax, 1, MPI_UINT64_T, MPI_MAX, 0, c->w.comm);
	f->updates = e->updates;
	f->gradients = e->gradients;
	f->dropped = e->dropped;
	f->skipped = e->skipped;
	f->staleness_max = gmax;
	f->staleness_mean = ssum[1] > 0 ? ssum[0] / ssum[1] : 0;
}

/* Each worker's steps of the epoch, to rank 0's f (the most of them: the
 * epoch's steps); collective. */
static void worker_steps(tr_ps_run *r, tr_epoch_figures *f)
{
	const tr_config *c = r->p->cfg;
	int S = c->o.servers, W = c->roles.data_world;
	uint64_t steps = r->worker ? r->p->cursor->step_in_epoch : 0;
	uint64_t *all = c->w.rank == 0 ? calloc((size_t)c->w.size, sizeof *all) : NULL;
	uint64_t dummy[1];
	MPI_Gather(&steps, 1, MPI_UINT64_T, all ? all : dummy, 1, MPI_UINT64_T, 0, c->w.comm);
	if (!all)
		return;
	memmove(all, all + S, (size_t)W * sizeof *all);
	f->worker_steps = all;
	f->workers = W;
	for (int i = 0; i < W; i++)
		f->steps = all[i] > f->steps ? all[i] : f->steps;
}

void tr_ps_figures(tr_strategy_state *st, tr_epoch_figures *f)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_config *c = r->p->cfg;
	const tr_cursor *k = r->p->cursor;
	memset(f, 0, sizeof *f);
	/* the workers' sums; the bytes are this process's: per step it took
	 * (not a resumed epoch's steps before) */
	double bytes = r->worker ? r->worker->bytes - r->bytes0 : 0;
	double v[11] = {k->ep_loss, k->ep_correct, k->ep_count, (double)k->ep_skipped, r->t_wait,
	                r->exchange, r->worker ? 1 : 0, bytes,
	                r->worker ? (double)(k->step_in_epoch - k->step0) : 0, k->ep_count0,
	                (double)k->ep_overflows};
	double sum[11] = {0};
	MPI_Reduce(v, sum, 11, MPI_DOUBLE, MPI_SUM, 0, c->w.comm);
	if (r->worker)
		r->bytes0 = r->worker->bytes;
	server_figures(r, f);
	worker_steps(r, f);
	f->last_step = tr_world_max_u64(&c->w, k->global_step);
	if (c->w.rank != 0)
		return;
	f->loss = sum[0];
	f->correct = sum[1];
	f->count = sum[2];
	f->count_before = sum[9];
	f->skipped += (uint64_t)sum[3];
	f->grad_overflows = (uint64_t)sum[10];
	f->data_wait = sum[6] > 0 ? sum[4] / sum[6] : 0;
	f->exchange = sum[6] > 0 ? sum[5] / sum[6] : 0;
	double per_worker = sum[8] > 0 ? sum[7] / sum[8] : 0;
	/* a worker's messages; among the workers, when they sum the dense
	 * layers, what a ring allreduce of them moves: 2 (W - 1) / W x their
	 * bytes */
	int W = c->roles.data_world;
	double ring = r->dense->on_servers || W < 2
	                      ? 0
	                      : 2.0 * (W - 1) / W * (double)r->p->model->nparams * sizeof(float) * 2;
	f->bytes_per_step = ring + per_worker;
	f->server_bytes_per_step = per_worker * W;
	f->servers = c->ops->name;
}

/* ps: copy i of every server's slice into the workers' parameters (a
 * server receives the others' into scratch), and server 0's figures. */
static void gather_copy(tr_ps_run *r, int i, float *scratch, tr_copy *meta)
{
	const tr_config *c = r->p->cfg;
	tr_model *m = r->p->model;
	tr_ps_server *s = r->server;
	int S = c->o.servers;
	double d[4] = {0};
	if (c->w.rank == 0) {
		const tr_copy *p = &s->copies.v[i];
		d[0] = (double)p->updates;
		d[1] = (double)p->gradients;
		d[2] = p->samples;
		d[3] = p->seconds;
	}
	MPI_Bcast(d, 4, MPI_DOUBLE, 0, c->w.comm);
	*meta = (tr_copy){.updates = (uint64_t)d[0], .gradients = (uint64_t)d[1], .samples = d[2],
	                  .seconds = d[3]};
	for (int k = 0; k < S; k++) {
		size_t lo, hi;
		tr_ps_slice(m->nparams, S, k, &lo, &hi);
		float *buf = r->worker ? r->worker->params + lo
		             : c->w.rank == k ? s->copies.v[i].params : scratch;
		MPI_Bcast(buf, (int)(hi - lo), MPI_FLOAT, k, c->w.comm);
	}
	if (r->worker)
		tr_math_from_host(m->math, m->net.params, r->worker->params, m->nparams);
}

/* Collective: the copies the servers kept (the fewest any server kept:
 * each counts its own), gathered onto the workers one by one. The
 * workers' parameters are then another's: the next step's pull restores
 * them. */
int tr_ps_eval_copies(tr_strategy_state *st, tr_copy_fn fn, void *ctx, char *err, size_t errlen)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_config *c = r->p->cfg;
	int mine = r->server ? r->server->copies.n : 1 << 30, n = 0, failed = 0;
	MPI_Allreduce(&mine, &n, 1, MPI_INT, MPI_MIN, c->w.comm);
	float *scratch = NULL;
	if (r->server && n > 0) {
		size_t per = (r->p->model->nparams + (size_t)c->o.servers - 1) / (size_t)c->o.servers +
		             16;
		scratch = malloc(per * sizeof *scratch);
		if (!scratch) /* in the middle of the broadcasts: the whole job goes */
			tr_world_abort(&c->w, "out of memory evaluating --eval-every's copies", 1);
	}
	for (int i = 0; i < n; i++) {
		tr_copy meta;
		gather_copy(r, i, scratch, &meta);
		char later[256];
		if (fn(ctx, &meta, failed, failed ? later : err, failed ? sizeof later : errlen) < 0)
			failed = 1;
	}
	free(scratch);
	if (r->server)
		tr_copies_clear(&r->server->copies);
	return failed ? -1 : 0;
}

uint64_t tr_ps_next_epoch_steps(tr_strategy_state *st)
{
	tr_ps_run *r = (tr_ps_run *)st;
	memset(&r->epoch, 0, sizeof r->epoch);
	return r->own_steps;
}

void tr_ps_describe(tr_strategy_state *st, char *line, size_t len, char *tail, size_t tlen)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_config *c = r->p->cfg;
	const tr_options *o = &c->o;
	char k[32], backup[32] = "";
	if (o->staleness == TR_STALENESS_INF)
		snprintf(k, sizeof k, "asynchronous");
	else if (o->staleness)
		snprintf(k, sizeof k, "staleness %lld", (long long)o->staleness);
	else
		snprintf(k, sizeof k, "bulk-synchronous");
	if (o->backup_workers)
		snprintf(backup, sizeof backup, ", %d backup", o->backup_workers);
	snprintf(line, len, "%d parameter server%s and %d workers (%s%s), %d records per worker and "
	         "step, up to %llu steps per epoch%s", o->servers, o->servers > 1 ? "s" : "",
	         c->roles.data_world, k, backup, c->batch, (unsigned long long)r->steps_per_epoch,
	         r->p->data->synth ? " of synthetic data" : "");
	if (tlen)
		tail[0] = '\0';
}

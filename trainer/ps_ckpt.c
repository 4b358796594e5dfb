/*
 * ps_ckpt.c — a checkpoint of a run with parameter servers (ps_run.h):
 * rank 0's whole parameters, optimizer state and tables placed (each
 * server its slice and its rows, each worker the model and its counters)
 * and collected back (every server's slice and rows, every worker's
 * counters and loader position, the servers' counts).
 */
#include "config.h"
#include "exit_status.h"
#include "ps_run.h"
#include "save.h"
#include "start.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- placing the parameters ------------------------------------------------------ */

/* The parameters (which 0), or the optimizer's first or second state
 * buffer (1, 2), from a whole host copy: a server takes its slice of each,
 * a worker the parameters (and, where it updates, the state). */
static void place_tensor(void *ctx, int which, const float *host)
{
	tr_ps_run *r = ctx;
	tr_ps_server *s = r->server;
	tr_model *m = r->p->model;
	if (s) {
		float *dst = tr_optim_buffer(&s->opt, s->params, which);
		if (dst)
			tr_math_from_host(s->math, dst, host + s->lo, s->n);
	} else if (which == 0) {
		tr_math_from_host(m->math, m->net.params, host, m->nparams);
	} else if (r->dense->place_state) {
		r->dense->place_state(r, which, host);
	}
}

/* A server takes its rows of table t. */
static void place_table(void *ctx, int t, int which, const float *host)
{
	tr_ps_server *s = ((tr_ps_run *)ctx)->server;
	if (!s)
		return;
	tr_ps_table *tb = &s->tab[t];
	float *dst = tr_optim_buffer(&tb->opt, tb->params, which);
	if (dst)
		memcpy(dst, host + (size_t)tb->lo * (size_t)tb->dim,
		       (size_t)(tb->hi - tb->lo) * (size_t)tb->dim * sizeof(float));
}

void tr_ps_place_fresh(tr_strategy_state *st, const float *host) { place_tensor(st, 0, host); }

/* Collective: the counters of rank 0's checkpoint c: each server its
 * version and counts (of the epoch so far, and since the start), each
 * worker its steps, worker 0 the epoch's sums so far. */
static void place_counters(tr_ps_run *r, const tr_ckpt *c)
{
	const tr_config *cfg = r->p->cfg;
	const tr_world *w = &cfg->w;
	tr_cursor *k = r->p->cursor;
	int S = cfg->o.servers, W = cfg->roles.data_world;
	uint64_t u[5] = {0};
	double d[3] = {0};
	if (w->rank == 0) {
		uint64_t v[5] = {c->epoch, c->server_version, c->optimizer_t, c->epoch_skipped,
		                 c->epoch_overflows};
		memcpy(u, v, sizeof u);
		d[0] = c->epoch_loss;
		d[1] = c->epoch_correct;
		d[2] = c->epoch_count;
	}
	tr_world_bcast(w, u, sizeof u);
	tr_world_bcast(w, d, sizeof d);
	uint64_t *steps = calloc(2 * (size_t)W, sizeof *steps);
	tr_ckpt_server *sv = calloc((size_t)S, sizeof *sv);
	tr_world_agree(w, !steps || !sv, "out of memory", EXIT_DATA);
	if (w->rank == 0) {
		for (int i = 0; i < W; i++) {
			steps[2 * i] = c->worker_step_in_epoch[i];
			steps[2 * i + 1] = c->worker_global_step[i];
		}
		if (c->server) /* (an older checkpoint's: not known, from 0) */
			memcpy(sv, c->server, (size_t)S * sizeof *sv);
	}
	tr_world_bcast(w, steps, 2 * (size_t)W * sizeof *steps);
	tr_world_bcast(w, sv, (size_t)S * sizeof *sv);
	k->epoch = u[0];
	if (r->server) {
		tr_ps_server *s = r->server;
		const tr_ckpt_server *v = &sv[w->rank];
		s->version = u[1];
		s->opt.t = u[2];
		for (int t = 0; t < s->ntables; t++)
			s->tab[t].opt.t = u[2];
		r->epoch = (tr_ps_stats){v->updates,       v->gradients,     v->dropped,
		                         v->skipped,       v->staleness_max, v->staleness_sum,
		                         v->samples};
		s->total_updates = v->total_updates;
		s->total_gradients = v->total_gradients;
		s->total_samples = v->total_samples;
		s->seconds_before = k->train_seconds;
	} else {
		r->p->model->opt.t = u[2]; /* the workers' dense optimizer (hybrid) */
		k->step_in_epoch = steps[2 * cfg->roles.data_rank];
		k->global_step = steps[2 * cfg->roles.data_rank + 1];
		if (cfg->roles.data_rank == 0) {
			k->ep_loss = d[0];
			k->ep_correct = d[1];
			k->ep_count = d[2];
			k->ep_skipped = u[3];
			k->ep_overflows = u[4];
		}
	}
	free(steps);
	free(sv);
}

/* Collective, on resume: the servers take their slices, each worker its
 * own counters and loader position, worker 0 the epoch's sums so far. */
void tr_ps_place(tr_strategy_state *st, const tr_ckpt *c)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_parts *p = r->p;
	const tr_config *cfg = p->cfg;
	tr_cursor *k = p->cursor;
	place_counters(r, c);
	tr_start_tensors(p, c, place_tensor, r);
	tr_start_tables(p, c, place_table, r);
	/* each worker's loader position (none for a server) */
	if (!tr_data_resharded(p->data, cfg, k->epoch))
		tr_data_restore(p->data, cfg, c, 0, "worker");
	/* the steps of this worker's epoch in progress */
	if (p->data->train)
		k->epoch_steps = k->step_in_epoch +
		                 rio_loader_remaining(p->data->train) / (uint64_t)cfg->batch;
	if (cfg->w.rank == 0 && !cfg->o.quiet)
		printf("resumed from %s/checkpoint: epoch %llu, %llu versions made by the servers\n",
		       cfg->o.checkpoint, (unsigned long long)k->epoch + 1,
		       (unsigned long long)c->server_version);
}

/* ---- checkpoints ------------------------------------------------------------------- */

/* A worker's counters, as gathered: its steps in the epoch and since the
 * start, its skipped steps since the start and in the epoch, and of
 * those its 16-bit overflows */
enum { COUNTERS = 5 };

/* Rank 0: the checkpoint's worker part from the world's gathered blobs (a
 * server's is empty) and the workers' counters (COUNTERS a rank); the
 * servers' counts. */
static int fill_counters(tr_ps_run *r, tr_ckpt *c, const uint64_t *counters)
{
	const tr_config *cfg = r->p->cfg;
	int S = cfg->o.servers, W = cfg->roles.data_world;
	/* the servers' blobs go: the workers' move to the front */
	for (int i = 0; i < S; i++)
		free(c->blob[i]);
	memmove(c->blob, c->blob + S, (size_t)W * sizeof *c->blob);
	memmove(c->blob_size, c->blob_size + S, (size_t)W * sizeof *c->blob_size);
	c->nblobs = (uint32_t)W;
	c->world = (uint32_t)W;
	c->servers = (uint32_t)S;
	c->server_version = r->server->version;
	c->optimizer_t = r->server->opt.t;
	c->worker_step_in_epoch = calloc((size_t)W, sizeof(uint64_t));
	c->worker_global_step = calloc((size_t)W, sizeof(uint64_t));
	if (!c->worker_step_in_epoch || !c->worker_global_step)
		return -1;
	c->step_in_epoch = c->global_step = c->skipped_steps = c->epoch_skipped = 0;
	c->epoch_overflows = 0;
	for (int i = 0; i < W; i++) {
		const uint64_t *k = counters + COUNTERS * (S + i);
		c->worker_step_in_epoch[i] = k[0];
		c->worker_global_step[i] = k[1];
		if (k[0] > c->step_in_epoch)
			c->step_in_epoch = k[0];
		if (k[1] > c->global_step)
			c->global_step = k[1];
		c->skipped_steps += k[2];
		c->epoch_skipped += k[3];
		c->epoch_overflows += k[4];
	}
	return 0;
}

/* A server's counts as the checkpoint keeps them (zero on a worker). */
static tr_ckpt_server server_counts(const tr_ps_run *r)
{
	const tr_ps_server *s = r->server;
	const tr_ps_stats *e = &r->epoch;
	if (!s)
		return (tr_ckpt_server){0};
	return (tr_ckpt_server){e->updates,       e->gradients,       e->dropped,
	                        e->skipped,       e->staleness_max,   e->staleness_sum,
	                        e->samples,       s->total_updates,   s->total_gradients,
	                        s->total_samples};
}

/* Collective: each worker's counters and the epoch's sums so far, and
 * each server's counts, into rank 0's c. 0, or -1 out of memory there. */
static int collect_counters(tr_ps_run *r, tr_ckpt *c)
{
	const tr_config *cfg = r->p->cfg;
	const tr_cursor *k = r->p->cursor;
	int root = cfg->w.rank == 0;
	uint64_t mine[COUNTERS] = {k->step_in_epoch, k->global_step, k->skipped_steps,
	                           k->ep_skipped, k->ep_overflows};
	uint64_t *counters = root ? calloc(COUNTERS * (size_t)cfg->w.size, sizeof *counters) : NULL;
	tr_ckpt_server *servers = root ? calloc((size_t)cfg->w.size, sizeof *servers) : NULL;
	double sums[3] = {k->ep_loss, k->ep_correct, k->ep_count}, total[3] = {0, 0, 0};
	uint64_t dummy[COUNTERS];
	tr_ckpt_server own = server_counts(r), none;
	MPI_Gather(mine, COUNTERS, MPI_UINT64_T, counters ? counters : dummy, COUNTERS,
	           MPI_UINT64_T, 0, cfg->w.comm);
	MPI_Gather(&own, sizeof own, MPI_BYTE, servers ? (void *)servers : &none, sizeof own,
	           MPI_BYTE, 0, cfg->w.comm);
	MPI_Reduce(sums, total, 3, MPI_DOUBLE, MPI_SUM, 0, cfg->w.comm);
	int rc = 0;
	if (root) {
		c->epoch_loss = total[0];
		c->epoch_correct = total[1];
		c->epoch_count = total[2];
		rc = !counters || !servers || !c->blob || fill_counters(r, c, counters) < 0 ? -1 : 0;
		if (rc == 0) { /* the servers' counts: ranks 0 .. S - 1 */
			c->server = servers;
			servers = NULL;
		}
	}
	free(counters);
	free(servers);
	return rc;
}

/* Collective: every server's slice of `which` into rank 0's host copy. */
static void collect_slices(tr_ps_run *r, int which, float *host)
{
	const tr_config *c = r->p->cfg;
	tr_ps_server *s = r->server;
	int S = c->o.servers, tag = TR_PS_TAG_PARAMS + 10 + which;
	if (c->w.rank == 0) {
		const float *mine = tr_optim_buffer(&s->opt, s->params, which);
		tr_math_to_host(s->math, host + s->lo, mine, s->n);
		for (int k = 1; k < S; k++) {
			size_t lo, hi;
			tr_ps_slice(r->p->model->nparams, S, k, &lo, &hi);
			MPI_Recv(host + lo, (int)(hi - lo), MPI_FLOAT, k, tag, c->w.comm,
			         MPI_STATUS_IGNORE);
		}
	} else if (s) {
		const float *mine = tr_optim_buffer(&s->opt, s->params, which);
		MPI_Send(mine, (int)s->n, MPI_FLOAT, 0, tag, c->w.comm);
	}
}

/* Collective: every server's rows of table t's buffer `which` into rank
 * 0's host copy (NULL elsewhere). */
static void collect_table(void *ctx, int t, int which, float *host)
{
	tr_ps_run *r = ctx;
	const tr_config *c = r->p->cfg;
	tr_ps_server *s = r->server;
	int S = c->o.servers, tag = TR_PS_TAG_ROWS + 50 + 3 * t + which;
	int64_t vocab = c->o.embed[t].vocab;
	size_t dim = (size_t)c->o.embed[t].dim;
	if (c->w.rank == 0) {
		tr_ps_table *tb = &s->tab[t];
		memcpy(host + (size_t)tb->lo * dim, tr_optim_buffer(&tb->opt, tb->params, which),
		       (size_t)(tb->hi - tb->lo) * dim * sizeof(float));
		for (int k = 1; k < S; k++) {
			int64_t lo, hi;
			tr_embed_rows_of(vocab, S, k, &lo, &hi);
			MPI_Recv(host + (size_t)lo * dim, (int)((size_t)(hi - lo) * dim), MPI_FLOAT, k, tag,
			         c->w.comm, MPI_STATUS_IGNORE);
		}
	} else if (s) {
		tr_ps_table *tb = &s->tab[t];
		MPI_Send(tr_optim_buffer(&tb->opt, tb->params, which),
		         (int)((size_t)(tb->hi - tb->lo) * dim), MPI_FLOAT, 0, tag, c->w.comm);
	}
}

/* Collective: the counters, the dense layers' buffers (the servers'
 * slices, or the strategy's), the tables' rows, into rank 0's c. Out of
 * memory on rank 0 while others send, the job is aborted. */
int tr_ps_collect(tr_strategy_state *st, tr_ckpt *c, char *err, size_t errlen)
{
	tr_ps_run *r = (tr_ps_run *)st;
	const tr_parts *p = r->p;
	const tr_config *cfg = p->cfg;
	int rc = collect_counters(r, c);
	int states = tr_optim_state_count(&p->model->opt);
	size_t n = p->model->nparams;
	float *dst[3] = {NULL, NULL, NULL};
	if (c) {
		c->params = dst[0] = malloc(n * sizeof(float));
		c->state1 = dst[1] = malloc(n * sizeof(float));
		if (states == 2)
			c->state2 = dst[2] = malloc(n * sizeof(float));
		if (rc < 0 || !c->params || !c->state1 || (states == 2 && !c->state2))
			/* the other servers are sending their slices */
			tr_world_abort(&cfg->w, "out of memory writing a checkpoint", EXIT_DATA);
	}
	for (int i = 0; i <= states; i++) {
		if (r->dense->collect)
			r->dense->collect(r, i, dst[i]);
		else
			collect_slices(r, i, dst[i]);
	}
	return tr_save_tables(p, c, collect_table, r, 1, err, errlen);
}


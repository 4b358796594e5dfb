/*
 * strategy_hybrid.c — --strategy hybrid: the --embed tables on the
 * parameter servers (each a part of every table's rows, the batch's rows
 * pulled and pushed: ps_run.c), the dense layers on the workers, whose
 * gradients are summed over the workers at every step by a reducer in the
 * fixed rank order of the allreduce strategy (reducer.h), so that a run
 * is the same bits on one host and across hosts. A step is applied only
 * when the whole dense sum is finite: one verdict for the dense layers and
 * for the servers' rows (the push then says non-finite).
 */
#include "config.h"
#include "exit_status.h"
#include "ps_run.h"
#include "reducer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hybrid {
	tr_ps_run run;          /* first: the strategy's state is a tr_ps_run */
	MPI_Comm wcomm;         /* the workers (the servers: theirs)          */
	tr_reducer red;         /* a worker: the dense gradients              */
	int mode;               /* ... how they are summed (every rank knows)  */
} hybrid;

/* A worker, after its backward: the dense layers' gradients and the step's
 * head summed over the workers, and the dense update made here, when the
 * sum is finite. 1 when some worker failed, else 0 with *apply. */
static int exchange(tr_ps_run *r, int rows, int nonfinite, int failed, int *apply)
{
	hybrid *h = (hybrid *)r;
	tr_model *m = r->p->model;
	size_t np = m->nparams;
	float *head = m->staging + np;
	if (failed)
		memset(m->staging, 0, (np + TR_MLP_EXTRA) * sizeof *m->staging);
	tr_reducer_begin(&h->red);
	head[TR_EXTRA_COUNT] = (float)rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)failed;
	tr_reducer_head(&h->red);
	tr_reducer_flush(&h->red);
	size_t begin, end;
	int finite, all_finite = 1;
	while (tr_reducer_take(&h->red, 1, &begin, &end, &finite))
		all_finite &= finite;
	tr_reducer_head_in(&h->red, 1);
	const float *sum = h->red.head_out;
	if (sum[TR_EXTRA_FAILED] > 0)
		return 1;
	*apply = sum[TR_EXTRA_NONFINITE] == 0 && sum[TR_EXTRA_COUNT] >= 1 && all_finite;
	if (*apply)
		tr_optim_step(&m->opt, m->net.params, h->red.sum, 1.0f / sum[TR_EXTRA_COUNT],
		              r->p->cursor->global_step);
	return 0;
}

/* Collective: the dense layers are the workers': worker 0's copy. */
static void collect(tr_ps_run *r, int which, float *host)
{
	const tr_config *c = r->p->cfg;
	tr_model *m = r->p->model;
	int S = c->o.servers, tag = TR_PS_TAG_PARAMS + 10 + which;
	const float *mine = tr_optim_buffer(&m->opt, m->net.params, which);
	if (c->w.rank == 0)
		MPI_Recv(host, (int)m->nparams, MPI_FLOAT, S, tag, c->w.comm, MPI_STATUS_IGNORE);
	else if (c->w.rank == S)
		MPI_Send(mine, (int)m->nparams, MPI_FLOAT, 0, tag, c->w.comm);
}

/* A worker: its dense optimizer's state. */
static void place_state(tr_ps_run *r, int which, const float *host)
{
	tr_model *m = r->p->model;
	float *dst = tr_optim_buffer(&m->opt, m->net.params, which);
	if (dst)
		tr_math_from_host(m->math, dst, host, m->nparams);
}

static const tr_ps_dense on_workers = {.on_servers = 0, .lockstep = 1, .exchange = exchange,
                                       .collect = collect, .place_state = place_state};

static void memory_need(const tr_parts *p, tr_need *n) { tr_ps_memory_need(p, n, 0); }

static void open_hybrid(tr_strategy_state **out, const tr_parts *p)
{
	const tr_config *c = p->cfg;
	tr_model *m = p->model;
	hybrid *h = calloc(1, sizeof *h);
	tr_world_agree(&c->w, !h, "out of memory", EXIT_DATA);
	h->wcomm = MPI_COMM_NULL;
	tr_ps_run *r = &h->run;
	tr_ps_begin(r, p, &on_workers);
	*out = &r->base;
	int worker = !c->roles.server;
	MPI_Comm_split(c->w.comm, worker ? 0 : 1, c->w.rank, &h->wcomm);
	/* the workers' sum: in shared memory when they share a host (the
	 * gradients in the window), else the all-to-all of slices */
	MPI_Comm node = MPI_COMM_NULL;
	int mode = worker ? tr_reducer_mode(h->wcomm, TR_REDUCE_AUTO, 1, &node) : TR_REDUCE_AUTO;
	int shm = node != MPI_COMM_NULL;
	tr_ps_plan(r, shm ? TR_PLACE_RANK_SHARED : TR_PLACE_BACKEND, TR_PLACE_BACKEND);
	int ctl = -1, sum = -1;
	if (shm) {
		ctl = tr_store_add(p->store, "the reducer's counters",
		                   tr_reducer_shm_bytes(m->nparams, c->o.bucket_bytes), 1,
		                   TR_PLACE_RANK_SHARED);
		sum = tr_store_add(p->store, "the gradients' sum", m->nparams, sizeof(float),
		                   TR_PLACE_HOST_SHARED);
	}
	tr_ps_open(r, node);
	int rc = 0;
	if (worker) {
		const tr_store *s = p->store;
		tr_reducer_shm_mem mem = {tr_store_window(s), shm ? tr_store_offset(s, ctl) : 0,
		                          shm ? tr_store_offset(s, m->r_grads) : 0,
		                          tr_store_floats(s, sum), 0};
		rc = tr_reducer_init(&h->red, h->wcomm, (tr_reduce_mode)mode, m->staging, m->nparams,
		                     c->o.bucket_bytes, m->staging + m->nparams, TR_MLP_EXTRA,
		                     shm ? &mem : NULL);
	}
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	tr_world_agree(&c->w, rc < 0, "out of memory for the workers' reducer", EXIT_DATA);
	/* for the banner, which rank 0 (a server) prints: worker 0's way */
	h->mode = worker ? (int)h->red.mode : 0;
	MPI_Bcast(&h->mode, 1, MPI_INT, c->o.servers, c->w.comm);
}

static void describe(tr_strategy_state *s, char *line, size_t len, char *tail, size_t tlen)
{
	hybrid *h = (hybrid *)s;
	tr_ps_describe(s, line, len, tail, tlen);
	if (h->run.p->cfg->roles.data_world > 1)
		snprintf(tail, tlen, ", the workers' dense gradients summed by %s",
		         tr_reduce_mode_name((tr_reduce_mode)h->mode));
}

static void close_hybrid(tr_strategy_state *s)
{
	hybrid *h = (hybrid *)s;
	tr_reducer_free(&h->red);
	if (h->wcomm != MPI_COMM_NULL)
		MPI_Comm_free(&h->wcomm);
	tr_ps_close(&h->run);
	free(h);
}

const tr_strategy_ops tr_hybrid_ops = {
	TR_PS_SHARED_OPS,
	.name = "hybrid",
	.memory_need = memory_need,
	.open = open_hybrid,
	.describe = describe,
	.close = close_hybrid,
};

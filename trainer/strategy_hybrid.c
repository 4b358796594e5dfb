/*
 * strategy_hybrid.c — --strategy hybrid: the --embed tables on the
 * parameter servers (each a part of every table's rows, the batch's rows
 * pulled and pushed: ps_run.c), the dense layers on the workers, whose
 * gradients are summed over the workers at every step (MPI_Allreduce). A
 * step is applied only
 * when the whole dense sum is finite: one verdict for the dense layers and
 * for the servers' rows (the push then says non-finite).
 */
#include "config.h"
#include "common.h"
#include "ps_run.h"
#include "reducer.h"

#include <stdlib.h>
#include <string.h>

typedef struct hybrid {
	tr_ps_run run;          /* first: the strategy's state is a tr_ps_run */
	MPI_Comm wcomm;         /* the workers (the servers: theirs)          */
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
	head[TR_EXTRA_COUNT] = (float)rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)failed;
	MPI_Allreduce(MPI_IN_PLACE, m->staging, (int)(np + TR_MLP_EXTRA), MPI_FLOAT, MPI_SUM,
	              h->wcomm);
	if (head[TR_EXTRA_FAILED] > 0)
		return 1;
	*apply = head[TR_EXTRA_NONFINITE] == 0 && head[TR_EXTRA_COUNT] >= 1 &&
	         !tr_nonfinite(m->staging, np);
	if (*apply)
		tr_optim_step(&m->opt, m->net.params, m->staging, 1.0f / head[TR_EXTRA_COUNT],
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
	hybrid *h = calloc(1, sizeof *h);
	tr_world_agree(&c->w, !h, "out of memory", EXIT_DATA);
	h->wcomm = MPI_COMM_NULL;
	tr_ps_run *r = &h->run;
	tr_ps_begin(r, p, &on_workers);
	*out = &r->base;
	int worker = !c->roles.server;
	MPI_Comm_split(c->w.comm, worker ? 0 : 1, c->w.rank, &h->wcomm);
	tr_ps_plan(r, TR_PLACE_BACKEND, TR_PLACE_BACKEND);
	tr_ps_open(r, MPI_COMM_NULL);
}

static void close_hybrid(tr_strategy_state *s)
{
	hybrid *h = (hybrid *)s;
	if (h->wcomm != MPI_COMM_NULL)
		MPI_Comm_free(&h->wcomm);
	tr_ps_close(&h->run);
	free(h);
}

const tr_strategy_ops tr_hybrid_ops = {
	.name = "hybrid",
	.data_unit = "workers",
	.roles = tr_ps_roles,
	.memory_need = memory_need,
	.open = open_hybrid,
	.place_fresh = tr_ps_place_fresh,
	.place = tr_ps_place,
	.epoch_begin = tr_ps_epoch_begin,
	.segment = tr_ps_segment,
	.evaluate = tr_ps_evaluate,
	.figures = tr_ps_figures,
	.eval_copies = tr_ps_eval_copies,
	.next_epoch_steps = tr_ps_next_epoch_steps,
	.collect = tr_ps_collect,
	.describe = tr_ps_describe,
	.close = close_hybrid,
};

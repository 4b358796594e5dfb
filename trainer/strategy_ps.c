/*
 * strategy_ps.c — --strategy ps: the parameter servers hold the model,
 * in slices, and apply the workers' gradients as --staleness allows
 * (ps.h: the protocol and the consistency models; ps_run.c: what it shares
 * with hybrid). A worker pushes its whole gradient and pulls the
 * parameters back at every step.
 */
#include "config.h"
#include "exit_status.h"
#include "ps_run.h"

#include <stdlib.h>

static const tr_ps_dense on_servers = {.on_servers = 1};

static void memory_need(const tr_parts *p, tr_need *n) { tr_ps_memory_need(p, n, 1); }

static void open_ps(tr_strategy_state **out, const tr_parts *p)
{
	tr_ps_run *r = calloc(1, sizeof *r);
	tr_world_agree(&p->cfg->w, !r, "out of memory", EXIT_DATA);
	tr_ps_begin(r, p, &on_servers);
	*out = &r->base;
	/* a worker computes the gradient of the whole model; the servers
	 * update it */
	tr_ps_plan(r, TR_PLACE_BACKEND, -1);
	tr_ps_open(r, MPI_COMM_NULL);
}

static void close_ps(tr_strategy_state *s)
{
	tr_ps_close((tr_ps_run *)s);
	free(s);
}

const tr_strategy_ops tr_ps_ops = {
	TR_PS_SHARED_OPS,
	.name = "ps",
	.memory_need = memory_need,
	.open = open_ps,
	.describe = tr_ps_describe,
	.close = close_ps,
};

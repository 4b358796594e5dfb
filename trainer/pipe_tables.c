/*
 * pipe_tables.c — the --embed tables on a pipeline's first stage
 * (pipe_tables.h).
 */
#include "config.h"
#include "pipe_tables.h"
#include "save.h"
#include "start.h"
#include "step.h"

#include <math.h>
#include <stdio.h>

static int holds(const tr_parts *p, int stage) { return p->cfg->o.nembed && stage == 0; }

void tr_pipe_tables_need(const tr_parts *p, int stage, tr_need *n)
{
	if (!holds(p, stage))
		return;
	const tr_options *o = &p->cfg->o;
	tr_need_tables(n, o);
	int width = 0;
	for (int i = 0; i < o->nembed; i++)
		width += o->embed[i].dim;
	tr_need_add(n, ((double)p->model->rows + p->cfg->batch) * width * sizeof(float),
	            "stage 0's --embed pooled block and its gradient");
}

void tr_pipe_tables_plan(const tr_parts *p, const tr_layout *l)
{
	if (holds(p, l->p))
		tr_model_plan_tables(p->model, p->cfg, p->data, p->store, TR_PLACE_BACKEND,
		                     TR_PLACE_BACKEND);
}

int tr_pipe_tables_build(const tr_parts *p, const tr_layout *l)
{
	return holds(p, l->p) ? tr_model_build_tables(p->model, p->cfg, p->data, p->store) : 0;
}

void tr_pipe_tables_input(tr_model *m, tr_input *in, int go)
{
	if (go) {
		tr_step_embed_input(m, in, NULL, NULL);
		return;
	}
	for (int t = 0; t < m->embed.n; t++)
		m->embed.nuniq[t] = 0; /* no rows of this rank's in the tables' sum */
}

int tr_pipe_tables_grad(tr_model *m, const tr_layout *l, const float *dbatch, int rows, int go)
{
	tr_embed_run *e = &m->embed;
	if (!e->n)
		return 1;
	if (go)
		tr_embed_run_backward(e, dbatch, rows);
	tr_embed_run_dense_grad(e); /* zero but for the batch's rows */
	if (l->D > 1)
		MPI_Allreduce(MPI_IN_PLACE, e->grads, (int)e->floats, MPI_FLOAT, MPI_SUM, l->data);
	int finite = 1;
	for (size_t i = 0; i < e->floats && finite; i++)
		finite = isfinite(e->grads[i]);
	return finite;
}

void tr_pipe_tables_update(tr_model *m, float grad_scale, uint64_t step)
{
	if (m->embed.n)
		tr_embed_run_update(&m->embed, m->embed.grads, grad_scale, step);
}

/* Table t's buffer `which` from the checkpoint: where this rank holds the
 * tables (the first stage's), into them. */
static void place_table(void *ctx, int t, int which, const float *host)
{
	tr_model *m = ctx;
	if (m->embed.params)
		tr_embed_run_place(&m->embed, t, which, host);
}

void tr_pipe_tables_place(const tr_parts *p, const tr_ckpt *c)
{
	tr_model *m = p->model;
	tr_start_tables(p, c, place_table, m);
	m->embed.opt.t = m->opt.t;
}

int tr_pipe_tables_collect(const tr_parts *p, tr_ckpt *c, char *err, size_t errlen)
{
	if (!c || !p->model->embed.n)
		return 0;
	return tr_save_tables(p, c, tr_embed_run_fetch, &p->model->embed, 0, err, errlen);
}

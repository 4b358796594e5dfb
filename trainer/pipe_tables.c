/*
 * pipe_tables.c — the --embed tables on a pipeline's first stage
 * (pipe_tables.h).
 */
#include "config.h"
#include "pipe_tables.h"
#include "save.h"
#include "start.h"
#include "step.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	/* the pooled block (async: two, the batch read ahead's too) and its
	 * gradient */
	double blocks = o->pipe_schedule == TR_PIPE_ASYNC ? 2 : 1;
	tr_need_add(n, (blocks * p->model->rows + p->cfg->batch) * width * sizeof(float),
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

int tr_pipe_lookup_init(tr_pipe_lookup *k, const tr_embed_run *e)
{
	memset(k, 0, sizeof *k);
	if (!e->n)
		return 0;
	k->n = e->n;
	int ok = 1;
	for (int i = 0; i < e->n && ok; i++) {
		size_t occ = (size_t)e->max_rows * (size_t)e->t[i].k;
		k->uniq[i] = malloc(occ * sizeof(int64_t));
		k->pos[i] = malloc(occ * sizeof(int64_t));
		ok = k->uniq[i] && k->pos[i];
	}
	k->block = ok ? calloc((size_t)e->max_rows * (size_t)e->width, sizeof(float)) : NULL;
	if (!k->block) {
		tr_pipe_lookup_free(k);
		return -ENOMEM;
	}
	return 0;
}

#define SWAP(type, a, b)                                                                          \
	do {                                                                                      \
		type t_ = (a);                                                                    \
		(a) = (b);                                                                        \
		(b) = t_;                                                                         \
	} while (0)

void tr_pipe_lookup_swap(tr_pipe_lookup *k, tr_embed_run *e)
{
	if (!k->block)
		return;
	for (int i = 0; i < k->n; i++) {
		SWAP(int64_t *, k->uniq[i], e->uniq[i]);
		SWAP(int64_t *, k->pos[i], e->pos[i]);
		SWAP(size_t, k->nuniq[i], e->nuniq[i]);
		SWAP(const int64_t *, k->ids[i], e->ids[i]);
	}
	SWAP(float *, k->block, e->block);
}

void tr_pipe_lookup_free(tr_pipe_lookup *k)
{
	for (int i = 0; i < k->n; i++) {
		free(k->uniq[i]);
		free(k->pos[i]);
	}
	free(k->block);
	memset(k, 0, sizeof *k);
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

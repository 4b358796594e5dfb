/*
 * step.c — the pieces of a step and of an evaluation that every strategy
 * shares (step.h).
 */
#include "config.h"
#include "step.h"
#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int tr_step_on_gpu(const tr_model *m) { return tr_math_device(m->math) == TR_DEVICE_CUDA; }

/* The batch b of loader l as the model's input, --embed ids checked. */
static int model_input(const tr_parts *p, rio_loader *l, const rio_batch *b, tr_input *in,
                       char *err, size_t errlen)
{
	const tr_config *c = p->cfg;
	tr_model *m = p->model;
	if (tr_data_input(c, p->data, l, b, tr_step_on_gpu(m), in, err, errlen) < 0)
		return -1;
	/* --embed: the ids, checked and made unique; the pooled block is
	 * filled by tr_step_embed_input once the rows are at hand */
	if (m->embed.n &&
	    tr_embed_run_ids(&m->embed, b, c->o.nx, rio_loader_shards(l), err, errlen) < 0)
		return -1;
	return 0;
}

int tr_step_batch(const tr_parts *p, rio_batch **b, tr_input *in, int must, int *failed,
                  double *wait, char *err, size_t errlen)
{
	const tr_cursor *k = p->cursor;
	int rc = tr_data_next(p->data, p->cfg, k->global_step, k->epoch_steps, b, in, must, failed,
	                      wait, err, errlen);
	if (rc == 1 && !*failed && *b && p->model->embed.n &&
	    tr_embed_run_ids(&p->model->embed, *b, p->cfg->o.nx, rio_loader_shards(p->data->train),
	                     err, errlen) < 0)
		*failed = 1;
	return rc;
}

void tr_step_embed_input(tr_model *m, tr_input *in, tr_pull_fn pull, void *ctx)
{
	if (!m->embed.n)
		return;
	if (pull)
		pull(ctx);
	tr_embed_run_pool(&m->embed, in->rows);
	in->part[in->nparts] = m->embed.block;
	in->width[in->nparts] = m->embed.width;
	in->nparts++;
}

double tr_step_slowdown(const tr_config *c, uint64_t step)
{
	const tr_options *o = &c->o;
	double f = 1;
	for (int i = 0; i < o->nstraggler; i++)
		if (o->straggler[i].rank == c->w.rank)
			f = o->straggler[i].factor;
	if (o->straggler_p > 0) {
		rio__rng g;
		rio__rng_seed(&g, o->straggler_seed, (uint64_t)c->w.rank, step, 0x736c6f77 /* "slow" */);
		double u = (double)(rio__rng_next(&g) >> 11) * (1.0 / 9007199254740992.0);
		if (u < o->straggler_p && o->straggler_f > f)
			f = o->straggler_f;
	}
	return f;
}

void tr_step_straggle(double f, double compute)
{
	if (f <= 1 || compute <= 0)
		return;
	double s = (f - 1) * compute;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

int tr_step_evaluate(const tr_parts *p, tr_pull_fn pull, void *ctx, double sums[3], char *err,
                     size_t errlen)
{
	tr_model *m = p->model;
	rio_loader *test = p->data->test;
	double records = 0;
	int failed = 0;
	if (test)
		tr_math_zero(m->math, m->eval_stats, 2);
	for (; test;) {
		rio_batch *b;
		int rc = rio_loader_next(test, &b);
		if (rc == 0)
			break;
		if (rc < 0) {
			tr_data_error(test, rc, err, errlen);
			failed = 1;
			break;
		}
		tr_input in;
		if (model_input(p, test, b, &in, err, errlen) < 0) {
			rio_loader_release(test, b);
			failed = 1;
			break;
		}
		tr_step_embed_input(m, &in, pull, ctx);
		tr_mlp_forward(&m->net, &in);
		tr_mlp_loss(&m->net, &in, m->eval_stats, 0);
		records += in.rows;
		/* the batch's memory goes back to the loader: the GPU must be done */
		tr_math_sync(m->math);
		rio_loader_release(test, b);
	}
	float st[2] = {0, 0};
	if (!failed && test && tr_math_to_host(m->math, st, m->eval_stats, 2) < 0) {
		snprintf(err, errlen, "the GPU failed during evaluation");
		failed = 1;
	}
	sums[0] = st[0];
	sums[1] = st[1];
	sums[2] = records;
	return failed ? -1 : 0;
}

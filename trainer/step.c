/*
 * step.c — the pieces of a step and of an evaluation that every strategy
 * shares (step.h).
 */
#include "config.h"
#include "step.h"
#include "exit_status.h"
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
	return tr_step_batch_at(p, p->cursor->global_step, b, in, must, failed, wait, err, errlen);
}

int tr_step_batch_at(const tr_parts *p, uint64_t step, rio_batch **b, tr_input *in, int must,
                     int *failed, double *wait, char *err, size_t errlen)
{
	const tr_cursor *k = p->cursor;
	int rc = tr_data_next(p->data, p->cfg, step, k->epoch_steps, b, in, must, failed, wait, err,
	                      errlen);
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

int tr_step_test_batches(const tr_parts *p, tr_batch_fn fn, void *ctx, char *err, size_t errlen)
{
	rio_loader *test = p->data->test;
	for (; test;) {
		rio_batch *b;
		int rc = rio_loader_next(test, &b);
		if (rc == 0)
			break;
		if (rc < 0) {
			tr_data_error(test, rc, err, errlen);
			return -1;
		}
		tr_input in;
		if (model_input(p, test, b, &in, err, errlen) < 0) {
			rio_loader_release(test, b);
			return -1;
		}
		fn(ctx, &in);
		/* the batch's memory goes back to the loader: the GPU must be done */
		tr_math_sync(p->model->math);
		rio_loader_release(test, b);
	}
	return 0;
}

typedef struct eval_ctx {
	const tr_parts *p;
	tr_pull_fn pull;
	void *ctx;
	double records;
} eval_ctx;

/* One test batch forward, its loss into the evaluation's sums. */
static void eval_batch(void *ctx, tr_input *in)
{
	eval_ctx *e = ctx;
	tr_model *m = e->p->model;
	tr_step_embed_input(m, in, e->pull, e->ctx);
	tr_mlp_forward(&m->net, in);
	tr_mlp_loss(&m->net, in, m->eval_stats, 0);
	e->records += in->rows;
}

int tr_step_evaluate(const tr_parts *p, tr_pull_fn pull, void *ctx, double sums[3], char *err,
                     size_t errlen)
{
	tr_model *m = p->model;
	eval_ctx e = {p, pull, ctx, 0};
	if (p->data->test)
		tr_math_zero(m->math, m->eval_stats, 2);
	int failed = tr_step_test_batches(p, eval_batch, &e, err, errlen) < 0;
	float st[2] = {0, 0};
	if (!failed && p->data->test && tr_math_to_host(m->math, st, m->eval_stats, 2) < 0) {
		snprintf(err, errlen, "the GPU failed during evaluation");
		failed = 1;
	}
	sums[0] = st[0];
	sums[1] = st[1];
	sums[2] = e.records;
	return failed ? -1 : 0;
}

/* Whether the segment stops before global step `step`, and whether it
 * is cut after `done` steps. */
static int stops_at(const tr_options *o, uint64_t step)
{
	return o->max_steps && step >= o->max_steps;
}

static int cut_after(const tr_options *o, uint64_t done)
{
	return o->checkpoint_every && done % o->checkpoint_every == 0;
}

int tr_step_segment_last(const tr_parts *p)
{
	const tr_options *o = &p->cfg->o;
	const tr_cursor *k = p->cursor;
	return k->step_in_epoch + 1 >= k->epoch_steps || stops_at(o, k->global_step + 1) ||
	       cut_after(o, k->global_step + 1);
}

int tr_step_segment(const tr_parts *p, tr_segment *seg, tr_step_fn step, tr_after_fn after,
                    void *ctx, uint64_t gradients, char *err, size_t errlen)
{
	const tr_config *c = p->cfg;
	const tr_options *o = &c->o;
	tr_cursor *k = p->cursor;
	seg->stopped = seg->mid_epoch = 0;
	while (k->step_in_epoch < k->epoch_steps) {
		if (stops_at(o, k->global_step)) {
			seg->stopped = seg->mid_epoch = 1;
			return 0;
		}
		double loss0 = k->ep_loss, count0 = k->ep_count;
		int rc = step(ctx, err, errlen);
		if (rc != 0)
			tr_world_agree(&c->w, rc < 0, err, EXIT_DATA);
		k->total_samples += k->ep_count - count0;
		k->total_gradients += gradients;
		if (seg->stepped)
			seg->stepped(seg->ctx, k->ep_loss - loss0, k->ep_count - count0);
		int cut = cut_after(o, k->global_step);
		if (after)
			after(ctx);
		if (cut) {
			seg->mid_epoch = 1;
			return 0;
		}
	}
	return 0;
}

void tr_step_figures(const tr_parts *p, tr_epoch_figures *f)
{
	const tr_cursor *k = p->cursor;
	memset(f, 0, sizeof *f);
	f->loss = k->ep_loss;
	f->correct = k->ep_correct;
	f->count = k->ep_count;
	f->count_before = k->ep_count0;
	f->skipped = k->ep_skipped;
	f->steps = k->step_in_epoch;
	f->last_step = k->global_step;
}

void tr_step_collect_cursor(const tr_parts *p, tr_ckpt *c)
{
	const tr_cursor *k = p->cursor;
	c->optimizer_t = p->model->opt.t;
	c->epoch_loss = k->ep_loss;
	c->epoch_correct = k->ep_correct;
	c->epoch_count = k->ep_count;
}

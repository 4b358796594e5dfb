/*
 * start.c — where a run starts (start.h): the checkpoint read and planned
 * before anything opens, then afresh or resumed once the parts are up.
 */
#include "config.h"
#include "exit_status.h"
#include "start.h"
#include "resume_match.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

/* Rank 0: reads DIR/checkpoint into ck and sums it up (s->have 0: there is
 * none). 0, or a negative errno with a message. */
static int read_summary(const tr_config *c, const char *path, tr_ckpt *ck, tr_ckpt_summary *s,
                        char *err, size_t errlen)
{
	/* what is there is a regular file, before it is opened (a FIFO would
	 * wait for a writer) */
	int probed = path ? tr_ckpt_probe(c->o.checkpoint, err, errlen) : -ENOMEM;
	/* (model parallelism: the tensors stay in the file, for each rank to
	 * read its own) */
	int rc = probed < 0             ? probed
	         : c->ops->tensor_part ? tr_ckpt_read_meta(c->o.checkpoint, ck, err, errlen)
	                               : tr_ckpt_read(c->o.checkpoint, ck, err, errlen);
	if (rc == -ENOENT && probed == 0) {
		fprintf(stderr, "recordio-train: no checkpoint in %s yet: starting from scratch\n",
		        c->o.checkpoint);
		return 0;
	}
	if (rc < 0)
		return rc;
	*s = (tr_ckpt_summary){.have = 1, .world = ck->world, .global_batch = ck->global_batch,
	                       .lr_scale = ck->lr_scale, .strategy = ck->strategy,
	                       .servers = ck->servers, .sharding = ck->sharding,
	                       .nshards = ck->nshards, .mid_epoch = ck->step_in_epoch > 0};
	return tr_resume_match_options(c, ck, path, err, errlen);
}

void tr_start_read(const tr_config *c, tr_ckpt *ck, tr_resume_plan *plan)
{
	char msg[MSG] = "";
	char *path = tr_ckpt_path(c->o.checkpoint);
	tr_ckpt_summary s = {0};
	int rc = c->w.rank == 0 ? read_summary(c, path, ck, &s, msg, sizeof msg) : 0;
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	tr_world_bcast(&c->w, &s, sizeof s);
	const tr_strategy_ops *was = tr_strategy_get((tr_strategy)s.strategy);
	s.strategy_name = was ? was->name : "allreduce";
	tr_resume_run run = {.path = path ? path : c->o.checkpoint,
	                     .strategy = (uint32_t)c->o.strategy,
	                     .servers = c->o.servers,
	                     .world = c->w.size,
	                     .data_world = c->roles.data_world,
	                     .data_unit = c->ops->data_unit,
	                     .global_batch = c->o.global_batch,
	                     .sharding = c->o.sharding};
	rc = tr_resume_plan_make(&s, &run, plan, msg, sizeof msg);
	free(path);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_USAGE);
}

/* Collective: rank 0's initial parameters on every rank (where no rank
 * holds the whole model, each rank's own part made there). */
static void fresh_start(const tr_parts *p, tr_strategy_state *s)
{
	const tr_config *c = p->cfg;
	tr_model *m = p->model;
	if (c->ops->tensor_part) { /* each rank its own part, from the seed */
		c->ops->place_fresh(s, NULL);
		tr_store_fence(p->store);
		return;
	}
	size_t n = m->nparams;
	float *host = malloc(n * sizeof *host);
	tr_world_agree(&c->w, !host, "out of memory", EXIT_DATA);
	if (c->w.rank == 0) {
		/* the model's layout (a parameter server has no model of its own) */
		tr_mlp shape;
		tr_mlp_layout(&shape, m->sizes, m->nlayers);
		tr_mlp_init_params(&shape, c->o.seed, host);
	}
	int rc = tr_world_bcast_checked(&c->w, host, n);
	tr_world_agree(&c->w, rc < 0, "the ranks' initial parameters differ after the broadcast",
	               EXIT_DATA);
	c->ops->place_fresh(s, host);
	tr_store_fence(p->store);
	free(host);
}

/* Collective, on resume: the training seconds so far, from DIR/clock
 * (rank 0's `seconds`); when it is not known (no clock, or another
 * checkpoint's: a crash between the two writes, an older build), said
 * once, and wall_seconds count from here. */
static void resume_clock(const tr_parts *p, double seconds)
{
	const tr_config *c = p->cfg;
	tr_world_bcast(&c->w, &seconds, sizeof seconds);
	if (isnan(seconds) && c->w.rank == 0)
		fprintf(stderr, "recordio-train: %s/clock is missing or not its checkpoint's: the "
		        "metrics' wall_seconds count from this resume\n", c->o.checkpoint);
	p->cursor->train_seconds = isnan(seconds) ? 0 : seconds;
}

void tr_start(const tr_parts *p, tr_strategy_state *s, tr_ckpt *ck)
{
	const tr_config *c = p->cfg;
	if (!c->plan.resume) {
		fresh_start(p, s);
		return;
	}
	/* under every strategy: the model, its columns and data are the
	 * checkpoint's (the tensors are copied at this run's sizes) */
	char msg[MSG] = "";
	char *path = tr_ckpt_path(c->o.checkpoint);
	int rc = 0;
	if (c->w.rank == 0)
		rc = path ? tr_resume_match_model(c, p->data, p->model, ck, path, msg, sizeof msg) : -1;
	free(path);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	resume_clock(p, c->w.rank == 0 ? ck->seconds : 0);
	c->ops->place(s, c->w.rank == 0 ? ck : NULL);
	if (c->w.rank == 0)
		tr_ckpt_free(ck);
}

void tr_start_tensors(const tr_parts *p, const tr_ckpt *c, tr_place_fn fn, void *ctx)
{
	const tr_world *w = &p->cfg->w;
	size_t n = p->model->nparams;
	float *host = malloc(n * sizeof *host);
	tr_world_agree(w, !host, "out of memory", EXIT_DATA);
	int states = tr_optim_state_count(&p->model->opt);
	for (int i = 0; i <= states; i++) {
		if (w->rank == 0)
			memcpy(host, i == 0 ? c->params : i == 1 ? c->state1 : c->state2,
			       n * sizeof *host);
		if (tr_world_bcast_checked(w, host, n) < 0)
			tr_world_agree(w, 1, "the ranks' parameters differ after the broadcast", EXIT_DATA);
		fn(ctx, i, host);
	}
	free(host);
}

void tr_start_tables(const tr_parts *p, const tr_ckpt *c, tr_place_table_fn fn, void *ctx)
{
	const tr_config *cfg = p->cfg;
	const tr_world *w = &cfg->w;
	int states = tr_optim_state_count(&p->model->opt);
	for (int t = 0; t < cfg->o.nembed; t++) {
		size_t n = (size_t)cfg->o.embed[t].vocab * (size_t)cfg->o.embed[t].dim;
		float *host = malloc(n * sizeof *host);
		tr_world_agree(w, !host, "out of memory", EXIT_DATA);
		for (int i = 0; i <= states; i++) {
			if (w->rank == 0)
				memcpy(host, i == 0 ? c->table_params[t] : i == 1 ? c->table_state1[t]
				                                                   : c->table_state2[t],
				       n * sizeof *host);
			tr_world_bcast(w, host, n * sizeof *host);
			fn(ctx, t, i, host);
		}
		free(host);
	}
}

void tr_start_counters(const tr_parts *p, const tr_ckpt *c)
{
	tr_cursor *k = p->cursor;
	uint64_t u[8];
	double d[4];
	if (p->cfg->w.rank == 0) {
		uint64_t v[8] = {c->epoch,       c->step_in_epoch,   c->global_step,
		                 c->skipped_steps, c->optimizer_t,  c->total_gradients,
		                 c->epoch_skipped, c->epoch_overflows};
		memcpy(u, v, sizeof u);
		d[0] = c->epoch_loss;
		d[1] = c->epoch_correct;
		d[2] = c->epoch_count;
		d[3] = c->total_samples;
	}
	tr_world_bcast(&p->cfg->w, u, sizeof u);
	tr_world_bcast(&p->cfg->w, d, sizeof d);
	k->epoch = u[0];
	k->step_in_epoch = u[1];
	k->global_step = u[2];
	k->skipped_steps = u[3];
	p->model->opt.t = u[4];
	k->total_gradients = u[5];
	k->ep_skipped = u[6];
	k->ep_overflows = u[7];
	k->ep_loss = d[0];
	k->ep_correct = d[1];
	k->ep_count = d[2];
	k->total_samples = d[3];
}

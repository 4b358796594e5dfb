/*
 * run_config.c — a run's configuration (run_config.h): the options, the
 * strategy's roles, and the checks that need the world.
 */
#include "config.h"
#include "exit_status.h"
#include "run_config.h"
#include "strategy_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

/* --straggler R:F: R is a rank of this run that steps (with parameter
 * servers a worker: the ranks after them; under allreduce and model
 * parallelism every rank, a pipeline's later stages too, which read no
 * data), else the option would do nothing. */
static int check_stragglers(const tr_config *c, char *msg, size_t len)
{
	const tr_options *o = &c->o;
	int servers = c->o.strategy != TR_STRATEGY_ALLREDUCE;
	int first = servers ? c->w.size - c->roles.data_world : 0;
	for (int i = 0; i < o->nstraggler; i++) {
		int k = o->straggler[i].rank;
		double f = o->straggler[i].factor;
		if (k >= c->w.size) {
			snprintf(msg, len, "--straggler %d:%g: there is no rank %d (this run has "
			         "ranks 0 to %d)", k, f, k, c->w.size - 1);
			return -1;
		}
		if (k < first) {
			snprintf(msg, len, "--straggler %d:%g: rank %d is a parameter server; the "
			         "workers, which step, are ranks %d to %d", k, f, k, first, c->w.size - 1);
			return -1;
		}
	}
	return 0;
}

/* The records per rank and step: --global-batch split over the ranks that
 * read the data, evenly, or --batch. */
static int choose_batch(tr_config *c, char *msg, size_t len)
{
	const tr_options *o = &c->o;
	c->batch = o->batch;
	if (!o->global_batch)
		return 0;
	int W = c->roles.data_world;
	if (o->global_batch % W != 0) {
		snprintf(msg, len, "--global-batch %d does not split evenly over %d %s",
		         o->global_batch, W, c->ops->data_unit);
		return -1;
	}
	c->batch = o->global_batch / W;
	return 0;
}

/* What needs the world's size and this rank, and no communication: the
 * D x P x T layout's shape, the strategy's roles, --straggler,
 * --global-batch. The same on every rank but for the rank's place: every
 * rank fails alike. 0, or -1 with a message. */
static int shape_world(tr_config *c, char *msg, size_t len)
{
	if (tr_layout_shape(&c->layout, &c->o, c->w.rank, c->w.size, msg, len) < 0)
		return -1;
	c->ops = tr_strategy_of(&c->o);
	if (c->ops->roles(&c->o, &c->w, &c->roles, msg, len) < 0)
		return -1;
	if (check_stragglers(c, msg, len) < 0)
		return -1;
	return choose_batch(c, msg, len);
}

void tr_config_parse(tr_config *c, int argc, char **argv)
{
	char msg[MSG] = "";
	int rc = tr_options_parse(argc, argv, &c->o, msg, sizeof msg);
	if (rc == 1 || rc == 2) {
		if (tr_world_launched_rank() == 0) {
			if (rc == 1)
				tr_options_usage(stdout);
			else
				printf("recordio-train (recordio %s)\n", rio_version());
		}
		tr_options_free(&c->o);
		exit(0);
	}
	if (rc < 0) {
		size_t n = strlen(msg);
		snprintf(msg + n, sizeof msg - n, "\nTry 'recordio-train --help'.");
		tr_options_free(&c->o);
		tr_world_refuse_unstarted(msg);
	}
	/* the launcher said the world's size (mpirun): what needs only that
	 * is checked now too, on a copy (tr_config_init checks it again on
	 * the world MPI gives, for launchers that do not say it) */
	tr_config pre = *c;
	pre.w.size = tr_world_launched_size();
	pre.w.rank = tr_world_launched_rank();
	if (pre.w.size > 0 && shape_world(&pre, msg, sizeof msg) < 0) {
		tr_options_free(&c->o);
		tr_world_refuse_unstarted(msg);
	}
}

void tr_config_init(tr_config *c)
{
	char msg[MSG] = "";
	int rc = shape_world(c, msg, sizeof msg);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_USAGE);
	tr_layout_open(&c->layout, &c->w);
	c->plan = (tr_resume_plan){.sharding = c->o.sharding};
}

void tr_config_apply_plan(tr_config *c, const tr_resume_plan *p)
{
	c->plan = *p;
	c->o.sharding = p->sharding;
	if (p->batch)
		c->batch = p->batch;
}

void tr_config_free(tr_config *c)
{
	tr_layout_close(&c->layout);
	tr_options_free(&c->o);
}

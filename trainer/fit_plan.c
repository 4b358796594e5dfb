/*
 * fit_plan.c — memory planning across layouts (fit_plan.h).
 */
#include "config.h"
#include "fit_plan.h"
#include "size.h"

#include <stdio.h>

extern const tr_strategy_ops tr_pipeline_ops;

double tr_plan_rank_bytes(const tr_parts *p, int P, int T)
{
	tr_config c = *p->cfg;
	c.o.pipeline = P;
	c.o.tensor = T;
	c.o.nstages = 0;
	c.layout.P = P;
	c.layout.T = T;
	c.layout.t = 0;
	tr_parts q = *p;
	q.cfg = &c;
	const tr_strategy_ops *ops = tr_strategy_of(&c.o);
	double most = 0;
	for (int s = 0; s < P; s++) {
		c.layout.p = s;
		tr_need n = {0};
		ops->memory_need(&q, &n);
		most = n.total > most ? n.total : most;
	}
	return most;
}

/* T splits every hidden width evenly. */
static int splits(const tr_options *o, int T)
{
	for (int i = 0; i < o->nhidden; i++)
		if (o->hidden[i] % T)
			return 0;
	return o->nhidden > 0;
}

void tr_plan_hint(const tr_parts *p, double allowed, char *buf, size_t len)
{
	const tr_options *o = &p->cfg->o;
	int P0 = o->pipeline, T0 = o->tensor, L = p->model->nlayers, widest = 1, P = 0, T = 0;
	*buf = 0;
	if (o->strategy != TR_STRATEGY_ALLREDUCE || o->device != TR_DEVICE_CPU ||
	    o->shard_optimizer)
		return; /* what model parallelism does not run with (options_check.c) */
	double bp = 0, bt = 0;
	for (int i = 0; i < o->nhidden; i++)
		widest = o->hidden[i] > widest ? o->hidden[i] : widest;
	for (int k = P0 + 1; k <= L && !P; k++)
		if ((bp = tr_plan_rank_bytes(p, k, T0)) <= allowed)
			P = k;
	for (int k = T0 + 1; k <= widest && !T; k++)
		if (splits(o, k) && (bt = tr_plan_rank_bytes(p, P0, k)) <= allowed)
			T = k;
	char a[32], b[32];
	if (P && T)
		snprintf(buf, len, "--pipeline %d (%s a rank) or --tensor %d (%s) would fit", P,
		         rio__format_bytes(a, sizeof a, (uint64_t)bp), T,
		         rio__format_bytes(b, sizeof b, (uint64_t)bt));
	else if (P || T)
		snprintf(buf, len, "--%s %d would fit (%s a rank)", P ? "pipeline" : "tensor",
		         P ? P : T, rio__format_bytes(a, sizeof a, (uint64_t)(P ? bp : bt)));
	else
		snprintf(buf, len, "no --pipeline up to %d (the layers) or --tensor alone fits: %s "
		         "a rank at --pipeline %d", L, rio__format_bytes(a, sizeof a,
		         (uint64_t)tr_plan_rank_bytes(p, L > P0 ? L : P0, T0)), L > P0 ? L : P0);
}

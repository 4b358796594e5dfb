/*
 * optim.c — the learning-rate schedule and the optimizer state; the update
 * itself runs in the math backend (tr_sgd_step, tr_adam_step), so it
 * happens where the parameters live, one pass over each range it is given;
 * LARS is optim_lars.c.
 */
#include "config.h"
#include "optim.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int tr_optim_init(tr_optim *o, tr_math *math, size_t n, const tr_optim_config *cfg,
                  float *state1, float *state2)
{
	memset(o, 0, sizeof *o);
	if (!state1 || (cfg->kind == TR_OPT_ADAM && !state2))
		return -EINVAL;
	o->cfg = *cfg;
	o->math = math;
	o->n = n;
	o->state1 = state1;
	o->state2 = cfg->kind == TR_OPT_ADAM ? state2 : NULL;
	return 0;
}

int tr_optim_states(tr_opt_kind kind) { return kind == TR_OPT_ADAM ? 2 : 1; }

int tr_optim_state_count(const tr_optim *o) { return tr_optim_states(o->cfg.kind); }

float tr_optim_lr(const tr_optim_config *c, uint64_t step)
{
	double target = (double)c->lr * c->scale;
	if (step < c->warmup_steps && c->scale == 1.0f) /* nothing scaled: from 0 */
		return (float)(target * (double)(step + 1) / (double)(c->warmup_steps + 1));
	if (step < c->warmup_steps)
		return (float)(c->lr + (target - c->lr) * (double)step / (double)c->warmup_steps);
	if (c->cosine && c->total_steps > c->warmup_steps) {
		double done = (double)(step - c->warmup_steps) /
		              (double)(c->total_steps - c->warmup_steps);
		if (done > 1.0)
			done = 1.0;
		return (float)(target * 0.5 * (1.0 + cos(M_PI * done)));
	}
	return (float)target;
}

void tr_optim_begin(tr_optim *o, float grad_scale, uint64_t step)
{
	o->lr = tr_optim_lr(&o->cfg, step);
	o->grad_scale = grad_scale;
	o->t++;
}

int tr_optim_bucketwise(const tr_optim *o)
{
	return o->cfg.kind != TR_OPT_LARS; /* LARS needs each layer's whole norms */
}

/* The backend's arguments for the update begun (tr_optim_begin). */
static tr_adam_args adam_args(const tr_optim *o)
{
	return (tr_adam_args){
		.lr = o->lr, .beta1 = o->cfg.beta1, .beta2 = o->cfg.beta2, .eps = o->cfg.eps,
		.weight_decay = o->cfg.weight_decay, .grad_scale = o->grad_scale,
		.bias1 = (float)(1.0 - pow(o->cfg.beta1, (double)o->t)),
		.bias2 = (float)(1.0 - pow(o->cfg.beta2, (double)o->t)),
	};
}

static tr_sgd_args sgd_args(const tr_optim *o)
{
	return (tr_sgd_args){.lr = o->lr, .momentum = o->cfg.momentum,
	                     .weight_decay = o->cfg.weight_decay, .grad_scale = o->grad_scale};
}

void tr_optim_update(tr_optim *o, float *params, const float *grads, size_t begin, size_t end)
{
	size_t n = end - begin;
	if (o->cfg.kind == TR_OPT_LARS) { /* [0, n): see tr_optim_bucketwise */
		tr_lars_step(o, params, grads, o->grad_scale, o->lr); /* a GPU failure shows at the sync */
	} else if (o->cfg.kind == TR_OPT_ADAM) {
		tr_adam_args a = adam_args(o);
		a.param16 = o->params16 ? o->params16 + begin : NULL;
		tr_adam_step(o->math, params + begin, grads + begin, o->state1 + begin,
		             o->state2 + begin, n, &a);
	} else {
		tr_sgd_args a = sgd_args(o);
		a.param16 = o->params16 ? o->params16 + begin : NULL;
		tr_sgd_step(o->math, params + begin, grads + begin, o->state1 + begin, n, &a);
	}
}

int tr_optim_update_rows(tr_optim *o, float *params, size_t offset, size_t row_len,
                         const int64_t *rows, size_t nrows, const float *grads)
{
	if (o->cfg.kind == TR_OPT_LARS)
		return -ENOTSUP;
	tr_adam_args adam = adam_args(o);
	tr_sgd_args sgd = sgd_args(o);
	for (size_t r = 0; r < nrows; r++) {
		size_t at = offset + (size_t)rows[r] * row_len;
		const float *g = grads + r * row_len;
		if (o->cfg.kind == TR_OPT_ADAM)
			tr_adam_step(o->math, params + at, g, o->state1 + at, o->state2 + at, row_len,
			             &adam);
		else
			tr_sgd_step(o->math, params + at, g, o->state1 + at, row_len, &sgd);
	}
	return 0;
}

void tr_optim_step(tr_optim *o, float *params, const float *grads, float grad_scale,
                   uint64_t step)
{
	tr_optim_begin(o, grad_scale, step);
	tr_optim_update(o, params, grads, 0, o->n);
}

/*
 * optim_lars.c — LARS, layer-wise adaptive rate scaling (You, Gitman and
 * Ginsburg, "Large Batch Training of Convolutional Networks", 2017), for
 * large global batches where one rate for every layer diverges or stalls.
 *
 * For each weight matrix W (a block with `adapt`), g its mean gradient:
 *   local = trust * ||W|| / (||g|| + wd * ||W||)   (1 when a norm is 0)
 *   v = momentum * v + lr * local * (g + wd * W);   W -= v
 * lr is the schedule's global rate (warmup, cosine). Biases (1-D blocks)
 * are excluded from the adaptation and from weight decay, as in the
 * paper's and MLPerf's implementations: v = momentum * v + lr * g.
 * Both are the backend's SGD update (optim.h) with the rate folded into the
 * gradient's scale and the weight decay, and a rate of 1, so LARS runs on
 * the CPU and on a GPU with no kernel of its own; only the two norms per
 * matrix are new (tr_norm2). Its state is one velocity buffer, like SGD's.
 */
#include "config.h"
#include "optim.h"

#include <errno.h>

int tr_optim_set_blocks(tr_optim *o, const tr_param_block *b, int n)
{
	if (n < 0 || n > TR_OPT_MAX_BLOCKS)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (b[i].off > o->n || b[i].n > o->n - b[i].off)
			return -EINVAL;
		o->block[i] = b[i];
	}
	o->nblocks = n;
	return 0;
}

int tr_lars_step(tr_optim *o, float *params, const float *grads, float grad_scale, float lr)
{
	const tr_optim_config *c = &o->cfg;
	int rc = 0;
	for (int i = 0; i < o->nblocks; i++) {
		const tr_param_block *b = &o->block[i];
		float *p = params + b->off;
		const float *g = grads + b->off;
		float *v = o->state1 + b->off;
		tr_sgd_args a = {.lr = 1.0f, .momentum = c->momentum,
		                 .param16 = o->params16 ? o->params16 + b->off : NULL};
		if (!b->adapt) {
			a.grad_scale = grad_scale * lr;
			tr_sgd_step(o->math, p, g, v, b->n, &a);
			continue;
		}
		float wn = 0, gn = 0;
		if (tr_norm2(o->math, p, b->n, &wn) < 0 || tr_norm2(o->math, g, b->n, &gn) < 0)
			rc = -EIO;
		if (o->whole_norms)
			o->whole_norms(o->norms_ctx, i, &wn, &gn);
		double gnorm = (double)gn * grad_scale; /* of the mean gradient */
		double local = 1.0;
		if (wn > 0 && gnorm > 0)
			local = c->trust * wn / (gnorm + c->weight_decay * (double)wn);
		a.grad_scale = (float)(grad_scale * lr * local);
		a.weight_decay = (float)(c->weight_decay * lr * local);
		tr_sgd_step(o->math, p, g, v, b->n, &a);
	}
	return rc;
}

/*
 * step_copies.c — --eval-every's copies for the strategies whose ranks
 * step together (allreduce, a pipeline; step.h): after a step that is due,
 * each rank keeps a copy of the parameters it holds (the whole model, or
 * its stage's part, its slice), and at the epoch's end (or a checkpoint)
 * each copy is placed back in turn and evaluated by the strategy's own
 * evaluation, so that a split model's copies go through the same pipeline
 * as its end-of-epoch evaluation. One implementation for both.
 */
#include "config.h"
#include "step.h"
#include "exit_status.h"
#include "clock.h"

#include <stdlib.h>

void tr_step_keep_copy(const tr_parts *p, tr_copies *copies, size_t n)
{
	const tr_config *c = p->cfg;
	const tr_cursor *k = p->cursor;
	tr_model *m = p->model;
	if (!c->o.eval_every || k->global_step % c->o.eval_every)
		return;
	tr_copy *cp = tr_copies_add(copies, n);
	if (cp) {
		tr_math_to_host(m->math, cp->params, m->net.params, n);
		cp->updates = k->global_step;
		cp->gradients = k->total_gradients;
		cp->samples = k->total_samples;
		cp->seconds = k->train_seconds + rio__now() - k->t_epoch0;
	}
	tr_world_agree(&c->w, !cp, "out of memory for a copy of the parameters (--eval-every)",
	               EXIT_DATA);
}

int tr_step_eval_copies(const tr_parts *p, tr_copies *copies, size_t n, tr_copy_fn fn,
                        void *ctx, char *err, size_t errlen)
{
	tr_model *m = p->model;
	float *keep = malloc((n ? n : 1) * sizeof *keep);
	tr_world_agree(&p->cfg->w, !keep, "out of memory", EXIT_DATA);
	tr_math_to_host(m->math, keep, m->net.params, n);
	int count = 0, failed = 0;
	MPI_Allreduce(&copies->n, &count, 1, MPI_INT, MPI_MIN, p->cfg->w.comm);
	for (int i = 0; i < count; i++) {
		const tr_copy *c = &copies->v[i];
		tr_math_from_host(m->math, m->net.params, c->params, n);
		tr_mlp_params_changed(&m->net);
		char later[256];
		if (fn(ctx, c, failed, failed ? later : err, failed ? sizeof later : errlen) < 0)
			failed = 1;
	}
	tr_copies_clear(copies);
	tr_math_from_host(m->math, m->net.params, keep, n);
	tr_mlp_params_changed(&m->net);
	free(keep);
	return failed ? -1 : 0;
}

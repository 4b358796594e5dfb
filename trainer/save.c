/*
 * save.c — a run's checkpoint written (save.h).
 */
#include "config.h"
#include "exit_status.h"
#include "save.h"
#include "checkpoint_split.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

/* Rank 0: what every strategy's checkpoint keeps of the run besides its
 * state: the model's shape and optimizer, the cursor, the data's sharding
 * and shard counts, the columns, and (in DIR/clock) the training seconds
 * so far. */
static void describe_run(const tr_parts *p, tr_ckpt *c)
{
	const tr_config *cfg = p->cfg;
	const tr_model *m = p->model;
	const tr_cursor *k = p->cursor;
	c->world = (uint32_t)cfg->w.size;
	c->layout[0] = (uint32_t)cfg->layout.D;
	c->layout[1] = (uint32_t)cfg->layout.P;
	c->layout[2] = (uint32_t)cfg->layout.T;
	c->global_batch = (uint32_t)cfg->batch * (uint32_t)cfg->roles.data_world;
	c->lr_scale = m->opt.cfg.scale;
	c->seed = cfg->o.seed;
	c->optimizer = (uint32_t)cfg->o.optim.kind;
	c->strategy = (uint32_t)cfg->o.strategy;
	c->nlayers = (uint32_t)m->nlayers;
	for (int l = 0; l <= m->nlayers; l++)
		c->sizes[l] = m->sizes[l];
	c->nparams = m->nparams;
	c->epoch = k->epoch;
	c->step_in_epoch = k->step_in_epoch;
	c->global_step = k->global_step;
	c->skipped_steps = k->skipped_steps;
	c->sharding = (uint32_t)p->data->sharding;
	c->nshards = (uint32_t)p->data->nshards;
	c->shard_records = p->data->shard_records; /* lent: taken back before the free */
	c->ncolumns = tr_data_ckpt_columns(p->data, cfg, c->columns);
	c->total_samples = k->total_samples;
	c->total_gradients = k->total_gradients;
	c->epoch_skipped = k->ep_skipped;
	c->epoch_overflows = k->ep_overflows;
	c->seconds = k->train_seconds + (k->t_epoch0 > 0 ? rio__now() - k->t_epoch0 : 0);
}

void tr_save(const tr_parts *p, tr_strategy_state *s)
{
	const tr_config *cfg = p->cfg;
	char msg[MSG] = "";
	uint32_t size;
	uint8_t *blob = tr_data_position(p->data, cfg, &size);
	tr_ckpt c = {0};
	int rc = tr_world_gather_blobs(&cfg->w, blob, size, &c.blob_size, &c.blob);
	free(blob);
	int root = cfg->w.rank == 0;
	if (root) {
		describe_run(p, &c);
		c.nblobs = (uint32_t)cfg->w.size;
		if (rc < 0)
			snprintf(msg, sizeof msg, "out of memory writing a checkpoint");
	}
	/* every rank takes part in the strategy's collectives, rank 0 too when
	 * out of memory (the strategy aborts where others would wait) */
	int rs = cfg->ops->collect(s, root ? &c : NULL, msg, sizeof msg);
	const tr_ckpt_part *part = cfg->ops->tensor_part ? cfg->ops->tensor_part(s) : NULL;
	if (part) /* the tensors written by the ranks that hold them */
		rc = tr_ckpt_split_write(&cfg->w, cfg->o.checkpoint, root ? &c : NULL,
		                         rc < 0 || rs < 0, part, msg, sizeof msg);
	else if (root && rc == 0 && rs == 0)
		rc = tr_ckpt_write(cfg->o.checkpoint, &c, msg, sizeof msg);
	if (rs < 0)
		rc = -1;
	c.shard_records = NULL; /* the data's (describe_run) */
	tr_ckpt_free(&c);
	tr_world_agree(&cfg->w, rc < 0, msg, EXIT_DATA);
}

int tr_save_tables(const tr_parts *p, tr_ckpt *c, tr_fetch_table_fn fn, void *ctx, int aborts,
                   char *err, size_t errlen)
{
	const tr_config *cfg = p->cfg;
	int states = tr_optim_state_count(&p->model->opt);
	for (int t = 0; t < cfg->o.nembed; t++) {
		size_t n = (size_t)cfg->o.embed[t].vocab * (size_t)cfg->o.embed[t].dim;
		float *dst[3] = {NULL, NULL, NULL};
		if (c) {
			c->ntables = (uint32_t)t + 1;
			c->table_vocab[t] = cfg->o.embed[t].vocab;
			c->table_dim[t] = (uint32_t)cfg->o.embed[t].dim;
			for (int i = 0; i <= states; i++)
				if (!(dst[i] = malloc(n * sizeof(float)))) {
					snprintf(err, errlen, "out of memory writing a checkpoint");
					if (aborts)
						tr_world_abort(&cfg->w, err, EXIT_DATA);
					for (int j = 0; j < i; j++)
						free(dst[j]);
					return -1;
				}
			c->table_params[t] = dst[0];
			c->table_state1[t] = dst[1];
			c->table_state2[t] = dst[2];
		}
		for (int i = 0; i <= states; i++)
			fn(ctx, t, i, dst[i]);
	}
	return 0;
}

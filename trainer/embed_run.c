/*
 * embed_run.c — a run's embedding tables on the training side (see
 * embed_run.h): ids, pooling, row gradients, and the dense gradient and
 * update of the allreduce strategy.
 */
#include "config.h"
#include "embed_run.h"
#include "part.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_embed_rows_of(int64_t vocab, int servers, int s, int64_t *lo, int64_t *hi)
{
	uint64_t a, b;
	tr_part((uint64_t)vocab, servers, s, 1, &a, &b);
	*lo = (int64_t)a;
	*hi = (int64_t)b;
}

size_t tr_embed_run_tables(tr_embed_table *t, const tr_embed_option *opt, int n,
                           const rio_column_spec *ids)
{
	size_t floats = 0;
	for (int i = 0; i < n; i++) {
		snprintf(t[i].feature, sizeof t[i].feature, "%s", opt[i].feature);
		t[i].vocab = opt[i].vocab;
		t[i].dim = opt[i].dim;
		t[i].k = (int)ids[i].length;
		t[i].offset = floats;
		floats += tr_embed_param_count(&t[i]);
	}
	return floats;
}

int tr_embed_run_init(tr_embed_run *e, const tr_embed_option *opt, int n,
                      const rio_column_spec *ids, int max_rows, int whole)
{
	memset(e, 0, sizeof *e);
	e->n = n;
	e->max_rows = max_rows;
	e->whole = whole;
	e->floats = tr_embed_run_tables(e->t, opt, n, ids);
	int ok = 1;
	for (int i = 0; i < n && ok; i++) {
		const tr_embed_table *t = &e->t[i];
		e->col[i] = e->width;
		e->width += t->dim;
		size_t occ = (size_t)max_rows * (size_t)t->k;
		e->uniq[i] = malloc(occ * sizeof(int64_t));
		e->pos[i] = malloc(occ * sizeof(int64_t));
		e->rowgrad[i] = malloc(occ * (size_t)t->dim * sizeof(float));
		if (!whole)
			e->rows[i] = malloc(occ * (size_t)t->dim * sizeof(float));
		ok = e->uniq[i] && e->pos[i] && e->rowgrad[i] && (whole || e->rows[i]);
	}
	e->block = ok ? calloc((size_t)max_rows * (size_t)e->width, sizeof(float)) : NULL;
	if (!ok || !e->block) {
		tr_embed_run_free(e);
		return -ENOMEM;
	}
	return 0;
}

int tr_embed_run_lend(tr_embed_run *e, tr_math *math, const tr_optim_config *cfg,
                      uint64_t seed, float *params, float *grads, float *state1, float *state2)
{
	e->params = params;
	e->grads = grads;
	if (tr_optim_init(&e->opt, math, e->floats, cfg, state1, state2) < 0 || !params || !grads)
		return -EINVAL;
	for (int i = 0; i < e->n; i++)
		tr_embed_init_params(&e->t[i], seed, (uint64_t)i, e->params);
	return 0;
}

void tr_embed_run_free(tr_embed_run *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->uniq[i]);
		free(e->pos[i]);
		free(e->rows[i]);
		free(e->rowgrad[i]);
	}
	free(e->block);
	memset(e, 0, sizeof *e);
}

int tr_embed_run_ids(tr_embed_run *e, const rio_batch *b, int first_column,
                     const rio_shardset *shards, char *err, size_t errlen)
{
	int rows = (int)b->count;
	for (int i = 0; i < e->n; i++) {
		const tr_embed_table *t = &e->t[i];
		const int64_t *ids = b->columns[first_column + i].host;
		int bad = tr_embed_check(ids, rows, t->k, t->vocab);
		if (bad >= 0) {
			const rio_batch_record *rec = &b->records[bad];
			int64_t id = 0;
			for (int j = 0; j < t->k; j++) {
				int64_t v = ids[(size_t)bad * t->k + j];
				if (v < 0 || v >= t->vocab) {
					id = v;
					break;
				}
			}
			snprintf(err, errlen, "%s: record %llu: --embed %s: id %lld is outside [0, %lld)",
			         shards->paths[rec->shard], (unsigned long long)rec->index, t->feature,
			         (long long)id, (long long)t->vocab);
			return -1;
		}
		e->nuniq[i] = tr_embed_unique(ids, (size_t)rows * t->k, e->uniq[i], e->pos[i]);
		e->ids[i] = ids;
	}
	return 0;
}

void tr_embed_run_pool(tr_embed_run *e, int rows)
{
	for (int i = 0; i < e->n; i++) {
		const tr_embed_table *t = &e->t[i];
		float *out = e->block + e->col[i];
		if (e->whole) /* the whole table, indexed by the ids themselves */
			tr_embed_pool(e->params + t->offset, e->ids[i], rows, t->k, t->dim, out, e->width);
		else /* the pulled rows, by the ids' places among the unique ones */
			tr_embed_pool(e->rows[i], e->pos[i], rows, t->k, t->dim, out, e->width);
	}
}

void tr_embed_run_backward(tr_embed_run *e, const float *dblock, int rows)
{
	for (int i = 0; i < e->n; i++) {
		const tr_embed_table *t = &e->t[i];
		tr_embed_backward(dblock + e->col[i], e->width, e->pos[i], rows, t->k, t->dim,
		                  e->nuniq[i], e->rowgrad[i]);
	}
}

void tr_embed_run_dense_grad(tr_embed_run *e)
{
	/* dense: the whole tables' gradient, zero but for the batch's rows */
	memset(e->grads, 0, e->floats * sizeof(float));
	for (int i = 0; i < e->n; i++)
		tr_embed_scatter_grad(&e->t[i], e->uniq[i], e->nuniq[i], e->rowgrad[i], e->grads);
}

void tr_embed_run_update(tr_embed_run *e, const float *sum, float grad_scale, uint64_t step)
{
	tr_optim_begin(&e->opt, grad_scale, step);
	tr_optim_update(&e->opt, e->params, sum, 0, e->floats);
}

void tr_embed_run_fetch(void *ctx, int t, int which, float *host)
{
	tr_embed_run *e = ctx;
	memcpy(host, tr_optim_buffer(&e->opt, e->params, which) + e->t[t].offset,
	       tr_embed_param_count(&e->t[t]) * sizeof(float));
}

void tr_embed_run_place(void *ctx, int t, int which, const float *host)
{
	tr_embed_run *e = ctx;
	memcpy(tr_optim_buffer(&e->opt, e->params, which) + e->t[t].offset, host,
	       tr_embed_param_count(&e->t[t]) * sizeof(float));
}

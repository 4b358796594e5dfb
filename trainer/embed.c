/*
 * embed.c — embedding tables (embed.h): mean-pooled lookup, the batch's
 * unique ids, the sparse row gradients, and the lazy update of only the
 * rows seen (through optim.c's per-row update, so the formulas are the
 * dense ones).
 */
#include "config.h"
#include "embed.h"

#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t tr_embed_param_count(const tr_embed_table *t)
{
	return (size_t)t->vocab * (size_t)t->dim;
}

void tr_embed_init_rows(const tr_embed_table *t, uint64_t seed, uint64_t salt, int64_t lo,
                        int64_t hi, float *dst)
{
	float bound = sqrtf(1.0f / (float)t->vocab);
	for (int64_t id = lo; id < hi; id++) {
		rio__rng r;
		rio__rng_seed(&r, seed, salt, 0x656d62 /* "emb" */, (uint64_t)id);
		float *p = dst + (size_t)(id - lo) * (size_t)t->dim;
		for (int j = 0; j < t->dim; j++)
			p[j] = (2.0f * rio__rng_float(&r) - 1.0f) * bound;
	}
}

void tr_embed_init_params(const tr_embed_table *t, uint64_t seed, uint64_t salt, float *params)
{
	tr_embed_init_rows(t, seed, salt, 0, t->vocab, params + t->offset);
}

int tr_embed_check(const int64_t *ids, int rows, int k, int64_t vocab)
{
	for (int r = 0; r < rows; r++)
		for (int i = 0; i < k; i++) {
			int64_t id = ids[(size_t)r * k + i];
			if (id < 0 || id >= vocab)
				return r;
		}
	return -1;
}

void tr_embed_pool(const float *src, const int64_t *idx, int rows, int k, int dim, float *out,
                   int ld)
{
	const float scale = 1.0f / (float)k;
	for (int r = 0; r < rows; r++) {
		float *o = out + (size_t)r * ld;
		const int64_t *ix = idx + (size_t)r * k;
		memcpy(o, src + (size_t)ix[0] * dim, (size_t)dim * sizeof *o);
		for (int i = 1; i < k; i++) {
			const float *row = src + (size_t)ix[i] * dim;
			for (int j = 0; j < dim; j++)
				o[j] += row[j];
		}
		for (int j = 0; j < dim; j++)
			o[j] *= scale;
	}
}

int tr_embed_forward(const tr_embed_table *t, const float *params, const int64_t *ids, int rows,
                     float *out, int ld, int *bad_row)
{
	int bad = tr_embed_check(ids, rows, t->k, t->vocab);
	if (bad >= 0) {
		if (bad_row)
			*bad_row = bad;
		return -ERANGE;
	}
	tr_embed_pool(params + t->offset, ids, rows, t->k, t->dim, out, ld);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

size_t tr_embed_unique(const int64_t *ids, size_t n, int64_t *uniq, int64_t *pos)
{
	if (n == 0)
		return 0;
	memcpy(uniq, ids, n * sizeof *uniq);
	qsort(uniq, n, sizeof *uniq, cmp_i64);
	size_t m = 1;
	for (size_t i = 1; i < n; i++)
		if (uniq[i] != uniq[m - 1])
			uniq[m++] = uniq[i];
	for (size_t i = 0; i < n; i++) { /* binary search: uniq[lo] == ids[i] */
		size_t lo = 0, hi = m;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (uniq[mid] <= ids[i])
				lo = mid;
			else
				hi = mid;
		}
		pos[i] = (int64_t)lo;
	}
	return m;
}

void tr_embed_backward(const float *dout, int ld, const int64_t *pos, int rows, int k, int dim,
                       size_t nunique, float *grad)
{
	const float scale = 1.0f / (float)k;
	memset(grad, 0, nunique * (size_t)dim * sizeof *grad);
	for (int r = 0; r < rows; r++) {
		const float *d = dout + (size_t)r * ld;
		for (int i = 0; i < k; i++) {
			float *g = grad + (size_t)pos[(size_t)r * k + i] * dim;
			for (int j = 0; j < dim; j++)
				g[j] += d[j] * scale;
		}
	}
}

void tr_embed_scatter_grad(const tr_embed_table *t, const int64_t *uniq, size_t nunique,
                           const float *grad, float *dense)
{
	for (size_t u = 0; u < nunique; u++) {
		float *d = dense + t->offset + (size_t)uniq[u] * t->dim;
		const float *g = grad + u * (size_t)t->dim;
		for (int j = 0; j < t->dim; j++)
			d[j] += g[j];
	}
}

int tr_embed_update(tr_optim *o, float *params, const tr_embed_table *t, const int64_t *uniq,
                    size_t nunique, const float *grad)
{
	return tr_optim_update_rows(o, params, t->offset, (size_t)t->dim, uniq, nunique, grad);
}

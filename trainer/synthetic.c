/*
 * synthetic.c — the in-memory batches of --synthetic (synthetic.h).
 */
#include "config.h"
#include "synthetic.h"

#include "rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Batches in the pool: larger than a core's caches together, so a step
 * does not find its input there any more than it would a loader's. */
enum { POOL = 16 };

int tr_synthetic_init(tr_synthetic *s, tr_math *m, int inputs, int classes, int batch,
                      uint64_t seed, int rank)
{
	memset(s, 0, sizeof *s);
	s->math = m;
	s->inputs = inputs;
	s->classes = classes;
	s->batch = batch;
	s->nbatches = POOL;
	size_t rows = (size_t)POOL * batch, nx = rows * (size_t)inputs;
	float *proto = malloc((size_t)classes * inputs * sizeof *proto);
	float *x = malloc(nx * sizeof *x);
	int64_t *y = malloc(rows * sizeof *y);
	s->x = tr_math_alloc(m, nx);
	s->y = tr_math_alloc_bytes(m, rows * sizeof *y);
	int rc = -ENOMEM;
	if (proto && x && y && s->x && s->y) {
		rio__rng r;
		rio__rng_seed(&r, seed, 0, 0x73796e /* "syn" */, 0);
		for (size_t i = 0; i < (size_t)classes * inputs; i++)
			proto[i] = rio__rng_float(&r);
		rio__rng_seed(&r, seed, (uint64_t)rank, 0x73796e, 1);
		for (size_t i = 0; i < rows; i++) {
			int k = (int)(rio__rng_next(&r) % (uint64_t)classes);
			y[i] = k;
			const float *p = proto + (size_t)k * inputs;
			float *row = x + i * inputs;
			for (int j = 0; j < inputs; j++)
				row[j] = 0.5f * p[j] + 0.5f * rio__rng_float(&r);
		}
		/* labels are int64: moved as twice as many floats, bit for bit */
		rc = tr_math_from_host(m, s->x, x, nx);
		if (rc == 0)
			rc = tr_math_from_host(m, (float *)s->y, (const float *)y, rows * 2);
	}
	free(proto);
	free(x);
	free(y);
	if (rc < 0)
		tr_synthetic_free(s);
	return rc;
}

void tr_synthetic_free(tr_synthetic *s)
{
	if (!s->math)
		return;
	tr_math_free(s->math, s->x);
	tr_math_free(s->math, s->y);
	memset(s, 0, sizeof *s);
}

void tr_synthetic_batch(const tr_synthetic *s, uint64_t step, tr_input *in)
{
	size_t i = (size_t)(step % (uint64_t)s->nbatches);
	memset(in, 0, sizeof *in);
	in->nparts = 1;
	in->part[0] = s->x + i * (size_t)s->batch * s->inputs;
	in->width[0] = s->inputs;
	in->labels = s->y + i * (size_t)s->batch;
	in->rows = s->batch;
}

/*
 * test_embed.c — the embedding tables of trainer/embed.h: the mean-pooled
 * lookup against a naive loop, the unique ids and their positions, the
 * sparse row gradients against finite differences and bit for bit from run
 * to run, bad ids reported by record, and the lazy sparse update against
 * the dense optimizer on the rows seen (the others left alone).
 */
#include "testutil.h"

#include "../trainer/backend.h"
#include "../trainer/embed.h"
#include "../trainer/optim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float frand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (float)(*s >> 40) / 16777216.0f * 2.0f - 1.0f;
}

/* A small table inside a larger buffer (offset 5), ids with repeats. */
enum { VOCAB = 11, DIM = 3, K = 4, ROWS = 5, LD = 7, OFF = 5, NPAR = OFF + VOCAB * DIM + 2 };

static const tr_embed_table table = {.feature = "cat", .vocab = VOCAB, .dim = DIM, .k = K,
                                     .offset = OFF};
static const int64_t ids[ROWS * K] = {
	3, 3, 7, 0,  /* a repeat within a record */
	10, 2, 7, 3, /* ids shared with record 0 */
	5, 5, 5, 5,  /* one id k times           */
	0, 10, 9, 1,
	2, 7, 3, 6,
};

static void fill(float *p, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	for (size_t i = 0; i < n; i++)
		p[i] = frand(&s);
}

static void test_forward_naive(void)
{
	float params[NPAR], out[ROWS * LD];
	fill(params, NPAR, 0x9e3779b97f4a7c15ull);
	for (int i = 0; i < ROWS * LD; i++)
		out[i] = -99.0f;
	int bad = -7;
	CU_ASSERT_EQUAL(tr_embed_forward(&table, params, ids, ROWS, out + 2, LD, &bad), 0);
	CU_ASSERT_EQUAL(bad, -7); /* left alone on success */
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < LD; c++) {
			float got = out[r * LD + c];
			if (c < 2 || c >= 2 + DIM) { /* columns outside the block untouched */
				CU_ASSERT_EQUAL(got, -99.0f);
				continue;
			}
			double want = 0;
			for (int i = 0; i < K; i++)
				want += params[OFF + ids[r * K + i] * DIM + (c - 2)];
			CU_ASSERT_DOUBLE_EQUAL(got, want / K, 1e-6);
		}
	/* one id per record: the row itself, exactly */
	tr_embed_table one = table;
	one.k = 1;
	float o1[ROWS * DIM];
	CU_ASSERT_EQUAL(tr_embed_forward(&one, params, ids, ROWS, o1, DIM, NULL), 0);
	for (int r = 0; r < ROWS; r++)
		CU_ASSERT(memcmp(o1 + r * DIM, params + OFF + ids[r] * DIM, DIM * sizeof(float)) == 0);
}

static void test_unique(void)
{
	int64_t uniq[ROWS * K], pos[ROWS * K];
	size_t n = tr_embed_unique(ids, ROWS * K, uniq, pos);
	static const int64_t want[] = {0, 1, 2, 3, 5, 6, 7, 9, 10};
	CU_ASSERT_EQUAL_FATAL(n, sizeof want / sizeof *want);
	CU_ASSERT(memcmp(uniq, want, sizeof want) == 0);
	for (int i = 0; i < ROWS * K; i++) {
		CU_ASSERT(pos[i] >= 0 && (size_t)pos[i] < n);
		CU_ASSERT_EQUAL(uniq[pos[i]], ids[i]);
	}
	/* nothing, one, all the same, negative and huge ids (unique does not check) */
	CU_ASSERT_EQUAL(tr_embed_unique(ids, 0, uniq, pos), 0);
	int64_t same[4] = {42, 42, 42, 42};
	CU_ASSERT_EQUAL(tr_embed_unique(same, 4, uniq, pos), 1);
	CU_ASSERT_EQUAL(uniq[0], 42);
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(pos[i], 0);
	int64_t wide[5] = {INT64_MAX, -3, 0, INT64_MIN, -3};
	CU_ASSERT_EQUAL(tr_embed_unique(wide, 5, uniq, pos), 4);
	CU_ASSERT_EQUAL(uniq[0], INT64_MIN);
	CU_ASSERT_EQUAL(uniq[1], -3);
	CU_ASSERT_EQUAL(uniq[3], INT64_MAX);
	for (int i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(uniq[pos[i]], wide[i]);
}

/* loss = sum over the pooled block of w * out + out^2 / 2, so that
 * d(loss)/d(out) = w + out (not constant: the check sees the pooling twice). */
static double loss_of(const float *params, const float *w)
{
	float out[ROWS * LD];
	CU_ASSERT_FATAL(tr_embed_forward(&table, params, ids, ROWS, out, LD, NULL) == 0);
	double l = 0;
	for (int r = 0; r < ROWS; r++)
		for (int j = 0; j < DIM; j++) {
			double o = out[r * LD + j];
			l += w[r * DIM + j] * o + 0.5 * o * o;
		}
	return l;
}

static void test_backward_finite_differences(void)
{
	float params[NPAR], w[ROWS * DIM], out[ROWS * LD], dout[ROWS * LD];
	fill(params, NPAR, 77);
	fill(w, ROWS * DIM, 78);
	int64_t uniq[ROWS * K], pos[ROWS * K];
	size_t n = tr_embed_unique(ids, ROWS * K, uniq, pos);
	CU_ASSERT_FATAL(tr_embed_forward(&table, params, ids, ROWS, out, LD, NULL) == 0);
	for (int i = 0; i < ROWS * LD; i++)
		dout[i] = 1e30f; /* the columns past dim are never read */
	for (int r = 0; r < ROWS; r++)
		for (int j = 0; j < DIM; j++)
			dout[r * LD + j] = w[r * DIM + j] + out[r * LD + j];
	float grad[ROWS * K * DIM];
	tr_embed_backward(dout, LD, pos, ROWS, K, DIM, n, grad);
	const float h = 1e-2f;
	double worst = 0, norm = 0;
	for (int64_t id = 0; id < VOCAB; id++) {
		int64_t u = -1;
		for (size_t i = 0; i < n; i++)
			if (uniq[i] == id)
				u = (int64_t)i;
		for (int j = 0; j < DIM; j++) {
			float *p = &params[OFF + id * DIM + j], keep = *p;
			*p = keep + h;
			double up = loss_of(params, w);
			*p = keep - h;
			double down = loss_of(params, w);
			*p = keep;
			double numeric = (up - down) / (2.0 * h);
			double analytic = u < 0 ? 0.0 : grad[u * DIM + j];
			double err = fabs(numeric - analytic) / (1e-2 + fabs(numeric) + fabs(analytic));
			if (u < 0)
				CU_ASSERT(fabs(numeric) < 1e-4); /* ids not in the batch: no gradient */
			if (err > worst)
				worst = err;
			norm += fabs(analytic);
		}
	}
	CU_ASSERT(worst < 1e-3);
	CU_ASSERT(norm > 0.1);
}

/* Many repeats in a larger batch: the same bits from run to run, and a
 * sum that does not depend on where the previous contents of grad were. */
static void test_backward_deterministic(void)
{
	enum { R = 300, KK = 3, D = 5, V = 17 };
	static int64_t big[R * KK], uniq[R * KK], pos[R * KK];
	static float dout[R * D], g1[R * KK * D], g2[R * KK * D];
	uint64_t s = 12345;
	for (int i = 0; i < R * KK; i++)
		big[i] = (int64_t)((frand(&s) + 1.0f) * 0.5f * V) % V;
	fill(dout, R * D, 99);
	size_t n = tr_embed_unique(big, R * KK, uniq, pos);
	CU_ASSERT_EQUAL(n, (size_t)V);
	memset(g1, 0x7f, sizeof g1); /* stale contents are overwritten */
	tr_embed_backward(dout, D, pos, R, KK, D, n, g1);
	tr_embed_backward(dout, D, pos, R, KK, D, n, g2);
	CU_ASSERT(memcmp(g1, g2, n * D * sizeof(float)) == 0);
	/* and within rounding of the sum in double */
	for (size_t u = 0; u < n; u++)
		for (int j = 0; j < D; j++) {
			double want = 0;
			for (int i = 0; i < R * KK; i++)
				if (big[i] == uniq[u])
					want += dout[(i / KK) * D + j] / (double)KK;
			CU_ASSERT_DOUBLE_EQUAL(g1[u * D + j], want, 1e-4);
		}
}

static void test_bad_id(void)
{
	float params[NPAR], out[ROWS * LD];
	fill(params, NPAR, 5);
	int64_t bad_ids[ROWS * K];
	memcpy(bad_ids, ids, sizeof bad_ids);
	bad_ids[3 * K + 2] = VOCAB; /* one past the table, record 3 */
	bad_ids[4 * K + 0] = -1;
	for (int i = 0; i < ROWS * LD; i++)
		out[i] = 7.0f;
	int row = -1;
	CU_ASSERT_EQUAL(tr_embed_forward(&table, params, bad_ids, ROWS, out, LD, &row), -ERANGE);
	CU_ASSERT_EQUAL(row, 3); /* the first record holding one */
	for (int i = 0; i < ROWS * LD; i++)
		CU_ASSERT_EQUAL(out[i], 7.0f);
	CU_ASSERT_EQUAL(tr_embed_check(bad_ids, 3, K, VOCAB), -1); /* records 0..2 are good */
	CU_ASSERT_EQUAL(tr_embed_check(bad_ids + 4 * K, 1, K, VOCAB), 0);
	CU_ASSERT_EQUAL(tr_embed_check(ids, ROWS, K, VOCAB), -1);
	CU_ASSERT_EQUAL(tr_embed_check(ids, ROWS, K, 10), 1); /* id 10 first in record 1 */
}

/* The sparse update of the rows seen is the dense optimizer's update of
 * those rows, bit for bit, over several steps (SGD with momentum and weight
 * decay, and Adam); every other float of the buffer keeps its value, where
 * the dense update would have decayed the table's unseen rows. */
static void test_sparse_update(void)
{
	tr_math *m = NULL;
	char err[256];
	CU_ASSERT_FATAL(tr_math_open(&m, TR_DEVICE_CPU, 0, 1, err, sizeof err) == 0);
	for (int kind = 0; kind < 3; kind++) {
		tr_optim_config c = {.kind = kind == 0 ? TR_OPT_SGD : kind == 1 ? TR_OPT_ADAM : TR_OPT_LARS,
		                     .lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f,
		                     .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .scale = 1,
		                     .trust = 0.001f};
		tr_optim sparse, dense;
		/* the optimizers' state, lent as a run's parameter store lends it */
		static float state[2][2][NPAR];
		memset(state, 0, sizeof state);
		CU_ASSERT_FATAL(tr_optim_init(&sparse, m, NPAR, &c, state[0][0], state[0][1]) == 0);
		CU_ASSERT_FATAL(tr_optim_init(&dense, m, NPAR, &c, state[1][0], state[1][1]) == 0);
		float ps[NPAR], pd[NPAR], start[NPAR], dg[NPAR], dout[ROWS * DIM], grad[ROWS * K * DIM];
		fill(start, NPAR, 31337);
		memcpy(ps, start, sizeof ps);
		memcpy(pd, start, sizeof pd);
		int64_t uniq[ROWS * K], pos[ROWS * K];
		size_t n = tr_embed_unique(ids, ROWS * K, uniq, pos);
		for (int step = 0; step < 3; step++) {
			fill(dout, ROWS * DIM, 1000 + step);
			tr_embed_backward(dout, DIM, pos, ROWS, K, DIM, n, grad);
			tr_optim_begin(&sparse, 0.5f, (uint64_t)step);
			int rc = tr_embed_update(&sparse, ps, &table, uniq, n, grad);
			if (kind == 2) {
				CU_ASSERT_EQUAL(rc, -ENOTSUP);
				break;
			}
			CU_ASSERT_EQUAL(rc, 0);
			memset(dg, 0, sizeof dg);
			tr_embed_scatter_grad(&table, uniq, n, grad, dg);
			tr_optim_step(&dense, pd, dg, 0.5f, (uint64_t)step);
		}
		if (kind == 2) {
			CU_ASSERT(memcmp(ps, start, sizeof ps) == 0);
		} else {
			int seen = 0, kept = 0, decayed = 0;
			for (int i = 0; i < NPAR; i++) {
				int64_t id = i >= OFF && i < OFF + VOCAB * DIM ? (i - OFF) / DIM : -1;
				int in_batch = 0;
				for (size_t u = 0; u < n && id >= 0; u++)
					in_batch |= uniq[u] == id;
				if (in_batch) {
					seen += ps[i] == pd[i] && ps[i] != start[i] &&
					        sparse.state1[i] == dense.state1[i] &&
					        (kind == 0 || sparse.state2[i] == dense.state2[i]);
				} else {
					kept += ps[i] == start[i] && sparse.state1[i] == 0.0f;
					decayed += pd[i] != start[i]; /* the dense step's weight decay */
				}
			}
			CU_ASSERT_EQUAL(seen, (int)n * DIM);
			CU_ASSERT_EQUAL(kept, NPAR - (int)n * DIM);
			CU_ASSERT(decayed > 0);
		}
	}
	tr_math_close(m);
}

static const tu_test embed_tests[] = {
	{"forward: mean pooling against a naive loop", test_forward_naive},
	{"unique ids, sorted, with each occurrence's position", test_unique},
	{"backward against finite differences", test_backward_finite_differences},
	{"backward: same bits every run", test_backward_deterministic},
	{"an id outside the table: the first record holding one", test_bad_id},
	{"lazy sparse update: the dense one on the rows seen", test_sparse_update},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"embed", embed_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

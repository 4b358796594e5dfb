/*
 * test_train.c — the trainer's MPI-free parts on the CPU backend: the MLP's
 * gradients against finite differences, the layout that lets buckets start
 * during backward, the input's gradient (for embeddings), the optimizers'
 * steps against values worked out by hand, the learning-rate schedule,
 * checkpoints (round trip, damage refused, a failed write leaving the
 * previous checkpoint whole, older versions read, the clock beside them),
 * the memory limit read from a fake /proc and cgroup tree, denormals
 * flushed to zero in every thread that computes, and the resume plan
 * (what a resume keeps and refuses, without MPI).
 */
#include "testutil.h"

#include "../trainer/backend.h"
#include "../trainer/checkpoint.h"
#include "../trainer/memory.h"
#include "../trainer/mlp.h"
#include "../trainer/optim.h"
#include "../trainer/resume.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static tr_math *cpu(void)
{
	tr_math *m = NULL;
	char err[256];
	CU_ASSERT_FATAL(tr_math_open(&m, TR_DEVICE_CPU, 0, 1, err, sizeof err) == 0);
	return m;
}

/* A model and an optimizer over memory the test allocates, as the
 * parameter store (trainer/store.h) lends it in a run. */
static void mlp_open(tr_mlp *net, tr_math *m, const int *sizes, int nlayers, int rows)
{
	size_t n = tr_mlp_param_count(sizes, nlayers);
	float *params = tr_math_alloc(m, n), *grads = tr_math_alloc(m, n + TR_MLP_EXTRA);
	CU_ASSERT_FATAL(tr_mlp_init(net, m, sizes, nlayers, rows, params, grads) == 0);
}

static void mlp_close(tr_mlp *net)
{
	tr_math *m = net->math;
	float *params = net->params, *grads = net->grads;
	tr_mlp_free(net);
	tr_math_free(m, params);
	tr_math_free(m, grads);
}

static void optim_open(tr_optim *o, tr_math *m, size_t n, const tr_optim_config *c)
{
	float *s1 = tr_math_alloc(m, n);
	float *s2 = tr_optim_states(c->kind) == 2 ? tr_math_alloc(m, n) : NULL;
	CU_ASSERT_FATAL(tr_optim_init(o, m, n, c, s1, s2) == 0);
}

static void optim_close(tr_optim *o)
{
	tr_math_free(o->math, o->state1);
	tr_math_free(o->math, o->state2);
}

static float frand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (float)(*s >> 40) / 16777216.0f * 2.0f - 1.0f;
}

/* ---- gradients -------------------------------------------------------------- */

enum { ROWS = 6 };

typedef struct gc_net {
	tr_math *m;
	tr_mlp net;
	float x1[ROWS * 3], x2[ROWS * 2];
	int64_t y[ROWS];
	tr_input in;
} gc_net;

/* 5 inputs given as two feature blocks (3 + 2), hidden 4 and 3, 3 classes */
static void gc_init(gc_net *g)
{
	static const int sizes[] = {5, 4, 3, 3};
	g->m = cpu();
	mlp_open(&g->net, g->m, sizes, 3, ROWS);
	tr_mlp_init_params(&g->net, 31, g->net.params); /* no ReLU within h of its kink */
	uint64_t s = 88172645463325252ull;
	for (int i = 0; i < ROWS * 3; i++)
		g->x1[i] = frand(&s);
	for (int i = 0; i < ROWS * 2; i++)
		g->x2[i] = frand(&s);
	for (int i = 0; i < ROWS; i++)
		g->y[i] = i % 3;
	g->in = (tr_input){.nparts = 2, .part = {g->x1, g->x2}, .width = {3, 2}, .labels = g->y,
	                   .rows = ROWS};
}

static double loss_of(gc_net *g)
{
	float stats[2] = {0, 0};
	tr_mlp_forward(&g->net, &g->in);
	tr_mlp_loss(&g->net, &g->in, stats, 0);
	return stats[0];
}

typedef struct ready_log {
	size_t ends[64];
	int n;
} ready_log;

static void log_ready(void *ctx, size_t end)
{
	ready_log *r = ctx;
	if (r->n < 64)
		r->ends[r->n++] = end;
}

static void test_gradient_check(void)
{
	gc_net g;
	gc_init(&g);
	float stats[2] = {0, 0};
	tr_mlp_forward(&g.net, &g.in);
	tr_mlp_loss(&g.net, &g.in, stats, 1);
	/* the hidden units are alive, so gradients flow through every layer */
	for (int l = 0; l < 2; l++) {
		int cells = ROWS * g.net.sizes[l + 1], active = 0;
		for (int i = 0; i < cells; i++)
			active += g.net.out[l][i] > 0;
		CU_ASSERT(3 * active >= cells);
	}
	ready_log log = {.n = 0};
	tr_mlp_backward(&g.net, &g.in, log_ready, &log);
	size_t n = g.net.nparams;
	CU_ASSERT_EQUAL(n, (size_t)(5 * 4 + 4 + 4 * 3 + 3 + 3 * 3 + 3));
	double worst = 0;
	const float h = 5e-3f;
	for (size_t i = 0; i < n; i++) {
		float keep = g.net.params[i];
		g.net.params[i] = keep + h;
		double up = loss_of(&g);
		g.net.params[i] = keep - h;
		double down = loss_of(&g);
		g.net.params[i] = keep;
		double numeric = (up - down) / (2.0 * h), analytic = g.net.grads[i];
		double err = fabs(numeric - analytic) / (1e-2 + fabs(numeric) + fabs(analytic));
		if (err > worst)
			worst = err;
		if (err > 2e-2)
			printf("\n  param %zu: analytic %.6f numeric %.6f", i, analytic, numeric);
	}
	CU_ASSERT(worst < 2e-2);
	/* the gradients are not all zero (the check would pass vacuously) */
	double norm = 0;
	for (size_t i = 0; i < n; i++)
		norm += fabs(g.net.grads[i]);
	CU_ASSERT(norm > 0.1);
	/* backward reported the layers last to first, each a longer prefix */
	CU_ASSERT_EQUAL(log.n, 3);
	CU_ASSERT_EQUAL(log.ends[0], (size_t)(3 * 3 + 3));
	CU_ASSERT_EQUAL(log.ends[1], (size_t)(3 * 3 + 3 + 4 * 3 + 3));
	CU_ASSERT_EQUAL(log.ends[2], n);
	mlp_close(&g.net);
	tr_math_close(g.m);
}

/* The input's gradient (tr_mlp_want_dinput) over columns 1..3, which span
 * both feature blocks, against finite differences of the inputs; and the
 * parameters' gradients the same bits with it as without. */
static void test_input_gradient_check(void)
{
	gc_net g;
	gc_init(&g);
	float stats[2] = {0, 0};
	tr_mlp_forward(&g.net, &g.in);
	tr_mlp_loss(&g.net, &g.in, stats, 1);
	tr_mlp_backward(&g.net, &g.in, NULL, NULL);
	size_t n = g.net.nparams;
	float *plain = malloc(n * sizeof *plain);
	CU_ASSERT_FATAL(plain != NULL);
	memcpy(plain, g.net.grads, n * sizeof *plain);
	CU_ASSERT_EQUAL(tr_mlp_want_dinput(&g.net, 3, 3), -EINVAL); /* past the 5 inputs */
	CU_ASSERT_EQUAL(tr_mlp_want_dinput(&g.net, -1, 2), -EINVAL);
	CU_ASSERT_PTR_NULL(g.net.dinput);
	CU_ASSERT_FATAL(tr_mlp_want_dinput(&g.net, 1, 3) == 0);
	CU_ASSERT_EQUAL(tr_mlp_want_dinput(&g.net, 1, 3), -EINVAL); /* once */
	tr_mlp_forward(&g.net, &g.in);
	tr_mlp_loss(&g.net, &g.in, stats, 1);
	tr_mlp_backward(&g.net, &g.in, NULL, NULL);
	CU_ASSERT(memcmp(plain, g.net.grads, n * sizeof *plain) == 0);
	free(plain);
	double worst = 0, norm = 0;
	const float h = 5e-3f;
	for (int r = 0; r < ROWS; r++)
		for (int c = 1; c < 4; c++) {
			float *x = c < 3 ? &g.x1[r * 3 + c] : &g.x2[r * 2 + (c - 3)], keep = *x;
			*x = keep + h;
			double up = loss_of(&g);
			*x = keep - h;
			double down = loss_of(&g);
			*x = keep;
			double numeric = (up - down) / (2.0 * h), analytic = g.net.dinput[r * 3 + (c - 1)];
			double err = fabs(numeric - analytic) / (1e-2 + fabs(numeric) + fabs(analytic));
			if (err > worst)
				worst = err;
			norm += fabs(analytic);
		}
	CU_ASSERT(worst < 2e-2);
	CU_ASSERT(norm > 0.1);
	mlp_close(&g.net);
	CU_ASSERT_PTR_NULL(g.net.dinput);
	tr_math_close(g.m);
}

/* A pipeline stage's sum over microbatches (net->wsum): the first
 * backward writes the weights' gradients there, a later one's GEMMs add
 * into it (beta 1); the biases' gradients go to grads as ever, and the
 * weights' part of grads is left alone. */
static void test_weight_grads_summed(void)
{
	gc_net g;
	gc_init(&g);
	size_t n = g.net.nparams;
	float *one = calloc(n, sizeof *one), *two = calloc(n, sizeof *two);
	float *sum = calloc(n, sizeof *sum), *mark = calloc(n, sizeof *mark);
	CU_ASSERT_FATAL(one && two && sum && mark);
	float stats[2] = {0, 0};
	for (int pass = 0; pass < 2; pass++) { /* plain: each microbatch's own */
		if (pass) /* the second microbatch: other labels */
			for (int i = 0; i < ROWS; i++)
				g.y[i] = (i + 1) % 3;
		tr_mlp_forward(&g.net, &g.in);
		tr_mlp_loss(&g.net, &g.in, stats, 1);
		tr_mlp_backward(&g.net, &g.in, NULL, NULL);
		memcpy(pass ? two : one, g.net.grads, n * sizeof *one);
	}
	for (size_t i = 0; i < n; i++)
		sum[i] = 1e3f; /* what the first must overwrite */
	g.net.wsum = sum;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ROWS; i++)
			g.y[i] = (i + pass) % 3;
		for (size_t i = 0; i < n; i++)
			g.net.grads[i] = mark[i] = (float)i; /* grads' weights: untouched */
		g.net.wsum_first = pass == 0;
		tr_mlp_forward(&g.net, &g.in);
		tr_mlp_loss(&g.net, &g.in, stats, 1);
		tr_mlp_backward(&g.net, &g.in, NULL, NULL);
		double worst = 0;
		for (int l = 0; l < g.net.nlayers; l++) {
			size_t w = g.net.w_off[l], b = g.net.b_off[l];
			for (size_t i = w; i < b; i++) {
				double want = pass ? (double)one[i] + two[i] : one[i];
				worst = fmax(worst, fabs(sum[i] - want) / (1e-6 + fabs(want)));
				CU_ASSERT_EQUAL(g.net.grads[i], mark[i]);
			}
			for (int i = 0; i < g.net.sizes[l + 1]; i++) /* the biases': grads */
				CU_ASSERT_EQUAL(g.net.grads[b + i], (pass ? two : one)[b + i]);
		}
		CU_ASSERT(worst < 1e-5);
	}
	free(one);
	free(two);
	free(sum);
	free(mark);
	mlp_close(&g.net);
	tr_math_close(g.m);
}

/* The model and the optimizer compute in memory lent to them (the
 * parameter store's) and refuse to start without it. */
static void test_lent_buffers(void)
{
	static const int sizes[] = {4, 3, 2};
	tr_math *m = cpu();
	tr_mlp net;
	float *grads = tr_math_alloc(m, tr_mlp_param_count(sizes, 2) + TR_MLP_EXTRA);
	CU_ASSERT_EQUAL(tr_mlp_init(&net, m, sizes, 2, 4, NULL, grads), -EINVAL);
	CU_ASSERT_PTR_NULL(net.math);
	tr_math_free(m, grads);
	mlp_open(&net, m, sizes, 2, 4);
	CU_ASSERT_PTR_NOT_NULL(net.out[0]); /* its activations are its own */
	mlp_close(&net); /* frees the lent buffers once: ASan would see a second free */
	tr_optim o;
	float s1[4];
	tr_optim_config adam = {.kind = TR_OPT_ADAM, .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
	                        .eps = 1e-8f, .scale = 1};
	CU_ASSERT_EQUAL(tr_optim_init(&o, m, 4, &adam, s1, NULL), -EINVAL); /* Adam: m and v */
	CU_ASSERT_EQUAL(tr_optim_states(TR_OPT_ADAM), 2);
	CU_ASSERT_EQUAL(tr_optim_states(TR_OPT_SGD), 1);
	CU_ASSERT_EQUAL(tr_optim_states(TR_OPT_LARS), 1);
	tr_math_close(m);
}

static void test_loss_known_values(void)
{
	/* logits (0, ln 3) against labels 0 and 1: -log(1/4) and -log(3/4) */
	tr_math *m = cpu();
	float logits[4] = {0.0f, logf(3.0f), 0.0f, logf(3.0f)}, d[4], db[2], stats[2] = {0, 0};
	int64_t y[2] = {0, 1};
	tr_softmax_xent(m, logits, y, 2, 2, d, db, stats);
	CU_ASSERT_DOUBLE_EQUAL(stats[0], log(4.0) + log(4.0 / 3.0), 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(stats[1], 1.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(d[0], 0.25 - 1, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(d[1], 0.75, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(d[2], 0.25, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(d[3], 0.75 - 1, 1e-6);
	/* the bias gradient: the rows' sum */
	CU_ASSERT_DOUBLE_EQUAL(db[0], -0.5, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(db[1], 0.5, 1e-6);
	tr_math_close(m);
}

/* ---- the fused elementwise passes against the unfused formulas ------------ */

/* Sizes that leave a remainder for every vector width (16, 8, 4). */
enum { FR = 37, FC = 67, FK = 13 };

/* ReLU mask and bias gradient in one pass, against the mask applied and
 * the columns summed separately (in double): the mask exactly, the sums
 * within float rounding of 37 terms. */
static void test_relu_bias_backward(void)
{
	tr_math *m = cpu();
	static float dz[FR * FC], a[FR * FC], db[FC];
	float want[FR * FC];
	uint64_t s = 0x2545f4914f6cdd1dull;
	for (int i = 0; i < FR * FC; i++) {
		dz[i] = frand(&s);
		a[i] = i % 5 == 0 ? 0.0f : frand(&s); /* exactly 0 cuts the gradient too */
		want[i] = a[i] > 0.0f ? dz[i] : 0.0f;
	}
	for (int c = 0; c < FC; c++)
		db[c] = 99.0f; /* overwritten, not added to */
	tr_relu_bias_backward(m, dz, a, FR, FC, db);
	CU_ASSERT(memcmp(dz, want, sizeof want) == 0);
	double worst = 0;
	int cut = 0;
	for (int c = 0; c < FC; c++) {
		double sum = 0;
		for (int r = 0; r < FR; r++)
			sum += want[r * FC + c];
		worst = fmax(worst, fabs(sum - db[c]));
	}
	for (int i = 0; i < FR * FC; i++)
		cut += want[i] == 0.0f;
	CU_ASSERT(worst < 1e-5);
	CU_ASSERT(cut > FR * FC / 3 && cut < FR * FC * 2 / 3); /* the mask did something */
	tr_math_close(m);
}

/* Softmax, cross-entropy, its gradient and the bias gradient in one pass,
 * against each computed on its own in double; in place too. */
static void test_softmax_xent_fused(void)
{
	tr_math *m = cpu();
	static float z[FR * FK], d[FR * FK], inplace[FR * FK], db[FK];
	int64_t y[FR];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < FR * FK; i++)
		z[i] = 6.0f * frand(&s);
	for (int r = 0; r < FR; r++)
		y[r] = (r * 7) % FK;
	double loss = 0, grad[FR * FK], bias[FK] = {0};
	int correct = 0;
	for (int r = 0; r < FR; r++) {
		const float *row = z + r * FK;
		int best = 0;
		double max = row[0], sum = 0;
		for (int k = 1; k < FK; k++)
			if (row[k] > max)
				max = row[k], best = k;
		for (int k = 0; k < FK; k++)
			sum += exp(row[k] - max);
		loss += log(sum) + max - row[y[r]];
		correct += best == y[r];
		for (int k = 0; k < FK; k++) {
			grad[r * FK + k] = exp(row[k] - max) / sum - (k == y[r]);
			bias[k] += grad[r * FK + k];
		}
	}
	float stats[2] = {0, 0}, again[2] = {0, 0};
	for (int k = 0; k < FK; k++)
		db[k] = 99.0f;
	tr_softmax_xent(m, z, y, FR, FK, d, db, stats);
	CU_ASSERT_DOUBLE_EQUAL(stats[0], loss, 1e-4);
	CU_ASSERT_DOUBLE_EQUAL(stats[1], correct, 0);
	double worst = 0, worst_b = 0;
	for (int i = 0; i < FR * FK; i++)
		worst = fmax(worst, fabs(grad[i] - d[i]));
	for (int k = 0; k < FK; k++)
		worst_b = fmax(worst_b, fabs(bias[k] - db[k]));
	CU_ASSERT(worst < 1e-6);
	CU_ASSERT(worst_b < 1e-5);
	/* in place over the logits: the same gradient, bit for bit */
	memcpy(inplace, z, sizeof z);
	tr_softmax_xent(m, inplace, y, FR, FK, inplace, NULL, again);
	CU_ASSERT(memcmp(inplace, d, sizeof d) == 0);
	CU_ASSERT_EQUAL(again[0], stats[0]);
	tr_math_close(m);
}

static void test_init_seeded(void)
{
	static const int sizes[] = {100, 10, 2};
	tr_mlp net; /* the layout alone is enough */
	CU_ASSERT_FATAL(tr_mlp_layout(&net, sizes, 2) == 0);
	CU_ASSERT_EQUAL(net.nparams, tr_mlp_param_count(sizes, 2));
	CU_ASSERT_PTR_NULL(net.params);
	float *a = calloc(net.nparams, sizeof *a), *b = calloc(net.nparams, sizeof *b);
	tr_mlp_init_params(&net, 5, a);
	tr_mlp_init_params(&net, 5, b);
	CU_ASSERT(memcmp(a, b, net.nparams * sizeof *a) == 0);
	tr_mlp_init_params(&net, 6, b);
	CU_ASSERT(memcmp(a, b, net.nparams * sizeof *a) != 0);
	/* PyTorch's bound: 1/sqrt(fan_in) = 0.1 for the first layer */
	float max = 0;
	for (size_t i = 0; i < 1000; i++)
		max = fmaxf(max, fabsf(a[net.w_off[0] + i]));
	CU_ASSERT(max <= 0.1f && max > 0.09f);
	free(a);
	free(b);
}

/* ---- optimizers and schedule ------------------------------------------------ */

static void test_sgd_known_values(void)
{
	tr_math *m = cpu();
	tr_optim o;
	tr_optim_config c = {.kind = TR_OPT_SGD, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.1f,
	                     .scale = 1};
	optim_open(&o, m, 2, &c);
	float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, 1.0f};
	tr_optim_step(&o, p, g, 0.5f, 0);
	CU_ASSERT_DOUBLE_EQUAL(p[0], 0.965, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(p[1], -2.03, 1e-6);
	tr_optim_step(&o, p, g, 0.5f, 1);
	CU_ASSERT_DOUBLE_EQUAL(p[0], 0.89885, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(p[1], -2.0867, 1e-6);
	CU_ASSERT_EQUAL(o.t, 2);
	optim_close(&o);
	tr_math_close(m);
}

static void test_adam_known_values(void)
{
	tr_math *m = cpu();
	tr_optim o;
	tr_optim_config c = {.kind = TR_OPT_ADAM, .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
	                     .eps = 1e-8f, .scale = 1};
	optim_open(&o, m, 1, &c);
	float p = 1.0f, g = 2.0f;
	tr_optim_step(&o, &p, &g, 1.0f, 0);
	CU_ASSERT_DOUBLE_EQUAL(p, 0.99, 1e-6);
	g = -1.0f;
	tr_optim_step(&o, &p, &g, 1.0f, 1);
	CU_ASSERT_DOUBLE_EQUAL(p, 0.98733663, 2e-6);
	CU_ASSERT_EQUAL(tr_optim_state_count(&o), 2);
	optim_close(&o);
	tr_math_close(m);
}

/* An update in buckets, in any order, is the whole update bit for bit
 * (what lets each bucket be updated as soon as its allreduce is in), for
 * both optimizers and over several steps. */
static void test_update_in_buckets(void)
{
	enum { N = 1000 };
	static const size_t cut[] = {0, 256, 300, 701, 999, N}; /* uneven buckets */
	static const int order[] = {3, 0, 4, 2, 1};             /* as they came in */
	tr_math *m = cpu();
	for (int kind = 0; kind < 2; kind++) {
		tr_optim a, b;
		tr_optim_config c = {.kind = kind ? TR_OPT_ADAM : TR_OPT_SGD, .lr = 0.01f,
		                     .momentum = 0.9f, .weight_decay = 0.01f, .beta1 = 0.9f,
		                     .beta2 = 0.999f, .eps = 1e-8f, .scale = 1};
		optim_open(&a, m, N, &c);
		optim_open(&b, m, N, &c);
		static float pa[N], pb[N], g[N];
		uint64_t s = 0x853c49e6748fea9bull;
		for (int i = 0; i < N; i++)
			pa[i] = pb[i] = frand(&s);
		for (int step = 0; step < 3; step++) {
			for (int i = 0; i < N; i++)
				g[i] = 40.0f * frand(&s);
			tr_optim_step(&a, pa, g, 1.0f / 32, (uint64_t)step);
			tr_optim_begin(&b, 1.0f / 32, (uint64_t)step);
			for (int k = 0; k < 5; k++)
				tr_optim_update(&b, pb, g, cut[order[k]], cut[order[k] + 1]);
		}
		CU_ASSERT(memcmp(pa, pb, sizeof pa) == 0);
		CU_ASSERT(memcmp(a.state1, b.state1, N * sizeof(float)) == 0);
		if (kind)
			CU_ASSERT(memcmp(a.state2, b.state2, N * sizeof(float)) == 0);
		CU_ASSERT_EQUAL(a.t, b.t);
		CU_ASSERT_EQUAL(tr_optim_bucketwise(&b), 1);
		optim_close(&a);
		optim_close(&b);
	}
	tr_math_close(m);
}

/* --precision bf16: every optimizer's update, bucket by bucket in any
 * order (SGD, Adam) or whole (LARS, over its blocks), writes the updated
 * parameters rounded to bf16 (tr_optim_write16), and the same parameters
 * as without it. */
static void test_update_writes_bf16(void)
{
	enum { N = 1000 };
	static const size_t cut[] = {0, 256, 300, 701, 999, N};
	static const int order[] = {3, 0, 4, 2, 1};
	static const tr_param_block blocks[] = {{0, 700, 1}, {700, 300, 0}};
	tr_math *m = cpu();
	for (int kind = 0; kind < 3; kind++) {
		tr_optim a, b;
		tr_optim_config c = {.kind = (tr_opt_kind)kind, .lr = 0.01f, .momentum = 0.9f,
		                     .weight_decay = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
		                     .eps = 1e-8f, .scale = 1, .trust = 0.001f};
		optim_open(&a, m, N, &c);
		optim_open(&b, m, N, &c);
		CU_ASSERT_FATAL(tr_optim_set_blocks(&a, blocks, 2) == 0 &&
		                tr_optim_set_blocks(&b, blocks, 2) == 0);
		static float pa[N], pb[N], g[N];
		static tr_bf16 p16[N], want[N];
		memset(p16, 0, sizeof p16);
		tr_optim_write16(&b, p16);
		uint64_t s = 0x2545f4914f6cdd1dull;
		for (int i = 0; i < N; i++)
			pa[i] = pb[i] = frand(&s);
		for (int step = 0; step < 2; step++) {
			for (int i = 0; i < N; i++)
				g[i] = 10.0f * frand(&s);
			tr_optim_step(&a, pa, g, 1.0f / 32, (uint64_t)step);
			tr_optim_begin(&b, 1.0f / 32, (uint64_t)step);
			if (tr_optim_bucketwise(&b))
				for (int k = 0; k < 5; k++)
					tr_optim_update(&b, pb, g, cut[order[k]], cut[order[k] + 1]);
			else
				tr_optim_update(&b, pb, g, 0, N);
		}
		tr_to_bf16(m, want, pb, N);
		CU_ASSERT(memcmp(pa, pb, sizeof pa) == 0);
		CU_ASSERT(memcmp(p16, want, sizeof want) == 0);
		optim_close(&a);
		optim_close(&b);
	}
	tr_math_close(m);
}

/* LARS: W's step scaled by trust * ||W|| / (||g|| + wd ||W||), the bias
 * plain momentum SGD without weight decay (optim_lars.c) */
static void test_lars_known_values(void)
{
	tr_math *m = cpu();
	tr_optim o;
	tr_optim_config c = {.kind = TR_OPT_LARS, .lr = 2.0f, .momentum = 0.9f,
	                     .weight_decay = 0.1f, .trust = 0.01f, .scale = 1};
	optim_open(&o, m, 3, &c);
	tr_param_block b[2] = {{0, 2, 1}, {2, 1, 0}};
	CU_ASSERT_FATAL(tr_optim_set_blocks(&o, b, 2) == 0);
	tr_param_block past_end = {2, 2, 1};
	CU_ASSERT_EQUAL(tr_optim_set_blocks(&o, &past_end, 1), -EINVAL);
	float p[3] = {3.0f, 4.0f, 1.0f}, g[3] = {1.2f, 1.6f, 1.0f}; /* mean: x 0.5 */
	tr_optim_step(&o, p, g, 0.5f, 0);
	/* ||W|| 5, ||g|| 1: local 0.05 / 1.5; v = 2 local (g + 0.1 W) */
	CU_ASSERT_DOUBLE_EQUAL(p[0], 2.94, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(p[1], 3.92, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(p[2], 0.0, 1e-6);
	tr_optim_step(&o, p, g, 0.5f, 1);
	/* ||W|| 4.9: local 0.049 / 1.49 */
	CU_ASSERT_DOUBLE_EQUAL(p[0], 2.8272, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(p[1], 3.7696, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(p[2], -1.9, 1e-5);
	CU_ASSERT_EQUAL(tr_optim_state_count(&o), 1);
	optim_close(&o);
	tr_math_close(m);
}

static void test_lr_schedule(void)
{
	/* Goyal et al.: from lr to k * lr over the warmup, then constant */
	tr_optim_config c = {.lr = 0.1f, .scale = 4, .warmup_steps = 100};
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 0), 0.1, 1e-7);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 50), 0.25, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 100), 0.4, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 5000), 0.4, 1e-6);
	/* cosine: half way through the decay, half the rate; 0 at the end */
	c.cosine = 1;
	c.total_steps = 300;
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 200), 0.2, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&c, 300), 0.0, 1e-7);
	/* no scaling, no warmup */
	tr_optim_config plain = {.lr = 0.05f, .scale = 1};
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&plain, 0), 0.05, 1e-7);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&plain, 999), 0.05, 1e-7);
	/* warmup without scaling (--global-batch, np 1): from 0 to lr */
	tr_optim_config ramp = {.lr = 0.3f, .scale = 1, .warmup_steps = 3};
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&ramp, 0), 0.075, 1e-7);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&ramp, 2), 0.225, 1e-7);
	CU_ASSERT_DOUBLE_EQUAL(tr_optim_lr(&ramp, 3), 0.3, 1e-7);
}

/* ---- checkpoints -------------------------------------------------------------- */

static void ckpt_fill(tr_ckpt *c, float base)
{
	static const int32_t sizes[] = {3, 2, 2};
	memset(c, 0, sizeof *c);
	c->world = 2;
	c->layout[0] = 1; /* written by D1 x P2 x T1 */
	c->layout[1] = 2;
	c->layout[2] = 1;
	c->global_batch = 256;
	c->lr_scale = 2.0f;
	c->seed = 42;
	c->optimizer = TR_OPT_ADAM;
	c->nlayers = 2;
	memcpy(c->sizes, sizes, sizeof sizes);
	c->epoch = 3;
	c->step_in_epoch = 17;
	c->global_step = 1000;
	c->skipped_steps = 2;
	c->optimizer_t = 998;
	c->epoch_loss = 12.5;
	c->epoch_correct = 100;
	c->epoch_count = 128;
	c->nparams = tr_mlp_param_count(c->sizes, 2);
	c->params = malloc(c->nparams * sizeof(float));
	c->state1 = malloc(c->nparams * sizeof(float));
	c->state2 = malloc(c->nparams * sizeof(float));
	for (uint64_t i = 0; i < c->nparams; i++) {
		c->params[i] = base + (float)i;
		c->state1[i] = -(float)i;
		c->state2[i] = (float)i * 0.5f;
	}
	c->nblobs = 2;
	c->blob_size = malloc(2 * sizeof *c->blob_size);
	c->blob = malloc(2 * sizeof *c->blob);
	for (int r = 0; r < 2; r++) {
		c->blob_size[r] = 10 + (uint32_t)r;
		c->blob[r] = malloc(c->blob_size[r]);
		memset(c->blob[r], 'a' + r, c->blob_size[r]);
	}
	/* version 4: the data, the columns, the counters; the clock */
	c->sharding = 1;
	c->nshards = 3;
	c->shard_records = malloc(3 * sizeof *c->shard_records);
	for (int s = 0; s < 3; s++)
		c->shard_records[s] = 100 + (uint64_t)s;
	static const char *const names[] = {"image", "ids", "label"};
	c->ncolumns = 3;
	for (uint32_t i = 0; i < 3; i++) {
		c->columns[i].role = i;
		c->columns[i].length = i == 0 ? 784 : 1;
		snprintf(c->columns[i].name, sizeof c->columns[i].name, "%s", names[i]);
	}
	c->total_samples = 4096;
	c->total_gradients = 2000;
	c->epoch_skipped = 1;
	c->epoch_overflows = 1;
	c->seconds = 12.25;
}

/* ckpt_fill's run made a parameter-server run's (2 servers, 2 workers). */
static void ckpt_make_ps(tr_ckpt *c)
{
	c->strategy = 1;
	c->servers = 2;
	c->server_version = 77;
	c->worker_step_in_epoch = calloc(2, sizeof(uint64_t));
	c->worker_global_step = calloc(2, sizeof(uint64_t));
	c->server = calloc(2, sizeof *c->server);
	for (int i = 0; i < 2; i++) {
		c->worker_step_in_epoch[i] = 17 - (uint64_t)i;
		c->worker_global_step[i] = 1000 - (uint64_t)i;
		c->server[i] = (tr_ckpt_server){.updates = 30 + (uint64_t)i, .gradients = 60,
		                                .dropped = 2, .skipped = 1, .staleness_max = 3,
		                                .staleness_sum = 7.5, .samples = 960,
		                                .total_updates = 500, .total_gradients = 1000,
		                                .total_samples = 16000 + i};
	}
}

static void ckpt_expect_equal(const tr_ckpt *a, const tr_ckpt *b)
{
	CU_ASSERT_EQUAL(a->world, b->world);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(a->layout[i], b->layout[i]);
	CU_ASSERT_EQUAL(a->global_batch, b->global_batch);
	CU_ASSERT_EQUAL(a->lr_scale, b->lr_scale);
	CU_ASSERT_EQUAL(a->seed, b->seed);
	CU_ASSERT_EQUAL(a->optimizer, b->optimizer);
	CU_ASSERT_EQUAL(a->nlayers, b->nlayers);
	CU_ASSERT(memcmp(a->sizes, b->sizes, sizeof(int32_t) * (a->nlayers + 1)) == 0);
	CU_ASSERT_EQUAL(a->epoch, b->epoch);
	CU_ASSERT_EQUAL(a->step_in_epoch, b->step_in_epoch);
	CU_ASSERT_EQUAL(a->global_step, b->global_step);
	CU_ASSERT_EQUAL(a->skipped_steps, b->skipped_steps);
	CU_ASSERT_EQUAL(a->optimizer_t, b->optimizer_t);
	CU_ASSERT_EQUAL(a->epoch_loss, b->epoch_loss);
	CU_ASSERT_EQUAL(a->epoch_count, b->epoch_count);
	CU_ASSERT_EQUAL_FATAL(a->nparams, b->nparams);
	CU_ASSERT(memcmp(a->params, b->params, a->nparams * sizeof(float)) == 0);
	CU_ASSERT(memcmp(a->state1, b->state1, a->nparams * sizeof(float)) == 0);
	CU_ASSERT(memcmp(a->state2, b->state2, a->nparams * sizeof(float)) == 0);
	CU_ASSERT_EQUAL_FATAL(a->nblobs, b->nblobs);
	for (uint32_t r = 0; r < a->nblobs; r++) {
		CU_ASSERT_EQUAL_FATAL(a->blob_size[r], b->blob_size[r]);
		CU_ASSERT(memcmp(a->blob[r], b->blob[r], a->blob_size[r]) == 0);
	}
	CU_ASSERT_EQUAL(a->sharding, b->sharding);
	CU_ASSERT_EQUAL_FATAL(a->nshards, b->nshards);
	if (a->nshards)
		CU_ASSERT(memcmp(a->shard_records, b->shard_records, a->nshards * 8) == 0);
	CU_ASSERT_EQUAL_FATAL(a->ncolumns, b->ncolumns);
	for (uint32_t i = 0; i < a->ncolumns; i++) {
		CU_ASSERT_EQUAL(a->columns[i].role, b->columns[i].role);
		CU_ASSERT_EQUAL(a->columns[i].length, b->columns[i].length);
		CU_ASSERT_STRING_EQUAL(a->columns[i].name, b->columns[i].name);
	}
	CU_ASSERT_EQUAL(a->total_samples, b->total_samples);
	CU_ASSERT_EQUAL(a->total_gradients, b->total_gradients);
	CU_ASSERT_EQUAL(a->epoch_skipped, b->epoch_skipped);
	CU_ASSERT_EQUAL(a->epoch_overflows, b->epoch_overflows);
	CU_ASSERT_EQUAL_FATAL(a->strategy, b->strategy);
	if (a->strategy) {
		CU_ASSERT_EQUAL_FATAL(a->servers, b->servers);
		CU_ASSERT_EQUAL(a->server_version, b->server_version);
		for (uint32_t r = 0; r < a->nblobs; r++) {
			CU_ASSERT_EQUAL(a->worker_step_in_epoch[r], b->worker_step_in_epoch[r]);
			CU_ASSERT_EQUAL(a->worker_global_step[r], b->worker_global_step[r]);
		}
		CU_ASSERT(memcmp(a->server, b->server, a->servers * sizeof *a->server) == 0);
	}
}

static void test_checkpoint_round_trip(void)
{
	const char *dir = tu_path("ckpt-rt");
	char err[512];
	tr_ckpt a, b;
	CU_ASSERT_EQUAL(tr_ckpt_read(dir, &b, err, sizeof err), -ENOENT);
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&b);
	/* a stale temporary file (a crash mid-write) is not read, and the next
	 * write replaces the checkpoint whole, beside it */
	char tmp[1024];
	snprintf(tmp, sizeof tmp, "%s/.checkpoint.a1B2c3.tmp", dir);
	tu_write_file(tmp, "garbage", 7);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&b);
	tr_ckpt_free(&a);
	ckpt_fill(&a, 5.0f);
	a.step_in_epoch = 18;
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	ckpt_expect_equal(&a, &b);
	CU_ASSERT_EQUAL(b.seconds, 12.25);
	/* checkpoint, clock and the stale file: the writes left no temporary */
	CU_ASSERT_EQUAL(tu_count_entries(dir), 3);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
	/* a parameter-server run's: the workers' clocks, the servers' counts */
	ckpt_fill(&a, 2.0f);
	ckpt_make_ps(&a);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
}

/* The training seconds live in DIR/clock, out of the checkpoint's bytes
 * (two runs that did the same work write the same checkpoint): a clock of
 * another checkpoint, a damaged one or none reads as not known. */
static void test_checkpoint_clock(void)
{
	const char *dir = tu_path("ckpt-clock");
	char err[512], cpath[1024], kpath[1024];
	tr_ckpt a, b;
	snprintf(cpath, sizeof cpath, "%s/checkpoint", dir);
	snprintf(kpath, sizeof kpath, "%s/clock", dir);
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	size_t n1, k1;
	uint8_t *first = tu_read_file(cpath, &n1), *clock1 = tu_read_file(kpath, &k1);
	/* other seconds, the same checkpoint bytes */
	a.seconds = 99.5;
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	size_t n2;
	uint8_t *second = tu_read_file(cpath, &n2);
	CU_ASSERT(n1 == n2 && memcmp(first, second, n1) == 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT_EQUAL(b.seconds, 99.5);
	tr_ckpt_free(&b);
	/* the clock of another checkpoint (a crash between the renames) */
	a.step_in_epoch++;
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	tu_write_file(kpath, clock1, k1);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT(isnan(b.seconds));
	CU_ASSERT_EQUAL(b.step_in_epoch, a.step_in_epoch);
	tr_ckpt_free(&b);
	/* damaged, or none: not known either, and the checkpoint still reads */
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	size_t k2;
	uint8_t *clock2 = tu_read_file(kpath, &k2);
	clock2[18] ^= 1;
	tu_write_file(kpath, clock2, k2);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT(isnan(b.seconds));
	tr_ckpt_free(&b);
	CU_ASSERT_FATAL(unlink(kpath) == 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT(isnan(b.seconds));
	tr_ckpt_free(&b);
	/* a clock that is not a regular file is refused before any work */
	CU_ASSERT_FATAL(mkdir(kpath, 0700) == 0);
	CU_ASSERT(tr_ckpt_probe(dir, err, sizeof err) < 0);
	CU_ASSERT(strstr(err, "clock is not a regular file") != NULL);
	rmdir(kpath);
	free(first);
	free(second);
	free(clock1);
	free(clock2);
	tr_ckpt_free(&a);
}

static void test_checkpoint_damage_refused(void)
{
	const char *dir = tu_path("ckpt-damage");
	char err[512], path[1024];
	tr_ckpt a, b;
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	tr_ckpt_free(&a);
	snprintf(path, sizeof path, "%s/checkpoint", dir);
	size_t size;
	uint8_t *bytes = tu_read_file(path, &size);
	CU_ASSERT_FATAL(bytes != NULL && size > 100);
	bytes[size / 2] ^= 0x10; /* one flipped bit in the parameters */
	tu_write_file(path, bytes, size);
	CU_ASSERT_EQUAL(tr_ckpt_read(dir, &b, err, sizeof err), -EBADMSG);
	CU_ASSERT(strstr(err, path) != NULL);
	CU_ASSERT_PTR_NULL(b.params);
	/* cut short */
	bytes[size / 2] ^= 0x10;
	tu_write_file(path, bytes, size - 9);
	CU_ASSERT_EQUAL(tr_ckpt_read(dir, &b, err, sizeof err), -EBADMSG);
	/* longer than its fields, the CRC made right: refused too */
	uint8_t *longer = malloc(size + 4);
	CU_ASSERT_FATAL(longer != NULL);
	memcpy(longer, bytes, size - 4);
	memset(longer + size - 4, 0, 4);
	uint32_t crc = rio_crc32c(0, longer, size);
	for (int i = 0; i < 4; i++)
		longer[size + i] = (uint8_t)(crc >> (8 * i));
	tu_write_file(path, longer, size + 4);
	CU_ASSERT_EQUAL(tr_ckpt_read(dir, &b, err, sizeof err), -EBADMSG);
	CU_ASSERT_PTR_NULL(b.params);
	free(longer);
	free(bytes);
}

/* Version 4's fields at their values when not known (nothing to compare
 * on resume, the counters from 0): what an older file reads as. */
static void ckpt_forget_v4(tr_ckpt *c)
{
	c->layout[0] = c->world; /* version 5's: data parallelism alone */
	c->layout[1] = c->layout[2] = 1;
	free(c->shard_records);
	c->shard_records = NULL;
	c->sharding = c->nshards = c->ncolumns = 0;
	c->total_samples = 0;
	c->total_gradients = c->epoch_skipped = c->epoch_overflows = 0;
}

/* The bytes of DIR/checkpoint made an older version's: `cut` bytes before
 * the CRC out (the newer versions' tail), then, at `at`, `gap` bytes out;
 * the version and the CRC made right. */
static void ckpt_make_older(const char *dir, uint8_t version, size_t cut, size_t at, size_t gap)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/checkpoint", dir);
	size_t size;
	uint8_t *bytes = tu_read_file(path, &size);
	CU_ASSERT_FATAL(bytes != NULL && size > 100 + cut + gap);
	memmove(bytes + size - 4 - cut, bytes + size - 4, 4);
	size -= cut;
	memmove(bytes + at, bytes + at + gap, size - at - gap);
	size -= gap;
	bytes[8] = version;
	uint32_t crc = rio_crc32c(0, bytes, size - 4);
	for (int i = 0; i < 4; i++)
		bytes[size - 4 + i] = (uint8_t)(crc >> (8 * i));
	tu_write_file(path, bytes, size);
	free(bytes);
}

/* Version 4's tail for an allreduce run that knows nothing of its data:
 * sharding, nshards, ncolumns, total_samples, total_gradients,
 * epoch_skipped. */
enum { V4_EMPTY_TAIL = 4 + 4 + 4 + 8 + 8 + 8 + 12 + 8 /* and version 5's layout, 6's count */ };

/* ckpt_fill's checkpoint, without version 4's fields, written to DIR and
 * made an older version's (ckpt_make_older), in a; read back into b. */
static void ckpt_older(const char *name, uint8_t version, size_t cut, size_t at, size_t gap,
                       tr_ckpt *a, tr_ckpt *b)
{
	const char *dir = tu_path(name);
	char err[512];
	ckpt_fill(a, 1.0f);
	ckpt_forget_v4(a);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, a, err, sizeof err) == 0);
	ckpt_make_older(dir, version, cut, at, gap);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, b, err, sizeof err) == 0);
}

/* A version 5 checkpoint still reads, its epoch's 16-bit overflows not
 * known (0: a resumed epoch counts them from there). */
static void test_checkpoint_version5_reads(void)
{
	tr_ckpt a, b;
	const char *dir = tu_path("ckpt-v5");
	char err[512];
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(a.epoch_overflows != 0);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	ckpt_make_older(dir, 5, 8, 0, 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT_EQUAL(b.epoch_overflows, 0);
	a.epoch_overflows = 0;
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
}

/* A version 4 checkpoint still reads, its layout data parallelism alone. */
static void test_checkpoint_version4_reads(void)
{
	tr_ckpt a, b;
	const char *dir = tu_path("ckpt-v4");
	char err[512];
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	ckpt_make_older(dir, 4, 12 + 8, 0, 0);
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &b, err, sizeof err) == 0);
	CU_ASSERT_EQUAL(b.layout[0], a.world);
	CU_ASSERT_EQUAL(b.layout[1], 1);
	CU_ASSERT_EQUAL(b.layout[2], 1);
	a.layout[0] = a.world;
	a.layout[1] = 1;
	a.epoch_overflows = 0;
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
}

/* A version 3 checkpoint still reads, version 4's fields not known. */
static void test_checkpoint_version3_reads(void)
{
	tr_ckpt a, b;
	ckpt_older("ckpt-v3", 3, V4_EMPTY_TAIL, 0, 0, &a, &b);
	ckpt_expect_equal(&a, &b);
	CU_ASSERT_PTR_NULL(b.shard_records);
	CU_ASSERT(isnan(b.seconds)); /* its clock is the version 4 file's */
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
}

/* A version 1 checkpoint (no global batch, no scale) still reads: the
 * trainer resumes it at its own world size only. */
static void test_checkpoint_version1_reads(void)
{
	tr_ckpt a, b;
	/* version 4's tail and version 3's last 8 (no strategy, no tables)
	 * before the CRC: out; after magic, version and world, version 2's 8
	 * bytes: out */
	ckpt_older("ckpt-v1", 1, V4_EMPTY_TAIL + 8, 16, 8, &a, &b);
	CU_ASSERT_EQUAL(b.global_batch, 0);
	CU_ASSERT_EQUAL(b.lr_scale, 0);
	a.global_batch = 0;
	a.lr_scale = 0;
	ckpt_expect_equal(&a, &b);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
}

static void test_checkpoint_failed_write_keeps_previous(void)
{
	const char *dir = tu_path("ckpt-fail");
	char err[512];
	tr_ckpt a, b, c;
	ckpt_fill(&a, 1.0f);
	CU_ASSERT_FATAL(tr_ckpt_write(dir, &a, err, sizeof err) == 0);
	/* the file cannot grow past 64 bytes (root or not): the write fails,
	 * says where and at which step, leaves no temporary, and the previous
	 * checkpoint is still there, whole */
	struct rlimit was, small = {64, 64};
	CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &was) == 0);
	small.rlim_max = was.rlim_max;
	void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &small) == 0);
	ckpt_fill(&b, 9.0f);
	int rc = tr_ckpt_write(dir, &b, err, sizeof err);
	setrlimit(RLIMIT_FSIZE, &was);
	signal(SIGXFSZ, handler);
	CU_ASSERT(rc == -EFBIG);
	CU_ASSERT(strstr(err, "ckpt-fail/checkpoint: write failed: ") != NULL);
	CU_ASSERT_EQUAL(tu_count_entries(dir), 2); /* checkpoint, clock */
	CU_ASSERT_FATAL(tr_ckpt_read(dir, &c, err, sizeof err) == 0);
	ckpt_expect_equal(&a, &c);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
	tr_ckpt_free(&c);
}

/* ---- the memory limit -------------------------------------------------------- */

/* ROOT/path holding `text`, its directories made. */
static void put_file(const char *root, const char *path, const char *text)
{
	char full[1024];
	snprintf(full, sizeof full, "%s%s", root, path);
	mkdir(root, 0700);
	for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(full, 0700);
		*p = '/';
	}
	tu_write_file(full, text, strlen(text));
}

/* A fake root: the machine's 16 GiB, and the mounts and the process's
 * cgroups given. */
static const char *fake_root(const char *name, const char *mountinfo, const char *cgroup)
{
	const char *root = tu_path(name);
	put_file(root, "/proc/meminfo", "MemTotal:       16777216 kB\nMemFree:        1000 kB\n");
	put_file(root, "/proc/self/mountinfo", mountinfo);
	put_file(root, "/proc/self/cgroup", cgroup);
	return root;
}

#define GIB (1ull << 30)

/* The limit under root is `bytes`, from `source`. */
static void expect_limit(const char *root, uint64_t bytes, const char *source)
{
	tr_memory_limit m;
	tr_memory_limit_get(root, &m);
	CU_ASSERT_EQUAL(m.bytes, bytes);
	CU_ASSERT_STRING_EQUAL(m.source, source);
}

/* The machine's memory, or the lowest cgroup limit on the way from the
 * process's cgroup up to the hierarchy's top, in v2 and v1 layouts. */
static void test_memory_limit(void)
{
	static const char v2_mounts[] =
		"22 1 0:21 / /proc rw - proc proc rw\n"
		"30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
	static const char v1_mounts[] =
		"32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
	static const char *const job = "/sys/fs/cgroup/user.slice/job.scope/memory.max";
	static const char *const slice = "/sys/fs/cgroup/user.slice/memory.max";
	static const char *const v1_top = "/sys/fs/cgroup/memory/memory.limit_in_bytes";
	static const char *const v1_abc = "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes";
	static const char *const meminfo = "MemTotal in /proc/meminfo";
	static const struct {
		const char *name, *mounts, *cgroup;
		const char *file[2], *text[2]; /* the limits written */
		uint64_t bytes;
		const char *source;
	} cases[] = {
		/* v2: the job's cgroup has none ("max"), the slice above it 2 GiB */
		{"mem-v2a", v2_mounts, "0::/user.slice/job.scope\n", {job, slice}, {"max\n",
		 "2147483648\n"}, 2 * GIB, slice},
		/* ... the job's own, lower, wins */
		{"mem-v2b", v2_mounts, "0::/user.slice/job.scope\n", {job, slice}, {"1073741824\n",
		 "2147483648\n"}, GIB, job},
		/* ... and one above the machine's memory does not limit */
		{"mem-v2c", v2_mounts, "0::/user.slice/job.scope\n", {job, slice}, {"68719476736\n",
		 "max\n"}, 16 * GIB, meminfo},
		/* v1: the memory controller's hierarchy among others; "no
		 * limit" is a page-rounded 2^63 - 1 */
		{"mem-v1", v1_mounts, "5:cpu,cpuacct:/\n4:memory:/docker/abc\n1:name=systemd:/\n",
		 {v1_top, v1_abc}, {"9223372036854771712\n", "536870912\n"}, GIB / 2, v1_abc},
		/* a container's mount shows its own cgroup as the top */
		{"mem-ns", "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
		 "4:memory:/docker/abc\n", {v1_top, NULL}, {"3221225472\n", NULL}, 3 * GIB, v1_top},
		/* no cgroup mounted: the machine's */
		{"mem-bare", "22 1 0:21 / /proc rw - proc proc rw\n", "0::/\n", {NULL, NULL},
		 {NULL, NULL}, 16 * GIB, meminfo},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *root = fake_root(cases[i].name, cases[i].mounts, cases[i].cgroup);
		for (int f = 0; f < 2 && cases[i].file[f]; f++)
			put_file(root, cases[i].file[f], cases[i].text[f]);
		expect_limit(root, cases[i].bytes, cases[i].source);
	}
	/* nothing readable: no limit; this machine: something */
	tr_memory_limit m;
	tr_memory_limit_get(tu_path("mem-nothing"), &m);
	CU_ASSERT_EQUAL(m.bytes, UINT64_MAX);
	tr_memory_limit_get("", &m);
	CU_ASSERT(m.bytes > 0 && m.source[0] != 0);
}

/* ---- denormals ------------------------------------------------------------ */

/* After tr_math_open, a product that would be denormal is 0 (flush to zero)
 * and a denormal input reads as 0 (denormals are zero), on this thread and
 * in OpenBLAS's worker threads: a GEMM big enough to be split among them,
 * of denormal A and ones, must be all zeros (each sum, 256 x 1e-42, would
 * still be denormal). */
static void test_denormals_flushed(void)
{
	tr_math *m = NULL;
	char err[256];
	CU_ASSERT_FATAL(tr_math_open(&m, TR_DEVICE_CPU, 0, 2, err, sizeof err) == 0);
#if defined(__SSE__)
	volatile float tiny = 1e-20f, denormal = 1e-42f, one = 1.0f;
	CU_ASSERT(tiny * tiny == 0.0f);
	CU_ASSERT(denormal * one == 0.0f);
	const int n = 256;
	float *a = tr_math_alloc(m, (size_t)n * n), *b = tr_math_alloc(m, (size_t)n * n);
	float *c = tr_math_alloc(m, (size_t)n * n);
	CU_ASSERT_FATAL(a && b && c);
	for (int i = 0; i < n * n; i++) {
		a[i] = denormal;
		b[i] = 1.0f;
	}
	tr_gemm(m, 0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
	int nonzero = 0;
	for (int i = 0; i < n * n; i++)
		nonzero += c[i] != 0.0f;
	CU_ASSERT_EQUAL(nonzero, 0);
	tr_math_free(m, a);
	tr_math_free(m, b);
	tr_math_free(m, c);
#endif
	tr_math_close(m);
}

/* ---- the resume plan (trainer/resume.h): no MPI, no files ------------------ */

/* A checkpoint of 2 ranks under allreduce, global batch 32, an epoch in
 * progress sharded by records over 10 shards; and the run resuming it, on
 * `world` ranks. */
static tr_ckpt_summary plan_ckpt(void)
{
	return (tr_ckpt_summary){.have = 1, .world = 2, .global_batch = 32, .lr_scale = 2.0f,
	                         .strategy = 0, .strategy_name = "allreduce", .servers = 0,
	                         .sharding = RIO_SHARD_RECORDS, .nshards = 10, .mid_epoch = 1};
}

static tr_resume_run plan_run(int world)
{
	return (tr_resume_run){.path = "ck/checkpoint", .strategy = 0, .servers = 0, .world = world,
	                       .data_world = world, .data_unit = "ranks", .global_batch = 0,
	                       .sharding = RIO_SHARD_AUTO};
}

/* The plan, or the refusal's message (NULL when planned). */
static const char *plan(const tr_ckpt_summary *ck, const tr_resume_run *run, tr_resume_plan *p)
{
	static char err[512];
	err[0] = '\0';
	return tr_resume_plan_make(ck, run, p, err, sizeof err) < 0 ? err : NULL;
}

static void test_plan_same_layout(void)
{
	tr_resume_plan p;
	tr_ckpt_summary none = {0}, ck = plan_ckpt();
	tr_resume_run run = plan_run(2);
	CU_ASSERT_PTR_NULL(plan(&none, &run, &p));
	CU_ASSERT_EQUAL(p.resume, 0); /* nothing to resume: the run's own settings */
	CU_ASSERT_EQUAL(p.batch, 0);
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_AUTO);
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p));
	CU_ASSERT_EQUAL(p.resume, 1);
	CU_ASSERT_EQUAL(p.batch, 16); /* the global batch kept */
	CU_ASSERT_EQUAL(p.keep_scale, 1);
	CU_ASSERT_EQUAL(p.scale, 2.0f);
	CU_ASSERT_EQUAL(p.elastic_from, 0);
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_RECORDS); /* auto keeps the checkpoint's */
	CU_ASSERT_EQUAL(p.ckpt_sharding, RIO_SHARD_RECORDS);
	/* --global-batch the checkpoint's: the same plan */
	run.global_batch = 32;
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p));
	CU_ASSERT_EQUAL(p.batch, 16);
}

static void test_plan_elastic(void)
{
	tr_resume_plan p;
	tr_ckpt_summary ck = plan_ckpt();
	tr_resume_run run = plan_run(4);
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p)); /* 2 -> 4 */
	CU_ASSERT_EQUAL(p.batch, 8);
	CU_ASSERT_EQUAL(p.elastic_from, 2);
	CU_ASSERT_EQUAL(p.keep_scale, 1);
	CU_ASSERT_EQUAL(p.scale, 2.0f); /* the rate of the global batch, not of 4 ranks */
	ck.world = 4;
	run = plan_run(2);
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p)); /* 4 -> 2 */
	CU_ASSERT_EQUAL(p.batch, 16);
	CU_ASSERT_EQUAL(p.elastic_from, 4);
	/* a world that does not divide the global batch */
	run = plan_run(3);
	const char *e = plan(&ck, &run, &p);
	CU_ASSERT_STRING_EQUAL(e, "ck/checkpoint: its global batch of 32 records (4 ranks x 8) "
	                          "does not split evenly over 3 ranks: resume with a world size "
	                          "that divides it");
	/* --global-batch other than the checkpoint's */
	run = plan_run(2);
	run.global_batch = 64;
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p), "--global-batch 64: ck/checkpoint was written "
	                                              "with a global batch of 32, which a resume "
	                                              "keeps");
}

/* A version 1 file (no global batch) resumes at its own world size only,
 * with the run's own batch and rate. */
static void test_plan_version1(void)
{
	tr_resume_plan p;
	tr_ckpt_summary ck = plan_ckpt();
	ck.global_batch = 0;
	ck.sharding = 0; /* not known either */
	tr_resume_run run = plan_run(2);
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p));
	CU_ASSERT_EQUAL(p.resume, 1);
	CU_ASSERT_EQUAL(p.batch, 0);
	CU_ASSERT_EQUAL(p.keep_scale, 0);
	CU_ASSERT_EQUAL(p.ckpt_sharding, 0);
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_AUTO);
	run = plan_run(4);
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p), "ck/checkpoint was written by 2 ranks, by a "
	                                             "recordio-train too old to resume at another "
	                                             "world size; this run has 4");
}

/* Another strategy, or with servers another number of servers or workers:
 * refused, naming the checkpoint's. */
static void test_plan_strategy(void)
{
	tr_resume_plan p;
	tr_ckpt_summary ck = plan_ckpt();
	tr_resume_run run = plan_run(3);
	run.strategy = 1;
	run.servers = 1;
	run.data_world = 2;
	run.data_unit = "workers";
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p), "ck/checkpoint was written by --strategy "
	                                             "allreduce; resume with the same");
	ck.strategy = 1;
	ck.strategy_name = "ps";
	ck.servers = 1;
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p)); /* ps, 1 server, 2 workers */
	CU_ASSERT_EQUAL(p.batch, 16);
	CU_ASSERT_EQUAL(p.elastic_from, 0);
	run.servers = 2; /* 4 ranks: 2 servers, 2 workers */
	run.world = 4;
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p), "ck/checkpoint was written by --strategy ps "
	                                             "with 1 server and 2 workers; resume with "
	                                             "the same");
	run.servers = 1; /* 1 server, 3 workers: no elastic resume with servers */
	run.data_world = 3;
	CU_ASSERT_PTR_NOT_NULL(plan(&ck, &run, &p));
	run = plan_run(2);
	CU_ASSERT_PTR_NOT_NULL(plan(&ck, &run, &p)); /* ps's checkpoint under allreduce */
}

/* The epoch in progress keeps the checkpoint's sharding: kept by auto,
 * chosen anew between epochs where files cannot serve the world, refused
 * mid-epoch. */
static void test_plan_sharding(void)
{
	tr_resume_plan p;
	tr_ckpt_summary ck = plan_ckpt();
	ck.sharding = RIO_SHARD_FILES;
	ck.nshards = 2;
	tr_resume_run run = plan_run(2);
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p)); /* 2 shards serve 2 ranks */
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_FILES);
	run = plan_run(4);
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p),
	                       "ck/checkpoint: its epoch in progress is sharded by files, and 2 "
	                       "shards cannot serve 4 ranks by files: resume it on 2 or fewer (the "
	                       "next epochs may then run on more), or from a checkpoint at an "
	                       "epoch's end");
	ck.mid_epoch = 0; /* at an epoch's end: auto chooses anew */
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p));
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_AUTO);
	CU_ASSERT_EQUAL(p.ckpt_sharding, RIO_SHARD_FILES);
	/* another --sharding: at an epoch's end it is the run's, mid-epoch refused */
	run = plan_run(2);
	run.sharding = RIO_SHARD_RECORDS;
	CU_ASSERT_PTR_NULL(plan(&ck, &run, &p));
	CU_ASSERT_EQUAL(p.sharding, RIO_SHARD_RECORDS);
	ck.mid_epoch = 1;
	CU_ASSERT_STRING_EQUAL(plan(&ck, &run, &p),
	                       "--sharding records: ck/checkpoint's epoch in progress is sharded by "
	                       "files; resume with --sharding files (or auto), or from a checkpoint "
	                       "at an epoch's end");
}

/* ---- bf16 rounding (--precision bf16; needs no bf16 instructions) ---- */

static uint32_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float bits_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Known cases, then random floats against the definition: the nearer of
 * the two bf16 values around f (computed in double), the even one on a
 * tie; infinities beyond the largest. */
static void test_bf16_rounding(void)
{
	tr_math *m = cpu();
	static const uint32_t in[] = {
		0x3f800000, /* 1                                            */
		0x3f808000, /* 1 + 2^-8: a tie, 0x3f80 is even: down         */
		0x3f818000, /* a tie above the odd 0x3f81: up to 0x3f82      */
		0x3f808001, /* just above the tie: up                        */
		0xbf807fff, /* -(just below the tie): down in magnitude     */
		0x7f7fffff, /* the largest float: rounds to infinity        */
		0xff800000, /* -infinity                                     */
		0x80000000, /* -0                                            */
		0x00000001, /* the smallest denormal: to +0                  */
		0x007fffff, /* the largest denormal: up to the smallest normal */
		0x80408001, /* a denormal above a tie: up in magnitude        */
		0x7f800001, /* a signalling NaN: stays a NaN (quiet)         */
		0xffc00000, /* -quiet NaN                                    */
	};
	static const uint16_t want[] = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xbf80, 0x7f80, 0xff80,
	                                0x8000, 0x0000, 0x0080, 0x8041, 0x7fc0, 0xffc0};
	enum { N = sizeof in / sizeof in[0] };
	float f[N];
	tr_bf16 got[N];
	for (int i = 0; i < N; i++)
		f[i] = bits_float(in[i]);
	tr_to_bf16(m, got, f, N);
	for (int i = 0; i < N; i++)
		CU_ASSERT_EQUAL(got[i], want[i]);
	enum { R = 4099 }; /* the vector loop and its tail */
	static float r[R];
	static tr_bf16 h[R];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < R; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		/* every 7th a tie exactly, the rest any finite float */
		uint32_t u = (uint32_t)(s >> 32);
		if ((u & 0x7f800000u) == 0x7f800000u) /* no infinities, NaNs */
			u &= 0xbfffffffu;
		if (!(u & 0x7f800000u)) /* nor denormals: the CPU backend runs with
		                         * denormals-are-zero, the double
		                         * arithmetic below too */
			u |= 0x00800000u;
		r[i] = bits_float(i % 7 ? u : (u & 0xffff0000u) | 0x8000u);
	}
	tr_to_bf16(m, h, r, R);
	int bad = 0;
	for (int i = 0; i < R; i++) {
		uint32_t u = float_bits(r[i]);
		uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
		double x = r[i], dlo = fabs(x - bits_float((uint32_t)lo << 16));
		double dhi = (hi & 0x7f80) == 0x7f80 ? INFINITY : fabs(x - bits_float((uint32_t)hi << 16));
		uint16_t near = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1) ? hi : lo;
		if ((hi & 0x7fff) == 0x7f80 && dlo >= fabs(bits_float((uint32_t)hi << 16) - x))
			near = hi; /* rounds up to the infinity */
		bad += h[i] != near;
	}
	CU_ASSERT_EQUAL(bad, 0);
	tr_math_close(m);
}

/* The passes that write a bf16 copy beside their fp32 result (the bias and
 * ReLU, the ReLU's backward, SGD's and Adam's updates): the copy is the
 * fp32 result rounded, and the fp32 result that of the plain pass. */
static void test_bf16_copies_in_passes(void)
{
	tr_math *m = cpu();
	enum { RR = 5, CC = 37, N = RR * CC };
	static float z[N], z2[N], bias[CC], a[N], db[CC], db2[CC], rounded[N];
	static float p[N], p2[N], g[N], v[N], v2[N], m2[N], m2b[N];
	static tr_bf16 z16[N], want[N], mask16[N];
	uint64_t s = 0x853c49e6748fea9bull;
	for (int i = 0; i < N; i++) {
		z[i] = z2[i] = frand(&s);
		a[i] = frand(&s);
		p[i] = p2[i] = frand(&s);
		g[i] = frand(&s);
	}
	for (int c = 0; c < CC; c++)
		bias[c] = frand(&s);
	tr_bias_act16(m, z, bias, RR, CC, 1, z16);
	tr_bias_act(m, z2, bias, RR, CC, 1);
	tr_to_bf16(m, want, z2, N);
	CU_ASSERT(memcmp(z, z2, sizeof z) == 0);
	CU_ASSERT(memcmp(z16, want, sizeof want) == 0);
	memcpy(z2, a, sizeof z2);
	memcpy(rounded, a, sizeof rounded);
	memcpy(mask16, z16, sizeof mask16); /* the layer's output as bf16: the mask */
	tr_relu_bias_backward16(m, z2, z, mask16, RR, CC, db, z16);
	tr_relu_bias_backward(m, rounded, z, RR, CC, db2);
	tr_to_bf16(m, want, rounded, N);
	CU_ASSERT(memcmp(z2, rounded, sizeof z2) == 0 && memcmp(db, db2, sizeof db) == 0);
	CU_ASSERT(memcmp(z16, want, sizeof want) == 0);
	tr_sgd_args sa = {.lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-3f, .grad_scale = 0.5f};
	tr_sgd_step(m, p2, g, v2, N, &sa);
	sa.param16 = z16;
	tr_sgd_step(m, p, g, v, N, &sa);
	tr_to_bf16(m, want, p2, N);
	CU_ASSERT(memcmp(p, p2, sizeof p) == 0 && memcmp(z16, want, sizeof want) == 0);
	tr_adam_args aa = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
	                   .grad_scale = 1.0f, .bias1 = 0.1f, .bias2 = 0.001f};
	memset(v, 0, sizeof v);
	memset(v2, 0, sizeof v2);
	tr_adam_step(m, p2, g, v2, m2b, N, &aa);
	aa.param16 = z16;
	tr_adam_step(m, p, g, v, m2, N, &aa);
	tr_to_bf16(m, want, p2, N);
	CU_ASSERT(memcmp(p, p2, sizeof p) == 0 && memcmp(z16, want, sizeof want) == 0);
	tr_math_close(m);
}

static const tu_test model_tests[] = {
	{"gradients match finite differences", test_gradient_check},
	{"input gradient matches finite differences", test_input_gradient_check},
	{"weight gradients summed by their GEMMs (wsum)", test_weight_grads_summed},
	{"softmax cross-entropy known values", test_loss_known_values},
	{"ReLU mask and bias gradient in one pass", test_relu_bias_backward},
	{"softmax, loss, gradient and bias gradient in one pass", test_softmax_xent_fused},
	{"seeded initialisation", test_init_seeded},
	{"parameters, gradients and state lent to the model and the optimizer", test_lent_buffers},
	{"bf16 rounding: to nearest, ties to even, NaN and infinities", test_bf16_rounding},
	{"bf16 copies written in the bias, ReLU and optimizer passes", test_bf16_copies_in_passes},
	{NULL, NULL},
};

static const tu_test optim_tests[] = {
	{"SGD with momentum and weight decay", test_sgd_known_values},
	{"Adam", test_adam_known_values},
	{"an update in buckets, in any order, is the whole one", test_update_in_buckets},
	{"SGD, Adam and LARS write the bf16 copy of what they update", test_update_writes_bf16},
	{"LARS: layer-wise trust ratio, biases plain", test_lars_known_values},
	{"linear scaling, warmup, cosine", test_lr_schedule},
	{NULL, NULL},
};

static const tu_test checkpoint_tests[] = {
	{"round trip, stale temporary ignored", test_checkpoint_round_trip},
	{"damaged or cut checkpoint refused", test_checkpoint_damage_refused},
	{"a version 1 checkpoint still reads", test_checkpoint_version1_reads},
	{"a version 5 checkpoint still reads", test_checkpoint_version5_reads},
	{"a version 4 checkpoint still reads", test_checkpoint_version4_reads},
	{"a version 3 checkpoint still reads", test_checkpoint_version3_reads},
	{"the training seconds in DIR/clock, tied to the checkpoint", test_checkpoint_clock},
	{"failed write keeps the previous one", test_checkpoint_failed_write_keeps_previous},
	{NULL, NULL},
};

static const tu_test math_tests[] = {
	{"denormals flushed on every computing thread", test_denormals_flushed},
	{NULL, NULL},
};

static const tu_test memory_tests[] = {
	{"the memory limit: MemTotal, cgroup v2 and v1, up the tree", test_memory_limit},
	{NULL, NULL},
};

static const tu_test plan_tests[] = {
	{"the same layout, or nothing to resume", test_plan_same_layout},
	{"elastic: 2 to 4 and 4 to 2 ranks, the global batch kept", test_plan_elastic},
	{"a version 1 checkpoint: its own world size only", test_plan_version1},
	{"another strategy, servers or workers refused", test_plan_strategy},
	{"the sharding kept, chosen anew or refused", test_plan_sharding},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"math", math_tests},
	{"mlp", model_tests},
	{"optimizer", optim_tests},
	{"checkpoint", checkpoint_tests},
	{"memory", memory_tests},
	{"resume plan", plan_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * test_train_bf16.c — --precision bf16 on the CPU backend (oneDNN): the
 * bf16 GEMM in each of the trainer's layouts against an fp32 GEMM of the
 * same operands, one training step of the MLP in bf16 against the same
 * step in fp32 (the input in one block and in two), a dense layer in one
 * call (GEMM, bias and ReLU) against them apart, the bf16 weights written
 * by the optimizer's pass, and the shape cache. Exits 77 (skip) where the CPU or the build has no bf16
 * GEMMs (backend.h's tr_math_bf16_check), so a CPU without AVX512_BF16 or
 * AMX-BF16 skips it. Plain C, one "ok NAME" / "FAIL NAME: detail" line
 * per check, exit 1 on any failure.
 *
 * The tolerances, from bf16's 8-bit mantissa (7 stored bits and the
 * implicit one): rounding to nearest moves a value by at most u = 2^-9 of
 * itself (half a unit in the 8th bit). A product of two rounded operands
 * a(1 + e1) b(1 + e2) is off by at most (2u + u^2)|ab|, and its exact fp32
 * product (8 x 8 bits fit in fp32's 24) is added in fp32, each addition off
 * by at most 2^-24 of the partial sum. So an element of C = AB is within
 *     (2u + u^2 + K 2^-24) (|A||B|)_ij
 * of the fp32 GEMM's, |A||B| the product of the absolute values (computed
 * here in fp32, itself within K 2^-24 of exact: covered by doubling the
 * last term). That is the GEMM check, element by element.
 *
 * A step chains GEMMs: each gradient block passes through at most
 * g = 2 L - 1 of them (forward through the L layers, back through the
 * L - 1 above it), each adding at most 2u of the |.|-weighted size of its
 * operands; the ReLU and softmax between them are 1-Lipschitz. Where no
 * sum cancels, the normwise error of a block is then at most (2 L - 1) 2u
 * of its norm (L = 3: 10u, about 0.0195): the bound for the loss (a sum of
 * positive terms) and the updated parameters (the step is a small change
 * to them). A gradient is a sum over the batch's rows of terms of either
 * sign (the softmax's output minus the one-hot label): where they cancel
 * down to a random walk's size, sqrt(ROWS) of the sum of their magnitudes,
 * its relative error grows by up to that factor:
 *     (2 L - 1) 2u sqrt(ROWS)   (ROWS = 64: 80u, about 0.156).
 * (Measured: 0.05-0.07 for the lower layers, 0.01 for the top one.) The
 * check also asks that the bf16 step's gradients differ from the fp32
 * ones at all (at least u/64 normwise): a step that quietly ran in fp32
 * would fail it.
 */
#include "../trainer/backend.h"
#include "../trainer/mlp.h"
#include "../trainer/optim.h"
#include "check_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U (1.0 / 512.0) /* 2^-9: bf16's unit roundoff */

static tr_math *m;

static double dsqrt(double x) /* Newton's: no <math.h> (trainer/ has a math.h of its own) */
{
	if (x <= 0)
		return 0;
	double r = x > 1 ? x : 1;
	for (int i = 0; i < 200; i++)
		r = 0.5 * (r + x / r);
	return r;
}


static void *must(void *p)
{
	if (!p) {
		printf("FAIL setup: out of memory\n");
		exit(1);
	}
	return p;
}

static float *random_floats(size_t n, float lo, float hi)
{
	float *f = must(tr_math_alloc(m, n));
	for (size_t i = 0; i < n; i++)
		f[i] = check_uniform(lo, hi);
	return f;
}

/* The float a bf16 stands for. */
static float widen(tr_bf16 h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* ---- one GEMM, each layout the trainer uses ---- */

/* C16 = op(A) op(B) from bf16 operands against the fp32 GEMM of the same
 * (rounded) operands, element by element within the bound of the header;
 * then with beta 1 (accumulating into C, as the first layer's blocks do). */
static void check_gemm(const char *name, int ta, int tb, int M, int N, int K)
{
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
	float *A = random_floats(na, -1, 1), *B = random_floats(nb, -1, 1);
	tr_bf16 *A16 = must(tr_math_alloc_bytes(m, na * 2)), *B16 = must(tr_math_alloc_bytes(m, nb * 2));
	tr_to_bf16(m, A16, A, na);
	tr_to_bf16(m, B16, B, nb);
	float *Ar = must(tr_math_alloc(m, na)), *Br = must(tr_math_alloc(m, nb));
	float *Aa = must(tr_math_alloc(m, na)), *Ba = must(tr_math_alloc(m, nb));
	for (size_t i = 0; i < na; i++)
		Aa[i] = check_abs(Ar[i] = widen(A16[i]));
	for (size_t i = 0; i < nb; i++)
		Ba[i] = check_abs(Br[i] = widen(B16[i]));
	int lda = ta ? M : K, ldb = tb ? K : N;
	float *C = must(tr_math_alloc(m, nc)), *want = must(tr_math_alloc(m, nc));
	float *mag = must(tr_math_alloc(m, nc));
	tr_gemm(m, ta, tb, M, N, K, 1.0f, Ar, lda, Br, ldb, 0.0f, want, N);
	tr_gemm(m, ta, tb, M, N, K, 1.0f, Aa, lda, Ba, ldb, 0.0f, mag, N);
	for (int pass = 0; pass < 2; pass++) {
		/* pass 1: C already holds the product, so beta 1 doubles it */
		tr_gemm_bf16(m, ta, tb, M, N, K, A16, lda, B16, ldb, pass ? 1.0f : 0.0f, C, N);
		double bound = 2 * U + U * U + 2.0 * K / 16777216.0;
		size_t bad = nc;
		for (size_t i = 0; i < nc && bad == nc; i++)
			if (!(check_abs(C[i] - (pass + 1.0) * want[i]) <= (pass + 1.0) * bound * mag[i] + 1e-30))
				bad = i;
		char full[96];
		snprintf(full, sizeof full, "%s%s", name, pass ? " beta 1" : "");
		if (bad < nc)
			check_fail(full, "[%zu] bf16 %.9g, fp32 %.9g, bound %.3g", bad, C[bad],
			     (pass + 1.0) * want[bad], (pass + 1.0) * bound * mag[bad]);
		else
			check_ok(full);
	}
	void *all[] = {A, B, A16, B16, Ar, Br, Aa, Ba, C, want, mag};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		tr_math_free(m, all[i]);
}

/* ---- one step of the MLP ---- */

enum { ROWS = 64, W1 = 40, W2 = 24, CLASSES = 10, L = 3 };
_Static_assert(ROWS == 64, "the gradients' bound takes sqrt(ROWS) as 8");
static const int sizes[] = {W1 + W2, 48, 32, CLASSES};

typedef struct run {
	tr_mlp net;
	tr_optim opt;
	float *params, *grads, *vel;
	tr_bf16 *params16;
} run;

static void run_open(run *r, const float *init, int bf16)
{
	size_t n = tr_mlp_param_count(sizes, L);
	r->params = must(tr_math_alloc(m, n));
	r->grads = must(tr_math_alloc(m, n + TR_MLP_EXTRA));
	r->vel = must(tr_math_alloc(m, n));
	memcpy(r->params, init, n * sizeof(float));
	if (tr_mlp_init(&r->net, m, sizes, L, ROWS, r->params, r->grads) < 0)
		must(NULL);
	tr_optim_config c = {.kind = TR_OPT_SGD, .lr = 0.1f, .momentum = 0.9f, .scale = 1.0f};
	if (tr_optim_init(&r->opt, m, n, &c, r->vel, NULL) < 0)
		must(NULL);
	r->params16 = NULL;
	if (bf16) {
		r->params16 = must(tr_math_alloc_bytes(m, n * sizeof(tr_bf16)));
		if (tr_mlp_use_bf16(&r->net, r->params16, 1) < 0)
			must(NULL);
		tr_optim_write16(&r->opt, r->params16);
	}
}

static void run_close(run *r)
{
	tr_mlp_free(&r->net);
	tr_math_free(m, r->params);
	tr_math_free(m, r->grads);
	tr_math_free(m, r->vel);
	tr_math_free(m, r->params16);
}

static void step(run *r, const tr_input *in, float *stats)
{
	tr_mlp_forward(&r->net, in);
	tr_mlp_loss(&r->net, in, stats, 1);
	tr_mlp_backward(&r->net, in, NULL, NULL);
	tr_optim_step(&r->opt, r->params, r->grads, 1.0f / ROWS, 0);
}

/* ||a - b|| / ||b|| over n floats */
static double rel_error(const float *a, const float *b, size_t n)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
		s += (double)b[i] * b[i];
	}
	return s > 0 ? dsqrt(d / s) : dsqrt(d);
}

/* One step in bf16 against fp32 from the same weights: the input in two
 * blocks (the first layer's GEMMs block by block, then its bias and ReLU
 * pass) or in one (every layer one tr_dense_bf16). */
static void test_step(int nparts)
{
	size_t n = tr_mlp_param_count(sizes, L);
	float *init = random_floats(n, -0.2f, 0.2f);
	float *x1 = random_floats((size_t)ROWS * W1, 0, 1), *x2 = random_floats((size_t)ROWS * W2, -1, 1);
	float *x = random_floats((size_t)ROWS * (W1 + W2), 0, 1);
	int64_t *y = must(tr_math_alloc_bytes(m, ROWS * sizeof(int64_t)));
	for (int i = 0; i < ROWS; i++)
		y[i] = (int64_t)(i * 7 % CLASSES);
	tr_input in = {.nparts = 2, .part = {x1, x2}, .width = {W1, W2}, .labels = y, .rows = ROWS};
	if (nparts == 1)
		in = (tr_input){.nparts = 1, .part = {x}, .width = {W1 + W2}, .labels = y, .rows = ROWS};
	char name[64];
	const char *tag = nparts == 1 ? " (one block)" : "";
	run f, h;
	run_open(&f, init, 0);
	run_open(&h, init, 1);
	float sf[2] = {0, 0}, sh[2] = {0, 0};
	step(&f, &in, sf);
	step(&h, &in, sh);
	const double bound = (2 * L - 1) * 2 * U, floor = U / 64;
	const double gbound = bound * 8; /* sqrt(ROWS) */
	snprintf(name, sizeof name, "step loss%s", tag);
	if (!(check_abs(sh[0] - sf[0]) <= bound * check_abs(sf[0])))
		check_fail(name, "bf16 %.9g, fp32 %.9g", sh[0], sf[0]);
	else
		check_ok(name);
	for (int l = 0; l < L; l++) {
		size_t nw = (size_t)sizes[l] * sizes[l + 1];
		double e = rel_error(h.grads + h.net.w_off[l], f.grads + f.net.w_off[l], nw);
		snprintf(name, sizeof name, "step dW%d%s", l, tag);
		if (!(e <= gbound) || !(e >= floor))
			check_fail(name, "relative error %.3g, want in [%.3g, %.3g]", e, floor, gbound);
		else
			check_ok(name);
		double eb = rel_error(h.grads + h.net.b_off[l], f.grads + f.net.b_off[l],
		                      (size_t)sizes[l + 1]);
		snprintf(name, sizeof name, "step db%d%s", l, tag);
		if (!(eb <= gbound))
			check_fail(name, "relative error %.3g, bound %.3g", eb, gbound);
		else
			check_ok(name);
	}
	double ep = rel_error(h.params, f.params, n);
	snprintf(name, sizeof name, "step params%s", tag);
	if (!(ep <= bound))
		check_fail(name, "relative error %.3g, bound %.3g", ep, bound);
	else
		check_ok(name);
	/* the optimizer's pass wrote the bf16 weights: each the rounded master */
	tr_bf16 *want = must(tr_math_alloc_bytes(m, n * sizeof(tr_bf16)));
	tr_to_bf16(m, want, h.params, n);
	snprintf(name, sizeof name, "update writes bf16 weights%s", tag);
	if (memcmp(want, h.params16, n * sizeof(tr_bf16)))
		check_fail(name, "params16 is not the rounded parameters");
	else
		check_ok(name);
	/* a second step from the optimizer's bf16 weights, and one whose
	 * weights were rounded again after tr_mlp_params_changed: the same */
	run g;
	run_open(&g, h.params, 1);
	memcpy(g.vel, h.vel, n * sizeof(float));
	tr_mlp_params_changed(&g.net);
	float s2[2] = {0, 0}, s3[2] = {0, 0};
	step(&h, &in, s2);
	step(&g, &in, s3);
	snprintf(name, sizeof name, "second step%s", tag);
	if (memcmp(h.params, g.params, n * sizeof(float)) || s2[0] != s3[0])
		check_fail(name, "the optimizer's bf16 weights and rounded ones differ");
	else
		check_ok(name);
	run_close(&f);
	run_close(&h);
	run_close(&g);
	tr_math_free(m, want);
	tr_math_free(m, init);
	tr_math_free(m, x1);
	tr_math_free(m, x2);
	tr_math_free(m, x);
	tr_math_free(m, y);
}

/* ---- a dense layer in one call (tr_dense_bf16) ---- */

/* The fused layer (GEMM, bias, ReLU; a hidden layer's output as bf16
 * alone) against the GEMM and the bias-and-ReLU pass apart: the same
 * fp32 sums, so the same values (within one fp32 rounding of the bias's
 * addition, for an accumulation order of its own), and the bf16 output
 * the fp32 one rounded. */
static void check_dense(const char *name, int relu, int to16)
{
	enum { M = 37, N = 29, K = 131 };
	float *A = random_floats((size_t)M * K, -1, 1), *W = random_floats((size_t)N * K, -1, 1);
	float *bias = random_floats(N, -1, 1), *Z = random_floats((size_t)M * N, 5, 6);
	float *want = must(tr_math_alloc(m, (size_t)M * N)), *mag = must(tr_math_alloc(m, (size_t)M * N));
	tr_bf16 *A16 = must(tr_math_alloc_bytes(m, (size_t)M * K * 2));
	tr_bf16 *W16 = must(tr_math_alloc_bytes(m, (size_t)N * K * 2));
	tr_bf16 *Z16 = must(tr_math_alloc_bytes(m, (size_t)M * N * 2));
	tr_bf16 *want16 = must(tr_math_alloc_bytes(m, (size_t)M * N * 2));
	tr_to_bf16(m, A16, A, (size_t)M * K);
	tr_to_bf16(m, W16, W, (size_t)N * K);
	tr_gemm_bf16(m, 0, 1, M, N, K, A16, K, W16, K, 0.0f, want, N);
	for (size_t i = 0; i < (size_t)M * N; i++)
		mag[i] = (float)check_abs(want[i]) + 1;
	tr_bias_act16(m, want, bias, M, N, relu, want16);
	tr_dense_bf16(m, M, N, K, A16, K, W16, K, bias, relu, Z, to16 ? Z16 : NULL);
	size_t bad = (size_t)M * N;
	double tol = 2.0 * K / 16777216.0;
	for (size_t i = 0; i < (size_t)M * N && bad == (size_t)M * N; i++) {
		float got = to16 ? widen(Z16[i]) : Z[i], ref = to16 ? widen(want16[i]) : want[i];
		/* bf16: one unit in the 8th bit apart at most, from the same sum */
		double t = to16 ? 2 * U * check_abs(ref) + tol * mag[i] : tol * mag[i];
		if (!(check_abs(got - ref) <= t) || (relu && got < 0))
			bad = i;
	}
	if (bad < (size_t)M * N)
		check_fail(name, "[%zu] fused %.9g, apart %.9g", bad, to16 ? widen(Z16[bad]) : Z[bad],
		     to16 ? widen(want16[bad]) : want[bad]);
	else
		check_ok(name);
	void *all[] = {A, W, bias, Z, want, mag, A16, W16, Z16, want16};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		tr_math_free(m, all[i]);
}

int main(void)
{
	check_rng = 0x2545f4914f6cdd1dull; /* the seed this test always had */
	char err[256] = "";
	if (tr_math_open(&m, TR_DEVICE_CPU, 0, 1, err, sizeof err) < 0) {
		printf("FAIL open: %s\n", err);
		return 1;
	}
	if (tr_math_bf16_check(m, err, sizeof err) < 0) {
		printf("SKIP: %s\n", err);
		tr_math_close(m);
		return 77;
	}
	/* the trainer's three layouts: forward (B transposed), the input's
	 * gradient (neither), the weights' gradient (A transposed); odd sizes */
	check_gemm("gemm forward", 0, 1, 37, 29, 131);
	check_gemm("gemm input gradient", 0, 0, 37, 131, 29);
	check_gemm("gemm weight gradient", 1, 0, 29, 131, 37);
	check_gemm("gemm both transposed", 1, 1, 17, 23, 45);
	check_dense("dense layer, ReLU, bf16 output", 1, 1);
	check_dense("dense layer, fp32 output", 0, 0);
	check_dense("dense layer, ReLU, fp32 output", 1, 0);
	test_step(2);
	test_step(1);
	if (tr_math_sync(m) != 0)
		check_fail("sync", "a bf16 GEMM failed");
	else
		check_ok("sync");
	tr_math_close(m);
	return check_summary();
}

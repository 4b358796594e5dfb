/*
 * test_train_math_cuda.c — the trainer's CUDA math backend against the CPU
 * one: every operation of backend.h run on both with the same random inputs
 * (a fixed-seed xorshift), the results compared within float tolerance
 * (the NaN check exactly);
 * and the MLP's backward with its input gradient (mlp.h) on both; under
 * --precision bf16, the rounding bit for bit, cublasGemmEx on bf16
 * operands against the CPU's fp32 GEMM of the same rounded operands, and
 * a bf16 training step on both (where the CPU has bf16 GEMMs).
 *
 * Built only with --with-cuda; first loads cuBLAS as the backend does
 * (every function found: no device needed), then exits 77 (skip) when no
 * CUDA device can be opened. Plain C with one "ok NAME" / "FAIL NAME: detail" line per check
 * and a summary; exits 1 on any failure. It uses only backend.h and
 * math_cuda.h, so it needs no CUDA headers. No <math.h> either: with -I trainer that name is ours.
 */
#include "../trainer/backend.h"
#include "../trainer/math_cuda.h"
#include "../trainer/mlp.h"
#include "../trainer/optim.h"
#include "check_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-4
#define ATOL 1e-5

static tr_math *cpu, *gpu;

static float *random_host(size_t n, float lo, float hi)
{
	float *h = malloc((n ? n : 1) * sizeof *h);
	if (!h) {
		printf("FAIL setup: out of host memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		h[i] = check_uniform(lo, hi);
	return h;
}


/* A buffer in both backends holding the same values. */
typedef struct pair {
	float *c, *g;
	size_t n;
} pair;

static pair upload(const float *h, size_t n)
{
	pair p = {tr_math_alloc(cpu, n), tr_math_alloc(gpu, n), n};
	if (!p.c || !p.g || tr_math_from_host(cpu, p.c, h, n) < 0 ||
	    tr_math_from_host(gpu, p.g, h, n) < 0) {
		printf("FAIL setup: cannot allocate or fill %zu floats\n", n);
		exit(1);
	}
	return p;
}

static void release(pair p)
{
	tr_math_free(cpu, p.c);
	tr_math_free(gpu, p.g);
}

/* Reads both copies back into fresh host arrays. */
static void download(pair p, float **hc, float **hg)
{
	*hc = malloc((p.n ? p.n : 1) * sizeof(float));
	*hg = malloc((p.n ? p.n : 1) * sizeof(float));
	if (!*hc || !*hg || tr_math_to_host(cpu, *hc, p.c, p.n) < 0 ||
	    tr_math_to_host(gpu, *hg, p.g, p.n) < 0) {
		printf("FAIL setup: cannot read back %zu floats\n", p.n);
		exit(1);
	}
}

/* |gpu - cpu| <= RTOL |cpu| + atol for all n; reports the first miss. */
static int close_enough(const char *name, const float *want, const float *got, size_t n,
                        double atol)
{
	for (size_t i = 0; i < n; i++) {
		double d = check_abs((double)got[i] - (double)want[i]);
		if (!(d <= RTOL * check_abs(want[i]) + atol)) {
			check_fail(name, "[%zu] cuda %.9g, cpu %.9g (of %zu)", i, got[i], want[i], n);
			return 0;
		}
	}
	return 1;
}

/* Compares a pair and prints the result line. */
static void check_pair(const char *name, pair p, double atol)
{
	float *hc, *hg;
	download(p, &hc, &hg);
	if (close_enough(name, hc, hg, p.n, atol))
		check_ok(name);
	free(hc);
	free(hg);
}

static void test_alloc_zero(void)
{
	size_t n = 100003;
	float *d = tr_math_alloc(gpu, n), *h = random_host(n, 1.0f, 2.0f);
	if (!d) {
		check_fail("alloc_zeroed", "tr_math_alloc returned NULL");
		free(h);
		return;
	}
	size_t bad = n;
	if (tr_math_to_host(gpu, h, d, n) < 0)
		check_fail("alloc_zeroed", "tr_math_to_host failed");
	else {
		for (size_t i = 0; i < n && bad == n; i++)
			if (h[i] != 0.0f)
				bad = i;
		if (bad < n)
			check_fail("alloc_zeroed", "[%zu] = %g", bad, h[bad]);
		else
			check_ok("alloc_zeroed");
	}
	tr_math_free(gpu, d);
	free(h);

	float *pinned = tr_math_host_alloc(gpu, 4097);
	bad = 0;
	for (size_t i = 0; pinned && i < 4097; i++)
		bad |= pinned[i] != 0.0f;
	if (!pinned || bad)
		check_fail("host_alloc_zeroed", pinned ? "not zero" : "NULL");
	else
		check_ok("host_alloc_zeroed");
	tr_math_host_free(gpu, pinned);
	tr_math_free(gpu, NULL);
	tr_math_host_free(gpu, NULL);
}

static void test_zero(void)
{
	size_t n = 5000;
	float *h = random_host(n, -1.0f, 1.0f);
	pair p = upload(h, n);
	tr_math_zero(cpu, p.c + 123, 4000);
	tr_math_zero(gpu, p.g + 123, 4000);
	tr_math_zero(gpu, p.g, 0);
	float *hc, *hg;
	download(p, &hc, &hg);
	size_t bad = n;
	for (size_t i = 0; i < n && bad == n; i++)
		if (hg[i] != (i >= 123 && i < 4123 ? 0.0f : h[i]))
			bad = i;
	if (bad < n)
		check_fail("zero", "[%zu] = %g", bad, hg[bad]);
	else if (close_enough("zero", hc, hg, n, 0.0))
		check_ok("zero");
	free(hc);
	free(hg);
	free(h);
	release(p);
}

/* C = alpha op(A) op(B) + beta C on both, with `pad` extra columns in every
 * ld and every matrix starting `off` floats into its buffer (a submatrix);
 * the padding must come back untouched. Then accumulates with beta = 1. */
static void gemm_case(int ta, int tb, int M, int N, int K, int pad, int off)
{
	int ra = ta ? K : M, ca = ta ? M : K, rb = tb ? N : K, cb = tb ? K : N;
	int lda = ca + pad, ldb = cb + pad, ldc = N + pad;
	size_t na = off + (size_t)ra * lda, nb = off + (size_t)rb * ldb, nc = off + (size_t)M * ldc;
	float *ha = random_host(na, -1.0f, 1.0f), *hb = random_host(nb, -1.0f, 1.0f);
	float *hc = random_host(nc, -1.0f, 1.0f);
	pair A = upload(ha, na), B = upload(hb, nb), C = upload(hc, nc);
	char name[96];
	double atol = ATOL * (K + 1);

	snprintf(name, sizeof name, "gemm %c%c %dx%dx%d ld+%d off %d", ta ? 'T' : 'N',
	         tb ? 'T' : 'N', M, N, K, pad, off);
	tr_gemm(cpu, ta, tb, M, N, K, 0.7f, A.c + off, lda, B.c + off, ldb, 0.0f, C.c + off, ldc);
	tr_gemm(gpu, ta, tb, M, N, K, 0.7f, A.g + off, lda, B.g + off, ldb, 0.0f, C.g + off, ldc);
	check_pair(name, C, atol);

	snprintf(name, sizeof name, "gemm %c%c %dx%dx%d ld+%d off %d beta=1", ta ? 'T' : 'N',
	         tb ? 'T' : 'N', M, N, K, pad, off);
	tr_gemm(cpu, ta, tb, M, N, K, -1.3f, A.c + off, lda, B.c + off, ldb, 1.0f, C.c + off, ldc);
	tr_gemm(gpu, ta, tb, M, N, K, -1.3f, A.g + off, lda, B.g + off, ldb, 1.0f, C.g + off, ldc);
	check_pair(name, C, 2 * atol);

	release(A);
	release(B);
	release(C);
	free(ha);
	free(hb);
	free(hc);
}

static void test_gemm(void)
{
	gemm_case(0, 0, 37, 23, 51, 0, 0);
	gemm_case(0, 1, 37, 23, 51, 3, 0);
	gemm_case(1, 0, 37, 23, 51, 5, 7);
	gemm_case(1, 1, 37, 23, 51, 7, 13);
	gemm_case(0, 0, 64, 1, 128, 2, 1);
	gemm_case(1, 0, 1, 65, 3, 0, 0);
	gemm_case(0, 1, 256, 300, 784, 0, 0); /* a layer's forward */
	gemm_case(1, 0, 784, 300, 256, 4, 3); /* and its weight gradient */
}

static void test_bias_act(int rows, int cols, int relu, const char *name)
{
	size_t n = (size_t)rows * cols;
	float *hz = random_host(n, -1.0f, 1.0f), *hb = random_host(cols, -0.5f, 0.5f);
	pair Z = upload(hz, n), b = upload(hb, cols);
	tr_bias_act(cpu, Z.c, b.c, rows, cols, relu);
	tr_bias_act(gpu, Z.g, b.g, rows, cols, relu);
	check_pair(name, Z, ATOL);
	release(Z);
	release(b);
	free(hz);
	free(hb);
}

/* The ReLU's mask and the bias gradient in one pass: both results. */
static void test_relu_bias_backward(int rows, int cols, const char *name)
{
	size_t n = (size_t)rows * cols;
	float *hd = random_host(n, -1.0f, 1.0f), *ha = random_host(n, -1.0f, 1.0f);
	float *hb = random_host((size_t)cols, 5.0f, 6.0f);
	for (size_t i = 0; i < n; i += 7)
		ha[i] = 0.0f; /* exactly zero: the gradient is cut there too */
	pair dZ = upload(hd, n), A = upload(ha, n), db = upload(hb, cols); /* db overwritten */
	tr_relu_bias_backward(cpu, dZ.c, A.c, rows, cols, db.c);
	tr_relu_bias_backward(gpu, dZ.g, A.g, rows, cols, db.g);
	char what[96];
	snprintf(what, sizeof what, "%s mask", name);
	check_pair(what, dZ, 0.0);
	snprintf(what, sizeof what, "%s bias", name);
	check_pair(what, db, ATOL + 1e-6 * rows);
	release(dZ);
	release(A);
	release(db);
	free(hd);
	free(ha);
	free(hb);
}

static void test_softmax_xent(int rows, int K)
{
	size_t n = (size_t)rows * K;
	float *hz = random_host(n, -4.0f, 4.0f), zeros[2] = {0.0f, 0.0f};
	int64_t *hl = malloc((size_t)rows * sizeof *hl);
	if (!hl) {
		printf("FAIL setup: out of host memory\n");
		exit(1);
	}
	for (int r = 0; r < rows; r++) {
		hl[r] = (int64_t)(check_xorshift() % (uint64_t)K);
		if (r % 3 == 0) { /* a tie for the largest: the first one counts */
			int a = (int)(check_xorshift() % (uint64_t)K);
			int b = (int)(check_xorshift() % (uint64_t)K);
			hz[(size_t)r * K + a] = hz[(size_t)r * K + b] = 9.0f;
			hl[r] = r % 2 ? a : b;
		} else if (r % 3 == 1) { /* the label is the largest */
			hz[(size_t)r * K + hl[r]] = 9.5f;
		}
	}
	/* labels are int64: moved as twice as many floats, bit for bit */
	void *lc = tr_math_alloc_bytes(cpu, (size_t)rows * 8);
	void *lg = tr_math_alloc_bytes(gpu, (size_t)rows * 8);
	if (!lc || !lg || tr_math_from_host(cpu, lc, (const float *)hl, (size_t)rows * 2) < 0 ||
	    tr_math_from_host(gpu, lg, (const float *)hl, (size_t)rows * 2) < 0) {
		printf("FAIL setup: labels\n");
		exit(1);
	}
	float *hb = random_host((size_t)K, 5.0f, 6.0f);
	pair Z = upload(hz, n), D = upload(hz, n), S = upload(zeros, 2), B = upload(hb, K);
	char name[64];

	/* without dlogits, then with: the stats add up over the calls */
	tr_softmax_xent(cpu, Z.c, lc, rows, K, NULL, NULL, S.c);
	tr_softmax_xent(gpu, Z.g, lg, rows, K, NULL, NULL, S.g);
	float *sc, *sg;
	download(S, &sc, &sg);
	snprintf(name, sizeof name, "softmax_xent %dx%d loss", rows, K);
	if (close_enough(name, sc, sg, 1, ATOL))
		check_ok(name);
	snprintf(name, sizeof name, "softmax_xent %dx%d correct", rows, K);
	if (sg[1] != sc[1])
		check_fail(name, "cuda %g, cpu %g", sg[1], sc[1]);
	else if (sc[1] < rows / 3)
		check_fail(name, "only %g of %d rows correct: the test data is not what it means", sc[1],
		     rows);
	else
		check_ok(name);
	free(sc);
	free(sg);
	/* dlogits is (rows x K) of the same random values: all of it is written */
	tr_softmax_xent(cpu, Z.c, lc, rows, K, D.c, B.c, S.c);
	tr_softmax_xent(gpu, Z.g, lg, rows, K, D.g, B.g, S.g);
	snprintf(name, sizeof name, "softmax_xent %dx%d dlogits", rows, K);
	check_pair(name, D, ATOL);
	snprintf(name, sizeof name, "softmax_xent %dx%d bias gradient", rows, K);
	check_pair(name, B, ATOL + 1e-6 * rows);
	/* in place: the gradient over the logits it came from, as the CPU allows */
	pair E = upload(hz, n);
	tr_softmax_xent(cpu, E.c, lc, rows, K, E.c, NULL, S.c);
	tr_softmax_xent(gpu, E.g, lg, rows, K, E.g, NULL, S.g);
	snprintf(name, sizeof name, "softmax_xent %dx%d in place", rows, K);
	check_pair(name, E, ATOL);
	release(E);
	snprintf(name, sizeof name, "softmax_xent %dx%d stats thrice", rows, K);
	check_pair(name, S, ATOL);
	/* the logits are left alone */
	snprintf(name, sizeof name, "softmax_xent %dx%d logits kept", rows, K);
	check_pair(name, Z, 0.0);

	tr_math_free(cpu, lc);
	tr_math_free(gpu, lg);
	release(Z);
	release(D);
	release(S);
	release(B);
	free(hz);
	free(hb);
	free(hl);
}

static void test_sgd(size_t n, const char *name)
{
	float *hp = random_host(n, -1.0f, 1.0f), *hv = random_host(n, -0.1f, 0.1f);
	pair P = upload(hp, n), V = upload(hv, n);
	tr_sgd_args a = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f, .grad_scale = 0.5f};
	for (int step = 0; step < 4; step++) {
		float *hg = random_host(n, -2.0f, 2.0f);
		pair G = upload(hg, n);
		tr_sgd_step(cpu, P.c, G.c, V.c, n, &a);
		tr_sgd_step(gpu, P.g, G.g, V.g, n, &a);
		release(G);
		free(hg);
	}
	char full[64];
	snprintf(full, sizeof full, "%s param", name);
	check_pair(full, P, ATOL);
	snprintf(full, sizeof full, "%s velocity", name);
	check_pair(full, V, ATOL);
	release(P);
	release(V);
	free(hp);
	free(hv);
}

static void test_adam(size_t n, const char *name)
{
	float *hp = random_host(n, -1.0f, 1.0f);
	float *z = random_host(n, 0.0f, 0.0f); /* all zero, as the moments start */
	pair P = upload(hp, n), M1 = upload(z, n), M2 = upload(z, n);
	tr_adam_args a = {.lr = 1e-3f,
	                  .beta1 = 0.9f,
	                  .beta2 = 0.999f,
	                  .eps = 1e-8f,
	                  .weight_decay = 1e-4f,
	                  .grad_scale = 0.25f};
	float p1 = 1.0f, p2 = 1.0f;
	for (int step = 1; step <= 5; step++) {
		p1 *= a.beta1;
		p2 *= a.beta2;
		a.bias1 = 1.0f - p1;
		a.bias2 = 1.0f - p2;
		float *hg = random_host(n, -2.0f, 2.0f);
		pair G = upload(hg, n);
		tr_adam_step(cpu, P.c, G.c, M1.c, M2.c, n, &a);
		tr_adam_step(gpu, P.g, G.g, M1.g, M2.g, n, &a);
		release(G);
		free(hg);
	}
	char full[64];
	snprintf(full, sizeof full, "%s param", name);
	check_pair(full, P, ATOL);
	snprintf(full, sizeof full, "%s m1", name);
	check_pair(full, M1, ATOL);
	snprintf(full, sizeof full, "%s m2", name);
	check_pair(full, M2, ATOL);
	release(P);
	release(M1);
	release(M2);
	free(hp);
	free(z);
}

/* The MLP written against backend.h, on both: forward, loss, backward with
 * the input gradient over columns that span both feature blocks. */
static void test_mlp_dinput(void)
{
	enum { ROWS = 64, W1 = 24, W2 = 16 };
	static const int sizes[] = {W1 + W2, 32, 16, 10};
	tr_mlp nc, ng;
	/* the parameters and gradients, lent (in a run: the parameter store's) */
	size_t np = tr_mlp_param_count(sizes, 3);
	float *pz = calloc(np + TR_MLP_EXTRA, sizeof *pz);
	pair P = upload(pz, np), GR = upload(pz, np + TR_MLP_EXTRA);
	free(pz);
	if (tr_mlp_init(&nc, cpu, sizes, 3, ROWS, P.c, GR.c) < 0 ||
	    tr_mlp_init(&ng, gpu, sizes, 3, ROWS, P.g, GR.g) < 0 ||
	    tr_mlp_want_dinput(&nc, 8, W1) < 0 || tr_mlp_want_dinput(&ng, 8, W1) < 0) {
		printf("FAIL setup: mlp\n");
		exit(1);
	}
	float *hp = random_host(nc.nparams, -0.3f, 0.3f);
	float *hx1 = random_host((size_t)ROWS * W1, -1.0f, 1.0f);
	float *hx2 = random_host((size_t)ROWS * W2, -1.0f, 1.0f);
	int64_t hl[ROWS];
	for (int r = 0; r < ROWS; r++)
		hl[r] = (int64_t)(check_xorshift() % 10u);
	void *lc = tr_math_alloc_bytes(cpu, sizeof hl), *lg = tr_math_alloc_bytes(gpu, sizeof hl);
	pair X1 = upload(hx1, (size_t)ROWS * W1), X2 = upload(hx2, (size_t)ROWS * W2);
	float zeros[2] = {0, 0};
	pair S = upload(zeros, 2);
	if (!lc || !lg || tr_math_from_host(cpu, lc, (const float *)hl, ROWS * 2) < 0 ||
	    tr_math_from_host(gpu, lg, (const float *)hl, ROWS * 2) < 0 ||
	    tr_math_from_host(cpu, nc.params, hp, nc.nparams) < 0 ||
	    tr_math_from_host(gpu, ng.params, hp, ng.nparams) < 0) {
		printf("FAIL setup: mlp inputs\n");
		exit(1);
	}
	tr_input ic = {.nparts = 2, .part = {X1.c, X2.c}, .width = {W1, W2}, .labels = lc,
	               .rows = ROWS};
	tr_input ig = ic;
	ig.part[0] = X1.g;
	ig.part[1] = X2.g;
	ig.labels = lg;
	tr_mlp_forward(&nc, &ic);
	tr_mlp_forward(&ng, &ig);
	tr_mlp_loss(&nc, &ic, S.c, 1);
	tr_mlp_loss(&ng, &ig, S.g, 1);
	tr_mlp_backward(&nc, &ic, NULL, NULL);
	tr_mlp_backward(&ng, &ig, NULL, NULL);
	pair G = {nc.grads, ng.grads, nc.nparams}, D = {nc.dinput, ng.dinput, (size_t)ROWS * W1};
	check_pair("mlp backward grads", G, ATOL);
	check_pair("mlp backward dinput", D, ATOL);
	release(X1);
	release(X2);
	release(S);
	tr_math_free(cpu, lc);
	tr_math_free(gpu, lg);
	tr_mlp_free(&nc);
	tr_mlp_free(&ng);
	release(P);
	release(GR);
	free(hp);
	free(hx1);
	free(hx2);
}

/* ---- --precision bf16 ---- */

/* Host bf16 bits of n floats, rounded by the CPU backend (which needs no
 * bf16 instructions for that). */
static uint16_t *round_host(const float *h, size_t n)
{
	uint16_t *r = malloc((n ? n : 1) * sizeof *r);
	if (!r) {
		printf("FAIL setup: out of host memory\n");
		exit(1);
	}
	tr_to_bf16(cpu, r, h, n);
	return r;
}

static float widen(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* The GPU's rounding against the CPU's, bit for bit (ties, NaN, the
 * largest float, a tail). */
static void test_to_bf16(void)
{
	size_t n = 100003;
	float *h = random_host(n, -3.0f, 3.0f);
	uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0xffc00000u, 0x80000000u};
	memcpy(h, special, sizeof special);
	uint16_t *want = round_host(h, n), *got = malloc(n * sizeof *got);
	pair X = upload(h, n);
	uint16_t *d = tr_math_alloc_bytes(gpu, n * sizeof *d);
	if (!got || !d) {
		printf("FAIL setup: bf16 buffers\n");
		exit(1);
	}
	tr_to_bf16(gpu, d, X.g, n);
	/* the bits back as floats: n/2 floats hold n bf16 (n odd: one more) */
	if (tr_math_to_host(gpu, (float *)got, (const float *)d, n / 2) < 0 ||
	    tr_math_sync(gpu) < 0)
		check_fail("to_bf16", "the GPU failed");
	else if (memcmp(got, want, (n / 2) * 2 * sizeof *got))
		check_fail("to_bf16", "GPU and CPU roundings differ");
	else
		check_ok("to_bf16");
	release(X);
	tr_math_free(gpu, d);
	free(h);
	free(want);
	free(got);
}

/* cublasGemmEx on bf16 operands against the CPU's fp32 GEMM of the same
 * (rounded, widened) operands: the products are exact in fp32 on both,
 * only the order of the fp32 sums differs, each sum off by at most K 2^-24
 * of (|A||B|)_ij, itself at most K here (|a|, |b| <= 1): within RTOL of
 * the result plus K^2 2^-24. */
static void check_gemm_bf16(const char *name, int ta, int tb, int M, int N, int K)
{
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
	float *ha = random_host(na, -1, 1), *hb = random_host(nb, -1, 1);
	uint16_t *ra = round_host(ha, na), *rb = round_host(hb, nb);
	for (size_t i = 0; i < na; i++)
		ha[i] = widen(ra[i]);
	for (size_t i = 0; i < nb; i++)
		hb[i] = widen(rb[i]);
	pair A = upload(ha, na), B = upload(hb, nb);
	float *zeros = calloc(nc, sizeof *zeros);
	pair C = upload(zeros, nc);
	uint16_t *a16 = tr_math_alloc_bytes(gpu, (na + 1) * 2), *b16 = tr_math_alloc_bytes(gpu, (nb + 1) * 2);
	if (!zeros || !a16 || !b16) {
		printf("FAIL setup: bf16 GEMM buffers\n");
		exit(1);
	}
	tr_to_bf16(gpu, a16, A.g, na);
	tr_to_bf16(gpu, b16, B.g, nb);
	int lda = ta ? M : K, ldb = tb ? K : N;
	tr_gemm(cpu, ta, tb, M, N, K, 1.0f, A.c, lda, B.c, ldb, 0.0f, C.c, N);
	tr_gemm_bf16(gpu, ta, tb, M, N, K, a16, lda, b16, ldb, 0.0f, C.g, N);
	check_pair(name, C, (double)K * K / 16777216.0);
	release(A);
	release(B);
	release(C);
	tr_math_free(gpu, a16);
	tr_math_free(gpu, b16);
	free(ha);
	free(hb);
	free(ra);
	free(rb);
	free(zeros);
}

/* One training step of the MLP under bf16 on both backends (the GPU's
 * bias/ReLU and ReLU-backward passes then rounding, and SGD writing the
 * bf16 weights): when the CPU has bf16 GEMMs, the two round the same
 * operands the same way and differ only in the order of fp32 sums. */
static void test_mlp_bf16(void)
{
	char err[256];
	if (tr_math_bf16_check(cpu, err, sizeof err) < 0) {
		printf("ok mlp bf16 step # skipped: %s\n", err);
		return;
	}
	enum { ROWS = 64, W = 40 };
	static const int sizes[] = {W, 48, 32, 10};
	size_t np = tr_mlp_param_count(sizes, 3);
	float *hp = random_host(np, -0.2f, 0.2f), *hx = random_host((size_t)ROWS * W, 0, 1);
	float *z = calloc(np + TR_MLP_EXTRA, sizeof *z);
	pair P = upload(hp, np), GR = upload(z, np + TR_MLP_EXTRA), V = upload(z, np);
	pair X = upload(hx, (size_t)ROWS * W), S = upload(z, 2);
	int64_t hl[ROWS];
	for (int r = 0; r < ROWS; r++)
		hl[r] = (int64_t)(check_xorshift() % 10u);
	void *lc = tr_math_alloc_bytes(cpu, sizeof hl), *lg = tr_math_alloc_bytes(gpu, sizeof hl);
	uint16_t *p16c = tr_math_alloc_bytes(cpu, np * 2), *p16g = tr_math_alloc_bytes(gpu, np * 2);
	tr_mlp nc, ng;
	tr_optim oc, og;
	tr_optim_config cfg = {.kind = TR_OPT_SGD, .lr = 0.1f, .momentum = 0.9f, .scale = 1.0f};
	if (!z || !lc || !lg || !p16c || !p16g ||
	    tr_math_from_host(cpu, lc, (const float *)hl, ROWS * 2) < 0 ||
	    tr_math_from_host(gpu, lg, (const float *)hl, ROWS * 2) < 0 ||
	    tr_mlp_init(&nc, cpu, sizes, 3, ROWS, P.c, GR.c) < 0 ||
	    tr_mlp_init(&ng, gpu, sizes, 3, ROWS, P.g, GR.g) < 0 ||
	    tr_mlp_use_bf16(&nc, p16c, 1) < 0 || tr_mlp_use_bf16(&ng, p16g, 1) < 0 ||
	    tr_optim_init(&oc, cpu, np, &cfg, V.c, NULL) < 0 ||
	    tr_optim_init(&og, gpu, np, &cfg, V.g, NULL) < 0) {
		printf("FAIL setup: bf16 mlp\n");
		exit(1);
	}
	tr_optim_write16(&oc, p16c);
	tr_optim_write16(&og, p16g);
	tr_input ic = {.nparts = 1, .part = {X.c}, .width = {W}, .labels = lc, .rows = ROWS};
	tr_input ig = {.nparts = 1, .part = {X.g}, .width = {W}, .labels = lg, .rows = ROWS};
	for (int step = 0; step < 2; step++) { /* the second on the optimizer's bf16 weights */
		tr_mlp_forward(&nc, &ic);
		tr_mlp_forward(&ng, &ig);
		tr_mlp_loss(&nc, &ic, S.c, 1);
		tr_mlp_loss(&ng, &ig, S.g, 1);
		tr_mlp_backward(&nc, &ic, NULL, NULL);
		tr_mlp_backward(&ng, &ig, NULL, NULL);
		tr_optim_step(&oc, P.c, GR.c, 1.0f / ROWS, (uint64_t)step);
		tr_optim_step(&og, P.g, GR.g, 1.0f / ROWS, (uint64_t)step);
	}
	pair G = {GR.c, GR.g, np};
	check_pair("mlp bf16 step gradients", G, 1e-4);
	check_pair("mlp bf16 step parameters", P, 1e-5);
	tr_mlp_free(&nc);
	tr_mlp_free(&ng);
	release(P);
	release(GR);
	release(V);
	release(X);
	release(S);
	tr_math_free(cpu, lc);
	tr_math_free(gpu, lg);
	tr_math_free(cpu, p16c);
	tr_math_free(gpu, p16g);
	free(hp);
	free(hx);
	free(z);
}

/* Whether x[0, n) holds a NaN or an infinity, on one backend, as one piece. */
static int any_bad(tr_math *m, const float *x, size_t n)
{
	unsigned char bad = 0;
	int k = tr_math_nonfinite(m, x, n, n ? n : 1, &bad);
	return k < 0 ? k : bad;
}

/* tr_math_nonfinite on both backends: a NaN or an infinity anywhere in a
 * long vector (the first, the last, a middle element: several blocks of
 * the grid) is found, and FLT_MAX, denormals and -0 are not taken for one;
 * in pieces, exactly the pieces holding one are flagged, the last piece
 * short, as the CPU flags them. */
static void test_nonfinite(void)
{
	const size_t n = 5000011, per = 65536, pieces = (n + per - 1) / per;
	float *h = random_host(n, -1.0f, 1.0f);
	h[7] = 3.4028235e38f; /* FLT_MAX */
	h[8] = -3.4028235e38f;
	h[9] = 1e-45f; /* a denormal */
	h[10] = -0.0f;
	const size_t at[] = {0, n / 2 + 3, n - 1};
	const uint32_t bits[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x7f800001u};
	pair p = upload(h, n);
	int ok = any_bad(cpu, p.c, n) == 0 && any_bad(gpu, p.g, n) == 0;
	if (!ok)
		check_fail("nonfinite", "finite values taken for NaN or infinity");
	for (size_t i = 0; ok && i < sizeof at / sizeof *at; i++)
		for (size_t k = 0; ok && k < sizeof bits / sizeof *bits; k++) {
			float v, keep = h[at[i]];
			memcpy(&v, &bits[k], 4);
			h[at[i]] = v;
			if (tr_math_from_host(gpu, p.g, h, n) < 0 || tr_math_from_host(cpu, p.c, h, n) < 0)
				ok = 0;
			int c = any_bad(cpu, p.c, n), g = any_bad(gpu, p.g, n);
			if (c != 1 || g != 1) {
				check_fail("nonfinite", "bits %08x at [%zu]: cpu %d, cuda %d", bits[k],
				           at[i], c, g);
				ok = 0;
			}
			h[at[i]] = keep;
		}
	/* pieces: bad values in the first, the 17th (two of them) and the last */
	h[3] = 1.0f / 0.0f;
	h[17 * per + 5] = h[17 * per + 6] = 0.0f / 0.0f;
	h[n - 1] = -1.0f / 0.0f;
	unsigned char *fc = calloc(pieces, 1), *fg = calloc(pieces, 1);
	if (!fc || !fg || tr_math_from_host(gpu, p.g, h, n) < 0 || tr_math_from_host(cpu, p.c, h, n) < 0) {
		printf("FAIL setup: flags\n");
		exit(1);
	}
	int kc = tr_math_nonfinite(cpu, p.c, n, per, fc), kg = tr_math_nonfinite(gpu, p.g, n, per, fg);
	if (ok && (kc != 3 || kg != 3 || memcmp(fc, fg, pieces) || !fg[0] || !fg[17] ||
	           !fg[pieces - 1])) {
		check_fail("nonfinite", "pieces: cpu %d, cuda %d bad (want 3: 0, 17, %zu)", kc, kg,
		           pieces - 1);
		ok = 0;
	}
	/* a range that stops short of the bad element says finite */
	if (ok && (any_bad(gpu, p.g + 1, n - 2) != 1 || any_bad(gpu, p.g + 4, 17 * per) != 0 ||
	           any_bad(gpu, p.g + n - 1, 1) != 1 || any_bad(gpu, p.g, 0) != 0)) {
		check_fail("nonfinite", "a range's bounds are not kept");
		ok = 0;
	}
	if (ok)
		check_ok("nonfinite");
	release(p);
	free(fc);
	free(fg);
	free(h);
}

static void test_stats(void)
{
	int rc = tr_math_sync(gpu);
	if (rc != 0)
		check_fail("sync", "tr_math_sync returned %d", rc);
	else
		check_ok("sync");
	tr_math_stats s;
	tr_math_stats_get(gpu, &s);
	if (!(s.gemm_flops > 0) || !(s.gemm_seconds > 0))
		check_fail("gemm_stats", "gemm_flops %g, gemm_seconds %g", s.gemm_flops, s.gemm_seconds);
	else
		check_ok("gemm_stats");
}

int main(void)
{
	char err[256] = "";
	/* cuBLAS is loaded at open (cublas_dl.h): found, with every function
	 * the backend calls, device or not */
	int rc = tr_cuda_blas_probe(err, sizeof err);
	if (rc < 0) {
		printf("FAIL cublas_load: %s (%d)\n", err, rc);
		return 1;
	}
	printf("ok cublas_load\n");
	rc = tr_math_open(&gpu, TR_DEVICE_CUDA, 0, 0, err, sizeof err);
	if (rc == -ENODEV || rc == -ENOTSUP) {
		printf("SKIP: no CUDA device\n");
		return 77;
	}
	if (rc < 0) {
		printf("FAIL open_cuda: %s (%d)\n", err, rc);
		return 1;
	}
	if ((rc = tr_math_open(&cpu, TR_DEVICE_CPU, 0, 1, err, sizeof err)) < 0) {
		printf("FAIL open_cpu: %s (%d)\n", err, rc);
		return 1;
	}
	if (tr_math_device(gpu) != TR_DEVICE_CUDA || tr_math_device(cpu) != TR_DEVICE_CPU)
		check_fail("device", "tr_math_device does not say what was opened");
	else
		check_ok("device");

	test_alloc_zero();
	test_zero();
	test_gemm();
	test_bias_act(33, 70, 0, "bias_act");
	test_bias_act(33, 70, 1, "bias_act relu");
	test_bias_act(600000, 3, 1, "bias_act relu tall"); /* more rows than one grid covers */
	test_relu_bias_backward(300, 45, "relu_bias_backward");
	test_relu_bias_backward(1, 1, "relu_bias_backward 1x1");
	test_relu_bias_backward(4096, 10, "relu_bias_backward tall");
	test_relu_bias_backward(8, 70000, "relu_bias_backward wide");
	test_relu_bias_backward(3001, 1000, "relu_bias_backward large");
	test_softmax_xent(100, 10);
	test_softmax_xent(257, 70); /* more classes than a warp has lanes */
	test_softmax_xent(3, 1);
	test_sgd(1001, "sgd");
	test_sgd(3000001, "sgd large");
	test_adam(1001, "adam");
	test_adam(3000001, "adam large");
	test_mlp_dinput();
	test_nonfinite();
	test_to_bf16();
	if (tr_math_bf16_check(gpu, err, sizeof err) < 0)
		check_fail("bf16_check", "%s", err); /* a GPU's are cuBLAS's: always there */
	else
		check_ok("bf16_check");
	check_gemm_bf16("gemm_bf16 forward", 0, 1, 128, 256, 784);
	check_gemm_bf16("gemm_bf16 input gradient", 0, 0, 128, 784, 256);
	check_gemm_bf16("gemm_bf16 weight gradient", 1, 0, 256, 784, 128);
	check_gemm_bf16("gemm_bf16 odd", 1, 1, 37, 29, 131);
	test_mlp_bf16();
	test_stats();

	tr_math_close(cpu);
	tr_math_close(gpu);
	return check_summary();
}

/*
 * math_cpu.c — the CPU backend of backend.h (OpenBLAS's cblas_sgemm, oneDNN's
 * bf16 matmul through math_bf16.c, and plain loops the compiler
 * vectorises), and the dispatch to the CUDA backend for a tr_math opened
 * on a GPU. On the CPU "backend memory" is host memory,
 * so copies are memcpy and sync is a no-op.
 */
#include "config.h"
#include "backend.h"
#include "clock.h"
#include "half.h"
#include "math_bf16.h"
#include "bf16_vec.h"
#include "math_cpu16.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_CUDA
#include "math_cuda.h"
#define CUDA_DISPATCH(m, call)                                                                   \
	do {                                                                                     \
		if ((m)->cuda) {                                                                 \
			call;                                                                    \
			return;                                                                  \
		}                                                                                \
	} while (0)
#define CUDA_DISPATCH_RET(m, call)                                                               \
	do {                                                                                     \
		if ((m)->cuda)                                                                   \
			return call;                                                             \
	} while (0)
#else
#define CUDA_DISPATCH(m, call) ((void)0)
#define CUDA_DISPATCH_RET(m, call) ((void)0)
#endif

/* The elementwise loops are compiled for AVX-512, AVX2 and the baseline,
 * the best picked at load time (GCC's target_clones, an ifunc). GCC 12's
 * -O2 vectorises only loops whose trip count the vector width divides
 * (the "very cheap" cost model), i.e. none of these: vectorising is asked
 * for here, and trainer/local.mk compiles this file without errno for the
 * math functions (-fno-math-errno: Adam's sqrtf) and with no fused
 * multiply-adds (-ffp-contract=off: the AVX-512 clone has FMA, and a
 * contracted vector body beside a scalar tail rounded an element
 * differently by where a bucket's boundary fell, and one CPU differently
 * from another). (Scalar,
 * the ReLU mask alone took 10% of a step in branch mispredictions.) No
 * reduction is reordered: the results are those of the scalar loops. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* Denormals. Without weight decay, values that shrink towards zero become
 * denormal and every operation on them takes the slow microcode path (the
 * default run slowed by a quarter from its fourth epoch on). The CPU path
 * therefore computes with flush-to-zero (a denormal result becomes 0) and
 * denormals-are-zero (a denormal input reads as 0), as PyTorch does with
 * torch.set_flush_denormal(True).
 *
 * MXCSR is per thread and a thread inherits its creator's at creation only:
 * OpenBLAS (pthreads builds) creates its worker pool when the library is
 * loaded, before main, so the pool is shut down here, after setting the
 * calling thread's MXCSR, and is created again (by blas_thread_init, or by
 * the next BLAS call) from this thread, inheriting it. The two symbols are
 * weak: an OpenBLAS without them (an OpenMP build) still links, and there
 * only the calling thread is set. (Builds with CONSISTENT_FPCSR, Debian's
 * 0.3.21 among them, also hand the caller's MXCSR to the worker with each
 * job; the restart is for those without.) The loader's threads, started
 * after this, inherit it too (they only convert and copy floats). */
#ifdef __SSE__
#include <xmmintrin.h>
#define MXCSR_FTZ 0x8000u
#define MXCSR_DAZ 0x0040u
#endif
extern int blas_thread_shutdown_(void) __attribute__((weak));
extern int blas_thread_init(void) __attribute__((weak));

static void flush_denormals(void)
{
#ifdef __SSE__
	unsigned csr = _mm_getcsr();
	if ((csr & (MXCSR_FTZ | MXCSR_DAZ)) == (MXCSR_FTZ | MXCSR_DAZ))
		return;
	_mm_setcsr(csr | MXCSR_FTZ | MXCSR_DAZ);
	if (blas_thread_shutdown_ && blas_thread_init) {
		blas_thread_shutdown_();
		blas_thread_init();
	}
#endif
}

struct tr_math {
	tr_device device;
	tr_math_stats stats;
	int threads;          /* as opened (0: the libraries' choice)       */
	tr_bf16_gemms *bf16;  /* the CPU's bf16 GEMMs, once checked          */
	int failed;           /* a bf16 GEMM failed: tr_math_sync says -EIO  */
#ifdef HAVE_CUDA
	tr_cuda *cuda;
#endif
};

int tr_math_open(tr_math **out, tr_device device, int gpu, int threads, char *err, size_t errlen)
{
	*out = NULL;
	tr_math *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->device = device;
	m->threads = threads;
	if (device == TR_DEVICE_CUDA) {
#ifdef HAVE_CUDA
		int rc = tr_cuda_open(&m->cuda, gpu, err, errlen);
		if (rc < 0) {
			free(m);
			return rc;
		}
#else
		snprintf(err, errlen, "--device cuda: this build has no CUDA (configure --with-cuda)");
		free(m);
		return -ENOTSUP;
#endif
	} else {
		flush_denormals();
		if (threads > 0)
			openblas_set_num_threads(threads);
	}
	*out = m;
	return 0;
}

void tr_math_close(tr_math *m)
{
	if (!m)
		return;
#ifdef HAVE_CUDA
	tr_cuda_close(m->cuda);
#endif
	tr_bf16_gemms_close(m->bf16);
	free(m);
}

tr_device tr_math_device(const tr_math *m) { return m->device; }

void *tr_math_alloc_bytes(tr_math *m, size_t bytes)
{
	CUDA_DISPATCH_RET(m, tr_cuda_alloc_bytes(m->cuda, bytes));
	/* 64-byte aligned for the vector loops and OpenBLAS */
	size_t size = (bytes + 63) / 64 * 64;
	void *p = aligned_alloc(64, size ? size : 64);
	if (p)
		memset(p, 0, size ? size : 64);
	return p;
}

float *tr_math_alloc(tr_math *m, size_t n) { return tr_math_alloc_bytes(m, n * sizeof(float)); }

void tr_math_free(tr_math *m, void *p)
{
	CUDA_DISPATCH(m, tr_cuda_free(m->cuda, p));
	free(p);
}

float *tr_math_host_alloc(tr_math *m, size_t n)
{
	CUDA_DISPATCH_RET(m, tr_cuda_host_alloc(m->cuda, n));
	return calloc(n ? n : 1, sizeof(float));
}

void tr_math_host_free(tr_math *m, float *p)
{
	CUDA_DISPATCH(m, tr_cuda_host_free(m->cuda, p));
	free(p);
}

int tr_math_to_host(tr_math *m, float *dst_host, const float *src, size_t n)
{
	CUDA_DISPATCH_RET(m, tr_cuda_to_host(m->cuda, dst_host, src, n));
	if (dst_host != src)
		memcpy(dst_host, src, n * sizeof(float));
	return 0;
}

int tr_math_from_host(tr_math *m, float *dst, const float *src_host, size_t n)
{
	CUDA_DISPATCH_RET(m, tr_cuda_from_host(m->cuda, dst, src_host, n));
	if (dst != src_host)
		memcpy(dst, src_host, n * sizeof(float));
	return 0;
}

void tr_math_zero(tr_math *m, float *p, size_t n)
{
	CUDA_DISPATCH(m, tr_cuda_zero(m->cuda, p, n));
	memset(p, 0, n * sizeof(float));
}

int tr_math_sync(tr_math *m)
{
	CUDA_DISPATCH_RET(m, tr_cuda_sync(m->cuda));
	int failed = m->failed;
	m->failed = 0;
	return failed ? -EIO : 0;
}

void tr_gemm(tr_math *m, int trans_a, int trans_b, int M, int N, int K, float alpha,
             const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	m->stats.gemm_flops += 2.0 * M * N * K;
	CUDA_DISPATCH(m, tr_cuda_gemm(m->cuda, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb,
	                              beta, C, ldc));
	double t0 = rio__now();
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
	            trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C,
	            ldc);
	m->stats.gemm_seconds += rio__now() - t0;
}

int tr_math_bf16_check(tr_math *m, char *err, size_t errlen)
{
#ifdef HAVE_CUDA
	if (m->cuda)
		return 0; /* cuBLAS: every GPU the backend runs on (sm_80 and up) */
#endif
	if (m->bf16)
		return 0;
	return tr_bf16_gemms_open(&m->bf16, m->threads, err, errlen);
}

const char *tr_math_bf16_kernels(const tr_math *m)
{
#ifdef HAVE_CUDA
	if (m->cuda)
		return "cuBLAS";
#endif
	return m->bf16 ? tr_bf16_cpu_kernels() : NULL;
}

void tr_gemm_bf16(tr_math *m, int trans_a, int trans_b, int M, int N, int K, const tr_bf16 *A,
                  int lda, const tr_bf16 *B, int ldb, float beta, float *C, int ldc)
{
	m->stats.gemm_flops += 2.0 * M * N * K;
	CUDA_DISPATCH(m, tr_cuda_gemm_bf16(m->cuda, trans_a, trans_b, M, N, K, A, lda, B, ldb,
	                                   beta, C, ldc));
	double t0 = rio__now();
	if (!m->bf16 || tr_bf16_gemm_cpu(m->bf16, trans_a, trans_b, M, N, K, A, lda, B, ldb, beta,
	                                 C, ldc) < 0)
		m->failed = 1;
	m->stats.gemm_seconds += rio__now() - t0;
}

void tr_dense_bf16(tr_math *m, int rows, int N, int K, const tr_bf16 *A, int lda,
                   const tr_bf16 *W, int ldw, const float *bias, int relu, float *Z,
                   tr_bf16 *Z16)
{
#ifdef HAVE_CUDA
	if (m->cuda) { /* the GEMM, then the bias and ReLU: the fp32 result in Z */
		tr_gemm_bf16(m, 0, 1, rows, N, K, A, lda, W, ldw, 0.0f, Z, N);
		tr_bias_act16(m, Z, bias, rows, N, relu, Z16);
		return;
	}
#endif
	m->stats.gemm_flops += 2.0 * rows * N * K;
	double t0 = rio__now();
	if (!m->bf16 || tr_bf16_dense_cpu(m->bf16, rows, N, K, A, lda, W, ldw, bias, relu,
	                                  Z16 ? (void *)Z16 : (void *)Z, Z16 != NULL) < 0)
		m->failed = 1;
	m->stats.gemm_seconds += rio__now() - t0;
}

/* The rounding is lib/half.h's (nearest, ties to even; a NaN stays a
 * NaN), as the loader's bf16 columns and the 16-bit gradient exchange
 * round. */
VECTOR_CLONES
static void to_bf16_loop(tr_bf16 *restrict dst, const float *restrict src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = rio__bf16_from_f32(src[i]);
}

/* The same bits on AVX512_BF16's instruction where the CPU has it. */
static void to_bf16(tr_bf16 *dst, const float *src, size_t n)
{
	if (rio__bf16_vec_available())
		rio__bf16_round_n(dst, src, n);
	else
		to_bf16_loop(dst, src, n);
}

void tr_to_bf16(tr_math *m, tr_bf16 *dst, const float *src, size_t n)
{
	CUDA_DISPATCH(m, tr_cuda_to_bf16(m->cuda, dst, src, n));
	to_bf16(dst, src, n);
}

VECTOR_CLONES
void tr_bias_act16(tr_math *m, float *Z, const float *bias, int rows, int cols, int relu,
                   tr_bf16 *Z16)
{
	CUDA_DISPATCH(m, {
		tr_cuda_bias_act(m->cuda, Z, bias, rows, cols, relu);
		if (Z16)
			tr_cuda_to_bf16(m->cuda, Z16, Z, (size_t)rows * cols);
	});
	for (int r = 0; r < rows; r++) {
		float *restrict z = Z + (size_t)r * cols;
		if (relu)
			for (int c = 0; c < cols; c++) {
				float v = z[c] + bias[c];
				z[c] = v > 0.0f ? v : 0.0f;
			}
		else
			for (int c = 0; c < cols; c++)
				z[c] += bias[c];
		if (Z16) /* the row while it is in cache */
			to_bf16(Z16 + (size_t)r * cols, z, (size_t)cols);
	}
}

void tr_bias_act(tr_math *m, float *Z, const float *bias, int rows, int cols, int relu)
{
	tr_bias_act16(m, Z, bias, rows, cols, relu, NULL);
}

VECTOR_CLONES
void tr_relu_bias_backward(tr_math *m, float *restrict dZ, const float *restrict A, int rows,
                           int cols, float *restrict db)
{
	CUDA_DISPATCH(m, tr_cuda_relu_bias_backward(m->cuda, dZ, A, rows, cols, db));
	memset(db, 0, (size_t)cols * sizeof *db);
	for (int r = 0; r < rows; r++) {
		float *restrict z = dZ + (size_t)r * cols;
		const float *restrict a = A + (size_t)r * cols;
		for (int c = 0; c < cols; c++) {
			float v = a[c] > 0.0f ? z[c] : 0.0f;
			z[c] = v;
			db[c] += v;
		}
	}
}

/* The mask from the bf16 output, widened (a bf16 rounded from a positive
 * fp32 is positive: the same exponent range); the rounding in a loop of
 * its own: GCC 12 vectorises neither loop fused (mixed widths). */
VECTOR_CLONES
void tr_relu_bias_backward16(tr_math *m, float *restrict dZ, const float *restrict A,
                             const tr_bf16 *restrict A16, int rows, int cols, float *restrict db,
                             tr_bf16 *restrict dZ16)
{
	CUDA_DISPATCH(m, {
		tr_cuda_relu_bias_backward(m->cuda, dZ, A, rows, cols, db);
		tr_cuda_to_bf16(m->cuda, dZ16, dZ, (size_t)rows * cols);
	});
	(void)A;
	memset(db, 0, (size_t)cols * sizeof *db);
	if (rio__bf16_vec_available()) {
		tr_cpu16_relu_bias_backward(dZ, A16, rows, cols, db, dZ16);
		return;
	}
	for (int r = 0; r < rows; r++) {
		float *restrict z = dZ + (size_t)r * cols;
		const tr_bf16 *restrict a = A16 + (size_t)r * cols;
		tr_bf16 *restrict z16 = dZ16 + (size_t)r * cols;
		for (int c = 0; c < cols; c++) {
			float v = rio__f32_from_bf16(a[c]) > 0.0f ? z[c] : 0.0f;
			z[c] = v;
			db[c] += v;
		}
		for (int c = 0; c < cols; c++) /* the row while it is in cache */
			z16[c] = rio__bf16_from_f32(z[c]);
	}
}

void tr_softmax_xent(tr_math *m, const float *logits, const int64_t *labels, int rows, int K,
                     float *dlogits, float *dbias, float *stats)
{
	CUDA_DISPATCH(m, tr_cuda_softmax_xent(m->cuda, logits, labels, rows, K, dlogits, dbias,
	                                      stats));
	double loss = 0;
	int correct = 0;
	if (dlogits && dbias)
		memset(dbias, 0, (size_t)K * sizeof *dbias);
	for (int r = 0; r < rows; r++) {
		const float *z = logits + (size_t)r * K;
		int y = (int)labels[r], best = 0;
		float max = z[0];
		for (int k = 1; k < K; k++)
			if (z[k] > max) {
				max = z[k];
				best = k;
			}
		correct += best == y;
		float zy = z[y], sum = 0.0f;
		if (!dlogits) {
			for (int k = 0; k < K; k++)
				sum += expf(z[k] - max);
			loss += (double)(logf(sum) + max - zy);
			continue;
		}
		/* each exponential once, kept in the gradient's row (which may be
		 * the logits' own: z[k] is read before d[k] is written) */
		float *d = dlogits + (size_t)r * K;
		for (int k = 0; k < K; k++) {
			float e = expf(z[k] - max);
			d[k] = e;
			sum += e;
		}
		loss += (double)(logf(sum) + max - zy);
		float inv = 1.0f / sum;
		for (int k = 0; k < K; k++)
			d[k] *= inv;
		d[y] -= 1.0f;
		if (dbias)
			for (int k = 0; k < K; k++)
				dbias[k] += d[k];
	}
	stats[0] += (float)loss;
	stats[1] += (float)correct;
}

/* The update loops, with or without the bf16 copy: `with16` is a constant
 * at each call (inlined), so that each loop has no test in it and
 * vectorises (a test in the loop kept GCC 12 from vectorising Adam's). */
static inline __attribute__((always_inline)) void
sgd_loop(float *restrict param, const float *restrict grad, float *restrict velocity, size_t n,
         const tr_sgd_args *a, tr_bf16 *restrict p16, int with16)
{
	const float lr = a->lr, mu = a->momentum, wd = a->weight_decay, s = a->grad_scale;
	for (size_t i = 0; i < n; i++) {
		float g = grad[i] * s + wd * param[i];
		float v = mu * velocity[i] + g;
		velocity[i] = v;
		float p = param[i] - lr * v;
		param[i] = p;
		if (with16)
			p16[i] = rio__bf16_from_f32(p);
	}
}

VECTOR_CLONES
void tr_sgd_step(tr_math *m, float *restrict param, const float *restrict grad,
                 float *restrict velocity, size_t n, const tr_sgd_args *a)
{
	CUDA_DISPATCH(m, {
		tr_cuda_sgd_step(m->cuda, param, grad, velocity, n, a);
		if (a->param16)
			tr_cuda_to_bf16(m->cuda, a->param16, param, n);
	});
	if (a->param16 && rio__bf16_vec_available())
		tr_cpu16_sgd(param, grad, velocity, n, a);
	else if (a->param16)
		sgd_loop(param, grad, velocity, n, a, a->param16, 1);
	else
		sgd_loop(param, grad, velocity, n, a, NULL, 0);
}

static inline __attribute__((always_inline)) void
adam_loop(float *restrict param, const float *restrict grad, float *restrict m1,
          float *restrict m2, size_t n, const tr_adam_args *a, tr_bf16 *restrict p16,
          int with16)
{
	const float b1 = a->beta1, b2 = a->beta2, s = a->grad_scale, wd = a->weight_decay;
	const float c1 = a->lr / a->bias1, c2 = 1.0f / sqrtf(a->bias2), eps = a->eps;
	for (size_t i = 0; i < n; i++) {
		float g = grad[i] * s + wd * param[i];
		float u = b1 * m1[i] + (1.0f - b1) * g;
		float v = b2 * m2[i] + (1.0f - b2) * g * g;
		m1[i] = u;
		m2[i] = v;
		float p = param[i] - c1 * u / (sqrtf(v) * c2 + eps);
		param[i] = p;
		if (with16)
			p16[i] = rio__bf16_from_f32(p);
	}
}

VECTOR_CLONES
void tr_adam_step(tr_math *m, float *restrict param, const float *restrict grad,
                  float *restrict m1, float *restrict m2, size_t n, const tr_adam_args *a)
{
	CUDA_DISPATCH(m, {
		tr_cuda_adam_step(m->cuda, param, grad, m1, m2, n, a);
		if (a->param16)
			tr_cuda_to_bf16(m->cuda, a->param16, param, n);
	});
	if (a->param16 && rio__bf16_vec_available())
		tr_cpu16_adam(param, grad, m1, m2, n, a);
	else if (a->param16)
		adam_loop(param, grad, m1, m2, n, a, a->param16, 1);
	else
		adam_loop(param, grad, m1, m2, n, a, NULL, 0);
}

void tr_math_stats_get(const tr_math *m, tr_math_stats *s)
{
	*s = m->stats;
#ifdef HAVE_CUDA
	if (m->cuda)
		s->gemm_seconds = tr_cuda_gemm_seconds(m->cuda);
#endif
}

/* An all-ones exponent, read as integers so that the loop vectorises. */
VECTOR_CLONES int tr_nonfinite(const float *restrict v, size_t n)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
	}
	return bad != 0;
}

int tr_math_nonfinite(tr_math *m, const float *x, size_t n, size_t per, unsigned char *bad)
{
	CUDA_DISPATCH_RET(m, tr_cuda_nonfinite(m->cuda, x, n, per, bad));
	int count = 0;
	for (size_t k = 0, at = 0; at < n; k++, at += per)
		count += (bad[k] = (unsigned char)tr_nonfinite(x + at, n - at < per ? n - at : per));
	return count;
}

int tr_norm2(tr_math *m, const float *x, size_t n, float *out_host)
{
	CUDA_DISPATCH_RET(m, tr_cuda_norm2(m->cuda, x, n, out_host));
	/* cblas takes int counts: a longer vector in pieces, their squares summed */
	double sum = 0;
	while (n) {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		double piece = cblas_snrm2((blasint)k, x, 1);
		sum += piece * piece;
		x += k;
		n -= k;
	}
	*out_host = (float)sqrt(sum);
	return 0;
}

/*
 * backend.h — the trainer's math backends: where tensors live and the few
 * operations an MLP's training step needs. Two backends implement it:
 * math_cpu.c (OpenBLAS, host memory) and math_cuda.cu (cuBLAS and small
 * kernels on one stream, device memory). The model (mlp.c) and the
 * optimizer are written once against this interface.
 *
 * Conventions
 *   - Matrices are row-major float32; `ld` is the row stride in elements.
 *   - Every pointer an operation takes is backend memory (host for CPU,
 *     device for CUDA) unless its name ends in _host.
 *   - Operations are queued in order on the backend's one stream (CUDA) or
 *     run at once (CPU); tr_math_sync() waits for all of them.
 *   - Nothing here prints or exits: failures come back as negative errno
 *     values, with a message in the caller's buffer where there is one.
 */
#ifndef RIO_TRAINER_MATH_H
#define RIO_TRAINER_MATH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tr_device { TR_DEVICE_CPU = 0, TR_DEVICE_CUDA = 1 } tr_device;

/* --precision: fp32 everywhere, or bf16 inputs to the GEMMs (fp32
 * accumulation and output; everything else fp32). */
typedef enum tr_precision { TR_PRECISION_FP32 = 0, TR_PRECISION_BF16 = 1 } tr_precision;

/* A bfloat16: the top 16 bits of an IEEE float (8-bit exponent, 8-bit
 * mantissa with the implicit bit), kept as its bits. */
typedef uint16_t tr_bf16;

typedef struct tr_math tr_math;

/* Time and work spent in GEMMs since open (CPU: wall time of each call;
 * CUDA: events recorded around each GEMM on the stream, read back when
 * they have completed, at the latest by tr_math_sync()). */
typedef struct tr_math_stats {
	double gemm_seconds;
	double gemm_flops;
} tr_math_stats;

/* Opens a backend. CPU: `threads` OpenBLAS threads (0: leave OpenBLAS's
 * choice). CUDA: `gpu` is the device index; -ENODEV when there is none,
 * -ENOTSUP in a build without CUDA. On failure a one-line reason goes to
 * `err` (errlen bytes). */
int tr_math_open(tr_math **out, tr_device device, int gpu, int threads, char *err,
                 size_t errlen);
void tr_math_close(tr_math *m);
tr_device tr_math_device(const tr_math *m);

/* Backend memory for n floats (or bytes, for _bytes), zeroed; NULL on
 * failure. */
float *tr_math_alloc(tr_math *m, size_t n);
void *tr_math_alloc_bytes(tr_math *m, size_t bytes);
void tr_math_free(tr_math *m, void *p);

/* Host memory suited to copies from and to the backend (pinned for CUDA),
 * zeroed; NULL on failure. */
float *tr_math_host_alloc(tr_math *m, size_t n);
void tr_math_host_free(tr_math *m, float *p);

/* Copies n floats between host and backend memory and waits (0 or -EIO).
 * `to_host` waits for everything queued before it. */
int tr_math_to_host(tr_math *m, float *dst_host, const float *src, size_t n);
int tr_math_from_host(tr_math *m, float *dst, const float *src_host, size_t n);
/* Zeroes n floats of backend memory (queued). */
void tr_math_zero(tr_math *m, float *p, size_t n);
/* Waits for everything queued: 0, or -EIO when a queued operation failed. */
int tr_math_sync(tr_math *m);

/* C (M x N) = alpha * op(A) op(B) + beta * C, row-major; op(A) is M x K and
 * op(B) is K x N; trans_a/trans_b 1 means the stored matrix is transposed. */
void tr_gemm(tr_math *m, int trans_a, int trans_b, int M, int N, int K, float alpha,
             const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* Z (rows x cols) += bias (cols) on every row; then, with relu, Z = max(Z, 0). */
void tr_bias_act(tr_math *m, float *Z, const float *bias, int rows, int cols, int relu);

/* ---- bf16 (--precision bf16) ----
 * 0 when this backend computes bf16 GEMMs: the CPU's needs oneDNN in the
 * build (configure --with-onednn) and AVX512_BF16 or AMX-BF16 in the CPU,
 * never emulated; a GPU's, cuBLAS. Otherwise -ENOTSUP and one line saying
 * why in err. RIO_TEST_NO_BF16=1 in the environment makes the CPU check
 * say there are no bf16 instructions (for the tests of the refusal only). */
int tr_math_bf16_check(tr_math *m, char *err, size_t errlen);

/* C (M x N, fp32) = op(A) op(B) + beta * C with A and B bf16, products
 * accumulated in fp32; beta 0 or 1; the layout is tr_gemm's. CPU: a oneDNN
 * matmul, its primitive made once per shape and kept; on the backend's
 * threads. A failure (out of memory for a new shape) makes tr_math_sync
 * return -EIO. */
void tr_gemm_bf16(tr_math *m, int trans_a, int trans_b, int M, int N, int K, const tr_bf16 *A,
                  int lda, const tr_bf16 *B, int ldb, float beta, float *C, int ldc);

/* Where the bf16 GEMMs run, for messages: "oneDNN avx512_core_amx" and
 * the like on the CPU, "cuBLAS" on a GPU; NULL before tr_math_bf16_check
 * succeeded. */
const char *tr_math_bf16_kernels(const tr_math *m);

/* dst = src rounded to bf16, to nearest, ties to even (NaN stays NaN). */
void tr_to_bf16(tr_math *m, tr_bf16 *dst, const float *src, size_t n);

/* tr_bias_act that also writes the result rounded to bf16 into Z16 (same
 * layout), in the same pass. */
void tr_bias_act16(tr_math *m, float *Z, const float *bias, int rows, int cols, int relu,
                   tr_bf16 *Z16);

/* One dense layer's forward under bf16: act(A W^T + bias) with A (rows x
 * K, row stride lda) and W (N x K, row stride ldw) bf16, bias fp32 (N),
 * act a ReLU when relu, accumulated in fp32. With Z16 non-NULL the result
 * goes there rounded to bf16 (a hidden layer: the next GEMM's operand) and
 * Z (rows x N) is the GPU's scratch: the CPU leaves it as it was, a GPU
 * writes the fp32 result there first; with Z16 NULL, into Z as fp32. CPU:
 * one oneDNN primitive, the bias and ReLU its post-ops (counted in the
 * GEMMs' time). */
void tr_dense_bf16(tr_math *m, int rows, int N, int K, const tr_bf16 *A, int lda,
                   const tr_bf16 *W, int ldw, const float *bias, int relu, float *Z,
                   tr_bf16 *Z16);

/* The backward of a ReLU layer and its bias in one pass: dZ[r][c] = 0
 * where A[r][c] <= 0 (A the layer's output), and db[c] = the sum over rows
 * r of the masked dZ[r][c] (the bias gradient), rows x cols. */
void tr_relu_bias_backward(tr_math *m, float *dZ, const float *A, int rows, int cols, float *db);
/* ... under bf16: the mask from A16, the layer's output as tr_dense_bf16
 * wrote it (A, its fp32 output, read on a GPU only: NULL allowed on the
 * CPU), and the masked dZ rounded to bf16 into dZ16, in the same pass. */
void tr_relu_bias_backward16(tr_math *m, float *dZ, const float *A, const tr_bf16 *A16, int rows,
                             int cols, float *db, tr_bf16 *dZ16);

/* Softmax cross-entropy of `rows` rows of K logits against int64 labels in
 * [0, K) (backend memory; checked by the caller). Adds the rows' summed
 * loss to stats[0] and the number whose largest logit is the label (first
 * largest on ties) to stats[1]; with dlogits non-NULL (it may be logits
 * itself), writes the gradient of the summed loss: softmax(row) -
 * onehot(label), and with dbias non-NULL too, its sum over the rows (the
 * last layer's bias gradient), K floats. */
void tr_softmax_xent(tr_math *m, const float *logits, const int64_t *labels, int rows, int K,
                     float *dlogits, float *dbias, float *stats);

/* Optimizer updates over n parameters (see optim.h for the formulas). The
 * gradient used is g = grad * grad_scale + weight_decay * param. With
 * param16 non-NULL the updated parameters are also written there rounded
 * to bf16 (param16[i] for param[i]), in the same pass: --precision bf16's
 * weights for the next step. */
typedef struct tr_sgd_args {
	float lr, momentum, weight_decay, grad_scale;
	tr_bf16 *param16;
} tr_sgd_args;
void tr_sgd_step(tr_math *m, float *param, const float *grad, float *velocity, size_t n,
                 const tr_sgd_args *a);

typedef struct tr_adam_args {
	float lr, beta1, beta2, eps, weight_decay, grad_scale;
	float bias1, bias2; /* 1 - beta1^t and 1 - beta2^t for step t (from 1) */
	tr_bf16 *param16;
} tr_adam_args;
void tr_adam_step(tr_math *m, float *param, const float *grad, float *m1, float *m2, size_t n,
                  const tr_adam_args *a);

void tr_math_stats_get(const tr_math *m, tr_math_stats *s);

/* The Euclidean norm of n floats of backend memory into *out_host (LARS's
 * trust ratio); waits for what is queued before it. 0, or -EIO. */
int tr_norm2(tr_math *m, const float *x, size_t n, float *out_host);

/* 1 when any of v[0, n) (host memory) is a NaN or an infinity. */
int tr_nonfinite(const float *v, size_t n);

/* Which pieces of x[0, n) (backend memory), per floats each, hold a NaN
 * or an infinity: bad[k] = 1 or 0 for each of the (n + per - 1) / per
 * pieces; returns how many are bad, or -EIO when the device failed. One
 * pass and one wait for what is queued before it, however many pieces
 * (on the CPU, tr_nonfinite on each). On a GPU at one rank it spares the
 * gradients their copy to the host, which existed only for this check. */
int tr_math_nonfinite(tr_math *m, const float *x, size_t n, size_t per, unsigned char *bad);

#ifdef __cplusplus
}
#endif

#endif /* RIO_TRAINER_MATH_H */

/*
 * math_cuda.h — the CUDA backend's entry points (math_cuda.cu), called by
 * the dispatch in math_cpu.c when a tr_math was opened on TR_DEVICE_CUDA.
 * Each mirrors the tr_* function of backend.h with the same name after
 * "tr_cuda_" and takes the backend's own context (`ctx`, from
 * tr_cuda_open). Built only with --with-cuda (HAVE_CUDA).
 */
#ifndef RIO_TRAINER_MATH_CUDA_H
#define RIO_TRAINER_MATH_CUDA_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda tr_cuda;

int tr_cuda_open(tr_cuda **out, int gpu, char *err, size_t errlen);
/* Loads cuBLAS as tr_cuda_open does (cublas_dl.h: every function it calls
 * found) and unloads it: 0, or -ENOENT with why in err. Needs no device
 * (tests/test_train_math_cuda runs it before looking for one). */
int tr_cuda_blas_probe(char *err, size_t errlen);
void tr_cuda_close(tr_cuda *c);
void *tr_cuda_alloc_bytes(tr_cuda *c, size_t bytes);
void tr_cuda_free(tr_cuda *c, void *p);
float *tr_cuda_host_alloc(tr_cuda *c, size_t n);
void tr_cuda_host_free(tr_cuda *c, float *p);
int tr_cuda_to_host(tr_cuda *c, float *dst_host, const float *src, size_t n);
int tr_cuda_from_host(tr_cuda *c, float *dst, const float *src_host, size_t n);
void tr_cuda_zero(tr_cuda *c, float *p, size_t n);
int tr_cuda_sync(tr_cuda *c);
void tr_cuda_gemm(tr_cuda *c, int trans_a, int trans_b, int M, int N, int K, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta, float *C,
                  int ldc);
void tr_cuda_gemm_bf16(tr_cuda *c, int trans_a, int trans_b, int M, int N, int K,
                       const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                       float *C, int ldc);
void tr_cuda_to_bf16(tr_cuda *c, uint16_t *dst, const float *src, size_t n);
void tr_cuda_bias_act(tr_cuda *c, float *Z, const float *bias, int rows, int cols, int relu);
void tr_cuda_relu_bias_backward(tr_cuda *c, float *dZ, const float *A, int rows, int cols,
                                float *db);
void tr_cuda_softmax_xent(tr_cuda *c, const float *logits, const int64_t *labels, int rows,
                          int K, float *dlogits, float *dbias, float *stats);
void tr_cuda_sgd_step(tr_cuda *c, float *param, const float *grad, float *velocity, size_t n,
                      const tr_sgd_args *a);
void tr_cuda_adam_step(tr_cuda *c, float *param, const float *grad, float *m1, float *m2,
                       size_t n, const tr_adam_args *a);
int tr_cuda_norm2(tr_cuda *c, const float *x, size_t n, float *out_host);
int tr_cuda_nonfinite(tr_cuda *c, const float *x, size_t n, size_t per, unsigned char *bad);
/* GEMM seconds measured so far (events read back once complete). */
double tr_cuda_gemm_seconds(tr_cuda *c);
/* The backend's stream (a cudaStream_t), for the trainer to order its own
 * copies against. */
void *tr_cuda_stream(tr_cuda *c);

#ifdef __cplusplus
}
#endif

#endif /* RIO_TRAINER_MATH_CUDA_H */

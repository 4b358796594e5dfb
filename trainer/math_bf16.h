/*
 * math_bf16.h — the CPU's bf16 GEMMs (--precision bf16), private to the CPU
 * backend (math_cpu.c): whether this CPU and build can compute them, and a
 * cache of oneDNN matmul primitives, one per shape, made at the shape's
 * first GEMM and kept until the backend closes. Built without oneDNN
 * (configure --with-onednn=no, or no libdnnl-dev), every call says
 * -ENOTSUP.
 */
#ifndef RIO_TRAINER_MATH_BF16_H
#define RIO_TRAINER_MATH_BF16_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_bf16_gemms tr_bf16_gemms;

/* 0 when the build has oneDNN and the CPU has AVX512_BF16 or AMX-BF16
 * (RIO_TEST_NO_BF16=1 in the environment: as if it had neither; for the
 * tests only); else -ENOTSUP and one line in err. */
int tr_bf16_cpu_check(char *err, size_t errlen);

/* An empty cache whose GEMMs run on `threads` threads (0: oneDNN's
 * choice). 0, -ENOMEM or -ENOTSUP (err says why). */
int tr_bf16_gemms_open(tr_bf16_gemms **out, int threads, char *err, size_t errlen);
void tr_bf16_gemms_close(tr_bf16_gemms *g);

/* C = op(A) op(B) + beta C (beta 0 or 1), row-major, A and B bf16, C fp32
 * (backend.h's tr_gemm_bf16). 0, or -ENOMEM when a new shape's primitive
 * cannot be made, -EIO when it fails to run. */
int tr_bf16_gemm_cpu(tr_bf16_gemms *g, int trans_a, int trans_b, int M, int N, int K,
                     const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                     float *C, int ldc);

/* A dense layer's forward in one primitive: C (M x N, row stride N) =
 * act(A W^T + bias), A (M x K, row stride lda) and W (N x K, row stride
 * ldw) bf16, bias fp32 (N; NULL: none), act a ReLU when relu, accumulated
 * in fp32 and C written as bf16 (c_bf16) or fp32. 0, -ENOMEM or -EIO. */
int tr_bf16_dense_cpu(tr_bf16_gemms *g, int M, int N, int K, const uint16_t *A, int lda,
                      const uint16_t *W, int ldw, const float *bias, int relu, void *C,
                      int c_bf16);

/* The instructions oneDNN's kernels use here ("oneDNN avx512_core_amx",
 * "oneDNN avx512_core_bf16"), for the trainer's first line; NULL without
 * oneDNN, or where oneDNN is held below them (ONEDNN_MAX_CPU_ISA) and
 * would emulate bf16 (tr_bf16_cpu_check refuses that). */
const char *tr_bf16_cpu_kernels(void);

#endif /* RIO_TRAINER_MATH_BF16_H */

/*
 * math_cpu16.h — the passes that also write a bf16 copy (--precision
 * bf16), the optimizer's and the ReLU's backward, on AVX512_BF16
 * (math_cpu16.c, lib/bf16_vec.h), for math_cpu.c. Only where
 * rio__bf16_vec_available(); each gives the bits of math_cpu.c's plain
 * loops in fewer instructions and, for the ReLU's, one pass.
 */
#ifndef TR_MATH_CPU16_H
#define TR_MATH_CPU16_H

#include "backend.h"

#include <stddef.h>

/* math_cpu.c's tr_sgd_step and tr_adam_step with a->param16 set: the same
 * arithmetic in the same order, the updated parameters rounded into
 * a->param16 in the same pass. */
void tr_cpu16_sgd(float *param, const float *grad, float *velocity, size_t n,
                  const tr_sgd_args *a);
void tr_cpu16_adam(float *param, const float *grad, float *m1, float *m2, size_t n,
                   const tr_adam_args *a);


/* math_cpu.c's tr_relu_bias_backward16 (db zeroed by the caller). */
void tr_cpu16_relu_bias_backward(float *dZ, const tr_bf16 *A16, int rows, int cols, float *db,
                                 tr_bf16 *dZ16);

#endif

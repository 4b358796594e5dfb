/*
 * math_cpu16.h — the optimizer's passes that also write the bf16 copy
 * (--precision bf16), on AVX512_BF16 (math_cpu16.c, lib/bf16_vec.h), for
 * math_cpu.c. Only where rio__bf16_vec_available(); each gives the bits of
 * math_cpu.c's plain loops in fewer instructions (the pass ran at 0.8 of
 * the speed on the emulated rounding).
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

#endif

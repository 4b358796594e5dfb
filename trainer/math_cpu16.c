/*
 * math_cpu16.c — SGD's and Adam's update with the bf16 copy written in the
 * same pass, in 512-bit loops with VCVTNEPS2BF16 (math_cpu16.h,
 * lib/bf16_vec.h), where GCC vectorised math_cpu.c's loops in 256 bits
 * around an emulated rounding. trainer/local.mk compiles this with
 * -ffp-contract=off: each multiply and add rounds as the scalar loops' do,
 * so the bits are theirs (tests/test_train.c compares them).
 */
#include "config.h"
#include "math_cpu16.h"
#include "bf16_vec.h"

#include <math.h>

#ifdef RIO_BF16_VEC

/* The gradient as both updates take it: grad s + wd param (16 lanes, k of
 * them loaded). */
RIO_BF16_VEC_TARGET static inline __m512 decayed_grad(const float *grad, __mmask16 k, __m512 s,
                                                      __m512 wd, __m512 p)
{
	return _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, grad), s), _mm512_mul_ps(wd, p));
}

/* math_cpu.c's sgd_loop: g = grad s + wd param, v = mu velocity + g,
 * param -= lr v. */
RIO_BF16_VEC_TARGET void tr_cpu16_sgd(float *restrict param, const float *restrict grad,
                                      float *restrict velocity, size_t n, const tr_sgd_args *a)
{
	const __m512 lr = _mm512_set1_ps(a->lr), mu = _mm512_set1_ps(a->momentum);
	const __m512 wd = _mm512_set1_ps(a->weight_decay), s = _mm512_set1_ps(a->grad_scale);
	tr_bf16 *restrict p16 = a->param16;
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 k = rio__bf16_vec_lanes(n, i);
		__m512 p = _mm512_maskz_loadu_ps(k, param + i);
		__m512 g = decayed_grad(grad + i, k, s, wd, p);
		__m512 v = _mm512_add_ps(_mm512_mul_ps(mu, _mm512_maskz_loadu_ps(k, velocity + i)), g);
		_mm512_mask_storeu_ps(velocity + i, k, v);
		p = _mm512_sub_ps(p, _mm512_mul_ps(lr, v));
		_mm512_mask_storeu_ps(param + i, k, p);
		rio__bf16_vec_store(p16 + i, p, k);
	}
}

/* math_cpu.c's adam_loop, term by term. */
RIO_BF16_VEC_TARGET void tr_cpu16_adam(float *restrict param, const float *restrict grad,
                                       float *restrict m1, float *restrict m2, size_t n,
                                       const tr_adam_args *a)
{
	const __m512 b1 = _mm512_set1_ps(a->beta1), b2 = _mm512_set1_ps(a->beta2);
	const __m512 nb1 = _mm512_set1_ps(1.0f - a->beta1), nb2 = _mm512_set1_ps(1.0f - a->beta2);
	const __m512 s = _mm512_set1_ps(a->grad_scale), wd = _mm512_set1_ps(a->weight_decay);
	const __m512 c1 = _mm512_set1_ps(a->lr / a->bias1);
	const __m512 c2 = _mm512_set1_ps(1.0f / sqrtf(a->bias2)), eps = _mm512_set1_ps(a->eps);
	tr_bf16 *restrict p16 = a->param16;
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 k = rio__bf16_vec_lanes(n, i);
		__m512 p = _mm512_maskz_loadu_ps(k, param + i);
		__m512 g = decayed_grad(grad + i, k, s, wd, p);
		__m512 u = _mm512_add_ps(_mm512_mul_ps(b1, _mm512_maskz_loadu_ps(k, m1 + i)),
		                         _mm512_mul_ps(nb1, g));
		__m512 v = _mm512_add_ps(_mm512_mul_ps(b2, _mm512_maskz_loadu_ps(k, m2 + i)),
		                         _mm512_mul_ps(_mm512_mul_ps(nb2, g), g));
		_mm512_mask_storeu_ps(m1 + i, k, u);
		_mm512_mask_storeu_ps(m2 + i, k, v);
		__m512 den = _mm512_add_ps(_mm512_mul_ps(_mm512_sqrt_ps(v), c2), eps);
		p = _mm512_sub_ps(p, _mm512_div_ps(_mm512_mul_ps(c1, u), den));
		_mm512_mask_storeu_ps(param + i, k, p);
		rio__bf16_vec_store(p16 + i, p, k);
	}
}

/* math_cpu.c's tr_relu_bias_backward16 in one pass: dZ masked where the
 * layer's bf16 output (widened: a shift) is not above zero, each column's
 * sum taken row by row as there, the masked row rounded into dZ16. */
RIO_BF16_VEC_TARGET void tr_cpu16_relu_bias_backward(float *restrict dZ,
                                                     const tr_bf16 *restrict A16, int rows,
                                                     int cols, float *restrict db,
                                                     tr_bf16 *restrict dZ16)
{
	const __m512 zero = _mm512_setzero_ps();
	for (int r = 0; r < rows; r++) {
		size_t at = (size_t)r * cols, n = (size_t)cols;
		for (size_t c = 0; c < n; c += 16) {
			__mmask16 k = rio__bf16_vec_lanes(n, c);
			__m512i a16 = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, A16 + at + c));
			__m512 a = _mm512_castsi512_ps(_mm512_slli_epi32(a16, 16));
			__mmask16 on = _mm512_mask_cmp_ps_mask(k, a, zero, _CMP_GT_OQ);
			__m512 v = _mm512_maskz_loadu_ps(on, dZ + at + c);
			_mm512_mask_storeu_ps(dZ + at + c, k, v);
			_mm512_mask_storeu_ps(db + c, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, db + c), v));
			rio__bf16_vec_store(dZ16 + at + c, v, k);
		}
	}
}

#else /* no such code in this build: never called (rio__bf16_vec_available) */

void tr_cpu16_sgd(float *param, const float *grad, float *velocity, size_t n,
                  const tr_sgd_args *a)
{
}
void tr_cpu16_adam(float *param, const float *grad, float *m1, float *m2, size_t n,
                   const tr_adam_args *a)
{
}

void tr_cpu16_relu_bias_backward(float *dZ, const tr_bf16 *A16, int rows, int cols, float *db,
                                 tr_bf16 *dZ16)
{
}

#endif

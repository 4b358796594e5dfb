/*
 * bf16_vec.c — the whole-array roundings of bf16_vec.h: to bf16 from
 * floats (the trainer's operands) and from bytes times a scale (the
 * loader's bf16 columns).
 */
#include "config.h"
#include "bf16_vec.h"

#ifdef RIO_BF16_VEC

int rio__bf16_vec_available(void)
{
	__builtin_cpu_init(); /* idempotent; before constructors have run too */
	return __builtin_cpu_supports("avx512bf16");
}

RIO_BF16_VEC_TARGET void rio__bf16_round_n(uint16_t *restrict dst, const float *restrict src,
                                           size_t n)
{
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 k = rio__bf16_vec_lanes(n, i);
		rio__bf16_vec_store(dst + i, _mm512_maskz_loadu_ps(k, src + i), k);
	}
}

/* Each byte widened exactly, then one multiply: the scalar loop's value. */
RIO_BF16_VEC_TARGET void rio__bf16_from_u8_n(uint16_t *restrict dst, const uint8_t *restrict src,
                                             size_t n, float scale)
{
	const __m512 s = _mm512_set1_ps(scale);
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 k = rio__bf16_vec_lanes(n, i);
		__m128i b = _mm_maskz_loadu_epi8(k, src + i);
		__m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b)), s);
		rio__bf16_vec_store(dst + i, v, k);
	}
}

#else /* no such code in this build: never called */

int rio__bf16_vec_available(void) { return 0; }
void rio__bf16_round_n(uint16_t *dst, const float *src, size_t n) {}
void rio__bf16_from_u8_n(uint16_t *dst, const uint8_t *src, size_t n, float scale) {}

#endif

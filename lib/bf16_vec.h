/*
 * bf16_vec.h — floats rounded to bf16 sixteen at a time on AVX512_BF16's
 * VCVTNEPS2BF16, with the bits of half.h's rio__bf16_from_f32 (nearest,
 * ties to even; a NaN keeps its upper bits and gets the quiet bit): GCC's
 * vectorised half.h rounding takes a dozen integer operations and a blend
 * for eight, and the optimizer's pass under --precision bf16 and the
 * loader's bf16 columns ran on it. The instruction reads a denormal as
 * zero where half.h rounds it: the rare lanes holding one are rounded
 * again by half.h. Callers ask rio__bf16_vec_available() first and keep
 * their plain loop for a CPU without the instruction.
 */
#ifndef RIO_BF16_VEC_H
#define RIO_BF16_VEC_H

#include "half.h"

#include <stddef.h>
#include <stdint.h>

/* 1 when this CPU has AVX512_BF16 and this build the code for it. */
int rio__bf16_vec_available(void);

/* dst[i] = rio__bf16_from_f32(src[i]), i < n. Only when available. */
void rio__bf16_round_n(uint16_t *dst, const float *src, size_t n);

/* dst[i] = rio__bf16_from_f32((float)src[i] * scale), i < n (the loader's
 * bytes into a bf16 column). Only when available. */
void rio__bf16_from_u8_n(uint16_t *dst, const uint8_t *src, size_t n, float scale);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RIO_BF16_VEC 1
#include <immintrin.h>

/* Code using the instruction (the caller has asked rio__bf16_vec_available). */
#define RIO_BF16_VEC_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* The lanes holding elements i .. n - 1 (at most 16): loops end on a
 * masked load and store, the body's arithmetic for the tail. */
static inline __mmask16 rio__bf16_vec_lanes(size_t n, size_t i)
{
	return n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
}

/* v's lanes k rounded into dst[0, 16). */
RIO_BF16_VEC_TARGET static inline void rio__bf16_vec_store(uint16_t *dst, __m512 v, __mmask16 k)
{
	_mm256_mask_storeu_epi16(dst, k, (__m256i)_mm512_cvtneps_pbh(v));
	/* |v|'s bits in [1, 0x7fffff]: a denormal */
	__m512i mag = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
	__mmask16 d = _mm512_mask_cmplt_epu32_mask(k, _mm512_sub_epi32(mag, _mm512_set1_epi32(1)),
	                                           _mm512_set1_epi32(0x7fffff));
	if (__builtin_expect(d != 0, 0)) {
		float f[16];
		_mm512_storeu_ps(f, v);
		for (int i = 0; i < 16; i++)
			if ((d >> i) & 1)
				dst[i] = rio__bf16_from_f32(f[i]);
	}
}
#endif

#endif

/*
 * half.h — 16-bit floats: bfloat16 and IEEE half (fp16) to and from float.
 *
 * The loader's bf16 columns and the trainer's 16-bit gradient exchange
 * keep values as their bit patterns (uint16_t): C has no portable 16-bit
 * float type. Each narrowing rounds to nearest, ties to even, as the
 * hardware conversions do (VCVTNEPS2BF16, VCVTPS2PH); too large a value
 * becomes infinity, a NaN stays a (quiet) NaN of the same sign. Integer
 * and float arithmetic only, no branches on data, so loops over arrays
 * vectorize. Widening is exact.
 */
#ifndef RIO_HALF_H
#define RIO_HALF_H

#include <stdint.h>
#include <string.h>

/* nvcc compiles these for the device too: the trainer's CUDA kernels
 * round exactly as the CPU does (trainer/math_cuda.cu) */
#ifdef __CUDACC__
#define RIO_HALF_FN static inline __host__ __device__
#else
#define RIO_HALF_FN static inline
#endif

RIO_HALF_FN uint32_t rio__f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

RIO_HALF_FN float rio__f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* bf16: the float's upper half, rounded on the lower half (a NaN keeps
 * its upper bits and gets the quiet bit, so it cannot round to inf). */
RIO_HALF_FN uint16_t rio__bf16_from_f32(float f)
{
	uint32_t u = rio__f32_bits(f);
	uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	uint32_t nan = (u >> 16) | 0x40u;
	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

RIO_HALF_FN float rio__f32_from_bf16(uint16_t h)
{
	return rio__f32_from_bits((uint32_t)h << 16);
}

/* fp16, after Marat Dukhan's FP16 library (MIT): the float's magnitude
 * scaled so that fp32's own rounding, at the right exponent, makes the
 * 10-bit mantissa; subnormals and overflow to inf come out of the same
 * arithmetic. Needs float arithmetic in round-to-nearest (the default;
 * not -ffast-math). */
RIO_HALF_FN uint16_t rio__fp16_from_f32(float f)
{
	const float to_inf = 0x1.0p+112f, to_zero = 0x1.0p-110f;
	uint32_t w = rio__f32_bits(f);
	float base = (rio__f32_from_bits(w & 0x7fffffffu) * to_inf) * to_zero;
	uint32_t shl1_w = w + w;
	uint32_t sign = w & 0x80000000u;
	uint32_t bias = shl1_w & 0xff000000u;
	bias = bias < 0x71000000u ? 0x71000000u : bias;
	base = rio__f32_from_bits((bias >> 1) + 0x07800000u) + base;
	uint32_t b = rio__f32_bits(base);
	uint32_t nonsign = ((b >> 13) & 0x7c00u) + (b & 0x0fffu);
	return (uint16_t)((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

RIO_HALF_FN float rio__f32_from_fp16(uint16_t h)
{
	uint32_t w = (uint32_t)h << 16;
	uint32_t sign = w & 0x80000000u;
	uint32_t two_w = w + w;
	float normalized = rio__f32_from_bits((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
	float denormalized = rio__f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
	uint32_t mag = two_w < (1u << 27) ? rio__f32_bits(denormalized) : rio__f32_bits(normalized);
	return rio__f32_from_bits(sign | mag);
}

/* The largest finite fp16, 65504. */
#define RIO_FP16_MAX 65504.0f

#endif /* RIO_HALF_H */

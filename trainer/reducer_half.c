/*
 * reducer_half.c — the 16-bit gradient exchange's arithmetic
 * (--grad-compression, reducer.h): casts between the gradients' fp32 and
 * bf16 or fp16 (lib/half.h: nearest, ties to even), sums of 16-bit
 * vectors in fp32, and the user-defined MPI op that does that sum inside
 * Open MPI's allreduce, which has no 16-bit MPI_SUM.
 */
#include "config.h"
#include "reducer.h"
#include "half.h"

#include <math.h>
#include <string.h>

/* The loops are plain integer and float code: vectorised as the reducer's
 * own sums are (reducer.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TR_VECTORIZE                                        \
	__attribute__((target_clones("avx512f", "avx2", "default"), \
	               optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define TR_VECTORIZE
#endif

const char *tr_grad_comp_name(tr_grad_comp c)
{
	static const char *const names[] = {"none", "bf16", "fp16"};
	return (unsigned)c < 3 ? names[c] : "?";
}

TR_VECTORIZE static void narrow_bf16(uint16_t *restrict out, const float *restrict in, size_t len,
                                     float scale)
{
	for (size_t i = 0; i < len; i++)
		out[i] = rio__bf16_from_f32(in[i] * scale);
}

TR_VECTORIZE static void narrow_fp16(uint16_t *restrict out, const float *restrict in, size_t len,
                                     float scale)
{
	for (size_t i = 0; i < len; i++)
		out[i] = rio__fp16_from_f32(in[i] * scale);
}

void tr_comp_narrow(tr_grad_comp comp, uint16_t *out, const float *in, size_t len, float scale)
{
	if (comp == TR_COMP_FP16)
		narrow_fp16(out, in, len, scale);
	else
		narrow_bf16(out, in, len, scale);
}

TR_VECTORIZE static void widen_bf16(float *restrict out, const uint16_t *restrict in, size_t len,
                                    float scale)
{
	for (size_t i = 0; i < len; i++)
		out[i] = rio__f32_from_bf16(in[i]) * scale;
}

TR_VECTORIZE static void widen_fp16(float *restrict out, const uint16_t *restrict in, size_t len,
                                    float scale)
{
	for (size_t i = 0; i < len; i++)
		out[i] = rio__f32_from_fp16(in[i]) * scale;
}

void tr_comp_widen(tr_grad_comp comp, float *out, const uint16_t *in, size_t len, float scale)
{
	if (comp == TR_COMP_FP16)
		widen_fp16(out, in, len, scale);
	else
		widen_bf16(out, in, len, scale);
}

/* The largest magnitude's bits in v[0, n): |v| as an integer orders as
 * |v| does, an infinity above every finite value and a NaN above both. */
TR_VECTORIZE static uint32_t max_magnitude_bits(const float *restrict v, size_t n)
{
	uint32_t most = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u = rio__f32_bits(v[i]) & 0x7fffffffu;
		most = u > most ? u : most;
	}
	return most;
}

/* A message's s (reducer.h, tr_comp_narrow_msg). */
static int msg_exponent(tr_grad_comp comp, const float *v, size_t n)
{
	uint32_t most = comp == TR_COMP_FP16 ? max_magnitude_bits(v, n) : 0;
	if (most == 0 || most >= 0x7f800000u)
		return 0; /* zeros; bf16's range is fp32's; an infinity or NaN goes as it is */
	int e;
	frexpf(rio__f32_from_bits(most), &e); /* most in [2^(e-1), 2^e) */
	int s = 15 - e;                       /* most x 2^s in [2^14, 2^15)  */
	return s < -TR_COMP_MSG_EXP_MAX ? -TR_COMP_MSG_EXP_MAX
	       : s > TR_COMP_MSG_EXP_MAX ? TR_COMP_MSG_EXP_MAX
	                                 : s;
}

void tr_comp_narrow_msg(tr_grad_comp comp, uint16_t *out, const float *in, size_t len)
{
	int s = msg_exponent(comp, in, len);
	tr_comp_narrow(comp, out, in, len, ldexpf(1.0f, s));
	out[len] = (uint16_t)(int16_t)s;
}

void tr_comp_widen_msg(tr_grad_comp comp, float *out, const uint16_t *in, size_t len)
{
	int s = (int16_t)in[len];
	if (s < -TR_COMP_MSG_EXP_MAX || s > TR_COMP_MSG_EXP_MAX)
		s = 0; /* not one tr_comp_narrow_msg writes */
	tr_comp_widen(comp, out, in, len, ldexpf(1.0f, -s));
}

TR_VECTORIZE static void add_bf16(float *restrict out, const uint16_t *restrict in, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] += rio__f32_from_bf16(in[i]);
}

TR_VECTORIZE static void add_fp16(float *restrict out, const uint16_t *restrict in, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] += rio__f32_from_fp16(in[i]);
}

void tr_comp_sum_ranked(tr_grad_comp comp, float *out, const uint16_t *const *in, int k,
                        size_t len)
{
	tr_comp_widen(comp, out, in[0], len, 1.0f);
	for (int j = 1; j < k; j++) {
		if (comp == TR_COMP_FP16)
			add_fp16(out, in[j], len);
		else
			add_bf16(out, in[j], len);
	}
}

/* The ops: inout = 16 bits of (in + inout), added in fp32, in blocks
 * (the op has no memory of its own to widen into). */
static void op_sum(tr_grad_comp comp, const uint16_t *in, uint16_t *inout, int len)
{
	enum { BLOCK = 1024 };
	float a[BLOCK];
	for (int at = 0; at < len; at += BLOCK) {
		size_t m = (size_t)(len - at < BLOCK ? len - at : BLOCK);
		tr_comp_widen(comp, a, inout + at, m, 1.0f);
		if (comp == TR_COMP_FP16)
			add_fp16(a, in + at, m);
		else
			add_bf16(a, in + at, m);
		tr_comp_narrow(comp, inout + at, a, m, 1.0f);
	}
}

static void op_bf16(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	op_sum(TR_COMP_BF16, in, inout, *len);
}

static void op_fp16(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	op_sum(TR_COMP_FP16, in, inout, *len);
}

int tr_comp_op_create(tr_grad_comp comp, MPI_Op *op)
{
	return MPI_Op_create(comp == TR_COMP_FP16 ? op_fp16 : op_bf16, 1, op) == MPI_SUCCESS ? 0
	                                                                                     : -1;
}

int tr_has_inf(const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = rio__f32_bits(v[i]);
		if ((u & 0x7fffffffu) == 0x7f800000u)
			return 1;
	}
	return 0;
}

/*
 * math_bf16.c — the CPU's bf16 GEMMs (math_bf16.h): oneDNN matmul
 * primitives with bf16 source and weights and an fp32 destination (fp32
 * accumulation), one per shape, kept in a small cache owned by the backend,
 * so that a step creates none (creating one JITs code: milliseconds).
 * Row-major operands, transposed or not, are plain strided memory
 * descriptors: no reorder, no copy. A dense layer's forward is one
 * primitive: the bias and the ReLU are its post-ops, and a hidden layer's
 * output is written as bf16 alone (the next GEMM's operand and the ReLU's
 * mask), never as fp32 and rounded in a second pass. oneDNN's OpenMP runtime is held to the
 * rank's threads with omp_set_num_threads on the thread that calls the
 * GEMMs (the rank's main thread).
 */
#include "config.h"
#include "math_bf16.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

/* Whether the CPU has bf16 dot products: AVX512_BF16 (CPUID leaf 7
 * subleaf 1, EAX bit 5) or AMX-BF16 (leaf 7 subleaf 0, EDX bit 22). */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static int cpu_has_bf16(void)
{
	unsigned a, b, c, d;
	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	if (d & (1u << 22))
		return 1;
	__cpuid_count(7, 1, a, b, c, d);
	return (a >> 5) & 1;
}
#else
static int cpu_has_bf16(void) { return 0; }
#endif
#endif

int tr_bf16_cpu_check(char *err, size_t errlen)
{
#ifndef HAVE_ONEDNN
	snprintf(err, errlen, "--precision bf16: this build has no oneDNN (configure "
	                      "--with-onednn; Debian: apt-get install libdnnl-dev)");
	return -ENOTSUP;
#else
	const char *fake = getenv("RIO_TEST_NO_BF16");
	if ((fake && !strcmp(fake, "1")) || !cpu_has_bf16()) {
		snprintf(err, errlen, "--precision bf16: this CPU has no bf16 instructions "
		                      "(AVX512_BF16 or AMX-BF16); use --precision fp32");
		return -ENOTSUP;
	}
	if (!tr_bf16_cpu_kernels()) {
		snprintf(err, errlen, "--precision bf16: oneDNN is held below its bf16 instructions "
		                      "(ONEDNN_MAX_CPU_ISA=%s), where it would emulate them",
		         getenv("ONEDNN_MAX_CPU_ISA") ? getenv("ONEDNN_MAX_CPU_ISA") : "?");
		return -ENOTSUP;
	}
	return 0;
#endif
}

#ifndef HAVE_ONEDNN

int tr_bf16_gemms_open(tr_bf16_gemms **out, int threads, char *err, size_t errlen)
{
	*out = NULL;
	return tr_bf16_cpu_check(err, errlen);
}
const char *tr_bf16_cpu_kernels(void) { return NULL; }
void tr_bf16_gemms_close(tr_bf16_gemms *g) { (void)g; }
int tr_bf16_gemm_cpu(tr_bf16_gemms *g, int trans_a, int trans_b, int M, int N, int K,
                     const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                     float *C, int ldc)
{
	return -ENOTSUP;
}
int tr_bf16_dense_cpu(tr_bf16_gemms *g, int M, int N, int K, const uint16_t *A, int lda,
                      const uint16_t *W, int ldw, const float *bias, int relu, void *C,
                      int c_bf16)
{
	return -ENOTSUP;
}

#else

#include <omp.h>

enum { CACHE = 64 }; /* shapes kept: 3 GEMMs a layer, for the training
                      * batch, the last partial one and the evaluation's */

typedef struct shape {
	int ta, tb, M, N, K, lda, ldb, ldc, sum;
	int bias, relu, c16; /* a bias (fp32, N) added; a ReLU; C bf16 */
} shape;

typedef struct entry {
	shape key;
	dnnl_primitive_t prim;
	dnnl_memory_t src, wei, dst, bia; /* their handles set at each call */
} entry;

struct tr_bf16_gemms {
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	int threads;
	entry e[CACHE];
	int n, next; /* entries in use; the next to replace once full */
};

int tr_bf16_gemms_open(tr_bf16_gemms **out, int threads, char *err, size_t errlen)
{
	*out = NULL;
	int rc = tr_bf16_cpu_check(err, errlen);
	if (rc < 0)
		return rc;
	tr_bf16_gemms *g = calloc(1, sizeof *g);
	if (!g || dnnl_engine_create(&g->engine, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&g->stream, g->engine, dnnl_stream_default_flags) != dnnl_success) {
		snprintf(err, errlen, "--precision bf16: oneDNN could not start (out of memory)");
		tr_bf16_gemms_close(g);
		return -ENOMEM;
	}
	g->threads = threads;
	*out = g;
	return 0;
}

const char *tr_bf16_cpu_kernels(void)
{
	switch (dnnl_get_effective_cpu_isa()) { /* ONEDNN_MAX_CPU_ISA caps it */
	case dnnl_cpu_isa_avx512_core_amx: return "oneDNN avx512_core_amx";
	case dnnl_cpu_isa_avx512_core_bf16: return "oneDNN avx512_core_bf16";
	default: return NULL; /* bf16 emulated: refused */
	}
}

static void entry_free(entry *e)
{
	if (e->prim)
		dnnl_primitive_destroy(e->prim);
	if (e->src)
		dnnl_memory_destroy(e->src);
	if (e->wei)
		dnnl_memory_destroy(e->wei);
	if (e->dst)
		dnnl_memory_destroy(e->dst);
	if (e->bia)
		dnnl_memory_destroy(e->bia);
	memset(e, 0, sizeof *e);
}

void tr_bf16_gemms_close(tr_bf16_gemms *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n; i++)
		entry_free(&g->e[i]);
	if (g->stream)
		dnnl_stream_destroy(g->stream);
	if (g->engine)
		dnnl_engine_destroy(g->engine);
	free(g);
}

/* A rows x cols matrix of `type` stored row-major with row stride ld, or
 * (trans) stored transposed: cols x rows with row stride ld. */
static void matrix_md(dnnl_memory_desc_t *md, int rows, int cols, int ld, int trans,
                      dnnl_data_type_t type)
{
	dnnl_dims_t dims = {rows, cols};
	dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
	dnnl_memory_desc_init_by_strides(md, 2, dims, type, strides);
}

/* The primitive for shape k and its memory objects, into e. 0 or -ENOMEM. */
static int entry_make(tr_bf16_gemms *g, entry *e, const shape *k)
{
	dnnl_memory_desc_t a, b, c, bias;
	matrix_md(&a, k->M, k->K, k->lda, k->ta, dnnl_bf16);
	matrix_md(&b, k->K, k->N, k->ldb, k->tb, dnnl_bf16);
	matrix_md(&c, k->M, k->N, k->ldc, 0, k->c16 ? dnnl_bf16 : dnnl_f32);
	matrix_md(&bias, 1, k->N, k->N, 0, dnnl_f32); /* one row, broadcast */
	dnnl_matmul_desc_t d;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t ops = NULL;
	dnnl_primitive_desc_t pd = NULL;
	int ok = dnnl_matmul_desc_init(&d, &a, &b, k->bias ? &bias : NULL, &c) == dnnl_success &&
	         dnnl_primitive_attr_create(&attr) == dnnl_success;
	if (ok && (k->sum || k->relu)) {
		ok = dnnl_post_ops_create(&ops) == dnnl_success;
		if (ok && k->sum) /* beta 1: C accumulated into */
			ok = dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success;
		if (ok && k->relu) /* after the bias, before the rounding to bf16 */
			ok = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f) ==
			     dnnl_success;
		ok = ok && dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
	}
	ok = ok && dnnl_primitive_desc_create(&pd, &d, attr, g->engine, NULL) == dnnl_success &&
	     dnnl_primitive_create(&e->prim, pd) == dnnl_success &&
	     dnnl_memory_create(&e->src, &a, g->engine, DNNL_MEMORY_NONE) == dnnl_success &&
	     dnnl_memory_create(&e->wei, &b, g->engine, DNNL_MEMORY_NONE) == dnnl_success &&
	     dnnl_memory_create(&e->dst, &c, g->engine, DNNL_MEMORY_NONE) == dnnl_success &&
	     (!k->bias ||
	      dnnl_memory_create(&e->bia, &bias, g->engine, DNNL_MEMORY_NONE) == dnnl_success);
	if (ok)
		e->key = *k;
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (ops)
		dnnl_post_ops_destroy(ops);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (!ok)
		entry_free(e);
	return ok ? 0 : -ENOMEM;
}

/* The cached entry for shape k, made if new (the oldest replaced when the
 * cache is full); NULL when it cannot be made. */
static entry *lookup(tr_bf16_gemms *g, const shape *k)
{
	for (int i = 0; i < g->n; i++)
		if (!memcmp(&g->e[i].key, k, sizeof *k))
			return &g->e[i];
	entry *e;
	if (g->n < CACHE) {
		e = &g->e[g->n];
	} else {
		e = &g->e[g->next];
		g->next = (g->next + 1) % CACHE;
		entry_free(e);
	}
	if (g->threads > 0)
		omp_set_num_threads(g->threads); /* the JIT's choice of blocking too */
	if (entry_make(g, e, k) < 0)
		return NULL;
	if (g->n < CACHE)
		g->n++;
	return e;
}

/* Shape k's primitive run on these operands (bias NULL where k has none). */
static int run(tr_bf16_gemms *g, const shape *k, const uint16_t *A, const uint16_t *B,
               const float *bias, void *C)
{
	if (k->M <= 0 || k->N <= 0)
		return 0;
	entry *e = lookup(g, k);
	if (!e)
		return -ENOMEM;
	if (g->threads > 0)
		omp_set_num_threads(g->threads);
	dnnl_memory_set_data_handle(e->src, (void *)A);
	dnnl_memory_set_data_handle(e->wei, (void *)B);
	dnnl_memory_set_data_handle(e->dst, C);
	dnnl_exec_arg_t args[4] = {
		{DNNL_ARG_SRC, e->src}, {DNNL_ARG_WEIGHTS, e->wei}, {DNNL_ARG_DST, e->dst},
		{DNNL_ARG_BIAS, e->bia}};
	if (bias)
		dnnl_memory_set_data_handle(e->bia, (void *)bias);
	if (dnnl_primitive_execute(e->prim, g->stream, bias ? 4 : 3, args) != dnnl_success ||
	    dnnl_stream_wait(g->stream) != dnnl_success)
		return -EIO;
	return 0;
}

int tr_bf16_gemm_cpu(tr_bf16_gemms *g, int trans_a, int trans_b, int M, int N, int K,
                     const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                     float *C, int ldc)
{
	/* ints only, no padding: compared bytewise */
	shape k = {trans_a != 0, trans_b != 0, M, N, K, lda, ldb, ldc, beta != 0.0f, 0, 0, 0};
	return run(g, &k, A, B, NULL, C);
}

int tr_bf16_dense_cpu(tr_bf16_gemms *g, int M, int N, int K, const uint16_t *A, int lda,
                      const uint16_t *W, int ldw, const float *bias, int relu, void *C,
                      int c_bf16)
{
	shape k = {0, 1, M, N, K, lda, ldw, N, 0, bias != NULL, relu != 0, c_bf16 != 0};
	return run(g, &k, A, W, bias, C);
}

#endif /* HAVE_ONEDNN */

/*
 * gemm_only.c — the GEMM-only rate of an MLP's training step, the ceiling
 * of recordio-train's speed (bench/precision.sh): the step's GEMMs alone,
 * at the shapes and in the layouts trainer/mlp.c runs them (forward with
 * the weights transposed, then from the top layer down the input gradient
 * and the weight gradient), back to back, in fp32 (OpenBLAS's cblas_sgemm)
 * or in bf16 (oneDNN matmul, bf16 operands, fp32 accumulation and output,
 * as --precision bf16 runs them; one primitive per shape, made before the
 * timing). Each GEMM multiplies the step's own buffers, as the trainer's do.
 *
 * Usage: gemm_only fp32|bf16 THREADS BATCH SECONDS SIZES
 *   (SIZES: the layers' widths, e.g. 784-256-128-10)
 * prints one JSON object:
 *   {"precision": P, "sizes": S, "threads": T, "batch": B,
 *    "step_samples_per_s": ..., "step_gflops": ..., "repetitions": R,
 *    "kernels": "..."}
 * the median of repetitions of ~0.1 s over about SECONDS; kernels: the
 * OpenBLAS core's name, or the oneDNN implementations the GEMMs use.
 */
#include "config.h"

#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#endif

enum { MAXL = 16, MAXG = 3 * MAXL };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *filled(size_t n, size_t elem)
{
	unsigned char *p = malloc(n * elem);
	if (!p) {
		fprintf(stderr, "gemm_only: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) { /* small values; bf16 as the top half of a float */
		float f = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
		memcpy(p + i * elem, (unsigned char *)&f + (elem == 2 ? 2 : 0), elem);
	}
	return p;
}

/* One GEMM: C (M x N, fp32) = op(A) op(B). */
typedef struct gemm {
	int ta, tb, M, N, K;
	const void *A, *B;
	float *C;
#ifdef HAVE_ONEDNN
	dnnl_primitive_t prim;
	dnnl_memory_t mem[3];
#endif
} gemm;

typedef struct step {
	gemm g[MAXG];
	int n, bf16;
	double flops;
#ifdef HAVE_ONEDNN
	dnnl_engine_t engine;
	dnnl_stream_t stream;
#endif
} step;

/* The step's GEMMs, in trainer/mlp.c's order, over buffers of their own:
 * x and the weights (elem bytes each), the activations and output
 * gradients (elem: the operands' copies) and the fp32 results. */
static void build(step *s, const int *sizes, int L, int b, size_t elem)
{
	void *act[MAXL + 1], *w[MAXL], *dz[MAXL];
	float *out[MAXL], *dw[MAXL], *dx[MAXL];
	act[0] = filled((size_t)b * sizes[0], elem);
	for (int l = 0; l < L; l++) {
		size_t in = (size_t)sizes[l], o = (size_t)sizes[l + 1];
		w[l] = filled(o * in, elem);
		act[l + 1] = filled((size_t)b * o, elem);
		dz[l] = filled((size_t)b * o, elem);
		out[l] = filled((size_t)b * o, 4);
		dw[l] = filled(o * in, 4);
		dx[l] = filled((size_t)b * in, 4);
	}
	s->n = 0;
	for (int l = 0; l < L; l++)
		s->g[s->n++] = (gemm){.ta = 0, .tb = 1, .M = b, .N = sizes[l + 1], .K = sizes[l],
		                      .A = act[l], .B = w[l], .C = out[l]};
	for (int l = L - 1; l >= 0; l--) {
		if (l > 0)
			s->g[s->n++] = (gemm){.ta = 0, .tb = 0, .M = b, .N = sizes[l],
			                      .K = sizes[l + 1], .A = dz[l], .B = w[l], .C = dx[l]};
		s->g[s->n++] = (gemm){.ta = 1, .tb = 0, .M = sizes[l + 1], .N = sizes[l], .K = b,
		                      .A = dz[l], .B = act[l], .C = dw[l]};
	}
	s->flops = 0;
	for (int i = 0; i < s->n; i++)
		s->flops += 2.0 * s->g[i].M * s->g[i].N * s->g[i].K;
}

#ifdef HAVE_ONEDNN
static void md(dnnl_memory_desc_t *d, int rows, int cols, int trans, dnnl_data_type_t t)
{
	dnnl_dims_t dims = {rows, cols};
	dnnl_dims_t strides = {trans ? 1 : cols, trans ? rows : 1};
	dnnl_memory_desc_init_by_strides(d, 2, dims, t, strides);
}

/* A matmul primitive for each GEMM; their implementations' names into
 * kernels (distinct, joined by '+'). */
static int prepare_bf16(step *s, char *kernels, size_t len)
{
	if (dnnl_engine_create(&s->engine, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&s->stream, s->engine, dnnl_stream_default_flags) != dnnl_success)
		return -1;
	kernels[0] = '\0';
	for (int i = 0; i < s->n; i++) {
		gemm *g = &s->g[i];
		dnnl_memory_desc_t a, b, c;
		md(&a, g->M, g->K, g->ta, dnnl_bf16);
		md(&b, g->K, g->N, g->tb, dnnl_bf16);
		md(&c, g->M, g->N, 0, dnnl_f32);
		dnnl_matmul_desc_t d;
		dnnl_primitive_desc_t pd;
		const char *impl = NULL;
		if (dnnl_matmul_desc_init(&d, &a, &b, NULL, &c) != dnnl_success ||
		    dnnl_primitive_desc_create(&pd, &d, NULL, s->engine, NULL) != dnnl_success)
			return -1;
		dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
		if (impl && !strstr(kernels, impl))
			snprintf(kernels + strlen(kernels), len - strlen(kernels), "%s%s",
			         kernels[0] ? "+" : "", impl);
		int ok = dnnl_primitive_create(&g->prim, pd) == dnnl_success &&
		         dnnl_memory_create(&g->mem[0], &a, s->engine, (void *)g->A) == dnnl_success &&
		         dnnl_memory_create(&g->mem[1], &b, s->engine, (void *)g->B) == dnnl_success &&
		         dnnl_memory_create(&g->mem[2], &c, s->engine, g->C) == dnnl_success;
		dnnl_primitive_desc_destroy(pd);
		if (!ok)
			return -1;
	}
	return 0;
}
#endif

static void run_step(const step *s)
{
	for (int i = 0; i < s->n; i++) {
		const gemm *g = &s->g[i];
		if (!s->bf16) {
			int lda = g->ta ? g->M : g->K, ldb = g->tb ? g->K : g->N;
			cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
			            g->tb ? CblasTrans : CblasNoTrans, g->M, g->N, g->K, 1.0f, g->A, lda,
			            g->B, ldb, 0.0f, g->C, g->N);
			continue;
		}
#ifdef HAVE_ONEDNN
		dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, g->mem[0]},
		                           {DNNL_ARG_WEIGHTS, g->mem[1]},
		                           {DNNL_ARG_DST, g->mem[2]}};
		dnnl_primitive_execute(g->prim, s->stream, 3, args);
		dnnl_stream_wait(s->stream);
#endif
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 6 || (strcmp(argv[1], "fp32") && strcmp(argv[1], "bf16"))) {
		fprintf(stderr, "usage: gemm_only fp32|bf16 THREADS BATCH SECONDS SIZES\n");
		return 2;
	}
	int bf16 = !strcmp(argv[1], "bf16"), threads = atoi(argv[2]), batch = atoi(argv[3]);
	double seconds = atof(argv[4]);
	int sizes[MAXL + 1], n = 0;
	for (char *p = argv[5]; n <= MAXL && *p;) {
		sizes[n++] = (int)strtol(p, &p, 10);
		if (*p == '-')
			p++;
	}
	if (n < 2 || threads < 1 || batch < 1) {
		fprintf(stderr, "gemm_only: bad arguments\n");
		return 2;
	}
	openblas_set_num_threads(threads);
	step s = {.bf16 = bf16};
	build(&s, sizes, n - 1, batch, bf16 ? 2 : 4);
	char kernels[256];
	snprintf(kernels, sizeof kernels, "OpenBLAS %s", openblas_get_corename());
	if (bf16) {
#ifdef HAVE_ONEDNN
		omp_set_num_threads(threads);
		if (prepare_bf16(&s, kernels, sizeof kernels) < 0) {
			fprintf(stderr, "gemm_only: oneDNN could not make the bf16 GEMMs\n");
			return 1;
		}
#else
		fprintf(stderr, "gemm_only: built without oneDNN (configure --with-onednn)\n");
		return 1;
#endif
	}
	run_step(&s);
	/* steps per repetition: ~0.1 s, from a first timing */
	double t0 = now();
	run_step(&s);
	double one = now() - t0;
	int per = (int)(0.1 / (one > 1e-7 ? one : 1e-7)) + 1, reps = 0;
	static double rate[4096];
	double end = now() + seconds;
	while (reps < 4096 && (reps < 3 || now() < end)) {
		t0 = now();
		for (int k = 0; k < per; k++)
			run_step(&s);
		rate[reps++] = per / (now() - t0);
	}
	qsort(rate, (size_t)reps, sizeof *rate, cmp_double);
	double steps_per_s = rate[(reps - 1) / 2];
	printf("{\"precision\": \"%s\", \"sizes\": \"%s\", \"threads\": %d, \"batch\": %d, "
	       "\"step_samples_per_s\": %.1f, \"step_gflops\": %.2f, \"repetitions\": %d, "
	       "\"kernels\": \"%s\"}\n",
	       argv[1], argv[5], threads, batch, steps_per_s * batch, steps_per_s * s.flops * 1e-9,
	       reps, kernels);
	return 0; /* the buffers and primitives go with the process */
}

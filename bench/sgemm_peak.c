/*
 * sgemm_peak.c — what OpenBLAS's sgemm reaches on this machine, as the
 * yardstick for the trainer's GEMMs (bench/train.sh): the peak, on large
 * square matrices, and the rate on the exact shapes one training step of a
 * 784-256-128-10 MLP at batch B multiplies (forward, weight gradients,
 * input gradients), with the same row-major, transposed layouts the
 * trainer uses.
 *
 * Usage: sgemm_peak THREADS [BATCH]  — prints one JSON object:
 *   {"threads": T, "peak_gflops": ..., "step_gflops": ..., "step_flops": ...}
 * step_flops is the work of one step's GEMMs; step_gflops their rate when
 * run back to back (the median of 20 repetitions of 20 steps).
 *
 * sgemm_peak THREADS BATCH SECONDS — the GEMM-only rate alone: the step's
 * GEMMs back to back for about SECONDS, in repetitions of ~0.1 s, and
 * their median, as samples/s (BATCH per step):
 *   {"threads": T, "batch": B, "step_samples_per_s": ..., "step_gflops": ...,
 *    "repetitions": R}
 * bench/train.sh runs one copy per rank side by side and sums their rates:
 * the rate the trainer would reach if a step were nothing but its GEMMs.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static float *matrix(size_t n)
{
	float *m = malloc(n * sizeof *m);
	for (size_t i = 0; i < n; i++)
		m[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
	return m;
}

typedef struct shape {
	int ta, tb, M, N, K;
} shape;

static void run(const shape *s, float *A, float *B, float *C)
{
	int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
	cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
	            s->tb ? CblasTrans : CblasNoTrans, s->M, s->N, s->K, 1.0f, A, lda, B, ldb,
	            0.0f, C, s->N);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of n values (sorted in place); the lower one of an even count. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int batch = argc > 2 ? atoi(argv[2]) : 128;
	double seconds = argc > 3 ? atof(argv[3]) : 0;
	openblas_set_num_threads(threads);
	float *A = matrix(2048 * 2048), *B = matrix(2048 * 2048), *C = matrix(2048 * 2048);

	/* one step of 784-256-128-10 at `batch`: as trainer/mlp.c calls them */
	int b = batch;
	shape step[] = {
		{0, 1, b, 256, 784}, {0, 1, b, 128, 256}, {0, 1, b, 10, 128},  /* forward   */
		{1, 0, 10, 128, b},  {0, 0, b, 128, 10},                       /* layer 3   */
		{1, 0, 128, 256, b}, {0, 0, b, 256, 128},                      /* layer 2   */
		{1, 0, 256, 784, b},                                           /* layer 1   */
	};
	int n = (int)(sizeof step / sizeof step[0]);
	double flops = 0;
	for (int i = 0; i < n; i++)
		flops += 2.0 * step[i].M * step[i].N * step[i].K;
	for (int i = 0; i < n; i++)
		run(&step[i], A, B, C);

	if (seconds > 0) {
		/* steps per repetition: ~0.1 s, from a first timing */
		double t0 = now();
		for (int i = 0; i < n; i++)
			run(&step[i], A, B, C);
		double one = now() - t0;
		int per = (int)(0.1 / (one > 1e-7 ? one : 1e-7)) + 1, reps = 0;
		double rate[4096], end = now() + seconds;
		while (reps < 4096 && (reps < 3 || now() < end)) {
			t0 = now();
			for (int k = 0; k < per; k++)
				for (int i = 0; i < n; i++)
					run(&step[i], A, B, C);
			rate[reps++] = per / (now() - t0);
		}
		double steps_per_s = median(rate, reps);
		printf("{\"threads\": %d, \"batch\": %d, \"step_samples_per_s\": %.1f, "
		       "\"step_gflops\": %.2f, \"repetitions\": %d}\n",
		       threads, batch, steps_per_s * batch, steps_per_s * flops * 1e-9, reps);
		free(A);
		free(B);
		free(C);
		return 0;
	}

	/* peak: 1024^3, best of 10 */
	shape big = {0, 0, 1024, 1024, 1024};
	run(&big, A, B, C);
	double best = 1e9;
	for (int i = 0; i < 10; i++) {
		double t0 = now();
		run(&big, A, B, C);
		double t = now() - t0;
		best = t < best ? t : best;
	}
	double peak = 2.0 * 1024 * 1024 * 1024 / best * 1e-9;

	double times[20];
	for (int rep = 0; rep < 20; rep++) {
		double t0 = now();
		for (int k = 0; k < 20; k++)
			for (int i = 0; i < n; i++)
				run(&step[i], A, B, C);
		times[rep] = (now() - t0) / 20;
	}
	printf("{\"threads\": %d, \"batch\": %d, \"peak_gflops\": %.2f, \"step_gflops\": %.2f, "
	       "\"step_flops\": %.0f}\n",
	       threads, batch, peak, flops / median(times, 20) * 1e-9, flops);
	free(A);
	free(B);
	free(C);
	return 0;
}

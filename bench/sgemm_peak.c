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
 * run back to back; the best of several repetitions is kept.
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

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int batch = argc > 2 ? atoi(argv[2]) : 128;
	openblas_set_num_threads(threads);
	float *A = matrix(2048 * 2048), *B = matrix(2048 * 2048), *C = matrix(2048 * 2048);

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
	best = 1e9;
	for (int rep = 0; rep < 20; rep++) {
		double t0 = now();
		for (int k = 0; k < 20; k++)
			for (int i = 0; i < n; i++)
				run(&step[i], A, B, C);
		double t = (now() - t0) / 20;
		best = t < best ? t : best;
	}
	printf("{\"threads\": %d, \"batch\": %d, \"peak_gflops\": %.2f, \"step_gflops\": %.2f, "
	       "\"step_flops\": %.0f}\n",
	       threads, batch, peak, flops / best * 1e-9, flops);
	free(A);
	free(B);
	free(C);
	return 0;
}

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
 * Each GEMM multiplies the step's own operands, as the trainer's do: the
 * input batch, the three weight matrices, the activations, their
 * gradients and the weight gradients, each a matrix of its own (about 3.5
 * MB at batch 128, more than a core's L2). (The same three buffers for
 * all eight, as this program had before, gave the same rates within 1%,
 * one copy and two side by side, on a 2-core AMD EPYC.) bench/train.sh
 * runs one copy per rank side by side and sums their rates: the rate the
 * trainer would reach if a step were nothing but its GEMMs.
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

/* A GEMM of the step: C = op(A) op(B), with its operands' buffers. */
typedef struct shape {
	int ta, tb, M, N, K;
	int a, b, c; /* operands: indices into the step's buffers */
} shape;

static void run(const shape *s, float *const *buf)
{
	int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
	cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
	            s->tb ? CblasTrans : CblasNoTrans, s->M, s->N, s->K, 1.0f, buf[s->a], lda,
	            buf[s->b], ldb, 0.0f, buf[s->c], s->N);
}

static void run_step(const shape *step, int n, float *const *buf)
{
	for (int i = 0; i < n; i++)
		run(&step[i], buf);
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

static void free_all(float **buf, int n, float **big)
{
	for (int i = 0; i < n; i++)
		free(buf[i]);
	for (int i = 0; i < 3; i++)
		free(big[i]);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int batch = argc > 2 ? atoi(argv[2]) : 128;
	double seconds = argc > 3 ? atof(argv[3]) : 0;
	openblas_set_num_threads(threads);
	int b = batch;
	/* the step's buffers, sized as trainer/mlp.c's (row-major): the
	 * input, weights, activations, their gradients (each layer's dz is
	 * the gradient of its output, masked in place), weight gradients */
	enum { X, W1, W2, W3, A1, A2, A3, DZ1, DZ2, DZ3, DW1, DW2, DW3, NBUF };
	size_t sizes[NBUF] = {
	    [X] = (size_t)b * 784,  [W1] = 256 * 784,         [W2] = 128 * 256,
	    [W3] = 10 * 128,        [A1] = (size_t)b * 256,   [A2] = (size_t)b * 128,
	    [A3] = (size_t)b * 10,  [DZ1] = (size_t)b * 256,  [DZ2] = (size_t)b * 128,
	    [DZ3] = (size_t)b * 10, [DW1] = 256 * 784,        [DW2] = 128 * 256,
	    [DW3] = 10 * 128};
	float *buf[NBUF], *big[3];
	for (int i = 0; i < 3; i++)
		big[i] = matrix(2048 * 2048);
	for (int i = 0; i < NBUF; i++)
		buf[i] = matrix(sizes[i]);

	/* one step of 784-256-128-10 at `batch`: as trainer/mlp.c calls them */
	shape step[] = {
	    {0, 1, b, 256, 784, X, W1, A1},    {0, 1, b, 128, 256, A1, W2, A2}, /* forward */
	    {0, 1, b, 10, 128, A2, W3, A3},
	    {1, 0, 10, 128, b, DZ3, A2, DW3},  {0, 0, b, 128, 10, DZ3, W3, DZ2}, /* layer 3 */
	    {1, 0, 128, 256, b, DZ2, A1, DW2}, {0, 0, b, 256, 128, DZ2, W2, DZ1}, /* layer 2 */
	    {1, 0, 256, 784, b, DZ1, X, DW1},                                     /* layer 1 */
	};
	int n = (int)(sizeof step / sizeof step[0]);
	double flops = 0;
	for (int i = 0; i < n; i++)
		flops += 2.0 * step[i].M * step[i].N * step[i].K;
	run_step(step, n, buf);

	if (seconds > 0) {
		/* steps per repetition: ~0.1 s, from a first timing */
		double t0 = now();
		run_step(step, n, buf);
		double one = now() - t0;
		int per = (int)(0.1 / (one > 1e-7 ? one : 1e-7)) + 1, reps = 0;
		double rate[4096], end = now() + seconds;
		while (reps < 4096 && (reps < 3 || now() < end)) {
			t0 = now();
			for (int k = 0; k < per; k++)
				run_step(step, n, buf);
			rate[reps++] = per / (now() - t0);
		}
		double steps_per_s = median(rate, reps);
		printf("{\"threads\": %d, \"batch\": %d, \"step_samples_per_s\": %.1f, "
		       "\"step_gflops\": %.2f, \"repetitions\": %d}\n",
		       threads, batch, steps_per_s * batch, steps_per_s * flops * 1e-9, reps);
		free_all(buf, NBUF, big);
		return 0;
	}

	/* peak: 1024^3, best of 10 */
	shape square = {0, 0, 1024, 1024, 1024, 0, 1, 2};
	run(&square, big);
	double best = 1e9;
	for (int i = 0; i < 10; i++) {
		double t0 = now();
		run(&square, big);
		double t = now() - t0;
		best = t < best ? t : best;
	}
	double peak = 2.0 * 1024 * 1024 * 1024 / best * 1e-9;

	double times[20];
	for (int rep = 0; rep < 20; rep++) {
		double t0 = now();
		for (int k = 0; k < 20; k++)
			run_step(step, n, buf);
		times[rep] = (now() - t0) / 20;
	}
	printf("{\"threads\": %d, \"batch\": %d, \"peak_gflops\": %.2f, \"step_gflops\": %.2f, "
	       "\"step_flops\": %.0f}\n",
	       threads, batch, peak, flops / median(times, 20) * 1e-9, flops);
	free_all(buf, NBUF, big);
	return 0;
}

/*
 * core_speed.c — how fast one core runs a pipeline stage's GEMMs, window
 * by window: the forward of a microbatch through two square layers (ROWS
 * x WIDTH times WIDTH x WIDTH, twice), back to back for SECONDS, and for
 * each window of 0.1 s the fastest call in it. Preemption lengthens some
 * calls of a window, not its fastest, so a window whose fastest call is
 * slow is a window in which the core itself ran slow (another guest on
 * its sibling, its frequency, its caches or memory shared with a busy
 * neighbour): bench/parallelism.sh part a (TRACE=1) runs one on each core
 * at once, beside the pipeline's traces, to tell the machine's changes of
 * speed from the trainer's (doc/parallelism.md, "Why the stages' compute
 * times differ").
 *
 * Usage: core_speed SECONDS [ROWS [WIDTH]]   (default 32 rows, 512 wide)
 * prints one line a window: seconds since the start, the fastest call (us).
 * OpenBLAS single-threaded, with the trainer's choice of kernels where the
 * caller sets OPENBLAS_CORETYPE as the trainer does (trainer/cpus.c).
 */
#include "config.h"

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

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: core_speed SECONDS [ROWS [WIDTH]]\n");
		return 2;
	}
	double seconds = atof(argv[1]);
	int rows = argc > 2 ? atoi(argv[2]) : 32, n = argc > 3 ? atoi(argv[3]) : 512;
	if (seconds <= 0 || rows < 1 || n < 1) {
		fprintf(stderr, "core_speed: SECONDS, ROWS and WIDTH must be positive\n");
		return 2;
	}
	openblas_set_num_threads(1);
	size_t act = (size_t)rows * (size_t)n, sq = (size_t)n * (size_t)n;
	float *x = malloc(act * sizeof *x), *y = malloc(act * sizeof *y), *z = malloc(act * sizeof *z);
	float *w1 = malloc(sq * sizeof *w1), *w2 = malloc(sq * sizeof *w2);
	if (!x || !y || !z || !w1 || !w2) {
		fprintf(stderr, "core_speed: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < act; i++)
		x[i] = 0.01f * (float)(i % 7);
	for (size_t i = 0; i < sq; i++)
		w1[i] = w2[i] = 0.001f * (float)(i % 13) - 0.006f;
	double start = now(), window = start, fastest = 1e30;
	for (double t = start; t - start < seconds; t = now()) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, n, 1.0f, x, n, w1, n,
		            0.0f, y, n);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, n, 1.0f, y, n, w2, n,
		            0.0f, z, n); /* not into x: the same values every call */
		double d = now() - t;
		fastest = d < fastest ? d : fastest;
		if (t - window >= 0.1) {
			printf("%.3f\t%.1f\n", t - start, fastest * 1e6);
			window = t;
			fastest = 1e30;
		}
	}
	free(x);
	free(y);
	free(z);
	free(w1);
	free(w2);
	return 0;
}

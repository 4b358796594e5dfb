/*
 * randread.c — this machine's ceiling for reading records in a random order:
 * every SIZE-byte block of the FILES (at offsets 0, SIZE, 2 SIZE, ...),
 * in one random permutation, read by THREADS threads with io_uring (queue
 * depth 32) or pread into aligned buffers, with nothing else done: no CRC,
 * no batches. bench/loader.sh sets the loader's global shuffle against it.
 * The direct-uring and direct-pread modes open the files with O_DIRECT
 * (io_uring at queue depth 128, as the loader's --direct): from a cold
 * device that is the device's own ceiling for random reads of SIZE bytes.
 * A bench-only helper (not installed).
 *
 * Usage: randread uring|pread|direct-uring|direct-pread THREADS SIZE FILE...
 * Prints: <records> <seconds> <records/s> <GB/s>
 */
#include "config.h"
#include "grow.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#define DEPTH 32         /* io_uring queue depth, page cache */
#define DEPTH_DIRECT 128 /* ... and O_DIRECT (the loader's queue_depth) */
#define SLOTS 256 /* destination blocks per thread, reused in turn */

typedef struct job {
	const int *fds;
	const uint64_t *blocks; /* file index << 40 | block number */
	size_t n, size;
	int uring;
	unsigned depth;
	long result;
} job;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
	job *j = arg;
	uint8_t *buf = aligned_alloc(4096, SLOTS * j->size);
	if (!buf)
		return NULL;
	long done = 0;
	if (!j->uring) {
		for (size_t i = 0; i < j->n; i++) {
			uint64_t b = j->blocks[i];
			ssize_t r = pread(j->fds[b >> 40], buf + (i % SLOTS) * j->size, j->size,
			                  (off_t)((b & ((1ull << 40) - 1)) * j->size));
			done += r == (ssize_t)j->size;
		}
	}
#ifdef HAVE_LIBURING
	else {
		struct io_uring ring;
		if (io_uring_queue_init(j->depth, &ring, 0) < 0) {
			free(buf);
			return NULL;
		}
		size_t next = 0, inflight = 0;
		while (next < j->n || inflight > 0) {
			while (inflight < j->depth && next < j->n) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
				uint64_t b = j->blocks[next];
				io_uring_prep_read(sqe, j->fds[b >> 40], buf + (next % SLOTS) * j->size,
				                   (unsigned)j->size, (b & ((1ull << 40) - 1)) * j->size);
				next++;
				inflight++;
			}
			io_uring_submit_and_wait(&ring, 1);
			struct io_uring_cqe *cqe;
			unsigned head, seen = 0;
			io_uring_for_each_cqe(&ring, head, cqe)
			{
				seen++;
				done += cqe->res == (int)j->size;
			}
			io_uring_cq_advance(&ring, seen);
			inflight -= seen;
		}
		io_uring_queue_exit(&ring);
	}
#endif
	free(buf);
	j->result = done;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr,
		        "usage: randread uring|pread|direct-uring|direct-pread THREADS SIZE FILE...\n");
		return 2;
	}
	int direct = !strncmp(argv[1], "direct-", 7);
	const char *io = argv[1] + (direct ? 7 : 0);
	int uring = !strcmp(io, "uring");
	if (!uring && strcmp(io, "pread")) {
		fprintf(stderr, "randread: unknown mode %s\n", argv[1]);
		return 2;
	}
#ifndef HAVE_LIBURING
	if (uring) {
		fprintf(stderr, "randread: built without liburing\n");
		return 1;
	}
#endif
	int nthreads = atoi(argv[2]);
	size_t size = strtoull(argv[3], NULL, 10);
	int nfiles = argc - 4;
	if (nthreads < 1 || nthreads > 64 || size == 0 || (direct && size % 4096)) {
		fprintf(stderr, "randread: bad THREADS or SIZE (a multiple of 4096 under O_DIRECT)\n");
		return 2;
	}
	int *fds = calloc((size_t)nfiles, sizeof *fds);
	size_t total = 0, cap = 0;
	uint64_t *blocks = NULL;
	if (!fds) {
		fprintf(stderr, "randread: out of memory\n");
		return 1;
	}
	for (int f = 0; f < nfiles; f++) {
		struct stat st;
		if ((fds[f] = open(argv[4 + f], O_RDONLY | (direct ? O_DIRECT : 0))) < 0 ||
		    fstat(fds[f], &st) < 0) {
			fprintf(stderr, "randread: cannot open %s\n", argv[4 + f]);
			return 1;
		}
		for (uint64_t k = 0; (k + 1) * size <= (uint64_t)st.st_size; k++) {
			if (rio__grow(&blocks, &cap, total + 1, sizeof *blocks, 1 << 20)) {
				fprintf(stderr, "randread: out of memory at %zu blocks\n", total);
				return 1;
			}
			blocks[total++] = (uint64_t)f << 40 | k;
		}
	}
	uint64_t x = 0x9e3779b97f4a7c15ull; /* a fixed permutation (xorshift) */
	for (size_t i = total; i > 1; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t k = (size_t)(x % i);
		uint64_t t = blocks[i - 1];
		blocks[i - 1] = blocks[k];
		blocks[k] = t;
	}
	job jobs[64];
	pthread_t th[64];
	size_t per = (total + (size_t)nthreads - 1) / (size_t)nthreads;
	double t0 = now();
	for (int t = 0; t < nthreads; t++) {
		size_t a = (size_t)t * per < total ? (size_t)t * per : total;
		size_t b = a + per < total ? a + per : total;
		jobs[t] = (job){fds, blocks + a, b - a, size, uring, direct ? DEPTH_DIRECT : DEPTH, 0};
		pthread_create(&th[t], NULL, run, &jobs[t]);
	}
	long done = 0;
	for (int t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		done += jobs[t].result;
	}
	double secs = now() - t0;
	if ((size_t)done != total) {
		fprintf(stderr, "randread: %ld of %zu reads were whole\n", done, total);
		return 1;
	}
	printf("%zu %.4f %.0f %.2f\n", total, secs, (double)total / secs,
	       (double)total * (double)size / secs / 1e9);
	return 0;
}

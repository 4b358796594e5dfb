/*
 * core_rtt.c — the round trip of a cache line between two CPUs: two
 * threads, one bound to each, pass a counter back and forth through one
 * line, and the mean time of a round trip is printed as one JSON object:
 *   {"cpus": [0, 1], "round_trip_ns": 94.1, "round_trips": 200000}
 *
 * Why: the ranks of recordio-train on one host hand each other their
 * gradients through shared memory every step, so what a line costs to
 * move between their cores sets the exposed part of the sum. On this
 * project's 2-vCPU VM the host moves the two vCPUs between places that
 * share a cache (75-120 ns) and places that do not (400-850 ns), and the
 * exposed sum at 2 ranks goes from 3 % to 10 % with it (doc/performance.md);
 * bench/train.sh prints this at each round's start and end.
 *
 * Usage: core_rtt [CPU_A CPU_B [ROUND_TRIPS]]   (default 0 1 200000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Alignas(64) _Atomic long line;
static _Alignas(64) _Atomic int far_failed; /* the far side cannot run on its CPU */

typedef struct side {
	int cpu;
	long trips;
} side;

static int bind_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

enum { WARMUP = 10000 }; /* untimed trips first: both threads running */

/* The far side: answers each odd value with the next even one. */
static void *answer(void *arg)
{
	const side *s = arg;
	if (bind_to(s->cpu) != 0) {
		atomic_store(&far_failed, 1);
		return NULL;
	}
	for (long i = 1; i <= s->trips; i++) {
		while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i - 1)
			;
		atomic_store_explicit(&line, 2 * i, memory_order_release);
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
	long trips = argc > 3 ? atol(argv[3]) : 200000;
	if (argc == 2 || argc > 4 || a < 0 || b < 0 || a == b || trips < 1) {
		fprintf(stderr, "usage: core_rtt [CPU_A CPU_B [ROUND_TRIPS]] (two different CPUs)\n");
		return 2;
	}
	/* the far side binds itself first: a CPU this process may not use
	 * sets far_failed */
	side far = {b, WARMUP + trips};
	pthread_t t;
	int rc = pthread_create(&t, NULL, answer, &far);
	if (rc != 0) {
		fprintf(stderr, "core_rtt: starting a thread: %s\n", strerror(rc));
		return 1;
	}
	if ((rc = bind_to(a)) != 0) {
		fprintf(stderr, "core_rtt: CPU %d: %s\n", a, strerror(rc));
		return 1;
	}
	double t0 = 0;
	for (long i = 1; i <= WARMUP + trips; i++) {
		if (i == WARMUP + 1)
			t0 = now();
		atomic_store_explicit(&line, 2 * i - 1, memory_order_release);
		while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i)
			if (atomic_load_explicit(&far_failed, memory_order_relaxed)) {
				fprintf(stderr, "core_rtt: CPU %d: not one this process may run on\n", b);
				return 1;
			}
	}
	double t1 = now();
	pthread_join(t, NULL);
	printf("{\"cpus\": [%d, %d], \"round_trip_ns\": %.1f, \"round_trips\": %ld}\n", a, b,
	       (t1 - t0) / (double)trips * 1e9, trips);
	return 0;
}

/*
 * clock.h — monotonic seconds, the one clock every timing in the project
 * reads: the loader's wait for a batch, the tools' progress lines and
 * figures, the trainer's step, GEMM, allreduce and epoch times.
 *
 * Monotonic, so a step of the wall clock (NTP, an administrator) never
 * makes a duration negative; a double of seconds, so callers subtract two
 * readings. Header-only and inline: the loader reads it twice per batch.
 */
#ifndef RIO_CLOCK_H
#define RIO_CLOCK_H

#include <time.h>

static inline double rio__now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* RIO_CLOCK_H */

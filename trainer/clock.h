/*
 * clock.h — monotonic seconds, for the trainer's timings (data wait,
 * GEMMs, allreduce, optimizer, epochs).
 */
#ifndef RIO_TRAINER_CLOCK_H
#define RIO_TRAINER_CLOCK_H

#include <time.h>

static inline double tr_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* RIO_TRAINER_CLOCK_H */

/*
 * copies.h — --eval-every: copies of the parameters kept during an epoch
 * (each rank's whole model under allreduce, each server's slice under ps)
 * with what had been trained when each was taken, evaluated at the
 * epoch's end (the learning curve), then dropped.
 */
#ifndef RIO_TRAINER_COPIES_H
#define RIO_TRAINER_COPIES_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_copy {
	float *params;           /* host                                       */
	uint64_t updates;        /* applied since the start (allreduce: steps) */
	uint64_t gradients;      /* in them (allreduce: steps x ranks)         */
	double samples;          /* records in them                            */
	double seconds;          /* training seconds then (no evaluations)     */
} tr_copy;

typedef struct tr_copies {
	tr_copy *v;
	int n;
	size_t cap;
} tr_copies;

/* A new copy of `floats` parameters (their memory allocated, the rest
 * zero), or NULL when out of memory. */
tr_copy *tr_copies_add(tr_copies *c, size_t floats);
/* Drops the copies (after they were evaluated). */
void tr_copies_clear(tr_copies *c);
void tr_copies_free(tr_copies *c);

#endif /* RIO_TRAINER_COPIES_H */

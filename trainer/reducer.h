/*
 * reducer.h — summing the gradient buffer over the ranks in contiguous
 * buckets, each started (MPI_Iallreduce, in place) as soon as backward has
 * finished the layers it covers, so communication overlaps the rest of
 * backward; finish() waits for all. Also checks, bucket by bucket, that
 * what this rank contributes is finite, so a NaN on any rank can be
 * agreed on in the same collectives (the TR_EXTRA_NONFINITE slot).
 *
 * The buffer is host memory: the gradients themselves on the CPU, pinned
 * staging copies of them on a GPU. Results are the same for any bucket
 * size: every element is summed by the same collective over the same ranks.
 */
#ifndef RIO_TRAINER_REDUCER_H
#define RIO_TRAINER_REDUCER_H

#include <mpi.h>
#include <stddef.h>

typedef struct tr_reducer {
	MPI_Comm comm;
	int size;              /* ranks                                      */
	float *buf;            /* n floats, host                             */
	size_t n;
	size_t bucket;         /* floats per collective                      */
	size_t posted;         /* [0, posted) handed to MPI                  */
	size_t checked;        /* [0, checked) checked for non-finite values */
	int nonfinite;         /* this rank's contribution had a NaN or inf  */
	MPI_Request *reqs;
	int nreqs, cap;
	double seconds;        /* time spent in MPI calls (exposed time)     */
	unsigned long long collectives;
} tr_reducer;

int tr_reducer_init(tr_reducer *r, MPI_Comm comm, float *buf, size_t n, size_t bucket_bytes);
void tr_reducer_free(tr_reducer *r);

/* A new step: nothing posted or checked. */
void tr_reducer_begin(tr_reducer *r);
/* buf[0, end) is final on this rank: checks it and starts every whole
 * bucket within it. */
void tr_reducer_ready(tr_reducer *r, size_t end);
/* Checks the rest, sets buf[flag] (a slot not yet posted) to 1 when
 * anything this rank contributes is not finite, else 0, starts the rest
 * (buf[posted, n)) and waits for every bucket; afterwards buf holds the
 * sums, and buf[flag] > 0 on every rank when any rank saw a NaN. */
void tr_reducer_finish(tr_reducer *r, size_t flag);

#endif /* RIO_TRAINER_REDUCER_H */

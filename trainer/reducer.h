/*
 * reducer.h — summing the gradient buffer over the ranks in contiguous
 * buckets, each started (MPI_Iallreduce, in place) as soon as backward has
 * finished the layers it covers, and handed back as soon as its sum is in,
 * so that the optimizer updates bucket k while the others are still being
 * summed (and, on one rank, while the gradients are still in cache).
 *
 * A small "head" vector (the step's loss, correct count, record count and
 * flags) is summed ahead of the gradients, started before backward: by the
 * time the first bucket is in, every rank knows the global batch and
 * whether the step is to be applied at all.
 *
 * Each bucket handed back has been checked for NaN and infinities in its
 * sum: every rank sees the same sums, so every rank reaches the same
 * verdict, and a rank's non-finite contribution (NaN + x is NaN, inf - inf
 * is NaN) shows in the sum. The buffers are host memory: the gradients
 * themselves on the CPU, pinned staging copies of them on a GPU. Sums are
 * the same for any bucket size and any completion order: every element is
 * summed by one collective over the same ranks. (The gradients summed may
 * differ in their last bits with another bucket size: backward computes
 * the weight gradients in pieces that end at bucket boundaries, and some
 * OpenBLAS kernels round GEMMs of other shapes differently.)
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
	int nbuckets;
	float *head;           /* nhead floats, host, summed first           */
	int nhead;
	MPI_Request head_req;
	int head_in;           /* the head's sums are in                     */
	int persistent;        /* reqs and head_req are persistent requests,
	                        * set up once and started each step          */
	MPI_Request *reqs;     /* per bucket; MPI_REQUEST_NULL or inactive
	                        * when idle                                 */
	int *done;             /* buckets whose sums are in, in order found  */
	int ndone, taken;      /* done[taken, ndone) not yet handed back     */
	int *scratch;          /* indices for MPI_Testsome / MPI_Waitsome    */
	size_t posted;         /* [0, posted) handed to MPI                  */
	double seconds;        /* time spent in MPI calls (exposed time)     */
	unsigned long long collectives;
} tr_reducer;

/* Everything is allocated here, once: a step allocates nothing. */
int tr_reducer_init(tr_reducer *r, MPI_Comm comm, float *buf, size_t n, size_t bucket_bytes,
                    float *head, int nhead);
void tr_reducer_free(tr_reducer *r);

/* A new step: nothing posted, nothing in. */
void tr_reducer_begin(tr_reducer *r);
/* Starts summing the head (its values final on this rank). */
void tr_reducer_head(tr_reducer *r);
/* 1 when the head's sums are in; with `wait`, waits for them. */
int tr_reducer_head_in(tr_reducer *r, int wait);
/* buf[0, end) is final on this rank: starts every whole bucket within it,
 * and lets MPI progress those in flight. */
void tr_reducer_ready(tr_reducer *r, size_t end);
/* buf[0, n) is final: starts what is left. */
void tr_reducer_flush(tr_reducer *r);
/* A bucket whose sum is in and was not handed back yet: 1 with its range
 * [*begin, *end) and *finite (0 when the sum has a NaN or an infinity);
 * 0 when there is none now (wait 0) or, with wait, when every bucket has
 * been handed back (call it after tr_reducer_flush). */
int tr_reducer_take(tr_reducer *r, int wait, size_t *begin, size_t *end, int *finite);

/* 1 when any of v[0, n) (host memory) is a NaN or an infinity. */
int tr_nonfinite(const float *v, size_t n);

#endif /* RIO_TRAINER_REDUCER_H */

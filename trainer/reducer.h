/*
 * reducer.h — summing the gradient buffer over the ranks in contiguous
 * buckets, each started as soon as backward has finished the layers it
 * covers, and handed back as soon as its sum is in, so that the optimizer
 * updates bucket k while the others are still being summed (and, on one
 * rank, while the gradients are still in cache).
 *
 * Three ways to sum (tr_reduce_mode; --reduce):
 *   shm      every rank on one host: the ranks' gradient buffers are in
 *            the host's MPI-3 shared-memory window (shm_window.h, laid
 *            out by the parameter store, store.h), so backward writes
 *            straight into it; each bucket is cut into one slice per rank,
 *            and rank r sums slice r over all the ranks' buffers into a
 *            node-wide sum buffer, signalled by per-bucket counters in the
 *            window. No copy into MPI: the whole reduction is one read of
 *            each rank's gradients and one write of the sum, shared out
 *            among the ranks. With an elementwise optimizer the update may
 *            be sharded too (--shard-optimizer): each rank updates its
 *            slices of the host's one copy of the parameters and optimizer
 *            state (the store's, in the window too).
 *   alltoall any hosts: the same slices over MPI (reduce-scatter as an
 *            all-to-all of slices, rank r summing slice r, then an
 *            allgather of the summed slices), persistent collectives.
 *   mpi      Open MPI's own allreduce of each bucket (in place): its
 *            summation order is its algorithm's, which may depend on the
 *            message size and the number of ranks.
 * shm and alltoall add every element in the same order, rank 0 to rank
 * n - 1, left to right (((g0 + g1) + g2) + ...): their sums are the same
 * bits, whatever hosts the ranks are on and whatever the bucket size
 * (tr_sum_ranked is that order, the one implementation of it). With 2
 * ranks every way gives the same bits (a + b == b + a).
 *
 * A small "head" vector (the step's loss, correct count, record count and
 * flags) is summed ahead of the gradients, started before backward: by the
 * time the first bucket is in, every rank knows the global batch and
 * whether the step is to be applied at all. Its sums are read from
 * head_sum (rank order under shm and alltoall).
 *
 * Each bucket handed back has been checked for NaN and infinities in its
 * sum: every rank sees the same sums, so every rank reaches the same
 * verdict, and a rank's non-finite contribution (NaN + x is NaN, inf - inf
 * is NaN) shows in the sum. The buffers are host memory: the gradients
 * themselves on the CPU, staging copies of them on a GPU. The bucket size
 * groups the sums and never changes them: each element is summed alone.
 *
 * Compression (tr_grad_comp; --grad-compression, alltoall and mpi only):
 * each bucket is cast to 16 bits (bf16, or fp16 after dividing by the
 * ranks, as DDP's hook does, so that the sum cannot overflow where the
 * gradients did not) for the exchange, half the bytes. alltoall: each rank
 * widens the ranks' copies of its slice and sums them in fp32, in rank
 * order, then casts the sum to 16 bits for the allgather; mpi: a
 * user-defined op adds two 16-bit vectors in fp32 (Open MPI has no 16-bit
 * MPI_SUM). Every rank widens the same 16-bit sums, so all agree, bit for
 * bit; an fp16 overflow is an infinity in the sum, and the bucket is not
 * finite. The head stays fp32.
 */
#ifndef RIO_TRAINER_REDUCER_H
#define RIO_TRAINER_REDUCER_H

#include "backend.h" /* tr_nonfinite */
#include "shm_window.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tr_reduce_mode {
	TR_REDUCE_AUTO = 0,     /* shm on one host (CPU), else alltoall      */
	TR_REDUCE_MPI = 1,
	TR_REDUCE_SHM = 2,
	TR_REDUCE_ALLTOALL = 3,
} tr_reduce_mode;

enum { TR_REDUCER_MAX_HEAD = 16 };

typedef enum tr_grad_comp {
	TR_COMP_NONE = 0,
	TR_COMP_BF16 = 1,
	TR_COMP_FP16 = 2,
} tr_grad_comp;

typedef struct tr_reducer_shm tr_reducer_shm; /* reducer_shm.c */

/* A sharded update (shm): called by the reducer for this rank's slice
 * [begin, end) of each bucket, once every slice of the bucket is summed
 * and the head is in; finite 0 when some sum of the bucket is a NaN or an
 * infinity. */
typedef void (*tr_reducer_update_fn)(void *ctx, size_t begin, size_t end, int finite);

/* shm: the reducer's memory in the host's window, lent by its owner (the
 * parameter store), which sized it with tr_reducer_shm_bytes(): at the
 * same offsets in every rank's part, the rank's control block (counters
 * and head slots) and its gradients (n + nhead floats: buf, then head);
 * in the host's part, the sums (n floats). */
typedef struct tr_reducer_shm_mem {
	const tr_shm_window *win;
	size_t ctl_at, buf_at;  /* offsets in each rank's part               */
	float *sum;             /* n floats in the host's part               */
	int sharded;            /* the update is sharded (r->update)         */
} tr_reducer_shm_mem;

typedef struct tr_reducer {
	MPI_Comm comm;
	int size, rank;        /* ranks, this rank                           */
	tr_reduce_mode mode;   /* as run (never auto)                        */
	float *buf;            /* n floats, host: this rank's gradients      */
	float *sum;            /* where the sums land: buf, or under shm the
	                        * node's sum buffer (read only)             */
	size_t n;
	size_t bucket;         /* floats per bucket                          */
	int nbuckets;
	float *head;           /* nhead floats, host: this rank's head       */
	float head_sum[TR_REDUCER_MAX_HEAD]; /* its sums (shm, alltoall)    */
	int nhead;
	const float *head_out; /* head_sum, or head itself (mpi, one rank)   */
	MPI_Request head_req;
	int head_in;           /* the head's sums are in                     */
	int persistent;        /* reqs and head_req are persistent requests,
	                        * set up once and started each step          */
	MPI_Request *reqs;     /* per bucket, the request in flight: for
	                        * alltoall its all-to-all, then its allgather */
	MPI_Request *p_a2a, *p_ag; /* alltoall: the persistent requests      */
	int *phase;            /* alltoall: 0 idle, 1 all-to-all, 2 allgather */
	int *counts, *displs;  /* alltoall: per bucket, n slices' lengths and
	                        * offsets in the bucket                     */
	float *parts;          /* alltoall: per bucket, every rank's copy of
	                        * this rank's slice, side by side            */
	size_t *parts_off;     /* ... bucket i's from parts + parts_off[i]   */
	float *head_all;       /* alltoall: every rank's head                */
	tr_reducer_shm *shm;   /* shm: the window and its counters           */
	int sharded;           /* shm: each rank updates its slices (below)  */
	tr_reducer_update_fn update; /* sharded: set by the step, after begin */
	void *update_ctx;
	double update_seconds; /* time in update (not counted in seconds)   */
	int *done;             /* buckets whose sums are in, in order found  */
	int ndone, taken;      /* done[taken, ndone) not yet handed back     */
	int *scratch;          /* indices for MPI_Testsome / MPI_Waitsome    */
	size_t posted;         /* [0, posted) started                        */
	uint64_t seq;          /* steps begun                                */
	double seconds;        /* time spent reducing and waiting (exposed)  */
	unsigned long long collectives;
	tr_grad_comp comp;     /* the exchange's 16 bits, or none            */
	uint16_t *cbuf;        /* compressed: n values, what is sent and the
	                        * 16-bit sums that come back                 */
	uint16_t *cparts;      /* compressed alltoall: parts, in 16 bits     */
	MPI_Op op;             /* compressed mpi: the 16-bit sum             */
	int overflowed;        /* a bucket taken this step held an infinity
	                        * (compressed: the 16-bit cast overflowed)   */
} tr_reducer;

/* Collective over comm: the way the gradients will be summed, `asked`
 * (--reduce) made definite: auto picks shm when every rank of comm shares
 * this host's memory and `shm_ok` (the gradients are host memory written
 * by the CPU) on every rank, else alltoall. With shm and more than one
 * rank, *node is the host's communicator (the caller frees it), else
 * MPI_COMM_NULL. Returns the mode, or -EINVAL when shm was asked for and
 * the ranks are not on one host. */
int tr_reducer_mode(MPI_Comm comm, tr_reduce_mode asked, int shm_ok, MPI_Comm *node);

/* The bytes of a rank's control block under shm (tr_reducer_shm_mem). */
size_t tr_reducer_shm_bytes(size_t n, size_t bucket_bytes);

/* Sets up the sums of buf[0, n) (host memory, the caller's, lent) in
 * buckets of bucket_bytes, with a head of nhead floats (at most
 * TR_REDUCER_MAX_HEAD); `mode` as tr_reducer_mode() made it. Under shm on
 * more than one rank, `shm` lends the window's memory, and buf and head
 * must be this rank's gradients there (head == buf + n); with
 * shm->sharded the reducer calls r->update for this rank's slices (the
 * caller's parameters and state being the host's one copy, written by one
 * rank and then fenced, tr_shm_window_fence). A step allocates nothing.
 * 0, -ENOMEM or -EINVAL. Collective. */
int tr_reducer_init(tr_reducer *r, MPI_Comm comm, tr_reduce_mode mode, float *buf, size_t n,
                    size_t bucket_bytes, float *head, int nhead, const tr_reducer_shm_mem *shm);
/* The same with the exchange compressed to `comp` (mode alltoall or mpi;
 * -EINVAL for shm with more than one rank). */
int tr_reducer_init_comp(tr_reducer *r, MPI_Comm comm, tr_reduce_mode mode, float *buf,
                         size_t n, size_t bucket_bytes, float *head, int nhead,
                         const tr_reducer_shm_mem *shm, tr_grad_comp comp);
void tr_reducer_free(tr_reducer *r);
/* "none", "bf16", "fp16". */
const char *tr_grad_comp_name(tr_grad_comp c);
/* "mpi", "shm", "alltoall" or "auto". */
const char *tr_reduce_mode_name(tr_reduce_mode m);

/* A new step: nothing posted, nothing in. */
void tr_reducer_begin(tr_reducer *r);
/* Starts summing the head (its values final on this rank). */
void tr_reducer_head(tr_reducer *r);
/* 1 when the head's sums are in (in r->head_out); with `wait`, waits. */
int tr_reducer_head_in(tr_reducer *r, int wait);
/* buf[0, end) is final on this rank: starts every whole bucket within it,
 * and progresses those in flight. */
void tr_reducer_ready(tr_reducer *r, size_t end);
/* buf[0, n) is final: starts what is left. */
void tr_reducer_flush(tr_reducer *r);
/* A bucket whose sum is in (r->sum[*begin, *end)) and was not handed back
 * yet: 1 with its range and *finite (0 when the sum has a NaN or an
 * infinity; finite NULL: the caller checks the sum itself, where it is,
 * and the host's copy is not read); 0 when there is none now (wait 0) or,
 * with wait, when every bucket has been handed back (call it after
 * tr_reducer_flush). */
int tr_reducer_take(tr_reducer *r, int wait, size_t *begin, size_t *end, int *finite);

/* out[i] = ((in[0][i] + in[1][i]) + in[2][i]) + ... + in[k-1][i] for i in
 * [0, len): the order every element of the gradients is summed in under
 * shm and alltoall. out may be in[0], and no other in[j]. 1 when a sum is
 * a NaN or an infinity (checked while in cache), else 0. */
int tr_sum_ranked(float *out, const float *const *in, int k, size_t len);

/* Bucket i's slice s of [0, n): where rank s sums it. Slices start at
 * multiples of 16 floats (a cache line) from the bucket's start. */
void tr_reducer_slice(const tr_reducer *r, int i, int s, size_t *begin, size_t *end);

/* reducer_half.c: the compressed exchange's casts and its MPI op. */
/* out = 16 bits of in * scale (comp's rounding, half.h) */
void tr_comp_narrow(tr_grad_comp comp, uint16_t *out, const float *in, size_t len, float scale);
/* out = widened in * scale */
void tr_comp_widen(tr_grad_comp comp, float *out, const uint16_t *in, size_t len, float scale);
/* A message of values that are not summed (the pipeline's activations
 * and their gradients), len values and one more element: fp16 scaled by
 * the power of two 2^s that brings the largest magnitude into [2^14,
 * 2^15), so that no finite value overflows 65504, and values down to
 * 2^-28 of the largest keep fp16's 11 bits (down to 2^-38, fewer); s
 * travels as the message's last element (int16; |s| <= 126). bf16 has
 * fp32's range: s = 0. A message holding an infinity or a NaN goes
 * unscaled, the infinity arriving as one. */
enum { TR_COMP_MSG_EXP_MAX = 126 };
/* out[0, len] = in[0, len) narrowed, scaled by 2^s, and s */
void tr_comp_narrow_msg(tr_grad_comp comp, uint16_t *out, const float *in, size_t len);
/* out[0, len) = in[0, len) widened and scaled back by 2^-in[len] */
void tr_comp_widen_msg(tr_grad_comp comp, float *out, const uint16_t *in, size_t len);
/* out = ((w(in[0]) + w(in[1])) + ...) in fp32, widened from 16 bits */
void tr_comp_sum_ranked(tr_grad_comp comp, float *out, const uint16_t *const *in, int k,
                        size_t len);
/* the user-defined MPI op summing 16-bit vectors of comp in fp32 */
int tr_comp_op_create(tr_grad_comp comp, MPI_Op *op);
/* 1 when some of v[0, n) is an infinity */
int tr_has_inf(const float *v, size_t n);

/* reducer_shm.c: the shared-memory way (reducer.c dispatches). */
int tr_shm_init(tr_reducer *r, const tr_reducer_shm_mem *m);
void tr_shm_free(tr_reducer *r);
void tr_shm_head(tr_reducer *r);
int tr_shm_head_in(tr_reducer *r, int wait);
void tr_shm_post(tr_reducer *r, int bucket);
void tr_shm_collect(tr_reducer *r, int wait);
/* 1 when a slice of bucket i (whose sum is in) is not finite. */
int tr_shm_bad(const tr_reducer *r, int i);

#endif /* RIO_TRAINER_REDUCER_H */

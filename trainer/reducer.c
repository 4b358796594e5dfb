/*
 * reducer.c — bucketed, overlapped sums of the gradients (reducer.h): the
 * common bookkeeping, Open MPI's allreduce (mpi) and the all-to-all of
 * slices (alltoall); the shared-memory way is reducer_shm.c. Open MPI
 * progresses non-blocking collectives only inside MPI calls, so every
 * ready() and take() also tests the buckets in flight. On one rank there
 * is nothing to sum: a bucket is in as soon as it is started.
 */
#include "config.h"
#include "reducer.h"
#include "part.h"
#include "clock.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Persistent collectives: each bucket's collectives are set up once (MPI
 * 4's MPI_*_init, or Open MPI 4's MPIX_ extension) and only started each
 * step, so a step allocates nothing (MPI_Iallreduce builds and frees a
 * schedule each call). The buckets are the same ranges every step. */
#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define PERSISTENT_ALLREDUCE MPI_Allreduce_init
#define PERSISTENT_ALLTOALLV MPI_Alltoallv_init
#define PERSISTENT_ALLGATHERV MPI_Allgatherv_init
#define PERSISTENT_ALLGATHER MPI_Allgather_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT_ALLREDUCE MPIX_Allreduce_init
#define PERSISTENT_ALLTOALLV MPIX_Alltoallv_init
#define PERSISTENT_ALLGATHERV MPIX_Allgatherv_init
#define PERSISTENT_ALLGATHER MPIX_Allgather_init
#endif
#endif

const char *tr_reduce_mode_name(tr_reduce_mode m)
{
	static const char *const names[] = {"auto", "mpi", "shm", "alltoall"};
	return (unsigned)m < 4 ? names[m] : "?";
}

/* The element order of the contract (reducer.h), vectorised across i
 * only: each out[i] is still ((in0 + in1) + in2) + ... */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
static void add_into(float *restrict out, const float *restrict a, const float *restrict b,
                     size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = a[i] + b[i];
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
static void add_to(float *restrict out, const float *restrict b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] += b[i];
}

int tr_sum_ranked(float *out, const float *const *in, int k, size_t len)
{
	/* in blocks that stay in L1: the partial sum is read back at once,
	 * and checked for NaN and infinities while it is there */
	enum { BLOCK = 2048 };
	int bad = 0;
	for (size_t at = 0; at < len; at += BLOCK) {
		size_t m = len - at < BLOCK ? len - at : BLOCK;
		if (k == 1) {
			if (out != in[0])
				memcpy(out + at, in[0] + at, m * sizeof *out);
		} else if (out == in[0]) {
			add_to(out + at, in[1] + at, m);
		} else {
			add_into(out + at, in[0] + at, in[1] + at, m);
		}
		for (int j = 2; j < k; j++)
			add_to(out + at, in[j] + at, m);
		bad |= tr_nonfinite(out + at, m);
	}
	return bad;
}

void tr_reducer_slice(const tr_reducer *r, int i, int s, size_t *begin, size_t *end)
{
	size_t b0 = (size_t)i * r->bucket;
	size_t len = b0 + r->bucket < r->n ? r->bucket : r->n - b0;
	uint64_t lo, hi;
	tr_part(len, r->size, s, 16, &lo, &hi);
	*begin = b0 + (size_t)lo;
	*end = b0 + (size_t)hi;
}

static void bucket_range(const tr_reducer *r, int i, size_t *begin, size_t *end)
{
	*begin = (size_t)i * r->bucket;
	*end = *begin + r->bucket < r->n ? *begin + r->bucket : r->n;
}

/* alltoall: per bucket, the slices' counts and offsets (what this rank
 * sends, and where the allgather puts each), every rank's copy of this
 * rank's slice side by side (what it receives), and the persistent
 * requests. */
/* The exchange's element type: 16 bits compressed, else float. */
static MPI_Datatype elem_type(const tr_reducer *r)
{
	return r->comp ? MPI_UINT16_T : MPI_FLOAT;
}

/* What each rank's gradients are multiplied by before the 16-bit cast, and
 * the sums after it: fp16 divides by the ranks first (reducer.h). */
static float pre_scale(const tr_reducer *r)
{
	return r->comp == TR_COMP_FP16 ? 1.0f / (float)r->size : 1.0f;
}

static float post_scale(const tr_reducer *r)
{
	return r->comp == TR_COMP_FP16 ? (float)r->size : 1.0f;
}

/* Where bucket i's exchange starts: in cbuf compressed, else in buf. */
static void *exchanged(const tr_reducer *r, size_t at)
{
	return r->comp ? (void *)(r->cbuf + at) : (void *)(r->buf + at);
}

/* alltoall: where bucket i's parts land */
static void *parts_of(const tr_reducer *r, int i)
{
	return r->comp ? (void *)(r->cparts + r->parts_off[i])
	               : (void *)(r->parts + r->parts_off[i]);
}

static int alltoall_init(tr_reducer *r)
{
	size_t nb = (size_t)(r->nbuckets ? r->nbuckets : 1), k = (size_t)r->size;
	r->phase = calloc(nb, sizeof *r->phase);
	r->counts = malloc(nb * k * 2 * sizeof *r->counts); /* send, then receive */
	r->displs = malloc(nb * k * 2 * sizeof *r->displs);
	r->parts_off = malloc(nb * sizeof *r->parts_off);
	r->head_all = calloc(k * (size_t)(r->nhead ? r->nhead : 1), sizeof *r->head_all);
	if (!r->phase || !r->counts || !r->displs || !r->parts_off || !r->head_all)
		return -ENOMEM;
	size_t total = 0;
	for (int i = 0; i < r->nbuckets; i++) {
		size_t b0, b1, mlo, mhi;
		bucket_range(r, i, &b0, &b1);
		tr_reducer_slice(r, i, r->rank, &mlo, &mhi);
		int *c = r->counts + (size_t)i * k * 2, *d = r->displs + (size_t)i * k * 2;
		for (int s = 0; s < r->size; s++) {
			size_t lo, hi;
			tr_reducer_slice(r, i, s, &lo, &hi);
			if (b1 - b0 > (size_t)INT32_MAX / 2 || k * (mhi - mlo) > (size_t)INT32_MAX)
				return -EINVAL;
			c[s] = (int)(hi - lo);
			d[s] = (int)(lo - b0);
			c[k + s] = (int)(mhi - mlo);
			d[k + s] = (int)((size_t)s * (mhi - mlo));
		}
		r->parts_off[i] = total;
		total += k * (mhi - mlo);
	}
	if (r->comp)
		r->cparts = malloc((total ? total : 1) * sizeof *r->cparts);
	else
		r->parts = malloc((total ? total : 1) * sizeof *r->parts);
	if (!r->parts && !r->cparts)
		return -ENOMEM;
#ifdef PERSISTENT_ALLTOALLV
	r->p_a2a = malloc(nb * sizeof *r->p_a2a);
	r->p_ag = malloc(nb * sizeof *r->p_ag);
	if (!r->p_a2a || !r->p_ag)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++)
		r->p_a2a[i] = r->p_ag[i] = MPI_REQUEST_NULL;
	r->persistent = 1;
	for (int i = 0; i < r->nbuckets; i++) {
		size_t b0 = (size_t)i * r->bucket;
		const int *c = r->counts + (size_t)i * k * 2, *d = r->displs + (size_t)i * k * 2;
		PERSISTENT_ALLTOALLV(exchanged(r, b0), c, d, elem_type(r), parts_of(r, i), c + k,
		                     d + k, elem_type(r), r->comm, MPI_INFO_NULL, &r->p_a2a[i]);
		PERSISTENT_ALLGATHERV(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, exchanged(r, b0), c, d,
		                      elem_type(r), r->comm, MPI_INFO_NULL, &r->p_ag[i]);
	}
	if (r->nhead > 0)
		PERSISTENT_ALLGATHER(r->head, r->nhead, MPI_FLOAT, r->head_all, r->nhead, MPI_FLOAT,
		                     r->comm, MPI_INFO_NULL, &r->head_req);
#endif
	return 0;
}

static int mpi_init(tr_reducer *r)
{
#ifdef PERSISTENT_ALLREDUCE
	r->persistent = 1;
	for (int i = 0; i < r->nbuckets; i++) {
		size_t b0, b1;
		bucket_range(r, i, &b0, &b1);
		PERSISTENT_ALLREDUCE(MPI_IN_PLACE, exchanged(r, b0), (int)(b1 - b0), elem_type(r),
		                     r->comp ? r->op : MPI_SUM, r->comm, MPI_INFO_NULL, &r->reqs[i]);
	}
	if (r->nhead > 0)
		PERSISTENT_ALLREDUCE(MPI_IN_PLACE, r->head, r->nhead, MPI_FLOAT, MPI_SUM, r->comm,
		                     MPI_INFO_NULL, &r->head_req);
#else
	(void)r;
#endif
	return 0;
}

/* Every rank of comm on this host: the node communicator (else
 * MPI_COMM_NULL). */
static MPI_Comm whole_node(MPI_Comm comm, int size)
{
	MPI_Comm node;
	int rank, nsize = 0, all;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nsize);
	int one = nsize == size;
	MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_LAND, comm);
	if (!all)
		MPI_Comm_free(&node);
	return all ? node : MPI_COMM_NULL;
}

int tr_reducer_mode(MPI_Comm comm, tr_reduce_mode asked, int shm_ok, MPI_Comm *node)
{
	int size;
	MPI_Comm_size(comm, &size);
	*node = MPI_COMM_NULL;
	/* collective decisions, the same on every rank */
	if (size > 1 && (asked == TR_REDUCE_SHM || asked == TR_REDUCE_AUTO))
		*node = whole_node(comm, size);
	int ok_all = shm_ok;
	if (size > 1)
		MPI_Allreduce(&shm_ok, &ok_all, 1, MPI_INT, MPI_LAND, comm);
	tr_reduce_mode mode = asked;
	if (mode == TR_REDUCE_AUTO)
		mode = *node != MPI_COMM_NULL && ok_all ? TR_REDUCE_SHM : TR_REDUCE_ALLTOALL;
	if (mode != TR_REDUCE_SHM && *node != MPI_COMM_NULL)
		MPI_Comm_free(node);
	if (mode == TR_REDUCE_SHM && size > 1 && *node == MPI_COMM_NULL)
		return -EINVAL;
	return (int)mode;
}

int tr_reducer_init(tr_reducer *r, MPI_Comm comm, tr_reduce_mode mode, float *buf, size_t n,
                    size_t bucket_bytes, float *head, int nhead, const tr_reducer_shm_mem *shm)
{
	return tr_reducer_init_comp(r, comm, mode, buf, n, bucket_bytes, head, nhead, shm,
	                            TR_COMP_NONE);
}

/* Compressed: the 16-bit copy of the gradients and the op (mpi). */
static int comp_init(tr_reducer *r)
{
	if (r->mode == TR_REDUCE_SHM || (unsigned)r->comp > TR_COMP_FP16)
		return -EINVAL;
	r->cbuf = malloc((r->n ? r->n : 1) * sizeof *r->cbuf);
	if (!r->cbuf)
		return -ENOMEM;
	if (r->mode == TR_REDUCE_MPI && tr_comp_op_create(r->comp, &r->op) < 0)
		return -ENOMEM;
	return 0;
}

int tr_reducer_init_comp(tr_reducer *r, MPI_Comm comm, tr_reduce_mode mode, float *buf,
                         size_t n, size_t bucket_bytes, float *head, int nhead,
                         const tr_reducer_shm_mem *shm, tr_grad_comp comp)
{
	*r = (tr_reducer){.comm = comm, .buf = buf, .sum = buf, .n = n, .head = head,
	                  .nhead = nhead, .head_out = head, .head_req = MPI_REQUEST_NULL,
	                  .mode = mode, .op = MPI_OP_NULL};
	MPI_Comm_size(comm, &r->size);
	MPI_Comm_rank(comm, &r->rank);
	if (nhead < 0 || nhead > TR_REDUCER_MAX_HEAD || mode == TR_REDUCE_AUTO)
		return -EINVAL;
	r->bucket = bucket_bytes / sizeof(float);
	if (r->bucket < 1)
		r->bucket = 1;
	size_t nb = (n + r->bucket - 1) / r->bucket;
	if (nb > (size_t)INT32_MAX / 2)
		return -ENOMEM;
	r->nbuckets = (int)nb;
	size_t cap = nb ? nb : 1;
	r->reqs = malloc(cap * sizeof *r->reqs);
	r->done = malloc(cap * sizeof *r->done);
	r->scratch = malloc(cap * sizeof *r->scratch);
	if (!r->reqs || !r->done || !r->scratch) {
		tr_reducer_free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		r->reqs[i] = MPI_REQUEST_NULL;
	int rc = 0;
	r->comp = r->size > 1 ? comp : TR_COMP_NONE; /* one rank sends nothing */
	if (r->comp)
		rc = comp_init(r);
	if (r->size == 1 || rc < 0) {
		/* nothing to sum */
	} else if (mode == TR_REDUCE_SHM) {
		rc = shm ? tr_shm_init(r, shm) : -EINVAL;
	} else if (mode == TR_REDUCE_ALLTOALL) {
		r->head_out = r->head_sum;
		rc = alltoall_init(r);
	} else {
		rc = mpi_init(r);
	}
	if (rc < 0)
		tr_reducer_free(r);
	return rc;
}

void tr_reducer_free(tr_reducer *r)
{
	if (r->mode == TR_REDUCE_SHM && r->shm)
		tr_shm_free(r);
	if (r->persistent) {
		for (int i = 0; i < r->nbuckets; i++) {
			if (r->mode == TR_REDUCE_MPI && r->reqs[i] != MPI_REQUEST_NULL)
				MPI_Request_free(&r->reqs[i]);
			if (r->p_a2a && r->p_a2a[i] != MPI_REQUEST_NULL)
				MPI_Request_free(&r->p_a2a[i]);
			if (r->p_ag && r->p_ag[i] != MPI_REQUEST_NULL)
				MPI_Request_free(&r->p_ag[i]);
		}
		if (r->head_req != MPI_REQUEST_NULL)
			MPI_Request_free(&r->head_req);
		r->persistent = 0;
	}
	free(r->reqs);
	free(r->done);
	free(r->scratch);
	free(r->p_a2a);
	free(r->p_ag);
	free(r->phase);
	free(r->counts);
	free(r->displs);
	free(r->parts);
	free(r->parts_off);
	free(r->head_all);
	free(r->cbuf);
	free(r->cparts);
	r->cbuf = r->cparts = NULL;
	if (r->comp && r->op != MPI_OP_NULL) /* a reducer never set up is zeros */
		MPI_Op_free(&r->op);
	r->comp = TR_COMP_NONE;
	r->reqs = r->p_a2a = r->p_ag = NULL;
	r->done = r->scratch = r->phase = r->counts = r->displs = NULL;
	r->parts = r->head_all = NULL;
	r->parts_off = NULL;
}

void tr_reducer_begin(tr_reducer *r)
{
	r->posted = 0;
	r->ndone = r->taken = 0;
	r->head_in = 0;
	r->overflowed = 0;
	r->seq++;
	r->update = NULL;
	r->update_ctx = NULL;
}

void tr_reducer_head(tr_reducer *r)
{
	if (r->size == 1 || r->nhead == 0) {
		r->head_in = 1;
		return;
	}
	double t0 = rio__now();
	if (r->mode == TR_REDUCE_SHM)
		tr_shm_head(r);
	else if (r->persistent)
		MPI_Start(&r->head_req);
	else if (r->mode == TR_REDUCE_ALLTOALL)
		MPI_Iallgather(r->head, r->nhead, MPI_FLOAT, r->head_all, r->nhead, MPI_FLOAT, r->comm,
		               &r->head_req);
	else
		MPI_Iallreduce(MPI_IN_PLACE, r->head, r->nhead, MPI_FLOAT, MPI_SUM, r->comm,
		               &r->head_req);
	r->collectives++;
	r->seconds += rio__now() - t0;
}

/* alltoall: every rank's head is in; their sum in rank order */
static void sum_heads(tr_reducer *r)
{
	const float *in[r->size];
	for (int s = 0; s < r->size; s++)
		in[s] = r->head_all + (size_t)s * r->nhead;
	(void)tr_sum_ranked(r->head_sum, in, r->size, (size_t)r->nhead);
}

int tr_reducer_head_in(tr_reducer *r, int wait)
{
	if (r->head_in)
		return 1;
	double t0 = rio__now();
	if (r->mode == TR_REDUCE_SHM) {
		r->head_in = tr_shm_head_in(r, wait);
	} else if (wait) {
		MPI_Wait(&r->head_req, MPI_STATUS_IGNORE);
		r->head_in = 1;
	} else {
		MPI_Test(&r->head_req, &r->head_in, MPI_STATUS_IGNORE);
	}
	if (r->head_in && r->mode == TR_REDUCE_ALLTOALL)
		sum_heads(r);
	r->seconds += rio__now() - t0;
	return r->head_in;
}

/* alltoall: bucket i's slices are in from every rank: this rank's sum of
 * them, in rank order, goes to its place in buf, and the allgather of
 * the summed slices starts. */
static void alltoall_second(tr_reducer *r, int i)
{
	size_t k = (size_t)r->size, lo, hi;
	tr_reducer_slice(r, i, r->rank, &lo, &hi);
	size_t len = hi - lo;
	if (r->comp) {
		const uint16_t *in[r->size];
		for (int s = 0; s < r->size; s++)
			in[s] = r->cparts + r->parts_off[i] + (size_t)s * len;
		tr_comp_sum_ranked(r->comp, r->buf + lo, in, r->size, len);
		tr_comp_narrow(r->comp, r->cbuf + lo, r->buf + lo, len, 1.0f);
	} else {
		const float *in[r->size];
		for (int s = 0; s < r->size; s++)
			in[s] = r->parts + r->parts_off[i] + (size_t)s * len;
		(void)tr_sum_ranked(r->buf + lo, in, r->size, len);
	}
	r->phase[i] = 2;
	if (r->persistent) {
		r->reqs[i] = r->p_ag[i];
		MPI_Start(&r->reqs[i]);
	} else {
		const int *c = r->counts + (size_t)i * k * 2, *d = r->displs + (size_t)i * k * 2;
		MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
		                exchanged(r, (size_t)i * r->bucket), c, d, elem_type(r), r->comm,
		                &r->reqs[i]);
	}
	r->collectives++;
}

/* Buckets in flight whose sums have come in join the done list (in the
 * order found; what is done with each does not depend on it). With wait,
 * until at least one has. */
static void collect(tr_reducer *r, int wait)
{
	if (r->size == 1 || r->ndone == (int)((r->posted + r->bucket - 1) / r->bucket))
		return;
	if (r->mode == TR_REDUCE_SHM) {
		tr_shm_collect(r, wait);
		return;
	}
	for (;;) {
		int count = 0;
		if (wait)
			MPI_Waitsome(r->nbuckets, r->reqs, &count, r->scratch, MPI_STATUSES_IGNORE);
		else
			MPI_Testsome(r->nbuckets, r->reqs, &count, r->scratch, MPI_STATUSES_IGNORE);
		int found = 0;
		for (int j = 0; j < count && count != MPI_UNDEFINED; j++) {
			int i = r->scratch[j];
			if (r->mode == TR_REDUCE_ALLTOALL && r->phase[i] == 1) {
				alltoall_second(r, i);
			} else {
				if (r->mode == TR_REDUCE_ALLTOALL)
					r->phase[i] = 0;
				if (r->comp) { /* the 16-bit sums, as every rank has them */
					size_t b0, b1;
					bucket_range(r, i, &b0, &b1);
					tr_comp_widen(r->comp, r->buf + b0, r->cbuf + b0, b1 - b0,
					              post_scale(r));
				}
				r->done[r->ndone++] = i;
				found = 1;
			}
		}
		if (found || !wait || count == MPI_UNDEFINED)
			return;
	}
}

static void post(tr_reducer *r, size_t end)
{
	int i = (int)(r->posted / r->bucket);
	if (r->comp)
		tr_comp_narrow(r->comp, r->cbuf + r->posted, r->buf + r->posted, end - r->posted,
		               pre_scale(r));
	if (r->size == 1) {
		r->done[r->ndone++] = i;
	} else if (r->mode == TR_REDUCE_SHM) {
		tr_shm_post(r, i);
	} else if (r->mode == TR_REDUCE_ALLTOALL) {
		r->phase[i] = 1;
		if (r->persistent) {
			r->reqs[i] = r->p_a2a[i];
			MPI_Start(&r->reqs[i]);
		} else {
			size_t k = (size_t)r->size;
			const int *c = r->counts + (size_t)i * k * 2, *d = r->displs + (size_t)i * k * 2;
			MPI_Ialltoallv(exchanged(r, r->posted), c, d, elem_type(r), parts_of(r, i), c + k,
			               d + k, elem_type(r), r->comm, &r->reqs[i]);
		}
		r->collectives++;
	} else if (r->persistent) {
		MPI_Start(&r->reqs[i]);
		r->collectives++;
	} else {
		MPI_Iallreduce(MPI_IN_PLACE, exchanged(r, r->posted), (int)(end - r->posted),
		               elem_type(r), r->comp ? r->op : MPI_SUM, r->comm, &r->reqs[i]);
		r->collectives++;
	}
	r->posted = end;
}

void tr_reducer_ready(tr_reducer *r, size_t end)
{
	if (end > r->n)
		end = r->n;
	double t0 = rio__now(), u0 = r->update_seconds;
	while (r->posted + r->bucket <= end)
		post(r, r->posted + r->bucket);
	collect(r, 0);
	r->seconds += rio__now() - t0 - (r->update_seconds - u0);
}

void tr_reducer_flush(tr_reducer *r)
{
	double t0 = rio__now();
	while (r->posted < r->n) {
		size_t end = r->posted + r->bucket;
		post(r, end < r->n ? end : r->n);
	}
	r->seconds += rio__now() - t0;
}

int tr_reducer_take(tr_reducer *r, int wait, size_t *begin, size_t *end, int *finite)
{
	if (r->taken == r->nbuckets)
		return 0;
	if (r->taken == r->ndone) {
		double t0 = rio__now(), u0 = r->update_seconds;
		collect(r, wait);
		r->seconds += rio__now() - t0 - (r->update_seconds - u0);
		if (r->taken == r->ndone)
			return 0;
	}
	int i = r->done[r->taken++];
	bucket_range(r, i, begin, end);
	if (!finite)
		return 1;
	/* shm: the slices' owners checked them as they summed (one rank
	 * sums nothing: no shared memory was made) */
	*finite = r->mode == TR_REDUCE_SHM && r->size > 1 ? !tr_shm_bad(r, i)
	                                   : !tr_nonfinite(r->sum + *begin, *end - *begin);
	if (!*finite && r->comp && tr_has_inf(r->sum + *begin, *end - *begin))
		r->overflowed = 1;
	return 1;
}

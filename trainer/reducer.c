/*
 * reducer.c — bucketed, overlapped allreduce of the gradients (reducer.h).
 * Open MPI progresses non-blocking collectives only inside MPI calls, so
 * every ready() and take() also tests the buckets in flight. On one rank
 * there is nothing to sum: a bucket is in as soon as it is started.
 */
#include "config.h"
#include "reducer.h"
#include "clock.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Persistent collectives: each bucket's allreduce is set up once (MPI 4's
 * MPI_Allreduce_init, or Open MPI 4's MPIX_ extension) and only started
 * each step, so a step allocates nothing (MPI_Iallreduce builds and frees
 * a schedule each call). The buckets are the same ranges every step. */
#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define PERSISTENT_ALLREDUCE MPI_Allreduce_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT_ALLREDUCE MPIX_Allreduce_init
#endif
#endif

int tr_reducer_init(tr_reducer *r, MPI_Comm comm, float *buf, size_t n, size_t bucket_bytes,
                    float *head, int nhead)
{
	*r = (tr_reducer){.comm = comm, .buf = buf, .n = n, .head = head, .nhead = nhead,
	                  .head_req = MPI_REQUEST_NULL};
	MPI_Comm_size(comm, &r->size);
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
#ifdef PERSISTENT_ALLREDUCE
	if (r->size > 1) {
		r->persistent = 1;
		for (int i = 0; i < r->nbuckets; i++) {
			size_t begin = (size_t)i * r->bucket;
			size_t count = begin + r->bucket < n ? r->bucket : n - begin;
			PERSISTENT_ALLREDUCE(MPI_IN_PLACE, buf + begin, (int)count, MPI_FLOAT,
			                     MPI_SUM, comm, MPI_INFO_NULL, &r->reqs[i]);
		}
		if (nhead > 0)
			PERSISTENT_ALLREDUCE(MPI_IN_PLACE, head, nhead, MPI_FLOAT, MPI_SUM, comm,
			                     MPI_INFO_NULL, &r->head_req);
	}
#endif
	return 0;
}

void tr_reducer_free(tr_reducer *r)
{
	if (r->persistent) {
		for (int i = 0; i < r->nbuckets; i++)
			if (r->reqs[i] != MPI_REQUEST_NULL)
				MPI_Request_free(&r->reqs[i]);
		if (r->head_req != MPI_REQUEST_NULL)
			MPI_Request_free(&r->head_req);
		r->persistent = 0;
	}
	free(r->reqs);
	free(r->done);
	free(r->scratch);
	r->reqs = NULL;
	r->done = r->scratch = NULL;
}

void tr_reducer_begin(tr_reducer *r)
{
	r->posted = 0;
	r->ndone = r->taken = 0;
	r->head_in = 0;
}

void tr_reducer_head(tr_reducer *r)
{
	if (r->size == 1 || r->nhead == 0) {
		r->head_in = 1;
		return;
	}
	double t0 = tr_now();
	if (r->persistent)
		MPI_Start(&r->head_req);
	else
		MPI_Iallreduce(MPI_IN_PLACE, r->head, r->nhead, MPI_FLOAT, MPI_SUM, r->comm,
		               &r->head_req);
	r->collectives++;
	r->seconds += tr_now() - t0;
}

int tr_reducer_head_in(tr_reducer *r, int wait)
{
	if (r->head_in)
		return 1;
	double t0 = tr_now();
	if (wait) {
		MPI_Wait(&r->head_req, MPI_STATUS_IGNORE);
		r->head_in = 1;
	} else {
		MPI_Test(&r->head_req, &r->head_in, MPI_STATUS_IGNORE);
	}
	r->seconds += tr_now() - t0;
	return r->head_in;
}

/* Buckets in flight whose sums have come in join the done list (in the
 * order MPI reports them; what is done with each does not depend on it). */
static void collect(tr_reducer *r, int wait)
{
	if (r->size == 1 || r->ndone == (int)((r->posted + r->bucket - 1) / r->bucket))
		return;
	int count = 0;
	if (wait)
		MPI_Waitsome(r->nbuckets, r->reqs, &count, r->scratch, MPI_STATUSES_IGNORE);
	else
		MPI_Testsome(r->nbuckets, r->reqs, &count, r->scratch, MPI_STATUSES_IGNORE);
	for (int i = 0; i < count && count != MPI_UNDEFINED; i++)
		r->done[r->ndone++] = r->scratch[i];
}

static void post(tr_reducer *r, size_t end)
{
	int i = (int)(r->posted / r->bucket);
	if (r->persistent) {
		MPI_Start(&r->reqs[i]);
		r->collectives++;
	} else if (r->size > 1) {
		MPI_Iallreduce(MPI_IN_PLACE, r->buf + r->posted, (int)(end - r->posted), MPI_FLOAT,
		               MPI_SUM, r->comm, &r->reqs[i]);
		r->collectives++;
	} else {
		r->done[r->ndone++] = i;
	}
	r->posted = end;
}

void tr_reducer_ready(tr_reducer *r, size_t end)
{
	if (end > r->n)
		end = r->n;
	double t0 = tr_now();
	while (r->posted + r->bucket <= end)
		post(r, r->posted + r->bucket);
	collect(r, 0);
	r->seconds += tr_now() - t0;
}

void tr_reducer_flush(tr_reducer *r)
{
	double t0 = tr_now();
	while (r->posted < r->n) {
		size_t end = r->posted + r->bucket;
		post(r, end < r->n ? end : r->n);
	}
	r->seconds += tr_now() - t0;
}

/* 1 when any of v[0, n) is a NaN or an infinity: an all-ones exponent.
 * Integer operations, so the loop vectorises (asked for: GCC 12's -O2
 * leaves a loop of unknown length scalar). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
int tr_nonfinite(const float *restrict v, size_t n)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
	}
	return bad != 0;
}

int tr_reducer_take(tr_reducer *r, int wait, size_t *begin, size_t *end, int *finite)
{
	if (r->taken == r->nbuckets)
		return 0;
	if (r->taken == r->ndone) {
		double t0 = tr_now();
		collect(r, wait);
		r->seconds += tr_now() - t0;
		if (r->taken == r->ndone)
			return 0;
	}
	size_t i = (size_t)r->done[r->taken++];
	*begin = i * r->bucket;
	*end = *begin + r->bucket < r->n ? *begin + r->bucket : r->n;
	*finite = !tr_nonfinite(r->buf + *begin, *end - *begin);
	return 1;
}

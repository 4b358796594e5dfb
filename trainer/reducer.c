/*
 * reducer.c — bucketed, overlapped allreduce of the gradients (reducer.h).
 * Open MPI progresses non-blocking collectives only inside MPI calls, so
 * every ready() also tests the buckets in flight.
 */
#include "config.h"
#include "reducer.h"
#include "clock.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tr_reducer_init(tr_reducer *r, MPI_Comm comm, float *buf, size_t n, size_t bucket_bytes)
{
	*r = (tr_reducer){.comm = comm, .buf = buf, .n = n};
	MPI_Comm_size(comm, &r->size);
	r->bucket = bucket_bytes / sizeof(float);
	if (r->bucket < 1)
		r->bucket = 1;
	r->cap = (int)(n / r->bucket + 2);
	r->reqs = calloc((size_t)r->cap, sizeof *r->reqs);
	return r->reqs ? 0 : -ENOMEM;
}

void tr_reducer_free(tr_reducer *r)
{
	free(r->reqs);
	r->reqs = NULL;
}

void tr_reducer_begin(tr_reducer *r)
{
	r->posted = r->checked = 0;
	r->nonfinite = 0;
	r->nreqs = 0;
}

/* 1 when any of v[0, n) is a NaN or an infinity: an all-ones exponent.
 * Integer operations, so the loop vectorises. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static int any_nonfinite(const float *restrict v, size_t n)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
	}
	return bad != 0;
}

static void check(tr_reducer *r, size_t end)
{
	r->nonfinite |= any_nonfinite(r->buf + r->checked, end - r->checked);
	r->checked = end;
}

static void post(tr_reducer *r, size_t end)
{
	size_t count = end - r->posted;
	if (r->size > 1 && count > 0) {
		MPI_Iallreduce(MPI_IN_PLACE, r->buf + r->posted, (int)count, MPI_FLOAT, MPI_SUM,
		               r->comm, &r->reqs[r->nreqs++]);
		r->collectives++;
	}
	r->posted = end;
}

void tr_reducer_ready(tr_reducer *r, size_t end)
{
	if (end > r->n)
		end = r->n;
	if (end > r->checked)
		check(r, end);
	double t0 = tr_now();
	while (r->posted + r->bucket <= end)
		post(r, r->posted + r->bucket);
	if (r->nreqs > 0) {
		int done;
		MPI_Testall(r->nreqs, r->reqs, &done, MPI_STATUSES_IGNORE);
	}
	r->seconds += tr_now() - t0;
}

void tr_reducer_finish(tr_reducer *r, size_t flag)
{
	if (r->checked < r->n)
		check(r, r->n);
	r->buf[flag] = r->nonfinite ? 1.0f : 0.0f;
	double t0 = tr_now();
	while (r->posted < r->n) {
		size_t end = r->posted + r->bucket;
		post(r, end < r->n ? end : r->n);
	}
	if (r->nreqs > 0)
		MPI_Waitall(r->nreqs, r->reqs, MPI_STATUSES_IGNORE);
	r->nreqs = 0;
	r->seconds += tr_now() - t0;
}

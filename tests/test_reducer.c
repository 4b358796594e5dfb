/*
 * test_reducer.c — the gradient reducer (trainer/reducer.h) under mpirun
 * (tests/train_reduce.sh runs it on 2, 3 and 4 ranks): under shm and
 * alltoall every element's sum is bit for bit the reference order, rank 0
 * to rank n - 1 left to right, computed here in a plain loop, for bucket
 * sizes that leave some ranks an empty slice, that do not divide the
 * buffer, and that hold it whole; every bucket is handed back once per
 * step, over several steps (the buffers reused); the head's sums are in
 * rank order too; a NaN on one rank marks its bucket, and only it, not
 * finite; on 2 ranks Open MPI's allreduce (mpi) gives the same bits; under
 * shm the parameter store's shared regions (trainer/store.h) are laid out
 * alike on every rank, zeroed, and seen by all. The values have exponents
 * spread over 2^-20..2^20, so that on 3 and more ranks another order gives
 * other bits (checked: the test can fail).
 * Compressed (--grad-compression bf16 and fp16, alltoall and mpi): every
 * sum is within the 16-bit type's rounding of the fp32 sum (a bound from
 * its mantissa: (ranks + 1) x 2^-8 for bf16, 2^-11 for fp16, of the sum of
 * magnitudes), alltoall's bit for bit the rank-order sum of the narrowed
 * values, every rank holds the same bits, and an fp16 overflow (one rank's
 * value past 65504 x ranks) makes its bucket, only it, not finite and
 * says so (overflowed) on every rank. The pipeline's 16-bit messages
 * (tr_comp_narrow_msg): fp16 values of 1e6 and 1e-7, which fp16 alone
 * turns into infinities and subnormals, come back within fp16's rounding
 * (2^-11 relative), as do values 2^-28 of the message's largest; an
 * infinity comes back as one; bf16 is not scaled.
 * Prints one line per failure and "test_reducer: N checks, F failed" on
 * rank 0; exit 1 on any failure.
 */
#include "config.h"
#include "half.h"
#include "reducer.h"
#include "store.h"
#include "world.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failed, rank, size;

static void check(int ok, const char *what, const char *mode, size_t bucket, int step)
{
	checks++;
	if (!ok) {
		failed++;
		fprintf(stderr, "rank %d of %d: --reduce %s, bucket %zu bytes, step %d: %s\n", rank,
		        size, mode, bucket, step, what);
	}
}

/* One message of n values, base x (1 + i / n) x (-1)^i, and one value
 * 2^-27 x base (above 2^-28 of the largest), through tr_comp_narrow_msg and back: each within
 * the relative bound `rel`; its exponent as `want_s`. */
static void check_message(tr_grad_comp c, float base, double rel, int want_s, const char *what)
{
	enum { N = 100 };
	float in[N], out[N];
	uint16_t h[N + 1];
	for (int i = 0; i < N; i++)
		in[i] = base * (1.0f + (float)i / N) * (i % 2 ? -1.0f : 1.0f);
	in[N - 1] = ldexpf(base, -27);
	tr_comp_narrow_msg(c, h, in, N);
	tr_comp_widen_msg(c, out, h, N);
	int ok = (int16_t)h[N] == want_s;
	for (int i = 0; i < N; i++)
		ok &= fabs((double)out[i] - in[i]) <= rel * fabs((double)in[i]);
	check(ok, what, tr_grad_comp_name(c), 0, 0);
}

static void check_messages(void)
{
	const double u16 = ldexp(1, -11), ub = ldexp(1, -8);
	/* 1e6 x 2 and 1e-7: fp16 unscaled gives inf and subnormals (and 0
	 * for 2^-28 of them) */
	/* the largest, 1.98 x base, in [2^(e-1), 2^e): scaled by 2^(15 - e) */
	check_message(TR_COMP_FP16, 1e6f, u16, 15 - 21, "fp16 message of 1e6 scaled back");
	check_message(TR_COMP_FP16, 1e-7f, u16, 15 + 22, "fp16 message of 1e-7 scaled back");
	check_message(TR_COMP_FP16, 1.0f, u16, 15 - 1, "fp16 message of 1 scaled back");
	check_message(TR_COMP_BF16, 1e30f, ub, 0, "bf16 message of 1e30, not scaled");
	float in[3] = {1.0f, INFINITY, 2.0f}, out[3];
	uint16_t h[4];
	tr_comp_narrow_msg(TR_COMP_FP16, h, in, 3);
	tr_comp_widen_msg(TR_COMP_FP16, out, h, 3);
	check(tr_has_inf(out, 3) && out[0] == 1.0f && out[2] == 2.0f,
	      "fp16 message with an infinity: it arrives", "fp16", 0, 0);
	float zero[2] = {0.0f, -0.0f};
	tr_comp_narrow_msg(TR_COMP_FP16, h, zero, 2);
	tr_comp_widen_msg(TR_COMP_FP16, out, h, 2);
	check(h[2] == 0 && out[0] == 0.0f && out[1] == 0.0f && signbit(out[1]),
	      "fp16 message of zeros", "fp16", 0, 0);
}

/* rank q's gradient i at step `step`: spread exponents, either sign */
static float value(int q, size_t i, int step)
{
	uint64_t h = (uint64_t)q * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xC2B2AE3D27D4EB4Full ^
	             (uint64_t)step * 0x165667B19E3779F9ull;
	h ^= h >> 31;
	h *= 0xD6E8FEB86659FD93ull;
	h ^= h >> 29;
	float m = (float)(h & 0xffffff) / 16777216.0f - 0.5f;
	return ldexpf(m, (int)((h >> 24) % 41) - 20);
}

/* The store's rank-shared region `id`: zeroed, at the same offset in every
 * rank's part, and what a rank writes there seen by the others after a
 * fence. */
static void check_store(const tr_store *st, int id, const char *mode, size_t bucket)
{
	const tr_shm_window *w = tr_store_window(st);
	float *mine = tr_store_floats(st, id);
	check(w && mine == (float *)(w->part[w->me] + tr_store_offset(st, id)),
	      "the store's region in this rank's part", mode, bucket, 0);
	check(mine[0] == 0.0f, "the store's region zeroed", mode, bucket, 0);
	mine[0] = (float)(w->me + 1);
	tr_store_fence(st);
	int seen = 1;
	for (int q = 0; q < w->k; q++)
		seen &= ((const float *)(w->part[q] + tr_store_offset(st, id)))[0] == (float)(q + 1);
	check(seen, "each rank's part seen by the others", mode, bucket, 0);
	tr_store_fence(st); /* every rank read before the region is written again */
	mine[0] = 0.0f;
}

/* More regions than the store holds: refused at its opening, in one line,
 * and nothing written past its table. */
static void check_store_full(void)
{
	tr_store st;
	tr_store_init(&st, NULL);
	int last = 0;
	for (int i = 0; i <= TR_STORE_MAX_REGIONS + 2; i++)
		last = tr_store_add(&st, "a region", 1, 1, TR_PLACE_RANK_SHARED);
	char err[256] = "";
	check(last == -1 && tr_store_open(&st, MPI_COMM_NULL, err, sizeof err) < 0 &&
	      strstr(err, "regions asked for") != NULL,
	      "a store asked for too many regions refused", "store", 0, 0);
	tr_store_close(&st);
}

static void run(tr_reduce_mode mode, size_t bucket_bytes, size_t n)
{
	const char *name = tr_reduce_mode_name(mode);
	enum { NHEAD = 5 };
	float *own = calloc(n + NHEAD, sizeof *own), *ref = malloc(n * sizeof *ref);
	float *rev = malloc(n * sizeof *rev);
	/* shm: the gradients and the counters in each rank's part of the
	 * host's window, the sums in the host's part: the parameter store lays
	 * them out, as in a run */
	MPI_Comm node;
	int got = tr_reducer_mode(MPI_COMM_WORLD, mode, 1, &node);
	tr_store st;
	tr_store_init(&st, NULL);
	tr_reducer_shm_mem shm = {0};
	float *buf = own;
	if (node != MPI_COMM_NULL) {
		int ctl = tr_store_add(&st, "counters", tr_reducer_shm_bytes(n, bucket_bytes), 1,
		                       TR_PLACE_RANK_SHARED);
		int grads = tr_store_add(&st, "gradients", n + NHEAD, sizeof(float),
		                         TR_PLACE_RANK_SHARED);
		int sum = tr_store_add(&st, "sums", n, sizeof(float), TR_PLACE_HOST_SHARED);
		char err[256];
		if (tr_store_open(&st, node, err, sizeof err) < 0)
			got = -1;
		MPI_Comm_free(&node);
		if (got >= 0) {
			check_store(&st, grads, name, bucket_bytes);
			shm = (tr_reducer_shm_mem){tr_store_window(&st), tr_store_offset(&st, ctl),
			                           tr_store_offset(&st, grads), tr_store_floats(&st, sum),
			                           0};
			buf = tr_store_floats(&st, grads);
		}
	}
	tr_reducer r;
	if (!own || !ref || !rev || got != (int)mode ||
	    tr_reducer_init(&r, MPI_COMM_WORLD, mode, buf, n, bucket_bytes, buf + n, NHEAD,
	                    shm.win ? &shm : NULL) < 0) {
		check(0, "set up", name, bucket_bytes, 0);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	check(r.mode == mode, "runs in the mode asked for", name, bucket_bytes, 0);
	check(r.head == r.buf + n, "the head follows the gradients", name, bucket_bytes, 0);
	size_t differs = 0;
	for (int step = 1; step <= 3; step++) {
		tr_reducer_begin(&r);
		for (int k = 0; k < NHEAD; k++)
			r.head[k] = value(rank, n + (size_t)k, step);
		tr_reducer_head(&r);
		for (size_t i = 0; i < n; i++)
			r.buf[i] = value(rank, i, step);
		size_t nan_at = n / 2;
		if (step == 3 && rank == size - 1)
			r.buf[nan_at] = NAN;
		/* as backward hands them on: in thirds, then the rest */
		tr_reducer_ready(&r, n / 3);
		tr_reducer_ready(&r, 2 * n / 3);
		tr_reducer_flush(&r);
		int *seen = calloc((size_t)r.nbuckets, sizeof *seen), taken = 0;
		size_t begin, end;
		int finite;
		while (tr_reducer_take(&r, 1, &begin, &end, &finite)) {
			int b = (int)(begin / r.bucket);
			check(b < r.nbuckets && !seen[b], "a bucket handed back twice", name,
			      bucket_bytes, step);
			if (b < r.nbuckets)
				seen[b] = 1;
			taken++;
			int has_nan = step == 3 && nan_at >= begin && nan_at < end;
			check(finite == !has_nan, "the finite verdict", name, bucket_bytes, step);
		}
		free(seen);
		check(taken == r.nbuckets, "every bucket handed back", name, bucket_bytes, step);
		check(tr_reducer_head_in(&r, 1), "the head is in", name, bucket_bytes, step);
		for (size_t i = 0; i < n; i++) {
			float acc = value(0, i, step), back = value(size - 1, i, step);
			for (int q = 1; q < size; q++) {
				acc += value(q, i, step);
				back += value(size - 1 - q, i, step);
			}
			ref[i] = acc;
			rev[i] = back;
		}
		if (step == 3)
			ref[nan_at] = NAN;
		size_t bad = 0;
		for (size_t i = 0; i < n; i++) {
			if (memcmp(&ref[i], &r.sum[i], 4) != 0 && !(isnan(ref[i]) && isnan(r.sum[i])))
				bad++;
			if (memcmp(&ref[i], &rev[i], 4) != 0)
				differs++;
		}
		int exact = mode != TR_REDUCE_MPI || size == 2;
		if (exact)
			check(bad == 0, "the sums are not the rank-order sums", name, bucket_bytes, step);
		float head_ref[NHEAD];
		for (int k = 0; k < NHEAD; k++) {
			head_ref[k] = value(0, n + (size_t)k, step);
			for (int q = 1; q < size; q++)
				head_ref[k] += value(q, n + (size_t)k, step);
		}
		if (exact)
			check(memcmp(head_ref, r.head_out, sizeof head_ref) == 0,
			      "the head's sums are not the rank-order sums", name, bucket_bytes, step);
		MPI_Barrier(MPI_COMM_WORLD); /* mpi sums in place: before the next step */
	}
	/* on 3 ranks and more the order shows in the bits: the check can fail */
	if (size >= 3)
		check(differs > 0, "no element where the order matters", name, bucket_bytes, 0);
	tr_reducer_free(&r);
	tr_store_close(&st);
	free(own);
	free(ref);
	free(rev);
}

/* rank q's gradient i for the 16-bit runs: exponents over 2^-8..2^8 */
static float small_value(int q, size_t i, int step)
{
	float v = value(q, i, step);
	return v == 0 ? 0 : ldexpf(v, -(ilogbf(v) / 2) / 2 * 2 + (ilogbf(v) % 5));
}

/* The alltoall reference: each rank's value narrowed (fp16: divided by the
 * ranks) and widened, summed in rank order in fp32, narrowed, widened. */
static float comp_ref(tr_grad_comp c, size_t i, int step)
{
	float pre = c == TR_COMP_FP16 ? 1.0f / (float)size : 1.0f, acc = 0;
	for (int q = 0; q < size; q++) {
		float v = small_value(q, i, step) * pre;
		acc += c == TR_COMP_FP16 ? rio__f32_from_fp16(rio__fp16_from_f32(v))
		                         : rio__f32_from_bf16(rio__bf16_from_f32(v));
	}
	float back = c == TR_COMP_FP16 ? rio__f32_from_fp16(rio__fp16_from_f32(acc))
	                               : rio__f32_from_bf16(rio__bf16_from_f32(acc));
	return back * (c == TR_COMP_FP16 ? (float)size : 1.0f);
}

static void run_comp(tr_reduce_mode mode, tr_grad_comp c, size_t bucket_bytes, size_t n)
{
	char name[32];
	snprintf(name, sizeof name, "%s/%s", tr_reduce_mode_name(mode), tr_grad_comp_name(c));
	float *buf = calloc(n + 1, sizeof *buf);
	tr_reducer r;
	if (!buf || tr_reducer_init_comp(&r, MPI_COMM_WORLD, mode, buf, n, bucket_bytes, buf + n,
	                                 1, NULL, c) < 0) {
		check(0, "set up", name, bucket_bytes, 0);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	double u = ldexp(1.0, c == TR_COMP_FP16 ? -11 : -8);
	size_t over_at = n / 3;
	for (int step = 1; step <= 2; step++) {
		tr_reducer_begin(&r);
		r.head[0] = 1;
		tr_reducer_head(&r);
		for (size_t i = 0; i < n; i++)
			buf[i] = small_value(rank, i, step);
		/* step 2, fp16: one rank's value past what fp16 holds x ranks */
		int overflow = step == 2 && c == TR_COMP_FP16;
		if (overflow && rank == 0)
			buf[over_at] = 70000.0f * (float)size;
		tr_reducer_flush(&r);
		size_t begin, end, bad_finite = 0;
		int finite;
		while (tr_reducer_take(&r, 1, &begin, &end, &finite))
			bad_finite += finite == (overflow && over_at >= begin && over_at < end);
		check(bad_finite == 0, "the finite verdict", name, bucket_bytes, step);
		check(r.overflowed == overflow, "overflowed says the fp16 overflow", name,
		      bucket_bytes, step);
		check(tr_reducer_head_in(&r, 1) && r.head_out[0] == (float)size, "the head (fp32)",
		      name, bucket_bytes, step);
		size_t far = 0, unlike = 0;
		uint64_t hash = 1469598103934665603ull;
		for (size_t i = 0; i < n; i++) {
			if (overflow && i == over_at)
				continue;
			double exact = 0, mag = 0;
			for (int q = 0; q < size; q++) {
				exact += small_value(q, i, step);
				mag += fabs(small_value(q, i, step));
			}
			double tol = (size + 1) * u * mag + size * ldexp(1.0, -24);
			far += !(fabs((double)r.sum[i] - exact) <= tol);
			if (mode == TR_REDUCE_ALLTOALL)
				unlike += r.sum[i] != comp_ref(c, i, step);
			uint32_t bits;
			memcpy(&bits, &r.sum[i], 4);
			hash = (hash ^ bits) * 0x100000001b3ull;
		}
		check(far == 0, "a sum further from the fp32 sum than the 16-bit bound", name,
		      bucket_bytes, step);
		check(unlike == 0, "a sum not the rank-order sum of the 16-bit values", name,
		      bucket_bytes, step);
		uint64_t lo = hash, hi = hash;
		MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		check(lo == hi, "the ranks' sums differ", name, bucket_bytes, step);
	}
	tr_reducer_free(&r);
	free(buf);
}

int main(int argc, char **argv)
{
	/* the trainer's start (MPI_Init's own blocks not leak-checked) */
	tr_world world;
	if (tr_world_init(&world, &argc, &argv) < 0)
		return 1;
	rank = world.rank;
	size = world.size;
	const size_t n = 10007;
	/* 64 bytes: 16 floats a bucket, some ranks' slices empty; 1000: not a
	 * divisor of the buffer; 256K: all of it in one bucket */
	const size_t buckets[] = {64, 1000, 256 * 1024};
	const tr_reduce_mode modes[] = {TR_REDUCE_SHM, TR_REDUCE_ALLTOALL, TR_REDUCE_MPI};
	check_store_full();
	for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
		for (size_t b = 0; b < sizeof buckets / sizeof *buckets; b++)
			run(modes[m], buckets[b], n);
	for (int c = TR_COMP_BF16; c <= TR_COMP_FP16; c++)
		for (size_t m = 1; m < sizeof modes / sizeof *modes; m++)
			for (size_t b = 1; b < sizeof buckets / sizeof *buckets; b++)
				run_comp(modes[m], (tr_grad_comp)c, buckets[b], n);
	check_messages();
	/* shm sends nothing: compression there is refused */
	if (size > 1) {
		tr_reducer r;
		float *buf = calloc(n + 1, sizeof *buf);
		check(tr_reducer_init_comp(&r, MPI_COMM_WORLD, TR_REDUCE_SHM, buf, n, 4096, buf + n,
		                           1, NULL, TR_COMP_BF16) == -EINVAL,
		      "compression under shm refused", "shm", 4096, 0);
		free(buf);
	}
	int all[2] = {checks, failed};
	MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_reducer: %d ranks, %d checks, %d failed\n", size, all[0], all[1]);
	MPI_Finalize();
	return all[1] ? 1 : 0;
}

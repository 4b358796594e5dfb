/*
 * reducer_shm.c — the gradient sum of ranks that share one host's memory
 * (reducer.h, mode shm), without MPI in the step.
 *
 * The host's MPI-3 shared-memory window (shm_window.h, the parameter
 * store's, lent) holds, for each rank, a control block and its gradient
 * buffer (r->buf: backward writes into it, so nothing is copied), and in
 * the host's part the sum buffer (r->sum). Bucket i is cut into one slice per rank
 * (tr_reducer_slice); a step, numbered seq (the same on every rank):
 *   - a rank whose bucket i is final publishes ready[i] = seq;
 *   - rank s, once every rank's ready[i] is seq, sums slice s of bucket i
 *     over the ranks' buffers in rank order (tr_sum_ranked) into the sum
 *     buffer, checking it for NaN and infinities as it goes, and publishes
 *     done[i] = seq << 1 | (1 if not finite);
 *   - sharded (--shard-optimizer: an optimizer that updates element by
 *     element, on the CPU): the parameters and the optimizer's state are
 *     one copy for the host, in the host's part of the window too; once every slice of
 *     bucket i is summed and the head is in, rank s updates its own slice
 *     of them (r->update) and publishes upd[i] = seq: the optimizer's
 *     work is shared out like the sum's, and no rank copies parameters;
 *   - bucket i is in on a rank once every rank's done[i] (sharded: upd[i])
 *     is seq.
 * The head (a few floats) is copied to the rank's control block (two
 * slots, by the step's parity) and published with head_seq; each rank sums
 * the heads itself, in rank order.
 * Counters are C11 atomics written only by their rank (release) and read
 * by the others (acquire), with MPI_Win_sync around the data as MPI's
 * memory model asks (in one MPI_Win_lock_all epoch for the window's life).
 * Why the buffers can be reused each step without more flags: a rank
 * leaves step seq only when every bucket is in, that is after every rank
 * has summed (and updated) its slices of seq, so no rank still reads its
 * gradients, and a rank writes a slice of seq + 1 only once every rank
 * published ready in seq + 1, that is after every rank is done reading the
 * sums of seq. A rank publishes ready[i] once its backward no longer reads
 * the parameters of bucket i (mlp.h), so they may be updated from then on;
 * the next forward reads them only after every bucket is in.
 * Heads have two slots: a rank cannot be two steps ahead of one that has
 * not read its head yet.
 * Waiting: with a core per rank, a waiting rank spins (pauses) for up to
 * 1 ms before it yields: its core has nothing else of ours to do, and on
 * a loaded machine a sched_yield() hands the core to another process for a
 * time slice, several steps (measured: 150k samples/s against 350k when a
 * wait yielded after 50 us). With more ranks than cores it yields at once,
 * so that the rank it waits for can run. After 100 ms (a rank held up by
 * its data or a checkpoint) it sleeps in 50 us naps.
 */
#include "config.h"
#include "reducer.h"
#include "clock.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* A rank's control block, at the start of its part of the window. */
typedef struct shm_ctl {
	_Atomic uint64_t head_seq;
	char pad0[64 - sizeof(uint64_t)];
	float head[2][TR_REDUCER_MAX_HEAD];
	/* then ready[nbuckets], done[nbuckets], upd[nbuckets] (uint64_t,
	 * 64-aligned) */
} shm_ctl;

struct tr_reducer_shm {
	const tr_shm_window *win;   /* lent                                 */
	int k, me;
	shm_ctl **ctl;              /* each rank's control block            */
	_Atomic uint64_t **ready, **done, **upd; /* each rank's counters    */
	const float **grads;        /* each rank's gradient buffer          */
	const float **in;           /* scratch: the inputs of a slice       */
	uint64_t *summed;           /* this rank's slice of bucket i: seq   */
	uint64_t *updated;          /* ... updated (sharded), or every slice
	                             * of it summed: seq                    */
	uint64_t *collected;        /* bucket i in the done list: seq       */
	int *bad;                   /* ... and a slice of it was not finite */
	double spin_ns;             /* how long a wait spins before yielding */
};

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* The counters' bytes of each kind: one per bucket, 64-aligned. */
static size_t counter_bytes(int nbuckets) { return round_up((size_t)nbuckets * sizeof(uint64_t), 64); }

size_t tr_reducer_shm_bytes(size_t n, size_t bucket_bytes)
{
	size_t bucket = bucket_bytes / sizeof(float) ? bucket_bytes / sizeof(float) : 1;
	size_t nb = (n + bucket - 1) / bucket;
	return round_up(sizeof(shm_ctl), 64) + 3 * counter_bytes((int)nb);
}

int tr_shm_init(tr_reducer *r, const tr_reducer_shm_mem *m)
{
	tr_reducer_shm *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	r->shm = s;
	s->win = m->win;
	s->k = m->win->k;
	s->me = m->win->me;
	/* a core per rank: a waiting rank keeps its core, spinning (a yield
	 * under load loses it for a time slice, several steps); more ranks
	 * than cores: it yields at once, to the rank it waits for */
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	s->spin_ns = cores >= s->k ? 1e6 : 0;
	size_t nb = (size_t)r->nbuckets, k = (size_t)s->k;
	s->ctl = calloc(k, sizeof *s->ctl);
	s->ready = calloc(k, sizeof *s->ready);
	s->done = calloc(k, sizeof *s->done);
	s->upd = calloc(k, sizeof *s->upd);
	s->grads = calloc(k, sizeof *s->grads);
	s->in = calloc(k, sizeof *s->in);
	s->summed = calloc(nb ? nb : 1, sizeof *s->summed);
	s->updated = calloc(nb ? nb : 1, sizeof *s->updated);
	s->collected = calloc(nb ? nb : 1, sizeof *s->collected);
	s->bad = calloc(nb ? nb : 1, sizeof *s->bad);
	int bad = !s->ctl || !s->ready || !s->done || !s->upd || !s->grads || !s->in ||
	          !s->summed || !s->updated || !s->collected || !s->bad;
	/* the window is the host's ranks' (the lender checked): no MPI here
	 * but the agreement on memory */
	size_t counters = counter_bytes(r->nbuckets);
	for (int q = 0; q < s->k && !bad; q++) {
		char *base = m->win->part[q] + m->ctl_at;
		s->ctl[q] = (shm_ctl *)base;
		s->ready[q] = (_Atomic uint64_t *)(base + round_up(sizeof(shm_ctl), 64));
		s->done[q] = (_Atomic uint64_t *)((char *)s->ready[q] + counters);
		s->upd[q] = (_Atomic uint64_t *)((char *)s->done[q] + counters);
		s->grads[q] = (const float *)(m->win->part[q] + m->buf_at);
	}
	r->sum = m->sum;
	r->head_out = r->head_sum;
	r->sharded = m->sharded;
	if (r->buf != (float *)(m->win->part[s->me] + m->buf_at) || r->head != r->buf + r->n)
		bad = 1; /* the gradients must be this rank's in the window */
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, m->win->node);
	return bad ? -EINVAL : 0;
}

void tr_shm_free(tr_reducer *r)
{
	tr_reducer_shm *s = r->shm;
	free(s->ctl);
	free(s->ready);
	free(s->done);
	free(s->upd);
	free(s->grads);
	free(s->in);
	free(s->summed);
	free(s->updated);
	free(s->collected);
	free(s->bad);
	free(s);
	r->shm = NULL;
	r->sharded = 0;
}

/* Waiting: pauses for up to spin_ns, then yields the core, then (a rank
 * held up for long: its data, a checkpoint) sleeps in short naps. *t0:
 * when the wait began (its first call sets it). */
static void backoff(const tr_reducer_shm *s, unsigned *spins, double *t0)
{
	unsigned n = ++*spins;
	if (n == 1) {
		*t0 = rio__now();
		return;
	}
	if ((n & 63) != 0) {
		cpu_relax();
		return;
	}
	double ns = (rio__now() - *t0) * 1e9;
	if (ns < s->spin_ns) {
		cpu_relax();
	} else if (ns < 1e8) {
		sched_yield();
	} else {
		struct timespec nap = {0, 50000};
		nanosleep(&nap, NULL);
	}
}

void tr_shm_head(tr_reducer *r)
{
	tr_reducer_shm *s = r->shm;
	shm_ctl *c = s->ctl[s->me];
	memcpy(c->head[r->seq & 1], r->head, (size_t)r->nhead * sizeof(float));
	tr_shm_window_sync(s->win);
	atomic_store_explicit(&c->head_seq, r->seq, memory_order_release);
}

int tr_shm_head_in(tr_reducer *r, int wait)
{
	tr_reducer_shm *s = r->shm;
	unsigned spins = 0;
	double t0 = 0;
	for (;;) {
		int q = 0;
		while (q < s->k &&
		       atomic_load_explicit(&s->ctl[q]->head_seq, memory_order_acquire) >= r->seq)
			q++;
		if (q == s->k)
			break;
		if (!wait)
			return 0;
		backoff(s, &spins, &t0);
	}
	tr_shm_window_sync(s->win);
	for (int q = 0; q < s->k; q++)
		s->in[q] = s->ctl[q]->head[r->seq & 1];
	(void)tr_sum_ranked(r->head_sum, s->in, s->k, (size_t)r->nhead);
	return 1;
}

void tr_shm_post(tr_reducer *r, int bucket)
{
	tr_reducer_shm *s = r->shm;
	tr_shm_window_sync(s->win); /* the gradients written before the counter */
	atomic_store_explicit(&s->ready[s->me][bucket], r->seq, memory_order_release);
}

/* Sums this rank's slice of every bucket that all ranks have made ready. */
static void sum_slices(tr_reducer *r)
{
	tr_reducer_shm *s = r->shm;
	int posted = (int)((r->posted + r->bucket - 1) / r->bucket);
	for (int i = 0; i < posted; i++) {
		if (s->summed[i] == r->seq)
			continue;
		int q = 0;
		while (q < s->k &&
		       atomic_load_explicit(&s->ready[q][i], memory_order_acquire) >= r->seq)
			q++;
		if (q < s->k)
			continue;
		tr_shm_window_sync(s->win);
		size_t lo, hi;
		tr_reducer_slice(r, i, s->me, &lo, &hi);
		for (q = 0; q < s->k; q++)
			s->in[q] = s->grads[q] + lo;
		int bad = tr_sum_ranked(r->sum + lo, s->in, s->k, hi - lo);
		tr_shm_window_sync(s->win);
		atomic_store_explicit(&s->done[s->me][i], r->seq << 1 | (uint64_t)bad,
		                      memory_order_release);
		s->summed[i] = r->seq;
	}
}

/* 1 when every rank's counter c[q][i] has reached seq; *bad: the OR of
 * the low bits of done counters (seq << 1 | bad). */
static int all_at(const tr_reducer_shm *s, _Atomic uint64_t *const *c, int i, uint64_t seq,
                  int shift, int *bad)
{
	for (int q = 0; q < s->k; q++) {
		uint64_t v = atomic_load_explicit(&c[q][i], memory_order_acquire);
		if (v >> shift < seq)
			return 0;
		if (bad)
			*bad |= (int)(v & 1);
	}
	return 1;
}

/* A bucket goes through: this rank's slice summed (sum_slices); every
 * slice summed; sharded: this rank's slice updated, once the head is in,
 * then every slice updated; then it is in. */
void tr_shm_collect(tr_reducer *r, int wait)
{
	tr_reducer_shm *s = r->shm;
	int posted = (int)((r->posted + r->bucket - 1) / r->bucket);
	unsigned spins = 0;
	double t0 = 0;
	for (;;) {
		sum_slices(r);
		int found = 0;
		for (int i = 0; i < posted; i++) {
			if (s->collected[i] == r->seq || s->summed[i] != r->seq)
				continue;
			if (s->updated[i] != r->seq) {
				int bad = 0;
				if (!all_at(s, s->done, i, r->seq, 1, &bad))
					continue;
				if (r->sharded) {
					if (!r->head_in && !(r->head_in = tr_shm_head_in(r, 0)))
						continue;
					tr_shm_window_sync(s->win); /* the others' sums */
					size_t lo, hi;
					tr_reducer_slice(r, i, s->me, &lo, &hi);
					if (r->update) {
						double a = rio__now();
						r->update(r->update_ctx, lo, hi, !bad);
						r->update_seconds += rio__now() - a;
					}
					tr_shm_window_sync(s->win);
					atomic_store_explicit(&s->upd[s->me][i], r->seq,
					                      memory_order_release);
				}
				s->updated[i] = r->seq;
				s->bad[i] = bad;
			}
			if (r->sharded && !all_at(s, s->upd, i, r->seq, 0, NULL))
				continue;
			s->collected[i] = r->seq;
			r->done[r->ndone++] = i;
			found = 1;
		}
		if (found) {
			tr_shm_window_sync(s->win); /* the sums and updates, after the counters */
			return;
		}
		if (!wait)
			return;
		backoff(s, &spins, &t0);
	}
}

int tr_shm_bad(const tr_reducer *r, int i) { return r->shm->bad[i]; }

/*
 * plan.c — each epoch's order of tasks (plan.h).
 *
 * NONE runs the pieces in order; BUFFER shuffles the pieces and
 * interleaves `interleave` of them a task at a time (the batcher then draws
 * records through the shuffle buffer); GLOBAL makes a Fisher-Yates
 * permutation of all the rank's records and cuts it into tasks of a chunk's
 * worth of records. The placed path then makes that order one task per
 * batch (rio__plan_batches). Every random choice comes from an RNG seeded
 * with (seed, epoch, rank, purpose) and nothing else.
 */
#include "config.h"
#include "grow.h"
#include "plan.h"
#include "rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { RNG_PIECES = 1, RNG_PERM = 2 };

/* ---- the shuffle buffer's order, on numbers --------------------------- */

int rio__bufsim_init(rio__bufsim *b, const rio_loader_opts *o, uint64_t epoch, int rank,
                     uint64_t records)
{
	b->want = o->shuffle_buffer;
	b->nbuf = 0;
	size_t cap = b->want < records ? b->want : (size_t)records;
	b->buf = malloc((cap ? cap : 1) * sizeof *b->buf);
	if (!b->buf)
		return -ENOMEM;
	rio__rng_seed(&b->rng, o->seed, epoch, (uint64_t)rank, RIO__RNG_SHUFFLE_BUFFER);
	return 0;
}

int rio__bufsim_push(rio__bufsim *b, uint64_t in, uint64_t *out)
{
	if (b->nbuf < b->want) {
		b->buf[b->nbuf++] = in;
		return 0;
	}
	size_t j = (size_t)rio__rng_below(&b->rng, b->nbuf);
	*out = b->buf[j];
	b->buf[j] = in;
	return 1;
}

int rio__bufsim_drain(rio__bufsim *b, uint64_t *out)
{
	if (b->nbuf == 0)
		return 0;
	size_t j = (size_t)rio__rng_below(&b->rng, b->nbuf);
	*out = b->buf[j];
	b->buf[j] = b->buf[--b->nbuf];
	return 1;
}

void rio__bufsim_free(rio__bufsim *b)
{
	free(b->buf);
	b->buf = NULL;
}

int rio__plan_buffer_perm(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                          uint64_t epoch)
{
	uint64_t n = ds->rank_records, out = 0;
	rio__bufsim sim;
	p->perm = malloc((n ? n : 1) * sizeof *p->perm);
	if (!p->perm || rio__bufsim_init(&sim, o, epoch, ds->rank, n) < 0) {
		free(p->perm);
		p->perm = NULL;
		return -ENOMEM;
	}
	for (uint64_t t = 0; t < p->ntasks; t++) {
		const rio__task *task = &p->tasks[t];
		const rio__piece *pc = &ds->pieces[task->piece];
		uint64_t ord = pc->rank_start + (task->first - pc->first);
		for (uint64_t k = 0; k < task->count && out < n; k++)
			out += (uint64_t)rio__bufsim_push(&sim, ord + k, &p->perm[out]);
	}
	while (out < n && rio__bufsim_drain(&sim, &p->perm[out]))
		out++;
	rio__bufsim_free(&sim);
	return 0;
}

/* ---- the epoch's tasks ------------------------------------------------ */

/* Records per task for a shard: about a chunk's worth, a multiple of the
 * sparse index step so every task but a piece's first starts at a known
 * offset. */
static uint64_t task_records(const rio__shard *s, const rio_loader_opts *o)
{
	uint64_t avg = s->count ? (s->data_end + s->count - 1) / s->count : 1;
	uint64_t n = o->chunk_bytes / (avg ? avg : 1);
	n = n / RIO__CKPT * RIO__CKPT;
	return n < RIO__CKPT ? RIO__CKPT : n;
}

static int push_task(rio__plan *p, size_t *cap, rio__task t)
{
	if (rio__grow(&p->tasks, cap, (size_t)p->ntasks + 1, sizeof *p->tasks, 64))
		return -ENOMEM;
	p->tasks[p->ntasks++] = t;
	return 0;
}

/* The next task of piece `pi`, whose records from `*pos` are not planned
 * yet (in its run `*run`, when it has runs); returns 0 when the piece is
 * done. */
static int piece_next_task(const rio__dataset *ds, const rio_loader_opts *o, uint32_t pi,
                           uint64_t *pos, uint64_t *seq, uint32_t *run, rio__task *t)
{
	const rio__piece *p = &ds->pieces[pi];
	uint64_t end = p->first + p->count;
	if (p->nruns) { /* only the runs: the one `*pos` is in, or the next */
		const rio__run *r = &ds->runs[p->run + *run];
		if (*pos >= r->first + r->count) {
			if (++*run >= p->nruns)
				return 0;
			r++;
		}
		if (*pos < r->first)
			*pos = r->first;
		end = r->first + r->count;
	}
	if (*pos >= end)
		return 0;
	uint64_t step = task_records(&ds->shards[p->shard], o);
	uint64_t stop = (*pos / step + 1) * step; /* the next aligned boundary */
	if (stop > end)
		stop = end;
	*t = (rio__task){pi, p->shard, *pos, stop - *pos, (*seq)++};
	*pos = stop;
	return 1;
}

static int plan_sequential(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                           uint64_t epoch)
{
	size_t cap = 0;
	size_t n = ds->npieces;
	uint32_t *order = malloc((n ? n : 1) * sizeof *order);
	uint64_t *pos = malloc((n ? n : 1) * sizeof *pos);
	uint64_t *seq = calloc(n ? n : 1, sizeof *seq);
	uint32_t *run = calloc(n ? n : 1, sizeof *run);
	int rc = order && pos && seq && run ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		order[i] = (uint32_t)i;
		pos[i] = ds->pieces[i].first;
	}
	size_t k = 1;
	if (rc == 0 && o->shuffle == RIO_SHUFFLE_BUFFER) {
		rio__rng rng;
		rio__rng_seed(&rng, o->seed, epoch, (uint64_t)ds->rank, RNG_PIECES);
		for (size_t i = n; i > 1; i--) {
			size_t j = (size_t)rio__rng_below(&rng, i);
			uint32_t tmp = order[i - 1];
			order[i - 1] = order[j];
			order[j] = tmp;
		}
		k = o->interleave ? o->interleave : 1;
	}
	/* `k` slots take turns, a task each; a slot whose piece is done takes
	 * the next piece in order. k == 1 is plain piece order. */
	uint32_t slots[RIO_LOADER_MAX_INTERLEAVE];
	if (k > RIO_LOADER_MAX_INTERLEAVE) /* refused at open (loader.c) */
		k = RIO_LOADER_MAX_INTERLEAVE;
	size_t next_piece = 0, active = 0;
	while (rc == 0 && active < k && next_piece < n)
		slots[active++] = order[next_piece++];
	size_t turn = 0;
	while (rc == 0 && active > 0) {
		if (turn >= active)
			turn = 0;
		uint32_t pi = slots[turn];
		rio__task t;
		if (piece_next_task(ds, o, pi, &pos[pi], &seq[pi], &run[pi], &t)) {
			rc = push_task(p, &cap, t);
			turn++;
		} else if (next_piece < n) {
			slots[turn] = order[next_piece++];
		} else {
			memmove(&slots[turn], &slots[turn + 1], (active - turn - 1) * sizeof *slots);
			active--;
		}
	}
	free(order);
	free(pos);
	free(seq);
	free(run);
	return rc;
}

static int plan_global(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                       uint64_t epoch)
{
	uint64_t n = ds->rank_records;
	p->global = 1;
	p->perm = malloc((n ? n : 1) * sizeof *p->perm);
	if (!p->perm)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		p->perm[i] = i;
	rio__rng rng;
	rio__rng_seed(&rng, o->seed, epoch, (uint64_t)ds->rank, RNG_PERM);
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = rio__rng_below(&rng, i);
		uint64_t tmp = p->perm[i - 1];
		p->perm[i - 1] = p->perm[j];
		p->perm[j] = tmp;
	}
	/* tasks of about a chunk's worth of records each */
	uint64_t bytes = 0;
	for (size_t i = 0; i < ds->npieces; i++) {
		const rio__shard *s = &ds->shards[ds->pieces[i].shard];
		bytes += s->count ? s->data_end / s->count * ds->pieces[i].count : 0;
	}
	uint64_t avg = n ? bytes / n : 1;
	uint64_t per = o->chunk_bytes / (avg ? avg : 1);
	if (per < 1)
		per = 1;
	if (per > 4096)
		per = 4096;
	size_t cap = 0;
	int rc = 0;
	for (uint64_t i = 0; i < n && rc == 0; i += per)
		rc = push_task(p, &cap,
		               (rio__task){0, 0, i, (n - i < per ? n - i : per), i / per});
	return rc;
}

int rio__plan_build(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                    uint64_t epoch)
{
	memset(p, 0, sizeof *p);
	int rc = o->shuffle == RIO_SHUFFLE_GLOBAL ? plan_global(p, ds, o, epoch)
	                                          : plan_sequential(p, ds, o, epoch);
	if (rc < 0)
		rio__plan_free(p);
	return rc;
}

static void free_tasks(rio__plan *p)
{
	free(p->tasks);
	p->tasks = NULL;
	p->ntasks = 0;
}

void rio__plan_free(rio__plan *p)
{
	free(p->tasks);
	free(p->perm);
	memset(p, 0, sizeof *p);
}

int rio__plan_batches(rio__plan *p, const rio__dataset *ds, const rio_loader_opts *o,
                       uint64_t epoch)
{
	uint64_t n = ds->rank_records, bs = o->batch_size;
	int rc;
	/* buffer shuffling: the order the shuffle buffer
	 * gives, as a permutation; the shuffle buffer itself is not needed */
	if (o->shuffle == RIO_SHUFFLE_BUFFER && (rc = rio__plan_buffer_perm(p, ds, o, epoch)) < 0)
		return rc;
	uint64_t nb = n / bs + (!o->drop_remainder && n % bs ? 1 : 0);
	free_tasks(p);
	p->tasks = malloc((nb ? nb : 1) * sizeof *p->tasks);
	if (!p->tasks)
		return -ENOMEM;
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t first = b * bs;
		p->tasks[b] = (rio__task){0, 0, first, n - first < bs ? n - first : bs, b};
	}
	p->ntasks = nb;
	return 0;
}

/*
 * elastic.c — what is left of an epoch after some of it ran at other world
 * sizes, and a rank's share of it (elastic.h says what a stage is).
 *
 * The records of the dataset are numbered in shard order (their ordinal);
 * a bitmap holds those not delivered yet. For each stage, each of its
 * ranks' orders is replayed from the plan (plan.c) without reading any
 * data: NONE and GLOBAL deliver in task or permutation order; BUFFER
 * passes the task order through a shuffle buffer simulated on ordinals
 * with the batcher's own RNG stream and moves (batcher.c: shuffle_add,
 * shuffle_drain), so records that sat in a rank's buffer when it stopped
 * are among the rest, not lost. The first `position` records of each order
 * leave the bitmap. A rank's share is then the `rank`-th of `world`
 * contiguous balanced ranges of what is left: runs of consecutive records
 * of a shard, those of one shard one piece with holes (plan.h), except
 * where the order needs each record's ordinal (global shuffling, the
 * placed path), where each run is a piece.
 *
 * The replay assumes every record of the interrupted stages was delivered
 * or is still to come: under RIO_DAMAGE_SKIP a record skipped as damaged
 * before the stop shifts the order it replays (doc/loader.md).
 */
#include "config.h"
#include "elastic.h"
#include "grow.h"
#include "internal.h"
#include "rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rio__stages_free(rio__stages *st)
{
	free(st->world);
	free(st->pos);
	memset(st, 0, sizeof *st);
}

int rio__stages_push(rio__stages *st, uint64_t world, const uint64_t *pos)
{
	uint64_t *w = realloc(st->world, (st->n + 1) * sizeof *w);
	if (!w)
		return -ENOMEM;
	st->world = w;
	uint64_t *p = realloc(st->pos, (st->npos + world) * sizeof *p);
	if (!p)
		return -ENOMEM;
	st->pos = p;
	memcpy(p + st->npos, pos, world * sizeof *p);
	st->world[st->n++] = world;
	st->npos += world;
	return 0;
}

/* The records not delivered yet: a bit per ordinal. */
typedef struct recset {
	uint64_t *bits;
	uint64_t n;          /* ordinals */
	const uint64_t *base; /* base[s]: the ordinal of shard s's record 0 */
	size_t nshards;
} recset;

static void take_out(recset *rs, uint64_t ord)
{
	rs->bits[ord >> 6] &= ~(1ull << (ord & 63));
}

/* A rank's share: its pieces, and the runs that pieces with holes keep. */
typedef struct share {
	rio__piece *pieces;
	size_t npieces;
	uint64_t records;
	rio__run *runs;
	size_t nruns;
	uint32_t *run_shard; /* each run's shard */
} share;

static void share_free(share *sh)
{
	free(sh->pieces);
	free(sh->runs);
	free(sh->run_shard);
	memset(sh, 0, sizeof *sh);
}

static int add_run(share *sh, size_t *cap, uint32_t shard, uint64_t first, uint64_t count)
{
	if (sh->nruns == *cap) {
		size_t nc = rio__grow_cap(*cap, sh->nruns + 1, 64);
		if (rio__resize(&sh->runs, nc, sizeof *sh->runs) ||
		    rio__resize(&sh->run_shard, nc, sizeof *sh->run_shard))
			return -ENOMEM;
		*cap = nc;
	}
	sh->runs[sh->nruns] = (rio__run){first, count};
	sh->run_shard[sh->nruns++] = shard;
	return 0;
}

/* The pieces of the runs: the runs of one shard make one piece with holes
 * (the stream of a compressed shard read once, few pieces to interleave)
 * unless the order needs every record's ordinal (global shuffling, the
 * placed path in order): then each run is a piece. */
static int make_share_pieces(share *sh, int holes)
{
	sh->pieces = malloc((sh->nruns ? sh->nruns : 1) * sizeof *sh->pieces);
	if (!sh->pieces)
		return -ENOMEM;
	for (size_t i = 0; i < sh->nruns;) {
		size_t j = i + 1;
		uint64_t n = sh->runs[i].count;
		while (holes && j < sh->nruns && sh->run_shard[j] == sh->run_shard[i])
			n += sh->runs[j++].count;
		const rio__run *last = &sh->runs[j - 1];
		rio__piece p = {sh->run_shard[i], sh->runs[i].first,
		                last->first + last->count - sh->runs[i].first, sh->records, 0, 0};
		if (j - i > 1) {
			p.run = (uint32_t)i;
			p.nruns = (uint32_t)(j - i);
		}
		sh->pieces[sh->npieces++] = p;
		sh->records += n;
		i = j;
	}
	return 0;
}

/* The `rank`-th of `world` balanced ranges of the `left` records of bits. */
static int split(const recset *rs, const uint64_t *bits, uint64_t left, int rank, int world,
                 int holes, share *out)
{
	memset(out, 0, sizeof *out);
	uint64_t w = (uint64_t)world, r = (uint64_t)rank;
	uint64_t base = left / w, extra = left % w;
	uint64_t lo = r * base + (r < extra ? r : extra);
	uint64_t hi = lo + base + (r < extra ? 1 : 0);
	uint64_t seen = 0, words = (rs->n + 63) / 64, i = 0;
	for (uint64_t k = 0; k < words; k++) { /* whole words before the range */
		uint64_t c = (uint64_t)__builtin_popcountll(bits[k]);
		if (seen + c > lo)
			break;
		seen += c;
		i = (k + 1) * 64;
	}
	size_t s = 0, cap = 0;
	uint64_t run_first = 0, run_count = 0;
	uint32_t run_shard = 0;
	int rc = 0;
	for (; i < rs->n && seen < hi && rc == 0; i++) {
		if (!(bits[i >> 6] >> (i & 63) & 1))
			continue;
		if (seen++ < lo)
			continue;
		while (rs->base[s + 1] <= i)
			s++;
		uint64_t rec = i - rs->base[s];
		if (run_count && run_shard == s && run_first + run_count == rec) {
			run_count++;
			continue;
		}
		if (run_count)
			rc = add_run(out, &cap, run_shard, run_first, run_count);
		run_shard = (uint32_t)s;
		run_first = rec;
		run_count = 1;
	}
	if (rc == 0 && run_count)
		rc = add_run(out, &cap, run_shard, run_first, run_count);
	if (rc == 0)
		rc = make_share_pieces(out, holes);
	if (rc < 0)
		share_free(out);
	return rc;
}

/* Takes out of rs the first `pos` records that rank `rank` of `world`
 * delivers from `pieces` in epoch `epoch`. */
static int take_delivered(recset *rs, const rio__dataset *ds, const rio_loader_opts *o,
                          uint64_t epoch, int rank, int world, const share *sh, uint64_t pos)
{
	if (pos == 0)
		return 0;
	rio__dataset v = *ds; /* the dataset as that rank saw it */
	uint64_t records = sh->records;
	v.rank = rank;
	v.world = world;
	v.pieces = sh->pieces;
	v.npieces = sh->npieces;
	v.runs = sh->runs;
	v.rank_records = records;
	rio__plan plan;
	int rc = rio__plan_build(&plan, &v, o, epoch);
	if (rc < 0)
		return rc;
	uint64_t out = 0;
	if (plan.global) {
		for (uint64_t i = 0; i < pos; i++) {
			uint32_t piece, shard;
			uint64_t rec;
			rio__dataset_locate(&v, plan.perm[i], &piece, &shard, &rec);
			take_out(rs, rs->base[shard] + rec);
		}
		rio__plan_free(&plan);
		return 0;
	}
	int buffered = o->shuffle == RIO_SHUFFLE_BUFFER;
	rio__bufsim sim = {0};
	if (buffered && rio__bufsim_init(&sim, o, epoch, rank, records) < 0) {
		rio__plan_free(&plan);
		return -ENOMEM;
	}
	for (uint64_t t = 0; t < plan.ntasks && out < pos; t++) {
		const rio__task *task = &plan.tasks[t];
		for (uint64_t k = 0; k < task->count && out < pos; k++) {
			uint64_t ord = rs->base[task->shard] + task->first + k, left = ord;
			if (!buffered || rio__bufsim_push(&sim, ord, &left)) {
				take_out(rs, left);
				out++;
			}
		}
	}
	uint64_t left; /* the end of the epoch: the buffer drains */
	while (buffered && out < pos && rio__bufsim_drain(&sim, &left)) {
		take_out(rs, left);
		out++;
	}
	rio__bufsim_free(&sim);
	rio__plan_free(&plan);
	return 0;
}

int rio__elastic_pieces(const rio__dataset *ds, const rio_loader_opts *o, uint64_t epoch,
                        const rio__stages *st, int rank, int world, rio__piece **pieces,
                        size_t *npieces, rio__run **runs, uint64_t *records, rio_error *err)
{
	*pieces = NULL;
	*npieces = 0;
	*runs = NULL;
	*records = 0;
	/* buffer shuffling's shares always have holes, as the pipeline's:
	 * its order depends on the pieces, and a stage may have run with
	 * opts.map (the placed path) or without, which the state does not
	 * say; a resumed buffer epoch runs on the pipeline (loader.c); so
	 * does one with opts.cache, in the order it has without the cache */
	int holes = o->shuffle == RIO_SHUFFLE_BUFFER ||
	            (o->shuffle == RIO_SHUFFLE_NONE && (!ds->placed || ds->cache_bytes));
	uint64_t *base = malloc((ds->nshards + 1) * sizeof *base);
	if (!base)
		return -ENOMEM;
	base[0] = 0;
	for (size_t s = 0; s < ds->nshards; s++)
		base[s + 1] = base[s] + ds->shards[s].count;
	recset rs = {NULL, base[ds->nshards], base, ds->nshards};
	uint64_t words = (rs.n + 63) / 64;
	rs.bits = malloc((words ? words : 1) * sizeof *rs.bits);
	uint64_t *stage = malloc((words ? words : 1) * sizeof *stage);
	int rc = rs.bits && stage ? 0 : -ENOMEM;
	if (rc == 0) {
		memset(rs.bits, 0xff, words * sizeof *rs.bits);
		if (rs.n % 64)
			rs.bits[words - 1] = (1ull << (rs.n % 64)) - 1;
	}
	uint64_t left = rs.n;
	const uint64_t *pos = st->pos;
	for (size_t k = 0; k < st->n && rc == 0; k++) {
		int w = (int)st->world[k];
		uint64_t stage_left = left;
		memcpy(stage, rs.bits, words * sizeof *stage); /* the stage's start */
		for (int r = 0; r < w && rc == 0; r++, pos++) {
			share sh = {0};
			rc = k == 0 ? rio__pieces_for(ds, r, w, &sh.pieces, &sh.npieces, &sh.records)
			            : split(&rs, stage, stage_left, r, w, holes, &sh);
			if (rc < 0)
				break;
			if (*pos > sh.records)
				rc = rio__error_set(err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
				                    "the saved position %llu of rank %d of %d is past its "
				                    "%llu records",
				                    (unsigned long long)*pos, r, w,
				                    (unsigned long long)sh.records);
			else
				rc = take_delivered(&rs, ds, o, epoch, r, w, &sh, *pos);
			left -= rc == 0 ? *pos : 0;
			share_free(&sh);
		}
	}
	share sh;
	if (rc == 0 && (rc = split(&rs, rs.bits, left, rank, world, holes, &sh)) == 0) {
		*pieces = sh.pieces;
		*npieces = sh.npieces;
		*runs = sh.runs;
		*records = sh.records;
		free(sh.run_shard);
	}
	free(stage);
	free(rs.bits);
	free(base);
	return rc;
}

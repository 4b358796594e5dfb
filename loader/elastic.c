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
 * contiguous balanced ranges of what is left, as pieces (runs of
 * consecutive records of one shard).
 *
 * The replay assumes every record of the interrupted stages was delivered
 * or is still to come: under RIO_DAMAGE_SKIP a record skipped as damaged
 * before the stop shifts the order it replays (doc/loader.md).
 */
#include "config.h"
#include "elastic.h"
#include "internal.h"
#include "rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* batcher.c's purpose word for the shuffle buffer's RNG */
enum { RNG_SHUFFLE_BUFFER = 3 };

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

static int add_piece(rio__piece **pieces, size_t *n, uint64_t *records, uint32_t shard,
                     uint64_t first, uint64_t count)
{
	rio__piece *p = realloc(*pieces, (*n + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	*pieces = p;
	p[(*n)++] = (rio__piece){shard, first, count, *records};
	*records += count;
	return 0;
}

/* The `rank`-th of `world` balanced ranges of the `left` records of bits,
 * as pieces. */
static int split(const recset *rs, const uint64_t *bits, uint64_t left, int rank, int world,
                 rio__piece **pieces, size_t *npieces, uint64_t *records)
{
	*pieces = NULL;
	*npieces = 0;
	*records = 0;
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
	size_t s = 0;
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
			rc = add_piece(pieces, npieces, records, run_shard, run_first, run_count);
		run_shard = (uint32_t)s;
		run_first = rec;
		run_count = 1;
	}
	if (rc == 0 && run_count)
		rc = add_piece(pieces, npieces, records, run_shard, run_first, run_count);
	if (rc < 0) {
		free(*pieces);
		*pieces = NULL;
	}
	return rc;
}

/* Takes out of rs the first `pos` records that rank `rank` of `world`
 * delivers from `pieces` in epoch `epoch`. */
static int take_delivered(recset *rs, const rio__dataset *ds, const rio_loader_opts *o,
                          uint64_t epoch, int rank, int world, rio__piece *pieces,
                          size_t npieces, uint64_t records, uint64_t pos)
{
	if (pos == 0)
		return 0;
	rio__dataset v = *ds; /* the dataset as that rank saw it */
	v.rank = rank;
	v.world = world;
	v.pieces = pieces;
	v.npieces = npieces;
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
	size_t want = buffered ? o->shuffle_buffer : 0, nbuf = 0;
	uint64_t *buf = NULL;
	rio__rng rng;
	if (buffered) {
		buf = malloc((want < records ? want : records ? records : 1) * sizeof *buf);
		if (!buf) {
			rio__plan_free(&plan);
			return -ENOMEM;
		}
		rio__rng_seed(&rng, o->seed, epoch, (uint64_t)rank, RNG_SHUFFLE_BUFFER);
	}
	for (uint64_t t = 0; t < plan.ntasks && out < pos; t++) {
		const rio__task *task = &plan.tasks[t];
		for (uint64_t k = 0; k < task->count && out < pos; k++) {
			uint64_t ord = rs->base[task->shard] + task->first + k;
			if (!buffered) {
				take_out(rs, ord);
				out++;
			} else if (nbuf < want) {
				buf[nbuf++] = ord;
			} else {
				size_t j = (size_t)rio__rng_below(&rng, nbuf);
				take_out(rs, buf[j]);
				out++;
				buf[j] = ord;
			}
		}
	}
	while (out < pos && nbuf > 0) { /* the end of the epoch: the buffer drains */
		size_t j = (size_t)rio__rng_below(&rng, nbuf);
		take_out(rs, buf[j]);
		out++;
		buf[j] = buf[--nbuf];
	}
	free(buf);
	rio__plan_free(&plan);
	return 0;
}

int rio__elastic_pieces(const rio__dataset *ds, const rio_loader_opts *o, uint64_t epoch,
                        const rio__stages *st, int rank, int world, rio__piece **pieces,
                        size_t *npieces, uint64_t *records, rio_error *err)
{
	*pieces = NULL;
	*npieces = 0;
	*records = 0;
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
			rio__piece *p;
			size_t np;
			uint64_t nrec;
			rc = k == 0 ? rio__pieces_for(ds, r, w, &p, &np, &nrec)
			            : split(&rs, stage, stage_left, r, w, &p, &np, &nrec);
			if (rc < 0)
				break;
			if (*pos > nrec)
				rc = rio__error_set(err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
				                    "the saved position %llu of rank %d of %d is past its "
				                    "%llu records",
				                    (unsigned long long)*pos, r, w,
				                    (unsigned long long)nrec);
			else
				rc = take_delivered(&rs, ds, o, epoch, r, w, p, np, nrec, *pos);
			left -= rc == 0 ? *pos : 0;
			free(p);
		}
	}
	if (rc == 0)
		rc = split(&rs, rs.bits, left, rank, world, pieces, npieces, records);
	free(stage);
	free(rs.bits);
	free(base);
	return rc;
}

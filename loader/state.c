/*
 * state.c — the saved state of a loader's position (rio_loader_state_save)
 * and its restore: at the same world size, the next batch is the one an
 * uninterrupted loader would have handed out next; at another world size
 * (rio_loader_state_restore_all) this rank's share of what is left of the
 * epoch (elastic.c) is installed as the epoch in progress.
 */
#include "config.h"
#include "loader_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The saved state: fixed-size little-endian fields; in an elastic epoch
 * (format 2) then the stages before the current one (their count, then
 * each one's world and its ranks' positions); then a CRC-32C of all
 * before it. An ordinary epoch's state is format 1, as it always was. */
enum { STATE_WORDS = 16, STATE_SIZE = STATE_WORDS * 8 + 4 };
static const uint64_t STATE_MAGIC = 0x314c4f4952ull;  /* "RIOL1" */
static const uint64_t STATE_MAGIC2 = 0x324c4f4952ull; /* "RIOL2" */
enum { W_MAGIC, W_SEED, W_EPOCH, W_POSITION, W_RANK, W_WORLD, W_IDENT, W_RECORDS, W_BATCH,
       W_SHARDING = 12, W_COLUMNS = 15 };
/* The order in which a restore compares the words: the sharding before
 * the data's hash and the record count, which depend on it, so that a
 * state of another sharding is said to be one */
static const int state_order[STATE_WORDS] = {0, 1, 2, 3, 4, 5, W_SHARDING, 6, 7, 8, 9, 10, 11,
                                             13, 14, 15};

/* The columns' word: their lengths, one after another, mixed. Not their
 * types: a bf16 column is the f32 one rounded, and a run may switch
 * between the two (recordio-train --precision) and go on from its state.
 * States saved before bf16 mixed each column's decoded bytes instead
 * (`legacy`): restores accept that word too, bf16 standing for f32. */
static uint64_t columns_word(const rio_loader *l, int legacy)
{
	uint64_t cols = 0;
	for (size_t c = 0; c < l->cols.ncols; c++) {
		const rio_column_spec *s = &l->cols.spec[c];
		uint64_t v = s->length;
		if (legacy)
			v *= s->type == RIO_DTYPE_BF16 ? rio_dtype_size(RIO_DTYPE_F32)
			                               : rio_dtype_size(s->type);
		cols = (cols ^ v) * 0x100000001b3ull;
	}
	return cols;
}

/* Whether saved word i matches this loader's */
static int word_matches(const rio_loader *l, int i, const uint64_t got[STATE_WORDS],
                        const uint64_t want[STATE_WORDS])
{
	return got[i] == want[i] || (i == W_COLUMNS && got[i] == columns_word(l, 1));
}

static void state_words(const rio_loader *l, uint64_t w[STATE_WORDS], uint64_t epoch,
                        uint64_t position)
{
	const rio_loader_opts *o = &l->o;
	uint64_t cols = columns_word(l, 0);
	uint64_t v[STATE_WORDS] = {
		STATE_MAGIC, o->seed, epoch, position, (uint64_t)l->ds.rank,
		(uint64_t)l->ds.world, l->ds.ident, rio__usual_records(l), o->batch_size,
		(uint64_t)o->shuffle, o->shuffle == RIO_SHUFFLE_BUFFER ? o->shuffle_buffer : 0,
		o->shuffle == RIO_SHUFFLE_BUFFER ? o->interleave : 0, (uint64_t)l->ds.sharding,
		(uint64_t)o->drop_remainder, (uint64_t)o->on_damage, cols};
	memcpy(w, v, sizeof v);
}

static const char *const state_names[STATE_WORDS] = {
	"format", "seed", "epoch", "position", "rank", "world size", "data (shard record counts)",
	"record count", "batch size", "shuffle", "shuffle buffer", "interleave", "sharding",
	"drop remainder", "damage policy", "columns"};

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

RIO_API int rio_loader_state_save(const rio_loader *l, void *buf, size_t size)
{
	/* a finished epoch's stages are over: the next epoch is ordinary */
	const rio__stages *st = l->finished ? NULL : &l->stages;
	size_t words = STATE_WORDS;
	if (st && st->n)
		words += 1 + st->n + st->npos;
	size_t need = words * 8 + 4;
	if (need > INT_MAX)
		return -EOVERFLOW;
	if (size == 0)
		return (int)need;
	if (!buf || size < need)
		return -ENOSPC;
	uint64_t w[STATE_WORDS];
	state_words(l, w, rio_loader_epoch(l), rio_loader_position(l));
	uint8_t *p = buf;
	if (words > STATE_WORDS)
		w[W_MAGIC] = STATE_MAGIC2;
	for (int i = 0; i < STATE_WORDS; i++)
		put_le64(p + 8 * i, w[i]);
	if (words > STATE_WORDS) {
		uint8_t *q = p + 8 * STATE_WORDS;
		put_le64(q, st->n);
		q += 8;
		const uint64_t *pos = st->pos;
		for (size_t k = 0; k < st->n; k++) {
			put_le64(q, st->world[k]);
			q += 8;
			for (uint64_t r = 0; r < st->world[k]; r++, q += 8)
				put_le64(q, *pos++);
		}
	}
	uint32_t crc = rio_crc32c(0, p, words * 8);
	for (int i = 0; i < 4; i++)
		p[words * 8 + i] = (uint8_t)(crc >> (8 * i));
	return (int)need;
}

static int bad_state(rio_loader *l, const char *what)
{
	return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
	                      "the saved loader state %s", what);
}

/* Reads a blob: its words, and its stages (format 2; st->n 0 otherwise). */
static int state_parse(rio_loader *l, const void *buf, size_t size, uint64_t got[STATE_WORDS],
                       rio__stages *st)
{
	const uint8_t *p = buf;
	memset(st, 0, sizeof *st);
	if (!buf || size < STATE_SIZE || (size - 4) % 8)
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "a saved loader state is %d bytes or more, this one %zu",
		                      STATE_SIZE, size);
	size_t words = (size - 4) / 8;
	uint32_t crc = (uint32_t)p[words * 8] | (uint32_t)p[words * 8 + 1] << 8 |
	               (uint32_t)p[words * 8 + 2] << 16 | (uint32_t)p[words * 8 + 3] << 24;
	if (crc != rio_crc32c(0, p, words * 8))
		return bad_state(l, "is damaged (CRC mismatch)");
	for (int i = 0; i < STATE_WORDS; i++)
		got[i] = get_le64(p + 8 * i);
	if (got[W_MAGIC] == STATE_MAGIC)
		return words == STATE_WORDS ? 0 : bad_state(l, "is longer than its format");
	if (got[W_MAGIC] != STATE_MAGIC2)
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the saved loader state has another format (%llu, here %llu)",
		                      (unsigned long long)got[W_MAGIC],
		                      (unsigned long long)STATE_MAGIC);
	/* the stages: their count, then each world and its positions */
	const uint8_t *q = p + 8 * STATE_WORDS, *end = p + 8 * words;
	uint64_t n = q < end ? get_le64(q) : 0;
	q += 8;
	if (n == 0 || n > words)
		return bad_state(l, "has a damaged list of stages");
	for (uint64_t k = 0; k < n; k++) {
		uint64_t w = q < end ? get_le64(q) : 0;
		q += 8;
		if (w < 1 || w > RIO_LOADER_MAX_WORLD || w > (uint64_t)(end - q) / 8) {
			rio__stages_free(st);
			return bad_state(l, "has a damaged list of stages");
		}
		uint64_t *pos = malloc(w * sizeof *pos);
		if (!pos) {
			rio__stages_free(st);
			return -ENOMEM;
		}
		for (uint64_t r = 0; r < w; r++, q += 8)
			pos[r] = get_le64(q);
		int rc = rio__stages_push(st, w, pos);
		free(pos);
		if (rc < 0) {
			rio__stages_free(st);
			return rc;
		}
	}
	if (q != end) {
		rio__stages_free(st);
		return bad_state(l, "is longer than its list of stages");
	}
	got[W_MAGIC] = STATE_MAGIC;
	return 0;
}

/* This rank's share of what is left of `epoch` after stages `st` (taken
 * over: freed on failure), ready to run from `position`. */
static int elastic_install(rio_loader *l, uint64_t epoch, uint64_t position, rio__stages *st)
{
	int rc = rio__dataset_count_every_shard(&l->ds, &l->o, &l->err);
	rio__piece *pieces = NULL;
	rio__run *runs = NULL;
	size_t npieces = 0;
	uint64_t records = 0;
	if (rc == 0)
		rc = rio__elastic_pieces(&l->ds, &l->o, epoch, st, l->ds.rank, l->ds.world, &pieces,
		                         &npieces, &runs, &records, &l->err);
	if (rc == 0 && position > records)
		rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                    "the saved position %llu is past this rank's %llu records of "
		                    "the resumed epoch",
		                    (unsigned long long)position, (unsigned long long)records);
	if (rc < 0) {
		if (l->err.code == 0)
			rio__error_set(&l->err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			               "rebuilding the rest of epoch %llu", (unsigned long long)epoch);
		free(pieces);
		free(runs);
		rio__stages_free(st);
		return rc;
	}
	rio__epoch_stop(l);
	rio__epoch_elastic_end(l);
	/* the resumed epoch's route is chosen at its start (route.c): counting
	 * every shard may have ruled the placed path out, and buffer
	 * shuffling's shares and those with opts.cache have holes (elastic.c),
	 * which the pipeline reads */
	l->usual_pieces = l->ds.pieces;
	l->usual_npieces = l->ds.npieces;
	l->usual_records = l->ds.rank_records;
	l->ds.pieces = pieces;
	l->ds.runs = runs;
	l->ds.npieces = npieces;
	l->ds.rank_records = records;
	l->stages = *st;
	l->epoch = epoch;
	l->position = position;
	l->batches_out = (position + l->o.batch_size - 1) / l->o.batch_size;
	l->finished = 0;
	l->resume_skip = position;
	return 0;
}

RIO_API int rio_loader_state_restore(rio_loader *l, const void *buf, size_t size)
{
	uint64_t got[STATE_WORDS], want[STATE_WORDS];
	rio__stages st;
	int rc = state_parse(l, buf, size, got, &st);
	if (rc < 0)
		return rc;
	state_words(l, want, got[W_EPOCH], got[W_POSITION]);
	for (int k = 0; k < STATE_WORDS; k++) {
		int i = state_order[k];
		if (!word_matches(l, i, got, want)) {
			rio__stages_free(&st);
			return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "the saved loader state has another %s (%llu, here %llu)%s",
			                      state_names[i], (unsigned long long)got[i],
			                      (unsigned long long)want[i],
			                      i == W_WORLD ? ": restore every rank's state with "
			                                     "rio_loader_state_restore_all"
			                                   : "");
		}
	}
	if (st.n)
		return elastic_install(l, got[W_EPOCH], got[W_POSITION], &st);
	if (got[W_POSITION] > rio__usual_records(l))
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "the saved position %llu is past the epoch's %llu records",
		                      (unsigned long long)got[W_POSITION],
		                      (unsigned long long)rio__usual_records(l));
	rio__epoch_stop(l);
	rio__epoch_elastic_end(l);
	l->epoch = got[W_EPOCH];
	l->position = got[W_POSITION];
	l->batches_out = (got[W_POSITION] + l->o.batch_size - 1) / l->o.batch_size;
	l->finished = 0;
	l->resume_skip = got[W_POSITION];
	return 0;
}

static int same_stages(const rio__stages *a, const rio__stages *b)
{
	return a->n == b->n && a->npos == b->npos &&
	       (!a->n || (!memcmp(a->world, b->world, a->n * sizeof *a->world) &&
	                  !memcmp(a->pos, b->pos, a->npos * sizeof *a->pos)));
}

RIO_API int rio_loader_state_restore_all(rio_loader *l, const void *const *blobs,
                                         const size_t *sizes, size_t n)
{
	if (!blobs || !sizes || n == 0)
		return bad_state(l, "list is empty");
	uint64_t got[STATE_WORDS], want[STATE_WORDS];
	rio__stages st, other;
	int rc = state_parse(l, blobs[0], sizes[0], got, &st);
	if (rc < 0)
		return rc;
	uint64_t world = got[W_WORLD], epoch = got[W_EPOCH];
	if (world != n) {
		rio__stages_free(&st);
		return rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "%zu saved loader states for a world of %llu ranks", n,
		                      (unsigned long long)world);
	}
	if (world == (uint64_t)l->ds.world) { /* the same world: each rank its own */
		rio__stages_free(&st);
		return rio_loader_state_restore(l, blobs[l->ds.rank], sizes[l->ds.rank]);
	}
	/* the epoch's threads read the shards that counting them all may
	 * change (their places, the mappings): they stop first */
	rio__epoch_stop(l);
	if ((rc = rio__dataset_count_every_shard(&l->ds, &l->o, &l->err)) < 0) {
		rio__stages_free(&st);
		return rc;
	}
	uint64_t *pos = malloc(n * sizeof *pos);
	if (!pos) {
		rio__stages_free(&st);
		return -ENOMEM;
	}
	for (size_t r = 0; r < n && rc == 0; r++) {
		if (r > 0 && (rc = state_parse(l, blobs[r], sizes[r], got, &other)) < 0)
			break;
		/* what another world size may change: rank, world, the rank's
		 * share of the data, the batch size, the position */
		state_words(l, want, epoch, got[W_POSITION]);
		want[W_RANK] = r;
		want[W_WORLD] = world;
		want[W_IDENT] = rio__dataset_ident(&l->ds, (int)r, (int)world);
		want[W_RECORDS] = got[W_RECORDS];
		want[W_BATCH] = got[W_BATCH];
		for (int k = 0; k < STATE_WORDS && rc == 0; k++) {
			int i = state_order[k];
			if (!word_matches(l, i, got, want))
				rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
				                    "the saved loader state of rank %zu of %llu has another "
				                    "%s (%llu, here %llu)",
				                    r, (unsigned long long)world, state_names[i],
				                    (unsigned long long)got[i], (unsigned long long)want[i]);
		}
		if (rc == 0 && r > 0 && !same_stages(&st, &other))
			rc = rio__error_set(&l->err, RIO_ESTATE, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "the saved loader states of ranks 0 and %zu disagree on how "
			                    "the epoch was resumed before",
			                    r);
		if (r > 0)
			rio__stages_free(&other);
		pos[r] = got[W_POSITION];
	}
	int untouched = rc == 0 && st.n == 0;
	for (size_t r = 0; r < n && untouched; r++)
		untouched = pos[r] == 0;
	if (rc == 0 && !untouched)
		rc = rio__stages_push(&st, world, pos);
	free(pos);
	if (rc < 0) {
		rio__stages_free(&st);
		return rc;
	}
	if (!untouched)
		return elastic_install(l, epoch, 0, &st);
	/* saved at the start of an epoch: it runs as an ordinary one here */
	rio__epoch_stop(l);
	rio__epoch_elastic_end(l);
	l->epoch = epoch;
	l->position = l->batches_out = 0;
	l->finished = 0;
	l->resume_skip = 0;
	return 0;
}

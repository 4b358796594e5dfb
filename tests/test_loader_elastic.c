/*
 * test_loader_elastic.c — rio_loader_state_restore_all: an epoch stopped at
 * one world size and resumed at another hands out every record of the
 * epoch exactly once, counting what the old ranks delivered before the
 * stop (records in their shuffle buffers and read-ahead included), in
 * every shuffle mode, with files and records sharding, uncompressed and
 * gzip shards; a resumed epoch saved and resumed again too; the same
 * world size stays bit-exact; the next epoch is an ordinary one; and
 * states that do not belong together are refused with a message naming
 * the rank and the field. With opts.cache (compressed shards served from
 * memory), every stage and the epoch after are the batches they are
 * without it, whichever stages run cached.
 */
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* five shards of uneven sizes: 1500 records */
static const size_t counts[5] = {300, 257, 411, 199, 333};
#define EPOCH 1 /* the epoch interrupted: not 0, so the seeds see it */

static const char *mode_name(rio_shuffle s)
{
	return s == RIO_SHUFFLE_NONE ? "none" : s == RIO_SHUFFLE_BUFFER ? "buffer" : "global";
}

/* opts.cache for every loader the helpers open (test_cache sets it) */
static uint64_t cache_bytes;

static void opts_for(rio_loader_opts *o, rio_shuffle sh, rio_sharding sd, int rank, int world,
                     size_t batch)
{
	lu_base_opts(o);
	o->cache = cache_bytes;
	o->shuffle = sh;
	o->sharding = sd;
	o->rank = rank;
	o->world = world;
	o->batch_size = batch;
}

/* opts.map of the ranks that stop (map_run) and of those that resume */
static int map_run, map_resume;

/* The saved states of one world. */
typedef struct states {
	int n;
	void *blob[8];
	size_t size[8];
} states;

static void states_free(states *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->blob[i]);
	s->n = 0;
}

static void save(rio_loader *l, states *s)
{
	int size = rio_loader_state_save(l, NULL, 0);
	CU_ASSERT_FATAL(size > 0);
	s->blob[s->n] = malloc((size_t)size);
	CU_ASSERT_FATAL(s->blob[s->n] != NULL);
	CU_ASSERT_EQUAL(rio_loader_state_save(l, s->blob[s->n], (size_t)size), size);
	s->size[s->n++] = (size_t)size;
}

/* Ranks 0..world-1 each take take[r] batches of epoch EPOCH (fewer when
 * the epoch has fewer) into seq[r] and save their states. */
static void run_world(const lu_dataset *d, rio_shuffle sh, rio_sharding sd, int world,
                      size_t batch, const size_t *take, lu_seq *seq, states *out)
{
	for (int r = 0; r < world; r++) {
		rio_loader_opts o;
		opts_for(&o, sh, sd, r, world, batch);
		o.map = map_run;
		rio_loader *l = lu_open(d, &o);
		CU_ASSERT_FATAL(l != NULL);
		CU_ASSERT_EQUAL(rio_loader_set_epoch(l, EPOCH), 0);
		size_t k = take[r] < rio_loader_batches(l) ? take[r] : rio_loader_batches(l);
		CU_ASSERT_EQUAL(lu_take(l, &seq[r], d, k), 0);
		save(l, out);
		rio_loader_close(l);
	}
}

/* Ranks 0..world-1 resume from `in` and take take[r] batches of the rest
 * of the epoch (all of it when take is NULL) into seq[r], saving their
 * states into out (may be NULL). Returns the records they had left. */
static uint64_t resume_world(const lu_dataset *d, rio_shuffle sh, rio_sharding sd, int world,
                             size_t batch, const states *in, const size_t *take, lu_seq *seq,
                             states *out, const char *what)
{
	uint64_t left = 0;
	for (int r = 0; r < world; r++) {
		rio_loader_opts o;
		opts_for(&o, sh, sd, r, world, batch);
		o.map = map_resume;
		rio_loader *l = lu_open(d, &o);
		CU_ASSERT_FATAL(l != NULL);
		/* odd ranks restore while the threads already read (as
		 * recordio-train, which starts epoch 0 at once) */
		if (r % 2)
			CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 0), 0);
		int rc = rio_loader_state_restore_all(l, (const void *const *)in->blob, in->size,
		                                      (size_t)in->n);
		CHECK(rc == 0, "%s: rank %d of %d: restore_all = %d (%s)", what, r, world, rc,
		      rio_loader_error(l)->message);
		CHECK(rio_loader_epoch(l) == EPOCH, "%s: resumed at epoch %llu", what,
		      (unsigned long long)rio_loader_epoch(l));
		left += rio_loader_remaining(l);
		if (take) {
			CU_ASSERT_EQUAL(lu_take(l, &seq[r], d, take[r]), 0);
		} else {
			CU_ASSERT_EQUAL(lu_drain_epoch(l, &seq[r], d), 0);
			CHECK(rio_loader_remaining(l) == rio_loader_records(l),
			      "%s: after the resumed epoch, %llu records left, want an ordinary "
			      "epoch's %llu",
			      what, (unsigned long long)rio_loader_remaining(l),
			      (unsigned long long)rio_loader_records(l));
		}
		for (size_t b = 0; b < seq[r].nb; b++)
			CHECK(seq[r].b[b].epoch == EPOCH, "%s: rank %d batch %zu of epoch %llu", what, r,
			      b, (unsigned long long)seq[r].b[b].epoch);
		if (out)
			save(l, out);
		rio_loader_close(l);
	}
	return left;
}

static uint64_t records_of(const lu_seq *s, int n)
{
	uint64_t t = 0;
	for (int i = 0; i < n; i++)
		t += s[i].n;
	return t;
}

/* W ranks stop at uneven positions, W2 ranks finish the epoch: every
 * record exactly once. `k`: batches the first old rank took. */
static void one_case(const lu_dataset *d, rio_shuffle sh, rio_sharding sd, int w, int w2,
                     size_t k)
{
	char what[160];
	snprintf(what, sizeof what, "%s, %s sharding, %s, %d -> %d ranks after %zu batches%s",
	         mode_name(sh), sd == RIO_SHARD_FILES ? "files" : "records",
	         rio_compression_name(d->sp.comp), w, w2, k,
	         map_run || map_resume ? (map_run ? (map_resume ? ", map" : ", map -> reads")
	                                          : ", reads -> map")
	                               : "");
	lu_seq seq[16];
	for (int i = 0; i < 16; i++)
		lu_seq_init(&seq[i]);
	size_t take[8];
	for (int r = 0; r < w; r++)
		take[r] = k + (size_t)r; /* the ranks need not agree */
	states st = {0};
	run_world(d, sh, sd, w, 16, take, seq, &st);
	uint64_t before = records_of(seq, w);
	/* another batch size too: positions count records */
	uint64_t left = resume_world(d, sh, sd, w2, 12, &st, NULL, seq + w, NULL, what);
	CHECK(before + left == d->total, "%s: %llu delivered + %llu left, the epoch has %llu", what,
	      (unsigned long long)before, (unsigned long long)left, (unsigned long long)d->total);
	size_t bad = lu_not_once(d, seq, (size_t)(w + w2));
	CHECK(bad == 0, "%s: %zu records not delivered exactly once", what, bad);
	for (int i = 0; i < w + w2; i++)
		CU_ASSERT_EQUAL(seq[i].bad_payload, 0);
	/* the shares differ by at most one record */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int r = w; r < w + w2; r++) {
		lo = seq[r].n < lo ? seq[r].n : lo;
		hi = seq[r].n > hi ? seq[r].n : hi;
	}
	CHECK(hi - lo <= 1, "%s: the new ranks' shares are %llu to %llu records", what,
	      (unsigned long long)lo, (unsigned long long)hi);
	states_free(&st);
	for (int i = 0; i < 16; i++)
		lu_seq_free(&seq[i]);
}

static void make(lu_dataset *d, const char *name, rio_compression c)
{
	lu_dataset_make(d, &(lu_spec){.name = name,
	                              .tag = 13,
	                              .counts = counts,
	                              .nshards = 5,
	                              .comp = c,
	                              .idx_mask = 0x1f});
}

static void matrix(rio_compression c)
{
	lu_dataset d;
	make(&d, c == RIO_COMPRESSION_NONE ? "elastic" : "elastic-gz", c);
	lu_watchdog("elastic matrix", 600);
	static const int worlds[][2] = {{2, 1}, {2, 3}, {2, 4}, {3, 2}};
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_GLOBAL; sh++) {
		if (sh == RIO_SHUFFLE_GLOBAL && c != RIO_COMPRESSION_NONE)
			continue; /* global shuffling needs uncompressed shards */
		for (int sd = RIO_SHARD_FILES; sd <= RIO_SHARD_RECORDS; sd++)
			for (size_t wi = 0; wi < sizeof worlds / sizeof worlds[0]; wi++)
				/* early (records in the shuffle buffers), late (the
				 * buffers draining), at the very end */
				for (size_t ki = 0; ki < 3; ki++)
					one_case(&d, (rio_shuffle)sh, (rio_sharding)sd, worlds[wi][0],
					         worlds[wi][1], (size_t[]){3, 28, 1000}[ki]);
	}
	lu_watchdog(NULL, 0);
	lu_dataset_free(&d);
}

static void test_matrix_plain(void)
{
	matrix(RIO_COMPRESSION_NONE);
}

/* opts.map (buffer shuffling then takes the placed path): every record
 * once, with map on both sides of the resume and on either one alone (map
 * is not part of the saved state: the order a stage ran in must not
 * depend on it) */
static void test_matrix_map(void)
{
	lu_dataset d;
	make(&d, "elastic-map", RIO_COMPRESSION_NONE);
	lu_watchdog("elastic map", 600);
	static const int worlds[][2] = {{2, 3}, {3, 2}};
	static const int maps[][2] = {{1, 1}, {0, 1}, {1, 0}};
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_GLOBAL; sh++)
		for (size_t mi = 0; mi < 3; mi++) {
			if (sh != RIO_SHUFFLE_BUFFER && mi > 0)
				continue;
			map_run = maps[mi][0];
			map_resume = maps[mi][1];
			for (int sd = RIO_SHARD_FILES; sd <= RIO_SHARD_RECORDS; sd++)
				for (size_t wi = 0; wi < 2; wi++)
					for (size_t ki = 0; ki < 2; ki++)
						one_case(&d, (rio_shuffle)sh, (rio_sharding)sd, worlds[wi][0],
						         worlds[wi][1], (size_t[]){3, 28}[ki]);
		}
	map_run = map_resume = 0;
	lu_watchdog(NULL, 0);
	lu_dataset_free(&d);
}

/* 2 -> 3 -> 2 ranks with opts.map on at some stages and off at others:
 * the 3-rank stage's shares are replayed by the last one, whatever map
 * each had; every record once */
static void test_twice_map(void)
{
	lu_dataset d;
	make(&d, "elastic-twice-map", RIO_COMPRESSION_NONE);
	lu_watchdog("elastic twice map", 600);
	static const int maps[][3] = {{1, 1, 1}, {0, 0, 1}, {1, 1, 0}, {0, 1, 0}, {1, 0, 1}};
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_GLOBAL; sh++)
		for (size_t mi = 0; mi < sizeof maps / sizeof maps[0]; mi++) {
			if (sh != RIO_SHUFFLE_BUFFER && mi > 0)
				continue;
			char what[96];
			snprintf(what, sizeof what, "%s, 2 -> 3 -> 2 ranks, map %d, %d, %d",
			         mode_name((rio_shuffle)sh), maps[mi][0], maps[mi][1], maps[mi][2]);
			lu_seq seq[7];
			for (int i = 0; i < 7; i++)
				lu_seq_init(&seq[i]);
			static const size_t take0[2] = {9, 9}, take1[3] = {5, 6, 7};
			states s0 = {0}, s1 = {0};
			map_run = maps[mi][0];
			run_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 2, 16, take0, seq, &s0);
			map_resume = maps[mi][1];
			resume_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 3, 16, &s0, take1, seq + 2,
			             &s1, what);
			map_resume = maps[mi][2];
			resume_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 2, 16, &s1, NULL, seq + 5,
			             NULL, what);
			size_t bad = lu_not_once(&d, seq, 7);
			CHECK(bad == 0, "%s: %zu records not delivered exactly once", what, bad);
			states_free(&s0);
			states_free(&s1);
			for (int i = 0; i < 7; i++)
				lu_seq_free(&seq[i]);
		}
	map_run = map_resume = 0;
	lu_watchdog(NULL, 0);
	lu_dataset_free(&d);
}

static void test_matrix_gzip(void)
{
	matrix(RIO_COMPRESSION_GZIP);
}

/* 2 ranks stop, 3 go on and stop again, 2 finish: a resumed epoch saved
 * and resumed again; and the epoch after is the one a fresh loader at the
 * new world size gives. */
static void test_twice(void)
{
	lu_dataset d;
	make(&d, "elastic-twice", RIO_COMPRESSION_NONE);
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_GLOBAL; sh++) {
		char what[64];
		snprintf(what, sizeof what, "%s, 2 -> 3 -> 2 ranks", mode_name((rio_shuffle)sh));
		lu_seq seq[7];
		for (int i = 0; i < 7; i++)
			lu_seq_init(&seq[i]);
		static const size_t take0[2] = {9, 9}, take1[3] = {5, 6, 7};
		states s0 = {0}, s1 = {0};
		run_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 2, 16, take0, seq, &s0);
		resume_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 3, 16, &s0, take1, seq + 2, &s1,
		             what);
		/* the 3-rank states carry the history: each is bigger than an
		 * ordinary one */
		CU_ASSERT(s1.size[0] > s0.size[0]);
		resume_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 2, 16, &s1, NULL, seq + 5, NULL,
		             what);
		size_t bad = lu_not_once(&d, seq, 7);
		CHECK(bad == 0, "%s: %zu records not delivered exactly once", what, bad);

		/* the same world size from a resumed epoch's states: each rank
		 * goes on exactly where it was (here: rank 1 of the 3) */
		rio_loader_opts o;
		opts_for(&o, (rio_shuffle)sh, RIO_SHARD_RECORDS, 1, 3, 16);
		lu_seq a, b;
		lu_seq_init(&a);
		lu_seq_init(&b);
		rio_loader *l = lu_open(&d, &o);
		CU_ASSERT_FATAL(l != NULL);
		CU_ASSERT_EQUAL(rio_loader_state_restore_all(l, (const void *const *)s0.blob, s0.size,
		                                             2),
		                0);
		CU_ASSERT_EQUAL(lu_drain_through(l, &a, &d, EPOCH + 1), 0);
		rio_loader_close(l);
		l = lu_open(&d, &o);
		CU_ASSERT_FATAL(l != NULL);
		CU_ASSERT_EQUAL(rio_loader_state_restore(l, s1.blob[1], s1.size[1]), 0);
		CU_ASSERT_EQUAL(lu_drain_through(l, &b, &d, EPOCH + 1), 0);
		rio_loader_close(l);
		char diff[300];
		CHECK(lu_seq_equal(&a, take1[1], &b, 0),
		      "%s: resumed at 3 ranks from a 3-rank state, rank 1 differs from the run "
		      "that wrote it: %s",
		      what, lu_seq_diff(&a, take1[1], &b, 0, diff, sizeof diff));
		/* the epoch after is ordinary: a fresh loader's */
		lu_seq c;
		lu_seq_init(&c);
		l = lu_open(&d, &o);
		CU_ASSERT_FATAL(l != NULL);
		CU_ASSERT_EQUAL(rio_loader_set_epoch(l, EPOCH + 1), 0);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &c, &d), 0);
		rio_loader_close(l);
		size_t next = lu_epoch_start(&a, EPOCH + 1);
		CHECK(next < a.nb && lu_seq_equal(&a, next, &c, 0),
		      "%s: the epoch after the resumed one differs from a fresh loader's: %s", what,
		      lu_seq_diff(&a, next, &c, 0, diff, sizeof diff));
		lu_seq_free(&a);
		lu_seq_free(&b);
		lu_seq_free(&c);
		states_free(&s0);
		states_free(&s1);
		for (int i = 0; i < 7; i++)
			lu_seq_free(&seq[i]);
	}
	lu_dataset_free(&d);
}

/* opts.cache: 2 ranks stop, 3 go on and stop again, 2 finish the epoch
 * and take the next: the same batches, rank by rank, as without the
 * cache, whether every stage runs cached or only some do (the states
 * do not say). The epoch resumed at another world size reads the files;
 * the one after is served from the cache again (records sharding). */
static void test_cache(void)
{
	lu_dataset d;
	make(&d, "elastic-cache", RIO_COMPRESSION_LZ4);
	lu_watchdog("elastic cache", 300);
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_BUFFER; sh++)
		for (int sd = RIO_SHARD_FILES; sd <= RIO_SHARD_RECORDS; sd++) {
			lu_seq ref[7];
			for (int v = 0; v < 3; v++) {
				/* v 0: no cache; 1: the first and last stages cached;
				 * 2: all */
				char what[96];
				snprintf(what, sizeof what, "cache, %s, %s sharding, variant %d",
				         mode_name((rio_shuffle)sh), sd == RIO_SHARD_FILES ? "files" : "records",
				         v);
				lu_seq seq[7];
				for (int i = 0; i < 7; i++)
					lu_seq_init(&seq[i]);
				static const size_t take0[2] = {9, 9}, take1[3] = {5, 6, 7};
				states s0 = {0}, s1 = {0};
				cache_bytes = v ? 1 << 24 : 0;
				run_world(&d, (rio_shuffle)sh, (rio_sharding)sd, 2, 16, take0, seq, &s0);
				cache_bytes = v == 2 ? 1 << 24 : 0;
				resume_world(&d, (rio_shuffle)sh, (rio_sharding)sd, 3, 16, &s0, take1,
				             seq + 2, &s1, what);
				cache_bytes = v ? 1 << 24 : 0;
				for (int r = 0; r < 2; r++) { /* the rest, and the next epoch */
					rio_loader_opts o;
					opts_for(&o, (rio_shuffle)sh, (rio_sharding)sd, r, 2, 16);
					rio_loader *l = lu_open(&d, &o);
					CU_ASSERT_FATAL(l != NULL);
					int rc = rio_loader_state_restore_all(
					    l, (const void *const *)s1.blob, s1.size, (size_t)s1.n);
					CHECK(rc == 0, "%s: restore_all %d (%s)", what, rc,
					      rio_loader_error(l)->message);
					CU_ASSERT_EQUAL(lu_drain_through(l, &seq[5 + r], &d, EPOCH + 1), 0);
					rio_loader_stats st;
					rio_loader_stats_get(l, &st);
					CHECK(v == 0 || sd == RIO_SHARD_FILES || st.cache_bytes > 0,
					      "%s: rank %d: no cache after the resumed epoch", what, r);
					rio_loader_close(l);
				}
				size_t e1[2];
				for (int r = 0; r < 2; r++) /* the resumed epoch's records */
					e1[r] = lu_epoch_start(&seq[5 + r], EPOCH + 1);
				lu_seq once[7];
				for (int i = 0; i < 5; i++)
					once[i] = seq[i];
				for (int r = 0; r < 2; r++)
					once[5 + r] = lu_seq_recview(&seq[5 + r], 0,
					                             e1[r] < seq[5 + r].nb
					                                 ? seq[5 + r].b[e1[r]].first
					                                 : seq[5 + r].n);
				size_t bad = lu_not_once(&d, once, 7);
				CHECK(bad == 0, "%s: %zu records not delivered exactly once", what, bad);
				for (int i = 0; i < 7; i++) {
					CU_ASSERT_EQUAL(seq[i].bad_payload, 0);
					if (v == 0)
						continue;
					char diff[300];
					CHECK(lu_seq_equal(&ref[i], 0, &seq[i], 0),
					      "%s: stage sequence %d differs from the uncached run's: %s", what,
					      i, lu_seq_diff(&ref[i], 0, &seq[i], 0, diff, sizeof diff));
					lu_seq_free(&seq[i]);
				}
				if (v == 0)
					for (int i = 0; i < 7; i++)
						ref[i] = seq[i];
				states_free(&s0);
				states_free(&s1);
			}
			for (int i = 0; i < 7; i++)
				lu_seq_free(&ref[i]);
		}
	cache_bytes = 0;
	lu_watchdog(NULL, 0);
	lu_dataset_free(&d);
}

/* The same world size through restore_all: bit-exact, as restore. */
static void test_same_world(void)
{
	lu_dataset d;
	make(&d, "elastic-same", RIO_COMPRESSION_NONE);
	for (int sh = RIO_SHUFFLE_NONE; sh <= RIO_SHUFFLE_GLOBAL; sh++) {
		lu_seq ref[2], before[2];
		states st = {0};
		static const size_t take[2] = {7, 7};
		for (int r = 0; r < 2; r++) {
			lu_seq_init(&ref[r]);
			lu_seq_init(&before[r]);
			rio_loader_opts o;
			opts_for(&o, (rio_shuffle)sh, RIO_SHARD_RECORDS, r, 2, 16);
			rio_loader *l = lu_open(&d, &o);
			CU_ASSERT_FATAL(l != NULL);
			CU_ASSERT_EQUAL(rio_loader_set_epoch(l, EPOCH), 0);
			CU_ASSERT_EQUAL(lu_drain_epoch(l, &ref[r], &d), 0);
			rio_loader_close(l);
		}
		run_world(&d, (rio_shuffle)sh, RIO_SHARD_RECORDS, 2, 16, take, before, &st);
		/* an ordinary epoch's state is format 1, as before */
		CU_ASSERT_EQUAL(st.size[0], 16 * 8 + 4);
		for (int r = 0; r < 2; r++) {
			lu_seq after;
			lu_seq_init(&after);
			rio_loader_opts o;
			opts_for(&o, (rio_shuffle)sh, RIO_SHARD_RECORDS, r, 2, 16);
			rio_loader *l = lu_open(&d, &o);
			CU_ASSERT_FATAL(l != NULL);
			CU_ASSERT_EQUAL(rio_loader_state_restore_all(l, (const void *const *)st.blob,
			                                             st.size, 2),
			                0);
			CU_ASSERT_EQUAL(lu_drain_epoch(l, &after, &d), 0);
			rio_loader_close(l);
			char diff[300];
			CHECK(lu_seq_equal(&ref[r], take[r], &after, 0),
			      "%s rank %d: the same world through restore_all differs from an "
			      "uninterrupted run: %s",
			      mode_name((rio_shuffle)sh), r,
			      lu_seq_diff(&ref[r], take[r], &after, 0, diff, sizeof diff));
			lu_seq_free(&after);
			lu_seq_free(&ref[r]);
			lu_seq_free(&before[r]);
		}
		states_free(&st);
	}
	lu_dataset_free(&d);
}

/* States that do not belong together are refused, naming what differs. */
static void test_refused(void)
{
	lu_dataset d;
	make(&d, "elastic-bad", RIO_COMPRESSION_NONE);
	lu_seq seq[3];
	for (int i = 0; i < 3; i++)
		lu_seq_init(&seq[i]);
	static const size_t take[2] = {4, 4};
	states st = {0}, other = {0};
	run_world(&d, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, 2, 16, take, seq, &st);
	rio_loader_opts o;
	opts_for(&o, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, 0, 3, 16);
	rio_loader *l = lu_open(&d, &o);
	CU_ASSERT_FATAL(l != NULL);
	const void *blobs[2] = {st.blob[1], st.blob[0]};
	size_t sizes[2] = {st.size[1], st.size[0]};
	struct {
		const void *const *b;
		const size_t *s;
		size_t n;
		const char *want;
	} cases[] = {
	    {blobs, sizes, 2, "rank 0 of 2 has another rank"},
	    {(const void *const *)st.blob, st.size, 1, "1 saved loader states for a world of 2"},
	    {NULL, NULL, 0, "list is empty"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int rc = rio_loader_state_restore_all(l, cases[c].b, cases[c].s, cases[c].n);
		CHECK(rc == RIO_ESTATE && strstr(rio_loader_error(l)->message, cases[c].want),
		      "case %zu: rc %d, message \"%s\", want \"%s\"", c, rc,
		      rio_loader_error(l)->message, cases[c].want);
	}
	/* another seed for rank 1 */
	opts_for(&o, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, 1, 2, 16);
	o.seed = 99;
	rio_loader *x = lu_open(&d, &o);
	CU_ASSERT_FATAL(x != NULL);
	save(x, &other);
	rio_loader_close(x);
	blobs[0] = st.blob[0];
	sizes[0] = st.size[0];
	blobs[1] = other.blob[0];
	sizes[1] = other.size[0];
	int rc = rio_loader_state_restore_all(l, blobs, sizes, 2);
	CHECK(rc == RIO_ESTATE && strstr(rio_loader_error(l)->message, "rank 1 of 2 has another seed"),
	      "another seed: rc %d, message \"%s\"", rc, rio_loader_error(l)->message);
	/* a single state of another world names the call to use */
	rc = rio_loader_state_restore(l, st.blob[0], st.size[0]);
	CHECK(rc == RIO_ESTATE && strstr(rio_loader_error(l)->message, "restore_all"),
	      "another world: rc %d, message \"%s\"", rc, rio_loader_error(l)->message);
	/* a damaged history */
	uint8_t big[16 * 8 + 8 + 8 + 8 + 4];
	memcpy(big, st.blob[0], 16 * 8);
	big[0] = 'R', big[1] = 'I', big[2] = 'O', big[3] = 'L', big[4] = '2';
	memset(big + 16 * 8, 0xff, sizeof big - 16 * 8 - 4);
	uint32_t crc = rio_crc32c(0, big, sizeof big - 4);
	for (int i = 0; i < 4; i++)
		big[sizeof big - 4 + i] = (uint8_t)(crc >> (8 * i));
	rc = rio_loader_state_restore(l, big, sizeof big);
	CHECK(rc == RIO_ESTATE && strstr(rio_loader_error(l)->message, "damaged list of stages"),
	      "damaged stages: rc %d, message \"%s\"", rc, rio_loader_error(l)->message);
	rio_loader_close(l);
	states_free(&st);
	states_free(&other);
	for (int i = 0; i < 3; i++)
		lu_seq_free(&seq[i]);
	lu_dataset_free(&d);
}

static const tu_test tests[] = {
    {"W -> W' ranks, every shuffle and sharding: each record once (plain)", test_matrix_plain},
    {"W -> W' ranks, none and buffer shuffle: each record once (gzip)", test_matrix_gzip},
    {"W -> W' ranks with opts.map, and map on one side only", test_matrix_map},
    {"opts.cache: 2 -> 3 -> 2 ranks give the uncached batches", test_cache},
    {"2 -> 3 -> 2 ranks; then an ordinary epoch", test_twice},
    {"2 -> 3 -> 2 ranks, opts.map at some stages only", test_twice_map},
    {"the same world through restore_all is bit-exact", test_same_world},
    {"states that do not belong together are refused", test_refused},
    {NULL, NULL},
};

static const tu_suite suites[] = {{"loader elastic resume", tests}, {NULL, NULL}};

int main(int argc, char **argv)
{
	(void)argc;
	return tu_run(argv[0], suites);
}

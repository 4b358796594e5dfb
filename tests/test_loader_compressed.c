/*
 * test_loader_compressed.c — the loader's path for compressed shards (gzip,
 * zlib, lz4: worker.c's run_compressed), held to loader.h.
 *
 * A compressed piece is one decompressing stream that the piece's tasks pass
 * along in order: each task decompresses straight into its chunk, parses
 * the frames in place and carries the bytes it read past its last record to
 * the piece's next task. Damage inside the stream stops the piece (an error
 * under FAIL, counted once under SKIP), as the reader does. Checked here,
 * for each codec:
 *   - many tasks per shard and the carry between them: small chunk_bytes and
 *     read_size, records of 0 and 1 bytes, a few KiB and 200 KiB (more than
 *     a chunk), shards with and without .idx sidecars: every record once with
 *     its bytes, in the very sequence the uncompressed copy of the same data
 *     gives with the same options (the plan depends only on the counts), for
 *     NONE and BUFFER with 1 to 4 pieces interleaved;
 *   - RECORDS sharding over 2..5 ranks (pieces starting mid-shard: the
 *     stream skips the shard's head): every record once over the ranks;
 *   - resume from a saved state (inside a shard, across shard boundaries,
 *     across the epoch's end) and rio_loader_set_epoch mid-epoch;
 *   - 1, 2 and 4 workers give the same sequence;
 *   - Examples decoded into columns, value by value, and one that does not
 *     match them;
 *   - damage: a file cut in the middle, a flipped byte in the compressed
 *     bytes, a record whose data CRC is wrong inside a valid stream: the
 *     error after the batches before it (naming the shard) under FAIL, the
 *     records before the damage and every other piece under SKIP, counted
 *     once per piece that meets it, and the same again next epoch; with
 *     and without sidecars; records over max_record_size; never a hang (a
 *     watchdog);
 *   - a stream that ends cleanly before the records its .idx lists, and one
 *     cut inside its trailer (every record whole, the codec's end and
 *     checksum missing): errors under FAIL, as the uncompressed path's
 *     checks of a shard's end are;
 *   - a rank whose piece starts deep inside a shard keeps bounded memory
 *     (measured in a child process, against the rank reading from the
 *     shard's start).
 *
 * The expected records of a damaged stream come from a model: the damaged
 * file decoded with zlib or liblz4 directly, its frames counted up to the
 * first that is not whole and valid.
 *
 * `test_loader_compressed [WORD]` runs only the tests whose name holds WORD.
 */
#include "config.h"
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <lz4frame.h>
#include <zlib.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>


static const rio_compression codecs[3] = {RIO_COMPRESSION_GZIP, RIO_COMPRESSION_ZLIB,
                                          RIO_COMPRESSION_LZ4};

static const char *cname(rio_compression c)
{
	return rio_compression_name(c);
}

static const char *shname(rio_shuffle s)
{
	return s == RIO_SHUFFLE_NONE ? "NONE" : s == RIO_SHUFFLE_BUFFER ? "BUFFER" : "GLOBAL";
}

/* ---- records of very different sizes ---------------------------------------- */

/* A "varied" dataset: record (shard, index) has vd_size() bytes: 0, 1, a
 * few hundred, 1-7 KiB, and every 97th about 200 KiB (more than any
 * chunk_bytes used here); its bytes are vd_payload(). Half the records are
 * compressible text (so the decoder's output comes in bursts), half
 * random. The first 12 bytes (when there are 12) say shard, index, tag. */

static uint64_t vmix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t x = (a + 0x51ED27FC3B1A9D4Dull) * 0x9E3779B97F4A7C15ull;
	x ^= (b + 0x2545F4914F6CDD1Dull) * 0xBF58476D1CE4E5B9ull;
	x ^= (c + 7) * 0x94D049BB133111EBull;
	x ^= x >> 29;
	x *= 0xD6E8FEB86659FD93ull;
	x ^= x >> 32;
	return x;
}

#define EMPTY_TAG 100

static size_t vd_size(uint32_t tag, uint32_t shard, uint64_t index)
{
	uint64_t h = vmix(tag, shard, index);
	if (tag == EMPTY_TAG) /* test_empty_records: 0-byte records lead batches of 3 */
		return index < 6 || index % 3 == 0 ? 0 : 1 + (size_t)(h % 40);
	if (index % 97 == 41)
		return 200 * 1024 + (size_t)(h % 3000);
	switch (h % 16) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
		return 1;
	case 4:
	case 5:
	case 6:
		return 1024 + (size_t)(h >> 8) % 6144;
	default:
		return 2 + (size_t)(h >> 8) % 300;
	}
}

#define VD_MAX (210 * 1024)

static void vd_payload(uint32_t tag, uint32_t shard, uint64_t index, uint8_t *buf, size_t n)
{
	uint64_t h = vmix(tag, shard, index);
	tu_fill_random(buf, n, h);
	if ((h >> 20) & 1) { /* text with random stretches */
		static const char letters[] = "abcdeabc";
		for (size_t i = 0; i < n; i++)
			if ((i / 48) % 5 != 0)
				buf[i] = (uint8_t)letters[(i / 5 + (h >> 24)) % 8];
	}
	uint8_t id[12];
	for (int i = 0; i < 4; i++) {
		id[i] = (uint8_t)(shard >> (8 * i));
		id[4 + i] = (uint8_t)(index >> (8 * i));
		id[8 + i] = (uint8_t)(tag >> (8 * i));
	}
	memcpy(buf, id, n < 12 ? n : 12);
}

/* Wrong varied payloads in b (the dataset's lu_payload_check). */
static size_t vd_check(const rio_batch *b, const lu_dataset *d)
{
	static uint8_t *want;
	if (!want)
		want = malloc(VD_MAX);
	CU_ASSERT_FATAL(want != NULL);
	size_t bad = 0;
	for (size_t i = 0; i < b->count; i++) {
		const rio_batch_record *r = &b->records[i];
		size_t n = vd_size(d->sp.tag, r->shard, r->index);
		vd_payload(d->sp.tag, r->shard, r->index, want, n);
		if (r->size != n || (n && (!r->data || memcmp(r->data, want, n))))
			bad++;
	}
	return bad;
}

/* Writes a varied dataset: the fields of lu_dataset are filled as
 * lu_dataset_make does, and its payloads are checked by vd_check. */
static void vd_make(lu_dataset *d, const char *name, uint32_t tag, const size_t *counts,
                    size_t nshards, rio_compression comp, unsigned idx_mask)
{
	memset(d, 0, sizeof *d);
	d->sp = (lu_spec){.name = name,
	                  .tag = tag,
	                  .counts = counts,
	                  .nshards = nshards,
	                  .comp = comp,
	                  .idx_mask = idx_mask};
	d->check = vd_check;
	CU_ASSERT_FATAL(nshards >= 1 && nshards <= LU_MAXSHARDS);
	snprintf(d->dir, sizeof d->dir, "%s", tu_path(name));
	CU_ASSERT_EQUAL_FATAL(mkdir(d->dir, 0755), 0);
	snprintf(d->prefix, sizeof d->prefix, "%s/data", d->dir);
	d->nshards = nshards;
	uint8_t *buf = malloc(VD_MAX);
	CU_ASSERT_FATAL(buf != NULL);
	for (size_t s = 0; s < nshards; s++) {
		d->count[s] = counts[s];
		d->base[s] = d->total;
		d->total += counts[s];
		d->off[s] = calloc(counts[s] + 1, sizeof *d->off[s]);
		CU_ASSERT_FATAL(d->off[s] != NULL);
		CU_ASSERT_FATAL(rio_shard_name_format(d->paths[s], sizeof d->paths[s], d->prefix,
		                                      (uint32_t)s, (uint32_t)nshards, comp) > 0);
		rio_writer_opts wo;
		rio_writer_opts_init(&wo);
		wo.compression = comp;
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, d->paths[s], &wo), 0);
		rio_index idx;
		memset(&idx, 0, sizeof idx);
		for (uint64_t i = 0; i < counts[s]; i++) {
			size_t n = vd_size(tag, (uint32_t)s, i);
			vd_payload(tag, (uint32_t)s, i, buf, n);
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, buf, n, &d->off[s][i]), 0);
			CU_ASSERT_EQUAL_FATAL(rio_index_append(&idx, d->off[s][i], n + 16), 0);
		}
		d->off[s][counts[s]] = rio_writer_bytes(w);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		if (idx_mask & (1u << s)) {
			char *ip = rio_index_path(d->paths[s]);
			CU_ASSERT_FATAL(ip != NULL);
			CU_ASSERT_EQUAL_FATAL(rio_index_write(ip, &idx, NULL), 0);
			free(ip);
		}
		rio_index_free(&idx);
	}
	d->base[nshards] = d->total;
	free(buf);
}

static rio_loader *open_on(const lu_dataset *t, const rio_loader_opts *o, const char *what)
{
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, t->prefix, o);
	CHECK(rc == 0, "%s: rio_loader_open(%s) = %d (%s): %s", what, t->prefix, rc,
	      rio_strerror(rc), l ? rio_loader_error(l)->message : "(no loader)");
	if (rc < 0) {
		rio_loader_close(l);
		return NULL;
	}
	return l;
}

/* Opens, takes `epochs` epochs into s (each must end with 0), closes. */
static int run(const lu_dataset *t, const rio_loader_opts *o, int epochs, lu_seq *s, const char *what)
{
	rio_loader *l = open_on(t, o, what);
	if (!l)
		return -1;
	int bad = 0;
	for (int e = 0; e < epochs; e++) {
		int rc = lu_drain_epoch(l, s, t);
		CHECK(rc == 0, "%s: epoch %d ended with %d (%s): %s", what, e, rc, rio_strerror(rc),
		      rio_loader_error(l)->message);
		if (rc)
			bad = -1;
	}
	rio_loader_close(l);
	return bad;
}

/* The records of epoch e of s (a view). */
static lu_seq epoch_recs(const lu_seq *s, uint64_t e)
{
	size_t a = lu_epoch_start(s, e), b = lu_epoch_start(s, e + 1);
	size_t ra = a < s->nb ? s->b[a].first : s->n, rb = b < s->nb ? s->b[b].first : s->n;
	return lu_seq_recview(s, ra, rb - ra);
}

/* No record of d twice in s, none outside d. */
static int distinct(const lu_dataset *d, const lu_seq *s)
{
	unsigned *hits = calloc(d->total + 1, sizeof *hits);
	CU_ASSERT_FATAL(hits != NULL);
	int ok = lu_count_hits(d, s, hits) == 0;
	for (uint64_t i = 0; i < d->total; i++)
		ok &= hits[i] <= 1;
	free(hits);
	return ok;
}

static int same_record_order(const lu_seq *a, const lu_seq *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->rec[i].shard != b->rec[i].shard || a->rec[i].index != b->rec[i].index)
			return 0;
	return 1;
}

/* ---- the datasets (written once, on first use) ------------------------------ */

/* Varied: shards of 400, 0, 1, 260 and 131 records (792 = 7 * 113 + 1). */
static const size_t vd_counts[5] = {400, 0, 1, 260, 131};
/* Small raw records (lu_raw_payload): bigger tasks, many records each. */
static const size_t sm_counts[3] = {1000, 7, 700};

enum { V_PLAIN, V_IDX, V_NOIDX, V_MIXED, S_PLAIN, S_COMP, NKINDS };
static lu_dataset sets[NKINDS][3];
static int made[NKINDS][3];

/* kind, and codec index c (0..2; ignored for the plain ones). */
static const lu_dataset *ds(int kind, int c)
{
	if (kind == V_PLAIN || kind == S_PLAIN)
		c = 0;
	if (made[kind][c])
		return &sets[kind][c];
	static char names[NKINDS][3][32];
	rio_compression comp = kind == V_PLAIN || kind == S_PLAIN ? RIO_COMPRESSION_NONE : codecs[c];
	snprintf(names[kind][c], sizeof names[kind][c], "k%d-%s", kind, cname(comp));
	lu_dataset *t = &sets[kind][c];
	switch (kind) {
	case V_PLAIN:
		vd_make(t, names[kind][c], 3, vd_counts, 5, comp, 0x1f);
		break;
	case V_IDX:
		vd_make(t, names[kind][c], 3, vd_counts, 5, comp, 0x1f);
		break;
	case V_NOIDX:
		vd_make(t, names[kind][c], 3, vd_counts, 5, comp, 0);
		break;
	case V_MIXED:
		vd_make(t, names[kind][c], 3, vd_counts, 5, comp, 0x15);
		break;
	case S_PLAIN:
	case S_COMP:
		lu_dataset_make(t, &(lu_spec){.name = names[kind][c],
		                                  .tag = 4,
		                                  .counts = sm_counts,
		                                  .nshards = 3,
		                                  .comp = comp,
		                                  .idx_mask = kind == S_PLAIN ? 0x7u : 0x5u});
		break;
	}
	made[kind][c] = 1;
	return t;
}

static void base_opts(rio_loader_opts *o)
{
	lu_base_opts(o);
	o->batch_size = 7;
	o->chunk_bytes = 4096;
	o->read_size = 4096;
	o->shuffle_buffer = 40;
	o->seed = 5;
}

/* ---- the same sequence as the uncompressed copy ------------------------------ */

typedef struct optcase {
	rio_shuffle sh;
	size_t interleave, chunk, buffer, bs;
} optcase;

static const optcase seq_cases[] = {
    {RIO_SHUFFLE_NONE, 1, 4096, 40, 7},     {RIO_SHUFFLE_NONE, 1, 65536, 40, 16},
    {RIO_SHUFFLE_BUFFER, 1, 16384, 50, 7},  {RIO_SHUFFLE_BUFFER, 2, 4096, 1, 5},
    {RIO_SHUFFLE_BUFFER, 3, 65536, 300, 9}, {RIO_SHUFFLE_BUFFER, 4, 4096, 40, 7},
};
#define NSEQ (sizeof seq_cases / sizeof seq_cases[0])

static void case_opts(rio_loader_opts *o, const optcase *k)
{
	base_opts(o);
	o->shuffle = k->sh;
	o->interleave = k->interleave;
	o->chunk_bytes = k->chunk;
	o->shuffle_buffer = k->buffer;
	o->batch_size = k->bs;
}

/* Two epochs of `t` against the plain reference `ref` (same options). */
static void compare_to_plain(const lu_dataset *t, const lu_seq *ref, const rio_loader_opts *o,
                             const char *what)
{
	lu_seq s;
	lu_seq_init(&s);
	rio_loader *l = open_on(t, o, what);
	if (!l)
		return;
	CHECK(rio_loader_records(l) == t->total, "%s: rio_loader_records %llu, want %llu", what,
	      (unsigned long long)rio_loader_records(l), (unsigned long long)t->total);
	for (int e = 0; e < 2; e++) {
		int rc = lu_drain_epoch(l, &s, t);
		CHECK(rc == 0, "%s: epoch %d ended with %d (%s): %s", what, e, rc, rio_strerror(rc),
		      rio_loader_error(l)->message);
	}
	rio_loader_stats st;
	rio_loader_stats_get(l, &st);
	rio_loader_close(l);
	CHECK(s.bad_payload == 0, "%s: %zu records with wrong bytes", what, s.bad_payload);
	CHECK(s.bad_meta == 0, "%s: %zu batches numbered out of order", what, s.bad_meta);
	char diff[400];
	CHECK(lu_seq_equal(ref, 0, &s, 0),
	      "%s: not the sequence of the uncompressed copy (plain vs compressed): %s", what,
	      lu_seq_diff(ref, 0, &s, 0, diff, sizeof diff));
	size_t e1 = lu_epoch_start(&s, 1);
	for (uint64_t e = 0; e < 2; e++) {
		lu_seq er = epoch_recs(&s, e);
		size_t no = lu_not_once(t, &er, 1);
		CHECK(no == 0, "%s: epoch %llu: %zu records not delivered exactly once", what,
		      (unsigned long long)e, no);
		lu_seq ev = e ? lu_seq_view(&s, e1, s.nb - e1) : lu_seq_view(&s, 0, e1);
		CHECK(lu_epoch_shape(&ev, 0, o->batch_size, e, t->total, 0) == 0,
		      "%s: epoch %llu badly shaped (%zu batches)", what, (unsigned long long)e,
		      ev.nb);
	}
	CHECK(st.records == s.n && st.skipped == 0 && st.bytes == s.bytes,
	      "%s: stats records %llu skipped %llu bytes %llu; delivered %zu records, %llu bytes",
	      what, (unsigned long long)st.records, (unsigned long long)st.skipped,
	      (unsigned long long)st.bytes, s.n, (unsigned long long)s.bytes);
	lu_seq_free(&s);
}

static void test_same_as_plain(void)
{
	lu_watchdog("same as plain", 240);
	for (size_t k = 0; k < NSEQ; k++) {
		rio_loader_opts o;
		case_opts(&o, &seq_cases[k]);
		/* varied records */
		lu_seq ref;
		lu_seq_init(&ref);
		run(ds(V_PLAIN, 0), &o, 2, &ref, "plain varied");
		CU_ASSERT_EQUAL(ref.bad_payload, 0);
		for (int c = 0; c < 3; c++) {
			static const int kinds[] = {V_IDX, V_NOIDX};
			for (int ki = 0; ki < 2; ki++) {
				char what[200];
				snprintf(what, sizeof what,
				         "%s varied %s, %s interleave %zu chunk %zu buffer %zu bs %zu",
				         cname(codecs[c]), ki ? "without .idx" : "with .idx",
				         shname(o.shuffle), o.interleave, o.chunk_bytes,
				         o.shuffle_buffer, o.batch_size);
				compare_to_plain(ds(kinds[ki], c), &ref, &o, what);
			}
		}
		lu_seq_free(&ref);
		/* small records: tasks of many records */
		lu_seq_init(&ref);
		run(ds(S_PLAIN, 0), &o, 2, &ref, "plain small");
		for (int c = 0; c < 3; c++) {
			char what[200];
			snprintf(what, sizeof what,
			         "%s small records (mixed .idx), %s interleave %zu chunk %zu bs %zu",
			         cname(codecs[c]), shname(o.shuffle), o.interleave, o.chunk_bytes,
			         o.batch_size);
			compare_to_plain(ds(S_COMP, c), &ref, &o, what);
		}
		lu_seq_free(&ref);
	}
	lu_watchdog(NULL, 0);
}

/* Batches that begin with (or hold only) 0-byte records: each is a record
 * like any other, delivered with size 0. */
static void test_empty_records(void)
{
	lu_watchdog("empty records", 120);
	static const size_t counts[2] = {60, 31};
	for (int c = -1; c < 3; c++) {
		char name[64];
		rio_compression comp = c < 0 ? RIO_COMPRESSION_NONE : codecs[c];
		snprintf(name, sizeof name, "empty-%s", cname(comp));
		lu_dataset t;
		vd_make(&t, name, EMPTY_TAG, counts, 2, comp, 0x1);
		for (int si = 0; si < 2; si++) {
			rio_loader_opts o;
			base_opts(&o);
			o.batch_size = 3;
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			char what[120];
			snprintf(what, sizeof what, "0-byte records, %s, %s", cname(comp),
			         shname(o.shuffle));
			lu_seq s;
			lu_seq_init(&s);
			run(&t, &o, 2, &s, what);
			lu_seq e0 = epoch_recs(&s, 0), e1 = epoch_recs(&s, 1);
			CHECK(s.bad_payload == 0 && lu_not_once(&t, &e0, 1) == 0 &&
			          lu_not_once(&t, &e1, 1) == 0,
			      "%s: %zu records with wrong bytes, or not each once per epoch", what,
			      s.bad_payload);
			lu_seq_free(&s);
		}
		lu_dataset_free(&t);
	}
	lu_watchdog(NULL, 0);
}

/* ---- RECORDS sharding: pieces that start mid-shard ----------------------------- */

static void world_once(int kind, int c, rio_shuffle sh, int W)
{
	const lu_dataset *t = ds(kind, c);
	const lu_dataset *p = ds(kind == S_COMP ? S_PLAIN : V_PLAIN, 0);
	lu_seq s[5], ref[5];
	uint64_t sum = 0;
	for (int r = 0; r < W; r++) {
		lu_seq_init(&s[r]);
		lu_seq_init(&ref[r]);
		rio_loader_opts o;
		base_opts(&o);
		o.shuffle = sh;
		o.interleave = 3;
		o.sharding = RIO_SHARD_RECORDS;
		o.world = W;
		o.rank = r;
		char what[160];
		snprintf(what, sizeof what, "%s %s %s RECORDS world %d rank %d", cname(codecs[c]),
		         kind == S_COMP ? "small" : kind == V_NOIDX ? "varied without .idx"
		                                                    : "varied (mixed .idx)",
		         shname(sh), W, r);
		rio_loader *l = open_on(t, &o, what);
		if (!l)
			continue;
		uint64_t want = rio_loader_records(l);
		int rc = lu_drain_epoch(l, &s[r], t);
		CHECK(rc == 0, "%s: epoch ended with %d (%s): %s", what, rc, rio_strerror(rc),
		      rio_loader_error(l)->message);
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		rio_loader_close(l);
		CHECK(s[r].n == want && st.skipped == 0,
		      "%s: %zu records delivered, rio_loader_records says %llu; skipped %llu", what,
		      s[r].n, (unsigned long long)want, (unsigned long long)st.skipped);
		CHECK(s[r].bad_payload == 0, "%s: %zu records with wrong bytes", what,
		      s[r].bad_payload);
		CHECK(lu_epoch_shape(&s[r], 0, o.batch_size, 0, s[r].n, 0) == 0,
		      "%s: batches numbered or sized wrong", what);
		sum += s[r].n;
		run(p, &o, 1, &ref[r], "plain");
		char diff[400];
		CHECK(lu_seq_equal(&ref[r], 0, &s[r], 0),
		      "%s: not the uncompressed copy's sequence (plain vs compressed): %s", what,
		      lu_seq_diff(&ref[r], 0, &s[r], 0, diff, sizeof diff));
	}
	size_t no = lu_not_once(t, s, (size_t)W);
	CHECK(no == 0 && sum == t->total,
	      "%s %s world %d: %zu records not delivered exactly once (%llu delivered of %llu)",
	      cname(codecs[c]), shname(sh), W, no, (unsigned long long)sum,
	      (unsigned long long)t->total);
	for (int r = 0; r < W; r++) {
		lu_seq_free(&s[r]);
		lu_seq_free(&ref[r]);
	}
}

static void test_records_sharding(void)
{
	lu_watchdog("RECORDS sharding", 240);
	for (int c = 0; c < 3; c++)
		for (int W = 2; W <= 5; W++) {
			world_once(c == 1 ? V_NOIDX : V_MIXED, c, RIO_SHUFFLE_NONE, W);
			world_once(c == 2 ? V_NOIDX : V_MIXED, c, RIO_SHUFFLE_BUFFER, W);
			if (W == 3 || W == 5)
				world_once(S_COMP, c, W == 3 ? RIO_SHUFFLE_NONE : RIO_SHUFFLE_BUFFER,
				           W);
		}
	lu_watchdog(NULL, 0);
}

/* ---- resume and set_epoch ------------------------------------------------------ */

static void resume_case(const lu_dataset *t, const rio_loader_opts *o, const char *what)
{
	lu_seq ref;
	lu_seq_init(&ref);
	rio_loader *l = open_on(t, o, what);
	if (!l)
		return;
	uint64_t expect = rio_loader_records(l);
	int rc = lu_drain_through(l, &ref, t, 1);
	CHECK(rc == 0, "%s: reference run: %d (%s) %s", what, rc, rio_strerror(rc),
	      rio_loader_error(l)->message);
	rio_loader_close(l);
	size_t nb0 = lu_epoch_start(&ref, 1);
	CU_ASSERT_FATAL(nb0 > 8 && ref.nb == 2 * nb0);
	for (uint64_t e = 0; e < 2; e++) {
		lu_seq er = epoch_recs(&ref, e);
		CHECK(ref.bad_payload == 0 && er.n == expect && distinct(t, &er),
		      "%s: reference run, epoch %llu: %zu records (want %llu), %zu with wrong "
		      "bytes, or some twice",
		      what, (unsigned long long)e, er.n, (unsigned long long)expect,
		      ref.bad_payload);
	}

	/* k: the batch count before saving. With 7 records a batch over the
	 * whole data (shards of 400, 0, 1, 260, 131): batch 20 is inside shard
	 * 0, batch 57 holds the end of shard 0, shard 2's record and the start
	 * of shard 3, 80 is inside shard 3, 94 crosses into shard 4 */
	size_t ks[] = {1, 3, 20, 57, 58, 80, 94, nb0 - 1, nb0, nb0 + 5};
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
		size_t k = ks[i];
		if (k > ref.nb - 1)
			continue;
		lu_seq a, b;
		lu_seq_init(&a);
		lu_seq_init(&b);
		rio_loader *la = open_on(t, o, what);
		if (!la)
			break;
		rc = lu_take(la, &a, t, k);
		CHECK(rc == 0, "%s k=%zu: %d (%s)", what, k, rc, rio_strerror(rc));
		lu_seq head = lu_seq_view(&ref, 0, k);
		CHECK(a.nb == k && lu_seq_equal(&head, 0, &a, 0),
		      "%s: the first %zu batches differ between two runs", what, k);
		int size = rio_loader_state_save(la, NULL, 0);
		CU_ASSERT_FATAL(size > 0 && size < 4096);
		uint8_t blob[4096];
		CU_ASSERT_EQUAL(rio_loader_state_save(la, blob, sizeof blob), size);
		rio_loader_close(la);
		rio_loader *lb = open_on(t, o, what);
		if (lb) {
			rc = rio_loader_state_restore(lb, blob, (size_t)size);
			CHECK(rc == 0, "%s k=%zu: restore = %d (%s) %s", what, k, rc,
			      rio_strerror(rc), rio_loader_error(lb)->message);
			rc = lu_drain_through(lb, &b, t, 1);
			CHECK(rc == 0, "%s k=%zu: resumed run: %d (%s) %s", what, k, rc,
			      rio_strerror(rc), rio_loader_error(lb)->message);
			CHECK(b.bad_payload == 0, "%s k=%zu: %zu records with wrong bytes", what, k,
			      b.bad_payload);
			char diff[400];
			CHECK(lu_seq_equal(&ref, k, &b, 0),
			      "%s: resumed after %zu batches, the rest differs from an "
			      "uninterrupted loader's (%zu batches, want %zu): uninterrupted vs "
			      "resumed: %s",
			      what, k, b.nb, ref.nb - k, lu_seq_diff(&ref, k, &b, 0, diff, sizeof diff));
			rio_loader_close(lb);
		}
		lu_seq_free(&a);
		lu_seq_free(&b);
	}
	lu_seq_free(&ref);
}

static void test_resume(void)
{
	lu_watchdog("resume", 240);
	static const int kinds[3] = {V_IDX, V_NOIDX, V_MIXED};
	for (int c = 0; c < 3; c++)
		for (int si = 0; si < 2; si++) {
			rio_loader_opts o;
			base_opts(&o);
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			o.interleave = 2 + (size_t)c % 2;
			char what[160];
			snprintf(what, sizeof what, "resume %s %s world 1", cname(codecs[c]),
			         shname(o.shuffle));
			resume_case(ds(kinds[c], c), &o, what);
			/* a rank whose piece starts inside shard 0 (record 396) */
			o.world = 2;
			o.rank = 1;
			snprintf(what, sizeof what, "resume %s %s world 2 rank 1", cname(codecs[c]),
			         shname(o.shuffle));
			resume_case(ds(kinds[(c + 1) % 3], c), &o, what);
		}
	lu_watchdog(NULL, 0);
}

static void test_set_epoch(void)
{
	lu_watchdog("set_epoch", 240);
	for (int c = 0; c < 3; c++)
		for (int si = 0; si < 2; si++) {
			const lu_dataset *t = ds(c == 1 ? V_NOIDX : V_IDX, c);
			rio_loader_opts o;
			base_opts(&o);
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			o.interleave = 3;
			o.world = 2;
			o.rank = c % 2;
			char what[160];
			snprintf(what, sizeof what, "set_epoch %s %s rank %d", cname(codecs[c]),
			         shname(o.shuffle), o.rank);
			lu_seq nat;
			lu_seq_init(&nat);
			run(t, &o, 3, &nat, what);
			for (uint64_t e = 0; e < 3; e++) {
				lu_seq er = epoch_recs(&nat, e);
				CHECK(nat.bad_payload == 0 && er.n == t->total / 2 &&
				          distinct(t, &er),
				      "%s: uninterrupted run, epoch %llu: %zu records (want %llu), "
				      "%zu with wrong bytes, or some twice",
				      what, (unsigned long long)e, er.n,
				      (unsigned long long)(t->total / 2), nat.bad_payload);
			}
			size_t e1 = lu_epoch_start(&nat, 1), e2 = lu_epoch_start(&nat, 2);
			lu_seq nat0 = lu_seq_view(&nat, 0, e1), nat1 = lu_seq_view(&nat, e1, e2 - e1),
			       nat2 = lu_seq_view(&nat, e2, nat.nb - e2);

			rio_loader *l = open_on(t, &o, what);
			if (!l)
				continue;
			lu_seq a, b, g, f;
			lu_seq_init(&a);
			lu_seq_init(&b);
			lu_seq_init(&g);
			lu_seq_init(&f);
			/* mid-epoch 0 (a few tasks into the stream) to epoch 2 */
			CU_ASSERT_EQUAL(lu_take(l, &a, t, 23), 0);
			CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 2), 0);
			int rc = lu_drain_epoch(l, &b, t);
			CHECK(rc == 0 && lu_seq_equal(&nat2, 0, &b, 0) && b.bad_payload == 0,
			      "%s: after 23 batches of epoch 0, set_epoch(2): rc %d, %zu batches "
			      "(want %zu), %s",
			      what, rc, b.nb, nat2.nb,
			      lu_seq_equal(&nat2, 0, &b, 0) ? "same" : "not epoch 2's sequence");
			/* mid-epoch 3 back to 0, then a whole epoch 0 and epoch 1 */
			CU_ASSERT_EQUAL(lu_take(l, &g, t, 9), 0);
			CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 0), 0);
			rc = lu_drain_epoch(l, &f, t);
			CHECK(rc == 0 && lu_seq_equal(&nat0, 0, &f, 0) && f.bad_payload == 0,
			      "%s: set_epoch(0) mid-way through epoch 3: rc %d, not epoch 0 again", what,
			      rc);
			lu_seq_free(&f);
			lu_seq_init(&f);
			rc = lu_drain_epoch(l, &f, t);
			CHECK(rc == 0 && lu_seq_equal(&nat1, 0, &f, 0) && f.bad_payload == 0,
			      "%s: the epoch after that: rc %d, not epoch 1", what, rc);
			rio_loader_close(l);
			lu_seq_free(&nat);
			lu_seq_free(&a);
			lu_seq_free(&b);
			lu_seq_free(&g);
			lu_seq_free(&f);
		}
	lu_watchdog(NULL, 0);
}

/* ---- workers ----------------------------------------------------------------- */

static void test_workers(void)
{
	lu_watchdog("workers", 240);
	static const int nworkers[3] = {1, 2, 4};
	for (int c = 0; c < 3; c++)
		for (int si = 0; si < 2; si++)
			for (int W = 1; W <= 2; W++) {
				const lu_dataset *t = ds(W == 1 ? V_MIXED : V_NOIDX, c);
				lu_seq s[3];
				for (int wi = 0; wi < 3; wi++) {
					rio_loader_opts o;
					base_opts(&o);
					o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
					o.interleave = 4;
					o.world = W;
					o.rank = W - 1;
					o.workers = nworkers[wi];
					o.prefetch = wi == 2 ? 1 : 4;
					o.hold = 1;
					lu_seq_init(&s[wi]);
					char what[160];
					snprintf(what, sizeof what, "%s %s world %d, %d workers",
					         cname(codecs[c]), shname(o.shuffle), W, o.workers);
					uint64_t want = W == 1 ? t->total : t->total / 2;
					run(t, &o, 2, &s[wi], what);
					lu_seq e0 = epoch_recs(&s[wi], 0), e1 = epoch_recs(&s[wi], 1);
					CHECK(s[wi].bad_payload == 0 && e0.n == want && e1.n == want &&
					          distinct(t, &e0) && distinct(t, &e1),
					      "%s: %zu wrong records; %zu and %zu records in the "
					      "epochs (want %llu), or some twice",
					      what, s[wi].bad_payload, e0.n, e1.n,
					      (unsigned long long)want);
				}
				for (int wi = 1; wi < 3; wi++) {
					char diff[400];
					CHECK(lu_seq_equal(&s[0], 0, &s[wi], 0),
					      "%s %s world %d: 1 worker vs %d workers: %s",
					      cname(codecs[c]), si ? "BUFFER" : "NONE", W,
					      nworkers[wi], lu_seq_diff(&s[0], 0, &s[wi], 0, diff, sizeof diff));
				}
				for (int wi = 0; wi < 3; wi++)
					lu_seq_free(&s[wi]);
			}
	lu_watchdog(NULL, 0);
}

/* ---- decoded columns ------------------------------------------------------------ */

static void test_decode(void)
{
	lu_watchdog("decode", 240);
	static const size_t ex_counts[3] = {150, 70, 200};
	lu_dataset plain;
	lu_dataset_make(&plain, &(lu_spec){.name = "ex-plain",
	                                   .tag = 6,
	                                   .counts = ex_counts,
	                                   .nshards = 3,
	                                   .comp = RIO_COMPRESSION_NONE,
	                                   .example = 1,
	                                   .idx_mask = 0x7});
	for (int c = 0; c < 3; c++) {
		char name[32];
		snprintf(name, sizeof name, "ex-%s", cname(codecs[c]));
		lu_dataset d;
		lu_dataset_make(&d, &(lu_spec){.name = name,
		                               .tag = 6,
		                               .counts = ex_counts,
		                               .nshards = 3,
		                               .comp = codecs[c],
		                               .example = 1,
		                               .idx_mask = c == 0 ? 0x7u : c == 1 ? 0u : 0x2u});
		lu_dataset t = d, tp = plain;
		for (int fc = 0; fc < 2; fc++)
			for (int si = 0; si < 2; si++)
				for (int W = 1; W <= 3; W += 2) {
					const char *spec = fc ? LU_COLS_FLOAT : LU_COLS_NATIVE;
					rio_column_spec *cols = NULL;
					size_t ncols = 0;
					CU_ASSERT_EQUAL_FATAL(
					    rio_column_spec_parse(spec, &cols, &ncols, NULL), 0);
					lu_seq s[3], ref[3];
					for (int r = 0; r < W; r++) {
						rio_loader_opts o;
						base_opts(&o);
						o.batch_size = 8;
						o.shuffle =
						    si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
						o.interleave = 2;
						o.world = W;
						o.rank = r;
						o.columns = cols;
						o.ncolumns = ncols;
						lu_seq_init(&s[r]);
						lu_seq_init(&ref[r]);
						s[r].float_cols = ref[r].float_cols = fc;
						char what[200];
						snprintf(what, sizeof what,
						         "decode %s \"%s\" %s world %d rank %d",
						         cname(codecs[c]), spec, shname(o.shuffle), W,
						         r);
						run(&t, &o, 1, &s[r], what);
						run(&tp, &o, 1, &ref[r], "plain Examples");
						CHECK(s[r].bad_columns == 0, "%s: %zu wrong values",
						      what, s[r].bad_columns);
						CHECK(lu_epoch_shape(&s[r], 0, 8, 0, s[r].n, 0) == 0,
						      "%s: badly shaped epoch", what);
						char diff[400];
						CHECK(lu_seq_equal(&ref[r], 0, &s[r], 0),
						      "%s: not the uncompressed copy's sequence: %s",
						      what,
						      lu_seq_diff(&ref[r], 0, &s[r], 0, diff,
						                  sizeof diff));
					}
					size_t no = lu_not_once(&d, s, (size_t)W);
					CHECK(no == 0, "decode %s %s world %d: %zu records not once",
					      cname(codecs[c]), spec, W, no);
					for (int r = 0; r < W; r++) {
						lu_seq_free(&s[r]);
						lu_seq_free(&ref[r]);
					}
					free(cols);
				}
		lu_dataset_free(&d);
	}
	lu_dataset_free(&plain);
	lu_watchdog(NULL, 0);
}

/* An Example that does not match the columns, inside a compressed stream:
 * RIO_EFEATURELEN after the batches before it under FAIL; under SKIP that
 * record alone is skipped (the stream goes on: the frame is whole). */
static void test_decode_mismatch(void)
{
	lu_watchdog("decode mismatch", 120);
	static const size_t counts[3] = {150, 160, 90};
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_NATIVE, &cols, &ncols, NULL), 0);
	for (int c = 0; c < 3; c++) {
		char name[32];
		snprintf(name, sizeof name, "exbad-%s", cname(codecs[c]));
		lu_dataset d;
		lu_dataset_make(&d, &(lu_spec){.name = name,
		                               .tag = 10,
		                               .counts = counts,
		                               .nshards = 3,
		                               .comp = codecs[c],
		                               .idx_mask = c == 1 ? 0u : 0x7u,
		                               .example = 1,
		                               .bad = LU_BAD_SHORT_IMAGE,
		                               .bad_shard = 1,
		                               .bad_index = 97});
		lu_dataset t = d;
		uint64_t bad_ord = lu_ordinal(&d, 1, 97);
		for (int si = 0; si < 2; si++) {
			rio_loader_opts o;
			base_opts(&o);
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			o.batch_size = 8;
			o.columns = cols;
			o.ncolumns = ncols;
			char what[120];
			snprintf(what, sizeof what, "%s, an Example with a short image, %s, FAIL",
			         cname(codecs[c]), shname(o.shuffle));
			rio_loader *l = open_on(&t, &o, what);
			if (l) {
				lu_seq s;
				lu_seq_init(&s);
				int rc = lu_drain_epoch(l, &s, &t);
				const char *msg = rio_loader_error(l)->message;
				CHECK(rc == RIO_EFEATURELEN && strstr(msg, "data-00001-of-00003"),
				      "%s: next = %d (%s) \"%s\", want RIO_EFEATURELEN naming shard 1",
				      what, rc, rio_strerror(rc), msg);
				CHECK(s.bad_columns == 0, "%s: %zu wrong values", what, s.bad_columns);
				if (!si) /* (1, 97) would be the last of batch 30 */
					CHECK(s.n == (150 + 97) / 8 * 8,
					      "%s: %zu records before the error, want %d", what, s.n,
					      (150 + 97) / 8 * 8);
				rio_loader_close(l);
				lu_seq_free(&s);
			}
			o.on_damage = RIO_DAMAGE_SKIP;
			snprintf(what, sizeof what, "%s, an Example with a short image, %s, SKIP",
			         cname(codecs[c]), shname(o.shuffle));
			l = open_on(&t, &o, what);
			if (l) {
				lu_seq s;
				lu_seq_init(&s);
				int rc = lu_drain_epoch(l, &s, &t);
				rio_loader_stats st;
				rio_loader_stats_get(l, &st);
				unsigned *hits = calloc(d.total, sizeof *hits);
				size_t wrong = lu_count_hits(&d, &s, hits);
				for (uint64_t i = 0; i < d.total; i++)
					wrong += hits[i] != (i == bad_ord ? 0u : 1u);
				free(hits);
				CHECK(rc == 0 && st.skipped == 1 && wrong == 0 && s.bad_columns == 0,
				      "%s: rc %d, skipped %llu, %zu records not as expected (want all but "
				      "(1, 97), once), %zu wrong values",
				      what, rc, (unsigned long long)st.skipped, wrong, s.bad_columns);
				rio_loader_close(l);
				lu_seq_free(&s);
			}
		}
		lu_dataset_free(&d);
	}
	free(cols);
	lu_watchdog(NULL, 0);
}

/* ---- compressing and decoding by hand (the model) ------------------------------- */

/* Replaces the file's bytes by their compressed form. */
static void compress_file(const char *path, rio_compression c)
{
	size_t n, cn;
	uint8_t *raw = tu_read_file(path, &n);
	CU_ASSERT_FATAL(raw != NULL);
	uint8_t *comp = lu_compress(c, raw, n, &cn);
	tu_write_file(path, comp, cn);
	free(raw);
	free(comp);
}

/* Decodes a (possibly damaged) compressed file as far as the codec lets
 * it; returns the bytes (malloc'd) and sets *n. */
static uint8_t *decode_model(rio_compression c, const uint8_t *in, size_t size, size_t *n)
{
	size_t cap = 1 << 20, len = 0;
	uint8_t *out = malloc(cap);
	CU_ASSERT_FATAL(out != NULL);
	if (c == RIO_COMPRESSION_LZ4) {
		LZ4F_dctx *dc;
		CU_ASSERT_FATAL(!LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)));
		size_t pos = 0;
		for (;;) {
			if (cap - len < 65536) {
				cap *= 2;
				out = realloc(out, cap);
				CU_ASSERT_FATAL(out != NULL);
			}
			size_t dst = cap - len, src = size - pos;
			size_t hint = LZ4F_decompress(dc, out + len, &dst, in + pos, &src, NULL);
			if (LZ4F_isError(hint))
				break;
			len += dst;
			pos += src;
			if (hint == 0 || (src == 0 && dst == 0))
				break;
		}
		LZ4F_freeDecompressionContext(dc);
	} else {
		z_stream z;
		memset(&z, 0, sizeof z);
		CU_ASSERT_FATAL(inflateInit2(&z, c == RIO_COMPRESSION_GZIP ? 16 + MAX_WBITS
		                                                           : MAX_WBITS) == Z_OK);
		z.next_in = (Bytef *)(uintptr_t)in;
		z.avail_in = (uInt)size;
		for (;;) {
			if (cap - len < 65536) {
				cap *= 2;
				out = realloc(out, cap);
				CU_ASSERT_FATAL(out != NULL);
			}
			z.next_out = out + len;
			z.avail_out = (uInt)(cap - len);
			int zr = inflate(&z, Z_NO_FLUSH);
			size_t got = (size_t)(z.next_out - (out + len));
			len += got;
			if (zr != Z_OK || (got == 0 && z.avail_in == 0))
				break;
		}
		inflateEnd(&z);
	}
	*n = len;
	return out;
}

/* Whole, valid frames at the start of buf (header CRC, size limit, data
 * CRC), as the loader checks them. */
static uint64_t good_frames(const uint8_t *buf, size_t n)
{
	size_t off = 0;
	uint64_t k = 0;
	while (n - off >= RIO_HEADER_SIZE) {
		uint64_t len = 0;
		for (int i = 7; i >= 0; i--)
			len = len << 8 | buf[off + (size_t)i];
		uint8_t hdr[RIO_HEADER_SIZE], ft[RIO_FOOTER_SIZE];
		rio_frame_header(hdr, len);
		if (memcmp(hdr, buf + off, RIO_HEADER_SIZE) || len > RIO_DEFAULT_MAX_RECORD ||
		    n - off - RIO_HEADER_SIZE < len + RIO_FOOTER_SIZE)
			break;
		rio_frame_footer(ft, buf + off + RIO_HEADER_SIZE, (size_t)len);
		if (memcmp(ft, buf + off + RIO_HEADER_SIZE + len, RIO_FOOTER_SIZE))
			break;
		k++;
		off += RIO_FRAME_OVERHEAD + (size_t)len;
	}
	return k;
}

static uint64_t model_good(rio_compression c, const char *path)
{
	size_t n, dn;
	uint8_t *f = tu_read_file(path, &n);
	CU_ASSERT_FATAL(f != NULL);
	uint8_t *dec = decode_model(c, f, n, &dn);
	uint64_t k = good_frames(dec, dn);
	free(f);
	free(dec);
	return k;
}

/* ---- damage ---------------------------------------------------------------------- */

enum { DMG_CUT, DMG_FLIP, DMG_CRC, NDMG };
static const char *dmg_name[NDMG] = {"cut in the middle", "a flipped compressed byte",
                                     "a wrong data CRC inside a valid stream"};
static const size_t dmg_counts[3] = {200, 200, 200};
#define DMG_SHARD 1
#define DMG_TAG 9

/* A varied dataset of 3 shards of 200 records, all compressed with codec
 * c, shard 1 damaged as `kind` says; *good gets the records of shard 1
 * the model decodes whole and valid before the damage. */
static void dmg_make(lu_dataset *d, rio_compression c, int kind, unsigned idx_mask, uint64_t *good)
{
	char name[64];
	snprintf(name, sizeof name, "dmg-%s-%d-%x", cname(c), kind, idx_mask);
	if (kind == DMG_CRC) {
		/* written plain, a payload byte flipped, then compressed */
		vd_make(d, name, DMG_TAG, dmg_counts, 3, RIO_COMPRESSION_NONE, idx_mask);
		uint64_t r = 140; /* in the third task of the shard */
		while (vd_size(DMG_TAG, DMG_SHARD, r) < 3)
			r++;
		size_t n;
		uint8_t *raw = tu_read_file(d->paths[DMG_SHARD], &n);
		CU_ASSERT_FATAL(raw != NULL);
		raw[d->off[DMG_SHARD][r] + RIO_HEADER_SIZE + 2] ^= 0x01;
		tu_write_file(d->paths[DMG_SHARD], raw, n);
		free(raw);
		for (size_t s = 0; s < 3; s++)
			compress_file(d->paths[s], c);
		*good = model_good(c, d->paths[DMG_SHARD]);
		CU_ASSERT_EQUAL_FATAL(*good, r);
		return;
	}
	vd_make(d, name, DMG_TAG, dmg_counts, 3, c, idx_mask);
	size_t n;
	uint8_t *f = tu_read_file(d->paths[DMG_SHARD], &n);
	CU_ASSERT_FATAL(f != NULL && n > 1000);
	if (kind == DMG_CUT) {
		CU_ASSERT_EQUAL_FATAL(truncate(d->paths[DMG_SHARD], (off_t)(n / 2)), 0);
	} else {
		f[n / 2] ^= 0x5a;
		tu_write_file(d->paths[DMG_SHARD], f, n);
	}
	free(f);
	*good = model_good(c, d->paths[DMG_SHARD]);
	CU_ASSERT_FATAL(*good < 200);
}

/* Records of d that a sequence should hold after damage: all of shards 0
 * and 2, the first `good` of shard 1. Returns the records of s that are
 * not as expected (missing, extra or repeated). */
static size_t dmg_wrong(const lu_dataset *d, const lu_seq *s, uint64_t good)
{
	unsigned *hits = calloc(d->total + 1, sizeof *hits);
	CU_ASSERT_FATAL(hits != NULL);
	size_t bad = lu_count_hits(d, s, hits);
	for (uint32_t sh = 0; sh < 3; sh++)
		for (uint64_t i = 0; i < d->count[sh]; i++) {
			unsigned want = sh != DMG_SHARD || i < good ? 1u : 0u;
			bad += hits[lu_ordinal(d, sh, i)] != want;
		}
	free(hits);
	return bad;
}

static int in_rio_range(int rc)
{
	return rc <= -1000 && rc >= -1099;
}

static void dmg_opts(rio_loader_opts *o, rio_shuffle sh, rio_damage_policy p)
{
	base_opts(o);
	o->batch_size = 8;
	o->shuffle = sh;
	o->interleave = 3;
	o->on_damage = p;
}

/* FAIL, with sidecars (the open counts from them and does not read). */
static void dmg_fail(const lu_dataset *t, rio_compression c, int kind, uint64_t good)
{
	const lu_dataset *d = t;
	const char *base = strrchr(d->paths[DMG_SHARD], '/') + 1;
	for (int si = 0; si < 2; si++) {
		rio_loader_opts o;
		dmg_opts(&o, si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
		o.workers = si ? 4 : 2;
		char what[200];
		snprintf(what, sizeof what, "%s, %s, FAIL, %s", cname(c), dmg_name[kind],
		         shname(o.shuffle));
		rio_loader *l = open_on(t, &o, what);
		if (!l)
			continue;
		lu_seq s;
		lu_seq_init(&s);
		int rc = lu_drain_epoch(l, &s, t);
		const rio_error *e = rio_loader_error(l);
		CHECK(rc < 0 && in_rio_range(rc),
		      "%s: rio_loader_next ended with %d (%s), want a RIO_E* error; %zu records "
		      "delivered, the model decodes %llu of shard 1",
		      what, rc, rio_strerror(rc), s.n, (unsigned long long)good);
		CHECK(rc >= 0 || strstr(e->message, base) != NULL,
		      "%s: the message \"%s\" does not name %s", what, e->message, base);
		CHECK(rc >= 0 || e->code == rc, "%s: rio_loader_error()->code %d, next returned %d",
		      what, e->code, rc);
		if (kind == DMG_CRC) {
			/* the place: the damaged record's offset in the stream and its
			 * number, as for an uncompressed shard */
			char place[64], recno[64];
			snprintf(place, sizeof place, "offset %llu",
			         (unsigned long long)d->off[DMG_SHARD][good]);
			snprintf(recno, sizeof recno, "record %llu", (unsigned long long)good);
			CHECK(rc == RIO_ECORRUPT_DATA && e->offset == d->off[DMG_SHARD][good] &&
			          e->record == good && strstr(e->message, place) &&
			          strstr(e->message, recno),
			      "%s: error %d offset %llu record %llu, message \"%s\"; want "
			      "RIO_ECORRUPT_DATA at offset %llu, record %llu, both in the message",
			      what, rc, (unsigned long long)e->offset, (unsigned long long)e->record,
			      e->message, (unsigned long long)d->off[DMG_SHARD][good],
			      (unsigned long long)good);
		}
		CHECK(s.bad_payload == 0, "%s: %zu records with wrong bytes", what, s.bad_payload);
		unsigned *hits = calloc(d->total + 1, sizeof *hits);
		size_t out = lu_count_hits(d, &s, hits), twice = 0, damaged = 0;
		for (uint64_t i = 0; i < d->total; i++)
			twice += hits[i] > 1;
		for (uint64_t i = good; i < 200; i++)
			damaged += hits[lu_ordinal(d, DMG_SHARD, i)];
		free(hits);
		CHECK(out == 0 && twice == 0 && damaged == 0,
		      "%s: %zu records outside the data, %zu twice, %zu from shard 1 at or after "
		      "the damage (record %llu)",
		      what, out, twice, damaged, (unsigned long long)good);
		if (o.shuffle == RIO_SHUFFLE_NONE) {
			/* the batches before the damage: 200 + good records in
			 * shard order, in full batches of 8 */
			uint64_t want = (200 + good) / 8 * 8;
			size_t unordered = 0;
			for (size_t i = 0; i < s.n; i++)
				unordered += lu_ordinal(d, s.rec[i].shard, s.rec[i].index) != i;
			CHECK(s.n == want && unordered == 0 && s.bad_meta == 0,
			      "%s: %zu records (%zu batches) before the error, %zu out of order; "
			      "want %llu (the %llu records before the damage, in batches of 8)",
			      what, s.n, s.nb, unordered, (unsigned long long)want,
			      (unsigned long long)(200 + good));
		}
		rio_loader_close(l);
		lu_seq_free(&s);
	}
}

/* SKIP: world 1 (two epochs on one loader, NONE and BUFFER), and world 4
 * RECORDS, where shard 1 is split over ranks 1 ([0, 100)) and 2 ([100,
 * 200)): the records of shard 1 the damage stops the stream before are
 * skipped, every epoch, so that delivered + skipped = the records the
 * loader counted (by the .idx, or a scan's records and one for the damage
 * it stops at). */
static void dmg_skip(const lu_dataset *t, rio_compression c, int kind, uint64_t good, const char *how)
{
	const lu_dataset *d = t;
	for (int si = 0; si < 2; si++) {
		rio_loader_opts o;
		dmg_opts(&o, si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE, RIO_DAMAGE_SKIP);
		char what[240];
		snprintf(what, sizeof what, "%s, %s (%s), SKIP, %s", cname(c), dmg_name[kind], how,
		         shname(o.shuffle));
		rio_loader *l = open_on(t, &o, what);
		if (!l)
			continue;
		lu_seq s[2];
		rio_loader_stats st[2];
		for (int e = 0; e < 2; e++) {
			lu_seq_init(&s[e]);
			int rc = lu_drain_epoch(l, &s[e], t);
			rio_loader_stats_get(l, &st[e]);
			CHECK(rc == 0, "%s: epoch %d ended with %d (%s): %s", what, e, rc,
			      rio_strerror(rc), rio_loader_error(l)->message);
			/* every record the shards hold (by the .idx, or one for the
			 * damage a scan stops at) is delivered or skipped */
			uint64_t skipped = st[e].skipped - (e ? st[0].skipped : 0);
			uint64_t want = rio_loader_records(l) - s[e].n;
			CHECK(skipped == want && skipped >= 1,
			      "%s: epoch %d: stats.skipped grew by %llu, want %llu (%zu records "
			      "delivered of %llu; the model decodes %llu of shard 1's 200)",
			      what, e, (unsigned long long)skipped, (unsigned long long)want, s[e].n,
			      (unsigned long long)rio_loader_records(l), (unsigned long long)good);
			CHECK(s[e].bad_payload == 0, "%s: epoch %d: %zu records with wrong bytes", what,
			      e, s[e].bad_payload);
			size_t wrong = dmg_wrong(d, &s[e], good);
			CHECK(wrong == 0,
			      "%s: epoch %d: %zu records not as expected (%zu delivered; want shards 0 "
			      "and 2 whole and shard 1's first %llu, each once)",
			      what, e, wrong, s[e].n, (unsigned long long)good);
			CHECK(lu_epoch_shape(&s[e], 0, 8, (uint64_t)e, s[e].n, 0) == 0,
			      "%s: epoch %d: batches numbered or sized wrong", what, e);
		}
		lu_seq r0 = lu_seq_recview(&s[0], 0, s[0].n), r1 = lu_seq_recview(&s[1], 0, s[1].n);
		if (o.shuffle == RIO_SHUFFLE_NONE)
			CHECK(same_record_order(&r0, &r1),
			      "%s: the second epoch is not the first one's records again", what);
		else
			CHECK(lu_same_set(d, &s[0], &s[1]),
			      "%s: the second epoch does not hold the first one's records", what);
		rio_loader_close(l);
		lu_seq_free(&s[0]);
		lu_seq_free(&s[1]);
	}
	lu_seq s[4];
	uint64_t skipped = 0, total = 0;
	int ok = 1;
	for (int r = 0; r < 4; r++) {
		lu_seq_init(&s[r]);
		rio_loader_opts o;
		dmg_opts(&o, RIO_SHUFFLE_BUFFER, RIO_DAMAGE_SKIP);
		o.sharding = RIO_SHARD_RECORDS;
		o.world = 4;
		o.rank = r;
		char what[240];
		snprintf(what, sizeof what, "%s, %s (%s), SKIP, RECORDS world 4 rank %d", cname(c),
		         dmg_name[kind], how, r);
		rio_loader *l = open_on(t, &o, what);
		if (!l) {
			ok = 0;
			continue;
		}
		total += rio_loader_records(l);
		int rc = lu_drain_epoch(l, &s[r], t);
		CHECK(rc == 0, "%s: epoch ended with %d (%s): %s", what, rc, rio_strerror(rc),
		      rio_loader_error(l)->message);
		CHECK(s[r].bad_payload == 0, "%s: %zu records with wrong bytes", what,
		      s[r].bad_payload);
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		skipped += st.skipped;
		rio_loader_close(l);
	}
	if (ok) {
		lu_seq all;
		lu_seq_init(&all);
		for (int r = 0; r < 4; r++)
			for (size_t i = 0; i < s[r].n; i++) {
				rio_batch_record br = {NULL, 0, s[r].rec[i].shard, s[r].rec[i].index};
				rio_batch b = {.count = 1, .records = &br};
				lu_seq_add(&all, &b, NULL);
			}
		size_t wrong = dmg_wrong(d, &all, good);
		/* the ranks together: every record the shards hold (as the
		 * loaders count them: by the .idx, or a scan's records and one
		 * for the damage it stops at) delivered or skipped */
		uint64_t want_skipped = total - all.n;
		CHECK(wrong == 0 && skipped == want_skipped && skipped >= 1,
		      "%s, %s (%s), SKIP, world 4: %zu records not as expected (want shards 0 and "
		      "2 and shard 1's first %llu, each once), skipped %llu in all (want %llu: "
		      "the records of shard 1 not delivered)",
		      cname(c), dmg_name[kind], how, wrong, (unsigned long long)good,
		      (unsigned long long)skipped, (unsigned long long)want_skipped);
		lu_seq_free(&all);
	}
	for (int r = 0; r < 4; r++)
		lu_seq_free(&s[r]);
}

static void test_damage(void)
{
	lu_watchdog("damage", 240);
	for (int c = 0; c < 3; c++)
		for (int kind = 0; kind < NDMG; kind++) {
			lu_dataset t;
			uint64_t good;
			dmg_make(&t, codecs[c], kind, 0x7, &good);
			dmg_fail(&t, codecs[c], kind, good);
			dmg_skip(&t, codecs[c], kind, good, "with .idx");
			if (kind == DMG_CRC) {
				/* without CRC checks the damaged bytes come through */
				rio_loader_opts o;
				dmg_opts(&o, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
				o.verify_crc = 0;
				lu_seq s;
				lu_seq_init(&s);
				int rc = run(&t, &o, 1, &s, "verify_crc = 0");
				CHECK(rc == 0 && s.n == 600 && s.bad_payload == 1 &&
				          lu_not_once(&t, &s, 1) == 0,
				      "%s, a wrong data CRC, verify_crc = 0: rc %d, %zu records, %zu "
				      "with other bytes (want 0, 600, 1)",
				      cname(codecs[c]), rc, s.n, s.bad_payload);
				lu_seq_free(&s);
			}
			lu_dataset_free(&t);
		}
	lu_watchdog(NULL, 0);
}

/* A wrong data CRC in a compressed stream of Examples decoded into columns.
 * Decoded records have their CRCs checked after the task has passed the
 * stream on (piece_stream.c), so later tasks of the piece may already have
 * read past the damage: the piece must still end there, as the reader says
 * (FAIL: the error at the record after the batches before it; SKIP: the
 * records before it, counted once), whatever the number of workers. */
static void test_decoded_crc(void)
{
	lu_watchdog("decoded CRC", 240);
	static const size_t counts[3] = {120, 300, 90};
	const uint64_t bad = 140; /* the third of the shard's tasks of 64 */
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_NATIVE, &cols, &ncols, NULL), 0);
	for (int c = 0; c < 3; c++) {
		char name[32];
		snprintf(name, sizeof name, "excrc-%s", cname(codecs[c]));
		lu_dataset d;
		lu_dataset_make(&d, &(lu_spec){.name = name,
		                               .tag = 14,
		                               .counts = counts,
		                               .nshards = 3,
		                               .comp = RIO_COMPRESSION_NONE,
		                               .idx_mask = c == 1 ? 0x5u : 0x7u,
		                               .example = 1});
		size_t n;
		uint8_t *raw = tu_read_file(d.paths[1], &n);
		CU_ASSERT_FATAL(raw != NULL);
		raw[d.off[1][bad] + RIO_HEADER_SIZE + 100] ^= 0x10;
		tu_write_file(d.paths[1], raw, n);
		free(raw);
		for (size_t sh = 0; sh < 3; sh++)
			compress_file(d.paths[sh], codecs[c]);
		lu_dataset t = d;
		for (int si = 0; si < 2; si++) {
			lu_seq ref;
			lu_seq_init(&ref);
			for (int wi = 0; wi < 3; wi++) {
				static const int nworkers[3] = {1, 2, 4};
				rio_loader_opts o;
				base_opts(&o);
				o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
				o.batch_size = 8;
				o.workers = nworkers[wi];
				o.columns = cols;
				o.ncolumns = ncols;
				char what[160];
				snprintf(what, sizeof what, "%s, decoded, a wrong data CRC, %s, %d workers",
				         cname(codecs[c]), shname(o.shuffle), o.workers);
				/* FAIL (the scan of shard 1, without .idx, may meet it
				 * at open) */
				rio_loader *l = NULL;
				int orc = rio_loader_open(&l, d.prefix, &o);
				if (l) {
					lu_seq s;
					lu_seq_init(&s);
					int rc = orc < 0 ? orc : lu_drain_epoch(l, &s, &t);
					const rio_error *e = rio_loader_error(l);
					size_t after = 0;
					for (size_t i = 0; i < s.n; i++)
						after += s.rec[i].shard == 1 && s.rec[i].index >= bad;
					CHECK(rc == RIO_ECORRUPT_DATA && e->record == bad &&
					          e->offset == d.off[1][bad] &&
					          strstr(e->message, "data-00001-of-00003") && after == 0 &&
					          s.bad_columns == 0,
					      "%s, FAIL: next = %d (%s) \"%s\" (record %llu, offset %llu); "
					      "%zu records of shard 1 from %llu on, %zu wrong values; want "
					      "RIO_ECORRUPT_DATA at record %llu, offset %llu, none after",
					      what, rc, rio_strerror(rc), e->message,
					      (unsigned long long)e->record, (unsigned long long)e->offset,
					      after, (unsigned long long)bad, s.bad_columns,
					      (unsigned long long)bad, (unsigned long long)d.off[1][bad]);
					if (!si && orc == 0)
						CHECK(s.n == (120 + bad) / 8 * 8,
						      "%s, FAIL: %zu records before the error, want %llu", what,
						      s.n, (unsigned long long)((120 + bad) / 8 * 8));
					rio_loader_close(l);
					lu_seq_free(&s);
				}
				/* SKIP, two epochs */
				o.on_damage = RIO_DAMAGE_SKIP;
				l = open_on(&t, &o, what);
				if (!l)
					continue;
				lu_seq s;
				lu_seq_init(&s);
				uint64_t before = 0;
				for (int ep = 0; ep < 2; ep++) {
					lu_seq one;
					lu_seq_init(&one);
					int rc = lu_drain_epoch(l, &one, &t);
					rio_loader_stats st;
					rio_loader_stats_get(l, &st);
					unsigned *hits = calloc(d.total, sizeof *hits);
					size_t wrong = lu_count_hits(&d, &one, hits);
					for (uint32_t sh = 0; sh < 3; sh++)
						for (uint64_t i = 0; i < d.count[sh]; i++)
							wrong += hits[lu_ordinal(&d, sh, i)] !=
							         (sh != 1 || i < bad ? 1u : 0u);
					free(hits);
					/* the records of shard 1 from the damage on: skipped */
					uint64_t want = rio_loader_records(l) - one.n;
					CHECK(rc == 0 && st.skipped - before == want && want >= 1 &&
					          wrong == 0 && one.bad_columns == 0,
					      "%s, SKIP, epoch %d: rc %d (%s), skipped %llu (want %llu), %zu "
					      "records not as expected (want shards 0 and 2 and shard 1's "
					      "first %llu, once), %zu wrong values",
					      what, ep, rc, rio_loader_error(l)->message,
					      (unsigned long long)(st.skipped - before),
					      (unsigned long long)want, wrong,
					      (unsigned long long)bad, one.bad_columns);
					before = st.skipped;
					for (size_t b = 0; b < one.nb; b++) {
						rio_batch_record br[64];
						for (size_t i = 0; i < one.b[b].count && i < 64; i++)
							br[i] = (rio_batch_record){
							    NULL, 0, one.rec[one.b[b].first + i].shard,
							    one.rec[one.b[b].first + i].index};
						rio_batch bb = {.count = one.b[b].count,
						                .epoch = one.b[b].epoch,
						                .number = one.b[b].number,
						                .records = br};
						lu_seq_add(&s, &bb, NULL);
					}
					lu_seq_free(&one);
				}
				rio_loader_close(l);
				if (wi == 0) {
					ref = s;
					continue;
				}
				char diff[400];
				CHECK(lu_seq_equal(&ref, 0, &s, 0), "%s, SKIP: not 1 worker's sequence: %s",
				      what, lu_seq_diff(&ref, 0, &s, 0, diff, sizeof diff));
				lu_seq_free(&s);
			}
			lu_seq_free(&ref);
		}
		lu_dataset_free(&d);
	}
	free(cols);
	lu_watchdog(NULL, 0);
}

/* Records longer than opts.max_record_size inside a compressed stream: the
 * frame cannot be read, so (as the reader does) the piece stops there:
 * RIO_ETOOLARGE after the batches before it under FAIL; under SKIP each
 * piece's records before its first long one, and the piece counted once. */
static void test_too_large(void)
{
	lu_watchdog("too large", 120);
	for (int c = 0; c < 3; c++) {
		const lu_dataset *t = ds(V_IDX, c); /* sidecars: the open does not read */
		rio_loader_opts o;
		dmg_opts(&o, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
		o.max_record_size = 150 * 1024;
		char what[120];
		snprintf(what, sizeof what, "%s, records over max_record_size, FAIL", cname(codecs[c]));
		rio_loader *l = open_on(t, &o, what);
		if (l) {
			lu_seq s;
			lu_seq_init(&s);
			int rc = lu_drain_epoch(l, &s, t);
			const char *msg = rio_loader_error(l)->message;
			/* record 41 of shard 0 is the first long one */
			CHECK(rc == RIO_ETOOLARGE && strstr(msg, "data-00000-of-00005") &&
			          s.n == 41 / 8 * 8 && s.bad_payload == 0,
			      "%s: next = %d (%s) \"%s\" after %zu records; want RIO_ETOOLARGE naming "
			      "shard 0 after %d",
			      what, rc, rio_strerror(rc), msg, s.n, 41 / 8 * 8);
			rio_loader_close(l);
			lu_seq_free(&s);
		}
		o.on_damage = RIO_DAMAGE_SKIP;
		o.shuffle = RIO_SHUFFLE_BUFFER;
		snprintf(what, sizeof what, "%s, records over max_record_size, SKIP", cname(codecs[c]));
		l = open_on(t, &o, what);
		if (l) {
			lu_seq s;
			lu_seq_init(&s);
			int rc = lu_drain_epoch(l, &s, t);
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			/* shards 0, 3, 4 stop at their record 41; shard 2 has one */
			unsigned *hits = calloc(t->total, sizeof *hits);
			size_t wrong = lu_count_hits(t, &s, hits);
			for (uint32_t sh = 0; sh < 5; sh++)
				for (uint64_t i = 0; i < t->count[sh]; i++)
					wrong += hits[lu_ordinal(t, sh, i)] != (i < 41 ? 1u : 0u);
			free(hits);
			/* every record from a shard's first long one on is skipped:
			 * delivered + skipped = the records the loader counted */
			uint64_t want = rio_loader_records(l) - s.n;
			CHECK(rc == 0 && st.skipped == want && want >= 3 && wrong == 0 &&
			          s.bad_payload == 0,
			      "%s: rc %d, skipped %llu (want %llu), %zu records not as expected (want "
			      "records 0..40 of each shard, once), %zu with wrong bytes",
			      what, rc, (unsigned long long)st.skipped, (unsigned long long)want, wrong,
			      s.bad_payload);
			rio_loader_close(l);
			lu_seq_free(&s);
		}
	}
	lu_watchdog(NULL, 0);
}

/* Without sidecars the open scans the shards with a reader. Under FAIL the
 * error may come from the open (the scan meets the damage) or from next();
 * either way it names the shard. Under SKIP the loader opens and the
 * checks are those of dmg_skip. */
static void test_damage_noidx(void)
{
	lu_watchdog("damage, no .idx", 240);
	for (int c = 0; c < 3; c++)
		for (int kind = 0; kind < NDMG; kind++) {
			lu_dataset t;
			uint64_t good;
			dmg_make(&t, codecs[c], kind, 0x5, &good); /* shard 1 scanned */
			const char *base = strrchr(t.paths[DMG_SHARD], '/') + 1;
			rio_loader_opts o;
			dmg_opts(&o, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
			rio_loader *l = NULL;
			int orc = rio_loader_open(&l, t.prefix, &o), rc = orc;
			lu_seq s;
			lu_seq_init(&s);
			if (orc == 0)
				rc = lu_drain_epoch(l, &s, &t);
			const char *msg = l ? rio_loader_error(l)->message : "";
			CHECK(rc < 0 && in_rio_range(rc) && strstr(msg, base) != NULL,
			      "%s, %s, no .idx, FAIL: %s = %d (%s) \"%s\"; want a RIO_E* error naming "
			      "%s",
			      cname(codecs[c]), dmg_name[kind], orc ? "open" : "next", rc,
			      rio_strerror(rc), msg, base);
			CHECK(s.bad_payload == 0, "%zu wrong records", s.bad_payload);
			rio_loader_close(l);
			lu_seq_free(&s);
			dmg_skip(&t, codecs[c], kind, good, "without .idx");
			lu_dataset_free(&t);
		}
	lu_watchdog(NULL, 0);
}

/* The index lists more records than the stream holds (a stale sidecar, or
 * a file cut where the codec's stream happens to end cleanly): under FAIL
 * the epoch cannot end as if whole, as for an uncompressed shard
 * (RIO_EBADINDEX there). */
static void test_stream_shorter_than_index(void)
{
	lu_watchdog("stream shorter than its index", 120);
	static const size_t counts[2] = {150, 150};
	for (int c = 0; c < 3; c++) {
		char name[64];
		snprintf(name, sizeof name, "short-%s", cname(codecs[c]));
		lu_dataset t;
		vd_make(&t, name, 12, counts, 2, codecs[c], 0x3);
		/* shard 0 rewritten with its first 100 records only */
		rio_writer_opts wo;
		rio_writer_opts_init(&wo);
		wo.compression = codecs[c];
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, t.paths[0], &wo), 0);
		uint8_t *buf = malloc(VD_MAX);
		for (uint64_t i = 0; i < 100; i++) {
			size_t n = vd_size(12, 0, i);
			vd_payload(12, 0, i, buf, n);
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, buf, n, NULL), 0);
		}
		free(buf);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		rio_loader_opts o;
		dmg_opts(&o, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
		rio_loader *l = open_on(&t, &o, "stale index");
		if (l) {
			lu_seq s;
			lu_seq_init(&s);
			int rc = lu_drain_epoch(l, &s, &t);
			const char *base = strrchr(t.paths[0], '/') + 1;
			CHECK(rc < 0 && strstr(rio_loader_error(l)->message, base),
			      "%s: shard 0 holds 100 records, its .idx lists 150: under FAIL the "
			      "epoch ended with %d (%s) after %zu records (rio_loader_records says "
			      "%llu), message \"%s\"; want an error naming %s",
			      cname(codecs[c]), rc, rio_strerror(rc), s.n,
			      (unsigned long long)rio_loader_records(l), rio_loader_error(l)->message,
			      base);
			CHECK(s.bad_payload == 0, "%zu wrong records", s.bad_payload);
			rio_loader_close(l);
			lu_seq_free(&s);
		}
		lu_dataset_free(&t);
	}
	lu_watchdog(NULL, 0);
}

/* A gzip/zlib file cut inside its trailer (the checksum), or an LZ4 frame
 * without its end mark: every record decodes, but the stream is cut short
 * (RIO_ETRUNCATED from the reader) and its checksum is never checked. As
 * the uncompressed path checks what follows a shard's last record, under
 * FAIL the shard's last task must see it. */
static void test_cut_trailer(void)
{
	lu_watchdog("cut in the trailer", 120);
	static const size_t counts[2] = {150, 150};
	for (int c = 0; c < 3; c++) {
		char name[64];
		snprintf(name, sizeof name, "trailer-%s", cname(codecs[c]));
		lu_dataset t;
		vd_make(&t, name, 13, counts, 2, codecs[c], 0x3);
		struct stat st;
		CU_ASSERT_EQUAL_FATAL(stat(t.paths[0], &st), 0);
		CU_ASSERT_EQUAL_FATAL(truncate(t.paths[0], st.st_size - 2), 0);
		/* the reader's view */
		rio_reader *r;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, t.paths[0], NULL), 0);
		rio_record rec;
		int rrc;
		uint64_t n = 0;
		while ((rrc = rio_reader_next(r, &rec)) == 1)
			n++;
		rio_reader_close(r);
		CHECK(rrc < 0, "%s: the reader reads the cut file to a clean end (%d)",
		      cname(codecs[c]), rrc);
		rio_loader_opts o;
		dmg_opts(&o, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL);
		rio_loader *l = open_on(&t, &o, "cut trailer");
		if (l) {
			lu_seq s;
			lu_seq_init(&s);
			int rc = lu_drain_epoch(l, &s, &t);
			CHECK(rc < 0,
			      "%s: shard 0 cut 2 bytes before its end (the reader: %d (%s) after %llu "
			      "records): under FAIL the epoch ended with %d after %zu records; want "
			      "an error",
			      cname(codecs[c]), rrc, rio_strerror(rrc), (unsigned long long)n, rc, s.n);
			CHECK(s.bad_payload == 0, "%zu wrong records", s.bad_payload);
			rio_loader_close(l);
			lu_seq_free(&s);
		}
		lu_dataset_free(&t);
	}
	lu_watchdog(NULL, 0);
}

/* ---- memory: a piece that starts deep inside a shard ------------------------------ */

static long status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* In a child process: the peak resident memory (MiB) a loader of rank
 * `rank` of 2 adds while reading one epoch of d; -1 when it cannot tell. */
static int peak_mib(const lu_dataset *d, int rank)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		FILE *f = fopen("/proc/self/clear_refs", "w");
		int reset = f && fputs("5", f) >= 0;
		if (f && fclose(f) != 0)
			reset = 0;
		long before = reset ? status_kib("VmHWM") : status_kib("VmRSS");
		long hwm0 = status_kib("VmHWM");
		if (!reset && hwm0 > before)
			_exit(254); /* the peak cannot be told apart */
		rio_loader_opts o;
		rio_loader_opts_init(&o);
		o.rank = rank;
		o.world = 2;
		o.sharding = RIO_SHARD_RECORDS;
		o.batch_size = 4;
		o.workers = 1;
		o.prefetch = 1;
		o.hold = 1;
		o.chunk_bytes = 65536;
		o.read_size = 65536;
		rio_loader *l = NULL;
		if (rio_loader_open(&l, d->prefix, &o) < 0)
			_exit(253);
		rio_batch *b;
		int rc;
		uint64_t n = 0, want = rio_loader_records(l);
		while ((rc = rio_loader_next(l, &b)) == 1) {
			n += b->count;
			rio_loader_release(l, b);
		}
		rio_loader_close(l);
		long after = status_kib("VmHWM");
		if (rc != 0 || n != want)
			_exit(252);
		long mib = (after - before) / 1024;
		_exit(mib < 0 ? 0 : mib > 250 ? 250 : (int)mib);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	int v = WEXITSTATUS(status);
	if (v > 250) {
		printf("\n    (memory check: child exited with %d)\n", v);
		return -1;
	}
	return v;
}

static void test_memory_mid_shard(void)
{
	lu_watchdog("memory", 120);
	/* one shard of 2048 records of 32 KiB (64 MiB, compressible): rank 1's
	 * piece starts at record 1024, 32 MiB into the stream */
	for (int c = 0; c < 3; c += 2) {
		char name[64];
		snprintf(name, sizeof name, "mem-%s", cname(codecs[c]));
		lu_dataset d;
		memset(&d, 0, sizeof d);
		snprintf(d.dir, sizeof d.dir, "%s", tu_path(name));
		CU_ASSERT_EQUAL_FATAL(mkdir(d.dir, 0755), 0);
		snprintf(d.prefix, sizeof d.prefix, "%s/data", d.dir);
		char path[700];
		CU_ASSERT_FATAL(rio_shard_name_format(path, sizeof path, d.prefix, 0, 1, codecs[c]) > 0);
		rio_writer_opts wo;
		rio_writer_opts_init(&wo);
		wo.compression = codecs[c];
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &wo), 0);
		rio_index idx;
		memset(&idx, 0, sizeof idx);
		uint8_t *rec = calloc(1, 32768);
		for (uint64_t i = 0; i < 2048; i++) {
			memcpy(rec, &i, sizeof i);
			tu_fill_random(rec + 8, 24, i);
			uint64_t off;
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, rec, 32768, &off), 0);
			CU_ASSERT_EQUAL_FATAL(rio_index_append(&idx, off, 32768 + 16), 0);
		}
		free(rec);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		char *ip = rio_index_path(path);
		CU_ASSERT_EQUAL_FATAL(rio_index_write(ip, &idx, NULL), 0);
		free(ip);
		rio_index_free(&idx);

		int m0 = peak_mib(&d, 0), m1 = peak_mib(&d, 1);
		printf("\n    (%s: peak memory added, rank 0: %d MiB, rank 1: %d MiB)", cname(codecs[c]),
		       m0, m1);
		if (m0 < 0 || m1 < 0)
			printf("\n    (the peak memory cannot be measured here: not checked)");
		else
			CHECK(m1 <= m0 + 16,
			      "%s: rank 1 of 2 (its piece starts 32 MiB into a 64 MiB shard) adds %d "
			      "MiB at its peak, rank 0 (same amount of data, from the shard's start) %d "
			      "MiB: the bytes of the records it skips are kept (loader.h: memory is "
			      "bounded whatever the size of the dataset)",
			      cname(codecs[c]), m1, m0);
	}
	lu_watchdog(NULL, 0);
}

/* ---- opts.cache: the shards decompressed once, served from memory ------------ */

/* The decompressed bytes of dataset t's shards read by rank `rank` of
 * `world` (RECORDS sharding): whole shards holding any of its records. */
static uint64_t cache_want(const lu_dataset *t, int rank, int world)
{
	uint64_t lo = t->total * (uint64_t)rank / (uint64_t)world, n = t->total / (uint64_t)world,
	         extra = t->total % (uint64_t)world;
	lo = (uint64_t)rank * n + ((uint64_t)rank < extra ? (uint64_t)rank : extra);
	uint64_t hi = lo + n + ((uint64_t)rank < extra ? 1 : 0), want = 0;
	for (size_t s = 0; s < t->nshards; s++)
		if (t->count[s] && t->base[s] < hi && t->base[s] + t->count[s] > lo)
			want += t->off[s][t->count[s]];
	return want;
}

/* Takes `epochs` epochs of t into s with options o, and the stats. */
static int cache_run(const lu_dataset *t, const rio_loader_opts *o, int epochs, lu_seq *s,
                     rio_loader_stats *st, const char *what)
{
	rio_loader *l = open_on(t, o, what);
	if (!l)
		return -1;
	int bad = 0;
	for (int e = 0; e < epochs; e++) {
		int rc = lu_drain_epoch(l, s, t);
		CHECK(rc == 0, "%s: epoch %d ended with %d (%s): %s", what, e, rc, rio_strerror(rc),
		      rio_loader_error(l)->message);
		bad |= rc != 0;
	}
	rio_loader_stats_get(l, st);
	rio_loader_close(l);
	return bad ? -1 : 0;
}

/* With the cache, every order gives exactly the sequence (records, bytes,
 * batches) of the same loader without it: NONE and BUFFER with 1 to 4
 * pieces interleaved, shards with, without and with some .idx, 1, 2 and 4
 * workers, 2 ranks, drop_remainder, three epochs; the cache holds the
 * rank's shards decompressed (stats.cache_bytes), and no file is read
 * after open. */
static void test_cache_same(void)
{
	lu_watchdog("cache same", 300);
	static const int kinds[3] = {V_IDX, V_NOIDX, S_COMP};
	for (int c = 0; c < 3; c++)
		for (size_t k = 0; k < NSEQ; k++)
			for (int W = 1; W <= 2; W++) {
				const lu_dataset *t = ds(kinds[(k + (size_t)c) % 3], c);
				rio_loader_opts o;
				case_opts(&o, &seq_cases[k]);
				o.world = W;
				o.rank = W - 1;
				o.drop_remainder = (int)(k % 2);
				o.workers = 1 << ((k + (size_t)c) % 3);
				char what[200];
				snprintf(what, sizeof what,
				         "cache: %s %s, %s interleave %zu bs %zu, rank %d of %d, %d workers%s",
				         cname(codecs[c]), t->sp.name, shname(o.shuffle), o.interleave,
				         o.batch_size, o.rank, W, o.workers,
				         o.drop_remainder ? ", drop_remainder" : "");
				lu_seq ref, s;
				lu_seq_init(&ref);
				lu_seq_init(&s);
				rio_loader_stats st0, st1;
				cache_run(t, &o, 3, &ref, &st0, what);
				o.cache = 1ull << 30;
				cache_run(t, &o, 3, &s, &st1, what);
				uint64_t want = cache_want(t, o.rank, W);
				CHECK(st0.cache_bytes == 0 && st1.cache_bytes == want,
				      "%s: stats.cache_bytes %llu without the cache, %llu with it (want "
				      "%llu)",
				      what, (unsigned long long)st0.cache_bytes,
				      (unsigned long long)st1.cache_bytes, (unsigned long long)want);
				char diff[400];
				CHECK(ref.n > 0 && s.bad_payload == 0 && s.bad_meta == 0 &&
				          lu_seq_equal(&ref, 0, &s, 0) && ref.bytes == s.bytes &&
				          st1.bytes == st0.bytes && st1.records == st0.records,
				      "%s: not the uncached sequence (%zu wrong payloads): uncached vs "
				      "cached: %s",
				      what, s.bad_payload, lu_seq_diff(&ref, 0, &s, 0, diff, sizeof diff));
				/* what was read: the compressed files, once, at open */
				CHECK(st1.file_bytes <= st0.file_bytes,
				      "%s: %llu file bytes read with the cache, %llu without", what,
				      (unsigned long long)st1.file_bytes, (unsigned long long)st0.file_bytes);
				lu_seq_free(&ref);
				lu_seq_free(&s);
			}
	lu_watchdog(NULL, 0);
}

/* Raw records are views into the decompressed copy: within a shard, two
 * records' data lie exactly as far apart as their offsets in the
 * decompressed stream, and a view kept after its batch was released still
 * holds its bytes until close. Too small a cache (one byte short): no
 * cache at all (stats say 0), the same sequence, copies. */
static void test_cache_views(void)
{
	lu_watchdog("cache views", 120);
	const lu_dataset *t = ds(V_IDX, 2);
	uint64_t total = cache_want(t, 0, 1);
	for (int si = 0; si < 2; si++) {
		lu_seq ref;
		lu_seq_init(&ref);
		for (int small = 0; small <= 1; small++) {
			rio_loader_opts o;
			base_opts(&o);
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			o.cache = small ? total - 1 : total;
			char what[120];
			snprintf(what, sizeof what, "cache views, %s, cache %llu of %llu bytes",
			         shname(o.shuffle), (unsigned long long)o.cache,
			         (unsigned long long)total);
			rio_loader *l = open_on(t, &o, what);
			if (!l)
				continue;
			const uint8_t *base[LU_MAXSHARDS] = {0};
			size_t apart = 0;
			const uint8_t *keep = NULL;
			uint8_t kept[16];
			size_t kept_n = 0;
			lu_seq s;
			lu_seq_init(&s);
			rio_batch *b;
			int rc;
			while ((rc = rio_loader_next(l, &b)) == 1) {
				lu_seq_add(&s, b, t);
				for (size_t i = 0; i < b->count; i++) {
					const rio_batch_record *r = &b->records[i];
					if (!r->data)
						continue;
					const uint8_t *b0 = r->data - t->off[r->shard][r->index] - RIO_HEADER_SIZE;
					if (!base[r->shard])
						base[r->shard] = b0;
					apart += base[r->shard] != b0;
					if (!keep && r->size >= sizeof kept) {
						keep = r->data;
						kept_n = sizeof kept;
						memcpy(kept, r->data, kept_n);
					}
				}
				rio_loader_release(l, b);
			}
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			CHECK(rc == 0 && s.n == t->total && s.bad_payload == 0,
			      "%s: %d (%s), %zu records of %llu, %zu wrong", what, rc, rio_strerror(rc),
			      s.n, (unsigned long long)t->total, s.bad_payload);
			CHECK(st.cache_bytes == (small ? 0 : total),
			      "%s: stats.cache_bytes %llu, want %llu", what,
			      (unsigned long long)st.cache_bytes,
			      (unsigned long long)(small ? 0 : total));
			if (!small) {
				CHECK(apart == 0, "%s: %zu records not views of one decompressed shard", what,
				      apart);
				CHECK(keep && memcmp(keep, kept, kept_n) == 0,
				      "%s: a view changed after its batch was released", what);
				ref = s;
			} else {
				char diff[400];
				CHECK(lu_seq_equal(&ref, 0, &s, 0), "%s: not the cached sequence: %s", what,
				      lu_seq_diff(&ref, 0, &s, 0, diff, sizeof diff));
				lu_seq_free(&s);
			}
			rio_loader_close(l);
		}
		lu_seq_free(&ref);
	}
	lu_watchdog(NULL, 0);
}

/* Plain and compressed shards in one set: with map, the compressed ones
 * are cached and the plain ones mapped, the placed path serves both;
 * without map the plain ones would be read, so nothing is cached. The
 * same sequence every way. */
static void test_cache_mixed(void)
{
	lu_watchdog("cache mixed", 120);
	static const size_t counts[3] = {150, 90, 200};
	lu_dataset d;
	lu_dataset_make(&d, &(lu_spec){.name = "cachemix",
	                               .tag = 17,
	                               .counts = counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x7u});
	compress_file(d.paths[1], RIO_COMPRESSION_LZ4);
	compress_file(d.paths[2], RIO_COMPRESSION_GZIP);
	for (int si = 0; si < 2; si++) {
		rio_loader_opts o;
		base_opts(&o);
		o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
		lu_seq ref;
		lu_seq_init(&ref);
		rio_loader_stats st;
		cache_run(&d, &o, 2, &ref, &st, "mixed, no cache");
		for (int map = 0; map <= 1; map++) {
			lu_seq s;
			lu_seq_init(&s);
			o.cache = 1 << 24;
			o.map = map;
			char what[80];
			snprintf(what, sizeof what, "cache, plain and compressed shards, %s, map %d",
			         shname(o.shuffle), map);
			cache_run(&d, &o, 2, &s, &st, what);
			uint64_t want = map ? d.off[1][counts[1]] + d.off[2][counts[2]] : 0;
			char diff[400];
			CHECK(st.cache_bytes == want && s.bad_payload == 0 && lu_seq_equal(&ref, 0, &s, 0),
			      "%s: cache %llu (want %llu), %zu wrong payloads, uncached vs cached: %s",
			      what, (unsigned long long)st.cache_bytes, (unsigned long long)want,
			      s.bad_payload, lu_seq_diff(&ref, 0, &s, 0, diff, sizeof diff));
			lu_seq_free(&s);
		}
		lu_seq_free(&ref);
	}
	lu_dataset_free(&d);
	lu_watchdog(NULL, 0);
}

/* Decoded batches from the cache: the same values, batch for batch, as
 * without it (NONE and BUFFER, 2 ranks). */
static void test_cache_decoded(void)
{
	lu_watchdog("cache decoded", 240);
	static const size_t counts[3] = {120, 300, 90};
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_FLOAT, &cols, &ncols, NULL), 0);
	for (int c = 0; c < 3; c++) {
		char name[32];
		snprintf(name, sizeof name, "cachedec-%s", cname(codecs[c]));
		lu_dataset d;
		lu_dataset_make(&d, &(lu_spec){.name = name,
		                               .tag = 15,
		                               .counts = counts,
		                               .nshards = 3,
		                               .comp = codecs[c],
		                               .idx_mask = 0x5u,
		                               .example = 1});
		for (int si = 0; si < 2; si++)
			for (int r = 0; r < 2; r++) {
				rio_loader_opts o;
				base_opts(&o);
				o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
				o.batch_size = 8;
				o.columns = cols;
				o.ncolumns = ncols;
				o.world = 2;
				o.rank = r;
				char what[160];
				snprintf(what, sizeof what, "cache, decoded %s, %s, rank %d of 2",
				         cname(codecs[c]), shname(o.shuffle), r);
				/* the columns themselves, batch by batch */
				rio_loader *l[2];
				l[0] = open_on(&d, &o, what);
				o.cache = 1 << 20;
				l[1] = open_on(&d, &o, what);
				if (!l[0] || !l[1]) {
					rio_loader_close(l[0]);
					rio_loader_close(l[1]);
					continue;
				}
				rio_loader_stats st;
				rio_loader_stats_get(l[1], &st);
				CHECK(st.cache_bytes > 0, "%s: no cache", what);
				size_t diff = 0, nb = 0, bad = 0;
				int rc0, rc1;
				for (;;) {
					rio_batch *a, *b;
					rc0 = rio_loader_next(l[0], &a);
					rc1 = rio_loader_next(l[1], &b);
					if (rc0 != 1 || rc1 != 1)
						break;
					nb++;
					bad += lu_check_columns(b, &d, 1);
					diff += a->count != b->count;
					for (size_t k = 0; k < a->ncolumns && a->count == b->count; k++) {
						size_t n = a->count * a->columns[k].length *
						           rio_dtype_size(a->columns[k].type);
						diff += memcmp(a->columns[k].host, b->columns[k].host, n) != 0;
					}
					rio_loader_release(l[0], a);
					rio_loader_release(l[1], b);
				}
				CHECK(rc0 == 0 && rc1 == 0 && nb > 0 && diff == 0 && bad == 0,
				      "%s: ended %d / %d after %zu batches, %zu batches differ, %zu wrong "
				      "values",
				      what, rc0, rc1, nb, diff, bad);
				rio_loader_close(l[0]);
				rio_loader_close(l[1]);
			}
		lu_dataset_free(&d);
	}
	free(cols);
	lu_watchdog(NULL, 0);
}

/* Resume with the cache: the rest of the run an uninterrupted cached
 * loader gives (inside shards, across them, across epochs); and a state
 * saved without the cache, restored with it, gives the uncached rest. */
static void test_cache_resume(void)
{
	lu_watchdog("cache resume", 300);
	for (int c = 0; c < 3; c++)
		for (int si = 0; si < 2; si++) {
			rio_loader_opts o;
			base_opts(&o);
			o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
			o.interleave = 2 + (size_t)c % 2;
			o.cache = 1 << 24;
			char what[160];
			snprintf(what, sizeof what, "cache resume %s %s", cname(codecs[c]),
			         shname(o.shuffle));
			resume_case(ds(c == 1 ? V_NOIDX : V_IDX, c), &o, what);
			/* saved without the cache, restored with it */
			const lu_dataset *t = ds(V_IDX, c);
			lu_seq ref, a, b;
			lu_seq_init(&ref);
			lu_seq_init(&a);
			lu_seq_init(&b);
			o.cache = 0;
			rio_loader *l = open_on(t, &o, what);
			if (!l)
				continue;
			lu_drain_through(l, &ref, t, 1);
			rio_loader_close(l);
			l = open_on(t, &o, what);
			size_t k = 40;
			CU_ASSERT_EQUAL(lu_take(l, &a, t, k), 0);
			uint8_t blob[4096];
			int size = rio_loader_state_save(l, blob, sizeof blob);
			rio_loader_close(l);
			o.cache = 1 << 24;
			l = open_on(t, &o, what);
			if (!l)
				continue;
			int rc = rio_loader_state_restore(l, blob, (size_t)size);
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			CHECK(rc == 0 && st.cache_bytes > 0, "%s: restore %d (%s), cache %llu", what, rc,
			      rio_loader_error(l)->message, (unsigned long long)st.cache_bytes);
			rc = lu_drain_through(l, &b, t, 1);
			char diff[400];
			CHECK(rc == 0 && b.bad_payload == 0 && lu_seq_equal(&ref, k, &b, 0),
			      "%s: a state saved without the cache, resumed with it: %d, the rest "
			      "differs: %s",
			      what, rc, lu_seq_diff(&ref, k, &b, 0, diff, sizeof diff));
			rio_loader_close(l);
			lu_seq_free(&ref);
			lu_seq_free(&a);
			lu_seq_free(&b);
		}
	lu_watchdog(NULL, 0);
}

/* Damage and the cache: a record whose data CRC is wrong inside a valid
 * stream (the CRCs are checked once, as the copy is made), a stream that
 * cannot be decompressed whole (a flipped compressed byte, a file cut
 * short): nothing is cached, and the epoch fails as without the cache,
 * with the same error (shard, record, offset in the decompressed stream)
 * after the same batches. Under SKIP nothing is cached. */
static void test_cache_damage(void)
{
	lu_watchdog("cache damage", 240);
	static const size_t counts[3] = {120, 300, 90};
	const uint64_t bad = 140;
	for (int c = 0; c < 3; c++)
		for (int kind = 0; kind < 3; kind++) {
			char name[40];
			snprintf(name, sizeof name, "cachedmg-%s-%d", cname(codecs[c]), kind);
			lu_dataset d;
			lu_dataset_make(&d, &(lu_spec){.name = name,
			                               .tag = 16,
			                               .counts = counts,
			                               .nshards = 3,
			                               .comp = RIO_COMPRESSION_NONE,
			                               .idx_mask = 0x7u});
			size_t n;
			uint8_t *raw = tu_read_file(d.paths[1], &n);
			CU_ASSERT_FATAL(raw != NULL);
			if (kind == 0) /* a data CRC */
				raw[d.off[1][bad] + RIO_HEADER_SIZE + 3] ^= 0x10;
			tu_write_file(d.paths[1], raw, n);
			free(raw);
			for (size_t sh = 0; sh < 3; sh++)
				compress_file(d.paths[sh], codecs[c]);
			if (kind > 0) { /* the compressed stream itself */
				uint8_t *z = tu_read_file(d.paths[1], &n);
				CU_ASSERT_FATAL(z != NULL && n > 64);
				if (kind == 1)
					z[n / 2] ^= 0x55;
				tu_write_file(d.paths[1], z, kind == 2 ? n / 2 : n);
				free(z);
			}
			static const char *kname[3] = {"a wrong data CRC", "a flipped compressed byte",
			                               "a stream cut in half"};
			for (int si = 0; si < 2; si++) {
				int rcs[2];
				rio_error errs[2];
				lu_seq s[2];
				rio_loader_stats st[2];
				for (int cached = 0; cached < 2; cached++) {
					rio_loader_opts o;
					base_opts(&o);
					o.shuffle = si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE;
					o.batch_size = 8;
					o.cache = cached ? 1 << 24 : 0;
					lu_seq_init(&s[cached]);
					rio_loader *l = NULL;
					rcs[cached] = rio_loader_open(&l, d.prefix, &o);
					if (rcs[cached] == 0)
						rcs[cached] = lu_drain_epoch(l, &s[cached], &d);
					errs[cached] = *rio_loader_error(l);
					rio_loader_stats_get(l, &st[cached]);
					rio_loader_close(l);
				}
				char what[160];
				snprintf(what, sizeof what, "cache, %s %s, %s", cname(codecs[c]), kname[kind],
				         shname(si ? RIO_SHUFFLE_BUFFER : RIO_SHUFFLE_NONE));
				CHECK(st[1].cache_bytes == 0,
				      "%s: stats.cache_bytes %llu", what,
				      (unsigned long long)st[1].cache_bytes);
				char diff[400];
				CHECK(rcs[0] < 0 && rcs[1] == rcs[0] && errs[1].offset == errs[0].offset &&
				          errs[1].record == errs[0].record &&
				          !strcmp(errs[1].message, errs[0].message) &&
				          strstr(errs[1].message, "data-00001-of-00003") &&
				          lu_seq_equal(&s[0], 0, &s[1], 0),
				      "%s: uncached %d \"%s\", cached %d \"%s\"; batches before: %s", what,
				      rcs[0], errs[0].message, rcs[1], errs[1].message,
				      lu_seq_diff(&s[0], 0, &s[1], 0, diff, sizeof diff));
				if (kind == 0)
					CHECK(rcs[1] == RIO_ECORRUPT_DATA && errs[1].record == bad &&
					          errs[1].offset == d.off[1][bad],
					      "%s: %d record %llu offset %llu, want RIO_ECORRUPT_DATA at record "
					      "%llu offset %llu",
					      what, rcs[1], (unsigned long long)errs[1].record,
					      (unsigned long long)errs[1].offset, (unsigned long long)bad,
					      (unsigned long long)d.off[1][bad]);
				lu_seq_free(&s[0]);
				lu_seq_free(&s[1]);
			}
			/* verify_crc = 0: a wrong data CRC is not looked at; cached,
			 * the same records as without the cache */
			if (kind == 0) {
				lu_seq s0, s1;
				lu_seq_init(&s0);
				lu_seq_init(&s1);
				rio_loader_stats st0, st1;
				rio_loader_opts o;
				base_opts(&o);
				o.shuffle = RIO_SHUFFLE_BUFFER;
				o.verify_crc = 0;
				cache_run(&d, &o, 2, &s0, &st0, "cache, verify_crc = 0");
				o.cache = 1 << 24;
				cache_run(&d, &o, 2, &s1, &st1, "cache, verify_crc = 0");
				char diff[400];
				CHECK(st1.cache_bytes > 0 && s0.n == 2 * d.total && lu_seq_equal(&s0, 0, &s1, 0),
				      "cache, %s, verify_crc = 0: cache %llu, %zu records; the uncached "
				      "sequence? %s",
				      cname(codecs[c]), (unsigned long long)st1.cache_bytes, s1.n,
				      lu_seq_diff(&s0, 0, &s1, 0, diff, sizeof diff));
				lu_seq_free(&s0);
				lu_seq_free(&s1);
			}
			/* SKIP: never cached */
			rio_loader_opts o;
			base_opts(&o);
			o.on_damage = RIO_DAMAGE_SKIP;
			o.cache = 1 << 24;
			rio_loader *l = open_on(&d, &o, "cache under SKIP");
			if (l) {
				rio_loader_stats st;
				rio_loader_stats_get(l, &st);
				CHECK(st.cache_bytes == 0, "cache under SKIP: %llu bytes cached",
				      (unsigned long long)st.cache_bytes);
				rio_loader_close(l);
			}
			lu_dataset_free(&d);
		}
	lu_watchdog(NULL, 0);
}

/* ---- the program ------------------------------------------------------------------ */

static const tu_test seq_tests[] = {
    {"0-byte records leading batches", test_empty_records},
    {"the uncompressed copy's sequence (sizes 0 B to 200 KiB, small chunks, NONE and BUFFER)",
     test_same_as_plain},
    {"RECORDS sharding over 2..5 ranks: exactly once", test_records_sharding},
    {"1, 2 and 4 workers: the same sequence", test_workers},
    {NULL, NULL},
};

static const tu_test resume_tests[] = {
    {"resume inside shards, across shards and epochs", test_resume},
    {"rio_loader_set_epoch mid-epoch", test_set_epoch},
    {NULL, NULL},
};

static const tu_test decode_tests[] = {
    {"Examples into columns from compressed shards", test_decode},
    {"an Example that does not match the columns", test_decode_mismatch},
    {NULL, NULL},
};

static const tu_test damage_tests[] = {
    {"damaged streams (cut, flipped byte, bad data CRC) with .idx", test_damage},
    {"damaged streams without .idx", test_damage_noidx},
    {"a wrong data CRC in decoded streams, 1, 2 and 4 workers", test_decoded_crc},
    {"records over max_record_size", test_too_large},
    {"a stream shorter than its .idx", test_stream_shorter_than_index},
    {"a stream cut in its trailer", test_cut_trailer},
    {NULL, NULL},
};

static const tu_test memory_tests[] = {
    {"memory of a piece starting mid-shard", test_memory_mid_shard},
    {NULL, NULL},
};

static const tu_test cache_tests[] = {
    {"cache: the uncached sequence in every order, 1-4 workers, 2 ranks", test_cache_same},
    {"cache: raw records are views of the decompressed copy; too small a cache",
     test_cache_views},
    {"cache: plain (mapped) and compressed shards together", test_cache_mixed},
    {"cache: decoded batches as without it", test_cache_decoded},
    {"cache: resume", test_cache_resume},
    {"cache: damaged records and streams", test_cache_damage},
    {NULL, NULL},
};

static const tu_suite suites[] = {
    {"sequences", seq_tests}, {"resume", resume_tests}, {"decoding", decode_tests},
    {"damage", damage_tests}, {"memory", memory_tests}, {"cache", cache_tests},
    {NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * test_loader_damage.c — --skip-damaged accounting: nothing lost without
 * a count, and the same counts in every shuffle mode.
 *
 * The matrix: codec (none, gzip, zlib, lz4) x index state (no .idx, a good
 * one, a stale one from other content, a partial one cut mid-line, an
 * empty one, one longer than its shard) x damage (none, a bit flipped in a
 * payload, in a length, the tail cut mid-payload, cut mid-header) x shuffle
 * mode (none, buffer, global; global needs uncompressed shards and is an
 * error naming the shard otherwise). Three shards of 40 raw records; the
 * middle one (shard 1) gets the damage and the index state, the others
 * keep good .idx files.
 *
 * Under SKIP: delivered + stats.skipped = the records the shards hold, by
 * the file or by the .idx, whichever is more (a damaged region is one
 * record; in a compressed shard a damaged length stops the stream, so
 * without an .idx the records after it are unknown: the 20 before it and
 * the damage), every delivered record is an undamaged one, once, and the
 * counts are the same in every mode; an .idx that disagrees is counted in
 * stats.index_mismatches and named by rio_loader_warning(). Under FAIL:
 * an error whose message names shard 1 (or its .idx).
 */
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NREC = 40, BAD = 1 };
enum idx_state { IDX_NONE, IDX_GOOD, IDX_STALE, IDX_PARTIAL, IDX_EMPTY, IDX_LONGER, NIDX };
enum damage { DMG_NONE, DMG_PAYLOAD, DMG_LENGTH, DMG_TAIL, DMG_MIDHEADER, NDMG };
static const char *idx_name[NIDX] = {"no .idx", "good .idx", "stale .idx", "partial .idx",
                                     "empty .idx", ".idx longer than the shard"};
static const char *dmg_name[NDMG] = {"undamaged", "payload bit flip", "length bit flip",
                                     "tail cut mid-payload", "tail cut mid-header"};
static const rio_compression codecs[4] = {RIO_COMPRESSION_NONE, RIO_COMPRESSION_GZIP,
                                          RIO_COMPRESSION_ZLIB, RIO_COMPRESSION_LZ4};
static const rio_shuffle shuffles[3] = {RIO_SHUFFLE_NONE, RIO_SHUFFLE_BUFFER,
                                        RIO_SHUFFLE_GLOBAL};
static const size_t counts[3] = {NREC, NREC, NREC};

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("\n    line %d: ", __LINE__);                                   \
			printf(__VA_ARGS__);                                                \
			printf("\n");                                                       \
		}                                                                          \
		CU_ASSERT(cond);                                                           \
	} while (0)

/* Writes an .idx of `n` lines at `path`: the offsets/sizes given. */
static void write_idx(const char *path, const uint64_t *off, const uint64_t *size, size_t n)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%llu %llu\n", (unsigned long long)off[i], (unsigned long long)size[i]);
	CU_ASSERT_FATAL(fclose(f) == 0);
}

/* Makes the three-shard set with shard 1 damaged, compressed and indexed
 * as asked; *expect: the records the shards hold (file or .idx, whichever
 * is more). */
static void make_case(lu_dataset *d, rio_compression c, int is, int dk, uint64_t *expect)
{
	char name[64];
	snprintf(name, sizeof name, "dmg-%d-%d-%d", (int)c, is, dk);
	lu_dataset_make(d, &(lu_spec){.name = name,
	                              .tag = 11,
	                              .counts = counts,
	                              .nshards = 3,
	                              .comp = RIO_COMPRESSION_NONE,
	                              .idx_mask = 0x7});
	const char *path = d->paths[BAD];
	size_t size;
	uint8_t *buf = tu_read_file(path, &size);
	CU_ASSERT_FATAL(buf != NULL);
	const uint64_t *off = d->off[BAD];
	uint64_t framed[NREC + 8], offs[NREC + 8];
	for (size_t i = 0; i < NREC; i++) {
		offs[i] = off[i];
		framed[i] = (i + 1 < NREC ? off[i + 1] : size) - off[i];
	}
	uint64_t file_records = NREC;
	switch (dk) {
	case DMG_PAYLOAD: buf[off[10] + RIO_HEADER_SIZE + 1] ^= 0x10; break;
	case DMG_LENGTH:
		buf[off[20]] ^= 0x02;
		if (c != RIO_COMPRESSION_NONE)
			file_records = 21; /* no resync in a compressed stream */
		break;
	case DMG_TAIL: size = off[NREC - 1] + RIO_HEADER_SIZE + 2; break;
	case DMG_MIDHEADER: size = off[NREC - 1] + 5; break;
	}
	uint8_t *z = buf;
	size_t zn = size;
	if (c != RIO_COMPRESSION_NONE)
		z = lu_compress(c, buf, size, &zn);
	tu_write_file(path, z, zn);
	if (z != buf)
		free(z);
	free(buf);

	char ipath[700];
	snprintf(ipath, sizeof ipath, "%s.idx", path);
	uint64_t idx_records = 0;
	switch (is) {
	case IDX_NONE: unlink(ipath); break;
	case IDX_GOOD: idx_records = NREC; break; /* lu_dataset_make wrote it */
	case IDX_STALE: {
		/* 50 records of other sizes */
		uint64_t so[50], ss[50], at = 0;
		for (size_t i = 0; i < 50; i++) {
			so[i] = at;
			ss[i] = 16 + 7 * i;
			at += ss[i];
		}
		write_idx(ipath, so, ss, 50);
		idx_records = 50;
		break;
	}
	case IDX_PARTIAL: {
		size_t n;
		uint8_t *t = tu_read_file(ipath, &n);
		tu_write_file(ipath, t, n / 2 + 3); /* mid-line, most likely */
		free(t);
		idx_records = 0; /* at most NREC: the file decides */
		break;
	}
	case IDX_EMPTY: tu_write_file(ipath, "", 0); break;
	case IDX_LONGER:
		for (size_t i = NREC; i < NREC + 5; i++) {
			offs[i] = offs[i - 1] + framed[i - 1];
			framed[i] = framed[NREC - 1];
		}
		write_idx(ipath, offs, framed, NREC + 5);
		idx_records = NREC + 5;
		break;
	}
	uint64_t bad = file_records > idx_records ? file_records : idx_records;
	*expect = 2 * NREC + bad;
}

/* 1 when record `i` of shard 1 is intact in damage kind dk. */
static int intact(int dk, rio_compression c, uint64_t i)
{
	switch (dk) {
	case DMG_PAYLOAD: return c == RIO_COMPRESSION_NONE ? i != 10 : i < 10;
	case DMG_LENGTH: return c == RIO_COMPRESSION_NONE ? i != 20 : i < 20;
	case DMG_TAIL:
	case DMG_MIDHEADER: return i != NREC - 1;
	}
	return 1;
}

static void run_case(rio_compression c, int is, int dk)
{
	lu_dataset d;
	uint64_t expect;
	make_case(&d, c, is, dk, &expect);
	char what[200];
	snprintf(what, sizeof what, "%s, %s, %s", rio_compression_name(c), idx_name[is],
	         dmg_name[dk]);
	const char *base = strrchr(d.paths[BAD], '/') + 1;
	uint64_t first_n = UINT64_MAX, first_skipped = 0;
	int warned_any = 0;
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = shuffles[si];
		o.batch_size = 8;
		o.on_damage = RIO_DAMAGE_SKIP;
		rio_loader *l = NULL;
		int orc = rio_loader_open(&l, d.prefix, &o);
		if (c != RIO_COMPRESSION_NONE && o.shuffle == RIO_SHUFFLE_GLOBAL) {
			/* global shuffling needs uncompressed shards: an error */
			CHECK(orc == RIO_EUNSUPPORTED && l &&
			          strstr(rio_loader_error(l)->message, "data-0000"),
			      "%s, GLOBAL: open = %d (%s), want RIO_EUNSUPPORTED naming a shard", what,
			      orc, rio_strerror(orc));
			rio_loader_close(l);
			continue;
		}
		CHECK(orc == 0, "%s, shuffle %d, SKIP: open = %d (%s) %s", what, si, orc,
		      rio_strerror(orc), l ? rio_loader_error(l)->message : "");
		if (orc < 0) {
			rio_loader_close(l);
			continue;
		}
		lu_seq s;
		lu_seq_init(&s);
		int rc = lu_drain_epoch(l, &s, &d);
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		char warning[700];
		size_t wl = rio_loader_warning(l, warning, sizeof warning);
		warned_any |= wl > 0;
		CHECK(rc == 0, "%s, shuffle %d, SKIP: next = %d (%s) %s", what, si, rc,
		      rio_strerror(rc), rio_loader_error(l)->message);
		CHECK(s.n + st.skipped == expect,
		      "%s, shuffle %d, SKIP: %zu delivered + %llu skipped != %llu the shards hold",
		      what, si, s.n, (unsigned long long)st.skipped, (unsigned long long)expect);
		CHECK(wl == 0 || (st.index_mismatches > 0 && strstr(warning, base) &&
		                  strstr(warning, ".idx")),
		      "%s, shuffle %d: warning \"%s\" with %llu index_mismatches", what, si, warning,
		      (unsigned long long)st.index_mismatches);
		unsigned hits[3 * NREC] = {0};
		size_t outside = lu_count_hits(&d, &s, hits), wrong = 0;
		for (uint32_t sh = 0; sh < 3; sh++)
			for (uint64_t i = 0; i < NREC; i++)
				wrong += hits[sh * NREC + i] > 1 ||
				         (hits[sh * NREC + i] == 1 && sh == BAD && !intact(dk, c, i)) ||
				         (hits[sh * NREC + i] == 0 && (sh != BAD || dk == DMG_NONE));
		CHECK(outside == 0 && wrong == 0 && s.bad_payload == 0,
		      "%s, shuffle %d, SKIP: %zu records outside the data, %zu not as expected, "
		      "%zu with wrong bytes",
		      what, si, outside, wrong, s.bad_payload);
		if (first_n == UINT64_MAX) {
			first_n = s.n;
			first_skipped = st.skipped;
		}
		CHECK(s.n == first_n && st.skipped == first_skipped,
		      "%s, shuffle %d: %zu delivered, %llu skipped; the first mode gave %llu, %llu",
		      what, si, s.n, (unsigned long long)st.skipped, (unsigned long long)first_n,
		      (unsigned long long)first_skipped);
		lu_seq_free(&s);
		rio_loader_close(l);
	}
	/* an .idx that disagrees is never used silently (a compressed
	 * shard's is found out while its stream is read: only where the
	 * stream is whole) */
	int disagrees = is == IDX_STALE || is == IDX_EMPTY || is == IDX_LONGER ||
	                (is == IDX_PARTIAL && c == RIO_COMPRESSION_NONE);
	if (disagrees && (c == RIO_COMPRESSION_NONE || dk == DMG_NONE))
		CHECK(warned_any, "%s: no warning about the .idx", what);
	if (is == IDX_GOOD || is == IDX_NONE)
		CHECK(!warned_any, "%s: a warning about a good (or no) .idx", what);

	/* FAIL: an error naming shard 1 (or its .idx) */
	if (dk != DMG_NONE || (disagrees && is != IDX_PARTIAL)) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.batch_size = 8;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, d.prefix, &o);
		lu_seq s;
		lu_seq_init(&s);
		if (rc == 0)
			rc = lu_drain_epoch(l, &s, &d);
		CHECK(rc < 0 && l && strstr(rio_loader_error(l)->message, base),
		      "%s, FAIL: rc %d (%s), message \"%s\" does not name %s", what, rc,
		      rio_strerror(rc), l ? rio_loader_error(l)->message : "", base);
		lu_seq_free(&s);
		rio_loader_close(l);
	}
	lu_dataset_free(&d);
}

static void test_matrix(void)
{
	lu_watchdog("damage matrix", 600);
	for (int ci = 0; ci < 4; ci++)
		for (int is = 0; is < NIDX; is++)
			for (int dk = 0; dk < NDMG; dk++)
				run_case(codecs[ci], is, dk);
	lu_watchdog(NULL, 0);
}

static const tu_test tests[] = {
    {"codec x .idx state x damage x shuffle mode: delivered + skipped = held",
     test_matrix},
    {NULL, NULL},
};

static const tu_suite suites[] = {{"loader damage accounting", tests}, {NULL, NULL}};

int main(int argc, char **argv)
{
	(void)argc;
	return tu_run(argv[0], suites);
}

/*
 * test_loader.c — the loader (loader.h), held to its header.
 *
 * Datasets of raw records whose bytes say where they come from (shard,
 * index; tests/loadutil.h) are written with rio_writer: seven uneven shards
 * of 0, 1, 13, 64, 65, 130 and 200 records, with and without .idx sidecars,
 * plain and gzip/zlib/lz4 compressed, and datasets of tf.train.Examples.
 * One loader per rank runs in this process, so the properties of a whole
 * world can be checked at once:
 *   - every record exactly once per epoch over the ranks, for every shuffle
 *     mode, sharding and world size from 1 to 5, with the counts the loader
 *     announces (records, full batches, batches) and the bytes it delivers;
 *   - the order depends on the seed, epoch, rank and world only: never on
 *     the workers or the I/O backend; NONE keeps shard order;
 *   - drop_remainder, rio_loader_set_epoch, and saved states that resume
 *     exactly where an uninterrupted loader would be (and are refused when
 *     they belong to another loader, or are damaged);
 *   - decoding into dense columns, checked value by value, and records that
 *     do not match the columns (an error under FAIL, skipped under SKIP);
 *   - damaged and truncated shards: the error after the batches before it,
 *     naming the shard, or every other record under SKIP; never a hang
 *     (a watchdog ends the program if a test runs too long);
 *   - rank and world from Open MPI, PMI and Slurm variables, the errors of
 *     open, -ENOBUFS for a consumer holding too many batches, two loaders at
 *     once, and the statistics.
 * The io_uring backend is compared with pread in test_loader_uring.
 */
#include "config.h"
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


static const rio_shuffle all_shuffles[3] = {RIO_SHUFFLE_NONE, RIO_SHUFFLE_BUFFER,
                                            RIO_SHUFFLE_GLOBAL};

/* ---- the datasets (written once, on first use) ---------------------------- */

static const size_t main_counts[7] = {0, 1, 13, 64, 65, 130, 200};
#define MAIN_TOTAL 473

enum { DS_MAIN, DS_NOIDX, DS_GZ, DS_ZZ, DS_LZ4, DS_TWO, DS_OTHER, DS_COUNT };
static lu_dataset datasets[DS_COUNT];
static int made[DS_COUNT];

static const lu_dataset *dataset(int which)
{
	static const size_t two_counts[2] = {10, 3};
	static const size_t other_counts[7] = {0, 1, 13, 64, 65, 130, 199};
	static const lu_spec specs[DS_COUNT] = {
	    [DS_MAIN] = {.name = "main",
	                 .tag = 1,
	                 .counts = main_counts,
	                 .nshards = 7,
	                 .comp = RIO_COMPRESSION_NONE,
	                 .idx_mask = 0x7f},
	    [DS_NOIDX] = {.name = "noidx",
	                  .tag = 1,
	                  .counts = main_counts,
	                  .nshards = 7,
	                  .comp = RIO_COMPRESSION_NONE,
	                  .idx_mask = 0},
	    [DS_GZ] = {.name = "gz",
	               .tag = 1,
	               .counts = main_counts,
	               .nshards = 7,
	               .comp = RIO_COMPRESSION_GZIP,
	               .idx_mask = 0x7f},
	    [DS_ZZ] = {.name = "zz",
	               .tag = 1,
	               .counts = main_counts,
	               .nshards = 7,
	               .comp = RIO_COMPRESSION_ZLIB,
	               .idx_mask = 0},
	    [DS_LZ4] = {.name = "lz4",
	                .tag = 1,
	                .counts = main_counts,
	                .nshards = 7,
	                .comp = RIO_COMPRESSION_LZ4,
	                .idx_mask = 0x2a},
	    [DS_TWO] = {.name = "two",
	                .tag = 2,
	                .counts = two_counts,
	                .nshards = 2,
	                .comp = RIO_COMPRESSION_NONE,
	                .idx_mask = 0x3},
	    [DS_OTHER] = {.name = "other",
	                  .tag = 1,
	                  .counts = other_counts,
	                  .nshards = 7,
	                  .comp = RIO_COMPRESSION_NONE,
	                  .idx_mask = 0x7f},
	};
	if (!made[which]) {
		lu_dataset_make(&datasets[which], &specs[which]);
		made[which] = 1;
	}
	return &datasets[which];
}

/* Reads one epoch from each of the loaders l[0..n) in turns (one batch
 * each), into s[r]; rcs[r] gets each one's final return. */
static void drain_round_robin(rio_loader **l, lu_seq *s, int *rcs, int n, const lu_dataset *d)
{
	int done[16] = {0}, active = n;
	while (active) {
		for (int r = 0; r < n; r++) {
			if (done[r])
				continue;
			rio_batch *b;
			int rc = rio_loader_next(l[r], &b);
			if (rc == 1) {
				lu_seq_add(&s[r], b, d);
				rio_loader_release(l[r], b);
			} else {
				rcs[r] = rc;
				done[r] = 1;
				active--;
			}
		}
	}
}

/* ---- options, dtypes, column specs ------------------------------------------ */

static void test_opts_defaults(void)
{
	rio_loader_opts o;
	memset(&o, 0xab, sizeof o);
	rio_loader_opts_init(&o);
	CU_ASSERT_EQUAL(o.rank, -1);
	CU_ASSERT_EQUAL(o.world, -1);
	CU_ASSERT_EQUAL(o.sharding, RIO_SHARD_AUTO);
	CU_ASSERT_EQUAL(o.batch_size, 32);
	CU_ASSERT_EQUAL(o.drop_remainder, 0);
	CU_ASSERT_EQUAL(o.shuffle, RIO_SHUFFLE_NONE);
	CU_ASSERT_EQUAL(o.seed, 0);
	CU_ASSERT_EQUAL(o.shuffle_buffer, 10000);
	CU_ASSERT_EQUAL(o.interleave, 4);
	CU_ASSERT_PTR_NULL(o.columns);
	CU_ASSERT_EQUAL(o.ncolumns, 0);
	CU_ASSERT_EQUAL(o.workers, 2);
	CU_ASSERT_EQUAL(o.prefetch, 0); /* automatic */
	CU_ASSERT_EQUAL(o.hold, 2);
	CU_ASSERT_EQUAL(o.chunk_bytes, 1u << 20);
	CU_ASSERT_EQUAL(o.io, RIO_IO_AUTO);
	CU_ASSERT_EQUAL(o.queue_depth, 128);
	CU_ASSERT_EQUAL(o.read_size, 256u << 10);
	CU_ASSERT_EQUAL(o.direct, 0);
	CU_ASSERT_EQUAL(o.verify_crc, 1);
	CU_ASSERT_EQUAL(o.on_damage, RIO_DAMAGE_FAIL);
	CU_ASSERT_EQUAL(o.max_record_size, RIO_DEFAULT_MAX_RECORD);
	CU_ASSERT_EQUAL(o.pinned, 0);
	CU_ASSERT_EQUAL(o.device_copy, 0);
	CU_ASSERT_EQUAL(o.device, 0);
}

static void test_dtypes(void)
{
	CU_ASSERT_STRING_EQUAL(rio_dtype_name(RIO_DTYPE_U8), "u8");
	CU_ASSERT_STRING_EQUAL(rio_dtype_name(RIO_DTYPE_F32), "f32");
	CU_ASSERT_STRING_EQUAL(rio_dtype_name(RIO_DTYPE_I64), "i64");
	CU_ASSERT_EQUAL(rio_dtype_size(RIO_DTYPE_U8), 1);
	CU_ASSERT_EQUAL(rio_dtype_size(RIO_DTYPE_F32), 4);
	CU_ASSERT_EQUAL(rio_dtype_size(RIO_DTYPE_I64), 8);
}

/* The option names: each value's name parses back to it, the names are
 * the documented ones, and anything else is refused with a message that
 * lists them all. */
static void test_option_names(void)
{
	static const char *const shuffles[] = {"none", "buffer", "global"};
	static const char *const shardings[] = {"auto", "files", "records"};
	static const char *const ios[] = {"auto", "uring", "pread"};
	rio_error err;
	for (int v = 0; v < 3; v++) {
		rio_shuffle s = (rio_shuffle)7;
		rio_sharding d = (rio_sharding)7;
		rio_io_backend b = (rio_io_backend)7;
		CU_ASSERT_STRING_EQUAL(rio_shuffle_name((rio_shuffle)v), shuffles[v]);
		CU_ASSERT_STRING_EQUAL(rio_sharding_name((rio_sharding)v), shardings[v]);
		CU_ASSERT_STRING_EQUAL(rio_io_name((rio_io_backend)v), ios[v]);
		CU_ASSERT_EQUAL(rio_shuffle_parse(shuffles[v], &s, &err), 0);
		CU_ASSERT_EQUAL(rio_sharding_parse(shardings[v], &d, &err), 0);
		CU_ASSERT_EQUAL(rio_io_parse(ios[v], &b, NULL), 0);
		CU_ASSERT_EQUAL((int)s, v);
		CU_ASSERT_EQUAL((int)d, v);
		CU_ASSERT_EQUAL((int)b, v);
	}
	CU_ASSERT_EQUAL(RIO_SHUFFLE_GLOBAL, 2);
	CU_ASSERT_EQUAL(RIO_SHARD_RECORDS, 2);
	CU_ASSERT_EQUAL(RIO_IO_PREAD, 2);
	CU_ASSERT_PTR_NULL(rio_shuffle_name((rio_shuffle)3));
	CU_ASSERT_PTR_NULL(rio_sharding_name((rio_sharding)-1));
	CU_ASSERT_PTR_NULL(rio_io_name((rio_io_backend)3));

	rio_shuffle s = RIO_SHUFFLE_BUFFER;
	CU_ASSERT_EQUAL(rio_shuffle_parse("sideways", &s, &err), -EINVAL);
	CU_ASSERT_EQUAL(s, RIO_SHUFFLE_BUFFER);
	CU_ASSERT_EQUAL(err.code, -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "'sideways': want none, buffer or global");
	rio_sharding d = RIO_SHARD_FILES;
	CU_ASSERT_EQUAL(rio_sharding_parse("rows", &d, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "'rows': want auto, files or records");
	CU_ASSERT_EQUAL(d, RIO_SHARD_FILES);
	rio_io_backend b = RIO_IO_URING;
	CU_ASSERT_EQUAL(rio_io_parse("nvme", &b, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "'nvme': want auto, uring or pread");
	/* exact names: no case folding, no blanks, no prefixes; NULL refused */
	static const char *const bad[] = {"", "None", "GLOBAL", " none", "none ", "glob", "auto2"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT_EQUAL(rio_shuffle_parse(bad[i], &s, NULL), -EINVAL);
	CU_ASSERT_EQUAL(rio_sharding_parse(NULL, &d, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "'(null)': want auto, files or records");
	CU_ASSERT_EQUAL(rio_io_parse("Uring", &b, NULL), -EINVAL);
	CU_ASSERT_EQUAL(b, RIO_IO_URING);
}

static void test_column_spec_parse(void)
{
	rio_column_spec *c = NULL;
	size_t n = 0;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(
	    rio_column_spec_parse("image:u8:784,label:i64:1,x:f32:3", &c, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(c[0].name, "image");
	CU_ASSERT_EQUAL(c[0].type, RIO_DTYPE_U8);
	CU_ASSERT_EQUAL(c[0].length, 784);
	CU_ASSERT_STRING_EQUAL(c[1].name, "label");
	CU_ASSERT_EQUAL(c[1].type, RIO_DTYPE_I64);
	CU_ASSERT_EQUAL(c[1].length, 1);
	CU_ASSERT_STRING_EQUAL(c[2].name, "x");
	CU_ASSERT_EQUAL(c[2].type, RIO_DTYPE_F32);
	CU_ASSERT_EQUAL(c[2].length, 3);
	/* no scale given: 0 (the default, meaning 1) or 1 itself */
	CU_ASSERT(c[2].scale == 0.0f || c[2].scale == 1.0f);
	free(c);

	c = NULL;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse("image:f32:784:0.5", &c, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(c[0].name, "image");
	CU_ASSERT_EQUAL(c[0].type, RIO_DTYPE_F32);
	CU_ASSERT_EQUAL(c[0].length, 784);
	CU_ASSERT_EQUAL(c[0].scale, 0.5f);
	free(c);

	c = NULL;
	CU_ASSERT_EQUAL_FATAL(
	    rio_column_spec_parse("image:f32:784:0.00392157,label:i64:1", &c, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT(c[0].scale > 0.0039215f && c[0].scale < 0.0039216f);
	CU_ASSERT_EQUAL(c[1].type, RIO_DTYPE_I64);
	free(c);

	char longname[200];
	memset(longname, 'n', 150);
	strcpy(longname + 150, ":u8:3");
	const char *bad[] = {"x:u9:3",
	                     "x:u8:0",
	                     "x",
	                     "",
	                     "x:u8",
	                     "x:u8:3x",
	                     ":u8:3",
	                     "x:u8:-1",
	                     "x:f32:3:abc",
	                     "a:u8:3,,b:u8:1",
	                     "a:u8:3,b:f32:x",
	                     longname};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = NULL;
		n = 12345;
		memset(&err, 0, sizeof err);
		int rc = rio_column_spec_parse(bad[i], &c, &n, &err);
		CHECK(rc == -EINVAL, "rio_column_spec_parse(\"%.40s\") = %d, want -EINVAL", bad[i],
		      rc);
		CHECK(err.message[0] != '\0', "no message for \"%.40s\"", bad[i]);
		if (rc == 0)
			free(c);
		/* err may be NULL */
		c = NULL;
		rc = rio_column_spec_parse(bad[i], &c, &n, NULL);
		CU_ASSERT_EQUAL(rc, -EINVAL);
		if (rc == 0)
			free(c);
	}
	/* the message names the bad item */
	memset(&err, 0, sizeof err);
	CU_ASSERT_EQUAL(rio_column_spec_parse("a:u8:3,bad:u9:3", &c, &n, &err), -EINVAL);
	CHECK(strstr(err.message, "bad") != NULL, "message \"%s\" does not name \"bad:u9:3\"",
	      err.message);
}

/* ---- every record exactly once --------------------------------------------- */

/* One epoch of W loaders (ranks 0..W-1) over d: the checks of one world. */
static void once_world(const lu_dataset *d, rio_shuffle sh, rio_sharding shd, int W, size_t bs)
{
	rio_loader *l[8] = {0};
	lu_seq s[8];
	int rcs[8] = {0};
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = sh;
	o.sharding = shd;
	o.world = W;
	o.batch_size = bs;
	o.seed = 11;
	for (int r = 0; r < W; r++)
		lu_seq_init(&s[r]);
	for (int r = 0; r < W; r++) {
		o.rank = r;
		l[r] = lu_open(d, &o);
		if (!l[r])
			goto out;
	}
	drain_round_robin(l, s, rcs, W, d);

	const char *what = rio_shuffle_name(sh), *how = rio_sharding_name(shd);
	uint64_t sum = 0, minn = UINT64_MAX, maxn = 0, start = 0;
	for (int r = 0; r < W; r++) {
		uint64_t n = s[r].n;
		sum += n;
		minn = n < minn ? n : minn;
		maxn = n > maxn ? n : maxn;
		CHECK(rcs[r] == 0, "%s %s world %d rank %d: epoch ended with %d (%s) %s", what, how,
		      W, r, rcs[r], rio_strerror(rcs[r]), rio_loader_error(l[r])->message);
		CHECK(rio_loader_rank(l[r]) == r && rio_loader_world(l[r]) == W,
		      "rank/world %d/%d, want %d/%d", rio_loader_rank(l[r]), rio_loader_world(l[r]),
		      r, W);
		CHECK(rio_loader_records(l[r]) == n,
		      "%s %s world %d rank %d: rio_loader_records %llu, delivered %llu", what, how,
		      W, r, (unsigned long long)rio_loader_records(l[r]), (unsigned long long)n);
		CHECK(rio_loader_full_batches(l[r]) == n / bs,
		      "%s %s world %d rank %d: full_batches %llu, want %llu", what, how, W, r,
		      (unsigned long long)rio_loader_full_batches(l[r]),
		      (unsigned long long)(n / bs));
		CHECK(rio_loader_batches(l[r]) == (n + bs - 1) / bs,
		      "%s %s world %d rank %d: batches %llu, want %llu", what, how, W, r,
		      (unsigned long long)rio_loader_batches(l[r]),
		      (unsigned long long)((n + bs - 1) / bs));
		int shape = lu_epoch_shape(&s[r], 0, bs, 0, n, 0);
		CHECK(shape == 0,
		      "%s %s world %d rank %d: %d batches numbered or sized wrong (%zu batches)",
		      what, how, W, r, shape, s[r].nb);
		CHECK(s[r].bad_payload == 0, "%s %s world %d rank %d: %zu records with wrong bytes",
		      what, how, W, r, s[r].bad_payload);
		CU_ASSERT_EQUAL(s[r].bad_meta, 0);
		rio_loader_stats st;
		rio_loader_stats_get(l[r], &st);
		CHECK(st.records == n && st.batches == s[r].nb && st.bytes == s[r].bytes &&
		          st.skipped == 0,
		      "%s %s world %d rank %d: stats records %llu batches %llu bytes %llu skipped "
		      "%llu,"
		      " delivered %llu / %zu / %llu",
		      what, how, W, r, (unsigned long long)st.records,
		      (unsigned long long)st.batches, (unsigned long long)st.bytes,
		      (unsigned long long)st.skipped, (unsigned long long)n, s[r].nb,
		      (unsigned long long)s[r].bytes);
		CHECK(rio_loader_epoch(l[r]) == 1 && rio_loader_position(l[r]) == 0,
		      "after the epoch: epoch %llu position %llu, want 1 0",
		      (unsigned long long)rio_loader_epoch(l[r]),
		      (unsigned long long)rio_loader_position(l[r]));

		/* which records the rank has */
		size_t wrong_rank = 0, unordered = 0;
		for (size_t i = 0; i < s[r].n; i++) {
			const lu_id *id = &s[r].rec[i];
			if (id->shard >= d->nshards || id->index >= d->count[id->shard]) {
				wrong_rank++;
				continue;
			}
			uint64_t ord = lu_ordinal(d, id->shard, id->index);
			if (shd == RIO_SHARD_FILES) {
				if (id->shard % (uint32_t)W != (uint32_t)r)
					wrong_rank++;
			} else if (ord < start || ord >= start + n) {
				wrong_rank++;
			}
			if (sh == RIO_SHUFFLE_NONE && i > 0) {
				uint64_t prev =
				    lu_ordinal(d, s[r].rec[i - 1].shard, s[r].rec[i - 1].index);
				if (shd == RIO_SHARD_RECORDS ? ord != prev + 1 : ord <= prev)
					unordered++;
			}
		}
		CHECK(wrong_rank == 0, "%s %s world %d rank %d: %zu records of other ranks", what,
		      how, W, r, wrong_rank);
		CHECK(unordered == 0, "%s %s world %d rank %d: %zu records out of shard order",
		      what, how, W, r, unordered);
		if (shd == RIO_SHARD_FILES) {
			uint64_t want = 0;
			for (size_t k = (size_t)r; k < d->nshards; k += (size_t)W)
				want += d->count[k];
			CHECK(n == want,
			      "%s FILES world %d rank %d: %llu records, its shards hold %llu", what,
			      W, r, (unsigned long long)n, (unsigned long long)want);
		}
		start += n;
	}
	CHECK(sum == d->total, "%s %s world %d: %llu records in all, want %llu", what, how, W,
	      (unsigned long long)sum, (unsigned long long)d->total);
	if (shd == RIO_SHARD_RECORDS)
		CHECK(maxn - minn <= 1, "%s RECORDS world %d: ranks hold %llu to %llu records",
		      what, W, (unsigned long long)minn, (unsigned long long)maxn);
	size_t not_once = lu_not_once(d, s, (size_t)W);
	CHECK(not_once == 0, "%s %s world %d: %zu records not delivered exactly once", what, how, W,
	      not_once);
out:
	for (int r = 0; r < W; r++) {
		rio_loader_close(l[r]);
		lu_seq_free(&s[r]);
	}
}

static void once_matrix(rio_shuffle sh)
{
	lu_watchdog("exactly once", 240);
	const lu_dataset *d = dataset(DS_MAIN);
	for (int W = 1; W <= 5; W++) {
		once_world(d, sh, RIO_SHARD_RECORDS, W, 16);
		once_world(d, sh, RIO_SHARD_FILES, W, 16);
	}
	/* a batch size that divides nothing, and batches of one */
	once_world(d, sh, RIO_SHARD_RECORDS, 3, 7);
	once_world(d, sh, RIO_SHARD_FILES, 2, 1);
	lu_watchdog(NULL, 0);
}

static void test_once_none(void)
{
	once_matrix(RIO_SHUFFLE_NONE);
}

static void test_once_buffer(void)
{
	once_matrix(RIO_SHUFFLE_BUFFER);
}

static void test_once_global(void)
{
	once_matrix(RIO_SHUFFLE_GLOBAL);
}

/* Shards without .idx (scanned at open) give what the same shards with them
 * give, in the same order. */
static void test_scan_path(void)
{
	lu_watchdog("scan path", 120);
	const lu_dataset *with = dataset(DS_MAIN), *without = dataset(DS_NOIDX);
	static const int worlds[] = {1, 3};
	for (int si = 0; si < 3; si++)
		for (int shd = RIO_SHARD_FILES; shd <= RIO_SHARD_RECORDS; shd++)
			for (size_t wi = 0; wi < 2; wi++) {
				int W = worlds[wi];
				once_world(without, all_shuffles[si], (rio_sharding)shd, W, 16);
				for (int r = 0; r < W; r++) {
					rio_loader_opts o;
					lu_base_opts(&o);
					o.shuffle = all_shuffles[si];
					o.sharding = (rio_sharding)shd;
					o.rank = r;
					o.world = W;
					lu_seq a, b;
					lu_seq_init(&a);
					lu_seq_init(&b);
					lu_run(with, &o, 2, &a);
					lu_run(without, &o, 2, &b);
					CHECK(lu_seq_equal(&a, 0, &b, 0),
					      "%s %s world %d rank %d: scanned shards give another "
					      "sequence than indexed ones",
					      rio_shuffle_name(o.shuffle), rio_sharding_name(o.sharding), W,
					      r);
					lu_seq_free(&a);
					lu_seq_free(&b);
				}
			}
	lu_watchdog(NULL, 0);
}

/* A rank whose shards are all empty (FILES, world 7: rank 0 has shard 0 of
 * 0 records) ends every epoch at once. */
static void test_empty_rank(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.sharding = RIO_SHARD_FILES;
		o.world = 7;
		o.rank = 0;
		rio_loader *l = lu_open(d, &o);
		if (!l)
			continue;
		CU_ASSERT_EQUAL(rio_loader_records(l), 0);
		CU_ASSERT_EQUAL(rio_loader_batches(l), 0);
		CU_ASSERT_EQUAL(rio_loader_full_batches(l), 0);
		rio_batch *b;
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 0);
		CU_ASSERT_EQUAL(rio_loader_epoch(l), 1);
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 0);
		CU_ASSERT_EQUAL(rio_loader_epoch(l), 2);
		rio_loader_close(l);
		/* the other six ranks have a shard each: 1 .. 200 records */
		for (int r = 1; r < 7; r++) {
			o.rank = r;
			lu_seq s;
			lu_seq_init(&s);
			lu_run(d, &o, 1, &s);
			CHECK(s.n == main_counts[r],
			      "%s FILES world 7 rank %d: %zu records, want %zu",
			      rio_shuffle_name(o.shuffle), r, s.n, main_counts[r]);
			lu_seq_free(&s);
		}
	}
}

/* 2 shards, 5 ranks: records are shared out, not files. */
static void test_fewer_shards_than_ranks(void)
{
	const lu_dataset *d = dataset(DS_TWO);
	for (int si = 0; si < 3; si++)
		for (int shd = RIO_SHARD_AUTO; shd <= RIO_SHARD_RECORDS; shd += 2) {
			rio_loader *l[5] = {0};
			lu_seq s[5];
			int rcs[5];
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.sharding = (rio_sharding)shd;
			o.world = 5;
			o.batch_size = 2;
			int ok = 1;
			for (int r = 0; r < 5; r++) {
				lu_seq_init(&s[r]);
				o.rank = r;
				l[r] = lu_open(d, &o);
				ok = ok && l[r];
			}
			if (ok) {
				drain_round_robin(l, s, rcs, 5, d);
				size_t minn = SIZE_MAX, maxn = 0;
				for (int r = 0; r < 5; r++) {
					CU_ASSERT_EQUAL(rcs[r], 0);
					CU_ASSERT_EQUAL(s[r].bad_payload, 0);
					CU_ASSERT_EQUAL(rio_loader_records(l[r]), s[r].n);
					minn = s[r].n < minn ? s[r].n : minn;
					maxn = s[r].n > maxn ? s[r].n : maxn;
				}
				CHECK(minn > 0 && maxn - minn <= 1,
				      "%s %s, 13 records over 5 ranks: %zu to %zu each",
				      rio_shuffle_name(o.shuffle), rio_sharding_name(o.sharding), minn,
				      maxn);
				CU_ASSERT_EQUAL(lu_not_once(d, s, 5), 0);
			}
			for (int r = 0; r < 5; r++) {
				rio_loader_close(l[r]);
				lu_seq_free(&s[r]);
			}
		}
}

/* FILES asked for with fewer shards than ranks: refused at open, naming the
 * way out (ranks without a shard would hang or starve a job). */
static void test_files_too_few_shards(void)
{
	const lu_dataset *d = dataset(DS_TWO);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.sharding = RIO_SHARD_FILES;
	o.world = 3;
	for (int r = 0; r < 3; r++) {
		o.rank = r;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, d->prefix, &o);
		const char *msg = l ? rio_loader_error(l)->message : "";
		CHECK(rc == -EINVAL && strstr(msg, "2 shards") && strstr(msg, "3 ranks") &&
		          strstr(msg, "records sharding"),
		      "FILES, 2 shards, world 3, rank %d: open = %d (%s) \"%s\"; want -EINVAL "
		      "naming the counts and records sharding",
		      r, rc, rio_strerror(rc), msg);
		rio_loader_close(l);
	}
	o.world = 2; /* as many shards as ranks: fine */
	o.rank = 1;
	rio_loader *l = lu_open(d, &o);
	CU_ASSERT(l != NULL && rio_loader_records(l) == 3);
	rio_loader_close(l);
}

/* AUTO: RECORDS when every shard has an .idx, FILES when some have none. */
static void test_auto_sharding(void)
{
	for (int which = DS_MAIN; which <= DS_NOIDX; which++) {
		const lu_dataset *d = dataset(which);
		lu_seq s[3];
		int rcs[3];
		rio_loader *l[3] = {0};
		rio_loader_opts o;
		lu_base_opts(&o);
		o.sharding = RIO_SHARD_AUTO;
		o.world = 3;
		int ok = 1;
		for (int r = 0; r < 3; r++) {
			lu_seq_init(&s[r]);
			o.rank = r;
			l[r] = lu_open(d, &o);
			ok = ok && l[r];
		}
		if (ok) {
			drain_round_robin(l, s, rcs, 3, d);
			CU_ASSERT_EQUAL(lu_not_once(d, s, 3), 0);
			size_t by_files = 0, by_records = 0;
			uint64_t start = 0;
			for (int r = 0; r < 3; r++) {
				for (size_t i = 0; i < s[r].n; i++) {
					uint64_t ord =
					    lu_ordinal(d, s[r].rec[i].shard, s[r].rec[i].index);
					by_files += s[r].rec[i].shard % 3 == (uint32_t)r;
					by_records += ord >= start && ord < start + s[r].n;
				}
				start += s[r].n;
			}
			if (which == DS_MAIN)
				CHECK(by_records == MAIN_TOTAL,
				      "AUTO with every .idx: not RECORDS sharding (%zu of %d "
				      "records in "
				      "the rank's range)",
				      by_records, MAIN_TOTAL);
			else
				CHECK(by_files == MAIN_TOTAL,
				      "AUTO without .idx: not FILES sharding (%zu of %d records in "
				      "the "
				      "rank's files)",
				      by_files, MAIN_TOTAL);
			/* the choice made, and what each rank counted: every shard
			 * (records), or its own (files), the others not known */
			rio_sharding want = which == DS_MAIN ? RIO_SHARD_RECORDS : RIO_SHARD_FILES;
			uint64_t counted = 0;
			for (int r = 0; r < 3; r++) {
				CHECK(rio_loader_sharding(l[r]) == want, "rank %d: rio_loader_sharding %s, want %s",
				      r, rio_sharding_name(rio_loader_sharding(l[r])), rio_sharding_name(want));
				size_t n = rio_loader_shards(l[r])->count;
				CU_ASSERT_EQUAL(rio_loader_shard_records(l[r], n), UINT64_MAX);
				for (size_t sh = 0; sh < n; sh++) {
					uint64_t c = rio_loader_shard_records(l[r], sh);
					int mine = want == RIO_SHARD_RECORDS || sh % 3 == (size_t)r;
					CHECK(mine == (c != UINT64_MAX), "rank %d, shard %zu: counted %llu", r, sh,
					      (unsigned long long)c);
					if (c != UINT64_MAX && (want == RIO_SHARD_FILES || r == 0))
						counted += c;
				}
			}
			CU_ASSERT_EQUAL(counted, MAIN_TOTAL);
		}
		for (int r = 0; r < 3; r++) {
			rio_loader_close(l[r]);
			lu_seq_free(&s[r]);
		}
	}
}

/* ---- order ---------------------------------------------------------------- */

/* The same sequence with 1, 2 and 4 workers, and twice with 2. */
static void test_determinism(void)
{
	lu_watchdog("determinism", 120);
	const lu_dataset *d = dataset(DS_MAIN);
	static const struct {
		int world, rank;
		rio_sharding shd;
	} parts[] = {{1, 0, RIO_SHARD_RECORDS}, {3, 1, RIO_SHARD_FILES}, {2, 1, RIO_SHARD_RECORDS}};
	for (int si = 0; si < 3; si++)
		for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.world = parts[p].world;
			o.rank = parts[p].rank;
			o.sharding = parts[p].shd;
			o.workers = 2;
			lu_seq ref;
			lu_seq_init(&ref);
			lu_run(d, &o, 2, &ref);
			static const int workers[] = {1, 4, 2};
			for (int w = 0; w < 3; w++) {
				lu_seq s;
				lu_seq_init(&s);
				o.workers = workers[w];
				o.prefetch = workers[w] == 4 ? 1 : 4;
				lu_run(d, &o, 2, &s);
				CHECK(lu_seq_equal(&ref, 0, &s, 0),
				      "%s world %d rank %d: %d workers give another order than 2",
				      rio_shuffle_name(o.shuffle), o.world, o.rank, workers[w]);
				lu_seq_free(&s);
			}
			lu_seq_free(&ref);
		}
	lu_watchdog(NULL, 0);
}

/* Is the sequence the dataset's records in shard order? */
static int in_shard_order(const lu_dataset *d, const lu_seq *s, size_t from, size_t n)
{
	if (from + n > s->n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lu_ordinal(d, s->rec[from + i].shard, s->rec[from + i].index) != i)
			return 0;
	return 1;
}

/* Records [from, from + n) of a and b in the same order? */
static int same_records(const lu_seq *a, size_t afrom, const lu_seq *b, size_t bfrom, size_t n)
{
	if (afrom + n > a->n || bfrom + n > b->n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (a->rec[afrom + i].shard != b->rec[bfrom + i].shard ||
		    a->rec[afrom + i].index != b->rec[bfrom + i].index)
			return 0;
	return 1;
}

/* Another seed, another order; another epoch, another order; NONE keeps
 * shard order whatever the seed and epoch. */
static void test_seed_and_epoch(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.seed = 5;
		lu_seq a, b;
		lu_seq_init(&a);
		lu_seq_init(&b);
		lu_run(d, &o, 2, &a);
		o.seed = 6;
		lu_run(d, &o, 1, &b);
		CU_ASSERT_EQUAL_FATAL(a.n, 2 * MAIN_TOTAL);
		CU_ASSERT_EQUAL_FATAL(b.n, MAIN_TOTAL);
		/* both epochs whole, each with every record once */
		size_t nb0 = lu_epoch_start(&a, 1);
		lu_seq v0 = lu_seq_view(&a, 0, nb0), v1 = lu_seq_view(&a, nb0, a.nb - nb0);
		CU_ASSERT_EQUAL(lu_epoch_shape(&v0, 0, 16, 0, MAIN_TOTAL, 0), 0);
		CU_ASSERT_EQUAL(lu_epoch_shape(&v1, 0, 16, 1, MAIN_TOTAL, 0), 0);
		lu_seq first = lu_seq_recview(&a, 0, MAIN_TOTAL),
		       second = lu_seq_recview(&a, MAIN_TOTAL, MAIN_TOTAL);
		CU_ASSERT_EQUAL(lu_not_once(d, &first, 1), 0);
		CU_ASSERT_EQUAL(lu_not_once(d, &second, 1), 0);
		CU_ASSERT_EQUAL(lu_not_once(d, &b, 1), 0);
		int e0_sorted = in_shard_order(d, &a, 0, MAIN_TOTAL);
		int e1_sorted = in_shard_order(d, &a, MAIN_TOTAL, MAIN_TOTAL);
		int seeds_same = same_records(&a, 0, &b, 0, MAIN_TOTAL);
		int epochs_same = same_records(&a, 0, &a, MAIN_TOTAL, MAIN_TOTAL);
		if (o.shuffle == RIO_SHUFFLE_NONE) {
			CHECK(e0_sorted && e1_sorted, "NONE: not in shard order (epoch 0 %d, 1 %d)",
			      e0_sorted, e1_sorted);
			CHECK(seeds_same, "NONE: the seed changes the order");
		} else {
			CHECK(!e0_sorted && !e1_sorted, "%s: not shuffled",
			      rio_shuffle_name(o.shuffle));
			CHECK(!seeds_same, "%s: seeds 5 and 6 give the same order",
			      rio_shuffle_name(o.shuffle));
			CHECK(!epochs_same, "%s: epochs 0 and 1 in the same order",
			      rio_shuffle_name(o.shuffle));
		}
		lu_seq_free(&a);
		lu_seq_free(&b);
	}
}

/* GLOBAL is a permutation of all the rank's records: its first batch is not
 * stuck in one shard, and a shard's records do not come out in order. */
static void test_global_mixes(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.batch_size = 32;
	lu_seq s;
	lu_seq_init(&s);
	lu_run(d, &o, 1, &s);
	CU_ASSERT_FATAL(s.n == MAIN_TOTAL);
	unsigned shards_seen = 0;
	for (size_t i = 0; i < 32; i++)
		shards_seen |= 1u << s.rec[i].shard;
	CHECK(__builtin_popcount(shards_seen) >= 3, "first batch from %d shards only",
	      __builtin_popcount(shards_seen));
	/* shard 6's records (200 of them) in increasing index order? */
	size_t rises = 0, n6 = 0;
	uint64_t prev = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.rec[i].shard == 6) {
			if (n6++ && s.rec[i].index > prev)
				rises++;
			prev = s.rec[i].index;
		}
	CHECK(rises < n6 * 3 / 4, "shard 6 nearly in order under GLOBAL (%zu rises of %zu)", rises,
	      n6);
	lu_seq_free(&s);
}

/* drop_remainder: the same batches without the last, short one. */
static void test_drop_remainder(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++)
		for (int W = 1; W <= 2; W++)
			for (int r = 0; r < W; r++) {
				rio_loader_opts o;
				lu_base_opts(&o);
				o.shuffle = all_shuffles[si];
				o.world = W;
				o.rank = r;
				lu_seq ref, s;
				lu_seq_init(&ref);
				lu_seq_init(&s);
				lu_run(d, &o, 2, &ref);
				o.drop_remainder = 1;
				rio_loader *l = lu_open(d, &o);
				if (!l)
					continue;
				uint64_t n = rio_loader_records(l);
				CHECK(rio_loader_batches(l) == n / 16 &&
				          rio_loader_full_batches(l) == n / 16,
				      "%s world %d rank %d, drop_remainder: batches %llu, full "
				      "%llu, want "
				      "%llu",
				      rio_shuffle_name(o.shuffle), W, r,
				      (unsigned long long)rio_loader_batches(l),
				      (unsigned long long)rio_loader_full_batches(l),
				      (unsigned long long)(n / 16));
				CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
				size_t nb0 = s.nb;
				CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
				rio_loader_close(l);
				CU_ASSERT(n % 16 != 0); /* there is a remainder to drop */
				size_t full = (size_t)(n / 16);
				lu_seq s0 = lu_seq_view(&s, 0, nb0), s1 = lu_seq_view(&s, nb0, s.nb - nb0);
				CHECK(lu_epoch_shape(&s0, 0, 16, 0, n, 1) == 0 &&
				          lu_epoch_shape(&s1, 0, 16, 1, n, 1) == 0,
				      "%s world %d rank %d, drop_remainder: epochs of %zu and %zu "
				      "batches, "
				      "want %zu full ones each",
				      rio_shuffle_name(o.shuffle), W, r, nb0, s.nb - nb0, full);
				CU_ASSERT_EQUAL(s.bad_payload, 0);
				/* the reference without its two short batches */
				lu_seq r0 = lu_seq_view(&ref, 0, full), r1 = lu_seq_view(&ref, full + 1, full);
				int same = ref.nb == 2 * (full + 1) && s.nb == 2 * full &&
				           lu_seq_equal(&r0, 0, &s0, 0) &&
				           lu_seq_equal(&r1, 0, &s1, 0);
				CHECK(
				    same,
				    "%s world %d rank %d: drop_remainder does not deliver the same "
				    "batches less the last",
				    rio_shuffle_name(o.shuffle), W, r);
				lu_seq_free(&ref);
				lu_seq_free(&s);
			}
}

/* rio_loader_epoch and rio_loader_position along an epoch. */
static void test_epoch_position(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_BUFFER;
	rio_loader *l = lu_open(d, &o);
	if (!l)
		return;
	lu_seq s;
	lu_seq_init(&s);
	CU_ASSERT_EQUAL(rio_loader_epoch(l), 0);
	CU_ASSERT_EQUAL(rio_loader_position(l), 0);
	CU_ASSERT_EQUAL(lu_take(l, &s, d, 3), 0);
	CU_ASSERT_EQUAL(rio_loader_epoch(l), 0);
	CU_ASSERT_EQUAL(rio_loader_position(l), 48);
	CU_ASSERT_EQUAL(lu_take(l, &s, d, 27), 0); /* 30 batches: 29 of 16 and 1 of 9 */
	CU_ASSERT_EQUAL(rio_loader_epoch(l), 0);
	CU_ASSERT_EQUAL(rio_loader_position(l), MAIN_TOTAL);
	rio_batch *b;
	CU_ASSERT_EQUAL(rio_loader_next(l, &b), 0);
	CU_ASSERT_EQUAL(rio_loader_epoch(l), 1);
	CU_ASSERT_EQUAL(rio_loader_position(l), 0);
	CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &b), 1);
	CU_ASSERT_EQUAL(b->epoch, 1);
	CU_ASSERT_EQUAL(b->number, 0);
	rio_loader_release(l, b);
	CU_ASSERT_EQUAL(rio_loader_epoch(l), 1);
	CU_ASSERT_EQUAL(rio_loader_position(l), 16);
	rio_loader_close(l);
	lu_seq_free(&s);
}

/* ---- resume --------------------------------------------------------------- */

static void resume_one(rio_shuffle sh, const rio_loader_opts *opts);

static void resume_mode(rio_shuffle sh)
{
	lu_watchdog("resume", 120);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = sh;
	o.world = 2;
	o.rank = 1;
	o.seed = 99;
	resume_one(sh, &o);
	/* another part of the data, short batches dropped */
	o.world = 3;
	o.rank = 2;
	o.sharding = RIO_SHARD_FILES;
	o.batch_size = 8;
	o.drop_remainder = 1;
	resume_one(sh, &o);
	/* O_DIRECT: the placed path claims batches ahead and gives slots out in
	 * batch order from the restored batch on (where the file system takes
	 * O_DIRECT at all) */
	o.direct = 1;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
	rio_loader_close(l);
	if (rc == 0)
		resume_one(sh, &o);
	else
		CHECK(rc == -EINVAL, "open with direct = 1: %d (%s)", rc, rio_strerror(rc));
	lu_watchdog(NULL, 0);
}

/* Saves after k batches (for several k), restores into a fresh loader and
 * compares the rest, through epoch 1, with an uninterrupted loader's. */
static void resume_one(rio_shuffle sh, const rio_loader_opts *opts)
{
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o = *opts;
	lu_seq ref;
	lu_seq_init(&ref);
	rio_loader *l = lu_open(d, &o);
	if (!l)
		return;
	CU_ASSERT_EQUAL(lu_drain_through(l, &ref, d, 1), 0);
	rio_loader_close(l);
	size_t nb0 = 0;
	while (nb0 < ref.nb && ref.b[nb0].epoch == 0)
		nb0++;
	CU_ASSERT_FATAL(nb0 > 8 && ref.nb == 2 * nb0);

	/* k batches taken before saving; after_zero: the 0 that ends epoch 0
	 * was seen too */
	const struct {
		size_t k;
		int after_zero;
	} cases[] = {{0, 0}, {1, 0}, {7, 0}, {nb0 - 1, 0}, {nb0, 0}, {nb0, 1}, {nb0 + 2, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t k = cases[c].k;
		lu_seq a, b;
		lu_seq_init(&a);
		lu_seq_init(&b);
		rio_loader *la = lu_open(d, &o);
		if (!la)
			break;
		CU_ASSERT_EQUAL(lu_take(la, &a, d, k), 0);
		if (cases[c].after_zero) {
			rio_batch *bt;
			CU_ASSERT_EQUAL(rio_loader_next(la, &bt), 0);
		}
		lu_seq head = lu_seq_view(&ref, 0, k);
		CU_ASSERT(a.nb == k && lu_seq_equal(&head, 0, &a, 0));
		uint64_t epoch = rio_loader_epoch(la), pos = rio_loader_position(la);
		int size = rio_loader_state_save(la, NULL, 0);
		CHECK(size > 0 && size < 4096, "state_save(NULL, 0) = %d", size);
		if (size <= 0) {
			rio_loader_close(la);
			lu_seq_free(&a);
			continue;
		}
		uint8_t *blob = malloc((size_t)size);
		CU_ASSERT_EQUAL(rio_loader_state_save(la, blob, (size_t)size), size);
		rio_loader_close(la);

		rio_loader *lb = lu_open(d, &o);
		if (lb) {
			int rc = rio_loader_state_restore(lb, blob, (size_t)size);
			CHECK(rc == 0, "%s k=%zu: restore = %d (%s) %s", rio_shuffle_name(sh), k, rc,
			      rio_strerror(rc), rio_loader_error(lb)->message);
			CHECK(rio_loader_epoch(lb) == epoch && rio_loader_position(lb) == pos,
			      "%s k=%zu: restored at epoch %llu position %llu, saved at %llu %llu",
			      rio_shuffle_name(sh), k, (unsigned long long)rio_loader_epoch(lb),
			      (unsigned long long)rio_loader_position(lb),
			      (unsigned long long)epoch, (unsigned long long)pos);
			rc = lu_drain_through(lb, &b, d, 1);
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(b.bad_payload, 0);
			char diff[300];
			CHECK(lu_seq_equal(&ref, k, &b, 0),
			      "%s world %d rank %d%s: resumed after %zu batches%s, the rest "
			      "differs from an uninterrupted loader's (%zu batches, want %zu): "
			      "uninterrupted vs resumed: %s",
			      rio_shuffle_name(sh), o.world, o.rank,
			      o.drop_remainder ? " drop_remainder" : "", k,
			      cases[c].after_zero ? " and the epoch's end" : "", b.nb, ref.nb - k,
			      lu_seq_diff(&ref, k, &b, 0, diff, sizeof diff));
			rio_loader_close(lb);
		}
		free(blob);
		lu_seq_free(&a);
		lu_seq_free(&b);
	}
	lu_seq_free(&ref);
}

static void test_resume_none(void)
{
	resume_mode(RIO_SHUFFLE_NONE);
}

static void test_resume_buffer(void)
{
	resume_mode(RIO_SHUFFLE_BUFFER);
	/* the same from mapped shards (opts.map: the placed path, the shuffle
	 * buffer's order as a permutation) */
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_BUFFER;
	o.world = 2;
	o.rank = 1;
	o.seed = 99;
	o.map = 1;
	resume_one(RIO_SHUFFLE_BUFFER, &o);
	o.drop_remainder = 1;
	resume_one(RIO_SHUFFLE_BUFFER, &o);
}

static void test_resume_global(void)
{
	resume_mode(RIO_SHUFFLE_GLOBAL);
	/* the same from mapped shards (opts.map) */
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.world = 2;
	o.rank = 1;
	o.seed = 99;
	o.map = 1;
	resume_one(RIO_SHUFFLE_GLOBAL, &o);
	o.on_damage = RIO_DAMAGE_SKIP; /* the pipeline rather than the placed path */
	resume_one(RIO_SHUFFLE_GLOBAL, &o);
}

/* A state saved by one loader is refused by loaders over other data, rank,
 * world or options, and damaged blobs are refused; the loader that refused
 * them still takes the good one. */
static void test_resume_refused(void)
{
	lu_watchdog("resume refused", 120);
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_BUFFER;
	o.world = 2;
	o.rank = 0;
	o.seed = 7;
	lu_seq ref;
	lu_seq_init(&ref);
	rio_loader *l = lu_open(d, &o);
	if (!l)
		return;
	CU_ASSERT_EQUAL(lu_take(l, &ref, d, 2), 0);
	int size = rio_loader_state_save(l, NULL, 0);
	CU_ASSERT_FATAL(size > 0);
	uint8_t *blob = malloc((size_t)size);
	CU_ASSERT_EQUAL(rio_loader_state_save(l, blob, (size_t)size), size);
	CU_ASSERT_EQUAL(lu_drain_epoch(l, &ref, d), 0);
	rio_loader_close(l);

	struct {
		const char *what;
		int dataset;
		int world, rank;
		uint64_t seed;
		rio_shuffle sh;
		rio_sharding shd;
		const char *named; /* what the message must say differs */
	} others[] = {
	    {"another world", DS_MAIN, 3, 0, 7, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, "world size"},
	    {"another rank", DS_MAIN, 2, 1, 7, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, "rank"},
	    {"another seed", DS_MAIN, 2, 0, 8, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, "seed"},
	    {"another shuffle", DS_MAIN, 2, 0, 7, RIO_SHUFFLE_GLOBAL, RIO_SHARD_RECORDS, "shuffle"},
	    /* the sharding, not the data its shares are a hash of */
	    {"another sharding", DS_MAIN, 2, 0, 7, RIO_SHUFFLE_BUFFER, RIO_SHARD_FILES, "sharding"},
	    {"another dataset", DS_OTHER, 2, 0, 7, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, "data"},
	    {"a dataset of other shards", DS_TWO, 2, 0, 7, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS,
	     "data"},
	};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		rio_loader_opts p = o;
		p.world = others[i].world;
		p.rank = others[i].rank;
		p.seed = others[i].seed;
		p.shuffle = others[i].sh;
		p.sharding = others[i].shd;
		rio_loader *x = lu_open(dataset(others[i].dataset), &p);
		if (!x)
			continue;
		int rc = rio_loader_state_restore(x, blob, (size_t)size);
		CHECK(rc == RIO_ESTATE, "restore into a loader with %s: %d (%s), want RIO_ESTATE",
		      others[i].what, rc, rio_strerror(rc));
		char want[64];
		snprintf(want, sizeof want, "has another %s (", others[i].named);
		const char *m = rio_loader_error(x)->message;
		CHECK(strstr(m, want) != NULL, "restore into a loader with %s: '%s' does not say '%s'",
		      others[i].what, m, want);
		rio_loader_close(x);
	}

	/* damaged blobs: every truncation, every byte flipped */
	rio_loader *x = lu_open(d, &o);
	if (x) {
		uint8_t *copy = malloc((size_t)size);
		size_t accepted_cut = 0, accepted_flip = 0;
		for (int n = 0; n < size; n++) {
			memcpy(copy, blob, (size_t)n);
			if (rio_loader_state_restore(x, copy, (size_t)n) != RIO_ESTATE)
				accepted_cut++;
		}
		for (int i = 0; i < size; i++) {
			memcpy(copy, blob, (size_t)size);
			copy[i] ^= 0x10;
			if (rio_loader_state_restore(x, copy, (size_t)size) != RIO_ESTATE)
				accepted_flip++;
		}
		CHECK(accepted_cut == 0, "%zu of %d truncated blobs not refused with RIO_ESTATE",
		      accepted_cut, size);
		CHECK(accepted_flip == 0,
		      "%zu of %d blobs with a flipped byte not refused with "
		      "RIO_ESTATE",
		      accepted_flip, size);
		/* a blob with a byte more is not this loader's either */
		uint8_t *longer = calloc(1, (size_t)size + 1);
		memcpy(longer, blob, (size_t)size);
		int rc = rio_loader_state_restore(x, longer, (size_t)size + 1);
		CHECK(rc == RIO_ESTATE, "a blob with a byte appended: %d, want RIO_ESTATE", rc);
		free(longer);
		free(copy);
		/* the good blob still works: the rest of the epoch */
		CU_ASSERT_EQUAL(rio_loader_state_restore(x, blob, (size_t)size), 0);
		lu_seq s;
		lu_seq_init(&s);
		CU_ASSERT_EQUAL(lu_drain_epoch(x, &s, d), 0);
		char diff[300];
		CHECK(lu_seq_equal(&ref, 2, &s, 0),
		      "after refusing damaged blobs, the good one does not resume the epoch: "
		      "uninterrupted vs resumed: %s",
		      lu_seq_diff(&ref, 2, &s, 0, diff, sizeof diff));
		lu_seq_free(&s);
		rio_loader_close(x);
	}
	free(blob);
	lu_seq_free(&ref);
	lu_watchdog(NULL, 0);
}

/* ---- set_epoch ------------------------------------------------------------ */

static void test_set_epoch(void)
{
	lu_watchdog("set_epoch", 120);
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.world = 2;
		o.rank = 0;
		o.seed = 3;
		const char *what = rio_shuffle_name(o.shuffle);
		/* the epochs 0..3 of an uninterrupted loader */
		lu_seq nat;
		lu_seq_init(&nat);
		lu_run(d, &o, 4, &nat);
		size_t e3 = 0;
		while (e3 < nat.nb && nat.b[e3].epoch < 3)
			e3++;

		/* a fresh loader set to epoch 3 gives the same epoch 3 */
		lu_seq fresh;
		lu_seq_init(&fresh);
		rio_loader *l = lu_open(d, &o);
		if (!l)
			continue;
		CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 3), 0);
		CU_ASSERT_EQUAL(rio_loader_epoch(l), 3);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &fresh, d), 0);
		rio_loader_close(l);
		CHECK(lu_seq_equal(&nat, e3, &fresh, 0),
		      "%s: set_epoch(3) on a fresh loader differs from its natural epoch 3", what);

		/* stopping mid-epoch, while a batch is held */
		l = lu_open(d, &o);
		if (!l)
			continue;
		lu_seq s;
		lu_seq_init(&s);
		CU_ASSERT_EQUAL(lu_take(l, &s, d, 3), 0);
		rio_batch *held;
		CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &held), 1);
		lu_seq h1, h2;
		lu_seq_init(&h1);
		lu_seq_init(&h2);
		lu_seq_add(&h1, held, d);
		CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 3), 0);
		CU_ASSERT_EQUAL(rio_loader_epoch(l), 3);
		CU_ASSERT_EQUAL(rio_loader_position(l), 0);
		lu_seq_add(&h2, held, d); /* still valid: the same records and bytes */
		CHECK(lu_seq_equal(&h1, 0, &h2, 0) && h2.bad_payload == 0,
		      "%s: a batch held across set_epoch changed", what);
		rio_loader_release(l, held);
		lu_seq e;
		lu_seq_init(&e);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &e, d), 0);
		CHECK(e.nb > 0 && e.b[0].epoch == 3 && e.b[0].number == 0,
		      "%s: after set_epoch(3) the next batch is epoch %llu number %llu", what,
		      e.nb ? (unsigned long long)e.b[0].epoch : 0ull,
		      e.nb ? (unsigned long long)e.b[0].number : 0ull);
		CHECK(lu_seq_equal(&fresh, 0, &e, 0),
		      "%s: epoch 3 after stopping epoch 0 mid-way differs from a fresh loader's",
		      what);
		CU_ASSERT_EQUAL(e.bad_payload, 0);

		/* and back to epoch 0 in the middle of epoch 4 */
		lu_seq f;
		lu_seq_init(&f);
		CU_ASSERT_EQUAL(lu_take(l, &f, d, 2), 0);
		CU_ASSERT_EQUAL(rio_loader_set_epoch(l, 0), 0);
		lu_seq g;
		lu_seq_init(&g);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &g, d), 0);
		size_t nb0 = 0;
		while (nb0 < nat.nb && nat.b[nb0].epoch == 0)
			nb0++;
		lu_seq nat0 = lu_seq_view(&nat, 0, nb0);
		CHECK(lu_seq_equal(&nat0, 0, &g, 0), "%s: set_epoch(0) mid-way: not epoch 0 again",
		      what);
		rio_loader_close(l);
		lu_seq_free(&nat);
		lu_seq_free(&fresh);
		lu_seq_free(&s);
		lu_seq_free(&h1);
		lu_seq_free(&h2);
		lu_seq_free(&e);
		lu_seq_free(&f);
		lu_seq_free(&g);
	}
	lu_watchdog(NULL, 0);
}

/* ---- I/O ------------------------------------------------------------------ */

/* RIO_LOADER_IO=pread makes AUTO use pread; PREAD is pread; another name is
 * refused. */
static void test_io_env_pread(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	char *saved = getenv("RIO_LOADER_IO") ? strdup(getenv("RIO_LOADER_IO")) : NULL;
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.io = RIO_IO_PREAD;
		unsetenv("RIO_LOADER_IO");
		lu_seq ref, s;
		lu_seq_init(&ref);
		lu_seq_init(&s);
		rio_loader *l = lu_open(d, &o);
		if (l) {
			CU_ASSERT_EQUAL(lu_drain_epoch(l, &ref, d), 0);
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			CHECK(st.io_uring == 0, "io = PREAD, stats.io_uring = %d", st.io_uring);
			rio_loader_close(l);
		}
		setenv("RIO_LOADER_IO", "pread", 1);
		o.io = RIO_IO_AUTO;
		l = lu_open(d, &o);
		if (l) {
			rio_batch *b;
			CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &b), 1);
			lu_seq_add(&s, b, d);
			rio_loader_release(l, b);
			CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			CHECK(st.io_uring == 0,
			      "RIO_LOADER_IO=pread with AUTO: stats.io_uring = %d", st.io_uring);
			rio_loader_close(l);
		}
		CHECK(lu_seq_equal(&ref, 0, &s, 0),
		      "%s: AUTO with RIO_LOADER_IO=pread gives "
		      "another sequence than PREAD",
		      rio_shuffle_name(o.shuffle));
		CU_ASSERT_EQUAL(s.bad_payload, 0);
		lu_seq_free(&ref);
		lu_seq_free(&s);
	}
	/* a name that is none of the loader's: refused at open, naming it */
	setenv("RIO_LOADER_IO", "io_uring", 1);
	rio_loader_opts o;
	lu_base_opts(&o);
	rio_loader *l = NULL;
	CU_ASSERT_EQUAL(rio_loader_open(&l, d->prefix, &o), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT_PTR_NOT_NULL(strstr(rio_loader_error(l)->message,
	                              "RIO_LOADER_IO='io_uring': want auto, uring or pread"));
	rio_loader_close(l);
	if (saved)
		setenv("RIO_LOADER_IO", saved, 1);
	else
		unsetenv("RIO_LOADER_IO");
	free(saved);
}


/* Makes d's shards warm (read whole) or cold (written back and dropped
 * from the page cache); returns 1 when the page cache then agrees
 * (mincore over a mapping of each), 0 where this file system keeps its
 * pages whatever is asked (tmpfs). */
static int set_resident(const lu_dataset *d, int warm)
{
	int agrees = 1;
	long psz = sysconf(_SC_PAGESIZE);
	for (size_t sh = 0; sh < d->nshards; sh++) {
		int fd = open(d->paths[sh], O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		char buf[65536];
		if (warm)
			while (read(fd, buf, sizeof buf) > 0)
				;
		else {
			(void)fdatasync(fd);
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		}
		size_t pages = ((size_t)st.st_size + (size_t)psz - 1) / (size_t)psz, in = 0;
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		unsigned char *vec = malloc(pages);
		if (m != MAP_FAILED && vec && mincore(m, (size_t)st.st_size, vec) == 0)
			for (size_t i = 0; i < pages; i++)
				in += vec[i] & 1;
		agrees &= warm ? in == pages : in == 0;
		free(vec);
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
		close(fd);
	}
	return agrees;
}

/* opts.reading AUTO (route.c): shuffled shards in the page cache are read
 * from mappings, cold ones in shard order with O_DIRECT (where this file
 * system takes it), the rest with reads; rio_loader_route() says which,
 * and the batches are those of reads through the page cache. */
static void test_route_auto(void)
{
	lu_watchdog("route", 300);
	const lu_dataset *d = dataset(DS_MAIN);
	int fd = open(d->paths[0], O_RDONLY | O_DIRECT);
	int direct_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	for (int si = 0; si < 3; si++)
		for (int warm = 1; warm >= 0; warm--) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			lu_seq ref, s;
			lu_seq_init(&ref);
			lu_seq_init(&s);
			o.reading = RIO_READ_BUFFERED;
			lu_run(d, &o, 1, &ref);
			o.reading = RIO_READ_AUTO;
			rio_loader *l = lu_open(d, &o);
			if (!l)
				return;
			/* as the epoch starts (opening reads a few headers) */
			if (!set_resident(d, warm)) {
				printf("\n    the page cache keeps these shards (%s): skipped\n",
				       warm ? "warm" : "cold");
				rio_loader_close(l);
				lu_seq_free(&ref);
				return;
			}
			CHECK(strcmp(rio_loader_route(l), "") == 0, "before an epoch: \"%s\"",
			      rio_loader_route(l));
			int rc = lu_drain_epoch(l, &s, d);
			const char *want = o.shuffle == RIO_SHUFFLE_NONE
			                           ? (warm || !direct_ok ? "placed/buffered" : "placed/direct")
			                   : warm ? "placed/map"
			                   : o.shuffle == RIO_SHUFFLE_GLOBAL ? "placed/buffered"
			                                                     : "pipeline/buffered";
			CHECK(rc == 0 && strcmp(rio_loader_route(l), want) == 0,
			      "%s, %s: epoch ended with %d (%s), read by %s, want %s",
			      rio_shuffle_name(o.shuffle), warm ? "warm" : "cold", rc,
			      rio_loader_error(l)->message, rio_loader_route(l), want);
			CHECK(lu_seq_equal(&ref, 0, &s, 0) && s.bad_payload == 0,
			      "%s, %s, read by %s: another sequence (%zu records, %zu wrong)",
			      rio_shuffle_name(o.shuffle), warm ? "warm" : "cold", rio_loader_route(l),
			      s.n, s.bad_payload);
			rio_loader_close(l);
			lu_seq_free(&ref);
			lu_seq_free(&s);
		}
}

/* opts.reading names one way, whatever the page cache holds; map = 1 and
 * direct = 1 say MAP and DIRECT; a reading that disagrees with them, or
 * outside the enum, is refused at open. */
static void test_route_asked(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	static const struct {
		rio_shuffle shuffle;
		rio_reading reading;
		int map;
		const char *want;
	} cases[] = {
	        {RIO_SHUFFLE_GLOBAL, RIO_READ_BUFFERED, 0, "placed/buffered"},
	        {RIO_SHUFFLE_BUFFER, RIO_READ_BUFFERED, 0, "pipeline/buffered"},
	        {RIO_SHUFFLE_BUFFER, RIO_READ_MAP, 0, "placed/map"},
	        {RIO_SHUFFLE_BUFFER, RIO_READ_AUTO, 1, "placed/map"},
	        {RIO_SHUFFLE_NONE, RIO_READ_MAP, 0, "placed/buffered"},
	        {RIO_SHUFFLE_GLOBAL, RIO_READ_MAP, 1, "placed/map"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = cases[i].shuffle;
		o.reading = cases[i].reading;
		o.map = cases[i].map;
		rio_loader *l = lu_open(d, &o);
		if (!l)
			return;
		set_resident(d, 0); /* AUTO would take another way cold */
		rio_batch *b;
		int rc = rio_loader_next(l, &b);
		if (rc == 1)
			rio_loader_release(l, b);
		CHECK(rc == 1 && strcmp(rio_loader_route(l), cases[i].want) == 0,
		      "%s, reading %s, map %d: %d, read by %s, want %s",
		      rio_shuffle_name(o.shuffle), rio_reading_name(o.reading), o.map, rc,
		      rio_loader_route(l), cases[i].want);
		rio_loader_close(l);
	}
	rio_loader_opts o;
	lu_base_opts(&o);
	o.reading = RIO_READ_BUFFERED;
	o.map = 1;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, d->prefix, &o);
	CHECK(rc == -EINVAL && strstr(rio_loader_error(l)->message, "reading"),
	      "reading buffered with map = 1: %d (%s)", rc, rio_loader_error(l)->message);
	rio_loader_close(l);
	o.map = 0;
	o.reading = (rio_reading)7;
	rc = rio_loader_open(&l, d->prefix, &o);
	CHECK(rc == -EINVAL && strstr(rio_loader_error(l)->message, "reading"),
	      "reading 7: %d (%s)", rc, rio_loader_error(l)->message);
	rio_loader_close(l);
	/* RIO_LOADER_READING names AUTO's choice: reads, though warm */
	o.reading = RIO_READ_AUTO;
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	setenv("RIO_LOADER_READING", "buffered", 1);
	l = lu_open(d, &o);
	set_resident(d, 1);
	rio_batch *b;
	rc = l ? rio_loader_next(l, &b) : -1;
	if (rc == 1)
		rio_loader_release(l, b);
	CHECK(rc == 1 && strcmp(rio_loader_route(l), "placed/buffered") == 0,
	      "RIO_LOADER_READING=buffered: %d, read by %s", rc, l ? rio_loader_route(l) : "-");
	rio_loader_close(l);
	setenv("RIO_LOADER_READING", "mapped", 1);
	l = NULL;
	rc = rio_loader_open(&l, d->prefix, &o);
	CHECK(rc == -EINVAL && strstr(rio_loader_error(l)->message, "RIO_LOADER_READING=") &&
	              strstr(rio_loader_error(l)->message, "mapped"),
	      "RIO_LOADER_READING=mapped: %d (%s)", rc, rio_loader_error(l)->message);
	rio_loader_close(l);
	unsetenv("RIO_LOADER_READING");
}

/* O_DIRECT reads give the same records (skipped only where the file system
 * refuses O_DIRECT with -EINVAL). */
static void test_direct(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++)
		for (int io = RIO_IO_AUTO; io <= RIO_IO_PREAD; io += 2) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.io = (rio_io_backend)io;
			o.world = 2;
			o.rank = 1;
			lu_seq ref, s;
			lu_seq_init(&ref);
			lu_seq_init(&s);
			lu_run(d, &o, 1, &ref);
			o.direct = 1;
			rio_loader *l = NULL;
			int rc = rio_loader_open(&l, d->prefix, &o);
			if (rc == -EINVAL) {
				printf("\n    O_DIRECT refused here (%s): skipped\n",
				       rio_loader_error(l)->message);
				rio_loader_close(l);
				lu_seq_free(&ref);
				return;
			}
			CHECK(rc == 0, "open with direct = 1: %d (%s) %s", rc, rio_strerror(rc),
			      l ? rio_loader_error(l)->message : "");
			if (rc == 0) {
				rc = lu_drain_epoch(l, &s, d);
				CHECK(rc == 0, "direct = 1: epoch ended with %d (%s) %s", rc,
				      rio_strerror(rc), rio_loader_error(l)->message);
				CHECK(lu_seq_equal(&ref, 0, &s, 0) && s.bad_payload == 0,
				      "%s, direct = 1: another sequence (%zu records, %zu wrong)",
				      rio_shuffle_name(o.shuffle), s.n, s.bad_payload);
			}
			rio_loader_close(l);
			/* adjacent records share aligned reads up to read_size:
			 * the smallest read size cuts runs at every page */
			lu_seq_free(&s);
			lu_seq_init(&s);
			o.read_size = RIO_LOADER_MIN_READ_SIZE;
			lu_run(d, &o, 1, &s);
			CHECK(lu_seq_equal(&ref, 0, &s, 0) && s.bad_payload == 0,
			      "%s, direct = 1, read_size %u: another sequence (%zu records, %zu wrong)",
			      rio_shuffle_name(o.shuffle), RIO_LOADER_MIN_READ_SIZE, s.n, s.bad_payload);
			lu_seq_free(&ref);
			lu_seq_free(&s);
		}
}

/* opts.map: global shuffling copies from mappings of the shards; the same
 * batches as reads give in every mode (no effect outside GLOBAL), with
 * either backend, under FAIL (the placed path) and SKIP (the pipeline);
 * refused with direct. */
static void test_map(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++)
		for (int io = RIO_IO_AUTO; io <= RIO_IO_PREAD; io += 2)
			for (int pol = RIO_DAMAGE_FAIL; pol <= RIO_DAMAGE_SKIP; pol++) {
				rio_loader_opts o;
				lu_base_opts(&o);
				o.shuffle = all_shuffles[si];
				o.io = (rio_io_backend)io;
				o.on_damage = (rio_damage_policy)pol;
				o.world = 2;
				o.rank = 1;
				lu_seq ref, s;
				lu_seq_init(&ref);
				lu_seq_init(&s);
				lu_run(d, &o, 2, &ref);
				o.map = 1;
				lu_run(d, &o, 2, &s);
				CHECK(lu_seq_equal(&ref, 0, &s, 0) && s.bad_payload == 0,
				      "%s, %s, map = 1: another sequence (%zu records, %zu wrong)",
				      rio_shuffle_name(o.shuffle), pol ? "SKIP" : "FAIL", s.n, s.bad_payload);
				lu_seq_free(&ref);
				lu_seq_free(&s);
			}
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.map = 1;
	o.direct = 1;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, d->prefix, &o);
	CHECK(rc == -EINVAL && strstr(rio_loader_error(l)->message, "map and direct"),
	      "map with direct: %d (%s) %s", rc, rio_strerror(rc),
	      l ? rio_loader_error(l)->message : "");
	rio_loader_close(l);
}

/* Where shard `path` is mapped in this process (/proc/self/maps: the
 * mapping of the whole file, from offset 0), or NULL. */
static const uint8_t *mapping_of(const char *path, size_t *len)
{
	char real[4096], line[8192];
	if (!realpath(path, real))
		return NULL;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return NULL;
	const uint8_t *at = NULL;
	while (!at && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		int name = 0;
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &off, &name) >= 3 && name &&
		    off == 0 && strcmp(line + name, real) == 0) {
			at = (const uint8_t *)(uintptr_t)lo;
			*len = hi - lo;
		}
	}
	fclose(f);
	return at;
}

/* opts.map, no copy: shuffled (buffer, global) a raw record's data points
 * into its shard's mapping, right after its frame header (the mapped
 * file's bytes at its offset), and stays valid after its batch is
 * released, until the loader is closed; each record comes once. In shard
 * order (reads are faster there) and without map the shards are not
 * mapped. */
static void test_map_views(void)
{
	lu_watchdog("map views", 120);
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++)
		for (int map = 0; map <= 1; map++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.map = map;
			rio_loader *l = lu_open(d, &o);
			if (!l)
				return;
			const uint8_t *base[LU_MAXSHARDS] = {0};
			size_t len[LU_MAXSHARDS] = {0}, mapped = 0;
			for (size_t sh = 0; sh < d->nshards; sh++)
				mapped += (base[sh] = mapping_of(d->paths[sh], &len[sh])) != NULL;
			size_t want = 0; /* the shards with records (an empty file is not mapped) */
			for (size_t sh = 0; sh < d->nshards; sh++)
				want += d->count[sh] > 0;
			int views = map && o.shuffle != RIO_SHUFFLE_NONE;
			CHECK(mapped == (views ? want : 0), "%s, map = %d: %zu shards mapped, want %zu",
			      rio_shuffle_name(o.shuffle), map, mapped, views ? want : 0);
			size_t n = 0, outside = 0, bad = 0;
			const uint8_t *keep = NULL; /* a view kept past its batch */
			uint8_t kept[LU_PAYLOAD_MAX], ref[LU_PAYLOAD_MAX];
			size_t kept_size = 0;
			uint32_t kept_shard = 0;
			uint64_t kept_index = 0;
			rio_batch *b;
			int rc;
			while ((rc = rio_loader_next(l, &b)) == 1) {
				for (size_t i = 0; i < b->count; i++) {
					const rio_batch_record *r = &b->records[i];
					n++;
					if (!views || r->shard >= d->nshards || !base[r->shard])
						continue;
					const uint8_t *at =
					    base[r->shard] + d->off[r->shard][r->index] + RIO_HEADER_SIZE;
					outside += r->data != at || at + r->size > base[r->shard] + len[r->shard];
					bad += lu_raw_payload(d->sp.tag, r->shard, r->index, ref) != r->size ||
					       memcmp(ref, r->data, r->size) != 0;
					if (!keep && r->size) {
						keep = r->data;
						kept_size = r->size;
						kept_shard = r->shard;
						kept_index = r->index;
						memcpy(kept, r->data, r->size);
					}
				}
				rio_loader_release(l, b);
			}
			CHECK(rc == 0 && n == MAIN_TOTAL, "%s, map = %d: %d (%s), %zu records of %d",
			      rio_shuffle_name(o.shuffle), map, rc, rio_strerror(rc), n, MAIN_TOTAL);
			CHECK(outside == 0 && bad == 0,
			      "%s, map = 1: %zu records not views of their frames in the mapping, %zu "
			      "with wrong bytes",
			      rio_shuffle_name(o.shuffle), outside, bad);
			if (views && keep) /* the epoch over, every batch released: still there */
				CHECK(memcmp(keep, kept, kept_size) == 0,
				      "%s, map = 1: record %u/%llu changed after its batch was released",
				      rio_shuffle_name(o.shuffle), kept_shard, (unsigned long long)kept_index);
			rio_loader_close(l);
		}
}

/* Buffer shuffling from mappings (opts.map, the placed path): two ranks
 * deliver every record exactly once between them, each rank the same
 * batches over two epochs as buffer shuffling with reads (the pipeline:
 * the order for a seed does not change), with several worker counts, with
 * drop_remainder. */
static void test_map_buffer(void)
{
	lu_watchdog("map buffer", 120);
	const lu_dataset *d = dataset(DS_MAIN);
	for (int drop = 0; drop <= 1; drop++) {
		lu_seq s[2];
		for (int r = 0; r < 2; r++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = RIO_SHUFFLE_BUFFER;
			o.world = 2;
			o.rank = r;
			o.seed = 11;
			o.drop_remainder = drop;
			lu_seq ref;
			lu_seq_init(&ref);
			lu_run(d, &o, 2, &ref);
			static const int workers[] = {1, 2, 4};
			for (int w = 0; w < 3; w++) {
				lu_seq_init(&s[r]);
				o.map = 1;
				o.workers = workers[w];
				lu_run(d, &o, 2, &s[r]);
				char diff[300];
				CHECK(lu_seq_equal(&ref, 0, &s[r], 0) && s[r].bad_payload == 0,
				      "rank %d, %d workers%s: buffer shuffling with map gives another "
				      "sequence than with reads: %s",
				      r, workers[w], drop ? ", drop_remainder" : "",
				      lu_seq_diff(&ref, 0, &s[r], 0, diff, sizeof diff));
				if (w < 2)
					lu_seq_free(&s[r]);
			}
			lu_seq_free(&ref);
		}
		if (!drop) {
			lu_seq e0[2]; /* epoch 0 of each rank */
			for (int r = 0; r < 2; r++) {
				size_t nb = 0;
				while (nb < s[r].nb && s[r].b[nb].epoch == 0)
					nb++;
				e0[r] = lu_seq_recview(&s[r], 0, nb < s[r].nb ? s[r].b[nb].first : s[r].n);
			}
			CHECK(lu_not_once(d, e0, 2) == 0,
			      "buffer shuffling with map, two ranks: records not exactly once in an "
			      "epoch");
		}
		for (int r = 0; r < 2; r++)
			lu_seq_free(&s[r]);
	}
}

/* ---- compressed shards ---------------------------------------------------- */

static void test_compressed(void)
{
	lu_watchdog("compressed", 120);
	const lu_dataset *plain = dataset(DS_MAIN);
	static const int comp[] = {DS_GZ, DS_ZZ, DS_LZ4};
	static const char *names[] = {"gzip", "zlib", "lz4"};
	for (int c = 0; c < 3; c++) {
		const lu_dataset *d = dataset(comp[c]);
		for (int si = 0; si < 2; si++)
			for (int shd = RIO_SHARD_FILES; shd <= RIO_SHARD_RECORDS; shd++)
				for (int W = 1; W <= 3; W += 2)
					for (int r = 0; r < W; r++) {
						rio_loader_opts o;
						lu_base_opts(&o);
						o.shuffle = all_shuffles[si];
						o.sharding = (rio_sharding)shd;
						o.world = W;
						o.rank = r;
						lu_seq ref, s;
						lu_seq_init(&ref);
						lu_seq_init(&s);
						lu_run(plain, &o, 2, &ref);
						lu_run(d, &o, 2, &s);
						CHECK(s.bad_payload == 0, "%s: %zu wrong records",
						      names[c], s.bad_payload);
						if (o.shuffle == RIO_SHUFFLE_NONE) {
							CHECK(
							    lu_seq_equal(&ref, 0, &s, 0),
							    "%s NONE %s world %d rank %d: not the "
							    "uncompressed sequence",
							    names[c], rio_sharding_name(o.sharding), W,
							    r);
						} else {
							CHECK(lu_same_set(d, &ref, &s),
							      "%s BUFFER %s world %d rank %d: not "
							      "the "
							      "records of the uncompressed shards",
							      names[c], rio_sharding_name(o.sharding),
							      W, r);
							uint64_t n = s.n / 2;
							size_t nb0 = lu_epoch_start(&s, 1);
							lu_seq s0 = lu_seq_view(&s, 0, nb0),
							       s1 = lu_seq_view(&s, nb0, s.nb - nb0);
							CU_ASSERT_EQUAL(s.n, ref.n);
							CU_ASSERT_EQUAL(
							    lu_epoch_shape(&s0, 0, 16, 0, n, 0), 0);
							CU_ASSERT_EQUAL(
							    lu_epoch_shape(&s1, 0, 16, 1, n, 0), 0);
						}
						lu_seq_free(&ref);
						lu_seq_free(&s);
					}
		/* and every record once over the ranks */
		once_world(d, RIO_SHUFFLE_BUFFER, RIO_SHARD_RECORDS, 4, 16);
		once_world(d, RIO_SHUFFLE_NONE, RIO_SHARD_FILES, 2, 16);
	}
	lu_watchdog(NULL, 0);
}

static void test_compressed_global(void)
{
	static const int comp[] = {DS_GZ, DS_ZZ, DS_LZ4};
	for (int c = 0; c < 3; c++) {
		const lu_dataset *d = dataset(comp[c]);
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = RIO_SHUFFLE_GLOBAL;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, d->prefix, &o);
		CHECK(rc == RIO_EUNSUPPORTED,
		      "GLOBAL over %s shards: open = %d (%s), want "
		      "RIO_EUNSUPPORTED",
		      d->sp.name, rc, rio_strerror(rc));
		CU_ASSERT_PTR_NOT_NULL(l);
		if (l) {
			CU_ASSERT_EQUAL(rio_loader_error(l)->code, rc);
			CU_ASSERT(rio_loader_error(l)->message[0] != '\0');
		}
		rio_loader_close(l);
	}
}

/* ---- decoding ------------------------------------------------------------- */

static const size_t ex_counts[3] = {20, 37, 5};

/* decode_run()'s opts.map: decoding from mapped shards */
static int decode_map;
/* decode_run()'s opts.cache (compressed shards): the records decoded once
 * into rows of decode_stride bytes, kept (cache.c) */
static int decode_cache;
static size_t decode_stride;

static void decode_run(const lu_dataset *d, const char *spec, int float_cols, rio_shuffle sh, int W)
{
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(spec, &cols, &ncols, NULL), 0);
	lu_seq s[4];
	rio_loader *l[4] = {0};
	int rcs[4];
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = sh;
	o.world = W;
	o.batch_size = 8;
	o.columns = cols;
	o.ncolumns = ncols;
	o.map = decode_map;
	o.cache = decode_cache ? 1u << 30 : 0;
	int ok = 1;
	for (int r = 0; r < W; r++) {
		lu_seq_init(&s[r]);
		s[r].float_cols = float_cols;
		o.rank = r;
		l[r] = lu_open(d, &o);
		ok = ok && l[r];
	}
	/* (the spec array is kept until the loaders are closed: the header
	 * does not say whether open copies it) */
	if (ok) {
		drain_round_robin(l, s, rcs, W, d);
		for (int r = 0; r < W; r++) {
			CHECK(rcs[r] == 0, "decoding %s: %d (%s) %s", spec, rcs[r],
			      rio_strerror(rcs[r]), rio_loader_error(l[r])->message);
			CHECK(s[r].bad_columns == 0,
			      "decoding \"%s\" (%s, world %d rank %d): %zu wrong "
			      "values",
			      spec, rio_shuffle_name(sh), W, r, s[r].bad_columns);
			CU_ASSERT_EQUAL(lu_epoch_shape(&s[r], 0, 8, 0, s[r].n, 0), 0);
			rio_loader_stats st;
			rio_loader_stats_get(l[r], &st);
			CU_ASSERT_EQUAL(st.records, s[r].n);
			CU_ASSERT_EQUAL(st.batches, s[r].nb);
			/* the rows, not the records: whole shards, packed */
			CHECK(!decode_cache || (st.cache_bytes > 0 && st.cache_bytes % decode_stride == 0 &&
			                        (W > 1 || st.cache_bytes == d->total * decode_stride)),
			      "decoding \"%s\" (%s, world %d rank %d) from the cache: %llu bytes held, "
			      "want rows of %zu bytes",
			      spec, rio_shuffle_name(sh), W, r, (unsigned long long)st.cache_bytes,
			      decode_stride);
		}
		CHECK(lu_not_once(d, s, (size_t)W) == 0, "decoding: records not exactly once");
	}
	for (int r = 0; r < W; r++) {
		rio_loader_close(l[r]);
		lu_seq_free(&s[r]);
	}
	free(cols);
}

static void test_decode(void)
{
	lu_dataset d, dz;
	lu_dataset_make(&d, &(lu_spec){.name = "ex",
	                               .tag = 5,
	                               .counts = ex_counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x5,
	                               .example = 1});
	lu_dataset_make(&dz, &(lu_spec){.name = "exgz",
	                                .tag = 5,
	                                .counts = ex_counts,
	                                .nshards = 3,
	                                .comp = RIO_COMPRESSION_GZIP,
	                                .example = 1});
	for (int si = 0; si < 3; si++) {
		decode_run(&d, LU_COLS_NATIVE, 0, all_shuffles[si], 1);
		decode_run(&d, LU_COLS_FLOAT, 1, all_shuffles[si], 2);
		if (all_shuffles[si] != RIO_SHUFFLE_GLOBAL)
			decode_run(&dz, LU_COLS_NATIVE, 0, all_shuffles[si], 2);
	}
	decode_map = 1; /* decoded straight from mapped shards, every mode */
	for (int si = 0; si < 3; si++) {
		decode_run(&d, LU_COLS_NATIVE, 0, all_shuffles[si], 1);
		decode_run(&d, LU_COLS_FLOAT, 1, all_shuffles[si], 2);
	}
	decode_map = 0;
	/* decoded once, into rows kept in memory (cache.c): an image's pixels
	 * stay bytes (784 + 8 + 3 * 4 and 784 + 4 + 3 * 4 bytes a row) */
	decode_cache = 1;
	for (int si = 0; si < 2; si++) {
		decode_stride = 804;
		decode_run(&dz, LU_COLS_NATIVE, 0, all_shuffles[si], 1);
		decode_stride = 800;
		decode_run(&dz, LU_COLS_FLOAT, 1, all_shuffles[si], 2);
	}
	/* uncompressed shards too, when shuffled through the buffer (in shard
	 * order the placed path reads them as they lie) */
	decode_stride = 804;
	decode_run(&d, LU_COLS_NATIVE, 0, RIO_SHUFFLE_BUFFER, 1);
	decode_stride = 800;
	decode_run(&d, LU_COLS_FLOAT, 1, RIO_SHUFFLE_BUFFER, 2);
	decode_cache = 0;
	/* the image alone, scaled */
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse("image:f32:784:0.5", &cols, &ncols, NULL), 0);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.batch_size = 8;
	o.columns = cols;
	o.ncolumns = ncols;
	rio_loader *l = lu_open(&d, &o);
	if (l) {
		rio_batch *b;
		size_t rows = 0, bad = 0;
		int rc;
		while ((rc = rio_loader_next(l, &b)) == 1) {
			CU_ASSERT_EQUAL_FATAL(b->ncolumns, 1);
			CU_ASSERT_EQUAL(b->columns[0].type, RIO_DTYPE_F32);
			CU_ASSERT_EQUAL(b->columns[0].length, 784);
			for (size_t i = 0; i < b->count; i++) {
				lu_values v;
				lu_example_values(5, b->records[i].shard, b->records[i].index, &v);
				const float *img = (const float *)b->columns[0].host + i * 784;
				for (size_t j = 0; j < 784; j++)
					bad += img[j] != (float)v.image[j] * 0.5f;
				/* NONE: shard order */
				bad += lu_ordinal(&d, b->records[i].shard, b->records[i].index) !=
				       rows;
				rows++;
			}
			rio_loader_release(l, b);
		}
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(rows, d.total);
		CU_ASSERT_EQUAL(bad, 0);
		rio_loader_close(l);
	}
	free(cols);
	lu_dataset_free(&d);
	lu_dataset_free(&dz);
}

/* An f32 column fed by a bytes feature in some records and a float list in
 * others (record i: bytes {i, i+1, i+2} when i is even, floats {i, i+1.5,
 * i+2} when odd), scaled by 0.5: a row keeps an image's bytes as bytes until
 * the batch (decode.h), so each row must say which it holds. Every shuffle
 * mode, batches of 7 over 100 records. */
static void test_decode_mixed_kinds(void)
{
	/* plain; and LZ4 read from the cache (opts.cache), where the rows'
	 * flags differ, so the shard is kept as records, not packed rows */
	for (int cached = 0; cached < 2; cached++) {
		const char *path = tu_path(cached ? "mixedc-00000-of-00001.tfrecord.lz4"
		                                  : "mixed-00000-of-00001.tfrecord");
		rio_writer_opts wo = {.compression = cached ? RIO_COMPRESSION_LZ4 : RIO_COMPRESSION_NONE};
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &wo), 0);
		rio_example_builder eb;
		rio_example_builder_init(&eb);
		for (int i = 0; i < 100; i++) {
			rio_example_builder_reset(&eb);
			if (i % 2 == 0) {
				uint8_t v[3] = {(uint8_t)i, (uint8_t)(i + 1), (uint8_t)(i + 2)};
				rio_example_add_bytes(&eb, "v", v, 3);
			} else {
				float v[3] = {(float)i, (float)i + 1.5f, (float)i + 2};
				rio_example_add_floats(&eb, "v", v, 3);
			}
			int64_t id = i;
			rio_example_add_int64s(&eb, "id", &id, 1);
			const uint8_t *data;
			size_t size;
			CU_ASSERT_EQUAL_FATAL(rio_example_finish(&eb, &data, &size), 0);
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, data, size, NULL), 0);
		}
		rio_example_builder_free(&eb);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		rio_column_spec *cols = NULL;
		size_t ncols = 0;
		CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse("v:f32:3:0.5,id:i64:1", &cols, &ncols, NULL),
		                      0);
		for (int si = 0; si < (cached ? 2 : 3); si++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.batch_size = 7;
			o.shuffle_buffer = 16;
			o.columns = cols;
			o.ncolumns = ncols;
			o.cache = cached ? 1u << 20 : 0;
			rio_loader *l = NULL;
			int rc = rio_loader_open(&l, path, &o);
			CHECK(rc == 0, "%s: open = %d", rio_shuffle_name(o.shuffle), rc);
			rio_batch *b;
			size_t rows = 0, bad = 0;
			while (rc >= 0 && (rc = rio_loader_next(l, &b)) == 1) {
				const float *v = b->columns[0].host;
				const int64_t *id = b->columns[1].host;
				for (size_t r = 0; r < b->count; r++, rows++) {
					float i = (float)id[r], want[3];
					if (id[r] % 2 == 0) {
						want[0] = i * 0.5f;
						want[1] = (i + 1) * 0.5f;
						want[2] = (i + 2) * 0.5f;
					} else {
						want[0] = i * 0.5f;
						want[1] = (i + 1.5f) * 0.5f;
						want[2] = (i + 2) * 0.5f;
					}
					bad += memcmp(v + 3 * r, want, sizeof want) != 0;
				}
				rio_loader_release(l, b);
			}
			rio_loader_stats st;
			rio_loader_stats_get(l, &st);
			/* cached: the decompressed records, which are not 11-byte rows */
			CHECK(rc == 0 && rows == 100 && bad == 0 &&
			          (!cached || (st.cache_bytes > 0 && st.cache_bytes != 100 * 11)),
			      "%s%s: rc %d, %zu rows, %zu wrong, %llu bytes cached", rio_shuffle_name(o.shuffle),
			      cached ? ", cached" : "", rc, rows, bad, (unsigned long long)st.cache_bytes);
			rio_loader_close(l);
		}
		free(cols);
	}
}

/* A record that does not fit the columns: its error under FAIL (after the
 * batches before it, naming the shard), skipped and counted under SKIP. */
static void test_decode_mismatch(void)
{
	lu_watchdog("decode mismatch", 120);
	static const size_t counts[3] = {12, 30, 9};
	static const struct {
		int bad;
		int code;
		const char *name;
	} kinds[] = {
	    {LU_BAD_NO_LABEL, RIO_ENOFEATURE, "nolabel"},
	    {LU_BAD_SHORT_IMAGE, RIO_EFEATURELEN, "shortimage"},
	    {LU_BAD_LONG_LABEL, RIO_EFEATURELEN, "longlabel"},
	    {LU_BAD_FLOAT_LABEL, RIO_EFEATUREKIND, "floatlabel"},
	    {LU_BAD_NOT_EXAMPLE, RIO_EBADEXAMPLE, "notexample"},
	};
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_NATIVE, &cols, &ncols, NULL), 0);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		lu_dataset d;
		lu_spec sp = {.name = kinds[k].name,
		              .tag = 9,
		              .counts = counts,
		              .nshards = 3,
		              .comp = RIO_COMPRESSION_NONE,
		              .idx_mask = 0x7,
		              .example = 1,
		              .bad = kinds[k].bad,
		              .bad_shard = 1,
		              .bad_index = 13};
		lu_dataset_make(&d, &sp);
		/* si 3 and 4: the same records in LZ4 shards through the cache
		 * (opts.cache), in NONE and BUFFER order, and si 5 the
		 * uncompressed ones in BUFFER order: the shard with the bad record
		 * is not kept as rows, and the error comes with the same batch */
		lu_dataset dc;
		char cname[64];
		snprintf(cname, sizeof cname, "%s-lz4", kinds[k].name);
		sp.name = cname;
		sp.comp = RIO_COMPRESSION_LZ4;
		lu_dataset_make(&dc, &sp);
		for (int si = 0; si < 6; si++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = si == 5 ? RIO_SHUFFLE_BUFFER : all_shuffles[si < 3 ? si : si - 3];
			o.batch_size = 8;
			o.columns = cols;
			o.ncolumns = ncols;
			o.cache = si < 3 ? 0 : 1u << 24;
			const lu_dataset *dd = si < 3 || si == 5 ? &d : &dc;
			const char *what = si < 3    ? rio_shuffle_name(o.shuffle)
			                   : si == 3 ? "NONE, cached"
			                   : si == 4 ? "BUFFER, cached"
			                             : "BUFFER, uncompressed, cached";
			/* FAIL */
			rio_loader *l = lu_open(dd, &o);
			if (l) {
				lu_seq s;
				lu_seq_init(&s);
				int rc = lu_drain_epoch(l, &s, dd);
				CHECK(rc == kinds[k].code,
				      "%s, %s, FAIL: next = %d (%s), want %d (%s)", kinds[k].name,
				      what, rc, rio_strerror(rc), kinds[k].code,
				      rio_strerror(kinds[k].code));
				const char *msg = rio_loader_error(l)->message;
				CHECK(strstr(msg, "data-00001-of-00003.tfrecord") != NULL,
				      "%s: the message \"%s\" does not name the shard",
				      kinds[k].name, msg);
				CU_ASSERT_EQUAL(s.bad_columns, 0);
				if (o.shuffle == RIO_SHUFFLE_NONE) /* cached too */
					/* records 0..23 come before (1, 13), the 26th */
					CHECK(s.nb == 3,
					      "%s, NONE, FAIL: %zu batches before the error, "
					      "want 3",
					      kinds[k].name, s.nb);
				rio_loader_close(l);
				lu_seq_free(&s);
			}
			/* SKIP */
			o.on_damage = RIO_DAMAGE_SKIP;
			l = lu_open(dd, &o);
			if (l) {
				lu_seq s;
				lu_seq_init(&s);
				int rc = lu_drain_epoch(l, &s, dd);
				CHECK(rc == 0, "%s, %s, SKIP: next = %d (%s) %s", kinds[k].name,
				      what, rc, rio_strerror(rc), rio_loader_error(l)->message);
				rio_loader_stats st;
				rio_loader_stats_get(l, &st);
				CHECK(st.skipped == 1, "%s, %s, SKIP: stats.skipped = %llu, want 1",
				      kinds[k].name, what, (unsigned long long)st.skipped);
				CU_ASSERT_EQUAL(st.records, s.n);
				CU_ASSERT_EQUAL(rio_loader_records(l), dd->total);
				unsigned *hits = calloc(dd->total, sizeof *hits);
				CU_ASSERT_EQUAL(lu_count_hits(dd, &s, hits), 0);
				size_t wrong = 0;
				for (uint64_t i = 0; i < dd->total; i++)
					wrong += hits[i] != (i == lu_ordinal(dd, 1, 13) ? 0u : 1u);
				CHECK(wrong == 0 && s.n == dd->total - 1,
				      "%s, %s, SKIP: %zu records delivered, %zu not as expected",
				      kinds[k].name, what, s.n, wrong);
				CU_ASSERT_EQUAL(s.bad_columns, 0);
				/* full batches but the last */
				for (size_t i = 0; i + 1 < s.nb; i++)
					CU_ASSERT_EQUAL(s.b[i].count, 8);
				free(hits);
				rio_loader_close(l);
				lu_seq_free(&s);
			}
		}
		lu_dataset_free(&dc);
		lu_dataset_free(&d);
	}
	free(cols);
	lu_watchdog(NULL, 0);
}

/* The TensorFlow-written MNIST file, decoded; checked against the Example
 * decoder of recordio.h. */
static void test_decode_tf_mnist(void)
{
	const char *path = tu_testdata("tfx-mnist.tfrecord");
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	/* the expected values, read with rio_reader */
	enum { N = 1000 };
	float *img = malloc((size_t)N * 784 * sizeof *img);
	int64_t *cls = malloc(N * sizeof *cls);
	CU_ASSERT_FATAL(img && cls);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	rio_record rec;
	size_t n = 0;
	while (rio_reader_next(r, &rec) == 1 && n < N) {
		rio_feature f;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "image_floats", &f), 0);
		CU_ASSERT_EQUAL_FATAL(rio_feature_floats(&f, img + n * 784, 784), 784);
		CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "image_class", &f), 0);
		CU_ASSERT_EQUAL_FATAL(rio_feature_int64s(&f, cls + n, 1), 1);
		n++;
	}
	rio_reader_close(r);
	CU_ASSERT_EQUAL_FATAL(n, N);

	static const struct {
		rio_shuffle sh;
		int world;
		size_t bs;
		const char *spec;
	} runs[] = {
	    {RIO_SHUFFLE_NONE, 1, 100, "image_floats:f32:784,image_class:i64:1"},
	    {RIO_SHUFFLE_GLOBAL, 2, 64, "image_floats:f32:784,image_class:i64:1"},
	    {RIO_SHUFFLE_BUFFER, 3, 50, "image_class:f32:1,image_floats:f32:784:2"},
	};
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		rio_column_spec *cols = NULL;
		size_t ncols = 0;
		CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(runs[k].spec, &cols, &ncols, NULL), 0);
		int swapped = k == 2; /* class first, as a float; image doubled */
		unsigned *hits = calloc(N, sizeof *hits);
		size_t bad = 0, rows = 0, out_of_order = 0;
		for (int rank = 0; rank < runs[k].world; rank++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = runs[k].sh;
			o.world = runs[k].world;
			o.rank = rank;
			o.batch_size = runs[k].bs;
			o.columns = cols;
			o.ncolumns = ncols;
			rio_loader *l = NULL;
			int rc = rio_loader_open(&l, path, &o);
			CHECK(rc == 0, "open %s: %d (%s) %s", path, rc, rio_strerror(rc),
			      l ? rio_loader_error(l)->message : "");
			if (rc) {
				rio_loader_close(l);
				continue;
			}
			CU_ASSERT_EQUAL(rio_loader_shards(l)->count, 1);
			rio_batch *b;
			while ((rc = rio_loader_next(l, &b)) == 1) {
				CU_ASSERT_EQUAL_FATAL(b->ncolumns, 2);
				const rio_batch_column *ci = &b->columns[swapped ? 1 : 0];
				const rio_batch_column *cc = &b->columns[swapped ? 0 : 1];
				CU_ASSERT_STRING_EQUAL(ci->name, "image_floats");
				CU_ASSERT_STRING_EQUAL(cc->name, "image_class");
				CU_ASSERT_EQUAL(ci->length, 784);
				CU_ASSERT_EQUAL(cc->length, 1);
				for (size_t i = 0; i < b->count; i++) {
					uint64_t idx = b->records[i].index;
					if (b->records[i].shard != 0 || idx >= N) {
						bad++;
						continue;
					}
					hits[idx]++;
					if (runs[k].sh == RIO_SHUFFLE_NONE && idx != rows)
						out_of_order++;
					rows++;
					const float *im = (const float *)ci->host + i * 784;
					for (size_t j = 0; j < 784; j++)
						bad += im[j] !=
						       (swapped ? 2.0f : 1.0f) * img[idx * 784 + j];
					if (swapped)
						bad +=
						    ((const float *)cc->host)[i] != (float)cls[idx];
					else
						bad += ((const int64_t *)cc->host)[i] != cls[idx];
				}
				rio_loader_release(l, b);
			}
			CHECK(rc == 0, "tfx-mnist: %d (%s) %s", rc, rio_strerror(rc),
			      rio_loader_error(l)->message);
			rio_loader_close(l);
		}
		size_t not_once = 0;
		for (size_t i = 0; i < N; i++)
			not_once += hits[i] != 1;
		CHECK(
		    bad == 0 && not_once == 0 && out_of_order == 0,
		    "tfx-mnist \"%s\" %s world %d: %zu wrong values, %zu records not once, %zu out "
		    "of order",
		    runs[k].spec, rio_shuffle_name(runs[k].sh), runs[k].world, bad, not_once,
		    out_of_order);
		free(hits);
		free(cols);
	}
	free(img);
	free(cls);
}

/* ---- damaged shards ------------------------------------------------------- */

static void flip_byte(const char *path, uint64_t pos)
{
	size_t size;
	uint8_t *buf = tu_read_file(path, &size);
	CU_ASSERT_FATAL(buf && pos < size);
	buf[pos] ^= 0x20;
	tu_write_file(path, buf, size);
	free(buf);
}

static void cut_file(const char *path, uint64_t size)
{
	CU_ASSERT_EQUAL_FATAL(truncate(path, (off_t)size), 0);
}

static const size_t dmg_counts[3] = {40, 40, 40};

/* One epoch of d under `policy`; returns the final rc, fills s. */
/* The loader's error after the last damaged_epoch(). */
static rio_error last_err;

/* damaged_epoch()'s opts.map: the damage tests again with mapped shards */
static int dmg_map;

static int damaged_epoch(const lu_dataset *d, rio_shuffle sh, rio_damage_policy policy, int verify,
                         lu_seq *s, rio_loader_stats *st, char *msg, size_t msgsize, int *open_rc)
{
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = sh;
	o.batch_size = 8;
	o.on_damage = policy;
	o.verify_crc = verify;
	o.map = dmg_map;
	rio_loader *l = NULL;
	*open_rc = rio_loader_open(&l, d->prefix, &o);
	if (*open_rc < 0) {
		snprintf(msg, msgsize, "%s", l ? rio_loader_error(l)->message : "");
		rio_loader_close(l);
		return *open_rc;
	}
	int rc = lu_drain_epoch(l, s, d);
	snprintf(msg, msgsize, "%s", rio_loader_error(l)->message);
	last_err = *rio_loader_error(l);
	rio_loader_stats_get(l, st);
	rio_loader_close(l);
	return rc;
}

static void test_damaged_data(void)
{
	lu_watchdog("damaged data", 120);
	lu_dataset d;
	lu_dataset_make(&d, &(lu_spec){.name = dmg_map ? "dmg-map" : "dmg",
	                               .tag = 7,
	                               .counts = dmg_counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x7});
	flip_byte(d.paths[1], d.off[1][17] + RIO_HEADER_SIZE + 5);
	uint64_t bad_ord = lu_ordinal(&d, 1, 17);
	char msg[600];
	for (int si = 0; si < 3; si++) {
		rio_shuffle sh = all_shuffles[si];
		const char *what = rio_shuffle_name(sh);
		lu_seq s;
		rio_loader_stats st;
		int orc;
		/* FAIL */
		lu_seq_init(&s);
		int rc = damaged_epoch(&d, sh, RIO_DAMAGE_FAIL, 1, &s, &st, msg, sizeof msg, &orc);
		CHECK(orc == 0, "open: %d (%s) %s", orc, rio_strerror(orc), msg);
		CHECK(rc == RIO_ECORRUPT_DATA, "%s, FAIL: next = %d (%s), want RIO_ECORRUPT_DATA",
		      what, rc, rio_strerror(rc));
		CHECK(strstr(msg, "data-00001-of-00003.tfrecord") != NULL,
		      "%s: the message \"%s\" does not name the shard", what, msg);
		/* and the place: the record's offset and number */
		char place[64];
		snprintf(place, sizeof place, "offset %llu", (unsigned long long)d.off[1][17]);
		CHECK(last_err.code == RIO_ECORRUPT_DATA && last_err.record == 17 &&
		          last_err.offset == d.off[1][17] && strstr(msg, place) &&
		          strstr(msg, "record 17"),
		      "%s: error code %d offset %llu record %llu, message \"%s\"; want "
		      "RIO_ECORRUPT_DATA at offset %llu, record 17, both in the message",
		      what, last_err.code, (unsigned long long)last_err.offset,
		      (unsigned long long)last_err.record, msg, (unsigned long long)d.off[1][17]);
		CU_ASSERT_EQUAL(s.bad_payload, 0);
		size_t has_bad = 0;
		for (size_t i = 0; i < s.n; i++)
			has_bad += lu_ordinal(&d, s.rec[i].shard, s.rec[i].index) == bad_ord;
		CU_ASSERT_EQUAL(has_bad, 0);
		if (sh == RIO_SHUFFLE_NONE)
			/* 40 + 17 records before it: 7 batches of 8 */
			CHECK(s.nb == 7 && in_shard_order(&d, &s, 0, 56),
			      "NONE, FAIL: %zu batches before the error, want 7", s.nb);
		lu_seq_free(&s);
		/* SKIP */
		lu_seq_init(&s);
		rc = damaged_epoch(&d, sh, RIO_DAMAGE_SKIP, 1, &s, &st, msg, sizeof msg, &orc);
		CHECK(rc == 0, "%s, SKIP: next = %d (%s) %s", what, rc, rio_strerror(rc), msg);
		CHECK(st.skipped == 1, "%s, SKIP: stats.skipped = %llu, want 1", what,
		      (unsigned long long)st.skipped);
		unsigned hits[120] = {0};
		CU_ASSERT_EQUAL(lu_count_hits(&d, &s, hits), 0);
		size_t wrong = 0;
		for (uint64_t i = 0; i < 120; i++)
			wrong += hits[i] != (i == bad_ord ? 0u : 1u);
		CHECK(wrong == 0 && s.n == 119, "%s, SKIP: %zu records, %zu not as expected", what,
		      s.n, wrong);
		CU_ASSERT_EQUAL(s.bad_payload, 0);
		CU_ASSERT_EQUAL(st.records, 119);
		lu_seq_free(&s);
		/* REPORT is taken as SKIP */
		lu_seq_init(&s);
		rc = damaged_epoch(&d, sh, RIO_DAMAGE_REPORT, 1, &s, &st, msg, sizeof msg, &orc);
		CHECK(rc == 0 && s.n == 119 && st.skipped == 1,
		      "%s, REPORT: rc %d, %zu records, skipped %llu", what, rc, s.n,
		      (unsigned long long)st.skipped);
		lu_seq_free(&s);
		/* without CRC checks the damaged bytes come through */
		lu_seq_init(&s);
		rc = damaged_epoch(&d, sh, RIO_DAMAGE_FAIL, 0, &s, &st, msg, sizeof msg, &orc);
		CHECK(rc == 0 && s.n == 120 && s.bad_payload == 1,
		      "%s, verify_crc = 0: rc %d, %zu records, %zu differ (want 0, 120, 1)", what,
		      rc, s.n, s.bad_payload);
		lu_seq_free(&s);
	}
	lu_dataset_free(&d);

	/* a damaged length CRC */
	lu_dataset_make(&d, &(lu_spec){.name = dmg_map ? "dmglen-map" : "dmglen",
	                               .tag = 7,
	                               .counts = dmg_counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x7});
	flip_byte(d.paths[2], d.off[2][3] + 9);
	lu_seq s;
	rio_loader_stats st;
	int orc;
	lu_seq_init(&s);
	int rc =
	    damaged_epoch(&d, RIO_SHUFFLE_NONE, RIO_DAMAGE_FAIL, 1, &s, &st, msg, sizeof msg, &orc);
	/* from next() after the batches before it, or from the open, whose
	 * check of the .idx against its shard met the damaged header */
	CHECK(rc == RIO_ECORRUPT_LENGTH && (s.nb == 10 || orc < 0),
	      "length CRC, FAIL: %s = %d (%s) after %zu batches, want RIO_ECORRUPT_LENGTH after "
	      "10 (or from the open)",
	      orc < 0 ? "open" : "next", rc, rio_strerror(rc), s.nb);
	CHECK(strstr(msg, "data-00002-of-00003.tfrecord") != NULL,
	      "the message \"%s\" does not name the shard", msg);
	lu_seq_free(&s);
	lu_seq_init(&s);
	rc =
	    damaged_epoch(&d, RIO_SHUFFLE_NONE, RIO_DAMAGE_SKIP, 1, &s, &st, msg, sizeof msg, &orc);
	unsigned hits[120] = {0};
	CU_ASSERT_EQUAL(lu_count_hits(&d, &s, hits), 0);
	size_t wrong = 0;
	for (uint64_t i = 0; i < 120; i++)
		wrong += hits[i] != (i == lu_ordinal(&d, 2, 3) ? 0u : 1u);
	CHECK(rc == 0 && s.n == 119 && wrong == 0 && st.skipped == 1 && s.bad_payload == 0,
	      "length CRC, SKIP: rc %d, %zu records (%zu not as expected, %zu with wrong bytes), "
	      "skipped %llu; want 0, 119 (all but (2,3)), 0, 0, 1",
	      rc, s.n, wrong, s.bad_payload, (unsigned long long)st.skipped);
	lu_seq_free(&s);
	lu_dataset_free(&d);
	lu_watchdog(NULL, 0);
}

/* Damage in shards without .idx, which the open scans: the scan must number
 * the frames as the workers do (and as an .idx written before the damage
 * lists them), so the same shards with and without sidecars give the same
 * records, counts and skips under SKIP. Shard 1 of 3 (150 records each, so
 * the sparse index has entries at 64 and 128) gets: a data byte (17), a
 * length CRC byte (30), a length byte (45: the length grows or shrinks by
 * 32, a plausible size), two damaged neighbours across the index step (63
 * and 64, data), and a length CRC at an index step (128). */
static const size_t scan_counts[3] = {150, 150, 150};
static const uint64_t scan_damaged[6] = {17, 30, 45, 63, 64, 128};

static void damage_scan_set(lu_dataset *d, const char *name, unsigned idx_mask)
{
	lu_dataset_make(d, &(lu_spec){.name = name,
	                              .tag = 11,
	                              .counts = scan_counts,
	                              .nshards = 3,
	                              .comp = RIO_COMPRESSION_NONE,
	                              .idx_mask = idx_mask});
	const uint64_t *off = d->off[1];
	flip_byte(d->paths[1], off[17] + RIO_HEADER_SIZE + 3);
	flip_byte(d->paths[1], off[30] + 9);
	flip_byte(d->paths[1], off[45]);
	flip_byte(d->paths[1], off[63] + RIO_HEADER_SIZE + 1);
	flip_byte(d->paths[1], off[64] + RIO_HEADER_SIZE + 1);
	flip_byte(d->paths[1], off[128] + 10);
}

static int scan_is_damaged(uint32_t shard, uint64_t index)
{
	for (size_t k = 0; k < 6; k++)
		if (shard == 1 && index == scan_damaged[k])
			return 1;
	return 0;
}

static void test_damaged_scanned(void)
{
	lu_watchdog("damage, scanned", 120);
	lu_dataset di, dn;
	damage_scan_set(&di, "scan-dmg-idx", 0x7);
	damage_scan_set(&dn, "scan-dmg-noidx", 0x0);
	for (int si = 0; si < 3; si++)
		for (int W = 1; W <= 4; W += 3) {
			lu_seq s[2][4];
			uint64_t skipped[2] = {0, 0}, records[2] = {0, 0};
			for (int k = 0; k < 2; k++) {
				const lu_dataset *d = k ? &dn : &di;
				for (int r = 0; r < W; r++) {
					lu_seq_init(&s[k][r]);
					rio_loader_opts o;
					lu_base_opts(&o);
					o.shuffle = all_shuffles[si];
					o.batch_size = 8;
					o.on_damage = RIO_DAMAGE_SKIP;
					o.world = W;
					o.rank = r;
					rio_loader *l = lu_open(d, &o);
					if (!l)
						continue;
					records[k] += rio_loader_records(l);
					int rc = lu_drain_epoch(l, &s[k][r], d);
					CHECK(rc == 0, "%s, %s, world %d rank %d, SKIP: next = %d (%s) %s",
					      k ? "scanned" : "with .idx", rio_shuffle_name(o.shuffle), W, r,
					      rc, rio_strerror(rc), rio_loader_error(l)->message);
					rio_loader_stats st;
					rio_loader_stats_get(l, &st);
					skipped[k] += st.skipped;
					rio_loader_close(l);
				}
			}
			for (int k = 0; k < 2; k++) {
				const lu_dataset *d = k ? &dn : &di;
				unsigned *hits = calloc(d->total, sizeof *hits);
				CU_ASSERT_FATAL(hits != NULL);
				size_t wrong = 0, bad = 0;
				for (int r = 0; r < W; r++) {
					wrong += lu_count_hits(d, &s[k][r], hits);
					bad += s[k][r].bad_payload;
				}
				for (uint32_t sh = 0; sh < 3; sh++)
					for (uint64_t i = 0; i < 150; i++)
						wrong += hits[lu_ordinal(d, sh, i)] !=
						         (scan_is_damaged(sh, i) ? 0u : 1u);
				free(hits);
				CHECK(wrong == 0 && bad == 0 && skipped[k] == 6 && records[k] == 450,
				      "%s, %s, world %d, SKIP: %zu records not as expected (want every "
				      "undamaged one once), %zu with wrong bytes, skipped %llu (want 6), "
				      "rio_loader_records %llu in all (want 450: damaged frames count)",
				      k ? "scanned" : "with .idx", rio_shuffle_name(all_shuffles[si]), W,
				      wrong, bad, (unsigned long long)skipped[k],
				      (unsigned long long)records[k]);
			}
			for (int r = 0; r < W; r++) {
				char diff[400];
				CHECK(lu_seq_equal(&s[0][r], 0, &s[1][r], 0),
				      "%s, world %d rank %d: with .idx and scanned differ: %s",
				      rio_shuffle_name(all_shuffles[si]), W, r,
				      lu_seq_diff(&s[0][r], 0, &s[1][r], 0, diff, sizeof diff));
				lu_seq_free(&s[0][r]);
				lu_seq_free(&s[1][r]);
			}
		}
	/* FAIL: the scan meets the first damage, or a worker does; either
	 * way the error names shard 1 */
	rio_loader_opts o;
	lu_base_opts(&o);
	o.world = 1;
	o.rank = 0;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, dn.prefix, &o);
	if (rc == 0) {
		lu_seq s;
		lu_seq_init(&s);
		rc = lu_drain_epoch(l, &s, &dn);
		lu_seq_free(&s);
	}
	CHECK(rc == RIO_ECORRUPT_DATA && l &&
	          strstr(rio_loader_error(l)->message, "data-00001-of-00003.tfrecord"),
	      "scanned, FAIL: %d (%s) \"%s\"; want RIO_ECORRUPT_DATA naming shard 1", rc,
	      rio_strerror(rc), l ? rio_loader_error(l)->message : "");
	rio_loader_close(l);
	lu_dataset_free(&di);
	lu_dataset_free(&dn);
	lu_watchdog(NULL, 0);
}

/* The first shard cut in its last record, with and without its .idx. */
static void test_truncated(void)
{
	lu_watchdog("truncated", 120);
	for (int with_idx = 0; with_idx <= 1; with_idx++) {
		lu_dataset d;
		lu_dataset_make(&d, &(lu_spec){.name = with_idx ? (dmg_map ? "cut-idx-map" : "cut-idx")
		                                                : (dmg_map ? "cut-noidx-map" : "cut-noidx"),
		                               .tag = 8,
		                               .counts = dmg_counts,
		                               .nshards = 3,
		                               .comp = RIO_COMPRESSION_NONE,
		                               .idx_mask = with_idx ? 0x7u : 0u});
		cut_file(d.paths[0], d.off[0][40] - 5);
		const char *how = with_idx ? "with .idx" : "scanned";
		char msg[600];
		for (int si = 0; si < 3; si++) {
			rio_shuffle sh = all_shuffles[si];
			const char *what = rio_shuffle_name(sh);
			lu_seq s;
			rio_loader_stats st;
			int orc;
			lu_seq_init(&s);
			int rc = damaged_epoch(&d, sh, RIO_DAMAGE_FAIL, 1, &s, &st, msg, sizeof msg,
			                       &orc);
			/* the error comes from next() after the batches before it, or
			 * from the open that read the shard through */
			CHECK(rc == RIO_ETRUNCATED || (orc < 0 && rc == RIO_EBADINDEX && with_idx),
			      "truncated (%s), %s, FAIL: %s = %d (%s)", how, what,
			      orc < 0 ? "open" : "next", rc, rio_strerror(rc));
			CHECK(strstr(msg, "data-00000-of-00003.tfrecord") != NULL,
			      "truncated (%s): the message \"%s\" does not name the shard", how,
			      msg);
			if (orc == 0 && sh == RIO_SHUFFLE_NONE)
				CHECK(s.nb == 4 && in_shard_order(&d, &s, 0, 32),
				      "truncated (%s), NONE, FAIL: %zu batches before the error, "
				      "want 4 "
				      "(39 good records first)",
				      how, s.nb);
			if (orc < 0)
				printf("\n    (truncated shard %s refused at open: %s)\n", how,
				       msg);
			lu_seq_free(&s);

			lu_seq_init(&s);
			rc = damaged_epoch(&d, sh, RIO_DAMAGE_SKIP, 1, &s, &st, msg, sizeof msg,
			                   &orc);
			CHECK(orc == 0 && rc == 0, "truncated (%s), %s, SKIP: %s = %d (%s) %s", how,
			      what, orc ? "open" : "next", rc, rio_strerror(rc), msg);
			unsigned hits[120] = {0};
			CU_ASSERT_EQUAL(lu_count_hits(&d, &s, hits), 0);
			size_t wrong = 0;
			for (uint64_t i = 0; i < 120; i++)
				wrong += hits[i] != (i == 39 ? 0u : 1u);
			CHECK(wrong == 0 && s.n == 119,
			      "truncated (%s), %s, SKIP: %zu records, %zu not as expected", how,
			      what, s.n, wrong);
			CHECK(orc != 0 || st.skipped == 1,
			      "truncated (%s), %s, SKIP: stats.skipped = %llu, want 1", how, what,
			      (unsigned long long)st.skipped);
			CU_ASSERT_EQUAL(s.bad_payload, 0);
			lu_seq_free(&s);
		}
		lu_dataset_free(&d);
	}
	lu_watchdog(NULL, 0);
}

/* ---- rank and world from the environment ---------------------------------- */

static const char *env_names[] = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
    "SLURM_PROCID",         "SLURM_NTASKS"};
#define NENV 6

static void env_check(const char *what, int want_rank, int want_world)
{
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.rank = -1;
	o.world = -1;
	rio_loader *l = lu_open(d, &o);
	if (!l)
		return;
	CHECK(rio_loader_rank(l) == want_rank && rio_loader_world(l) == want_world,
	      "%s: rank %d world %d, want %d %d", what, rio_loader_rank(l), rio_loader_world(l),
	      want_rank, want_world);
	/* and the records are that rank's */
	lu_seq s;
	lu_seq_init(&s);
	CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
	rio_loader_close(l);
	o.rank = want_rank;
	o.world = want_world;
	lu_seq t;
	lu_seq_init(&t);
	lu_run(d, &o, 1, &t);
	CHECK(lu_seq_equal(&s, 0, &t, 0), "%s: not the records of rank %d of %d", what, want_rank,
	      want_world);
	lu_seq_free(&s);
	lu_seq_free(&t);
}

static void test_rank_from_env(void)
{
	char *saved[NENV];
	for (int i = 0; i < NENV; i++) {
		saved[i] = getenv(env_names[i]) ? strdup(getenv(env_names[i])) : NULL;
		unsetenv(env_names[i]);
	}
	env_check("no variables", 0, 1);
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	env_check("Open MPI", 2, 3);
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	setenv("PMI_RANK", "1", 1);
	setenv("PMI_SIZE", "4", 1);
	env_check("PMI", 1, 4);
	unsetenv("PMI_RANK");
	unsetenv("PMI_SIZE");
	setenv("SLURM_PROCID", "4", 1);
	setenv("SLURM_NTASKS", "5", 1);
	env_check("Slurm", 4, 5);
	/* Open MPI first, then PMI, then Slurm */
	setenv("PMI_RANK", "0", 1);
	setenv("PMI_SIZE", "2", 1);
	env_check("PMI before Slurm", 0, 2);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	env_check("Open MPI before PMI and Slurm", 1, 3);
	/* explicit values win over the environment */
	{
		rio_loader_opts o;
		lu_base_opts(&o);
		o.rank = 0;
		o.world = 2;
		rio_loader *l = lu_open(dataset(DS_MAIN), &o);
		if (l) {
			CU_ASSERT_EQUAL(rio_loader_rank(l), 0);
			CU_ASSERT_EQUAL(rio_loader_world(l), 2);
			rio_loader_close(l);
		}
	}
	for (int i = 0; i < NENV; i++) {
		if (saved[i])
			setenv(env_names[i], saved[i], 1);
		else
			unsetenv(env_names[i]);
		free(saved[i]);
	}
}

/* ---- errors ----------------------------------------------------------------- */

static void test_open_errors(void)
{
	rio_loader_opts o;
	lu_base_opts(&o);
	rio_loader *l = NULL;
	char spec[700];
	snprintf(spec, sizeof spec, "%s/nothing-*.tfrecord", tu_tmpdir());
	int rc = rio_loader_open(&l, spec, &o);
	CHECK(rc == RIO_ENOSHARDS, "no shards: %d (%s), want RIO_ENOSHARDS", rc, rio_strerror(rc));
	CU_ASSERT_PTR_NOT_NULL(l);
	if (l) {
		CU_ASSERT_EQUAL(rio_loader_error(l)->code, RIO_ENOSHARDS);
		CU_ASSERT(rio_loader_error(l)->message[0] != '\0');
	}
	rio_loader_close(l);

	/* a set with a shard missing */
	static const size_t three[3] = {2, 2, 2};
	lu_dataset d;
	lu_dataset_make(&d, &(lu_spec){.name = "gap",
	                               .tag = 3,
	                               .counts = three,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE});
	CU_ASSERT_EQUAL_FATAL(unlink(d.paths[1]), 0);
	l = NULL;
	rc = rio_loader_open(&l, d.prefix, &o);
	CHECK(rc == RIO_EMISSINGSHARD, "a missing shard: %d (%s)", rc, rio_strerror(rc));
	if (l)
		CHECK(strstr(rio_loader_error(l)->message, "data-00001-of-00003") != NULL,
		      "the message \"%s\" does not name the missing shard",
		      rio_loader_error(l)->message);
	rio_loader_close(l);
	lu_dataset_free(&d);

	/* batch_size 0 */
	o.batch_size = 0;
	l = NULL;
	rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
	CHECK(rc == -EINVAL, "batch_size 0: %d (%s), want -EINVAL", rc, rio_strerror(rc));
	rio_loader_close(l);

#ifndef HAVE_CUDA
	/* GPU options in a build without CUDA */
	lu_base_opts(&o);
	o.pinned = 1;
	l = NULL;
	rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
	CHECK(rc == -ENOTSUP, "pinned without CUDA: %d (%s), want -ENOTSUP", rc, rio_strerror(rc));
	rio_loader_close(l);
	lu_base_opts(&o);
	o.device_copy = 1;
	l = NULL;
	rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
	CHECK(rc == -ENOTSUP, "device_copy without CUDA: %d (%s), want -ENOTSUP", rc,
	      rio_strerror(rc));
	rio_loader_close(l);
	/* and with columns (the pool's column memory is what gets pinned) */
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_NATIVE, &cols, &ncols, NULL), 0);
	for (int k = 0; k < 2; k++) {
		lu_base_opts(&o);
		o.columns = cols;
		o.ncolumns = ncols;
		o.pinned = k == 0;
		o.device_copy = k == 1;
		l = NULL;
		rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
		CHECK(rc == -ENOTSUP, "%s with columns, without CUDA: %d (%s), want -ENOTSUP",
		      k ? "device_copy" : "pinned", rc, rio_strerror(rc));
		rio_loader_close(l);
	}
	free(cols);
#endif

	/* NULL options are the defaults; NULL closes nothing */
	l = NULL;
	rc = rio_loader_open(&l, dataset(DS_TWO)->prefix, NULL);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		rio_batch *b;
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 1);
		CU_ASSERT_EQUAL(b->count, 13); /* batch_size 32: all 13 in one */
		rio_loader_release(l, b);
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 0);
	}
	rio_loader_close(l);
	rio_loader_close(NULL);
}

/* Column specs given through the C API (no parser in between): a length
 * whose batch would not fit a size_t (batch_size * bytes wrapped, and the
 * first batch wrote past a tiny slot), or over the limit, an empty name, a
 * name without its NUL and an unknown type are -EINVAL at open, naming the
 * column. */
static void test_column_sizes(void)
{
	static const struct {
		const char *name;
		rio_dtype type;
		size_t length, batch;
		const char *named;
	} bad[] = {
	    {"image", RIO_DTYPE_U8, (size_t)1 << 58, 64, "column image: length"},
	    {"image", RIO_DTYPE_I64, (size_t)1 << 62, 32, "column image: length"},
	    {"image", RIO_DTYPE_U8, (size_t)1 << 57, 128, "column image: length"},
	    {"image", RIO_DTYPE_F32, SIZE_MAX, 1, "column image: length"},
	    {"image", RIO_DTYPE_U8, RIO_LOADER_MAX_COLUMN_LENGTH + (size_t)1, 1,
	     "column image: length"},
	    {"image", RIO_DTYPE_U8, 0, 1, "column image: length 0"},
	    {"image", (rio_dtype)7, 4, 1, "column image: type 7"},
	    {"", RIO_DTYPE_U8, 4, 1, "column 1: a name"},
	    {NULL, RIO_DTYPE_U8, 4, 1, "column 1: a name"}, /* 128 bytes, no NUL */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		rio_column_spec cols[2] = {{.name = "label", .type = RIO_DTYPE_I64, .length = 1}};
		if (bad[i].name)
			snprintf(cols[1].name, sizeof cols[1].name, "%s", bad[i].name);
		else
			memset(cols[1].name, 'x', sizeof cols[1].name);
		cols[1].type = bad[i].type;
		cols[1].length = bad[i].length;
		rio_loader_opts o;
		lu_base_opts(&o);
		o.columns = cols;
		o.ncolumns = 2;
		o.batch_size = bad[i].batch;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, dataset(DS_TWO)->prefix, &o);
		CHECK(rc == -EINVAL, "case %zu: %d (%s), want -EINVAL", i, rc, rio_strerror(rc));
		if (l)
			CHECK(strstr(rio_loader_error(l)->message, bad[i].named) != NULL,
			      "case %zu: the message \"%s\" does not say \"%s\"", i,
			      rio_loader_error(l)->message, bad[i].named);
		rio_loader_close(l);
	}
}

/* A FIFO among the shards: RIO_EUNSUPPORTED naming it, at once (no wait for
 * a writer), alone or after a good shard. */
static void test_not_regular(void)
{
	rio_loader_opts o;
	lu_base_opts(&o);
	char fifo[700], spec[1500];
	snprintf(fifo, sizeof fifo, "%s/a-fifo.tfrecord", tu_tmpdir());
	unlink(fifo);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	snprintf(spec, sizeof spec, "%s,%s", dataset(DS_TWO)->paths[0], fifo);
	const char *specs[] = {fifo, spec};
	for (int k = 0; k < 2; k++) {
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, specs[k], &o);
		CHECK(rc == RIO_EUNSUPPORTED, "a FIFO: %d (%s), want RIO_EUNSUPPORTED", rc,
		      rio_strerror(rc));
		if (l)
			CHECK(strstr(rio_loader_error(l)->message, "a-fifo.tfrecord: ") &&
			          strstr(rio_loader_error(l)->message, "not a regular file"),
			      "the message \"%s\" does not name the FIFO", rio_loader_error(l)->message);
		rio_loader_close(l);
	}
	unlink(fifo);
}

/* The consumer may hold opts.hold batches; one more is -ENOBUFS, and
 * releasing one makes room. */
static void test_hold(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (size_t hold = 1; hold <= 3; hold++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.hold = hold;
		o.prefetch = 2;
		rio_loader *l = lu_open(d, &o);
		if (!l)
			return;
		rio_batch *b[4];
		lu_seq s;
		lu_seq_init(&s);
		for (size_t i = 0; i < hold; i++) {
			CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &b[i]), 1);
			CU_ASSERT_EQUAL(b[i]->number, i);
		}
		rio_batch *extra = NULL;
		int rc = rio_loader_next(l, &extra);
		CHECK(rc == -ENOBUFS, "hold %zu: next with %zu batches held = %d, want -ENOBUFS",
		      hold, hold, rc);
		if (rc == 1)
			rio_loader_release(l, extra);
		/* the held batches are intact */
		for (size_t i = 0; i < hold; i++)
			lu_seq_add(&s, b[i], d);
		CU_ASSERT_EQUAL(s.bad_payload, 0);
		CU_ASSERT(in_shard_order(d, &s, 0, 16 * hold));
		rio_loader_release(l, b[0]);
		if (rc != 1) {
			CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &b[0]), 1);
			CHECK(b[0]->number == hold,
			      "after -ENOBUFS the next batch is number %llu, "
			      "want %zu",
			      (unsigned long long)b[0]->number, hold);
		}
		/* closing with batches held frees them (ASan checks) */
		rio_loader_close(l);
		lu_seq_free(&s);
	}
}

/* rio_loader_next_timeout with a zero timeout: a wait that times out hands
 * out nothing and loses nothing; polled to the end, two epochs are the
 * batches rio_loader_next gives, in every shuffle mode (the placed path
 * and the pipeline). */
static void test_next_timeout(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	const rio_shuffle modes[] = {RIO_SHUFFLE_NONE, RIO_SHUFFLE_BUFFER, RIO_SHUFFLE_GLOBAL};
	for (size_t m = 0; m < 3; m++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = modes[m];
		o.seed = 5;
		lu_seq want, got;
		lu_seq_init(&want);
		lu_seq_init(&got);
		lu_run(d, &o, 2, &want);
		rio_loader *l = lu_open(d, &o);
		for (int e = 0; l && e < 2; e++) {
			int rc;
			rio_batch *b;
			while ((rc = rio_loader_next_timeout(l, &b, 0)) != 0) {
				if (rc == -ETIMEDOUT) {
					CU_ASSERT_PTR_NULL(b);
					continue;
				}
				CU_ASSERT_EQUAL_FATAL(rc, 1);
				lu_seq_add(&got, b, d);
				rio_loader_release(l, b);
			}
		}
		CHECK(lu_seq_equal(&want, 0, &got, 0), "shuffle %d: polled batches differ: %s",
		      (int)modes[m], lu_seq_diff(&want, 0, &got, 0, (char[256]){0}, 256));
		CU_ASSERT_EQUAL(got.bad_payload, 0);
		rio_loader_close(l);
		lu_seq_free(&want);
		lu_seq_free(&got);
	}
}

/* Two loaders at once, used in turns, each as if alone. */
static void test_two_loaders(void)
{
	const lu_dataset *d = dataset(DS_MAIN), *d2 = dataset(DS_TWO);
	rio_loader_opts o1, o2;
	lu_base_opts(&o1);
	lu_base_opts(&o2);
	o1.shuffle = RIO_SHUFFLE_NONE;
	o2.shuffle = RIO_SHUFFLE_GLOBAL;
	o2.seed = 3;
	lu_seq r1, r2, r3, s[3];
	lu_seq_init(&r1);
	lu_seq_init(&r2);
	lu_seq_init(&r3);
	lu_run(d, &o1, 2, &r1);
	lu_run(d, &o2, 2, &r2);
	lu_run(d2, &o2, 2, &r3);
	rio_loader *l[3];
	l[0] = lu_open(d, &o1);
	l[1] = lu_open(d, &o2);
	l[2] = lu_open(d2, &o2);
	if (l[0] && l[1] && l[2]) {
		int rcs[3];
		for (int i = 0; i < 3; i++)
			lu_seq_init(&s[i]);
		for (int e = 0; e < 2; e++) {
			/* d2 has 13 records; its loader is drained with the others */
			int done[3] = {0}, active = 3;
			while (active)
				for (int i = 0; i < 3; i++) {
					if (done[i])
						continue;
					rio_batch *b;
					int rc = rio_loader_next(l[i], &b);
					if (rc == 1) {
						lu_seq_add(&s[i], b, i == 2 ? d2 : d);
						rio_loader_release(l[i], b);
					} else {
						rcs[i] = rc;
						done[i] = 1;
						active--;
					}
				}
			for (int i = 0; i < 3; i++)
				CU_ASSERT_EQUAL(rcs[i], 0);
		}
		CHECK(lu_seq_equal(&r1, 0, &s[0], 0), "loader 1 of 3 differs from its solo run");
		CHECK(lu_seq_equal(&r2, 0, &s[1], 0), "loader 2 of 3 differs from its solo run");
		CHECK(lu_seq_equal(&r3, 0, &s[2], 0), "loader 3 of 3 differs from its solo run");
		for (int i = 0; i < 3; i++) {
			CU_ASSERT_EQUAL(s[i].bad_payload, 0);
			lu_seq_free(&s[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		rio_loader_close(l[i]);
	lu_seq_free(&r1);
	lu_seq_free(&r2);
	lu_seq_free(&r3);
}

/* Statistics count what was delivered, over epochs. */
static void test_stats(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		rio_loader *l = lu_open(d, &o);
		if (!l)
			return;
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		CU_ASSERT_EQUAL(st.records, 0);
		CU_ASSERT_EQUAL(st.batches, 0);
		CU_ASSERT_EQUAL(st.bytes, 0);
		lu_seq s;
		lu_seq_init(&s);
		CU_ASSERT_EQUAL(lu_take(l, &s, d, 5), 0);
		rio_loader_stats_get(l, &st);
		CU_ASSERT_EQUAL(st.records, 80);
		CU_ASSERT_EQUAL(st.batches, 5);
		CU_ASSERT_EQUAL(st.bytes, s.bytes);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, d), 0);
		rio_loader_stats_get(l, &st);
		CHECK(st.records == 2 * MAIN_TOTAL && st.batches == s.nb && st.bytes == s.bytes,
		      "%s: stats %llu records %llu batches %llu bytes, delivered %zu %zu %llu",
		      rio_shuffle_name(o.shuffle), (unsigned long long)st.records,
		      (unsigned long long)st.batches, (unsigned long long)st.bytes, s.n, s.nb,
		      (unsigned long long)s.bytes);
		CU_ASSERT_EQUAL(s.nb, 60);
		CU_ASSERT_EQUAL(st.skipped, 0);
		/* every byte of the shards read at least once a epoch */
		uint64_t file_total = 0;
		for (size_t k = 0; k < d->nshards; k++)
			file_total += d->off[k][d->count[k]];
		CHECK(st.file_bytes >= 2 * file_total, "%s: file_bytes %llu < %llu",
		      rio_shuffle_name(o.shuffle), (unsigned long long)st.file_bytes,
		      (unsigned long long)(2 * file_total));
		CU_ASSERT(st.wait_seconds >= 0.0);
		rio_loader_close(l);
		lu_seq_free(&s);
	}
}

/* The shard list as rio_shardset_expand() gives it; specs as globs and
 * lists. */
static void test_shard_list(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	rio_loader_opts o;
	lu_base_opts(&o);
	rio_loader *l = lu_open(d, &o);
	if (!l)
		return;
	const rio_shardset *set = rio_loader_shards(l);
	CU_ASSERT_EQUAL_FATAL(set->count, 7);
	for (size_t i = 0; i < 7; i++)
		CU_ASSERT_STRING_EQUAL(set->paths[i], d->paths[i]);
	rio_loader_close(l);

	/* a glob (which never takes the .idx files) */
	char spec[1500];
	snprintf(spec, sizeof spec, "%s/data-*", d->dir);
	lu_seq a, b;
	lu_seq_init(&a);
	lu_seq_init(&b);
	lu_run(d, &o, 1, &a);
	l = NULL;
	int rc = rio_loader_open(&l, spec, &o);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_EQUAL(rio_loader_shards(l)->count, 7);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &b, d), 0);
		CU_ASSERT(lu_seq_equal(&a, 0, &b, 0));
	}
	rio_loader_close(l);
	lu_seq_free(&b);

	/* a list of two shards: numbered by their place in the list */
	snprintf(spec, sizeof spec, "%s,%s", d->paths[2], d->paths[3]);
	l = NULL;
	rc = rio_loader_open(&l, spec, &o);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		lu_seq_init(&b);
		CU_ASSERT_EQUAL(rio_loader_shards(l)->count, 2);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &b, NULL), 0);
		CU_ASSERT_EQUAL(b.n, 13 + 64);
		size_t wrong = 0;
		for (size_t i = 0; i < b.n; i++)
			wrong += b.rec[i].shard != (i < 13 ? 0u : 1u) ||
			         b.rec[i].index != (i < 13 ? i : i - 13);
		CU_ASSERT_EQUAL(wrong, 0);
		lu_seq_free(&b);
	}
	rio_loader_close(l);
	lu_seq_free(&a);
}

/* No thread runs until the first rio_loader_next(), and none is left after
 * rio_loader_close() (counted in /proc/self/task). */
static void test_threads(void)
{
	int base = tu_count_entries("/proc/self/task");
	if (base < 1) {
		printf("\n    no /proc/self/task here: skipped\n");
		return;
	}
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.workers = 3;
		rio_loader *l = lu_open(d, &o);
		if (!l)
			return;
		int after_open = tu_count_entries("/proc/self/task");
		CHECK(after_open == base, "%s: %d threads after open, %d before",
		      rio_shuffle_name(o.shuffle), after_open, base);
		rio_batch *b;
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 1);
		int running = tu_count_entries("/proc/self/task");
		CHECK(running > base, "%s: no thread started by rio_loader_next (%d)",
		      rio_shuffle_name(o.shuffle), running);
		rio_loader_release(l, b);
		rio_loader_close(l);
		int after_close = tu_count_entries("/proc/self/task");
		CHECK(after_close == base, "%s: %d threads after close, %d before",
		      rio_shuffle_name(o.shuffle), after_close, base);
	}
}

/* Closing at any point: before the first batch, mid-epoch. */
static void test_close_anywhere(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	for (int si = 0; si < 3; si++)
		for (size_t k = 0; k < 4; k++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.prefetch = 2;
			o.workers = 3;
			rio_loader *l = lu_open(d, &o);
			if (!l)
				return;
			lu_seq s;
			lu_seq_init(&s);
			CU_ASSERT_EQUAL(lu_take(l, &s, d, k * 3), 0);
			rio_loader_close(l);
			lu_seq_free(&s);
		}
}

/* The damage tests with mapped shards: the same errors, skips and
 * messages (bytes past a cut read as missing) */
static void test_damage_mapped(void)
{
	dmg_map = 1;
	test_damaged_data();
	test_truncated();
	dmg_map = 0;
}

static const tu_test basic_tests[] = {
    {"rio_loader_opts_init defaults", test_opts_defaults},
    {"dtype names and sizes", test_dtypes},
    {"shuffle, sharding and io names: one table each", test_option_names},
    {"rio_column_spec_parse", test_column_spec_parse},
    {NULL, NULL},
};

static const tu_test once_tests[] = {
    {"exactly once, NONE, worlds 1-5, RECORDS and FILES", test_once_none},
    {"exactly once, BUFFER, worlds 1-5, RECORDS and FILES", test_once_buffer},
    {"exactly once, GLOBAL, worlds 1-5, RECORDS and FILES", test_once_global},
    {"shards without .idx: scanned, same sequences", test_scan_path},
    {"a rank with no records", test_empty_rank},
    {"fewer shards than ranks", test_fewer_shards_than_ranks},
    {"FILES with fewer shards than ranks: refused", test_files_too_few_shards},
    {"AUTO sharding", test_auto_sharding},
    {NULL, NULL},
};

static const tu_test order_tests[] = {
    {"same order with 1, 2, 4 workers and across runs", test_determinism},
    {"seed and epoch change the order; NONE keeps shard order", test_seed_and_epoch},
    {"GLOBAL mixes the shards", test_global_mixes},
    {"drop_remainder", test_drop_remainder},
    {"rio_loader_epoch and rio_loader_position", test_epoch_position},
    {NULL, NULL},
};

static const tu_test resume_tests[] = {
    {"resume, NONE", test_resume_none},
    {"resume, BUFFER", test_resume_buffer},
    {"resume, GLOBAL", test_resume_global},
    {"states of other loaders and damaged states refused", test_resume_refused},
    {"rio_loader_set_epoch", test_set_epoch},
    {NULL, NULL},
};

static const tu_test io_tests[] = {
    {"RIO_LOADER_IO=pread", test_io_env_pread},
    {"O_DIRECT", test_direct},
    {"reading AUTO: the path for the case, the same batches", test_route_auto},
    {"reading named: that path", test_route_asked},
    {"mapped shards (opts.map)", test_map},
    {"opts.map: raw records are views into the mappings", test_map_views},
    {"opts.map: buffer shuffling, ranks, workers, drop_remainder", test_map_buffer},
    {"gzip, zlib, lz4 shards: the same records", test_compressed},
    {"GLOBAL over compressed shards: RIO_EUNSUPPORTED", test_compressed_global},
    {NULL, NULL},
};

static const tu_test decode_tests[] = {
    {"Examples into columns", test_decode},
    {"records that do not match the columns", test_decode_mismatch},
    {"an f32 column from bytes and from floats, record by record", test_decode_mixed_kinds},
    {"tfx-mnist.tfrecord", test_decode_tf_mnist},
    {NULL, NULL},
};
/* Every option with a limit in loader.h: the limit is accepted by open, one
 * past it refused with -EINVAL and a message naming the option (the tools
 * check the same limits: cli_bench.sh, train_errors.sh). */
typedef struct limit_case {
	const char *name;            /* as the message names it */
	void (*set)(rio_loader_opts *o, uint64_t v);
	uint64_t ok, bad;            /* the limit, and one past it */
} limit_case;

static void set_batch(rio_loader_opts *o, uint64_t v) { o->batch_size = (size_t)v; }
static void set_workers(rio_loader_opts *o, uint64_t v) { o->workers = (int)v; }
static void set_prefetch(rio_loader_opts *o, uint64_t v) { o->prefetch = (size_t)v; }
static void set_hold(rio_loader_opts *o, uint64_t v) { o->hold = (size_t)v; }
static void set_shuffle_buffer(rio_loader_opts *o, uint64_t v) { o->shuffle_buffer = (size_t)v; }
static void set_interleave(rio_loader_opts *o, uint64_t v) { o->interleave = (size_t)v; }
static void set_queue_depth(rio_loader_opts *o, uint64_t v) { o->queue_depth = (unsigned)v; }
static void set_read_size(rio_loader_opts *o, uint64_t v) { o->read_size = (size_t)v; }
static void set_chunk_bytes(rio_loader_opts *o, uint64_t v) { o->chunk_bytes = (size_t)v; }
static void set_world(rio_loader_opts *o, uint64_t v) { o->world = (int)v; }

static void test_option_limits(void)
{
	static const limit_case cases[] = {
	    {"batch_size", set_batch, RIO_LOADER_MAX_BATCH, RIO_LOADER_MAX_BATCH + 1ull},
	    {"batch_size", set_batch, 1, 0},
	    {"workers", set_workers, RIO_LOADER_MAX_WORKERS, RIO_LOADER_MAX_WORKERS + 1},
	    {"workers", set_workers, 1, 0},
	    {"prefetch", set_prefetch, RIO_LOADER_MAX_PREFETCH, RIO_LOADER_MAX_PREFETCH + 1},
	    {"hold", set_hold, RIO_LOADER_MAX_PREFETCH, RIO_LOADER_MAX_PREFETCH + 1},
	    {"shuffle_buffer", set_shuffle_buffer, RIO_LOADER_MAX_SHUFFLE_BUFFER,
	     RIO_LOADER_MAX_SHUFFLE_BUFFER + 1ull},
	    {"shuffle_buffer", set_shuffle_buffer, 1, 0},
	    {"interleave", set_interleave, RIO_LOADER_MAX_INTERLEAVE, RIO_LOADER_MAX_INTERLEAVE + 1},
	    {"queue_depth", set_queue_depth, RIO_LOADER_MAX_QUEUE_DEPTH,
	     RIO_LOADER_MAX_QUEUE_DEPTH + 1},
	    {"read_size", set_read_size, RIO_LOADER_MAX_READ_SIZE, RIO_LOADER_MAX_READ_SIZE + 1ull},
	    {"read_size", set_read_size, RIO_LOADER_MIN_READ_SIZE, RIO_LOADER_MIN_READ_SIZE - 1},
	    {"chunk_bytes", set_chunk_bytes, RIO_LOADER_MIN_CHUNK_BYTES,
	     RIO_LOADER_MIN_CHUNK_BYTES - 1},
	    {"world", set_world, RIO_LOADER_MAX_WORLD, RIO_LOADER_MAX_WORLD + 1ull},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const limit_case *c = &cases[i];
		for (int past = 0; past < 2; past++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = RIO_SHUFFLE_BUFFER;
			o.io = RIO_IO_PREAD; /* no rings for 256 workers */
			o.prefetch = o.hold = 1; /* a small pool for the largest batch */
			o.workers = 1;
			c->set(&o, past ? c->bad : c->ok);
			rio_loader *l = NULL;
			int rc = rio_loader_open(&l, dataset(DS_MAIN)->prefix, &o);
			const char *msg = l ? rio_loader_error(l)->message : "";
			if (past)
				CHECK(rc == -EINVAL && strstr(msg, c->name),
				      "%s = %llu: open = %d \"%s\", want -EINVAL naming it", c->name,
				      (unsigned long long)c->bad, rc, msg);
			else
				CHECK(rc == 0, "%s = %llu (the limit): open = %d \"%s\", want 0", c->name,
				      (unsigned long long)c->ok, rc, msg);
			rio_loader_close(l);
		}
	}
}

/* Where thread `tid` may run (its Cpus_allowed_list, as /proc says), into
 * buf; 0, or -1 when /proc does not say. */
static int task_cpus(long tid, char *buf, size_t size)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int found = -1;
	while (found < 0 && fgets(line, sizeof line, f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			snprintf(buf, size, "%s", line + 18 + strspn(line + 18, " \t"));
			buf[strcspn(buf, "\n")] = 0;
			found = 0;
		}
	fclose(f);
	return found;
}

/* opts.cpus: out-of-range CPUs refused at open; the workers and the
 * batcher run on the CPUs given, the caller stays where it was, and the
 * batches are those of a loader without the option; a set with no CPU
 * this process may use fails the epoch's start with a message. */
static void test_cpus(void)
{
	const lu_dataset *d = dataset(DS_MAIN);
	const int bad_cpus[] = {-1, CPU_SETSIZE};
	for (int i = 0; i < 2; i++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.cpus = &bad_cpus[i];
		o.ncpus = 1;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, d->prefix, &o);
		const char *msg = l ? rio_loader_error(l)->message : "";
		CHECK(rc == -EINVAL && strstr(msg, "cpus[0]"), "cpus = {%d}: open = %d \"%s\"",
		      bad_cpus[i], rc, msg);
		rio_loader_close(l);
	}
	rio_loader_opts o;
	lu_base_opts(&o);
	o.ncpus = 1; /* and no array */
	rio_loader *l = NULL;
	CU_ASSERT_EQUAL(rio_loader_open(&l, d->prefix, &o), -EINVAL);
	rio_loader_close(l);

	cpu_set_t own;
	char main_before[256], main_after[256], want[32], got[256];
	if (sched_getaffinity(0, sizeof own, &own) < 0 ||
	    task_cpus((long)getpid(), main_before, sizeof main_before) < 0) {
		printf("\n    no affinity or /proc here: skipped\n");
		return;
	}
	int cpu = -1; /* the last CPU this process may use */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &own))
			cpu = c;
	snprintf(want, sizeof want, "%d", cpu);
	for (int si = 0; si < 3; si++) {
		lu_seq plain, placed;
		lu_seq_init(&plain);
		lu_seq_init(&placed);
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.workers = 3;
		/* one batch ahead: the workers are still at work (blocked on a
		 * slot) when the first batch is handed out, whereas an automatic
		 * prefetch may hold the whole of this small epoch */
		o.prefetch = 1;
		CU_ASSERT_EQUAL(lu_run(d, &o, 2, &plain), 0);
		o.cpus = &cpu;
		o.ncpus = 1;
		l = lu_open(d, &o);
		if (!l)
			return;
		/* the threads there are before (a sanitizer's own, say) */
		long before[64];
		size_t nbefore = 0;
		DIR *dir = opendir("/proc/self/task");
		for (struct dirent *e; dir && (e = readdir(dir)) && nbefore < 64;)
			if (atol(e->d_name) > 0)
				before[nbefore++] = atol(e->d_name);
		if (dir)
			closedir(dir);
		rio_batch *b;
		CU_ASSERT_EQUAL(rio_loader_next(l, &b), 1);
		lu_seq_add(&placed, b, d);
		rio_loader_release(l, b);
		/* every thread started since is the loader's */
		size_t threads = 0;
		dir = opendir("/proc/self/task");
		for (struct dirent *e; dir && (e = readdir(dir));) {
			long tid = atol(e->d_name);
			int old = 0;
			for (size_t k = 0; k < nbefore; k++)
				old |= before[k] == tid;
			if (tid <= 0 || old || task_cpus(tid, got, sizeof got) < 0)
				continue;
			threads++;
			CHECK(!strcmp(got, want), "%s: a loader thread runs on CPUs %s, opts.cpus is %s",
			      rio_shuffle_name(o.shuffle), got, want);
		}
		if (dir)
			closedir(dir);
		/* 3 workers, and the batcher unless the placed path serves */
		CHECK(threads >= 3 && threads <= 4, "%s: %zu loader threads found, want 3 or 4",
		      rio_shuffle_name(o.shuffle), threads);
		CU_ASSERT_EQUAL(lu_drain_through(l, &placed, d, 1), 0);
		rio_loader_close(l);
		CHECK(lu_seq_equal(&plain, 0, &placed, 0), "%s: other batches with opts.cpus",
		      rio_shuffle_name(o.shuffle));
		lu_seq_free(&plain);
		lu_seq_free(&placed);
	}
	CHECK(task_cpus((long)getpid(), main_after, sizeof main_after) == 0 &&
	          !strcmp(main_before, main_after),
	      "the caller's CPUs were %s, now %s", main_before, main_after);

	/* a CPU this machine does not have: the epoch cannot start */
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	if (conf < 1 || conf >= CPU_SETSIZE)
		return;
	int none = CPU_SETSIZE - 1;
	lu_base_opts(&o);
	o.cpus = &none;
	o.ncpus = 1;
	l = lu_open(d, &o);
	if (!l)
		return;
	rio_batch *b;
	int rc = rio_loader_next(l, &b);
	const char *msg = rio_loader_error(l)->message;
	CHECK(rc == -EINVAL && strstr(msg, "opts.cpus"), "cpus = {%d}: next = %d \"%s\"", none, rc,
	      msg);
	rio_loader_close(l);
}

static const tu_test damage_tests[] = {
    {"a damaged record", test_damaged_data},
    {"a truncated shard", test_truncated},
    {"a damaged record and a truncated shard, mapped (opts.map)", test_damage_mapped},
    {"damaged shards without .idx: the scan numbers frames as the index", test_damaged_scanned},
    {NULL, NULL},
};

static const tu_test misc_tests[] = {
    {"rank and world from the environment", test_rank_from_env},
    {"open errors", test_open_errors},
    {"column sizes that do not fit, bad specs: refused at open", test_column_sizes},
    {"a FIFO among the shards: RIO_EUNSUPPORTED", test_not_regular},
    {"option limits: the limit accepted, one past refused", test_option_limits},
    {"-ENOBUFS past opts.hold", test_hold},
    {"two loaders at once", test_two_loaders},
    {"next with a timeout loses nothing", test_next_timeout},
    {"statistics", test_stats},
    {"shard list, globs and lists", test_shard_list},
    {"threads only between next and close", test_threads},
    {"threads on opts.cpus", test_cpus},
    {"close at any point", test_close_anywhere},
    {NULL, NULL},
};

static const tu_suite suites[] = {
    {"options", basic_tests},
    {"exactly once", once_tests},
    {"order", order_tests},
    {"resume", resume_tests},
    {"io and compression", io_tests},
    {"decoding", decode_tests},
    {"damage", damage_tests},
    {"misc", misc_tests},
    {NULL, NULL},
};

RIO_TEST_MAIN(suites)

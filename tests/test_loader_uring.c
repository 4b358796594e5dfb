/*
 * test_loader_uring.c — the loader's io_uring backend gives what pread
 * gives.
 *
 * The same datasets as test_loader (tests/loadutil.h) are read with
 * RIO_IO_URING and RIO_IO_PREAD: the sequences must be identical for every
 * shuffle mode, with deep and shallow queues, small and large reads, with
 * O_DIRECT, over compressed shards, decoded into columns, and on a damaged
 * shard (the same error after the same batches, or the same records under
 * SKIP). RIO_LOADER_IO=uring makes RIO_IO_AUTO use io_uring, and the stats
 * say so. Exits 77 (a skip) where rio_loader_open refuses RIO_IO_URING with
 * -ENOSYS or -EPERM: no io_uring in this kernel or this container.
 */
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const rio_shuffle all_shuffles[3] = {RIO_SHUFFLE_NONE, RIO_SHUFFLE_BUFFER,
                                            RIO_SHUFFLE_GLOBAL};
static const size_t main_counts[7] = {0, 1, 13, 64, 65, 130, 200};

static lu_dataset ds_main, ds_noidx, ds_gz, ds_lz4;
static int made;

static void make_datasets(void)
{
	if (made)
		return;
	lu_dataset_make(&ds_main, &(lu_spec){.name = "main",
	                                     .tag = 1,
	                                     .counts = main_counts,
	                                     .nshards = 7,
	                                     .comp = RIO_COMPRESSION_NONE,
	                                     .idx_mask = 0x7f});
	lu_dataset_make(&ds_noidx, &(lu_spec){.name = "noidx",
	                                      .tag = 1,
	                                      .counts = main_counts,
	                                      .nshards = 7,
	                                      .comp = RIO_COMPRESSION_NONE});
	lu_dataset_make(&ds_gz, &(lu_spec){.name = "gz",
	                                   .tag = 1,
	                                   .counts = main_counts,
	                                   .nshards = 7,
	                                   .comp = RIO_COMPRESSION_GZIP,
	                                   .idx_mask = 0x0f});
	lu_dataset_make(&ds_lz4, &(lu_spec){.name = "lz4",
	                                    .tag = 1,
	                                    .counts = main_counts,
	                                    .nshards = 7,
	                                    .comp = RIO_COMPRESSION_LZ4});
	made = 1;
}

/* pread and io_uring runs of o over d (2 epochs): the same sequence. */
static void compare(const lu_dataset *d, rio_loader_opts o, const char *what)
{
	lu_seq a, b;
	lu_seq_init(&a);
	lu_seq_init(&b);
	o.io = RIO_IO_PREAD;
	lu_run(d, &o, 2, &a);
	o.io = RIO_IO_URING;
	rio_loader *l = lu_open(d, &o);
	if (l) {
		for (int e = 0; e < 2; e++) {
			int rc = lu_drain_epoch(l, &b, d);
			CHECK(rc == 0, "%s: io_uring epoch %d: %d (%s) %s", what, e, rc,
			      rio_strerror(rc), rio_loader_error(l)->message);
		}
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		CHECK(st.io_uring == 1, "%s: RIO_IO_URING but stats.io_uring = %d", what,
		      st.io_uring);
		rio_loader_close(l);
	}
	CHECK(a.n > 0 && lu_seq_equal(&a, 0, &b, 0),
	      "%s: io_uring gives another sequence than pread (%zu / %zu records)", what, b.n, a.n);
	CHECK(b.bad_payload == 0 && b.bad_columns == 0, "%s: %zu wrong records, %zu wrong values",
	      what, b.bad_payload, b.bad_columns);
	lu_seq_free(&a);
	lu_seq_free(&b);
}

static void test_same_as_pread(void)
{
	lu_watchdog("uring vs pread", 180);
	make_datasets();
	static const struct {
		unsigned qd;
		size_t read_size, chunk;
	} io[] = {
	    {32, 256u << 10, 4096}, {1, 4096, 4096}, {4, 8192, 65536}, {32, 256u << 10, 1u << 20}};
	for (int si = 0; si < 3; si++)
		for (size_t k = 0; k < sizeof io / sizeof io[0]; k++)
			for (int W = 1; W <= 3; W += 2)
				for (int r = 0; r < W; r++) {
					rio_loader_opts o;
					lu_base_opts(&o);
					o.shuffle = all_shuffles[si];
					o.world = W;
					o.rank = r;
					o.queue_depth = io[k].qd;
					o.read_size = io[k].read_size;
					o.chunk_bytes = io[k].chunk;
					char what[160];
					snprintf(what, sizeof what,
					         "%s world %d rank %d, queue depth %u, reads of "
					         "%zu, chunks "
					         "of %zu",
					         rio_shuffle_name(all_shuffles[si]), W, r, io[k].qd, io[k].read_size,
					         io[k].chunk);
					compare(&ds_main, o, what);
					if (k == 0) {
						strcat(what, ", no .idx");
						compare(&ds_noidx, o, what);
					}
				}
	lu_watchdog(NULL, 0);
}

static void test_direct(void)
{
	make_datasets();
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.direct = 1;
		o.io = RIO_IO_URING;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, ds_main.prefix, &o);
		rio_loader_close(l);
		if (rc == -EINVAL) {
			printf("\n    O_DIRECT refused here: skipped\n");
			return;
		}
		CHECK(rc == 0, "io_uring + O_DIRECT: open = %d (%s)", rc, rio_strerror(rc));
		char what[64];
		snprintf(what, sizeof what, "%s, O_DIRECT", rio_shuffle_name(all_shuffles[si]));
		compare(&ds_main, o, what);
		/* and the same as plain reads */
		lu_seq a, b;
		lu_seq_init(&a);
		lu_seq_init(&b);
		lu_run(&ds_main, &o, 1, &a);
		o.direct = 0;
		lu_run(&ds_main, &o, 1, &b);
		CHECK(lu_seq_equal(&a, 0, &b, 0), "%s: O_DIRECT changes the sequence", what);
		lu_seq_free(&a);
		lu_seq_free(&b);
	}
}

static void test_compressed(void)
{
	make_datasets();
	for (int si = 0; si < 2; si++)
		for (int W = 1; W <= 2; W++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.world = W;
			o.rank = W - 1;
			char what[64];
			snprintf(what, sizeof what, "gzip, %s, world %d", rio_shuffle_name(all_shuffles[si]), W);
			compare(&ds_gz, o, what);
			snprintf(what, sizeof what, "lz4, %s, world %d", rio_shuffle_name(all_shuffles[si]), W);
			compare(&ds_lz4, o, what);
		}
}

static void test_decode(void)
{
	static const size_t counts[3] = {20, 37, 5};
	lu_dataset d;
	lu_dataset_make(&d, &(lu_spec){.name = "ex",
	                               .tag = 5,
	                               .counts = counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x3,
	                               .example = 1});
	rio_column_spec *cols = NULL;
	size_t ncols = 0;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(LU_COLS_NATIVE, &cols, &ncols, NULL), 0);
	for (int si = 0; si < 3; si++) {
		rio_loader_opts o;
		lu_base_opts(&o);
		o.shuffle = all_shuffles[si];
		o.batch_size = 8;
		o.columns = cols;
		o.ncolumns = ncols;
		char what[64];
		snprintf(what, sizeof what, "decoded, %s", rio_shuffle_name(all_shuffles[si]));
		compare(&d, o, what);
	}
	free(cols);
	lu_dataset_free(&d);
}

/* A damaged record: the same error after the same batches, the same
 * records under SKIP. */
static void test_damaged(void)
{
	lu_watchdog("uring damaged", 120);
	static const size_t counts[3] = {40, 40, 40};
	lu_dataset d;
	lu_dataset_make(&d, &(lu_spec){.name = "dmg",
	                               .tag = 7,
	                               .counts = counts,
	                               .nshards = 3,
	                               .comp = RIO_COMPRESSION_NONE,
	                               .idx_mask = 0x7});
	size_t size;
	uint8_t *buf = tu_read_file(d.paths[1], &size);
	CU_ASSERT_FATAL(buf != NULL);
	buf[d.off[1][17] + RIO_HEADER_SIZE + 5] ^= 0x20;
	tu_write_file(d.paths[1], buf, size);
	free(buf);
	for (int si = 0; si < 3; si++)
		for (int policy = RIO_DAMAGE_FAIL; policy <= RIO_DAMAGE_SKIP; policy++) {
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = all_shuffles[si];
			o.batch_size = 8;
			o.on_damage = (rio_damage_policy)policy;
			lu_seq s[2];
			int rcs[2] = {99, 99};
			uint64_t skipped[2] = {0, 0};
			for (int k = 0; k < 2; k++) {
				lu_seq_init(&s[k]);
				o.io = k ? RIO_IO_URING : RIO_IO_PREAD;
				rio_loader *l = lu_open(&d, &o);
				if (!l)
					continue;
				rcs[k] = lu_drain_epoch(l, &s[k], &d);
				if (policy == RIO_DAMAGE_FAIL)
					CHECK(strstr(rio_loader_error(l)->message,
					             "data-00001-of-00003.tfrecord") != NULL,
					      "the message \"%s\" does not name the shard",
					      rio_loader_error(l)->message);
				rio_loader_stats st;
				rio_loader_stats_get(l, &st);
				skipped[k] = st.skipped;
				rio_loader_close(l);
			}
			int want = policy == RIO_DAMAGE_FAIL ? RIO_ECORRUPT_DATA : 0;
			CHECK(rcs[0] == want && rcs[1] == want,
			      "%s, %s: pread %d, io_uring %d, want %d", rio_shuffle_name(all_shuffles[si]),
			      policy ? "SKIP" : "FAIL", rcs[0], rcs[1], want);
			if (policy == RIO_DAMAGE_SKIP) {
				CHECK(lu_seq_equal(&s[0], 0, &s[1], 0) && s[1].n == 119,
				      "%s, SKIP: io_uring delivers %zu records, pread %zu",
				      rio_shuffle_name(all_shuffles[si]), s[1].n, s[0].n);
				CHECK(skipped[0] == 1 && skipped[1] == 1,
				      "skipped %llu / %llu, want 1", (unsigned long long)skipped[0],
				      (unsigned long long)skipped[1]);
			} else if (o.shuffle == RIO_SHUFFLE_NONE) {
				CHECK(s[1].nb == 7 && lu_seq_equal(&s[0], 0, &s[1], 0),
				      "NONE, FAIL: io_uring gave %zu batches before the error, "
				      "want 7",
				      s[1].nb);
			}
			CU_ASSERT_EQUAL(s[1].bad_payload, 0);
			lu_seq_free(&s[0]);
			lu_seq_free(&s[1]);
		}
	lu_dataset_free(&d);
	lu_watchdog(NULL, 0);
}

/* RIO_LOADER_IO=uring makes AUTO use io_uring; =pread makes it use pread. */
static void test_env(void)
{
	make_datasets();
	char *saved = getenv("RIO_LOADER_IO") ? strdup(getenv("RIO_LOADER_IO")) : NULL;
	static const struct {
		const char *value;
		rio_io_backend io;
		int want;
	} cases[] = {{"uring", RIO_IO_AUTO, 1},
	             {"pread", RIO_IO_AUTO, 0},
	             {NULL, RIO_IO_URING, 1},
	             {NULL, RIO_IO_PREAD, 0}};
	lu_seq ref;
	lu_seq_init(&ref);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.io = RIO_IO_PREAD;
	unsetenv("RIO_LOADER_IO");
	lu_run(&ds_main, &o, 1, &ref);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (cases[i].value)
			setenv("RIO_LOADER_IO", cases[i].value, 1);
		else
			unsetenv("RIO_LOADER_IO");
		o.io = cases[i].io;
		rio_loader *l = lu_open(&ds_main, &o);
		if (!l)
			continue;
		lu_seq s;
		lu_seq_init(&s);
		CU_ASSERT_EQUAL(lu_drain_epoch(l, &s, &ds_main), 0);
		rio_loader_stats st;
		rio_loader_stats_get(l, &st);
		CHECK(st.io_uring == cases[i].want, "RIO_LOADER_IO=%s, io %d: stats.io_uring = %d",
		      cases[i].value ? cases[i].value : "(unset)", (int)cases[i].io, st.io_uring);
		CHECK(lu_seq_equal(&ref, 0, &s, 0), "RIO_LOADER_IO=%s: another sequence",
		      cases[i].value ? cases[i].value : "(unset)");
		rio_loader_close(l);
		lu_seq_free(&s);
	}
	if (saved)
		setenv("RIO_LOADER_IO", saved, 1);
	else
		unsetenv("RIO_LOADER_IO");
	free(saved);
	lu_seq_free(&ref);
}

static const tu_test uring_tests[] = {
    {"io_uring and pread: the same sequences", test_same_as_pread},
    {"io_uring with O_DIRECT", test_direct},
    {"io_uring over compressed shards", test_compressed},
    {"io_uring, decoded", test_decode},
    {"io_uring on a damaged shard", test_damaged},
    {"RIO_LOADER_IO and stats.io_uring", test_env},
    {NULL, NULL},
};

static const tu_suite suites[] = {
    {"io_uring", uring_tests},
    {NULL, NULL},
};

/* Can this process use io_uring through the loader? Opens one over a small
 * shard with RIO_IO_URING (and RIO_LOADER_IO unset). */
static int uring_available(void)
{
	char *saved = getenv("RIO_LOADER_IO") ? strdup(getenv("RIO_LOADER_IO")) : NULL;
	unsetenv("RIO_LOADER_IO");
	const char *path = tu_path("probe.tfrecord");
	rio_writer *w;
	int rc = rio_writer_open(&w, path, NULL);
	if (rc == 0) {
		rc = rio_writer_write(w, "probe", 5, NULL);
		int rc2 = rio_writer_close(w);
		rc = rc ? rc : rc2;
	}
	if (rc) {
		fprintf(stderr, "cannot write %s: %s\n", path, rio_strerror(rc));
		exit(99);
	}
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	o.rank = 0;
	o.world = 1;
	o.io = RIO_IO_URING;
	rio_loader *l = NULL;
	rc = rio_loader_open(&l, path, &o);
	if (rc < 0 && rc != -ENOSYS && rc != -EPERM) {
		/* any other failure is the loader's: run the tests, they fail */
		fprintf(stderr, "rio_loader_open(RIO_IO_URING): %s\n",
		        l ? rio_loader_error(l)->message : rio_strerror(rc));
		rc = 0;
	}
	rio_loader_close(l);
	unlink(path);
	if (saved)
		setenv("RIO_LOADER_IO", saved, 1);
	free(saved);
	return rc == 0;
}

int main(int argc, char **argv)
{
	if (!uring_available()) {
		printf("%s: io_uring is not available here (-ENOSYS or -EPERM): SKIP\n", argv[0]);
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_tmpdir());
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not remove %s\n", tu_tmpdir());
		return 77;
	}
	if (argc < 2)
		return tu_run(argv[0], suites);
	/* `test_loader_uring WORD`: only the tests whose name holds it */
	static tu_test picked[16];
	size_t n = 0;
	for (const tu_test *t = uring_tests; t->name; t++)
		if (strstr(t->name, argv[1]))
			picked[n++] = *t;
	const tu_suite some[] = {{"io_uring", picked}, {NULL, NULL}};
	return tu_run(argv[0], some);
}

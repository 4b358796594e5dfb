/*
 * test_record.c — writing and reading uncompressed shards.
 *
 * Record sizes at the edges (0, 1, 16 MiB), many records across buffer
 * boundaries, offsets reported by the writer, the atomic-publish promise of
 * the writer (nothing under the final name until a successful close, and
 * nothing but a regular file ever replaced), and
 * the byte layout of what we write (checked by hand, not by our reader).
 */
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Writes records of the given sizes (contents from seed) to path. */
static void write_shard(const char *path, const size_t *sizes, size_t n, uint64_t *offsets)
{
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		uint8_t *buf = malloc(sizes[i] + 1);
		tu_fill_random(buf, sizes[i], i);
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, buf, sizes[i], offsets ? &offsets[i] : NULL), 0);
		free(buf);
	}
	CU_ASSERT_EQUAL(rio_writer_records(w), n);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
}

/* Reads path and checks it holds exactly those records. */
static void check_shard(const char *path, const size_t *sizes, size_t n, size_t buffer_size)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	if (buffer_size)
		o.buffer_size = buffer_size;
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(rio_reader_compression(r), RIO_COMPRESSION_NONE);
	rio_record rec;
	uint64_t offset = 0;
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
		CU_ASSERT_EQUAL_FATAL(rec.size, sizes[i]);
		CU_ASSERT_EQUAL(rec.index, i);
		CU_ASSERT_EQUAL(rec.offset, offset);
		uint8_t *want = malloc(sizes[i] + 1);
		tu_fill_random(want, sizes[i], i);
		CU_ASSERT_EQUAL_FATAL(memcmp(rec.data, want, sizes[i]), 0);
		free(want);
		offset += sizes[i] + 16;
	}
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0); /* EOF stays EOF */
	CU_ASSERT_EQUAL(rio_reader_bytes(r), offset);
	CU_ASSERT_EQUAL(rio_reader_file_bytes(r), offset);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 0);
	rio_reader_close(r);
}

static void test_empty_record_bytes(void)
{
	static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07,
	                                 0xd8, 0xea, 0x82, 0xa2};
	const char *path = tu_path("empty-record.tfrecord");
	size_t sizes[] = {0};
	write_shard(path, sizes, 1, NULL);
	size_t n;
	uint8_t *got = tu_read_file(path, &n);
	CU_ASSERT_EQUAL_FATAL(n, 16);
	CU_ASSERT_EQUAL(memcmp(got, want, 16), 0);
	free(got);
	check_shard(path, sizes, 1, 0);
}

static void test_one_byte_record(void)
{
	const char *path = tu_path("one-byte.tfrecord");
	size_t sizes[] = {1};
	write_shard(path, sizes, 1, NULL);
	size_t n;
	uint8_t *got = tu_read_file(path, &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL_FATAL(n, 17);
	uint8_t one;
	tu_fill_random(&one, 1, 0);
	/* length 1 (LE), then mask(crc32c(01 00*7)) = 0x41de7501, worked out
	 * by hand */
	static const uint8_t want_header[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x75, 0xde, 0x41};
	CU_ASSERT_EQUAL(memcmp(got, want_header, 12), 0);
	CU_ASSERT_EQUAL(got[12], one);
	/* data CRC = mask(crc32c(data)), little-endian */
	uint32_t crc = rio_crc_mask(rio_crc32c(0, &one, 1));
	CU_ASSERT_EQUAL(got[13] | got[14] << 8 | got[15] << 16 | (uint32_t)got[16] << 24, crc);
	free(got);
	check_shard(path, sizes, 1, 0);
}

static void test_16mib_record(void)
{
	const char *path = tu_path("big.tfrecord");
	size_t sizes[] = {3, 16u << 20, 5, (16u << 20) + 1, 0};
	write_shard(path, sizes, 5, NULL);
	check_shard(path, sizes, 5, 0);
	check_shard(path, sizes, 5, 4096); /* records far larger than the buffer */
}

static void test_many_records_across_buffers(void)
{
	const char *path = tu_path("many.tfrecord");
	size_t n = 20000;
	size_t *sizes = malloc(n * sizeof *sizes);
	uint64_t *offsets = malloc(n * sizeof *offsets);
	uint64_t expect = 0;
	for (size_t i = 0; i < n; i++)
		sizes[i] = (i * 7919) % 3000;
	write_shard(path, sizes, n, offsets);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL_FATAL(offsets[i], expect);
		expect += sizes[i] + 16;
	}
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL((uint64_t)st.st_size, expect);
	check_shard(path, sizes, n, 0);
	check_shard(path, sizes, n, 4096);
	check_shard(path, sizes, n, 10000);
	free(sizes);
	free(offsets);
}

static void test_empty_shard(void)
{
	const char *path = tu_path("zero-records.tfrecord");
	write_shard(path, NULL, 0, NULL);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 0);
	check_shard(path, NULL, 0, 0);
}

static void test_writer_publishes_only_on_close(void)
{
	const char *dir = tu_path("atomic");
	char path[600];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/shard.tfrecord", dir);
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "abc", 3, NULL), 0);
	CU_ASSERT_FALSE(tu_file_exists(path)); /* not under its name yet */
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);  /* only the hidden temporary */
	CU_ASSERT_EQUAL(rio_writer_close(w), 0);
	CU_ASSERT_TRUE(tu_file_exists(path));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_TRUE((st.st_mode & 0444) == 0444); /* not left at mkstemp's 0600 */

	/* abort: nothing left, and the earlier file is untouched */
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "xyz!", 4, NULL), 0);
	rio_writer_abort(w);
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);
	size_t n;
	uint8_t *got = tu_read_file(path, &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL_FATAL(n, 19);
	uint8_t want[19];
	rio_frame_header(want, 3);
	memcpy(want + 12, "abc", 3);
	rio_frame_footer(want + 15, "abc", 3);
	CU_ASSERT_EQUAL(memcmp(got, want, 19), 0); /* still the "abc" record */
	free(got);

	/* overwrite = 0 refuses an existing file */
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.overwrite = 0;
	CU_ASSERT_EQUAL(rio_writer_open(&w, path, &o), -EEXIST);
	/* fsync path works */
	o.overwrite = 1;
	o.fsync = 1;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "1234", 4, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_close(w), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 20);
	rio_writer_close(NULL);
	rio_writer_abort(NULL);
}

static void test_writer_errors(void)
{
	rio_writer *w = (rio_writer *)1;
	CU_ASSERT_EQUAL(rio_writer_open(&w, "/nonexistent-dir/x.tfrecord", NULL), -ENOENT);
	CU_ASSERT_PTR_NULL(w);
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.compression = (rio_compression)42;
	w = (rio_writer *)1;
	CU_ASSERT_EQUAL(rio_writer_open(&w, tu_path("bad.tfrecord"), &o), -EINVAL);
	CU_ASSERT_PTR_NULL(w);
	CU_ASSERT_FALSE(tu_file_exists(tu_path("bad.tfrecord")));
}

/* What is at `path` now, without following a link: its st_mode's type and
 * its rdev (0 when nothing is there). */
static unsigned long long node_of(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	return ((unsigned long long)(st.st_mode & S_IFMT) << 32) ^ (unsigned long long)st.st_rdev;
}

/* A writer never replaces what is not a regular file: a FIFO, a device
 * node, a symbolic link (dangling or not) or a directory is refused at
 * open, by the live writer and the index writer too, and what appears at
 * the path while writing is refused at close; each stays as it was. */
static void test_writer_refuses_non_regular(void)
{
	char dir[600], fifo[700], dev[700], link[700], dangling[700], target[700], sub[700],
	    under_link[700], cmd[800];
	snprintf(dir, sizeof dir, "%s", tu_path("nonregular"));
	mkdir(dir, 0755);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(dev, sizeof dev, "%s/null", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(dangling, sizeof dangling, "%s/dangling", dir);
	snprintf(target, sizeof target, "%s/target.tfrecord", dir);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0644), 0);
	/* a character node like /dev/null, made here (never on /dev itself) */
	int have_dev = mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0;
	if (!have_dev)
		fprintf(stderr, "  (mknod: %s: not root, the device case is not run)\n",
		        strerror(errno));
	tu_write_file(target, "target", 6);
	CU_ASSERT_EQUAL_FATAL(symlink("target.tfrecord", link), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("nothing-here", dangling), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
	struct {
		const char *path;
		int want;
		const char *kind;
	} cases[] = {{fifo, RIO_EUNSUPPORTED, "a FIFO"},
	             {dev, RIO_EUNSUPPORTED, "a character device"},
	             {link, RIO_EUNSUPPORTED, "a symbolic link"},
	             {dangling, RIO_EUNSUPPORTED, "a symbolic link"},
	             {sub, -EISDIR, "a directory"}};
	int entries = tu_count_entries(dir);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		if (cases[i].path == dev && !have_dev)
			continue;
		unsigned long long before = node_of(cases[i].path);
		rio_error err;
		CU_ASSERT_EQUAL(rio_output_check(cases[i].path, &err), cases[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[i].path));
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[i].kind));
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not a regular file"));
		rio_writer_opts o;
		rio_writer_opts_init(&o);
		for (int live = 0; live <= 1; live++) {
			o.live = live;
			rio_writer *w = (rio_writer *)1;
			CU_ASSERT_EQUAL(rio_writer_open(&w, cases[i].path, &o), cases[i].want);
			CU_ASSERT_PTR_NULL(w);
		}
		o.live = 0;
		o.overwrite = 0; /* whatever is there, it exists */
		CU_ASSERT_EQUAL(rio_writer_open(&(rio_writer *){NULL}, cases[i].path, &o), -EEXIST);
		rio_index idx = {0};
		CU_ASSERT_EQUAL(rio_index_append(&idx, 0, 16), 0);
		CU_ASSERT_EQUAL(rio_index_write(cases[i].path, &idx, &err), cases[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[i].kind));
		rio_index_free(&idx);
		CU_ASSERT_EQUAL(node_of(cases[i].path), before); /* left as it was */
		CU_ASSERT_EQUAL(tu_count_entries(dir), entries); /* no temporary left */
	}
	size_t n;
	uint8_t *got = tu_read_file(target, &n);
	CU_ASSERT_TRUE(got && n == 6 && memcmp(got, "target", 6) == 0); /* the link's target */
	free(got);
	CU_ASSERT_EQUAL(rio_writer_open(&(rio_writer *){NULL}, "", NULL), -ENOENT);

	/* a FIFO made at the path while the writer writes: refused at close */
	char later[700];
	snprintf(later, sizeof later, "%s/later.tfrecord", dir);
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, later, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "x", 1, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mkfifo(later, 0644), 0);
	CU_ASSERT_EQUAL(rio_writer_close(w), RIO_EUNSUPPORTED);
	CU_ASSERT_EQUAL(node_of(later) >> 32, S_IFIFO);
	CU_ASSERT_EQUAL(tu_count_entries(dir), entries + 1);

	/* a link among the directories above the file is no concern */
	snprintf(under_link, sizeof under_link, "%s/sublink", dir);
	CU_ASSERT_EQUAL_FATAL(symlink("sub", under_link), 0);
	snprintf(under_link, sizeof under_link, "%s/sublink/x.tfrecord", dir);
	size_t sizes[] = {3};
	write_shard(under_link, sizes, 1, NULL);
	snprintf(cmd, sizeof cmd, "%s/sub/x.tfrecord", dir);
	CU_ASSERT_EQUAL(node_of(cmd) >> 32, S_IFREG);
}

/* Records in a file as a reader sees it now (-1 on a damaged or cut file). */
static long records_now(const char *path)
{
	rio_reader *r;
	rio_record rec;
	long n = 0;
	int rc;
	if (rio_reader_open(&r, path, NULL) < 0)
		return -1;
	while ((rc = rio_reader_next(r, &rec)) == 1)
		n++;
	rio_reader_close(r);
	return rc == 0 ? n : -1;
}

/* live: the file under its own name, growing by whole records on flush */
static void test_writer_live(void)
{
	const char *dir = tu_path("live");
	char path[600];
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/events.out.tfevents.1.host", dir);
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.live = 1;
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1); /* no temporary beside it */
	CU_ASSERT_EQUAL(records_now(path), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "one", 3, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "two", 3, NULL), 0);
	CU_ASSERT_EQUAL(records_now(path), 0); /* buffered */
	CU_ASSERT_EQUAL(rio_writer_flush(w), 0);
	CU_ASSERT_EQUAL(records_now(path), 2);
	CU_ASSERT_EQUAL(rio_writer_write(w, "three", 5, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_close(w), 0);
	CU_ASSERT_EQUAL(records_now(path), 3);
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);
	/* overwrite = 0: an existing file is refused, and left alone */
	o.overwrite = 0;
	CU_ASSERT_EQUAL(rio_writer_open(&w, path, &o), -EEXIST);
	CU_ASSERT_EQUAL(records_now(path), 3);
	/* abort keeps what was flushed */
	o.overwrite = 1;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "kept", 4, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_flush(w), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "lost", 4, NULL), 0);
	rio_writer_abort(w);
	CU_ASSERT_EQUAL(records_now(path), 1);
	/* compressed: live is refused, and a compressed writer cannot flush */
	o.compression = RIO_COMPRESSION_GZIP;
	CU_ASSERT_EQUAL(rio_writer_open(&w, tu_path("live.gz"), &o), -EINVAL);
	CU_ASSERT_FALSE(tu_file_exists(tu_path("live.gz")));
	o.live = 0;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, tu_path("live.gz"), &o), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "x", 1, NULL), 0);
	CU_ASSERT_EQUAL(rio_writer_flush(w), -ENOTSUP);
	CU_ASSERT_EQUAL(rio_writer_close(w), 0);
	CU_ASSERT_EQUAL(records_now(tu_path("live.gz")), 1);
}

/* overwrite = 0 holds at close too: a file that appeared meanwhile stays. */
static void test_no_overwrite_at_close(void)
{
	const char *path = tu_path("appeared.tfrecord");
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.overwrite = 0;
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "mine", 4, NULL), 0);
	tu_write_file(path, "theirs", 6);
	CU_ASSERT_EQUAL(rio_writer_close(w), -EEXIST);
	size_t n;
	uint8_t *got = tu_read_file(path, &n);
	CU_ASSERT_TRUE(got && n == 6 && memcmp(got, "theirs", 6) == 0);
	free(got);
	/* no hidden temporary left beside it */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '^\\.appeared'", tu_tmpdir());
	CU_ASSERT_NOT_EQUAL(system(cmd), 0);
}

/* Options out of range: an unknown damage policy is refused; a huge
 * buffer size is held to a sane one and reading still works. */
static void test_reader_option_ranges(void)
{
	const char *path = tu_path("opts.tfrecord");
	size_t sizes[] = {5, 70000, 0};
	write_shard(path, sizes, 3, NULL);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = (rio_damage_policy)7;
	rio_reader *r = (rio_reader *)1;
	CU_ASSERT_EQUAL(rio_reader_open(&r, path, &o), -EINVAL);
	CU_ASSERT_PTR_NULL(r);
	check_shard(path, sizes, 3, SIZE_MAX);
	check_shard(path, sizes, 3, 1);
}

static void test_max_record_size(void)
{
	const char *path = tu_path("limit.tfrecord");
	size_t sizes[] = {10, 1000, 10};
	write_shard(path, sizes, 3, NULL);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.max_record_size = 999;
	rio_reader *r;
	rio_record rec;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ETOOLARGE);
	const rio_error *e = rio_reader_error(r);
	CU_ASSERT_EQUAL(e->offset, 26);
	CU_ASSERT_EQUAL(e->record, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "exceeds limit"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "1000"));
	rio_reader_close(r);
	o.max_record_size = 1000;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	int n = 0;
	while (rio_reader_next(r, &rec) == 1)
		n++;
	CU_ASSERT_EQUAL(n, 3);
	rio_reader_close(r);
}

static void test_reader_open_errors(void)
{
	rio_reader *r = (rio_reader *)1;
	CU_ASSERT_EQUAL(rio_reader_open(&r, tu_path("does-not-exist"), NULL), -ENOENT);
	CU_ASSERT_PTR_NULL(r);
	r = (rio_reader *)1;
	CU_ASSERT_EQUAL(rio_reader_open(&r, tu_tmpdir(), NULL), -EISDIR);
	CU_ASSERT_PTR_NULL(r);
	rio_reader_close(NULL);
}

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(rio_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(rio_strerror(RIO_ECORRUPT_DATA), "corrupted record (data CRC mismatch)");
	CU_ASSERT_STRING_EQUAL(rio_strerror(RIO_ETRUNCATED), "truncated record");
	CU_ASSERT_STRING_EQUAL(rio_strerror(-ENOENT), "No such file or directory");
	/* every code in the table has its own text */
#define CHECK(name, value, text) CU_ASSERT_STRING_EQUAL(rio_strerror(value), text);
	RIO_ERROR_TABLE(CHECK)
#undef CHECK
	CU_ASSERT_STRING_EQUAL(rio_strerror(-1099), "unknown error");
	CU_ASSERT_PTR_NOT_NULL(rio_version());
}

static const tu_test tests[] = {
	{"empty record: exact bytes", test_empty_record_bytes},
	{"1-byte record", test_one_byte_record},
	{"16 MiB records, small and default buffers", test_16mib_record},
	{"20000 records across buffer boundaries", test_many_records_across_buffers},
	{"shard with no records", test_empty_shard},
	{"writer publishes only on close", test_writer_publishes_only_on_close},
	{"writer errors", test_writer_errors},
	{"writer refuses what is not a regular file", test_writer_refuses_non_regular},
	{"live writer: in place, flushed records visible", test_writer_live},
	{"max record size", test_max_record_size},
	{"overwrite = 0 holds at close", test_no_overwrite_at_close},
	{"reader option ranges", test_reader_option_ranges},
	{"reader open errors", test_reader_open_errors},
	{"rio_strerror", test_strerror},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"record", tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

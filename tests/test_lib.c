/*
 * test_lib.c — lib/'s shared helpers: the size parser (every edge of its
 * grammar, and rio_size_parse(), its export), the byte formatter, the JSON
 * writer, the monotonic clock, and the atomic file writes with each failure
 * reported, a failed directory fsync included; and the array grower
 * (grow.h): growth by doubling, sizes past SIZE_MAX refused, and a failed
 * realloc, each leaving the array as it was.
 *
 * How fsync fails here: this program defines fsync(2) itself. lib/ is linked
 * into it statically, and librecordio's calls resolve to it through the
 * dynamic linker, so every fsync of the code under test comes here; it
 * fails the call that `fsync_fail_at` names (counting from when the test
 * set it) with EIO, and passes the others to the kernel.
 *
 * How realloc fails here, likewise: this program defines realloc(3), which
 * passes each call to the next one defined (the C library's, or the
 * sanitizer's) unless `realloc_fail` is set; then it notes the size asked
 * for in `realloc_asked` and returns NULL, as a realloc out of memory does.
 * It is set only around single calls of lib/grow.c's functions.
 */
#include "atomic_file.h"
#include "clock.h"
#include "grow.h"
#include "json.h"
#include "recordio.h"
#include "size.h"
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned fsync_calls, fsync_fail_at;

int fsync(int fd)
{
	if (++fsync_calls == fsync_fail_at) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

/* Counts fsyncs from 0 again; the n-th from now fails (0: none does). */
static void fail_fsync(unsigned n)
{
	fsync_calls = 0;
	fsync_fail_at = n;
}

static int realloc_fail;
static size_t realloc_asked;

void *realloc(void *p, size_t n)
{
	static void *(*next)(void *, size_t);
	if (realloc_fail) {
		realloc_asked = n;
		errno = ENOMEM;
		return NULL;
	}
	if (!next)
		next = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	return next(p, n);
}

/* ---- sizes ------------------------------------------------------------- */

static void expect_size(const char *text, uint64_t want)
{
	char msg[256] = "";
	uint64_t got = 12345;
	int rc = rio__size_parse(text, UINT64_MAX, &got, msg, sizeof msg);
	if (rc != 0 || got != want)
		printf("\n  '%s': rc %d, %llu (want %llu): %s", text, rc, (unsigned long long)got,
		       (unsigned long long)want, msg);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(got, want);
}

/* `text` refused with `code`, *bytes untouched, a message quoting it. */
static void expect_refused(const char *text, uint64_t max, int code)
{
	char msg[256] = "";
	uint64_t got = 12345;
	int rc = rio__size_parse(text, max, &got, msg, sizeof msg);
	if (rc != code)
		printf("\n  '%s': rc %d (want %d), %llu", text, rc, code, (unsigned long long)got);
	CU_ASSERT_EQUAL(rc, code);
	CU_ASSERT_EQUAL(got, 12345);
	char quoted[128];
	snprintf(quoted, sizeof quoted, "'%s'", text ? text : "");
	if (!text || !strpbrk(text, "\t\n"))
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, quoted));
	CU_ASSERT_PTR_NULL(strchr(msg, '\n')); /* one line, whatever the text */
}

static void test_size_units(void)
{
	expect_size("0", 0);
	expect_size("0B", 0);
	expect_size("0K", 0);
	expect_size("4096", 4096);
	expect_size("4096B", 4096);
	expect_size("000000000000000000000000000064K", 65536);
	expect_size("1K", 1024);
	expect_size("1KiB", 1024);
	expect_size("1KB", 1000);
	expect_size("64M", 64ull << 20);
	expect_size("64MiB", 64ull << 20);
	expect_size("64MB", 64000000);
	expect_size("3G", 3ull << 30);
	expect_size("3GiB", 3ull << 30);
	expect_size("3GB", 3000000000ull);
	expect_size("2T", 2ull << 40);
	expect_size("2TiB", 2ull << 40);
	expect_size("2TB", 2000000000000ull);
}

static void test_size_fractions(void)
{
	expect_size("1.5K", 1536);
	expect_size("1.5KB", 1500);
	expect_size("1.5G", 3ull << 29);
	expect_size("0.5MiB", 1ull << 19);
	expect_size("2.5MB", 2500000);
	expect_size("0.3K", 307); /* 307.2: rounded down */
	expect_size("0.1G", 107374182);
	expect_size("1.0000000000000000000000001K", 1024);
	/* exact however many digits: never up to the next byte */
	expect_size("0.999999999999999999999999T", (1ull << 40) - 1);
	expect_size("0.0001K", 0);
	expect_size("15.9999999999999999999999T", (16ull << 40) - 1);
}

static void test_size_limits(void)
{
	expect_size("18446744073709551615", UINT64_MAX);
	expect_size("18446744073709551615B", UINT64_MAX);
	expect_size("16777215.9999999999999T", UINT64_MAX);
	expect_refused("18446744073709551616", UINT64_MAX, -ERANGE);
	expect_refused("99999999999999999999999999", UINT64_MAX, -ERANGE);
	expect_refused("16777216T", UINT64_MAX, -ERANGE); /* 2^64 */
	expect_refused("16777216TiB", UINT64_MAX, -ERANGE);
	expect_refused("18446744073709552KB", UINT64_MAX, -ERANGE);
	expect_refused("18446744073709551615.5K", UINT64_MAX, -ERANGE);
	/* the caller's limit (its type's or its option's) */
	uint64_t v = 0;
	CU_ASSERT_EQUAL(rio__size_parse("4K", 4096, &v, NULL, 0), 0);
	CU_ASSERT_EQUAL(v, 4096);
	expect_refused("4097", 4096, -ERANGE);
	expect_refused("4.001K", 4096, -ERANGE);
	expect_refused("4G", UINT32_MAX, -ERANGE);
	expect_refused("1", 0, -ERANGE);
	char msg[128];
	rio__size_parse("5G", UINT32_MAX, &v, msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "at most 4294967295 bytes"));
}

static void test_size_refused(void)
{
	static const char *const bad[] = {
		"", " 5", "5 ", " 5M", "5M ", "5 M", "\t5", "5\n", "-1", "-0", "+1", "nan", "NaN",
		"inf", "infinity", "NaNK", "1e8", "1E8", "1e3K", "0x10", "0X10", "010x", "1Q",
		"12abc", "1MBB", "1Mi", "1MIB", "1mb", "1m", "1k", "1kb", "1Kib", "1b", "1BB", "1KBi",
		"1KBiB", "K", "M", "B", ".5K", "1.K", "1.", "1..5K", "1.5.K", "1,5K", "1_000",
		"1.5", "1.5B", "0.5", "1'000", "１K",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect_refused(bad[i], UINT64_MAX, -EINVAL);
	expect_refused(NULL, UINT64_MAX, -EINVAL);
	/* the reason is said */
	char msg[256];
	uint64_t v;
	rio__size_parse("1Q", UINT64_MAX, &v, msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "unknown unit 'Q'"));
	CU_ASSERT_EQUAL(strncmp(msg, "expected a size such as 64M", 27), 0);
	rio__size_parse("5\n", UINT64_MAX, &v, msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'5\\x0a'"));
	rio__size_parse("1.5", UINT64_MAX, &v, msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "a fraction needs a unit"));
	/* a small buffer is cut, never overrun; none at all is fine */
	memset(msg, 'x', sizeof msg);
	CU_ASSERT_EQUAL(rio__size_parse("junk", UINT64_MAX, &v, msg, 8), -EINVAL);
	CU_ASSERT_EQUAL(strlen(msg), 7);
	CU_ASSERT_EQUAL(msg[8], 'x');
	CU_ASSERT_EQUAL(rio__size_parse("junk", UINT64_MAX, &v, NULL, 0), -EINVAL);
}

static void test_size_public(void)
{
	rio_error err;
	uint64_t v = 0;
	CU_ASSERT_EQUAL(rio_size_parse("1.5G", UINT64_MAX, &v, &err), 0);
	CU_ASSERT_EQUAL(v, 3ull << 29);
	CU_ASSERT_EQUAL(rio_size_parse("1MBB", UINT64_MAX, &v, &err), -EINVAL);
	CU_ASSERT_EQUAL(err.code, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "'1MBB'"));
	CU_ASSERT_EQUAL(rio_size_parse("2K", 2047, &v, &err), -ERANGE);
	CU_ASSERT_EQUAL(err.code, -ERANGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "at most 2047 bytes"));
	CU_ASSERT_EQUAL(rio_size_parse("nan", UINT64_MAX, &v, NULL), -EINVAL);
	CU_ASSERT_EQUAL(v, 3ull << 29);
}

static void test_format_bytes(void)
{
	char b[32];
	CU_ASSERT_STRING_EQUAL(rio__format_bytes(b, sizeof b, 0), "0 B");
	CU_ASSERT_STRING_EQUAL(rio__format_bytes(b, sizeof b, 1023), "1023 B");
	CU_ASSERT_STRING_EQUAL(rio__format_bytes(b, sizeof b, 1536), "1.5 KiB");
	CU_ASSERT_STRING_EQUAL(rio__format_bytes(b, sizeof b, 3ull << 29), "1.5 GiB");
	CU_ASSERT_STRING_EQUAL(rio__format_bytes(b, sizeof b, 5ull << 50), "5120.0 TiB");
	/* what it prints parses back to the same bytes */
	uint64_t v;
	CU_ASSERT_EQUAL(rio__size_parse("1.5GiB", UINT64_MAX, &v, NULL, 0), 0);
	CU_ASSERT_EQUAL(v, 3ull << 29);
}

/* ---- JSON -------------------------------------------------------------- */

/* What `write` printed, in buf. */
#define CAPTURE(buf, write)                                                                        \
	do {                                                                                       \
		FILE *f_ = fmemopen(buf, sizeof buf, "w");                                         \
		CU_ASSERT_FATAL(f_ != NULL);                                                       \
		write;                                                                             \
		fclose(f_);                                                                        \
	} while (0)

static void test_json_numbers(void)
{
	char buf[128];
	CAPTURE(buf, rio__json_number(f_, 0.1, 6));
	CU_ASSERT_STRING_EQUAL(buf, "0.1");
	CAPTURE(buf, rio__json_number(f_, 2.0 / 3.0, 4));
	CU_ASSERT_STRING_EQUAL(buf, "0.6667");
	CAPTURE(buf, rio__json_number(f_, NAN, 6));
	CU_ASSERT_STRING_EQUAL(buf, "null");
	CAPTURE(buf, rio__json_number(f_, -INFINITY, 6));
	CU_ASSERT_STRING_EQUAL(buf, "null");
	CAPTURE(buf, (rio__json_member(f_, "loss", 1.5, 6), rio__json_member(f_, "acc", NAN, 6)));
	CU_ASSERT_STRING_EQUAL(buf, "\"loss\": 1.5, \"acc\": null, ");
}

static void test_json_strings(void)
{
	char buf[128];
	CAPTURE(buf, rio__json_string(f_, "a\"b\\c\n\t\x01", 8));
	CU_ASSERT_STRING_EQUAL(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\"");
	/* valid UTF-8 kept as it is; a stray byte as \u00XX */
	CAPTURE(buf, rio__json_string(f_, "\xc3\xa9\xff", 3));
	CU_ASSERT_STRING_EQUAL(buf, "\"\xc3\xa9\\u00ff\"");
	CU_ASSERT_EQUAL(rio__utf8_valid("\xc3\xa9", 2), 1);
	CU_ASSERT_EQUAL(rio__utf8_valid("\xc0\xaf", 2), 0);       /* overlong */
	CU_ASSERT_EQUAL(rio__utf8_valid("\xed\xa0\x80", 3), 0);   /* a surrogate */
	CU_ASSERT_EQUAL(rio__utf8_valid("\xf4\x90\x80\x80", 4), 0); /* past U+10FFFF */
	CU_ASSERT_EQUAL(rio__utf8_valid("\xe2\x82", 2), 0);       /* cut short */
}

/* ---- the clock ---------------------------------------------------------- */

static void test_clock(void)
{
	double a = rio__now();
	struct timespec ten_ms = {0, 10 * 1000 * 1000};
	nanosleep(&ten_ms, NULL);
	double b = rio__now();
	CU_ASSERT(a > 0);
	CU_ASSERT(b - a >= 0.0099); /* seconds, not another unit */
	CU_ASSERT(b - a < 60);
	for (int i = 0; i < 1000; i++) { /* never backwards */
		double c = rio__now();
		CU_ASSERT_FATAL(c >= b);
		b = c;
	}
}

/* ---- atomic files ------------------------------------------------------- */

/* The file at path holds exactly `text`. */
static int holds(const char *path, const char *text)
{
	size_t n;
	uint8_t *p = tu_read_file(path, &n);
	int ok = p && n == strlen(text) && !memcmp(p, text, n);
	free(p);
	return ok;
}

static unsigned current_umask(void)
{
	mode_t m = umask(022);
	umask(m);
	return m;
}

static void test_write_file_atomic(void)
{
	const char *dir = tu_path("atomic");
	CU_ASSERT_FATAL(mkdir(dir, 0777) == 0);
	const char *path = tu_path("atomic/ckpt");
	const char *step = "untouched";
	CU_ASSERT_EQUAL(rio__write_file_atomic(path, "first", 5, &step), 0);
	CU_ASSERT_STRING_EQUAL(step, "untouched");
	CU_ASSERT(holds(path, "first"));
	CU_ASSERT_EQUAL(rio__write_file_atomic(path, "second", 6, NULL), 0);
	CU_ASSERT(holds(path, "second"));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1); /* no temporary left */
	struct stat st;
	CU_ASSERT_FATAL(stat(path, &st) == 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0666 & ~current_umask());
	/* no directory: the create fails and says so */
	CU_ASSERT_EQUAL(rio__write_file_atomic(tu_path("no-such-dir/ckpt"), "x", 1, &step), -ENOENT);
	CU_ASSERT_STRING_EQUAL(step, "create");
	/* a directory where the file goes: the rename fails, nothing is left */
	CU_ASSERT_FATAL(mkdir(tu_path("atomic/sub"), 0777) == 0);
	CU_ASSERT_EQUAL(rio__write_file_atomic(tu_path("atomic/sub"), "x", 1, &step), -EISDIR);
	CU_ASSERT_STRING_EQUAL(step, "rename");
	CU_ASSERT_EQUAL(tu_count_entries(dir), 2);
}

static void test_fsync_failures(void)
{
	const char *dir = tu_path("fsync");
	CU_ASSERT_FATAL(mkdir(dir, 0777) == 0);
	const char *path = tu_path("fsync/ckpt");
	CU_ASSERT_FATAL(rio__write_file_atomic(path, "old", 3, NULL) == 0);
	const char *step = NULL;

	/* the file's fsync: nothing replaced, the temporary removed */
	fail_fsync(1);
	CU_ASSERT_EQUAL(rio__write_file_atomic(path, "new", 3, &step), -EIO);
	fail_fsync(0);
	CU_ASSERT_STRING_EQUAL(step, "fsync");
	CU_ASSERT(holds(path, "old"));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);

	/* the directory's: reported (the rename may not survive a crash),
	 * though the new file is in place */
	fail_fsync(2);
	CU_ASSERT_EQUAL(rio__write_file_atomic(path, "new", 3, &step), -EIO);
	CU_ASSERT_EQUAL(fsync_calls, 2); /* exactly the file's and the directory's */
	fail_fsync(0);
	CU_ASSERT_STRING_EQUAL(step, "directory fsync");
	CU_ASSERT(holds(path, "new"));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);

	/* and through librecordio: a writer with fsync, and its close */
	rio_writer_opts wo;
	rio_writer_opts_init(&wo);
	wo.fsync = 1;
	for (unsigned n = 1; n <= 2; n++) {
		rio_writer *w;
		const char *shard = tu_path(n == 1 ? "fsync/a.tfrecord" : "fsync/b.tfrecord");
		CU_ASSERT_FATAL(rio_writer_open(&w, shard, &wo) == 0);
		CU_ASSERT_FATAL(rio_writer_write(w, "rec", 3, NULL) == 0);
		fail_fsync(n);
		CU_ASSERT_EQUAL(rio_writer_close(w), -EIO);
		fail_fsync(0);
		CU_ASSERT_EQUAL(tu_file_exists(shard), n == 2);
	}
}

/* A rio__replace_check that refuses every path. */
static int refuse(const char *path)
{
	(void)path;
	return -EPERM;
}

static void test_commit_steps(void)
{
	const char *dir = tu_path("commit");
	CU_ASSERT_FATAL(mkdir(dir, 0777) == 0);
	const char *path = tu_path("commit/f");
	tu_write_file(path, "old", 3);
	char *tmp;
	/* without replace: an existing file stays, the temporary goes */
	int fd = rio__tmpfile_open(path, &tmp);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(rio__write_all(fd, "new", 3), 0);
	CU_ASSERT_EQUAL(rio__tmpfile_commit(fd, tmp, path, 0, 0, NULL), -EEXIST);
	free(tmp);
	CU_ASSERT(holds(path, "old"));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);
	/* a check that refuses: its code, nothing replaced */
	fd = rio__tmpfile_open(path, &tmp);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(rio__tmpfile_commit(fd, tmp, path, 0, 1, refuse), -EPERM);
	free(tmp);
	CU_ASSERT(holds(path, "old"));
	CU_ASSERT_EQUAL(tu_count_entries(dir), 1);
	/* the directory fsyncs: a missing one, a bare name, the root */
	CU_ASSERT_EQUAL(rio__fsync_dir(tu_path("no-such-dir")), -ENOENT);
	CU_ASSERT_EQUAL(rio__fsync_dir_of(tu_path("no-such-dir/x")), -ENOENT);
	CU_ASSERT_EQUAL(rio__fsync_dir_of("bare-name"), 0);
	CU_ASSERT_EQUAL(rio__fsync_dir_of("/x"), 0);
	/* write_all on a bad descriptor */
	CU_ASSERT_EQUAL(rio__write_all(-1, "x", 1), -EBADF);
}

/* The positional loops: writes at offsets out of order fill one file,
 * the file offset untouched; a read past the end is short, not an error */
static void test_positional_io(void)
{
	const char *path = tu_path("positional");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(rio__pwrite_all(fd, "world", 5, 6), 0);
	CU_ASSERT_EQUAL(rio__pwrite_all(fd, "hello ", 6, 0), 0);
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_CUR), 0);
	char buf[16] = {0};
	CU_ASSERT_EQUAL(rio__pread_full(fd, buf, 11, 0), 11);
	CU_ASSERT_EQUAL(memcmp(buf, "hello world", 11), 0);
	CU_ASSERT_EQUAL(rio__pread_full(fd, buf, 16, 6), 5);
	CU_ASSERT_EQUAL(memcmp(buf, "world", 5), 0);
	CU_ASSERT_EQUAL(rio__pread_full(fd, buf, 4, 11), 0);
	close(fd);
	CU_ASSERT_EQUAL(rio__pwrite_all(-1, "x", 1, 0), -EBADF);
	CU_ASSERT_EQUAL(rio__pread_full(-1, buf, 1, 0), -EBADF);
}

/* ---- growing arrays ---------------------------------------------------- */

static void test_grow_cap(void)
{
	CU_ASSERT_EQUAL(rio__grow_cap(0, 1, 16), 16);
	CU_ASSERT_EQUAL(rio__grow_cap(0, 17, 16), 32);
	CU_ASSERT_EQUAL(rio__grow_cap(16, 16, 4), 16); /* holds them: unchanged */
	CU_ASSERT_EQUAL(rio__grow_cap(16, 17, 4), 32);
	CU_ASSERT_EQUAL(rio__grow_cap(16, 100, 4), 128);
	CU_ASSERT_EQUAL(rio__grow_cap(0, 3, 0), 4); /* first 0 counts as 1 */
	CU_ASSERT_EQUAL(rio__grow_cap(0, 0, 8), 0);
	/* doubling past SIZE_MAX: need itself */
	size_t half = SIZE_MAX / 2 + 1;
	CU_ASSERT_EQUAL(rio__grow_cap(half, half + 1, 1), half + 1);
	CU_ASSERT_EQUAL(rio__grow_cap(half, SIZE_MAX, 1), SIZE_MAX);
}

static void test_grow(void)
{
	uint32_t *v = NULL;
	size_t cap = 0;
	CU_ASSERT_EQUAL(rio__grow(&v, &cap, 1, sizeof *v, 4), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(cap, 4);
	for (uint32_t i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL_FATAL(rio__grow(&v, &cap, i + 1, sizeof *v, 4), 0);
		CU_ASSERT_FATAL(cap >= i + 1);
		v[i] = i * 7;
	}
	CU_ASSERT_EQUAL(cap, 128); /* 4 doubled five times */
	uint32_t *before = v;
	CU_ASSERT_EQUAL(rio__grow(&v, &cap, 128, sizeof *v, 4), 0); /* fits: nothing */
	CU_ASSERT_PTR_EQUAL(v, before);
	CU_ASSERT_EQUAL(rio__grow(&v, &cap, 1000, sizeof *v, 4), 0); /* many at once */
	CU_ASSERT_EQUAL(cap, 1024);
	int same = 1;
	for (uint32_t i = 0; i < 100; i++)
		same &= v[i] == i * 7;
	CU_ASSERT(same);
	/* bytes: item_size 1 */
	char *b = NULL;
	size_t bcap = 0;
	CU_ASSERT_EQUAL(rio__grow(&b, &bcap, 5000, 1, 4096), 0);
	CU_ASSERT_EQUAL(bcap, 8192);
	memset(b, 'x', bcap);
	free(b);
	free(v);
}

/* rio__grow_zeroed: the new items zeroed, the old ones kept, nothing done
 * when the array holds them already. */
static void test_grow_zeroed(void)
{
	uint32_t *v = NULL;
	size_t cap = 0;
	CU_ASSERT_EQUAL_FATAL(rio__grow_zeroed(&v, &cap, 3, sizeof *v, 4), 0);
	CU_ASSERT_EQUAL(cap, 4);
	int zero = 1;
	for (size_t i = 0; i < cap; i++)
		zero &= v[i] == 0;
	CU_ASSERT(zero);
	for (uint32_t i = 0; i < 4; i++)
		v[i] = 0xdead0000u + i;
	CU_ASSERT_EQUAL(rio__grow_zeroed(&v, &cap, 4, sizeof *v, 4), 0); /* fits */
	CU_ASSERT_EQUAL(v[3], 0xdead0003u);
	CU_ASSERT_EQUAL_FATAL(rio__grow_zeroed(&v, &cap, 9, sizeof *v, 4), 0);
	CU_ASSERT_EQUAL(cap, 16);
	int kept = 1;
	for (uint32_t i = 0; i < 4; i++)
		kept &= v[i] == 0xdead0000u + i;
	CU_ASSERT(kept);
	zero = 1;
	for (size_t i = 4; i < cap; i++)
		zero &= v[i] == 0;
	CU_ASSERT(zero);
	free(v);
}

/* A refused grow leaves the array, its items and the capacity alone. */
static void expect_grow_refused(uint64_t **v, size_t *cap, size_t need, size_t item_size)
{
	uint64_t *before = *v;
	size_t cap_before = *cap;
	CU_ASSERT_EQUAL(rio__grow(v, cap, need, item_size, 16), -ENOMEM);
	CU_ASSERT_PTR_EQUAL(*v, before);
	CU_ASSERT_EQUAL(*cap, cap_before);
	int same = 1;
	for (size_t i = 0; i < cap_before; i++)
		same &= (*v)[i] == 1000 + i;
	CU_ASSERT(same);
}

static void test_grow_refused(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	CU_ASSERT_EQUAL_FATAL(rio__grow(&v, &cap, 16, sizeof *v, 16), 0);
	for (size_t i = 0; i < cap; i++)
		v[i] = 1000 + i;
	/* need * item_size past SIZE_MAX: refused before any realloc */
	realloc_fail = 1;
	realloc_asked = 0;
	expect_grow_refused(&v, &cap, SIZE_MAX / 8 + 1, sizeof *v);
	expect_grow_refused(&v, &cap, SIZE_MAX, 2);
	CU_ASSERT_EQUAL(realloc_asked, 0);
	CU_ASSERT_EQUAL(rio__resize(&v, SIZE_MAX / 4 + 1, 4), -ENOMEM);
	CU_ASSERT_EQUAL(realloc_asked, 0);
	/* realloc out of memory */
	expect_grow_refused(&v, &cap, 17, sizeof *v);
	CU_ASSERT_EQUAL(realloc_asked, 32 * sizeof *v);
	/* doubling would pass SIZE_MAX bytes, need would not: need is asked */
	expect_grow_refused(&v, &cap, SIZE_MAX / 8 - 1, sizeof *v);
	CU_ASSERT_EQUAL(realloc_asked, (SIZE_MAX / 8 - 1) * sizeof *v);
	uint64_t *before = v;
	CU_ASSERT_EQUAL(rio__resize(&v, 64, sizeof *v), -ENOMEM);
	CU_ASSERT_PTR_EQUAL(v, before);
	realloc_fail = 0;
	/* and after all that, it still grows */
	CU_ASSERT_EQUAL(rio__grow(&v, &cap, 17, sizeof *v, 16), 0);
	CU_ASSERT_EQUAL(cap, 32);
	CU_ASSERT_EQUAL(v[15], 1015);
	free(v);
}

static const tu_test size_tests[] = {
    {"units: K..T and KiB..TiB powers of 1024, KB..TB of 1000, B", test_size_units},
    {"fractions: exact, rounded down", test_size_fractions},
    {"2^64-1 and the caller's limit: -ERANGE past them", test_size_limits},
    {"blanks, signs, nan, inf, exponents, hex, junk units: -EINVAL", test_size_refused},
    {"rio_size_parse(), the export", test_size_public},
    {"rio__format_bytes", test_format_bytes},
    {NULL, NULL},
};

static const tu_test json_tests[] = {
    {"numbers: NaN and infinities as null", test_json_numbers},
    {"strings: escapes, UTF-8 kept, stray bytes as \\u00XX", test_json_strings},
    {NULL, NULL},
};

static const tu_test misc_tests[] = {
    {"rio__now: monotonic seconds", test_clock},
    {"rio__write_file_atomic: replaces, leaves no temporary", test_write_file_atomic},
    {"a failed fsync, of the file or of the directory, is reported", test_fsync_failures},
    {"rio__tmpfile_commit: no replace, a refusing check; directory fsyncs", test_commit_steps},
    {"rio__pwrite_all, rio__pread_full: out-of-order offsets, short at the end", test_positional_io},
    {NULL, NULL},
};

static const tu_test grow_tests[] = {
    {"rio__grow_cap: first, doubling, need past SIZE_MAX / 2", test_grow_cap},
    {"rio__grow: grows by doubling, keeps the items", test_grow},
    {"rio__grow_zeroed: the new items zeroed, the old kept", test_grow_zeroed},
    {"rio__grow: overflow and a failed realloc leave the array intact", test_grow_refused},
    {NULL, NULL},
};

static const tu_suite suites[] = {
    {"sizes", size_tests},
    {"JSON", json_tests},
    {"clock and files", misc_tests},
    {"growing arrays", grow_tests},
    {NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * test_index.c — the .idx sidecar and random access through it.
 *
 * An index built from a shard must hold exactly the offsets rio_writer_write
 * reported and the framed sizes (length + 16); written, it must be the
 * DALI / `tfrecord` text format byte for byte, and read back the same.
 * Malformed files are refused with the line that is wrong. Random access
 * (rio_reader_read_at) must return the right bytes in any order, with small
 * and default buffers, and refuse what it cannot do: an index past its end,
 * a compressed shard, an index that disagrees with the file. Compressed
 * shards index their decompressed stream, and the TensorFlow-written golden
 * files give the counts TensorFlow wrote.
 */
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- shards with known records: tu_shard (testutil.h) ------------------- */

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* n sizes in [0, max], with 0 and max among them. */
static size_t *random_sizes(size_t n, size_t max, uint64_t seed)
{
	size_t *sizes = malloc(n * sizeof *sizes);
	for (size_t i = 0; i < n; i++)
		sizes[i] = (size_t)(lcg(&seed) % (max + 1));
	if (n > 2) {
		sizes[1] = 0;
		sizes[n / 2] = max;
	}
	return sizes;
}

/* The index holds exactly s's records. */
static void check_index(const rio_index *idx, const tu_shard *s)
{
	CU_ASSERT_EQUAL_FATAL(idx->count, s->n);
	size_t bad = 0;
	for (size_t i = 0; i < s->n; i++)
		if (idx->offset[i] != s->off[i] || idx->framed_size[i] != s->size[i] + 16)
			bad++;
	CU_ASSERT_EQUAL(bad, 0);
	if (s->n)
		CU_ASSERT_EQUAL(idx->offset[s->n - 1] + idx->framed_size[s->n - 1], s->end);
}

/* Does rec hold record i of s, numbered i? */
static int record_is(const rio_record *rec, const tu_shard *s, size_t i)
{
	return tu_record_is(rec, s, i, i);
}

/* Does msg say "line N" (and not "line N0")? */
static int names_line(const char *msg, unsigned n)
{
	char want[32];
	int len = snprintf(want, sizeof want, "line %u", n);
	for (const char *p = strstr(msg, want); p; p = strstr(p + 1, want))
		if (p[len] < '0' || p[len] > '9')
			return 1;
	return 0;
}

/* ---- build, write, read ------------------------------------------------------ */

static const size_t small_sizes[] = {0, 1, 100, 4096, 7, 0, 65536, 12, 3, 20000};
#define SMALL_N (sizeof small_sizes / sizeof small_sizes[0])

static void test_build(void)
{
	tu_shard s;
	const char *path = tu_path("build.tfrecord");
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 1, 0);
	/* what the writer said, checked by hand */
	uint64_t off = 0;
	for (size_t i = 0; i < SMALL_N; i++) {
		CU_ASSERT_EQUAL(s.off[i], off);
		off += small_sizes[i] + 16;
	}
	rio_index idx;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, &err), 0);
	CU_ASSERT_EQUAL(err.code, 0);
	check_index(&idx, &s);
	rio_index_free(&idx);
	CU_ASSERT_EQUAL(idx.count, 0);
	CU_ASSERT_PTR_NULL(idx.offset);
	CU_ASSERT_PTR_NULL(idx.framed_size);
	/* err may be NULL */
	CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, NULL), 0);
	check_index(&idx, &s);
	rio_index_free(&idx);
	tu_shard_free(&s);
}

/* Expected text of an index of s: "offset size\n" per record. */
static char *index_text(const tu_shard *s, size_t *len)
{
	size_t cap = 48 * s->n + 1, n = 0;
	char *t = malloc(cap);
	t[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		n += (size_t)snprintf(t + n, cap - n, "%llu %llu\n", (unsigned long long)s->off[i],
		                      (unsigned long long)(s->size[i] + 16));
	*len = n;
	return t;
}

static void test_write_read(void)
{
	const char *dir = tu_path("idxdir");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	char shard_path[600];
	snprintf(shard_path, sizeof shard_path, "%s/data.tfrecord", dir);
	tu_shard s;
	tu_shard_make(&s, shard_path, RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 2, 0);
	rio_index idx, back;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(shard_path, &idx, &err), 0);

	char *idx_path = rio_index_path(shard_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(idx_path);
	CU_ASSERT_EQUAL(rio_index_write(idx_path, &idx, &err), 0);
	size_t want_len, got_len;
	char *want = index_text(&s, &want_len);
	uint8_t *got = tu_read_file(idx_path, &got_len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL(got_len, want_len);
	CU_ASSERT(got_len == want_len && memcmp(got, want, want_len) == 0);
	/* the first lines, spelled out */
	CU_ASSERT(got_len > 35 && memcmp(got, "0 16\n16 17\n33 116\n149 4112\n4261 23\n", 35) == 0);
	free(got);
	/* the shard and its index, and no temporary file left behind */
	CU_ASSERT_EQUAL(tu_count_entries(dir), 2);

	CU_ASSERT_EQUAL_FATAL(rio_index_read(idx_path, &back, &err), 0);
	CU_ASSERT_EQUAL(err.code, 0);
	check_index(&back, &s);
	rio_index_free(&back);

	/* writing again replaces the file whole */
	idx.count = 3;
	CU_ASSERT_EQUAL(rio_index_write(idx_path, &idx, NULL), 0);
	got = tu_read_file(idx_path, &got_len);
	CU_ASSERT_EQUAL(got_len, 18);
	CU_ASSERT(got_len == 18 && memcmp(got, "0 16\n16 17\n33 116\n", 18) == 0);
	free(got);
	CU_ASSERT_EQUAL(tu_count_entries(dir), 2);
	CU_ASSERT_EQUAL_FATAL(rio_index_read(idx_path, &back, NULL), 0);
	CU_ASSERT_EQUAL(back.count, 3);
	CU_ASSERT_EQUAL(back.framed_size[2], 116);
	rio_index_free(&back);

	/* into a directory that does not exist: an error, nothing written */
	char bad[700];
	snprintf(bad, sizeof bad, "%s/no-such-dir/x.idx", dir);
	CU_ASSERT_EQUAL(rio_index_write(bad, &idx, &err), -ENOENT);
	CU_ASSERT_EQUAL(err.code, -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad));

	idx.count = SMALL_N;
	rio_index_free(&idx);
	free(want);
	free(idx_path);
	tu_shard_free(&s);
}

static void test_empty_shard(void)
{
	tu_shard s;
	const char *path = tu_path("empty.tfrecord");
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, NULL, 0, 3, 0);
	rio_index idx;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, NULL), 0);
	CU_ASSERT_EQUAL(idx.count, 0);
	const char *idx_path = tu_path("empty.tfrecord.idx");
	CU_ASSERT_EQUAL(rio_index_write(idx_path, &idx, NULL), 0);
	size_t len = 99;
	uint8_t *got = tu_read_file(idx_path, &len);
	CU_ASSERT_PTR_NOT_NULL(got);
	CU_ASSERT_EQUAL(len, 0);
	free(got);
	rio_index back;
	CU_ASSERT_EQUAL(rio_index_read(idx_path, &back, NULL), 0);
	CU_ASSERT_EQUAL(back.count, 0);
	rio_index_free(&back);
	rio_index_free(&idx);
	tu_shard_free(&s);
}

static void test_index_path(void)
{
	char *p = rio_index_path("data/train-00000-of-00004.tfrecord");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p, "data/train-00000-of-00004.tfrecord.idx");
	free(p);
	p = rio_index_path("x.tfrecord.gz");
	CU_ASSERT_STRING_EQUAL(p, "x.tfrecord.gz.idx");
	free(p);
	p = rio_index_path("");
	CU_ASSERT_STRING_EQUAL(p, ".idx");
	free(p);
}

static void test_free_and_append(void)
{
	rio_index idx;
	memset(&idx, 0, sizeof idx);
	rio_index_free(&idx); /* zeroed: safe, twice */
	rio_index_free(&idx);
	CU_ASSERT_EQUAL(idx.count, 0);
	CU_ASSERT_PTR_NULL(idx.offset);
	rio_index_free(NULL);

	/* growth through several reallocations keeps every entry */
	uint64_t off = 0;
	for (uint64_t i = 0; i < 5000; i++) {
		CU_ASSERT_EQUAL_FATAL(rio_index_append(&idx, off, 16 + i % 37), 0);
		off += 16 + i % 37;
	}
	CU_ASSERT_EQUAL(idx.count, 5000);
	off = 0;
	size_t bad = 0;
	for (uint64_t i = 0; i < 5000; i++) {
		if (idx.offset[i] != off || idx.framed_size[i] != 16 + i % 37)
			bad++;
		off += 16 + i % 37;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* and it round-trips through a file */
	const char *path = tu_path("append.idx");
	CU_ASSERT_EQUAL(rio_index_write(path, &idx, NULL), 0);
	rio_index back;
	CU_ASSERT_EQUAL_FATAL(rio_index_read(path, &back, NULL), 0);
	CU_ASSERT_EQUAL(back.count, 5000);
	CU_ASSERT(back.count == 5000 &&
	          memcmp(back.offset, idx.offset, 5000 * sizeof *idx.offset) == 0 &&
	          memcmp(back.framed_size, idx.framed_size, 5000 * sizeof *idx.offset) == 0);
	rio_index_free(&back);
	rio_index_free(&idx);
	CU_ASSERT_EQUAL(idx.count, 0);
}

static void test_build_errors(void)
{
	rio_index idx;
	rio_error err;
	const char *missing = tu_path("no-such.tfrecord");
	CU_ASSERT_EQUAL(rio_index_build(missing, &idx, &err), -ENOENT);
	CU_ASSERT_EQUAL(err.code, -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, missing));
	CU_ASSERT_EQUAL(idx.count, 0);

	/* damage in record 3: the error with its place, no index */
	tu_shard s;
	const char *path = tu_path("damaged.tfrecord");
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 4, 0);
	size_t n;
	uint8_t *bytes = tu_read_file(path, &n);
	bytes[s.off[3] + 12 + 10] ^= 1;
	tu_write_file(path, bytes, n);
	free(bytes);
	CU_ASSERT_EQUAL(rio_index_build(path, &idx, &err), RIO_ECORRUPT_DATA);
	CU_ASSERT_EQUAL(err.code, RIO_ECORRUPT_DATA);
	CU_ASSERT_EQUAL(err.offset, s.off[3]);
	CU_ASSERT_EQUAL(err.record, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
	CU_ASSERT_EQUAL(idx.count, 0);
	CU_ASSERT_PTR_NULL(idx.offset);
	tu_shard_free(&s);
}

/* ---- malformed .idx files ---------------------------------------------------- */

static void test_malformed(void)
{
	static const struct {
		const char text[200];
		unsigned line;
	} cases[] = {
		{"abc\n", 1},
		{"0 16\nabc 16\n", 2},
		{"0 16\n16 x\n", 2},
		{"0 16\n16\n", 2},            /* a missing field */
		{"0\n", 1},
		{"0 \n", 1},
		{"0 16\n16 20\n\n36 16\n", 3}, /* an empty line */
		{"-1 16\n", 1},               /* negative */
		{"0 -16\n", 1},
		{"0 16\n-16 20\n", 2},
		{"0 16\n16 20\n40 16\n", 3},  /* offsets not consecutive: a gap */
		{"0 16\n8 16\n", 2},          /* an overlap */
		{"16 16\n", 1},               /* not starting at 0 */
		{"0 15\n", 1},                /* size < 16 */
		{"0 16\n16 0\n", 2},
		{"0 16 32\n", 1},             /* a third field */
		{"0 16x\n", 1},
		{"0 99999999999999999999999\n", 1}, /* beyond 64 bits */
		{"0 16\n16 20\0junk\n", 2},    /* a NUL and junk inside a line */
		{"0 16\n16 16\n32 16\n48 16\n64 16\n80 16\n96 16\n112 16\n128 16\n144 16\n"
		 "160 17\n176 16\n", 12},      /* line 12: 176 does not follow 160 + 17 */
	};
	const char *path = tu_path("bad.idx");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* the text runs to its last newline (it may hold a NUL) */
		size_t len = sizeof cases[i].text;
		while (len && cases[i].text[len - 1] != '\n')
			len--;
		tu_write_file(path, cases[i].text, len);
		rio_index idx;
		rio_error err;
		int rc = rio_index_read(path, &idx, &err);
		CU_ASSERT_EQUAL(rc, RIO_EBADINDEX);
		CU_ASSERT_EQUAL(err.code, RIO_EBADINDEX);
		CU_ASSERT(names_line(err.message, cases[i].line));
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
		if (rc != RIO_EBADINDEX || !names_line(err.message, cases[i].line))
			fprintf(stderr, "\n  case %zu (\"%s...\"): rc %d, want line %u in \"%s\"\n", i,
			        cases[i].text, rc, cases[i].line, err.message);
		CU_ASSERT_EQUAL(idx.count, 0);
		CU_ASSERT_PTR_NULL(idx.offset);
		rio_index_free(&idx); /* (only needed when it was wrongly accepted) */
		/* err may be NULL */
		CU_ASSERT_EQUAL(rio_index_read(path, &idx, NULL), RIO_EBADINDEX);
		rio_index_free(&idx);
	}
}

/* An endless line (a damaged or hostile .idx) is malformed at once: it is
 * never read into memory whole, and never taken for the end of the index. */
static void test_long_line(void)
{
	size_t n = (size_t)8 << 20;
	char *text = malloc(n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	memcpy(text, "0 16\n", 5);
	memset(text + 5, '1', n - 6);
	text[n - 1] = '\n';
	const char *path = tu_path("long.idx");
	tu_write_file(path, text, n);
	free(text);
	rio_index idx;
	rio_error err;
	CU_ASSERT_EQUAL(rio_index_read(path, &idx, &err), RIO_EBADINDEX);
	CU_ASSERT(names_line(err.message, 2));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "longer than"));
	CU_ASSERT_EQUAL(idx.count, 0);
	rio_index_free(&idx);
}

static void test_accepted_spellings(void)
{
	static const char *const texts[] = {
		"0 16\n16 20\n",
		"0 16\n16 20",         /* no final newline */
		"0 16\r\n16 20\r\n",   /* CRLF */
		"0\t16\n16  \t 20\n",  /* tabs and runs of blanks */
	};
	const char *path = tu_path("ok.idx");
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		tu_write_file(path, texts[i], strlen(texts[i]));
		rio_index idx;
		rio_error err;
		CU_ASSERT_EQUAL_FATAL(rio_index_read(path, &idx, &err), 0);
		CU_ASSERT_EQUAL(idx.count, 2);
		if (idx.count == 2) {
			CU_ASSERT_EQUAL(idx.offset[0], 0);
			CU_ASSERT_EQUAL(idx.framed_size[0], 16);
			CU_ASSERT_EQUAL(idx.offset[1], 16);
			CU_ASSERT_EQUAL(idx.framed_size[1], 20);
		}
		rio_index_free(&idx);
	}
	/* an empty file is an empty index */
	tu_write_file(path, "", 0);
	rio_index idx;
	CU_ASSERT_EQUAL(rio_index_read(path, &idx, NULL), 0);
	CU_ASSERT_EQUAL(idx.count, 0);
	rio_index_free(&idx);
}

static void test_read_missing(void)
{
	const char *path = tu_path("missing.idx");
	rio_index idx;
	rio_error err;
	CU_ASSERT_EQUAL(rio_index_read(path, &idx, &err), -ENOENT);
	CU_ASSERT_EQUAL(err.code, -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
	CU_ASSERT_EQUAL(idx.count, 0);
	CU_ASSERT_EQUAL(rio_index_read(path, &idx, NULL), -ENOENT);
	CU_ASSERT_EQUAL(rio_index_read(tu_tmpdir(), &idx, &err) < 0, 1); /* a directory */
	CU_ASSERT_EQUAL(idx.count, 0);
}

/* A FIFO under an .idx name is refused, never opened to wait for a writer
 * (the loader, recordio-verify and recordio-bench waited there for good); a
 * directory is refused alike. alarm(): a read that blocks fails the suite. */
static void test_read_not_regular(void)
{
	const char *fifo = tu_path("fifo.idx");
	unlink(fifo);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	alarm(20);
	rio_index idx;
	rio_error err;
	CU_ASSERT_EQUAL(rio_index_read(fifo, &idx, &err), RIO_EBADINDEX);
	alarm(0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, fifo));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "a FIFO, not a regular file"));
	CU_ASSERT_EQUAL(idx.count, 0);
	unlink(fifo);
	CU_ASSERT_EQUAL(rio_index_read(tu_tmpdir(), &idx, &err), RIO_EBADINDEX);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "a directory, not a regular file"));
}

/* ---- random access -------------------------------------------------------------- */

#define BIG_N 2000

/* The big shard (BIG_N records of 0..20000 bytes), its index read back from
 * its .idx file. */
static void big_shard(tu_shard *s, rio_index *idx, const char **path)
{
	*path = tu_path("big.tfrecord");
	size_t *sizes = random_sizes(BIG_N, 20000, 5);
	tu_shard_make(s, *path, RIO_COMPRESSION_NONE, sizes, BIG_N, 5, 0);
	free(sizes);
	rio_index built;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(*path, &built, NULL), 0);
	char *idx_path = rio_index_path(*path);
	CU_ASSERT_EQUAL_FATAL(rio_index_write(idx_path, &built, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rio_index_read(idx_path, idx, NULL), 0);
	check_index(idx, s);
	rio_index_free(&built);
	free(idx_path);
}

static void random_access(size_t buffer_size)
{
	tu_shard s;
	rio_index idx;
	const char *path;
	big_shard(&s, &idx, &path);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	if (buffer_size)
		o.buffer_size = buffer_size;
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);

	/* every record, in a shuffled order */
	size_t order[BIG_N];
	for (size_t i = 0; i < BIG_N; i++)
		order[i] = i;
	uint64_t x = 99 + buffer_size;
	for (size_t i = BIG_N - 1; i > 0; i--) {
		size_t j = (size_t)(lcg(&x) % (i + 1));
		size_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	rio_record rec;
	size_t bad = 0, failed = 0;
	for (size_t k = 0; k < BIG_N; k++) {
		int rc = rio_reader_read_at(r, &idx, order[k], &rec);
		if (rc != 1)
			failed++;
		else if (!record_is(&rec, &s, order[k]))
			bad++;
	}
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT_EQUAL(bad, 0);

	/* neighbours, backwards and forwards (mostly inside the buffer) */
	bad = failed = 0;
	for (size_t i = BIG_N; i-- > 0;)
		if (rio_reader_read_at(r, &idx, i, &rec) != 1)
			failed++;
		else if (!record_is(&rec, &s, i))
			bad++;
	for (size_t i = 0; i < BIG_N; i += 3)
		if (rio_reader_read_at(r, &idx, i, &rec) != 1)
			failed++;
		else if (!record_is(&rec, &s, i))
			bad++;
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT_EQUAL(bad, 0);

	/* a read at i positions the reader: next gives i + 1 */
	CU_ASSERT_EQUAL_FATAL(rio_reader_read_at(r, &idx, 700, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 700));
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 701));

	/* out of range */
	const uint64_t beyond[] = {BIG_N, BIG_N + 1, UINT64_MAX};
	for (size_t j = 0; j < 3; j++) {
		CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, beyond[j], &rec), RIO_ERANGE);
		CU_ASSERT_EQUAL(rio_reader_error(r)->code, RIO_ERANGE);
		CU_ASSERT_PTR_NOT_NULL(strstr(rio_reader_error(r)->message, path));
	}

	/* back to the start: a sequential read gives everything in order */
	CU_ASSERT_EQUAL_FATAL(rio_reader_seek(r, 0, 0), 0);
	size_t n = 0;
	bad = 0;
	int rc;
	while ((rc = rio_reader_next(r, &rec)) == 1) {
		if (n >= BIG_N || !record_is(&rec, &s, n))
			bad++;
		n++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(n, BIG_N);
	CU_ASSERT_EQUAL(bad, 0);

	/* and seek to the middle, numbering from there */
	CU_ASSERT_EQUAL_FATAL(rio_reader_seek(r, s.off[1234], 1234), 0);
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 1234));

	rio_reader_close(r);
	rio_index_free(&idx);
	tu_shard_free(&s);
}

static void test_random_access_default(void)
{
	random_access(0);
}

static void test_random_access_small_buffer(void)
{
	random_access(4096);
}

/* An index that does not fit the file is refused at the record concerned,
 * and the reader still works afterwards. */
static void test_index_mismatch(void)
{
	tu_shard s;
	const char *path = tu_path("mismatch.tfrecord");
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 6, 0);
	rio_index idx;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, NULL), 0);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	rio_record rec;

	const int delta[] = {+1, -1, +4096};
	for (size_t j = 0; j < 3; j++) {
		idx.framed_size[3] += (uint64_t)(int64_t)delta[j];
		CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 3, &rec), RIO_EBADINDEX);
		CU_ASSERT_EQUAL(rio_reader_error(r)->code, RIO_EBADINDEX);
		CU_ASSERT_EQUAL(rio_reader_error(r)->record, 3);
		CU_ASSERT_PTR_NOT_NULL(strstr(rio_reader_error(r)->message, path));
		idx.framed_size[3] -= (uint64_t)(int64_t)delta[j];
	}
	/* the reader is not stuck: good reads work */
	CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 3, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 3));

	/* an offset past the end of the file */
	uint64_t saved = idx.offset[9];
	idx.offset[9] = s.end + 100;
	CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 9, &rec), RIO_EBADINDEX);
	CU_ASSERT_EQUAL(rio_reader_error(r)->record, 9);
	idx.offset[9] = s.end;
	CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 9, &rec), RIO_EBADINDEX);
	CU_ASSERT_EQUAL(rio_reader_error(r)->record, 9);
	/* an offset inside a record: no frame there, an error (not a record) */
	idx.offset[9] = s.off[6] + 100;
	int rc = rio_reader_read_at(r, &idx, 9, &rec);
	CU_ASSERT(rc == RIO_EBADINDEX || rc == RIO_ECORRUPT_LENGTH);
	CU_ASSERT_EQUAL(rio_reader_error(r)->code, rc);
	CU_ASSERT_EQUAL(rio_reader_error(r)->offset, s.off[6] + 100);
	CU_ASSERT_EQUAL(rio_reader_error(r)->record, 9);
	idx.offset[9] = saved;
	CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 9, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 9));
	CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 0, &rec), 1);
	CU_ASSERT(record_is(&rec, &s, 0));

	rio_reader_close(r);
	rio_index_free(&idx);
	tu_shard_free(&s);
}

/* Random access to a damaged record under every policy: read_at(i) gives
 * record i or its damage, never the next record in its place (SKIP would
 * step over it); the records around it read intact, in any order. */
static void test_random_access_damaged(void)
{
	tu_shard s;
	const char *path = tu_path("ra-damaged.tfrecord");
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 9, 0);
	rio_index idx;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, NULL), 0);
	uint8_t *bytes = malloc(s.file_size);
	CU_ASSERT_FATAL(bytes != NULL);
	/* the data of record 3, the length of record 6, the data CRC of 8 */
	const struct {
		size_t record;
		int code;
	} damage[] = {{3, RIO_ECORRUPT_DATA}, {6, RIO_ECORRUPT_LENGTH}, {8, RIO_ECORRUPT_DATA}};
	const size_t pos[] = {s.off[3] + 12 + 100, s.off[6] + 2, s.off[8] + 12 + 3 + 1};
	memcpy(bytes, s.file, s.file_size);
	for (size_t j = 0; j < 3; j++)
		bytes[pos[j]] ^= 0x08;
	const char *dpath = tu_path("ra-damaged-copy.tfrecord");
	tu_write_file(dpath, bytes, s.file_size);
	free(bytes);
	const rio_damage_policy policies[] = {RIO_DAMAGE_FAIL, RIO_DAMAGE_SKIP, RIO_DAMAGE_REPORT};
	for (size_t p = 0; p < 3; p++) {
		rio_reader_opts o;
		rio_reader_opts_init(&o);
		o.on_damage = policies[p];
		rio_reader *r;
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, dpath, &o), 0);
		const size_t order[] = {9, 3, 4, 6, 2, 8, 7, 3, 0, 6, 5, 1, 8};
		for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
			size_t i = order[k];
			int rc = rio_reader_read_at(r, &idx, i, &rec);
			int want = 1;
			for (size_t j = 0; j < 3; j++)
				if (damage[j].record == i)
					want = damage[j].code;
			CU_ASSERT_EQUAL(rc, want);
			if (rc == 1) {
				CU_ASSERT(record_is(&rec, &s, i));
			} else if (rc < 0) {
				CU_ASSERT_EQUAL(rio_reader_error(r)->record, i);
				CU_ASSERT_EQUAL(rio_reader_error(r)->offset, s.off[i]);
			}
			if (rc != want)
				fprintf(stderr, "\n  policy %d, record %zu: rc %d, want %d (%s)\n",
				        (int)policies[p], i, rc, want, rio_reader_error(r)->message);
		}
		rio_reader_close(r);
	}
	rio_index_free(&idx);
	tu_shard_free(&s);
}

/* Seeking to every offset of a small shard: at a record's start, that
 * record; anywhere else inside the file an error, never a record; at the end
 * a clean end, past it no record; the reader is never stuck (a seek to a
 * record's start always works afterwards). Default and 4 KiB buffers. */
static void test_seek_everywhere(void)
{
	tu_shard s;
	const char *path = tu_path("seek.tfrecord");
	static const size_t sizes[] = {0, 1, 100, 5000, 7}; /* one over 4 KiB */
	tu_shard_make(&s, path, RIO_COMPRESSION_NONE, sizes, 5, 10, 0);
	for (int small = 0; small < 2; small++) {
		rio_reader_opts o;
		rio_reader_opts_init(&o);
		if (small)
			o.buffer_size = 4096; /* the smallest */
		rio_reader *r;
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
		size_t at_records = 0, errors = 0, wrong = 0;
		int reported = 0;
		for (uint64_t off = 0; off <= s.end + 20; off++) {
			size_t k = 0;
			while (k < s.n && s.off[k] < off)
				k++;
			int boundary = k < s.n && s.off[k] == off;
			int rc = rio_reader_seek(r, off, 77);
			if (rc == 0)
				rc = rio_reader_next(r, &rec);
			if (boundary) {
				at_records++;
				if (rc != 1 || !tu_record_is(&rec, &s, k, 77))
					wrong++;
			} else if (off == s.end) {
				if (rc != 0)
					wrong++; /* the end of the file: a clean end */
			} else if (off > s.end) {
				if (rc > 0)
					wrong++; /* past it: no record (the end, or an error) */
			} else if (rc >= 0) {
				wrong++;
			} else {
				errors++;
			}
			if (wrong && !reported) {
				fprintf(stderr, "\n  seek to %llu (buffer %zu): rc %d\n",
				        (unsigned long long)off, o.buffer_size, rc);
				reported = 1;
			}
			/* not stuck: the last record reads after any of that */
			CU_ASSERT_EQUAL_FATAL(rio_reader_seek(r, s.off[4], 4), 0);
			CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
			CU_ASSERT(tu_record_is(&rec, &s, 4, 4));
		}
		CU_ASSERT_EQUAL(at_records, 5);
		CU_ASSERT_EQUAL(wrong, 0);
		CU_ASSERT_EQUAL(errors, s.end - 5); /* every offset inside the file but 5 */
		rio_reader_close(r);
	}
	tu_shard_free(&s);
}

static void test_random_access_compressed(void)
{
	const rio_compression comps[] = {RIO_COMPRESSION_GZIP, RIO_COMPRESSION_ZLIB,
	                                 RIO_COMPRESSION_LZ4};
	for (size_t c = 0; c < 3; c++) {
		tu_shard s;
		char name[64];
		snprintf(name, sizeof name, "ra%s", rio_compression_suffix(comps[c]));
		const char *path = tu_path(name);
		tu_shard_make(&s, path, comps[c], small_sizes, SMALL_N, 7, 0);
		rio_index idx;
		CU_ASSERT_EQUAL_FATAL(rio_index_build(path, &idx, NULL), 0);
		rio_reader *r;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
		CU_ASSERT_EQUAL(rio_reader_compression(r), comps[c]);
		rio_record rec;
		CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, 2, &rec), RIO_EUNSUPPORTED);
		CU_ASSERT_EQUAL(rio_reader_error(r)->code, RIO_EUNSUPPORTED);
		CU_ASSERT_EQUAL(rio_reader_seek(r, s.off[2], 2), RIO_EUNSUPPORTED);
		CU_ASSERT_EQUAL(rio_reader_read_at(r, &idx, SMALL_N, &rec), RIO_ERANGE);
		/* the stream itself is unharmed: it still reads from the start */
		CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
		CU_ASSERT(record_is(&rec, &s, 0));
		rio_reader_close(r);
		rio_index_free(&idx);
		tu_shard_free(&s);
	}
}

/* ---- compressed shards: offsets in the decompressed stream ----------------------- */

static void test_compressed_index(void)
{
	size_t *sizes = random_sizes(300, 3000, 8);
	tu_shard plain;
	tu_shard_make(&plain, tu_path("cidx.tfrecord"), RIO_COMPRESSION_NONE, sizes, 300, 8, 0);
	rio_index want;
	CU_ASSERT_EQUAL_FATAL(rio_index_build(tu_path("cidx.tfrecord"), &want, NULL), 0);
	check_index(&want, &plain);
	const rio_compression comps[] = {RIO_COMPRESSION_GZIP, RIO_COMPRESSION_ZLIB,
	                                 RIO_COMPRESSION_LZ4};
	for (size_t c = 0; c < 3; c++)
		for (int m = 0; m < 2; m++) {
			if (comps[c] == RIO_COMPRESSION_LZ4 && m)
				continue;
			tu_shard s;
			char name[64];
			snprintf(name, sizeof name, "cidx%s", rio_compression_suffix(comps[c]));
			const char *path = tu_path(name);
			tu_shard_make(&s, path, comps[c], sizes, 300, 8, 0);
			/* the writer reports offsets in the uncompressed stream */
			CU_ASSERT_EQUAL(memcmp(s.off, plain.off, 300 * sizeof *s.off), 0);
			CU_ASSERT_EQUAL(s.end, plain.end);
			struct stat st;
			CU_ASSERT_EQUAL(stat(path, &st), 0);
			CU_ASSERT((uint64_t)st.st_size != plain.end);
			/* built with ISA-L's inflate, then zlib's */
			if (m)
				setenv("RIO_INFLATE", "zlib", 1);
			rio_index idx;
			rio_error err;
			int rc = rio_index_build(path, &idx, &err);
			unsetenv("RIO_INFLATE");
			CU_ASSERT_EQUAL(rc, 0);
			if (rc) {
				fprintf(stderr, "\n  %s: %s\n", name, err.message);
			} else {
				CU_ASSERT_EQUAL(idx.count, want.count);
				CU_ASSERT(idx.count == want.count &&
				          memcmp(idx.offset, want.offset, 300 * sizeof *idx.offset) == 0 &&
				          memcmp(idx.framed_size, want.framed_size,
				                 300 * sizeof *idx.framed_size) == 0);
			}
			rio_index_free(&idx);
			tu_shard_free(&s);
		}
	rio_index_free(&want);
	tu_shard_free(&plain);
	free(sizes);
}

/* ---- the TensorFlow-written files ------------------------------------------------- */

static void test_tf_mnist(void)
{
	const char *path = tu_testdata("tfx-mnist.tfrecord");
	if (!path) {
		CU_FAIL("RIO_TESTDATA is not set to the golden TFRecord directory");
		return;
	}
	rio_index idx;
	rio_error err;
	int rc = rio_index_build(path, &idx, &err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	/* 1000 records of 3187 bytes each: 3203 bytes framed (the README's
	 * "3187 bytes" is the payload), so record i starts at i * 3203 */
	CU_ASSERT_EQUAL(idx.count, 1000);
	size_t bad = 0;
	for (uint64_t i = 0; i < idx.count; i++)
		if (idx.offset[i] != i * 3203 || idx.framed_size[i] != 3187 + 16)
			bad++;
	CU_ASSERT_EQUAL(bad, 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL((uint64_t)st.st_size, 1000 * 3203);

	/* through its .idx file and back: the same entries, first line "0 3203" */
	const char *idx_path = tu_path("tfx-mnist.tfrecord.idx");
	CU_ASSERT_EQUAL_FATAL(rio_index_write(idx_path, &idx, NULL), 0);
	size_t text_len;
	uint8_t *text = tu_read_file(idx_path, &text_len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT(text_len > 16 && memcmp(text, "0 3203\n3203 3203\n", 17) == 0);
	free(text);
	rio_index back;
	CU_ASSERT_EQUAL_FATAL(rio_index_read(idx_path, &back, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(back.count, 1000);
	CU_ASSERT(memcmp(back.offset, idx.offset, 1000 * sizeof *idx.offset) == 0 &&
	          memcmp(back.framed_size, idx.framed_size, 1000 * sizeof *idx.offset) == 0);

	/* random access into it through the index read back: each record a
	 * tf.train.Example (field 1, length-delimited: 0x0a) */
	size_t file_size;
	uint8_t *file = tu_read_file(path, &file_size);
	CU_ASSERT_FATAL(file != NULL && file_size == 1000 * 3203);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	const uint64_t picks[] = {999, 0, 500, 1, 998, 123};
	for (size_t j = 0; j < 6; j++) {
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_read_at(r, &back, picks[j], &rec), 1);
		CU_ASSERT_EQUAL_FATAL(rec.size, 3187);
		CU_ASSERT_EQUAL(rec.offset, picks[j] * 3203);
		CU_ASSERT_EQUAL(rec.index, picks[j]);
		CU_ASSERT_EQUAL(rec.data[0], 0x0a);
		/* the bytes TensorFlow wrote there */
		CU_ASSERT_EQUAL(memcmp(rec.data, file + picks[j] * 3203 + 12, 3187), 0);
	}
	rio_reader_close(r);
	free(file);
	rio_index_free(&back);
	rio_index_free(&idx);
}

/* A GZIP golden file: its index, built with both inflaters, holds `want`
 * records whose offsets follow one another in the decompressed stream, as a
 * sequential read finds them. */
static void tf_gzip_index(const char *name, uint64_t want)
{
	const char *path = tu_testdata(name);
	if (!path) {
		CU_FAIL("RIO_TESTDATA is not set to the golden TFRecord directory");
		return;
	}
	for (int m = 0; m < 2; m++) {
		if (m)
			setenv("RIO_INFLATE", "zlib", 1);
		rio_index idx;
		rio_error err;
		int rc = rio_index_build(path, &idx, &err);
		unsetenv("RIO_INFLATE");
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		CU_ASSERT_EQUAL(idx.count, want);
		/* offsets follow one another from 0 in the decompressed stream */
		size_t bad = 0;
		uint64_t off = 0;
		for (uint64_t i = 0; i < idx.count; i++) {
			if (idx.offset[i] != off || idx.framed_size[i] < 16)
				bad++;
			off += idx.framed_size[i];
		}
		CU_ASSERT_EQUAL(bad, 0);
		/* ... and end where a sequential read of the stream ends */
		rio_reader *r;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
		CU_ASSERT_EQUAL(rio_reader_compression(r), RIO_COMPRESSION_GZIP);
		rio_record rec;
		uint64_t n = 0;
		bad = 0;
		while ((rc = rio_reader_next(r, &rec)) == 1) {
			if (n >= idx.count || rec.offset != idx.offset[n] ||
			    rec.size + 16 != idx.framed_size[n])
				bad++;
			n++;
		}
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(n, want);
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT_EQUAL(rio_reader_bytes(r), off);
		rio_reader_close(r);
		rio_index_free(&idx);
	}
}

static void test_tf_gzip(void)
{
	tf_gzip_index("tfx-penguin-train.tfrecord.gz", 234);
	tf_gzip_index("tfx-external-00001-of-00002.tfrecord.gz", 5012);
}

static const tu_test file_tests[] = {
	{"build matches the writer", test_build},
	{"write is the text format; read back", test_write_read},
	{"empty shard", test_empty_shard},
	{"rio_index_path", test_index_path},
	{"free and append", test_free_and_append},
	{"build errors", test_build_errors},
	{NULL, NULL},
};

static const tu_test malformed_tests[] = {
	{"malformed lines name their line", test_malformed},
	{"an endless line is malformed, not read whole", test_long_line},
	{"accepted spellings", test_accepted_spellings},
	{"missing file", test_read_missing},
	{"a FIFO or a directory is refused, not waited on", test_read_not_regular},
	{NULL, NULL},
};

static const tu_test access_tests[] = {
	{"every record, shuffled, default buffer", test_random_access_default},
	{"every record, shuffled, 4 KiB buffer", test_random_access_small_buffer},
	{"index that does not fit the file", test_index_mismatch},
	{"damaged records under each policy", test_random_access_damaged},
	{"seek to every offset", test_seek_everywhere},
	{"compressed shard", test_random_access_compressed},
	{NULL, NULL},
};

static const tu_test compressed_tests[] = {
	{"gzip, zlib and lz4 index the decompressed stream", test_compressed_index},
	{NULL, NULL},
};

static const tu_test tf_tests[] = {
	{"tfx-mnist.tfrecord", test_tf_mnist},
	{"tfx-penguin and tfx-external (GZIP)", test_tf_gzip},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"index files", file_tests},
	{"malformed index files", malformed_tests},
	{"random access", access_tests},
	{"compressed shards", compressed_tests},
	{"TensorFlow files", tf_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

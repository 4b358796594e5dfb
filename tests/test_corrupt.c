/*
 * test_corrupt.c — damaged shards: every kind of damage gives its own error,
 * and none gives a crash or wrong data.
 *
 * A small shard of five records (sizes 0, 1, 100, 4096, 7) is written with
 * rio_writer and damaged copies are made from its bytes: a flipped byte in a
 * length, a length CRC, the data or a data CRC; a length too large for the
 * limit; a cut at every byte of the file. Each must stop the reader with the
 * right code at the damaged frame (offset, record number, a message naming
 * the file), deliver the records before it intact, and stay stopped. The
 * SKIP policy must step over exactly the damaged records. Compressed shards
 * (gzip and zlib through both ISA-L and zlib inflate, LZ4 frames) are cut and
 * flipped too: every record decoded before the damage is delivered intact,
 * the error is placed at the next one, and nothing wrong ever comes out.
 * Random garbage must give an error (or, when skipping, a clean end) and no
 * record. Those cases run in a forked child with an alarm, so that a crash
 * or a hang is reported as a failed test rather than ending the program.
 */
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- shards with known records: tu_shard (testutil.h) ------------------- */

/* The five-record shard most tests damage. */
static const size_t small_sizes[] = {0, 1, 100, 4096, 7};
#define SMALL_N 5

static void small_corpus(tu_shard *c)
{
	tu_shard_make(c, tu_path("small.tfrecord"), RIO_COMPRESSION_NONE, small_sizes, SMALL_N, 1, 0);
	CU_ASSERT_EQUAL_FATAL(c->file_size, 4204 + 5 * 16);
	static const uint64_t want_off[SMALL_N] = {0, 16, 33, 149, 4261};
	for (size_t i = 0; i < SMALL_N; i++)
		CU_ASSERT_EQUAL_FATAL(c->off[i], want_off[i]);
	CU_ASSERT_EQUAL_FATAL(c->end, c->file_size);
}

/* A damaged copy of c's bytes at path: buf[pos] ^= mask. */
static const char *write_flipped(const tu_shard *c, const char *name, size_t pos, uint8_t mask)
{
	const char *path = tu_path(name);
	uint8_t *copy = malloc(c->file_size);
	memcpy(copy, c->file, c->file_size);
	copy[pos] ^= mask;
	tu_write_file(path, copy, c->file_size);
	free(copy);
	return path;
}

/* Reads the records want[0..nwant) (numbered 0, 1, ...) from r, each
 * compared with the original; returns the rc of the call after them. */
static int expect_records(rio_reader *r, const tu_shard *c, const size_t *want, size_t nwant)
{
	rio_record rec;
	for (size_t j = 0; j < nwant; j++) {
		int rc = rio_reader_next(r, &rec);
		CU_ASSERT_EQUAL(rc, 1);
		if (rc != 1)
			return rc;
		CU_ASSERT(tu_record_is(&rec, c, want[j], j));
	}
	return rio_reader_next(r, &rec);
}

/* Reads records 0..k-1 (intact) and returns the rc that follows. */
static int expect_prefix(rio_reader *r, const tu_shard *c, size_t k)
{
	size_t want[SMALL_N + 1];
	for (size_t j = 0; j < k; j++)
		want[j] = j;
	return expect_records(r, c, want, k);
}

/* Checks the reader's error: code, offset, record and message. */
static void check_error(rio_reader *r, const char *path, int code, uint64_t offset,
                        uint64_t record, const char *word)
{
	const rio_error *e = rio_reader_error(r);
	char at[96];
	snprintf(at, sizeof at, "offset %llu (record %llu)", (unsigned long long)offset,
	         (unsigned long long)record);
	CU_ASSERT_EQUAL(e->code, code);
	CU_ASSERT_EQUAL(e->offset, offset);
	CU_ASSERT_EQUAL(e->record, record);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, word));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, at));
	CU_ASSERT_PTR_NOT_NULL(strstr(e->message, rio_strerror(code))); /* its own text */
	if (e->code != code || e->offset != offset || !strstr(e->message, at) ||
	    !strstr(e->message, word))
		fprintf(stderr, "\n  want %s, %s; got \"%s\"\n", rio_strerror(code), at, e->message);
}

/* Opens path, expects records 0..k-1 intact, then `code` at record k with
 * its place and `word` in the message, and the same error on later calls. */
static void expect_damage(const char *path, const rio_reader_opts *opts, const tu_shard *c, size_t k,
                          int code, const char *word)
{
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, opts), 0);
	int rc = expect_prefix(r, c, k);
	CU_ASSERT_EQUAL(rc, code);
	check_error(r, path, code, c->off[k], k, word);
	rio_record rec;
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), code); /* sticky */
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), code);
	check_error(r, path, code, c->off[k], k, word);
	rio_reader_close(r);
}

/* ---- isolation: crashes and hangs become failures ------------------------ */

typedef struct drain_result {
	int open_rc;    /* rio_reader_open's rc                              */
	int rc;         /* the rc that ended the reading (0 or an error)     */
	int sticky;     /* the rc of one more call after it                  */
	uint64_t n;     /* records delivered                                 */
	uint64_t wrong; /* delivered records that differ from the original   */
	uint64_t skipped;
	uint64_t err_offset, err_record; /* rio_reader_error()'s place    */
	char message[512];
} drain_result;

/* One file to read in a child process. */
typedef struct dcase {
	const uint8_t *bytes; /* the file: size bytes, with bytes[flip] ^= mask */
	size_t size;
	size_t flip;
	uint8_t mask;
	rio_reader_opts opts;
	const char *inflate; /* RIO_INFLATE for this case, or NULL (unset)     */
	const tu_shard *c;     /* the originals; NULL: every record is wrong     */
	int expect;          /* for the caller: the code this case must give   */
	char what[96];       /* names the case in messages                     */
	int ran;             /* a result came back                             */
	drain_result res;
} dcase;

typedef struct dcases {
	dcase *v;
	size_t n, cap;
} dcases;

static dcase *dcase_add(dcases *cs, const uint8_t *bytes, size_t size, const rio_reader_opts *opts,
                        const char *inflate, const tu_shard *c)
{
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->v = realloc(cs->v, cs->cap * sizeof *cs->v);
		CU_ASSERT_FATAL(cs->v != NULL);
	}
	dcase *d = &cs->v[cs->n++];
	memset(d, 0, sizeof *d);
	d->bytes = bytes;
	d->size = size;
	if (opts)
		d->opts = *opts;
	else
		rio_reader_opts_init(&d->opts);
	d->inflate = inflate;
	d->c = c;
	return d;
}

static void dcases_free(dcases *cs)
{
	free(cs->v);
	memset(cs, 0, sizeof *cs);
}

/* The file every case is read from. */
static const char *case_path(void)
{
	return tu_path("case.tfrecord");
}

/* Is rec an intact original of c, the n-th delivered? Records are found by
 * offset (under SKIP the numbering closes up over skipped ones; under FAIL
 * the n-th delivered must be record n). */
static int delivered_ok(const rio_record *rec, const tu_shard *c, uint64_t n, int skip)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->off[mid] < rec->offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->n || c->off[lo] != rec->offset || (!skip && lo != n))
		return 0;
	return rec->index == n && rec->size == c->size[lo] &&
	       memcmp(rec->data, c->data[lo], c->size[lo]) == 0;
}

/* Child side: writes case d's file, reads it to the end or an error and
 * compares every record delivered with its original. */
static void drain_case(const dcase *d, drain_result *res)
{
	memset(res, 0, sizeof *res);
	uint8_t *copy = malloc(d->size + 1);
	memcpy(copy, d->bytes, d->size);
	if (d->mask)
		copy[d->flip] ^= d->mask;
	tu_write_file(case_path(), copy, d->size);
	free(copy);
	if (d->inflate)
		setenv("RIO_INFLATE", d->inflate, 1);
	else
		unsetenv("RIO_INFLATE");
	rio_reader *r;
	res->open_rc = rio_reader_open(&r, case_path(), &d->opts);
	if (res->open_rc)
		return;
	rio_record rec;
	while ((res->rc = rio_reader_next(r, &rec)) == 1) {
		if (!d->c || !delivered_ok(&rec, d->c, res->n, d->opts.on_damage == RIO_DAMAGE_SKIP))
			res->wrong++;
		res->n++;
	}
	res->sticky = rio_reader_next(r, &rec);
	res->skipped = rio_reader_skipped(r);
	res->err_offset = rio_reader_error(r)->offset;
	res->err_record = rio_reader_error(r)->record;
	snprintf(res->message, sizeof res->message, "%s", rio_reader_error(r)->message);
	rio_reader_close(r);
}

/* Runs the cases in forked children (one child for all, with an alarm per
 * case against hangs). A case whose child crashed or hung is a failed
 * assertion and stays ran == 0; the cases after it run in a new child. */
static void run_cases(dcases *cs)
{
	size_t next = 0;
	tu_tmpdir(); /* created here, not in a child */
	while (next < cs->n) {
		int fds[2];
		CU_ASSERT_FATAL(pipe(fds) == 0);
		fflush(NULL);
		pid_t pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			for (size_t i = next; i < cs->n; i++) {
				struct {
					size_t i;
					drain_result res;
				} msg;
				alarm(10);
				msg.i = i;
				drain_case(&cs->v[i], &msg.res);
				if (write(fds[1], &msg, sizeof msg) != (ssize_t)sizeof msg)
					_exit(3);
			}
			_exit(0);
		}
		close(fds[1]);
		struct {
			size_t i;
			drain_result res;
		} msg;
		size_t got = 0;
		for (;;) {
			ssize_t r = read(fds[0], (char *)&msg + got, sizeof msg - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			if (got == sizeof msg) {
				cs->v[msg.i].res = msg.res;
				cs->v[msg.i].ran = 1;
				next = msg.i + 1;
				got = 0;
			}
		}
		close(fds[0]);
		int status = 0;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && next == cs->n)
			break;
		/* the child died in case `next` */
		const dcase *d = &cs->v[next];
		if (WIFSIGNALED(status))
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): the reader was killed by signal %d (%s)\n",
			        d->what, d->inflate ? d->inflate : "", WTERMSIG(status),
			        WTERMSIG(status) == SIGALRM ? "a hang" : "a crash");
		else
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): the reader's process exited with %d\n",
			        d->what, d->inflate ? d->inflate : "", WEXITSTATUS(status));
		CU_FAIL("the reader crashed or hung");
		next++;
	}
}

static int is_code(int rc, const int *codes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rc == codes[i])
			return 1;
	return 0;
}

/* ---- damage in the frame -------------------------------------------------- */

static void test_length_flip(void)
{
	tu_shard c;
	small_corpus(&c);
	for (size_t k = 0; k < SMALL_N; k++)
		for (size_t b = 0; b < 8; b++) {
			const char *path = write_flipped(&c, "length.tfrecord", c.off[k] + b, 0x01 << b);
			expect_damage(path, NULL, &c, k, RIO_ECORRUPT_LENGTH, "length CRC mismatch");
		}
	tu_shard_free(&c);
}

static void test_length_crc_flip(void)
{
	tu_shard c;
	small_corpus(&c);
	for (size_t k = 0; k < SMALL_N; k++)
		for (size_t b = 8; b < 12; b++) {
			const char *path = write_flipped(&c, "lcrc.tfrecord", c.off[k] + b, 0x80);
			expect_damage(path, NULL, &c, k, RIO_ECORRUPT_LENGTH, "length CRC mismatch");
		}
	tu_shard_free(&c);
}

static void test_data_flip(void)
{
	tu_shard c;
	small_corpus(&c);
	int cases = 0;
	for (size_t k = 0; k < SMALL_N; k++) {
		if (!c.size[k])
			continue;
		size_t at[] = {0, c.size[k] / 2, c.size[k] - 1};
		for (size_t j = 0; j < 3; j++) {
			const char *path =
			        write_flipped(&c, "data.tfrecord", c.off[k] + 12 + at[j], 0x10);
			expect_damage(path, NULL, &c, k, RIO_ECORRUPT_DATA, "data CRC mismatch");
			cases++;
		}
	}
	CU_ASSERT_EQUAL(cases, 12);
	tu_shard_free(&c);
}

static void test_data_crc_flip(void)
{
	tu_shard c;
	small_corpus(&c);
	for (size_t k = 0; k < SMALL_N; k++)
		for (size_t b = 0; b < 4; b++) {
			const char *path = write_flipped(&c, "dcrc.tfrecord",
			                                 c.off[k] + 12 + c.size[k] + b, 0xff);
			expect_damage(path, NULL, &c, k, RIO_ECORRUPT_DATA, "data CRC mismatch");
		}
	tu_shard_free(&c);
}

/* A copy of c whose record k has a header for `length` (a valid length CRC). */
static const char *write_relength(const tu_shard *c, const char *name, size_t k, uint64_t length)
{
	const char *path = tu_path(name);
	uint8_t *copy = malloc(c->file_size);
	memcpy(copy, c->file, c->file_size);
	rio_frame_header(copy + c->off[k], length);
	tu_write_file(path, copy, c->file_size);
	free(copy);
	return path;
}

static void test_huge_length(void)
{
	tu_shard c;
	small_corpus(&c);
	const uint64_t lengths[] = {(uint64_t)RIO_DEFAULT_MAX_RECORD + 1, 1ull << 40, 1ull << 62};
	for (size_t k = 0; k < SMALL_N; k++)
		for (size_t j = 0; j < 3; j++) {
			const char *path = write_relength(&c, "huge.tfrecord", k, lengths[j]);
			expect_damage(path, NULL, &c, k, RIO_ETOOLARGE, "exceeds limit");
		}
	tu_shard_free(&c);
}

static void test_max_record_size(void)
{
	tu_shard c;
	small_corpus(&c);
	const char *path = tu_path("small.tfrecord");
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.max_record_size = 1000; /* record 3 (4096 bytes) is over it */
	expect_damage(path, &o, &c, 3, RIO_ETOOLARGE, "exceeds limit");
	CU_ASSERT_PTR_NOT_NULL(strstr(rio_strerror(RIO_ETOOLARGE), "exceeds limit"));

	/* a record exactly at the limit is fine */
	o.max_record_size = 4096;
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(expect_prefix(r, &c, SMALL_N), 0);
	rio_reader_close(r);

	o.max_record_size = 4095;
	expect_damage(path, &o, &c, 3, RIO_ETOOLARGE, "exceeds limit");
	tu_shard_free(&c);
}

/* A valid header whose length runs past the end of the file. */
static void test_length_past_end(void)
{
	tu_shard c;
	small_corpus(&c);
	const char *path = write_relength(&c, "past-end.tfrecord", 4, 5000);
	expect_damage(path, NULL, &c, 4, RIO_ETRUNCATED, "truncated record");
	path = write_relength(&c, "past-end.tfrecord", 2, 4284 - 33); /* 16 bytes short */
	expect_damage(path, NULL, &c, 2, RIO_ETRUNCATED, "truncated record");
	tu_shard_free(&c);
}

/* A wrong length that still fits in the file, rewritten with a valid length
 * CRC (as a buggy writer would leave it): the footer is then read from the
 * wrong place, and that is a data CRC mismatch at that record, never a record
 * of the wrong size. Shorter and longer, by 1 and by more, for each record
 * (the last one can only shrink). */
static void test_wrong_length_valid_crc(void)
{
	tu_shard c;
	small_corpus(&c);
	int cases = 0;
	for (size_t k = 0; k < SMALL_N; k++) {
		const int64_t deltas[] = {-1, +1, -50, +50};
		for (size_t j = 0; j < 4; j++) {
			int64_t len = (int64_t)c.size[k] + deltas[j];
			if (len < 0 || c.off[k] + 16 + (uint64_t)len > c.file_size)
				continue;
			const char *path = write_relength(&c, "relength.tfrecord", k, (uint64_t)len);
			expect_damage(path, NULL, &c, k, RIO_ECORRUPT_DATA, "data CRC mismatch");
			cases++;
		}
	}
	CU_ASSERT_EQUAL(cases, 13);
	tu_shard_free(&c);
}

/* With no limit (max_record_size = UINT64_MAX) a length near 2^64 must still
 * be an error, not an overflowing size computation: damage never crashes. */
static void test_unlimited_huge_length(void)
{
	tu_shard c;
	small_corpus(&c);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.max_record_size = UINT64_MAX;
	/* framed sizes (length + 16) that wrap to 15, 0, 4 and to 2^64 - 2^20 */
	const uint64_t lengths[] = {UINT64_MAX, UINT64_MAX - 15, UINT64_MAX - 11,
	                            UINT64_MAX - (1u << 20) - 16};
	const int ok_codes[] = {RIO_ETOOLARGE, RIO_ETRUNCATED};
	uint8_t *files[4];
	dcases cs = {0};
	for (size_t j = 0; j < 4; j++) {
		files[j] = malloc(c.file_size);
		memcpy(files[j], c.file, c.file_size);
		rio_frame_header(files[j] + c.off[2], lengths[j]);
		dcase *d = dcase_add(&cs, files[j], c.file_size, &o, NULL, &c);
		snprintf(d->what, sizeof d->what, "record 2 of length %llu, no limit",
		         (unsigned long long)lengths[j]);
	}
	run_cases(&cs);
	for (size_t j = 0; j < cs.n; j++) {
		const dcase *d = &cs.v[j];
		if (!d->ran)
			continue;
		CU_ASSERT_EQUAL(d->res.open_rc, 0);
		CU_ASSERT_EQUAL(d->res.n, 2);
		CU_ASSERT_EQUAL(d->res.wrong, 0);
		CU_ASSERT(is_code(d->res.rc, ok_codes, 2));
		if (!is_code(d->res.rc, ok_codes, 2))
			fprintf(stderr, "\n  %s: got %d \"%s\"\n", d->what, d->res.rc, d->res.message);
	}
	for (size_t j = 0; j < 4; j++)
		free(files[j]);
	dcases_free(&cs);
	tu_shard_free(&c);
}

/* Every cut of the file: at a record boundary a clean end after the records
 * before it; anywhere else RIO_ETRUNCATED at the record that was cut. */
static void truncate_everywhere(size_t buffer_size)
{
	tu_shard c;
	small_corpus(&c);
	const char *path = tu_path("cut.tfrecord");
	tu_write_file(path, c.file, c.file_size);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	if (buffer_size)
		o.buffer_size = buffer_size;
	int boundaries = 0, in_header = 0, in_data = 0, in_footer = 0;
	for (size_t cut = c.file_size; cut-- > 0;) {
		CU_ASSERT_EQUAL_FATAL(truncate(path, (off_t)cut), 0);
		size_t k = 0; /* whole records before the cut */
		while (k < c.n && c.off[k] + c.size[k] + 16 <= cut)
			k++;
		rio_reader *r;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
		int rc = expect_prefix(r, &c, k);
		rio_record rec;
		if (cut == c.off[k]) {
			boundaries++;
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
			CU_ASSERT_EQUAL(rio_reader_error(r)->code, 0);
			CU_ASSERT_EQUAL(rio_reader_bytes(r), cut);
		} else {
			size_t into = cut - c.off[k];
			if (into < 12)
				in_header++;
			else if (into < 12 + c.size[k])
				in_data++;
			else
				in_footer++;
			CU_ASSERT_EQUAL(rc, RIO_ETRUNCATED);
			check_error(r, path, RIO_ETRUNCATED, c.off[k], k, "truncated record");
			CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ETRUNCATED);
			if (rc != RIO_ETRUNCATED)
				fprintf(stderr, "\n  cut at %zu: rc %d\n", cut, rc);
		}
		rio_reader_close(r);
	}
	CU_ASSERT_EQUAL(boundaries, SMALL_N); /* 0, 16, 33, 149, 4261 */
	CU_ASSERT_EQUAL(in_header, SMALL_N * 11);
	CU_ASSERT_EQUAL(in_data, 1 + 100 + 4096 + 7);
	CU_ASSERT_EQUAL(in_footer, SMALL_N * 4);
	tu_shard_free(&c);
}

static void test_truncate_everywhere(void)
{
	truncate_everywhere(0);
}

static void test_truncate_everywhere_small_buffer(void)
{
	truncate_everywhere(4096); /* record 3 is bigger than the buffer */
}

static void test_open_errors(void)
{
	rio_reader *r = (rio_reader *)&r;
	CU_ASSERT_EQUAL(rio_reader_open(&r, tu_path("no-such-file.tfrecord"), NULL), -ENOENT);
	CU_ASSERT_PTR_NULL(r);
	r = (rio_reader *)&r;
	CU_ASSERT_EQUAL(rio_reader_open(&r, tu_tmpdir(), NULL), -EISDIR);
	CU_ASSERT_PTR_NULL(r);
	rio_reader_close(NULL);
}

static void test_empty_file(void)
{
	const char *path = tu_path("empty.tfrecord");
	tu_write_file(path, "", 0);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	rio_record rec;
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_error(r)->code, 0);
	CU_ASSERT_EQUAL(rio_reader_bytes(r), 0);
	rio_reader_close(r);
}

/* ---- the SKIP policy ------------------------------------------------------- */

static void skip_opts(rio_reader_opts *o)
{
	rio_reader_opts_init(o);
	o->on_damage = RIO_DAMAGE_SKIP;
}

/* Opens path under SKIP and expects exactly the records `want`, then a
 * clean end with `skipped` records and `skipped_bytes` bytes skipped. */
static void expect_skip(const char *path, const tu_shard *c, const size_t *want, size_t nwant,
                        uint64_t skipped, uint64_t skipped_bytes, int last_code)
{
	rio_reader_opts o;
	skip_opts(&o);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(expect_records(r, c, want, nwant), 0);
	rio_record rec;
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), skipped);
	CU_ASSERT_EQUAL(rio_reader_skipped_bytes(r), skipped_bytes);
	CU_ASSERT_EQUAL(rio_reader_error(r)->code, last_code); /* the last damage skipped */
	CU_ASSERT_PTR_NOT_NULL(strstr(rio_reader_error(r)->message, path));
	rio_reader_close(r);
}

/* REPORT: records 1 and 2 damaged back to back (data, then length), and a
 * truncated tail: each damage comes out of next() once, with its own place,
 * and the reader goes on between them. */
static void test_report_each_damage(void)
{
	tu_shard c;
	small_corpus(&c);
	size_t cut = c.off[4] + 12 + 3; /* inside record 4's data */
	uint8_t *copy = malloc(c.file_size);
	memcpy(copy, c.file, c.file_size);
	copy[c.off[1] + 12] ^= 0x01; /* data of record 1 */
	copy[c.off[2] + 3] ^= 0x01;  /* length of record 2 */
	const char *path = tu_path("report.tfrecord");
	tu_write_file(path, copy, cut);
	free(copy);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = RIO_DAMAGE_REPORT;
	rio_reader *r;
	rio_record rec;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT(tu_record_is(&rec, &c, 0, 0));
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ECORRUPT_DATA);
	check_error(r, path, RIO_ECORRUPT_DATA, c.off[1], 1, "data CRC mismatch");
	CU_ASSERT_FALSE(rio_reader_stopped(r));
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ECORRUPT_LENGTH);
	check_error(r, path, RIO_ECORRUPT_LENGTH, c.off[2], 1, "length CRC mismatch");
	CU_ASSERT_FALSE(rio_reader_stopped(r));
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 1); /* found again after the resync */
	CU_ASSERT(rec.offset == c.off[3] && rec.size == c.size[3] &&
	          memcmp(rec.data, c.data[3], c.size[3]) == 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ETRUNCATED);
	check_error(r, path, RIO_ETRUNCATED, c.off[4], 2, "truncated record");
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_FALSE(rio_reader_stopped(r));
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 3);
	CU_ASSERT_EQUAL(rio_reader_skipped_bytes(r),
	                (c.size[1] + 16) + (c.size[2] + 16) + (cut - c.off[4]));
	rio_reader_close(r);
	tu_shard_free(&c);
}

/* REPORT on compressed shards: a cut stream is reported once, then ends;
 * a damaged stream (whether the codec or a frame CRC finds it) stops the
 * reader (rio_reader_stopped) with the records before the damage intact. */
static void test_report_compressed(void)
{
	static const size_t sizes[] = {3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000};
	tu_shard c;
	tu_shard_make(&c, tu_path("report.tfrecord.gz"), RIO_COMPRESSION_GZIP, sizes, 8, 5, 1);
	const char *path = tu_path("report-cut.tfrecord.gz");
	tu_write_file(path, c.file, c.file_size / 2);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = RIO_DAMAGE_REPORT;
	rio_reader *r;
	rio_record rec;
	int rc;
	uint64_t n = 0;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	while ((rc = rio_reader_next(r, &rec)) == 1)
		CU_ASSERT(tu_record_is(&rec, &c, n, n) && n++ < 8);
	CU_ASSERT_EQUAL(rc, RIO_ETRUNCATED);
	CU_ASSERT_TRUE_FATAL(n > 0 && n < 8);
	check_error(r, path, RIO_ETRUNCATED, c.off[n], n, "truncated record");
	CU_ASSERT_FALSE(rio_reader_stopped(r));
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 1);
	rio_reader_close(r);

	path = write_flipped(&c, "report-flip.tfrecord.gz", c.file_size / 2, 0xff);
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	n = 0;
	while ((rc = rio_reader_next(r, &rec)) == 1)
		CU_ASSERT(tu_record_is(&rec, &c, n, n) && n++ < 8);
	CU_ASSERT_TRUE(rc == RIO_ECOMPRESSED || rc == RIO_ECORRUPT_DATA ||
	               rc == RIO_ECORRUPT_LENGTH || rc == RIO_ETOOLARGE);
	CU_ASSERT_TRUE_FATAL(n < 8); /* the damage cost at least one record */
	check_error(r, path, rc, c.off[n], n, rio_strerror(rc));
	CU_ASSERT_TRUE(rio_reader_stopped(r)); /* nothing after damage in a stream */
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), rc);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 0);
	rio_reader_close(r);
	tu_shard_free(&c);
}

static void test_skip_data_crc(void)
{
	tu_shard c;
	small_corpus(&c);
	for (size_t k = 0; k < SMALL_N; k++) {
		const char *path =
		        write_flipped(&c, "skip-dcrc.tfrecord", c.off[k] + 12 + c.size[k] + 1, 0x04);
		size_t want[SMALL_N], n = 0;
		for (size_t i = 0; i < SMALL_N; i++)
			if (i != k)
				want[n++] = i;
		expect_skip(path, &c, want, n, 1, c.size[k] + 16, RIO_ECORRUPT_DATA);
		/* damaged data (not its CRC) skips the same way */
		if (c.size[k]) {
			path = write_flipped(&c, "skip-data.tfrecord", c.off[k] + 12, 0x04);
			expect_skip(path, &c, want, n, 1, c.size[k] + 16, RIO_ECORRUPT_DATA);
		}
	}
	tu_shard_free(&c);
}

static void test_skip_length(void)
{
	tu_shard c;
	small_corpus(&c);
	for (size_t k = 0; k < SMALL_N; k++) {
		size_t want[SMALL_N], n = 0;
		for (size_t i = 0; i < SMALL_N; i++)
			if (i != k)
				want[n++] = i;
		/* the length itself, then its CRC */
		const char *path = write_flipped(&c, "skip-len.tfrecord", c.off[k] + 1, 0x20);
		expect_skip(path, &c, want, n, 1, c.size[k] + 16, RIO_ECORRUPT_LENGTH);
		path = write_flipped(&c, "skip-lcrc.tfrecord", c.off[k] + 9, 0x20);
		expect_skip(path, &c, want, n, 1, c.size[k] + 16, RIO_ECORRUPT_LENGTH);
		/* a length over the limit (valid CRC) resyncs the same way */
		path = write_relength(&c, "skip-huge.tfrecord", k, 1ull << 40);
		expect_skip(path, &c, want, n, 1, c.size[k] + 16, RIO_ETOOLARGE);
	}
	tu_shard_free(&c);
}

static void test_skip_truncated_tail(void)
{
	tu_shard c;
	small_corpus(&c);
	const char *path = tu_path("skip-tail.tfrecord");
	const size_t want[] = {0, 1, 2, 3};
	/* cut in the header, in the data and in the footer of the last record */
	const size_t into[] = {5, 12 + 3, 12 + 7 + 2};
	for (size_t j = 0; j < 3; j++) {
		tu_write_file(path, c.file, c.off[4] + into[j]);
		expect_skip(path, &c, want, 4, 1, into[j], RIO_ETRUNCATED);
	}
	/* a cut inside record 3: records 0..2, then the end */
	tu_write_file(path, c.file, c.off[3] + 2000);
	expect_skip(path, &c, want, 3, 1, 2000, RIO_ETRUNCATED);
	tu_shard_free(&c);
}

static void test_skip_two_damaged(void)
{
	tu_shard c;
	small_corpus(&c);
	uint8_t *copy = malloc(c.file_size);
	memcpy(copy, c.file, c.file_size);
	copy[c.off[1] + 12] ^= 0x01; /* data of record 1 */
	copy[c.off[3] + 3] ^= 0x01;  /* length of record 3 */
	const char *path = tu_path("skip-two.tfrecord");
	tu_write_file(path, copy, c.file_size);
	const size_t want[] = {0, 2, 4};
	expect_skip(path, &c, want, 3, 2, (1 + 16) + (4096 + 16), RIO_ECORRUPT_LENGTH);

	/* the same file under FAIL stops at the first */
	expect_damage(path, NULL, &c, 1, RIO_ECORRUPT_DATA, "data CRC mismatch");

	/* two adjacent damaged records, then a truncated tail: three skipped */
	memcpy(copy, c.file, c.file_size);
	copy[c.off[2] + 50] ^= 0x01;
	copy[c.off[3] + 12 + 10] ^= 0x01;
	tu_write_file(path, copy, c.off[4] + 9);
	const size_t want2[] = {0, 1};
	expect_skip(path, &c, want2, 2, 3, (100 + 16) + (4096 + 16) + 9, RIO_ETRUNCATED);
	free(copy);
	tu_shard_free(&c);
}

static void test_no_verify(void)
{
	tu_shard c;
	small_corpus(&c);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.verify_crc = 0;
	/* damaged data is delivered as it is in the file */
	const char *path = write_flipped(&c, "noverify.tfrecord", c.off[2] + 12 + 40, 0x01);
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	rio_record rec;
	for (size_t i = 0; i < SMALL_N; i++) {
		CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
		CU_ASSERT_EQUAL(rec.index, i);
		CU_ASSERT_EQUAL(rec.size, c.size[i]);
		CU_ASSERT_EQUAL(rec.offset, c.off[i]);
		if (i == 2) {
			CU_ASSERT_EQUAL(rec.data[40], c.data[2][40] ^ 0x01);
			CU_ASSERT_EQUAL(memcmp(rec.data, c.data[2], 40), 0);
			CU_ASSERT_EQUAL(memcmp(rec.data + 41, c.data[2] + 41, 59), 0);
		} else {
			CU_ASSERT_EQUAL(memcmp(rec.data, c.data[i], c.size[i]), 0);
		}
	}
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 0);
	CU_ASSERT_EQUAL(rio_reader_error(r)->code, 0);
	rio_reader_close(r);

	/* damaged data CRCs are not looked at */
	uint8_t *copy = malloc(c.file_size);
	memcpy(copy, c.file, c.file_size);
	for (size_t k = 0; k < SMALL_N; k++)
		copy[c.off[k] + 12 + c.size[k]] ^= 0x55;
	path = tu_path("noverify-crc.tfrecord");
	tu_write_file(path, copy, c.file_size);
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(expect_prefix(r, &c, SMALL_N), 0);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 0);
	rio_reader_close(r);

	/* but the length CRC always is: a damaged one is an error, and under
	 * SKIP the reader resyncs past it, as with the CRCs checked */
	copy[c.off[3] + 9] ^= 0x55;
	tu_write_file(path, copy, c.file_size);
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	CU_ASSERT_EQUAL(expect_prefix(r, &c, 3), RIO_ECORRUPT_LENGTH);
	CU_ASSERT_EQUAL(rio_reader_error(r)->offset, c.off[3]);
	rio_reader_close(r);
	o.on_damage = RIO_DAMAGE_SKIP;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, &o), 0);
	size_t n = 0;
	while (rio_reader_next(r, &rec) == 1)
		n++;
	CU_ASSERT_EQUAL(n, SMALL_N - 1);
	CU_ASSERT_EQUAL(rio_reader_skipped(r), 1);
	CU_ASSERT_EQUAL(rio_reader_skipped_bytes(r), c.size[3] + 16);
	rio_reader_close(r);
	free(copy);
	tu_shard_free(&c);
}

/* ---- compressed shards ------------------------------------------------------ */

/* A compressible shard of 300 records (sizes 0..1500), in codec comp. */
static void compressed_corpus(tu_shard *c, rio_compression comp, const char *name)
{
	size_t sizes[300];
	uint64_t x = 12345;
	for (size_t i = 0; i < 300; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		sizes[i] = (size_t)((x >> 33) % 1501);
	}
	sizes[7] = 0;
	tu_shard_make(c, tu_path(name), comp, sizes, 300, 7, 1);
	CU_ASSERT_FATAL(c->file_size < c->end); /* it did compress */
}

static const char *const inflaters[] = {NULL, "zlib"}; /* default (ISA-L), zlib */

/* Checks the results of compressed-damage cases: each an error from
 * codes (and exactly d->expect when set), sticky, no wrong record. */
static void check_damaged(const dcases *cs, const int *codes, size_t ncodes)
{
	for (size_t i = 0; i < cs->n; i++) {
		const dcase *d = &cs->v[i];
		if (!d->ran)
			continue;
		const drain_result *res = &d->res;
		CU_ASSERT_EQUAL(res->open_rc, 0);
		CU_ASSERT_EQUAL(res->wrong, 0);
		CU_ASSERT(res->n <= d->c->n);
		CU_ASSERT(is_code(res->rc, codes, ncodes));
		CU_ASSERT_EQUAL(res->sticky, res->rc);
		if (d->expect)
			CU_ASSERT_EQUAL(res->rc, d->expect);
		if (res->rc) {
			/* placed at the first record not delivered */
			uint64_t at = res->n < d->c->n ? d->c->off[res->n] : d->c->end;
			CU_ASSERT_PTR_NOT_NULL(strstr(res->message, case_path()));
			CU_ASSERT_EQUAL(res->err_record, res->n);
			CU_ASSERT_EQUAL(res->err_offset, at);
		}
		if (!is_code(res->rc, codes, ncodes) || res->wrong || (d->expect && res->rc != d->expect))
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): rc %d, %llu records (%llu wrong): %s\n",
			        d->what, d->inflate ? d->inflate : "", res->rc,
			        (unsigned long long)res->n, (unsigned long long)res->wrong, res->message);
	}
}

/* Adds the cut of c's file at `cut`, with each inflater. */
static void add_cut(dcases *cs, const tu_shard *c, size_t cut, int ninflaters, int expect)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.buffer_size = 4096; /* many refills: records flow before the damage */
	for (int m = 0; m < ninflaters; m++) {
		dcase *d = dcase_add(cs, c->file, cut, &o, inflaters[m], c);
		d->expect = expect;
		snprintf(d->what, sizeof d->what, "cut at %zu of %zu", cut, c->file_size);
	}
}

/* Adds c's file with bytes[pos] ^= mask, with each inflater. */
static void add_flip(dcases *cs, const tu_shard *c, size_t pos, uint8_t mask, int ninflaters,
                     int expect)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.buffer_size = 4096;
	for (int m = 0; m < ninflaters; m++) {
		dcase *d = dcase_add(cs, c->file, c->file_size, &o, inflaters[m], c);
		d->flip = pos;
		d->mask = mask;
		d->expect = expect;
		snprintf(d->what, sizeof d->what, "byte %zu of %zu ^ 0x%02x", pos, c->file_size, mask);
	}
}

/* The undamaged shard reads whole with every inflater and buffer size: the
 * ground the damage tests stand on. */
static void compressed_clean(rio_compression comp, const char *name, int ninflaters)
{
	tu_shard c;
	compressed_corpus(&c, comp, name);
	const size_t buffers[] = {0, 4096, 8192, 16384, 65536};
	dcases cs = {0};
	for (size_t b = 0; b < 5; b++)
		for (int m = 0; m < ninflaters; m++) {
			rio_reader_opts o;
			rio_reader_opts_init(&o);
			if (buffers[b])
				o.buffer_size = buffers[b];
			dcase *d = dcase_add(&cs, c.file, c.file_size, &o, inflaters[m], &c);
			snprintf(d->what, sizeof d->what, "whole %s shard, buffer_size %zu",
			         rio_compression_name(comp), o.buffer_size);
		}
	run_cases(&cs);
	for (size_t i = 0; i < cs.n; i++) {
		const dcase *d = &cs.v[i];
		if (!d->ran)
			continue;
		CU_ASSERT_EQUAL(d->res.open_rc, 0);
		CU_ASSERT_EQUAL(d->res.rc, 0);
		CU_ASSERT_EQUAL(d->res.n, c.n);
		CU_ASSERT_EQUAL(d->res.wrong, 0);
		if (d->res.rc || d->res.n != c.n)
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): rc %d after %llu of %zu records: %s\n",
			        d->what, d->inflate ? d->inflate : "", d->res.rc,
			        (unsigned long long)d->res.n, c.n, d->res.message);
	}
	dcases_free(&cs);
	tu_shard_free(&c);
}

static void test_gzip_clean(void)
{
	compressed_clean(RIO_COMPRESSION_GZIP, "clean.tfrecord.gz", 2);
}

static void test_zlib_clean(void)
{
	compressed_clean(RIO_COMPRESSION_ZLIB, "clean.tfrecord.zz", 2);
}

static void test_lz4_clean(void)
{
	compressed_clean(RIO_COMPRESSION_LZ4, "clean.tfrecord.lz4", 1);
}

/* Cuts: an error (ETRUNCATED, or ECOMPRESSED), never a clean end, never a
 * wrong record; `trailer` is the size of the codec's trailer. */
static void compressed_truncation(rio_compression comp, const char *name, int ninflaters,
                                  size_t trailer)
{
	tu_shard c;
	compressed_corpus(&c, comp, name);
	size_t size = c.file_size;
	dcases cs = {0};
	/* the header and the first blocks byte by byte */
	for (size_t cut = 1; cut < 24; cut++)
		add_cut(&cs, &c, cut, ninflaters, 0);
	/* points through the body */
	for (size_t j = 1; j < 24; j++)
		add_cut(&cs, &c, size * j / 24, ninflaters, 0);
	/* the end: inside the trailer the data are all there, but the stream
	 * has not reached its end marker */
	for (size_t cut = size - 16; cut < size; cut++)
		add_cut(&cs, &c, cut, ninflaters, cut >= size - trailer ? RIO_ETRUNCATED : 0);
	run_cases(&cs);
	const int ok_codes[] = {RIO_ETRUNCATED, RIO_ECOMPRESSED};
	check_damaged(&cs, ok_codes, 2);
	dcases_free(&cs);
	tu_shard_free(&c);
}

static void test_gzip_truncated(void)
{
	compressed_truncation(RIO_COMPRESSION_GZIP, "trunc.tfrecord.gz", 2, 8);
}

static void test_zlib_truncated(void)
{
	compressed_truncation(RIO_COMPRESSION_ZLIB, "trunc.tfrecord.zz", 2, 4);
}

static void test_lz4_truncated(void)
{
	compressed_truncation(RIO_COMPRESSION_LZ4, "trunc.tfrecord.lz4", 1, 4); /* end mark */
}

/* Flips in the middle of the compressed data (head and tail: the sizes of
 * the codec's header and trailer): an error from the codec or from a
 * record's CRC, never wrong data. */
static void compressed_flips(rio_compression comp, const char *name, int ninflaters, size_t head,
                             size_t tail)
{
	tu_shard c;
	compressed_corpus(&c, comp, name);
	size_t body = c.file_size - head - tail;
	dcases cs = {0};
	for (size_t j = 1; j < 16; j++)
		add_flip(&cs, &c, head + body * j / 16, 0xff, ninflaters, 0);
	run_cases(&cs);
	const int codes[] = {RIO_ECOMPRESSED, RIO_ECORRUPT_DATA, RIO_ECORRUPT_LENGTH};
	check_damaged(&cs, codes, 3);
	dcases_free(&cs);
	tu_shard_free(&c);
}

static void test_gzip_flipped(void)
{
	compressed_flips(RIO_COMPRESSION_GZIP, "flip.tfrecord.gz", 2, 10, 8);
}

static void test_zlib_flipped(void)
{
	compressed_flips(RIO_COMPRESSION_ZLIB, "flip.tfrecord.zz", 2, 2, 4);
}

static void test_lz4_flipped(void)
{
	compressed_flips(RIO_COMPRESSION_LZ4, "flip.tfrecord.lz4", 1, 7, 4);
}

/* The codecs' own checksums over the last `n` bytes: the data are intact,
 * only the check fails, and that is RIO_ECOMPRESSED. */
static void compressed_trailer(rio_compression comp, const char *name, int ninflaters, size_t n)
{
	tu_shard c;
	compressed_corpus(&c, comp, name);
	dcases cs = {0};
	for (size_t b = c.file_size - n; b < c.file_size; b++)
		add_flip(&cs, &c, b, 0x01, ninflaters, RIO_ECOMPRESSED);
	run_cases(&cs);
	const int codes[] = {RIO_ECOMPRESSED};
	check_damaged(&cs, codes, 1);
	dcases_free(&cs);
	tu_shard_free(&c);
}

static void test_gzip_trailer(void)
{
	/* CRC-32 of the data, then ISIZE */
	compressed_trailer(RIO_COMPRESSION_GZIP, "trailer.tfrecord.gz", 2, 8);
}

static void test_zlib_trailer(void)
{
	/* Adler-32 */
	compressed_trailer(RIO_COMPRESSION_ZLIB, "trailer.tfrecord.zz", 2, 4);
}

/* Our LZ4 frames carry no content checksum (the records' CRCs guard the
 * data); a damaged end mark reads as a block that never comes or a bad
 * block size: an error after every record, intact. */
static void test_lz4_end_mark(void)
{
	tu_shard c;
	compressed_corpus(&c, RIO_COMPRESSION_LZ4, "endmark.tfrecord.lz4");
	dcases cs = {0};
	const uint8_t masks[] = {0x01, 0x80, 0xff};
	for (size_t b = c.file_size - 4; b < c.file_size; b++)
		for (size_t j = 0; j < 3; j++)
			add_flip(&cs, &c, b, masks[j], 1, 0);
	run_cases(&cs);
	const int codes[] = {RIO_ETRUNCATED, RIO_ECOMPRESSED};
	check_damaged(&cs, codes, 2);
	dcases_free(&cs);
	tu_shard_free(&c);
}

/* Under SKIP, a compressed stream cut short ends the file like a truncated
 * tail (one damaged region), after every record decoded before the cut;
 * damage inside the stream stops the reader, whether the codec finds it or
 * a frame's CRC does (after a changed byte the decoded stream can hold
 * intact copies of earlier frames, which a resync would deliver as wrong
 * records), and no wrong record is ever delivered. */
static void compressed_skip(rio_compression comp, const char *name, int ninflaters, size_t head,
                            size_t tail)
{
	tu_shard c;
	compressed_corpus(&c, comp, name);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = RIO_DAMAGE_SKIP;
	o.buffer_size = 4096;
	dcases cs = {0};
	size_t ncuts = 0;
	for (size_t j = 1; j < 8; j++)
		for (int m = 0; m < ninflaters; m++) {
			size_t cut = c.file_size * j / 8;
			dcase *d = dcase_add(&cs, c.file, cut, &o, inflaters[m], &c);
			snprintf(d->what, sizeof d->what, "skip: cut at %zu of %zu", cut, c.file_size);
			ncuts++;
		}
	size_t body = c.file_size - head - tail;
	for (size_t j = 1; j < 8; j++)
		for (int m = 0; m < ninflaters; m++) {
			size_t pos = head + body * j / 8;
			dcase *d = dcase_add(&cs, c.file, c.file_size, &o, inflaters[m], &c);
			d->flip = pos;
			d->mask = 0xff;
			snprintf(d->what, sizeof d->what, "skip: byte %zu of %zu ^ 0xff", pos, c.file_size);
		}
	run_cases(&cs);
	for (size_t i = 0; i < cs.n; i++) {
		const dcase *d = &cs.v[i];
		if (!d->ran)
			continue;
		const drain_result *res = &d->res;
		CU_ASSERT_EQUAL(res->open_rc, 0);
		CU_ASSERT_EQUAL(res->wrong, 0);
		int ok;
		if (i < ncuts) {
			ok = res->rc == 0 && res->skipped == 1 && res->n < c.n;
		} else {
			/* the codec's error, or (first) a frame's CRC or length;
			 * either way the reader stops and skips nothing */
			ok = res->skipped == 0 &&
			     (res->rc == RIO_ECOMPRESSED || res->rc == RIO_ECORRUPT_DATA ||
			      res->rc == RIO_ECORRUPT_LENGTH || res->rc == RIO_ETOOLARGE);
		}
		CU_ASSERT(ok);
		if (!ok || res->wrong)
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): rc %d, %llu records (%llu wrong), "
			        "%llu skipped: %s\n", d->what, d->inflate ? d->inflate : "", res->rc,
			        (unsigned long long)res->n, (unsigned long long)res->wrong,
			        (unsigned long long)res->skipped, res->message);
	}
	dcases_free(&cs);
	tu_shard_free(&c);
}

static void test_gzip_skip(void)
{
	compressed_skip(RIO_COMPRESSION_GZIP, "skip.tfrecord.gz", 2, 10, 8);
}

static void test_zlib_skip(void)
{
	compressed_skip(RIO_COMPRESSION_ZLIB, "skip.tfrecord.zz", 2, 2, 4);
}

static void test_lz4_skip(void)
{
	compressed_skip(RIO_COMPRESSION_LZ4, "skip.tfrecord.lz4", 1, 7, 4);
}

/* A zlib stream that asks for a preset dictionary (TensorFlow never writes
 * one; zlib's inflate refuses it): an error with both inflaters. */
static void test_zlib_preset_dictionary(void)
{
	tu_shard c;
	compressed_corpus(&c, RIO_COMPRESSION_ZLIB, "dict.tfrecord.zz");
	/* 78 20 = deflate, 32K window, FDICT, check bits valid; then a DICTID,
	 * then the shard's deflate data and Adler-32 */
	size_t n = c.file_size + 4;
	uint8_t *buf = malloc(n);
	buf[0] = 0x78;
	buf[1] = 0x20;
	memcpy(buf + 2, "\x01\x02\x03\x04", 4);
	memcpy(buf + 6, c.file + 2, c.file_size - 2);
	dcases cs = {0};
	for (int m = 0; m < 2; m++) {
		dcase *d = dcase_add(&cs, buf, n, NULL, inflaters[m], &c);
		d->expect = RIO_ECOMPRESSED;
		snprintf(d->what, sizeof d->what, "zlib stream with FDICT");
	}
	run_cases(&cs);
	const int codes[] = {RIO_ECOMPRESSED};
	check_damaged(&cs, codes, 1);
	for (size_t i = 0; i < cs.n; i++)
		if (cs.v[i].ran)
			CU_ASSERT_EQUAL(cs.v[i].res.n, 0);
	free(buf);
	dcases_free(&cs);
	tu_shard_free(&c);
}

/* ---- garbage ------------------------------------------------------------------ */

/* Adds a garbage file, read with each inflater and both policies. */
static void add_garbage(dcases *cs, const uint8_t *bytes, size_t size, const char *what)
{
	for (int policy = 0; policy < 2; policy++)
		for (int m = 0; m < 2; m++) {
			rio_reader_opts o;
			rio_reader_opts_init(&o);
			o.on_damage = policy ? RIO_DAMAGE_SKIP : RIO_DAMAGE_FAIL;
			dcase *d = dcase_add(cs, bytes, size, &o, inflaters[m], NULL);
			snprintf(d->what, sizeof d->what, "%s, %s", what, policy ? "skip" : "fail");
		}
}

/* Garbage gives an error, or (only when skipping) a clean end; never a
 * record, a crash or a hang. */
static void check_garbage(const dcases *cs)
{
	static const int codes[] = {RIO_ECORRUPT_LENGTH, RIO_ECORRUPT_DATA, RIO_ETRUNCATED,
	                            RIO_ETOOLARGE, RIO_ECOMPRESSED};
	for (size_t i = 0; i < cs->n; i++) {
		const dcase *d = &cs->v[i];
		if (!d->ran)
			continue;
		const drain_result *res = &d->res;
		int skip = d->opts.on_damage == RIO_DAMAGE_SKIP;
		int ok = res->open_rc == 0 && res->n == 0 &&
		         (is_code(res->rc, codes, 5) || (skip && res->rc == 0));
		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "\n  %s (RIO_INFLATE=%s): open %d, rc %d, %llu records: %s\n",
			        d->what, d->inflate ? d->inflate : "", res->open_rc, res->rc,
			        (unsigned long long)res->n, res->message);
		if (res->rc == 0 && skip)
			CU_ASSERT(res->skipped > 0);
	}
}

static void test_random_garbage(void)
{
	const size_t sizes[] = {1, 7, 11, 12, 13, 16, 100, 4095, 65536, 300000};
	enum { NSIZES = sizeof sizes / sizeof sizes[0], NSEEDS = 4 };
	uint8_t *bufs[NSEEDS * NSIZES];
	dcases cs = {0};
	for (size_t seed = 0; seed < NSEEDS; seed++)
		for (size_t j = 0; j < NSIZES; j++) {
			uint8_t *buf = bufs[seed * NSIZES + j] = malloc(sizes[j]);
			tu_fill_random(buf, sizes[j], seed * 7919 + j + 1);
			char what[64];
			snprintf(what, sizeof what, "seed %zu, %zu random bytes", seed, sizes[j]);
			add_garbage(&cs, buf, sizes[j], what);
		}
	run_cases(&cs);
	check_garbage(&cs);
	CU_ASSERT_EQUAL(cs.n, NSEEDS * NSIZES * 4);
	for (size_t i = 0; i < NSEEDS * NSIZES; i++)
		free(bufs[i]);
	dcases_free(&cs);
}

/* Garbage behind each codec's magic, so that the decoders see it. */
static void test_garbage_after_magic(void)
{
	static const struct {
		const char *name;
		uint8_t magic[12];
		size_t len;
	} magics[] = {
		{"gzip", {0x1f, 0x8b}, 2},
		{"gzip+deflate", {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03}, 10},
		{"zlib", {0x78, 0x9c}, 2},
		{"zlib+dict", {0x78, 0x20, 0x12, 0x34, 0x56, 0x78}, 6}, /* FDICT set */
		{"lz4", {0x04, 0x22, 0x4d, 0x18}, 4},
		{"lz4+header", {0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73}, 7},
	};
	const size_t sizes[] = {0, 1, 8, 100, 5000};
	enum { NMAGICS = sizeof magics / sizeof magics[0], NSIZES = sizeof sizes / sizeof sizes[0] };
	uint8_t *bufs[NMAGICS * NSIZES];
	dcases cs = {0};
	for (size_t i = 0; i < NMAGICS; i++)
		for (size_t j = 0; j < NSIZES; j++) {
			size_t n = magics[i].len + sizes[j];
			uint8_t *buf = bufs[i * NSIZES + j] = malloc(n);
			memcpy(buf, magics[i].magic, magics[i].len);
			tu_fill_random(buf + magics[i].len, sizes[j], 31 * i + j + 1);
			char what[64];
			snprintf(what, sizeof what, "%s + %zu random bytes", magics[i].name, sizes[j]);
			add_garbage(&cs, buf, n, what);
		}
	run_cases(&cs);
	check_garbage(&cs);
	for (size_t i = 0; i < NMAGICS * NSIZES; i++)
		free(bufs[i]);
	dcases_free(&cs);
}

static const tu_test frame_tests[] = {
	{"length byte flipped", test_length_flip},
	{"length CRC byte flipped", test_length_crc_flip},
	{"data byte flipped", test_data_flip},
	{"data CRC byte flipped", test_data_crc_flip},
	{"huge length with a valid CRC", test_huge_length},
	{"max_record_size", test_max_record_size},
	{"length past the end of the file", test_length_past_end},
	{"wrong length with a valid length CRC", test_wrong_length_valid_crc},
	{"huge length with no limit", test_unlimited_huge_length},
	{"truncated at every byte", test_truncate_everywhere},
	{"truncated at every byte, 4 KiB buffer", test_truncate_everywhere_small_buffer},
	{"open errors", test_open_errors},
	{"empty file", test_empty_file},
	{NULL, NULL},
};

static const tu_test skip_tests[] = {
	{"report policy: every damage with its place", test_report_each_damage},
	{"report policy: a cut compressed stream, then the end", test_report_compressed},
	{"data CRC damage skips one record", test_skip_data_crc},
	{"length damage resyncs", test_skip_length},
	{"truncated tail ends the file", test_skip_truncated_tail},
	{"two damaged records", test_skip_two_damaged},
	{"verify_crc=0", test_no_verify},
	{NULL, NULL},
};

static const tu_test compressed_tests[] = {
	{"gzip undamaged, every buffer size", test_gzip_clean},
	{"zlib undamaged, every buffer size", test_zlib_clean},
	{"lz4 undamaged, every buffer size", test_lz4_clean},
	{"gzip truncated", test_gzip_truncated},
	{"zlib truncated", test_zlib_truncated},
	{"lz4 truncated", test_lz4_truncated},
	{"gzip byte flipped", test_gzip_flipped},
	{"zlib byte flipped", test_zlib_flipped},
	{"lz4 byte flipped", test_lz4_flipped},
	{"gzip trailer damaged", test_gzip_trailer},
	{"zlib trailer damaged", test_zlib_trailer},
	{"lz4 end mark damaged", test_lz4_end_mark},
	{"zlib preset dictionary", test_zlib_preset_dictionary},
	{"gzip under SKIP", test_gzip_skip},
	{"zlib under SKIP", test_zlib_skip},
	{"lz4 under SKIP", test_lz4_skip},
	{NULL, NULL},
};

static const tu_test garbage_tests[] = {
	{"random garbage", test_random_garbage},
	{"garbage after a codec magic", test_garbage_after_magic},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"frame damage", frame_tests},
	{"skip policy", skip_tests},
	{"compressed damage", compressed_tests},
	{"garbage", garbage_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

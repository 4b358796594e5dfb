/*
 * test_compression.c — gzip, zlib and LZ4 shards.
 *
 * Each codec round-trips through rio_writer/rio_reader; each compressed file
 * is also decoded with the codec library directly (zlib, liblz4) and must
 * equal the uncompressed shard byte for byte: that is what makes our .gz
 * read in TensorFlow and our .lz4 read with `lz4 -d`. Detection must come
 * from the bytes, not the file name, also where nothing can seek back: a
 * pipe and a FIFO fed in odd-sized writes. The gzip/zlib cases run with
 * both inflaters (ISA-L and zlib, chosen by RIO_INFLATE).
 */
#include "recordio.h"
#include "testutil.h"

#include <lz4frame.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define NREC 3000

static size_t rec_size(size_t i)
{
	return i == 7 ? (5u << 20) : (i * 131) % 5000; /* one 5 MiB record */
}

/* Record i's contents: compressible, a repeated pattern, its first byte
 * the record's number. Returns its size. */
static size_t rec_fill(uint8_t *buf, size_t i)
{
	size_t n = rec_size(i);
	for (size_t k = 0; k < n; k++)
		buf[k] = (uint8_t)((k % 17) * (i % 5));
	if (n)
		buf[0] = (uint8_t)i;
	return n;
}

static void write_codec_level(const char *path, rio_compression c, int level)
{
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.compression = c;
	o.level = level;
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
	uint8_t *buf = malloc(5u << 20);
	uint64_t want_off = 0;
	for (size_t i = 0; i < NREC; i++) {
		size_t n = rec_fill(buf, i);
		uint64_t off = UINT64_MAX;
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, buf, n, &off), 0);
		CU_ASSERT_EQUAL_FATAL(off, want_off); /* in the uncompressed stream */
		want_off += n + 16;
	}
	CU_ASSERT_EQUAL(rio_writer_records(w), NREC);
	CU_ASSERT_EQUAL(rio_writer_bytes(w), want_off);
	free(buf);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
}

static void write_codec(const char *path, rio_compression c)
{
	write_codec_level(path, c, 0);
}

/* Reads every record of `r` (closing it) and checks each byte. */
static void check_reader(rio_reader *r, rio_compression expect)
{
	rio_record rec;
	CU_ASSERT_EQUAL(rio_reader_compression(r), expect);
	uint64_t offset = 0;
	size_t i;
	uint8_t *want = malloc(5u << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	for (i = 0; i < NREC; i++) {
		int rc = rio_reader_next(r, &rec);
		CU_ASSERT_EQUAL_FATAL(rc, 1);
		size_t n = rec_fill(want, i);
		CU_ASSERT_EQUAL_FATAL(rec.size, n);
		CU_ASSERT_EQUAL_FATAL(rec.offset, offset);
		CU_ASSERT_EQUAL_FATAL(rec.index, i);
		CU_ASSERT_EQUAL_FATAL(memcmp(rec.data, want, n), 0); /* every byte */
		offset += n + 16;
	}
	free(want);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0); /* EOF stays EOF */
	CU_ASSERT_EQUAL(rio_reader_error(r)->code, 0);
	CU_ASSERT_EQUAL(rio_reader_bytes(r), offset);
	rio_reader_close(r);
}

static void check_records(const char *path, rio_compression expect)
{
	rio_reader *r;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	check_reader(r, expect);
}

/* Decodes a whole gzip or zlib file with zlib itself. */
static uint8_t *zlib_decode(const uint8_t *in, size_t n, int window_bits, size_t *out_n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	CU_ASSERT_EQUAL_FATAL(inflateInit2(&z, window_bits), Z_OK);
	size_t cap = 64u << 20;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int zr = inflate(&z, Z_FINISH);
	CU_ASSERT_EQUAL(zr, Z_STREAM_END);
	CU_ASSERT_EQUAL(z.avail_in, 0); /* exactly one stream, nothing after it */
	*out_n = cap - z.avail_out;
	inflateEnd(&z);
	return out;
}

static uint8_t *lz4_decode(const uint8_t *in, size_t n, size_t *out_n)
{
	LZ4F_dctx *d;
	CU_ASSERT_FALSE_FATAL(LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)));
	size_t cap = 64u << 20, got = 0, used = 0;
	uint8_t *out = malloc(cap);
	size_t hint = 1;
	while (used < n && hint) {
		size_t dst = cap - got, src = n - used;
		hint = LZ4F_decompress(d, out + got, &dst, in + used, &src, NULL);
		CU_ASSERT_FALSE_FATAL(LZ4F_isError(hint));
		got += dst;
		used += src;
	}
	CU_ASSERT_EQUAL(hint, 0); /* the frame ended */
	CU_ASSERT_EQUAL(used, n);
	LZ4F_freeDecompressionContext(d);
	*out_n = got;
	return out;
}

static uint8_t *plain_shard(size_t *n)
{
	const char *path = tu_path("plain.tfrecord");
	if (!tu_file_exists(path))
		write_codec(path, RIO_COMPRESSION_NONE);
	return tu_read_file(path, n);
}

/* Writes with the default deflater (ISA-L when built with it) or, with
 * `level`, zlib's deflate at that level; reads back with both inflaters and
 * decodes with the codec library itself. */
static void round_trip_level(rio_compression c, const char *name, int level)
{
	const char *path = tu_path(name);
	write_codec_level(path, c, level);
	check_records(path, c);
	setenv("RIO_INFLATE", "zlib", 1);
	check_records(path, c);
	unsetenv("RIO_INFLATE");

	size_t plain_n, comp_n, dec_n = 0;
	uint8_t *plain = plain_shard(&plain_n);
	uint8_t *comp = tu_read_file(path, &comp_n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(comp);
	CU_ASSERT_TRUE(comp_n < plain_n / 4); /* it really is compressed */
	uint8_t *dec = c == RIO_COMPRESSION_LZ4
	                   ? lz4_decode(comp, comp_n, &dec_n)
	                   : zlib_decode(comp, comp_n, c == RIO_COMPRESSION_GZIP ? 16 + MAX_WBITS
	                                                                        : MAX_WBITS,
	                                 &dec_n);
	CU_ASSERT_EQUAL(dec_n, plain_n);
	CU_ASSERT_TRUE(dec_n == plain_n && memcmp(dec, plain, plain_n) == 0);
	if (c == RIO_COMPRESSION_GZIP)
		CU_ASSERT_TRUE(comp[0] == 0x1f && comp[1] == 0x8b);
	if (c == RIO_COMPRESSION_ZLIB)
		CU_ASSERT_TRUE(comp[0] == 0x78);
	if (c == RIO_COMPRESSION_LZ4)
		CU_ASSERT_TRUE(comp[0] == 0x04 && comp[1] == 0x22 && comp[2] == 0x4d && comp[3] == 0x18);
	free(plain);
	free(comp);
	free(dec);
}

static void round_trip(rio_compression c, const char *name)
{
	round_trip_level(c, name, 0);
}

static void test_none(void)
{
	write_codec(tu_path("plain.tfrecord"), RIO_COMPRESSION_NONE);
	check_records(tu_path("plain.tfrecord"), RIO_COMPRESSION_NONE);
}

static void test_gzip(void)
{
	round_trip(RIO_COMPRESSION_GZIP, "x.tfrecord.gz");
}

static void test_zlib(void)
{
	round_trip(RIO_COMPRESSION_ZLIB, "x.tfrecord.zz");
}

/* zlib's deflate: an explicit level, and RIO_DEFLATE=zlib for the default */
static void test_zlib_deflate_levels(void)
{
	round_trip_level(RIO_COMPRESSION_GZIP, "l1.tfrecord.gz", 1);
	round_trip_level(RIO_COMPRESSION_GZIP, "l9.tfrecord.gz", 9);
	round_trip_level(RIO_COMPRESSION_ZLIB, "l6.tfrecord.zz", 6);
	setenv("RIO_DEFLATE", "zlib", 1);
	round_trip(RIO_COMPRESSION_GZIP, "zdefault.tfrecord.gz");
	unsetenv("RIO_DEFLATE");
	size_t n1, n9;
	free(tu_read_file(tu_path("l1.tfrecord.gz"), &n1));
	free(tu_read_file(tu_path("l9.tfrecord.gz"), &n9));
	CU_ASSERT_TRUE(n9 < n1); /* the level reached zlib */
}

static void test_lz4(void)
{
	round_trip(RIO_COMPRESSION_LZ4, "x.tfrecord.lz4");
}

/* The edge sizes through every codec: empty and 1-byte records, and a
 * 16 MiB record of random (incompressible) bytes, one more than 16 MiB,
 * each read back whole with both inflaters. */
static void test_edge_sizes_every_codec(void)
{
	static const size_t sizes[] = {0, 1, 16u << 20, 0, 1, (16u << 20) + 1, 1, 0};
	enum { N = sizeof sizes / sizeof sizes[0] };
	static const rio_compression codecs[] = {RIO_COMPRESSION_NONE, RIO_COMPRESSION_GZIP,
	                                         RIO_COMPRESSION_ZLIB, RIO_COMPRESSION_LZ4};
	uint8_t *want = malloc((16u << 20) + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	for (size_t c = 0; c < 4; c++) {
		char name[64];
		snprintf(name, sizeof name, "edges%s", rio_compression_suffix(codecs[c]));
		const char *path = tu_path(name);
		rio_writer_opts o;
		rio_writer_opts_init(&o);
		o.compression = codecs[c];
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &o), 0);
		for (size_t i = 0; i < N; i++) {
			tu_fill_random(want, sizes[i], 40 + i);
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, want, sizes[i], NULL), 0);
		}
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		for (int inflater = 0; inflater < 2; inflater++) {
			if (inflater)
				setenv("RIO_INFLATE", "zlib", 1);
			rio_reader *r;
			rio_record rec;
			CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
			CU_ASSERT_EQUAL(rio_reader_compression(r), codecs[c]);
			uint64_t off = 0;
			for (size_t i = 0; i < N; i++) {
				int rc = rio_reader_next(r, &rec);
				CU_ASSERT_EQUAL(rc, 1);
				if (rc != 1) {
					fprintf(stderr, "\n  %s record %zu: %d %s\n", name, i, rc,
					        rio_reader_error(r)->message);
					break;
				}
				tu_fill_random(want, sizes[i], 40 + i);
				CU_ASSERT_EQUAL(rec.size, sizes[i]);
				CU_ASSERT_EQUAL(rec.offset, off);
				CU_ASSERT(rec.size == sizes[i] && memcmp(rec.data, want, sizes[i]) == 0);
				off += sizes[i] + 16;
			}
			CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
			CU_ASSERT_EQUAL(rio_reader_bytes(r), off);
			rio_reader_close(r);
			unsetenv("RIO_INFLATE");
		}
	}
	free(want);
}

/* Detection reads bytes: a gzip shard named .tfrecord, an lz4 one named .gz. */
static void test_detection_ignores_names(void)
{
	size_t n;
	uint8_t *gz = tu_read_file(tu_path("x.tfrecord.gz"), &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
	tu_write_file(tu_path("gzip-named-plain.tfrecord"), gz, n);
	free(gz);
	check_records(tu_path("gzip-named-plain.tfrecord"), RIO_COMPRESSION_GZIP);
	uint8_t *lz = tu_read_file(tu_path("x.tfrecord.lz4"), &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lz);
	tu_write_file(tu_path("lz4-named.gz"), lz, n);
	free(lz);
	check_records(tu_path("lz4-named.gz"), RIO_COMPRESSION_LZ4);
	uint8_t *zz = tu_read_file(tu_path("x.tfrecord.zz"), &n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(zz);
	tu_write_file(tu_path("zlib-named.lz4"), zz, n);
	free(zz);
	check_records(tu_path("zlib-named.lz4"), RIO_COMPRESSION_ZLIB);
}

static void test_detect_function(void)
{
	uint8_t h[12];
	rio_frame_header(h, 0x1f8b); /* a plain header whose length starts 8b 1f */
	CU_ASSERT_EQUAL(rio_compression_detect(h, 12), RIO_COMPRESSION_NONE);
	CU_ASSERT_EQUAL(rio_compression_detect("\x1f\x8b\x08\x00", 4), RIO_COMPRESSION_GZIP);
	CU_ASSERT_EQUAL(rio_compression_detect("\x78\x9c", 2), RIO_COMPRESSION_ZLIB);
	CU_ASSERT_EQUAL(rio_compression_detect("\x78\x01", 2), RIO_COMPRESSION_ZLIB);
	CU_ASSERT_EQUAL(rio_compression_detect("\x04\x22\x4d\x18", 4), RIO_COMPRESSION_LZ4);
	CU_ASSERT_EQUAL(rio_compression_detect("", 0), RIO_COMPRESSION_NONE);
	CU_ASSERT_EQUAL(rio_compression_detect("\x78\x9d", 2), RIO_COMPRESSION_NONE);
	/* plain headers whose first bytes are each codec's magic: the lengths
	 * 0x8b1f (1f 8b ..), 0x9c78 (78 9c ..), 0x0178 (78 01 ..) and
	 * 0x184d2204 (04 22 4d 18 ..) with their valid length CRCs are
	 * records, not streams */
	const uint64_t lookalikes[] = {0x8b1f, 0x9c78, 0x0178, 0x184d2204};
	for (size_t i = 0; i < 4; i++) {
		rio_frame_header(h, lookalikes[i]);
		CU_ASSERT_EQUAL(rio_compression_detect(h, 12), RIO_COMPRESSION_NONE);
	}
}

/* A plain shard whose first record is 0x8b1f bytes long starts with the gzip
 * magic 1f 8b; one of 0x9c78 bytes with zlib's 78 9c: both read as plain. */
static void test_plain_shard_starting_with_magic(void)
{
	const size_t lens[] = {0x8b1f, 0x9c78};
	for (size_t j = 0; j < 2; j++) {
		char name[64];
		snprintf(name, sizeof name, "lookalike-%zu.tfrecord", j);
		const char *path = tu_path(name);
		uint8_t *buf = malloc(lens[j]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
		tu_fill_random(buf, lens[j], 60 + j);
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, buf, lens[j], NULL), 0);
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, "x", 1, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		size_t n;
		uint8_t *file = tu_read_file(path, &n);
		CU_ASSERT_FATAL(file != NULL && n >= 2);
		CU_ASSERT(j ? file[0] == 0x78 && file[1] == 0x9c : file[0] == 0x1f && file[1] == 0x8b);
		free(file);
		rio_reader *r;
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
		CU_ASSERT_EQUAL(rio_reader_compression(r), RIO_COMPRESSION_NONE);
		CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 1);
		CU_ASSERT(rec.size == lens[j] && memcmp(rec.data, buf, lens[j]) == 0);
		CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 1);
		CU_ASSERT(rec.size == 1 && rec.data[0] == 'x');
		CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
		rio_reader_close(r);
		free(buf);
	}
}

/* Two gzip members one after the other read as one stream (as zcat does). */
static void test_concatenated_gzip_members(void)
{
	const char *a = tu_path("a.tfrecord.gz");
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.compression = RIO_COMPRESSION_GZIP;
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, a, &o), 0);
	CU_ASSERT_EQUAL(rio_writer_write(w, "first", 5, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
	size_t n;
	uint8_t *one = tu_read_file(a, &n);
	uint8_t *two = malloc(2 * n);
	memcpy(two, one, n);
	memcpy(two + n, one, n);
	tu_write_file(tu_path("ab.tfrecord.gz"), two, 2 * n);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			setenv("RIO_INFLATE", "zlib", 1);
		rio_reader *r;
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, tu_path("ab.tfrecord.gz"), NULL), 0);
		for (int i = 0; i < 2; i++) {
			CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
			CU_ASSERT_EQUAL(rec.size, 5);
			CU_ASSERT_EQUAL(memcmp(rec.data, "first", 5), 0);
			CU_ASSERT_EQUAL(rec.offset, (uint64_t)i * 21);
		}
		CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
		CU_ASSERT_EQUAL(rio_reader_file_bytes(r), 2 * n);
		rio_reader_close(r);
	}
	unsetenv("RIO_INFLATE");
	free(one);
	free(two);
}

/* A gzip member of one record of `len` pseudo-random bytes; *n its size. */
static uint8_t *gzip_member(size_t len, uint64_t seed, size_t *n)
{
	const char *path = tu_path("member.tfrecord.gz");
	uint8_t *buf = malloc(len ? len : 1);
	tu_fill_random(buf, len, seed);
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.compression = RIO_COMPRESSION_GZIP;
	rio_writer *w;
	uint8_t *file = NULL;
	*n = 0;
	if (rio_writer_open(&w, path, &o) == 0) {
		rio_writer_write(w, buf, len, NULL);
		if (rio_writer_close(w) == 0)
			file = tu_read_file(path, n);
	}
	free(buf);
	return file;
}

/* Member boundaries at every byte position around the reader's input
 * buffer boundary: the inflater's read-ahead past a member's end may hold
 * bytes of an earlier buffer, and they must still reach the next member.
 * Both inflaters, several hundred KiB of small members after a first one of
 * every length in a range wider than a small member. */
static void test_gzip_members_across_buffers(void)
{
	size_t small_n;
	uint8_t *small = gzip_member(3, 7, &small_n);
	CU_ASSERT_FATAL(small != NULL && small_n > 0);
	const size_t total = 600 * 1024;
	uint8_t *file = malloc(total + 4096);
	const char *path = tu_path("members.tfrecord.gz");
	for (size_t first_len = 100; first_len < 100 + small_n + 16; first_len++) {
		size_t first_n;
		uint8_t *first = gzip_member(first_len, first_len, &first_n);
		CU_ASSERT_FATAL(first != NULL);
		memcpy(file, first, first_n);
		size_t n = first_n, members = 1;
		while (n + small_n <= total) {
			memcpy(file + n, small, small_n);
			n += small_n;
			members++;
		}
		free(first);
		tu_write_file(path, file, n);
		for (int pass = 0; pass < 2; pass++) {
			if (pass)
				setenv("RIO_INFLATE", "zlib", 1);
			rio_reader *r;
			rio_record rec;
			CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
			size_t got = 0, wrong = 0;
			int rc;
			while ((rc = rio_reader_next(r, &rec)) == 1)
				wrong += got++ == 0 ? rec.size != first_len : rec.size != 3;
			CU_ASSERT_EQUAL(rc, 0);
			if (rc != 0)
				fprintf(stderr, "first member %zu bytes, pass %d: %s\n", first_len,
				        pass, rio_reader_error(r)->message);
			CU_ASSERT_EQUAL(got, members);
			CU_ASSERT_EQUAL(wrong, 0);
			CU_ASSERT_EQUAL(rio_reader_file_bytes(r), n);
			rio_reader_close(r);
		}
		unsetenv("RIO_INFLATE");
	}
	free(file);
	free(small);
}

static void test_names(void)
{
	rio_compression c;
	CU_ASSERT_EQUAL(rio_compression_parse("gzip", &c), 0);
	CU_ASSERT_EQUAL(c, RIO_COMPRESSION_GZIP);
	CU_ASSERT_EQUAL(rio_compression_parse("GZIP", &c), 0);
	CU_ASSERT_EQUAL(c, RIO_COMPRESSION_GZIP);
	CU_ASSERT_EQUAL(rio_compression_parse("ZLIB", &c), 0);
	CU_ASSERT_EQUAL(c, RIO_COMPRESSION_ZLIB);
	CU_ASSERT_EQUAL(rio_compression_parse("", &c), 0);
	CU_ASSERT_EQUAL(c, RIO_COMPRESSION_NONE);
	CU_ASSERT_EQUAL(rio_compression_parse("lz4", &c), 0);
	CU_ASSERT_EQUAL(c, RIO_COMPRESSION_LZ4);
	CU_ASSERT_EQUAL(rio_compression_parse("zstd", &c), -EINVAL);
	CU_ASSERT_STRING_EQUAL(rio_compression_name(RIO_COMPRESSION_ZLIB), "zlib");
	CU_ASSERT_STRING_EQUAL(rio_compression_suffix(RIO_COMPRESSION_NONE), ".tfrecord");
	CU_ASSERT_STRING_EQUAL(rio_compression_suffix(RIO_COMPRESSION_GZIP), ".tfrecord.gz");
	CU_ASSERT_STRING_EQUAL(rio_compression_suffix(RIO_COMPRESSION_ZLIB), ".tfrecord.zz");
	CU_ASSERT_STRING_EQUAL(rio_compression_suffix(RIO_COMPRESSION_LZ4), ".tfrecord.lz4");
}

/* Forcing a codec on a plain file is reported, not misread. */
static void test_forced_codec_on_plain_file(void)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.compression = RIO_COMPRESSION_GZIP;
	rio_reader *r;
	rio_record rec;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, tu_path("plain.tfrecord"), &o), 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ECOMPRESSED);
	CU_ASSERT_PTR_NOT_NULL(strstr(rio_reader_error(r)->message, "plain.tfrecord"));
	rio_reader_close(r);
}

/* ---- through a pipe and a FIFO: no seeking back to detect ---------------- */

typedef struct feeder {
	const char *fifo; /* open this for writing, or write to fd */
	int fd;
	uint8_t *data;
	size_t size;
	int ok;
} feeder;

/* Writes the bytes in odd sizes (1, then 3, then growing), so that the
 * first bytes detection needs arrive in several reads; closes the fd. */
static void *feed(void *arg)
{
	feeder *f = arg;
	if (f->fifo && (f->fd = open(f->fifo, O_WRONLY | O_CLOEXEC)) < 0)
		return NULL;
	size_t off = 0, chunk = 1;
	int ok = 1;
	while (off < f->size && ok) {
		size_t n = f->size - off < chunk ? f->size - off : chunk;
		ssize_t w = write(f->fd, f->data + off, n);
		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		off += ok ? (size_t)w : 0;
		chunk = chunk < 3 ? 3 : chunk * 3 + 1;
	}
	close(f->fd);
	f->ok = ok;
	return NULL;
}

static void stream_codec(rio_compression c, const char *name, int through_fifo)
{
	char file[64];
	snprintf(file, sizeof file, "stream-%s.tfrecord", name);
	write_codec(tu_path(file), c);
	feeder f;
	memset(&f, 0, sizeof f);
	f.data = tu_read_file(tu_path(file), &f.size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.data);
	rio_reader *r = NULL;
	int rfd = -1;
	pthread_t t;
	if (through_fifo) {
		char fifo[64];
		snprintf(fifo, sizeof fifo, "stream-%s.fifo", name);
		f.fifo = tu_path(fifo);
		unlink(f.fifo);
		CU_ASSERT_EQUAL_FATAL(mkfifo(f.fifo, 0600), 0);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, feed, &f), 0);
		/* by its path, as the tools open a FIFO or /dev/stdin */
		CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, f.fifo, NULL), 0);
	} else {
		int p[2];
		CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
		f.fd = p[1];
		rfd = p[0];
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, feed, &f), 0);
		CU_ASSERT_EQUAL_FATAL(rio_reader_open_fd(&r, rfd, "the pipe", NULL), 0);
		CU_ASSERT_STRING_EQUAL(rio_reader_path(r), "the pipe");
	}
	check_reader(r, c);
	pthread_join(t, NULL);
	CU_ASSERT(f.ok);
	if (rfd >= 0)
		close(rfd); /* rio_reader_open_fd leaves it open */
	if (f.fifo)
		unlink(f.fifo);
	free(f.data);
}

static void test_pipe_every_codec(void)
{
	stream_codec(RIO_COMPRESSION_NONE, "none", 0);
	stream_codec(RIO_COMPRESSION_GZIP, "gzip", 0);
	stream_codec(RIO_COMPRESSION_ZLIB, "zlib", 0);
	stream_codec(RIO_COMPRESSION_LZ4, "lz4", 0);
}

static void test_fifo_every_codec(void)
{
	stream_codec(RIO_COMPRESSION_NONE, "none", 1);
	stream_codec(RIO_COMPRESSION_GZIP, "gzip", 1);
	stream_codec(RIO_COMPRESSION_ZLIB, "zlib", 1);
	stream_codec(RIO_COMPRESSION_LZ4, "lz4", 1);
}

/* A stream shorter than a frame header, and an empty one, through a pipe:
 * detection takes what there is. */
static void test_short_pipes(void)
{
	static const uint8_t gz_head[] = {0x1f, 0x8b, 0x08};
	for (int k = 0; k < 2; k++) {
		int p[2];
		CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
		if (k == 1)
			CU_ASSERT_EQUAL(write(p[1], gz_head, sizeof gz_head), (ssize_t)sizeof gz_head);
		close(p[1]);
		rio_reader *r;
		rio_record rec;
		CU_ASSERT_EQUAL_FATAL(rio_reader_open_fd(&r, p[0], "short", NULL), 0);
		if (k == 0) {
			CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0); /* empty: no records */
		} else {
			CU_ASSERT_EQUAL(rio_reader_compression(r), RIO_COMPRESSION_GZIP);
			CU_ASSERT_EQUAL(rio_reader_next(r, &rec), RIO_ETRUNCATED);
			CU_ASSERT_PTR_NOT_NULL(strstr(rio_reader_error(r)->message, "short"));
		}
		rio_reader_close(r);
		close(p[0]);
	}
}

static const tu_test tests[] = {
	{"none", test_none},
	{"gzip (TensorFlow GZIP layout)", test_gzip},
	{"zlib (TensorFlow ZLIB layout)", test_zlib},
	{"gzip/zlib with zlib's deflate levels", test_zlib_deflate_levels},
	{"lz4 frame", test_lz4},
	{"empty, 1-byte and 16 MiB records, every codec", test_edge_sizes_every_codec},
	{"detection ignores file names", test_detection_ignores_names},
	{"rio_compression_detect", test_detect_function},
	{"plain shards that start with a codec's magic", test_plain_shard_starting_with_magic},
	{"concatenated gzip members", test_concatenated_gzip_members},
	{"gzip members across input buffers", test_gzip_members_across_buffers},
	{"names and suffixes", test_names},
	{"forced codec on a plain file", test_forced_codec_on_plain_file},
	{"every codec through a pipe (rio_reader_open_fd)", test_pipe_every_codec},
	{"every codec through a FIFO (rio_reader_open)", test_fifo_every_codec},
	{"empty and cut streams through a pipe", test_short_pipes},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"compression", tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

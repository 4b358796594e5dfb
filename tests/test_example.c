/*
 * test_example.c — the tf.train.Example codec: protobuf wire helpers,
 * byte-exact encoding against what TensorFlow writes, decode of every wire
 * form protobuf allows (packed and unpacked lists, unknown fields, repeated
 * and duplicate fields, Features with no kind), malformed input (truncation
 * at every length, random damage), and every record of the TensorFlow-written
 * golden files decoded, validated and re-encoded byte for byte; then
 * tf.train.SequenceExample feature lists, the payload inspection, and the
 * Events of TensorBoard files, hand-built and as TensorFlow wrote them.
 *
 * The known-answer byte vectors were produced by TensorFlow 2's
 * tf.train.Example.SerializeToString().
 */
#include "config.h"
#include "recordio.h"
#include "protobuf.h"
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- helpers ---------------------------------------------------------------- */

#define HEX_MAX 4096

/* Parses "0a 0c 0a ..." into bytes; returns the count. */
static size_t hex(const char *s, uint8_t *out)
{
	size_t n = 0;
	while (*s) {
		unsigned v;
		int used;
		if (*s == ' ') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x%n", &v, &used) != 1 || n >= HEX_MAX) {
			CU_FAIL_FATAL("bad hex in test vector");
		}
		out[n++] = (uint8_t)v;
		s += used;
	}
	return n;
}

/* A tiny protobuf writer for hand-made vectors: open/close nest
 * length-delimited fields, everything else is written as given. */
typedef struct wbuf {
	uint8_t b[1 << 16];
	size_t n;
	size_t open[16];
	int depth;
} wbuf;

static void w_byte(wbuf *w, uint8_t c)
{
	CU_ASSERT_FATAL(w->n < sizeof w->b);
	w->b[w->n++] = c;
}

static void w_varint(wbuf *w, uint64_t v)
{
	while (v >= 0x80) {
		w_byte(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	w_byte(w, (uint8_t)v);
}

static void w_tag(wbuf *w, uint32_t field, uint32_t wire)
{
	w_varint(w, ((uint64_t)field << 3) | wire);
}

static void w_raw(wbuf *w, const void *p, size_t n)
{
	CU_ASSERT_FATAL(n <= sizeof w->b - w->n);
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void w_f32(wbuf *w, float f)
{
	uint8_t b[4];
	memcpy(b, &f, 4); /* little-endian host */
	w_raw(w, b, 4);
}

/* field (wire type 2) with the given body */
static void w_lenfield(wbuf *w, uint32_t field, const void *p, size_t n)
{
	w_tag(w, field, 2);
	w_varint(w, n);
	w_raw(w, p, n);
}

static void w_open(wbuf *w, uint32_t field)
{
	w_tag(w, field, 2);
	CU_ASSERT_FATAL(w->depth < 16);
	w->open[w->depth++] = w->n;
}

static void w_close(wbuf *w)
{
	CU_ASSERT_FATAL(w->depth > 0);
	size_t start = w->open[--w->depth];
	size_t len = w->n - start;
	uint8_t v[10];
	size_t k = (size_t)(rio__pb_put_varint(v, len) - v);
	CU_ASSERT_FATAL(w->n + k <= sizeof w->b);
	memmove(w->b + start + k, w->b + start, len);
	memcpy(w->b + start, v, k);
	w->n += k;
}

/* One unknown field of each wire type, with field number `field`. */
static void w_unknowns(wbuf *w, uint32_t field)
{
	w_tag(w, field, 0);
	w_varint(w, 0xffffffffffull);
	w_tag(w, field + 1, 1);
	w_raw(w, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	w_tag(w, field + 2, 5);
	w_raw(w, "\x01\x02\x03\x04", 4);
	w_lenfield(w, field + 3, "junk", 4);
}

static int name_is(const rio_feature *f, const char *name)
{
	return f->name_len == strlen(name) && !memcmp(f->name, name, f->name_len);
}

static int same_bits(float a, float b)
{
	return !memcmp(&a, &b, sizeof a);
}

/* A golden file, gunzipped when it is gzip (zlib's gz* read plain files
 * through too). NULL (after a failed assertion) when it cannot be read. */
static uint8_t *load_golden(const char *name, size_t *size)
{
	const char *path = tu_testdata(name);
	if (!path) {
		CU_FAIL("RIO_TESTDATA is not set to the golden file directory");
		return NULL;
	}
	gzFile gz = gzopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL(gz);
	if (!gz)
		return NULL;
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
		int got = gzread(gz, buf + n, (unsigned)(cap - n));
		CU_ASSERT(got >= 0);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	gzclose(gz);
	*size = n;
	return buf;
}

/* ---- protobuf wire helpers -------------------------------------------------- */

static void test_pb_varint_size(void)
{
	uint64_t vals[200];
	size_t nv = 0;
	vals[nv++] = 0;
	vals[nv++] = UINT64_MAX;
	for (int k = 0; k < 64; k++) {
		vals[nv++] = (1ull << k);
		vals[nv++] = (1ull << k) - 1;
		vals[nv++] = (1ull << k) + 1;
	}
	for (size_t i = 0; i < nv; i++) {
		uint8_t b[16];
		size_t k = (size_t)(rio__pb_put_varint(b, vals[i]) - b);
		CU_ASSERT_EQUAL(rio__pb_varint_size(vals[i]), k);
		unsigned bits = 0;
		for (uint64_t v = vals[i]; v; v >>= 1)
			bits++;
		CU_ASSERT_EQUAL(k, bits <= 7 ? 1 : (bits + 6) / 7);
		const uint8_t *p = b;
		uint64_t got = 0;
		CU_ASSERT_EQUAL(rio__pb_varint(&p, b + k, &got), 0);
		CU_ASSERT_EQUAL(got, vals[i]);
		CU_ASSERT_PTR_EQUAL(p, b + k);
	}
	CU_ASSERT_EQUAL(rio__pb_varint_size(127), 1);
	CU_ASSERT_EQUAL(rio__pb_varint_size(128), 2);
	CU_ASSERT_EQUAL(rio__pb_varint_size((uint64_t)-1), 10);
}

static void test_pb_varint_limits(void)
{
	uint8_t b[16];
	const uint8_t *p;
	uint64_t v = 12345;

	/* 10 bytes: the longest there is */
	size_t n = hex("ff ff ff ff ff ff ff ff ff 01", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_varint(&p, b + n, &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
	/* 300 in a longer buffer: stops after 2 bytes */
	n = hex("ac 02 ff ff ff ff ff ff ff ff ff ff", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_varint(&p, b + n, &v), 0);
	CU_ASSERT_EQUAL(v, 300);
	CU_ASSERT_PTR_EQUAL(p, b + 2);
	/* 11 bytes: rejected, with and without room to spare */
	n = hex("80 80 80 80 80 80 80 80 80 80 01", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_varint(&p, b + n, &v), -1);
	CU_ASSERT_PTR_EQUAL(p, b);
	n = hex("80 80 80 80 80 80 80 80 80 80", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_varint(&p, b + n, &v), -1);
	/* cut off at every length */
	n = hex("ff ff ff ff ff ff ff ff ff 01", b);
	for (size_t k = 0; k < n; k++) {
		p = b;
		CU_ASSERT_EQUAL(rio__pb_varint(&p, b + k, &v), -1);
		CU_ASSERT_PTR_EQUAL(p, b);
	}
}

static void test_pb_tag(void)
{
	uint8_t b[16];
	const uint8_t *p;
	uint32_t tag = 0;
	size_t n;

	n = hex("0a", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_tag(&p, b + n, &tag), 0);
	CU_ASSERT_EQUAL(tag, RIO__PB_TAG(1, 2));
	/* field 2^29 - 1 with wire type 5 */
	n = hex("fd ff ff ff 0f", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_tag(&p, b + n, &tag), 0);
	CU_ASSERT_EQUAL(tag >> 3, (1u << 29) - 1);
	CU_ASSERT_EQUAL(tag & 7, 5);
	/* field 0, groups, wire types 6 and 7, tags beyond 32 bits */
	static const char *bad[] = {"00", "02", "05", "0b", "0c", "0e", "0f", "1b", "1c",
	                            "80 80 80 80 10", "ff ff ff ff ff 01", "", "8a"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		n = hex(bad[i], b);
		p = b;
		CU_ASSERT_EQUAL(rio__pb_tag(&p, b + n, &tag), -1);
		CU_ASSERT_PTR_EQUAL(p, b);
	}
}

static void test_pb_skip(void)
{
	uint8_t b[32];
	const uint8_t *p;
	size_t n = hex("96 01 00", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, 0), 0);
	CU_ASSERT_PTR_EQUAL(p, b + 2);
	n = hex("01 02 03 04 05 06 07 08 09", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, 1), 0);
	CU_ASSERT_PTR_EQUAL(p, b + 8);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + 7, 1), -1);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, 5), 0);
	CU_ASSERT_PTR_EQUAL(p, b + 4);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + 3, 5), -1);
	n = hex("03 61 62 63 64", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, 2), 0);
	CU_ASSERT_PTR_EQUAL(p, b + 4);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + 3, 2), -1);
	/* a length that would wrap the pointer */
	n = hex("ff ff ff ff ff ff ff ff ff 01 00", b);
	p = b;
	CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, 2), -1);
	for (uint32_t wire = 3; wire < 8; wire++) {
		if (wire == 5)
			continue;
		p = b;
		CU_ASSERT_EQUAL(rio__pb_skip(&p, b + n, wire), -1);
	}
}

/* ---- encoding: byte-exact against TensorFlow --------------------------------- */

static void expect_bytes(const uint8_t *got, size_t got_len, const char *want_hex)
{
	uint8_t want[HEX_MAX];
	size_t n = hex(want_hex, want);
	CU_ASSERT_EQUAL(got_len, n);
	if (got_len == n)
		CU_ASSERT(memcmp(got, want, n) == 0);
	CU_ASSERT_EQUAL(rio_example_validate(got, got_len), 0);
}

static void test_encode_known_int64(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	rio_example_builder_init(&b);
	int64_t one = 1;
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "a", &one, 1), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01");

	rio_feature f;
	int64_t v = 0;
	CU_ASSERT_EQUAL(rio_example_find(d, n, "a", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_INT64);
	CU_ASSERT_EQUAL(f.count, 1);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &v, 1), 1);
	CU_ASSERT_EQUAL(v, 1);

	/* -1, INT64_MIN, INT64_MAX, 300 */
	rio_example_builder_reset(&b);
	int64_t neg[] = {-1, INT64_MIN, INT64_MAX, 300};
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "n", neg, 4), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n,
	             "0a 2a 0a 28 0a 01 6e 12 23 1a 21 0a 1f ff ff ff ff ff ff ff ff ff 01 "
	             "80 80 80 80 80 80 80 80 80 01 ff ff ff ff ff ff ff ff 7f ac 02");
	int64_t got[4] = {0};
	CU_ASSERT_EQUAL(rio_example_find(d, n, "n", &f), 0);
	CU_ASSERT_EQUAL(f.count, 4);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, got, 4), 4);
	CU_ASSERT(got[0] == -1 && got[1] == INT64_MIN && got[2] == INT64_MAX && got[3] == 300);
	rio_example_builder_free(&b);
}

static void test_encode_known_floats_bytes(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	rio_example_builder_init(&b);
	float fv[] = {1.5f, -2.0f, INFINITY};
	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "x", fv, 3), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n,
	             "0a 17 0a 15 0a 01 78 12 10 12 0e 0a 0c 00 00 c0 3f 00 00 00 c0 00 00 80 7f");

	rio_example_builder_reset(&b);
	const void *vals[] = {"", "hi", "\xff\x00"};
	size_t lens[] = {0, 2, 2};
	CU_ASSERT_EQUAL(rio_example_add_bytes_list(&b, "s", vals, lens, 3), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 13 0a 11 0a 01 73 12 0c 0a 0a 0a 00 0a 02 68 69 0a 02 ff 00");

	/* an empty name, and a name of UTF-8 bytes above 127 ("é€") */
	rio_example_builder_reset(&b);
	int64_t seven = 7;
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "", &seven, 1), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 0b 0a 09 0a 00 12 05 1a 03 0a 01 07");

	rio_example_builder_reset(&b);
	float quarter = 0.25f;
	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "\xc3\xa9\xe2\x82\xac", &quarter, 1), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 13 0a 11 0a 05 c3 a9 e2 82 ac 12 08 12 06 0a 04 00 00 80 3e");
	rio_feature f;
	float got = 0;
	CU_ASSERT_EQUAL(rio_example_find(d, n, "\xc3\xa9\xe2\x82\xac", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &got, 1), 1);
	CU_ASSERT_EQUAL(got, 0.25f);
	rio_example_builder_free(&b);
}

static void test_encode_known_empty(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	rio_example_builder_init(&b);

	/* no features: "0a 00" (TensorFlow's Example with empty Features) */
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 00");

	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "f", NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 09 0a 07 0a 01 66 12 02 12 00");

	rio_example_builder_reset(&b);
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "i", NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 09 0a 07 0a 01 69 12 02 1a 00");

	rio_example_builder_reset(&b);
	CU_ASSERT_EQUAL(rio_example_add_bytes_list(&b, "b", NULL, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 09 0a 07 0a 01 62 12 02 0a 00");

	rio_example_builder_reset(&b);
	CU_ASSERT_EQUAL(rio_example_add_empty(&b, "e"), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 07 0a 05 0a 01 65 12 00");
	rio_feature f;
	CU_ASSERT_EQUAL(rio_example_find(d, n, "e", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_NONE);
	CU_ASSERT_EQUAL(f.count, 0);
	rio_example_builder_free(&b);
	rio_example_builder_free(&b); /* twice: zeroed */
	rio_example_builder_free(NULL);
}

static void test_decode_empty_examples(void)
{
	/* "0a 00" (empty Features) and 0 bytes (nothing set) are both valid */
	static const uint8_t two[] = {0x0a, 0x00};
	const void *bufs[] = {two, "", NULL};
	size_t sizes[] = {2, 0, 0};
	for (int i = 0; i < 3; i++) {
		rio_feature f;
		rio_example_iter it;
		CU_ASSERT_EQUAL(rio_example_validate(bufs[i], sizes[i]), 0);
		CU_ASSERT_EQUAL(rio_example_find(bufs[i], sizes[i], "x", &f), RIO_ENOFEATURE);
		CU_ASSERT_EQUAL(rio_example_find(bufs[i], sizes[i], "", &f), RIO_ENOFEATURE);
		rio_example_iter_init(&it, bufs[i], sizes[i]);
		CU_ASSERT_EQUAL(rio_example_iter_next(&it, &f), 0);
		CU_ASSERT_EQUAL(rio_example_iter_next(&it, &f), 0);
	}
}

static void test_builder_sticky_failure(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	int64_t v = 5;
	rio_example_builder_init(&b);
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "a", &v, 1), 0);
	size_t before = b.size;
	b.failed = -ENOMEM; /* as a failed allocation leaves it */
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "b", &v, 1), -ENOMEM);
	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "c", NULL, 0), -ENOMEM);
	CU_ASSERT_EQUAL(rio_example_add_bytes(&b, "d", "x", 1), -ENOMEM);
	CU_ASSERT_EQUAL(rio_example_add_empty(&b, "e"), -ENOMEM);
	CU_ASSERT_EQUAL(b.size, before);
	CU_ASSERT_EQUAL(rio_example_finish(&b, &d, &n), -ENOMEM);
	rio_example_builder_reset(&b);
	CU_ASSERT_EQUAL(b.failed, 0);
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "a", &v, 1), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	expect_bytes(d, n, "0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 05");
	/* finishing twice gives the same bytes */
	const uint8_t *d2;
	size_t n2;
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d2, &n2), 0);
	expect_bytes(d2, n2, "0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 05");
	rio_example_builder_free(&b);
}

/* ---- round trips -------------------------------------------------------------- */

static const size_t sizes_to_try[] = {0, 1, 2, 31, 32, 33, 10000};
#define NSIZES (sizeof sizes_to_try / sizeof *sizes_to_try)

static void test_roundtrip_floats(void)
{
	float *in = malloc(10000 * sizeof *in), *out = malloc(10001 * sizeof *out);
	CU_ASSERT_FATAL(in && out);
	tu_fill_random(in, 10000 * sizeof *in, 1);
	/* special values, bit for bit: NaNs with payloads, infinities, -0 */
	uint32_t specials[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7f800000u,
	                       0xff800000u, 0x80000000u, 0x00000001u, 0x7f7fffffu};
	memcpy(in, specials, sizeof specials);
	rio_example_builder b;
	rio_example_builder_init(&b);
	for (size_t s = 0; s < NSIZES; s++) {
		size_t cnt = sizes_to_try[s];
		const uint8_t *d;
		size_t n;
		rio_feature f;
		rio_example_builder_reset(&b);
		CU_ASSERT_EQUAL(rio_example_add_floats(&b, "before", in, 1), 0);
		CU_ASSERT_EQUAL(rio_example_add_floats(&b, "v", in, cnt), 0);
		CU_ASSERT_EQUAL(rio_example_add_floats(&b, "after", in + 1, 1), 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
		CU_ASSERT_EQUAL(rio_example_validate(d, n), 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "v", &f), 0);
		CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
		CU_ASSERT_EQUAL(f.count, cnt);
		CU_ASSERT(name_is(&f, "v"));
		memset(out, 0xaa, 10001 * sizeof *out);
		CU_ASSERT_EQUAL(rio_feature_floats(&f, out, 10001), (int64_t)cnt);
		CU_ASSERT(memcmp(in, out, cnt * sizeof *in) == 0);
		/* as_floats of a float list is the same copy */
		memset(out, 0, 10001 * sizeof *out);
		CU_ASSERT_EQUAL(rio_feature_as_floats(&f, out, cnt), (int64_t)cnt);
		CU_ASSERT(memcmp(in, out, cnt * sizeof *in) == 0);
		/* the neighbours are intact */
		CU_ASSERT_EQUAL(rio_example_find(d, n, "after", &f), 0);
		CU_ASSERT_EQUAL(rio_feature_floats(&f, out, 1), 1);
		CU_ASSERT(same_bits(out[0], in[1]));
	}
	rio_example_builder_free(&b);
	free(in);
	free(out);
}

static void test_roundtrip_int64s(void)
{
	int64_t *in = malloc(10000 * sizeof *in), *out = malloc(10001 * sizeof *out);
	CU_ASSERT_FATAL(in && out);
	tu_fill_random(in, 10000 * sizeof *in, 2);
	/* every magnitude: shift random values down by i % 64 bits, signed */
	for (size_t i = 0; i < 10000; i++)
		in[i] = (int64_t)((uint64_t)in[i] >> (i % 64)) * ((i & 64) ? -1 : 1);
	int64_t specials[] = {INT64_MIN, -1, 0, 1, INT64_MAX, 127, 128, -128, 16383, 16384};
	memcpy(in, specials, sizeof specials);
	rio_example_builder b;
	rio_example_builder_init(&b);
	for (size_t s = 0; s < NSIZES; s++) {
		size_t cnt = sizes_to_try[s];
		const uint8_t *d;
		size_t n;
		rio_feature f;
		rio_example_builder_reset(&b);
		CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "v", in, cnt), 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
		CU_ASSERT_EQUAL(rio_example_validate(d, n), 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "v", &f), 0);
		CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_INT64);
		CU_ASSERT_EQUAL(f.count, cnt);
		memset(out, 0xaa, 10001 * sizeof *out);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, out, 10001), (int64_t)cnt);
		CU_ASSERT(memcmp(in, out, cnt * sizeof *in) == 0);
		float *fl = malloc((cnt + 1) * sizeof *fl);
		CU_ASSERT_EQUAL(rio_feature_as_floats(&f, fl, cnt), (int64_t)cnt);
		for (size_t i = 0; i < cnt; i++)
			if (fl[i] != (float)in[i]) {
				CU_FAIL("as_floats of an int64");
				break;
			}
		free(fl);
	}
	rio_example_builder_free(&b);
	free(in);
	free(out);
}

static void test_roundtrip_bytes(void)
{
	const size_t N = 10000;
	uint8_t *pool = malloc(300 * 1024);
	const void **vals = malloc(N * sizeof *vals);
	size_t *lens = malloc(N * sizeof *lens);
	CU_ASSERT_FATAL(pool && vals && lens);
	tu_fill_random(pool, 300 * 1024, 3);
	for (size_t i = 0; i < N; i++) { /* lengths 0..299: 1- and 2-byte varints */
		vals[i] = pool + (i * 31) % 1024;
		lens[i] = (i * 7) % 300;
	}
	rio_example_builder b;
	rio_example_builder_init(&b);
	for (size_t s = 0; s < NSIZES; s++) {
		size_t cnt = sizes_to_try[s];
		const uint8_t *d, *v;
		size_t n, len, cursor = 0, k = 0;
		rio_feature f;
		rio_example_builder_reset(&b);
		if (cnt == 1) {
			CU_ASSERT_EQUAL(rio_example_add_bytes(&b, "v", vals[5], lens[5]), 0);
		} else {
			CU_ASSERT_EQUAL(rio_example_add_bytes_list(&b, "v", vals, lens, cnt), 0);
		}
		CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
		CU_ASSERT_EQUAL(rio_example_validate(d, n), 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "v", &f), 0);
		CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_BYTES);
		CU_ASSERT_EQUAL(f.count, cnt);
		int rc;
		while ((rc = rio_feature_bytes_next(&f, &cursor, &v, &len)) == 1) {
			size_t j = cnt == 1 ? 5 : k;
			if (k >= cnt || len != lens[j] || memcmp(v, vals[j], len)) {
				CU_FAIL("bytes value differs");
				break;
			}
			k++;
		}
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(k, cnt);
		/* the end is sticky */
		CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 0);
	}
	rio_example_builder_free(&b);
	free(pool);
	free(vals);
	free(lens);
}

static void test_roundtrip_names_and_order(void)
{
	char longname[301];
	memset(longname, 'n', 300);
	longname[300] = '\0';
	const char *names[] = {"", "\xff\xfe\x80", "\xc3\xa9t\xc3\xa9", longname, "a", "ab", "b"};
	const size_t nn = sizeof names / sizeof *names;
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	rio_example_builder_init(&b);
	for (size_t i = 0; i < nn; i++) {
		switch (i % 4) {
		case 0: {
			int64_t v = (int64_t)i;
			CU_ASSERT_EQUAL(rio_example_add_int64s(&b, names[i], &v, 1), 0);
			break;
		}
		case 1: {
			float v = (float)i;
			CU_ASSERT_EQUAL(rio_example_add_floats(&b, names[i], &v, 1), 0);
			break;
		}
		case 2:
			CU_ASSERT_EQUAL(
			        rio_example_add_bytes(&b, names[i], names[i], strlen(names[i])), 0);
			break;
		default:
			CU_ASSERT_EQUAL(rio_example_add_empty(&b, names[i]), 0);
		}
	}
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	CU_ASSERT_EQUAL(rio_example_validate(d, n), 0);

	rio_example_iter it;
	rio_feature f;
	size_t i = 0;
	int rc;
	rio_example_iter_init(&it, d, n);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		CU_ASSERT_FATAL(i < nn);
		CU_ASSERT(name_is(&f, names[i]));
		CU_ASSERT_EQUAL(f.kind, (rio_feature_kind)((int[]){3, 2, 1, 0}[i % 4]));
		CU_ASSERT_EQUAL(f.count, i % 4 == 3 ? 0 : 1);
		/* find agrees with iteration */
		rio_feature g;
		CU_ASSERT_EQUAL(rio_example_find(d, n, names[i], &g), 0);
		CU_ASSERT_PTR_EQUAL(g.list, f.list);
		CU_ASSERT_EQUAL(g.list_size, f.list_size);
		CU_ASSERT_EQUAL(g.kind, f.kind);
		if (i % 4 == 0) {
			int64_t v = -1;
			CU_ASSERT_EQUAL(rio_feature_int64s(&f, &v, 1), 1);
			CU_ASSERT_EQUAL(v, (int64_t)i);
		} else if (i % 4 == 1) {
			float v = -1;
			CU_ASSERT_EQUAL(rio_feature_floats(&f, &v, 1), 1);
			CU_ASSERT_EQUAL(v, (float)i);
		}
		i++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, nn);
	CU_ASSERT_EQUAL(rio_example_find(d, n, "abc", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_example_find(d, n, "c", &f), RIO_ENOFEATURE);
	rio_example_builder_free(&b);
}

static void test_partial_copy(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	rio_feature f;
	float fv[5] = {1, 2, 3, 4, 5}, fo[5];
	int64_t iv[5] = {-5, 4, -3, 2, -1}, io[5];
	rio_example_builder_init(&b);
	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "f", fv, 5), 0);
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "i", iv, 5), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);

	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "f", &f), 0);
	for (size_t max = 0; max <= 5; max++) {
		memset(fo, 0, sizeof fo);
		CU_ASSERT_EQUAL(rio_feature_floats(&f, fo, max), 5);
		for (size_t k = 0; k < 5; k++)
			CU_ASSERT_EQUAL(fo[k], k < max ? fv[k] : 0.0f);
	}
	CU_ASSERT_EQUAL(rio_feature_floats(&f, NULL, 0), 5);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, NULL, 3), -EINVAL);

	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "i", &f), 0);
	for (size_t max = 0; max <= 5; max++) {
		memset(io, 0, sizeof io);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, io, max), 5);
		for (size_t k = 0; k < 5; k++)
			CU_ASSERT_EQUAL(io[k], k < max ? iv[k] : 0);
		memset(fo, 0, sizeof fo);
		CU_ASSERT_EQUAL(rio_feature_as_floats(&f, fo, max), 5);
		for (size_t k = 0; k < 5; k++)
			CU_ASSERT_EQUAL(fo[k], k < max ? (float)iv[k] : 0.0f);
	}
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, NULL, 0), 5);
	rio_example_builder_free(&b);
}

/* ---- the wire forms protobuf allows ------------------------------------------ */

/* Example with one feature `name` whose Feature holds `field` (2 float_list,
 * 3 int64_list) with the list body in w2. */
static void wrap_one(wbuf *w, const char *name, uint32_t field, const wbuf *list)
{
	w->n = 0;
	w->depth = 0;
	w_open(w, 1);
	w_open(w, 1);
	w_lenfield(w, 1, name, strlen(name));
	w_open(w, 2);
	w_lenfield(w, field, list->b, list->n);
	w_close(w);
	w_close(w);
	w_close(w);
}

static wbuf w1, w2;

static void test_unpacked_floats(void)
{
	/* FloatList { value: 1.0 value: 2.0 } unpacked, by hand */
	uint8_t d[64];
	size_t n = hex("0a 13 0a 11 0a 01 66 12 0c 12 0a 0d 00 00 80 3f 0d 00 00 00 40", d);
	rio_feature f;
	float v[4] = {0};
	CU_ASSERT_EQUAL(rio_example_validate(d, n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "f", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT_EQUAL(f.count, 2);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, v, 4), 2);
	CU_ASSERT(v[0] == 1.0f && v[1] == 2.0f);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, v + 2, 1), 2);
	CU_ASSERT_EQUAL(v[2], 1.0f);
	CU_ASSERT_EQUAL(v[3], 0.0f);
}

static void test_unpacked_int64s(void)
{
	/* Int64List { value: 5 value: -1 value: 300 } unpacked */
	w2.n = 0;
	w_tag(&w2, 1, 0);
	w_varint(&w2, 5);
	w_tag(&w2, 1, 0);
	w_varint(&w2, (uint64_t)-1);
	w_tag(&w2, 1, 0);
	w_varint(&w2, 300);
	wrap_one(&w1, "i", 3, &w2);
	rio_feature f;
	int64_t v[3] = {0};
	float fl[3] = {0};
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "i", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_INT64);
	CU_ASSERT_EQUAL(f.count, 3);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, v, 3), 3);
	CU_ASSERT(v[0] == 5 && v[1] == -1 && v[2] == 300);
	CU_ASSERT_EQUAL(rio_feature_as_floats(&f, fl, 3), 3);
	CU_ASSERT(fl[0] == 5.0f && fl[1] == -1.0f && fl[2] == 300.0f);
}

static void test_mixed_packed_unpacked(void)
{
	/* floats: packed [1,2], unpacked 3, packed [], packed [4] */
	w2.n = 0;
	w_tag(&w2, 1, 2);
	w_varint(&w2, 8);
	w_f32(&w2, 1);
	w_f32(&w2, 2);
	w_tag(&w2, 1, 5);
	w_f32(&w2, 3);
	w_lenfield(&w2, 1, "", 0);
	w_tag(&w2, 1, 2);
	w_varint(&w2, 4);
	w_f32(&w2, 4);
	wrap_one(&w1, "f", 2, &w2);
	rio_feature f;
	float v[8] = {0};
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "f", &f), 0);
	CU_ASSERT_EQUAL(f.count, 4);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, v, 8), 4);
	CU_ASSERT(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4);
	memset(v, 0, sizeof v);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, v, 3), 4); /* max inside the 2nd piece */
	CU_ASSERT(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 0);

	/* int64: unpacked 7, packed [-2, 128], unpacked INT64_MIN */
	w2.n = 0;
	w_tag(&w2, 1, 0);
	w_varint(&w2, 7);
	w_tag(&w2, 1, 2);
	w_varint(&w2, 12);
	w_varint(&w2, (uint64_t)-2);
	w_varint(&w2, 128);
	w_tag(&w2, 1, 0);
	w_varint(&w2, (uint64_t)INT64_MIN);
	wrap_one(&w1, "i", 3, &w2);
	int64_t iv[4] = {0};
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "i", &f), 0);
	CU_ASSERT_EQUAL(f.count, 4);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, iv, 4), 4);
	CU_ASSERT(iv[0] == 7 && iv[1] == -2 && iv[2] == 128 && iv[3] == INT64_MIN);
	memset(iv, 0, sizeof iv);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, iv, 2), 4);
	CU_ASSERT(iv[0] == 7 && iv[1] == -2 && iv[2] == 0);
}

static void test_feature_without_kind(void)
{
	/* three ways: "12 00"; the value field left out; a value holding only
	 * an unknown field */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1); /* {"e": Feature{}} */
	w_lenfield(&w1, 1, "e", 1);
	w_lenfield(&w1, 2, "", 0);
	w_close(&w1);
	w_open(&w1, 1); /* {"m"} with no value */
	w_lenfield(&w1, 1, "m", 1);
	w_close(&w1);
	w_open(&w1, 1); /* {"u": Feature{9: 1}} */
	w_lenfield(&w1, 1, "u", 1);
	w_open(&w1, 2);
	w_tag(&w1, 9, 0);
	w_varint(&w1, 1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);

	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	const char *names[] = {"e", "m", "u"};
	for (int i = 0; i < 3; i++) {
		rio_feature f;
		float fl;
		int64_t iv;
		size_t cursor = 0, len;
		const uint8_t *v;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, names[i], &f), 0);
		CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_NONE);
		CU_ASSERT_EQUAL(f.count, 0);
		CU_ASSERT_EQUAL(rio_feature_floats(&f, &fl, 1), 0);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, &iv, 1), 0);
		CU_ASSERT_EQUAL(rio_feature_as_floats(&f, &fl, 1), 0);
		CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 0);
	}
}

static void test_unknown_fields_everywhere(void)
{
	/* Example{u, features{u, entry{u, key, u, value{u, float_list{u, 1.5, u}, u}, u}, u}, u} */
	w1.n = 0;
	w1.depth = 0;
	w_unknowns(&w1, 2);
	w_open(&w1, 1);
	w_unknowns(&w1, 2);
	w_open(&w1, 1);
	w_unknowns(&w1, 3);
	w_lenfield(&w1, 1, "k", 1);
	w_unknowns(&w1, 3);
	w_open(&w1, 2);
	w_unknowns(&w1, 4);
	w_open(&w1, 2);
	w_unknowns(&w1, 2);
	w_tag(&w1, 1, 5);
	w_f32(&w1, 1.5f);
	w_unknowns(&w1, 2);
	w_close(&w1);
	w_unknowns(&w1, 4);
	w_close(&w1);
	w_unknowns(&w1, 3);
	w_close(&w1);
	w_unknowns(&w1, 2);
	w_close(&w1);
	w_unknowns(&w1, 2);

	rio_feature f;
	float v = 0;
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "k", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT_EQUAL(f.count, 1);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &v, 1), 1);
	CU_ASSERT_EQUAL(v, 1.5f);
	rio_example_iter it;
	rio_example_iter_init(&it, w1.b, w1.n);
	CU_ASSERT_EQUAL(rio_example_iter_next(&it, &f), 1);
	CU_ASSERT(name_is(&f, "k"));
	CU_ASSERT_EQUAL(rio_example_iter_next(&it, &f), 0);

	/* a bytes list with unknown fields between its values */
	w2.n = 0;
	w_unknowns(&w2, 2);
	w_lenfield(&w2, 1, "xy", 2);
	w_unknowns(&w2, 2);
	w_lenfield(&w2, 1, "z", 1);
	w_unknowns(&w2, 2);
	wrap_one(&w1, "b", 1, &w2);
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "b", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_BYTES);
	CU_ASSERT_EQUAL(f.count, 2);
	size_t cursor = 0, len;
	const uint8_t *val;
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &val, &len), 1);
	CU_ASSERT(len == 2 && !memcmp(val, "xy", 2));
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &val, &len), 1);
	CU_ASSERT(len == 1 && !memcmp(val, "z", 1));
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &val, &len), 0);

	/* a known field number with another wire type is an unknown field:
	 * Feature{2: varint} is no float_list; FloatList{1: fixed64} no value */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "w", 1);
	w_open(&w1, 2);
	w_tag(&w1, 2, 0);
	w_varint(&w1, 3);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "x", 1);
	w_open(&w1, 2);
	w_open(&w1, 2);
	w_tag(&w1, 1, 1);
	w_raw(&w1, "\0\0\0\0\0\0\0\0", 8);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL(rio_example_find(w1.b, w1.n, "w", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_NONE);
	CU_ASSERT_EQUAL(rio_example_find(w1.b, w1.n, "x", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT_EQUAL(f.count, 0);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &v, 1), 0);
}

/* An entry {name: int64_list[value]} into w. */
static void w_int_entry(wbuf *w, const char *name, int64_t value)
{
	w_open(w, 1);
	w_lenfield(w, 1, name, strlen(name));
	w_open(w, 2);
	w_open(w, 3);
	w_open(w, 1);
	w_varint(w, (uint64_t)value);
	w_close(w);
	w_close(w);
	w_close(w);
	w_close(w);
}

static void test_duplicate_keys_and_merged_features(void)
{
	/* features{a=1, b=2, a=3} features{} features{c=4, b=5} */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_int_entry(&w1, "a", 1);
	w_int_entry(&w1, "b", 2);
	w_int_entry(&w1, "a", 3);
	w_close(&w1);
	w_lenfield(&w1, 1, "", 0);
	w_open(&w1, 1);
	w_int_entry(&w1, "c", 4);
	w_int_entry(&w1, "b", 5);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_example_validate(w1.b, w1.n), 0);

	rio_feature f;
	int64_t v;
	const char *names = "abc";
	const int64_t want[] = {3, 5, 4};
	for (int i = 0; i < 3; i++) {
		char nm[2] = {names[i], 0};
		CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, nm, &f), 0);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, &v, 1), 1);
		CU_ASSERT_EQUAL(v, want[i]);
	}
	/* iteration yields every entry of every Features, in order */
	rio_example_iter it;
	const char *order = "abacb";
	const int64_t vals[] = {1, 2, 3, 4, 5};
	int i = 0, rc;
	rio_example_iter_init(&it, w1.b, w1.n);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		CU_ASSERT_FATAL(i < 5);
		CU_ASSERT(f.name_len == 1 && f.name[0] == order[i]);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, &v, 1), 1);
		CU_ASSERT_EQUAL(v, vals[i]);
		i++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, 5);
}

static void test_repeated_fields_in_entry_and_feature(void)
{
	rio_feature f;
	int64_t iv;
	float fv;
	/* entry {key "x", key "y", value} -> name "y" */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "x", 1);
	w_lenfield(&w1, 1, "y", 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x09", 1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	/* entry {value, key "k"}: key after value */
	w_open(&w1, 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x0b", 1);
	w_close(&w1);
	w_close(&w1);
	w_lenfield(&w1, 1, "k", 1);
	w_close(&w1);
	/* Feature {int64_list [1], float_list [2.5]}: the oneof's last wins */
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "o", 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x01", 1);
	w_close(&w1);
	w_open(&w1, 2);
	w_tag(&w1, 1, 5);
	w_f32(&w1, 2.5f);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	/* entry {value int64 [6], value Feature{} }: an empty value merges in
	 * without clearing the kind */
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "m", 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x06", 1);
	w_close(&w1);
	w_close(&w1);
	w_lenfield(&w1, 2, "", 0);
	w_close(&w1);
	/* entry {value int64 [6], value float [0.5]}: the later kind wins */
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "n", 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x06", 1);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 2);
	w_open(&w1, 2);
	w_tag(&w1, 1, 5);
	w_f32(&w1, 0.5f);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	/* an entry with no key: name "" */
	w_open(&w1, 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_lenfield(&w1, 1, "\x0c", 1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL_FATAL(rio_example_validate(w1.b, w1.n), 0);

	CU_ASSERT_EQUAL(rio_example_find(w1.b, w1.n, "x", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "y", &f), 0);
	CU_ASSERT(rio_feature_int64s(&f, &iv, 1) == 1 && iv == 9);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "k", &f), 0);
	CU_ASSERT(rio_feature_int64s(&f, &iv, 1) == 1 && iv == 11);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "o", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT(rio_feature_floats(&f, &fv, 1) == 1 && fv == 2.5f);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &iv, 1), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "m", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_INT64);
	CU_ASSERT(rio_feature_int64s(&f, &iv, 1) == 1 && iv == 6);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "n", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT(rio_feature_floats(&f, &fv, 1) == 1 && fv == 0.5f);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "", &f), 0);
	CU_ASSERT_EQUAL(f.name_len, 0);
	CU_ASSERT_PTR_NOT_NULL(f.name);
	CU_ASSERT(rio_feature_int64s(&f, &iv, 1) == 1 && iv == 12);
}

/* ---- errors --------------------------------------------------------------------- */

static void test_wrong_kind_and_missing(void)
{
	rio_example_builder b;
	const uint8_t *d, *v;
	size_t n, cursor = 0, len;
	rio_feature f;
	float fl;
	int64_t iv;
	float one = 1;
	int64_t two = 2;
	rio_example_builder_init(&b);
	CU_ASSERT_EQUAL(rio_example_add_floats(&b, "f", &one, 1), 0);
	CU_ASSERT_EQUAL(rio_example_add_int64s(&b, "i", &two, 1), 0);
	CU_ASSERT_EQUAL(rio_example_add_bytes(&b, "b", "x", 1), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);

	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "f", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &iv, 1), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "i", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &fl, 1), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL(rio_feature_as_floats(&f, &fl, 1), 1);
	CU_ASSERT_EQUAL(fl, 2.0f);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(d, n, "b", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &fl, 1), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &iv, 1), RIO_EFEATUREKIND);
	CU_ASSERT_EQUAL(rio_feature_as_floats(&f, &fl, 1), RIO_EFEATUREKIND);
	/* a cursor beyond the list, NULL arguments */
	cursor = f.list_size + 1;
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), RIO_ERANGE);
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, NULL, &v, &len), -EINVAL);
	CU_ASSERT_EQUAL(rio_feature_floats(NULL, &fl, 1), -EINVAL);

	CU_ASSERT_EQUAL(rio_example_find(d, n, "missing", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_example_find(d, n, "", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_example_find(d, n, "ff", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_example_find(d, n, "F", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_example_find(d, n, NULL, &f), -EINVAL);
	CU_ASSERT_EQUAL(rio_example_find(NULL, 5, "f", &f), -EINVAL);

	CU_ASSERT_STRING_EQUAL(rio_feature_kind_name(RIO_FEATURE_NONE), "none");
	CU_ASSERT_STRING_EQUAL(rio_feature_kind_name(RIO_FEATURE_BYTES), "bytes");
	CU_ASSERT_STRING_EQUAL(rio_feature_kind_name(RIO_FEATURE_FLOAT), "float");
	CU_ASSERT_STRING_EQUAL(rio_feature_kind_name(RIO_FEATURE_INT64), "int64");
	CU_ASSERT_STRING_EQUAL(rio_feature_kind_name((rio_feature_kind)9), "unknown");
	CU_ASSERT_STRING_EQUAL(rio_strerror(RIO_EBADEXAMPLE), "malformed tf.train.Example");
	rio_example_builder_free(&b);
}

/* rio_feature_bytes_next() with the caller's cursor at every position in
 * the list (also inside a value, where the bytes are no tag): a value inside
 * the list, the end or RIO_EBADEXAMPLE, never a read outside the Example
 * (an exact-size heap copy, for ASan), never a cursor that goes back. */
static void test_bytes_cursor_everywhere(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	char big[200];
	memset(big, 0x0a, sizeof big); /* bytes that read as tags */
	const void *vals[] = {"cat", big, "", "\x0a\x05"};
	size_t lens[] = {3, sizeof big, 0, 2};
	rio_example_builder_init(&b);
	CU_ASSERT_EQUAL(rio_example_add_bytes_list(&b, "s", vals, lens, 4), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &d, &n), 0);
	uint8_t *h = malloc(n);
	CU_ASSERT_FATAL(h != NULL);
	memcpy(h, d, n);
	rio_example_builder_free(&b);
	rio_feature f;
	CU_ASSERT_EQUAL_FATAL(rio_example_find(h, n, "s", &f), 0);
	CU_ASSERT_EQUAL_FATAL(f.count, 4);
	size_t ends = 0, values = 0;
	for (size_t start = 0; start <= f.list_size; start++) {
		size_t cursor = start, len = 0;
		const uint8_t *v = NULL;
		int rc, steps = 0;
		while ((rc = rio_feature_bytes_next(&f, &cursor, &v, &len)) == 1) {
			CU_ASSERT_FATAL(v >= f.list && len <= f.list_size &&
			                v + len <= f.list + f.list_size);
			CU_ASSERT_FATAL(cursor > start && cursor <= f.list_size);
			values++;
			CU_ASSERT_FATAL(++steps <= 300); /* it moves on */
		}
		CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
		if (rc == 0)
			ends++;
	}
	CU_ASSERT(ends > 4); /* at least the start of each value, and the end */
	CU_ASSERT(values >= 4 + 3 + 2 + 1);
	free(h);
}

/* Malformed Examples, each with the feature "a": every entry point must say
 * RIO_EBADEXAMPLE. values_only = 0: the structure is damaged (find and
 * iteration fail); 1: only an int64 value is (the accessors and validate
 * fail; find counts varints without decoding them). */
static const struct {
	const char *hex;
	int values_only;
} malformed[] = {
	/* Example: length past the end; a truncated tag; group; wire type 7 */
	{"0a 0d 0a 0a 0a 01 61 12 05 1a 03 0a 01 01", 0},
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 80", 0},
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 13 14", 0},
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 0f", 0},
	/* field number 0 */
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 00 00", 0},
	/* Features: entry length past its Features */
	{"0a 0c 0a 0b 0a 01 61 12 05 1a 03 0a 01 01", 0},
	/* entry: key length past the entry */
	{"0a 0c 0a 0a 0a 09 61 12 05 1a 03 0a 01 01", 0},
	/* Feature: wire type 3 inside */
	{"0a 0c 0a 0a 0a 01 61 12 05 1b 03 0a 01 01", 0},
	/* list length past the Feature */
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 04 0a 01 01", 0},
	/* packed int64 whose last varint runs on */
	{"0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 81", 0},
	/* packed floats of 3 bytes */
	{"0a 0e 0a 0c 0a 01 61 12 07 12 05 0a 03 00 00 80", 0},
	/* unpacked float cut short */
	{"0a 0d 0a 0b 0a 01 61 12 06 12 04 0d 00 00 80", 0},
	/* unpacked int64 of 11 bytes */
	{"0a 15 0a 13 0a 01 61 12 0e 1a 0c 08 80 80 80 80 80 80 80 80 80 80 01", 0},
	/* bytes value past its list */
	{"0a 0c 0a 0a 0a 01 61 12 05 0a 03 0a 05 01", 0},
	/* a 2nd feature whose name is cut: find scans on and must fail */
	{"0a 11 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 0a 03 0a 05 62", 0},
	/* packed int64 holding an 11-byte varint: counted, but not decodable */
	{"0a 17 0a 15 0a 01 61 12 10 1a 0e 0a 0c 80 80 80 80 80 80 80 80 80 80 80 01", 1},
};

static void test_malformed_vectors(void)
{
	for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
		uint8_t d[HEX_MAX];
		size_t n = hex(malformed[i].hex, d);
		/* a copy of exactly n bytes on the heap so ASan sees any overread */
		uint8_t *h = malloc(n);
		CU_ASSERT_FATAL(h != NULL);
		memcpy(h, d, n);
		rio_feature f;
		rio_example_iter it;
		int rc;
		CU_ASSERT_EQUAL(rio_example_validate(h, n), RIO_EBADEXAMPLE);
		rc = rio_example_find(h, n, "a", &f);
		rio_example_iter_init(&it, h, n);
		int irc;
		rio_feature g;
		while ((irc = rio_example_iter_next(&it, &g)) == 1)
			;
		if (!malformed[i].values_only) {
			if (rc != RIO_EBADEXAMPLE || irc != RIO_EBADEXAMPLE)
				printf("\n  malformed vector %zu: find %d, iter %d\n", i, rc, irc);
			CU_ASSERT_EQUAL(rc, RIO_EBADEXAMPLE);
			CU_ASSERT_EQUAL(irc, RIO_EBADEXAMPLE);
			/* the iterator stays failed */
			CU_ASSERT_EQUAL(rio_example_iter_next(&it, &g), RIO_EBADEXAMPLE);
		} else {
			int64_t v[4];
			float fl[4];
			CU_ASSERT_EQUAL_FATAL(rc, 0);
			CU_ASSERT_EQUAL(irc, 0);
			CU_ASSERT_EQUAL(rio_feature_int64s(&f, v, 4), RIO_EBADEXAMPLE);
			CU_ASSERT_EQUAL(rio_feature_int64s(&f, v, 0), RIO_EBADEXAMPLE);
			CU_ASSERT_EQUAL(rio_feature_as_floats(&f, fl, 4), RIO_EBADEXAMPLE);
		}
		free(h);
	}
}

/* Everything the decoder can be asked about one Example, checked for
 * consistency; returns validate's verdict. Never crashes, never reads out of
 * bounds (the caller hands an exact-size heap copy). */
static int exercise(const uint8_t *d, size_t n)
{
	int valid = rio_example_validate(d, n);
	CU_ASSERT(valid == 0 || valid == RIO_EBADEXAMPLE);
	rio_example_iter it;
	rio_feature f, g;
	int rc;
	rio_example_iter_init(&it, d, n);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		float fl[16];
		int64_t iv[16];
		int64_t k;
		switch (f.kind) {
		case RIO_FEATURE_FLOAT:
			k = rio_feature_floats(&f, fl, 16);
			CU_ASSERT(k == (int64_t)f.count);
			break;
		case RIO_FEATURE_INT64:
			k = rio_feature_int64s(&f, iv, 16);
			/* counted cheaply at find time; a >10-byte varint fails here */
			CU_ASSERT(k == (int64_t)f.count || (k == RIO_EBADEXAMPLE && valid));
			k = rio_feature_as_floats(&f, fl, 3);
			CU_ASSERT(k == (int64_t)f.count || (k == RIO_EBADEXAMPLE && valid));
			break;
		case RIO_FEATURE_BYTES: {
			size_t cursor = 0, len, m = 0;
			const uint8_t *v;
			while ((rc = rio_feature_bytes_next(&f, &cursor, &v, &len)) == 1) {
				CU_ASSERT(v >= d && v + len <= d + n);
				m++;
			}
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(m, f.count);
			break;
		}
		case RIO_FEATURE_NONE:
			CU_ASSERT_EQUAL(f.count, 0);
			break;
		default:
			CU_FAIL("bad kind");
		}
		/* find reaches a feature of that name (maybe a later duplicate) */
		if (f.name_len < 64 && !memchr(f.name, 0, f.name_len)) {
			char nm[64];
			memcpy(nm, f.name, f.name_len);
			nm[f.name_len] = 0;
			int frc = rio_example_find(d, n, nm, &g);
			CU_ASSERT(frc == 0 || frc == RIO_EBADEXAMPLE);
			if (frc == 0)
				CU_ASSERT(name_is(&g, nm));
		}
	}
	CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
	if (valid == 0)
		CU_ASSERT_EQUAL(rc, 0);
	int frc = rio_example_find(d, n, "zz-not-there", &g);
	CU_ASSERT(frc == RIO_ENOFEATURE || frc == RIO_EBADEXAMPLE);
	if (valid == 0)
		CU_ASSERT_EQUAL(frc, RIO_ENOFEATURE);
	return valid;
}

/* A multi-feature Example with every kind, a no-kind feature and lengths
 * past one varint byte. */
static void build_sample(rio_example_builder *b, const uint8_t **d, size_t *n)
{
	float fv[40];
	int64_t iv[] = {0, 1, -1, 300, INT64_MIN, INT64_MAX, 1 << 20};
	char big[200];
	for (int i = 0; i < 40; i++)
		fv[i] = (float)i / 3;
	memset(big, 'q', sizeof big);
	const void *vals[] = {"cat", big, ""};
	size_t lens[] = {3, sizeof big, 0};
	rio_example_builder_init(b);
	rio_example_add_floats(b, "floats", fv, 40);
	rio_example_add_int64s(b, "ints", iv, sizeof iv / sizeof *iv);
	rio_example_add_bytes_list(b, "strs", vals, lens, 3);
	rio_example_add_empty(b, "none");
	rio_example_add_int64s(b, "label", iv + 3, 1);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(b, d, n), 0);
}

static void test_truncation_every_length(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	build_sample(&b, &d, &n);
	CU_ASSERT_FATAL(n > 300);
	CU_ASSERT_EQUAL(exercise(d, n), 0);
	for (size_t k = 0; k < n; k++) {
		uint8_t *h = malloc(k ? k : 1);
		CU_ASSERT_FATAL(h != NULL);
		memcpy(h, d, k);
		int valid = exercise(h, k);
		/* every proper prefix but the empty one is malformed */
		CU_ASSERT_EQUAL(valid, k ? RIO_EBADEXAMPLE : 0);
		rio_feature f;
		CU_ASSERT_EQUAL(rio_example_find(h, k, "label", &f),
		                k ? RIO_EBADEXAMPLE : RIO_ENOFEATURE);
		free(h);
	}
	rio_example_builder_free(&b);
}

static void test_random_damage(void)
{
	rio_example_builder b;
	const uint8_t *d;
	size_t n;
	build_sample(&b, &d, &n);
	uint8_t *h = malloc(n);
	CU_ASSERT_FATAL(h != NULL);
	int valid_count = 0;
	for (uint64_t seed = 0; seed < 20000; seed++) {
		uint8_t r[8];
		tu_fill_random(r, sizeof r, seed + 100);
		memcpy(h, d, n);
		int flips = 1 + r[0] % 4;
		for (int i = 0; i < flips; i++) {
			size_t pos = ((size_t)r[1 + i] << 8 | r[5 + (i & 1)]) % n;
			uint8_t bit = (uint8_t)(1u << (r[7] >> (i * 2) & 7));
			h[pos] ^= bit | (uint8_t)(i == 3 ? r[4] : 0);
		}
		if (exercise(h, n) == 0)
			valid_count++;
	}
	/* some flips land in values and keep the Example valid */
	CU_ASSERT(valid_count > 0);
	free(h);
	rio_example_builder_free(&b);
}

/* ---- TensorFlow-written files ------------------------------------------------ */

static void test_tf_mixed_types(void)
{
	size_t size, off = 0, len = 0;
	const uint8_t *data = NULL;
	uint8_t *file = load_golden("tf-mixed-types.tfrecord", &size);
	if (!file)
		return;
	CU_ASSERT_EQUAL_FATAL(tu_next_frame(file, size, &off, &data, &len), 1);
	CU_ASSERT_EQUAL(len, 52);
	const uint8_t *more;
	size_t more_len;
	CU_ASSERT_EQUAL(tu_next_frame(file, size, &off, &more, &more_len), 0); /* one record */
	CU_ASSERT_EQUAL(rio_example_validate(data, len), 0);

	rio_feature f;
	int64_t answer = 0;
	float pi = 0;
	CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "answer", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_INT64);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &answer, 1), 1);
	CU_ASSERT_EQUAL(answer, 42);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "pi", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &pi, 1), 1);
	CU_ASSERT_EQUAL(pi, 3.14f); /* stored as 0x4048f5c3 */
	CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "name", &f), 0);
	CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_BYTES);
	CU_ASSERT_EQUAL(f.count, 1);
	size_t cursor = 0, vlen;
	const uint8_t *v;
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &vlen), 1);
	CU_ASSERT(vlen == 3 && !memcmp(v, "ABC", 3));

	/* the builder writes the same bytes TensorFlow wrote */
	rio_example_builder b;
	const uint8_t *out;
	size_t out_len;
	rio_example_builder_init(&b);
	rio_example_add_int64s(&b, "answer", &answer, 1);
	rio_example_add_floats(&b, "pi", &pi, 1);
	rio_example_add_bytes(&b, "name", "ABC", 3);
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &out, &out_len), 0);
	CU_ASSERT_EQUAL(out_len, len);
	CU_ASSERT(out_len == len && !memcmp(out, data, len));
	rio_example_builder_free(&b);
	free(file);
}

/* Decodes every record of a golden file, checks it, rebuilds it with the
 * builder from what was decoded and compares the bytes. */
static void golden_rebuild(const char *name, size_t want_records, size_t *none_features)
{
	size_t size, off = 0, len = 0, records = 0;
	const uint8_t *data = NULL;
	*none_features = SIZE_MAX; /* (a failed load leaves no count) */
	uint8_t *file = load_golden(name, &size);
	if (!file)
		return;
	float *fl = malloc(65536 * sizeof *fl);
	int64_t *iv = malloc(65536 * sizeof *iv);
	const void **vals = malloc(4096 * sizeof *vals);
	size_t *lens = malloc(4096 * sizeof *lens);
	CU_ASSERT_FATAL(fl && iv && vals && lens);
	rio_example_builder b;
	rio_example_builder_init(&b);
	int rc, mismatches = 0;
	*none_features = 0;
	while ((rc = tu_next_frame(file, size, &off, &data, &len)) == 1) {
		rio_example_iter it;
		rio_feature f;
		records++;
		CU_ASSERT_EQUAL(rio_example_validate(data, len), 0);
		rio_example_builder_reset(&b);
		rio_example_iter_init(&it, data, len);
		while ((rc = rio_example_iter_next(&it, &f)) == 1) {
			char nm[256];
			CU_ASSERT_FATAL(f.name_len < sizeof nm);
			memcpy(nm, f.name, f.name_len);
			nm[f.name_len] = 0;
			int64_t k;
			switch (f.kind) {
			case RIO_FEATURE_FLOAT:
				k = rio_feature_floats(&f, fl, 65536);
				CU_ASSERT_FATAL(k >= 0 && k <= 65536 && (size_t)k == f.count);
				rio_example_add_floats(&b, nm, fl, (size_t)k);
				break;
			case RIO_FEATURE_INT64:
				k = rio_feature_int64s(&f, iv, 65536);
				CU_ASSERT_FATAL(k >= 0 && k <= 65536 && (size_t)k == f.count);
				rio_example_add_int64s(&b, nm, iv, (size_t)k);
				break;
			case RIO_FEATURE_BYTES: {
				size_t cursor = 0, m = 0;
				const uint8_t *v;
				while (m < 4096 &&
				       rio_feature_bytes_next(&f, &cursor, &v, &lens[m]) == 1)
					vals[m++] = v;
				CU_ASSERT_EQUAL(m, f.count);
				rio_example_add_bytes_list(&b, nm, vals, lens, m);
				break;
			}
			default:
				(*none_features)++;
				rio_example_add_empty(&b, nm);
			}
		}
		CU_ASSERT_EQUAL(rc, 0);
		const uint8_t *out;
		size_t out_len;
		CU_ASSERT_EQUAL_FATAL(rio_example_finish(&b, &out, &out_len), 0);
		if (out_len != len || memcmp(out, data, len))
			mismatches++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(records, want_records);
	CU_ASSERT_EQUAL(mismatches, 0);
	rio_example_builder_free(&b);
	free(fl);
	free(iv);
	free(vals);
	free(lens);
	free(file);
}

static void test_tf_files_rebuild_byte_identical(void)
{
	size_t none;
	golden_rebuild("tf-singles.tfrecord", 3, &none);
	CU_ASSERT_EQUAL(none, 0);
	golden_rebuild("tf-mixed-types.tfrecord", 1, &none);
	CU_ASSERT_EQUAL(none, 0);
	golden_rebuild("tfx-mnist.tfrecord", 1000, &none);
	CU_ASSERT_EQUAL(none, 0);
	golden_rebuild("tfx-penguin-train.tfrecord.gz", 234, &none);
	CU_ASSERT_EQUAL(none, 0);
	golden_rebuild("tfx-external-00001-of-00002.tfrecord.gz", 5012, &none);
	/* the taxi data has Features with no kind set: 8626 of them (counted
	 * independently of this library, by a plain protobuf walk) */
	CU_ASSERT_EQUAL(none, 8626);
}

static void test_tf_mnist_values(void)
{
	size_t size, off = 0, len = 0, records = 0;
	const uint8_t *data = NULL;
	uint8_t *file = load_golden("tfx-mnist.tfrecord", &size);
	if (!file)
		return;
	float px[800];
	int64_t hist[10] = {0};
	while (tu_next_frame(file, size, &off, &data, &len) == 1) {
		rio_feature f;
		int64_t cls = -1;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "image_class", &f), 0);
		CU_ASSERT_EQUAL(rio_feature_int64s(&f, &cls, 1), 1);
		CU_ASSERT(cls >= 0 && cls <= 9);
		if (cls >= 0 && cls <= 9)
			hist[cls]++;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "image_floats", &f), 0);
		CU_ASSERT_EQUAL(f.count, 784);
		CU_ASSERT_EQUAL(rio_feature_floats(&f, px, 800), 784);
		for (int i = 0; i < 784; i++)
			if (!(px[i] >= -0.5f && px[i] <= 0.5f)) {
				CU_FAIL("pixel outside [-0.5, 0.5]");
				break;
			}
		records++;
	}
	CU_ASSERT_EQUAL(records, 1000);
	/* every digit, as many times as TensorFlow reads them */
	static const int64_t want_hist[10] = {87, 137, 87, 90, 118, 79, 78, 107, 120, 97};
	for (int c = 0; c < 10; c++)
		CU_ASSERT_EQUAL(hist[c], want_hist[c]);
	free(file);
}

/* ---- SequenceExample -------------------------------------------------------- */

/* A Feature {int64_list [v...]} (as field `field` of the enclosing message). */
static void w_int_feature(wbuf *w, uint32_t field, const int64_t *v, size_t n)
{
	w_open(w, field);
	w_open(w, 3);
	w_open(w, 1);
	for (size_t i = 0; i < n; i++)
		w_varint(w, (uint64_t)v[i]);
	w_close(w);
	w_close(w);
	w_close(w);
}

/* The int64 values of every step of `fl`, flattened into out (at most max);
 * returns the number of steps, or -1 on an error. */
static int list_int64s(const rio_feature_list *fl, int64_t *out, size_t max, size_t *nvals)
{
	rio_feature_list_iter li;
	rio_feature f;
	int rc, steps = 0;
	*nvals = 0;
	rio_feature_list_iter_init(&li, fl);
	while ((rc = rio_feature_list_iter_next(&li, &f)) == 1) {
		steps++;
		if (f.kind == RIO_FEATURE_NONE)
			continue;
		int64_t n = rio_feature_int64s(&f, out + *nvals, max - *nvals);
		if (n < 0 || (size_t)n > max - *nvals)
			return -1;
		*nvals += (size_t)n;
	}
	return rc < 0 ? -1 : steps;
}

/* SequenceExample{context{len: [3]}, feature_lists{a: [[1], [2, 3]],
 * b: [] }, feature_lists{a: [[7]], c: <value twice: [[4]] then [[5], none]>} */
static void build_sequence(wbuf *w)
{
	static const int64_t one[] = {1}, two_three[] = {2, 3}, seven[] = {7}, four[] = {4},
	                     five[] = {5}, three[] = {3};
	w->n = 0;
	w->depth = 0;
	w_open(w, 1); /* context */
	w_open(w, 1);
	w_lenfield(w, 1, "len", 3);
	w_int_feature(w, 2, three, 1);
	w_close(w);
	w_close(w);
	w_open(w, 2); /* feature_lists */
	w_open(w, 1);
	w_lenfield(w, 1, "a", 1);
	w_open(w, 2);
	w_int_feature(w, 1, one, 1);
	w_int_feature(w, 1, two_three, 2);
	w_close(w);
	w_close(w);
	w_open(w, 1);
	w_lenfield(w, 1, "b", 1);
	w_open(w, 2);
	w_close(w);
	w_close(w);
	w_close(w);
	w_open(w, 2); /* feature_lists again: merged */
	w_open(w, 1);
	w_lenfield(w, 1, "a", 1);
	w_open(w, 2);
	w_int_feature(w, 1, seven, 1);
	w_close(w);
	w_close(w);
	w_open(w, 1);
	w_lenfield(w, 1, "c", 1);
	w_open(w, 2);
	w_int_feature(w, 1, four, 1);
	w_close(w);
	w_open(w, 2); /* the value again: its Features concatenate */
	w_int_feature(w, 1, five, 1);
	w_open(w, 1); /* a Feature with no kind */
	w_close(w);
	w_close(w);
	w_close(w);
	w_close(w);
}

static void test_seq_hand_built(void)
{
	build_sequence(&w1);
	rio_feature f;
	rio_feature_list fl;
	int64_t v[8];
	size_t n;
	CU_ASSERT_EQUAL(rio_sequence_example_validate(w1.b, w1.n), 0);
	/* the context, through the Example API */
	CU_ASSERT_EQUAL_FATAL(rio_example_find(w1.b, w1.n, "len", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, v, 8), 1);
	CU_ASSERT_EQUAL(v[0], 3);
	CU_ASSERT_EQUAL(rio_example_find(w1.b, w1.n, "a", &f), RIO_ENOFEATURE);

	/* find: the last entry of a name wins */
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(w1.b, w1.n, "a", &fl), 0);
	CU_ASSERT(fl.name_len == 1 && fl.name[0] == 'a');
	CU_ASSERT_EQUAL(fl.count, 1);
	CU_ASSERT_EQUAL(list_int64s(&fl, v, 8, &n), 1);
	CU_ASSERT(n == 1 && v[0] == 7);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(w1.b, w1.n, "c", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 3);
	CU_ASSERT_EQUAL(list_int64s(&fl, v, 8, &n), 3);
	CU_ASSERT(n == 2 && v[0] == 4 && v[1] == 5);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(w1.b, w1.n, "b", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 0);
	CU_ASSERT_EQUAL(list_int64s(&fl, v, 8, &n), 0);
	CU_ASSERT_EQUAL(rio_sequence_example_find_list(w1.b, w1.n, "len", &fl), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_sequence_example_find_list(w1.b, w1.n, "", &fl), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_sequence_example_find_list(NULL, 3, "a", &fl), -EINVAL);
	CU_ASSERT_EQUAL(rio_sequence_example_find_list(w1.b, w1.n, NULL, &fl), -EINVAL);

	/* iteration: every entry in order, with its steps */
	static const char *names[] = {"a", "b", "a", "c"};
	static const size_t counts[] = {2, 0, 1, 3};
	rio_feature_lists_iter it;
	int rc, i = 0;
	rio_feature_lists_iter_init(&it, w1.b, w1.n);
	while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
		CU_ASSERT_FATAL(i < 4);
		CU_ASSERT(fl.name_len == 1 && fl.name[0] == names[i][0]);
		CU_ASSERT_EQUAL(fl.count, counts[i]);
		i++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, 4);
	/* the steps of the first "a": their names are the list's */
	rio_feature_lists_iter_init(&it, w1.b, w1.n);
	CU_ASSERT_EQUAL_FATAL(rio_feature_lists_iter_next(&it, &fl), 1);
	rio_feature_list_iter li;
	rio_feature_list_iter_init(&li, &fl);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &f), 1);
	CU_ASSERT(name_is(&f, "a") && f.kind == RIO_FEATURE_INT64 && f.count == 1);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &f), 1);
	CU_ASSERT_EQUAL(f.count, 2);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, v, 8), 2);
	CU_ASSERT(v[0] == 2 && v[1] == 3);
	CU_ASSERT_EQUAL(rio_feature_list_iter_next(&li, &f), 0);
	CU_ASSERT_EQUAL(rio_feature_list_iter_next(&li, &f), 0);

	rio_payload_info info;
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_SEQUENCE_EXAMPLE);
	CU_ASSERT_EQUAL(info.features, 1);
	CU_ASSERT_EQUAL(info.feature_lists, 4);
	CU_ASSERT_EQUAL(info.steps, 6);
	CU_ASSERT_EQUAL(info.unrepresented, 0);
	CU_ASSERT_STRING_EQUAL(rio_payload_kind_name(info.kind), "sequence_example");

	/* an Example is a SequenceExample with no lists, and is inspected as an Example */
	static const int64_t nine[] = {9};
	w2.n = 0;
	w2.depth = 0;
	w_open(&w2, 1);
	w_open(&w2, 1);
	w_lenfield(&w2, 1, "x", 1);
	w_int_feature(&w2, 2, nine, 1);
	w_close(&w2);
	w_close(&w2);
	CU_ASSERT_EQUAL(rio_sequence_example_validate(w2.b, w2.n), 0);
	rio_feature_lists_iter_init(&it, w2.b, w2.n);
	CU_ASSERT_EQUAL(rio_feature_lists_iter_next(&it, &fl), 0);
	CU_ASSERT_EQUAL(rio_payload_inspect(w2.b, w2.n, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_EXAMPLE);
	CU_ASSERT_EQUAL(info.features, 1);
	CU_ASSERT_EQUAL(info.unrepresented, 0);
	/* an empty SequenceExample (0 bytes) */
	CU_ASSERT_EQUAL(rio_sequence_example_validate(w2.b, 0), 0);
	rio_feature_lists_iter_init(&it, NULL, 0);
	CU_ASSERT_EQUAL(rio_feature_lists_iter_next(&it, &fl), 0);
}

static void test_seq_unknown_fields(void)
{
	/* unknown fields at every level of the feature lists */
	static const int64_t v42[] = {42};
	w1.n = 0;
	w1.depth = 0;
	w_unknowns(&w1, 3);                 /* 4 in the SequenceExample */
	w_open(&w1, 2);
	w_unknowns(&w1, 2);                 /* 4 in FeatureLists */
	w_open(&w1, 1);
	w_unknowns(&w1, 3);                 /* 4 in the entry */
	w_lenfield(&w1, 1, "q", 1);
	w_open(&w1, 2);
	w_unknowns(&w1, 2);                 /* 4 in FeatureList */
	w_int_feature(&w1, 1, v42, 1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	rio_feature_list fl;
	int64_t v[4];
	size_t n;
	CU_ASSERT_EQUAL(rio_sequence_example_validate(w1.b, w1.n), 0);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(w1.b, w1.n, "q", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 1);
	CU_ASSERT_EQUAL(list_int64s(&fl, v, 4, &n), 1);
	CU_ASSERT(n == 1 && v[0] == 42);
	rio_payload_info info;
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_SEQUENCE_EXAMPLE);
	CU_ASSERT_EQUAL(info.unrepresented, 16);
}

static void test_payload_inspect_examples(void)
{
	rio_payload_info info;
	static const int64_t one[] = {1}, two[] = {2};
	CU_ASSERT_EQUAL(rio_payload_inspect("", 0, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_EXAMPLE);
	CU_ASSERT_EQUAL(rio_payload_inspect("hello", 5, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_RAW);
	CU_ASSERT_EQUAL(info.unrepresented, 0);
	CU_ASSERT_EQUAL(rio_payload_inspect("\x0a\x00", 2, &info), 0); /* features, none in it */
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_RAW);
	CU_ASSERT_EQUAL(rio_payload_inspect("\x12\x00", 2, &info), 0); /* feature_lists, empty */
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_RAW);
	CU_ASSERT_EQUAL(rio_payload_inspect(NULL, 1, &info), -EINVAL);
	CU_ASSERT_EQUAL(rio_payload_inspect("", 0, NULL), -EINVAL);

	/* the unknown-field Example of test_unknown_fields_everywhere's shape:
	 * each w_unknowns adds 4 unrepresented fields */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "k", 1);
	w_int_feature(&w1, 2, one, 1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_EXAMPLE && info.features == 1 && info.unrepresented == 0);
	w_unknowns(&w1, 3);
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_EXAMPLE && info.unrepresented == 4);

	/* an entry whose value is given twice, both with a kind: the first is
	 * overridden; a key given twice: the first is overridden */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "k", 1);
	w_lenfield(&w1, 1, "K", 1);
	w_int_feature(&w1, 2, one, 1);
	w_int_feature(&w1, 2, two, 1);
	w_open(&w1, 2); /* a value with no kind: merges away, not counted */
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_EXAMPLE && info.unrepresented == 2);

	/* a Feature with two lists set: the oneof keeps the last */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "k", 1);
	w_open(&w1, 2);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "b", 1);
	w_close(&w1);
	w_open(&w1, 3);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_EXAMPLE && info.unrepresented == 1);

	/* unpacked lists are represented (they are the same message) */
	w1.n = 0;
	w1.depth = 0;
	w_open(&w1, 1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "u", 1);
	w_open(&w1, 2);
	w_open(&w1, 3);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 5);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 6);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	CU_ASSERT_EQUAL(rio_payload_inspect(w1.b, w1.n, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_EXAMPLE && info.unrepresented == 0);
}

static void test_seq_malformed(void)
{
	build_sequence(&w1);
	rio_feature_list fl;
	rio_feature f;
	rio_payload_info info;
	/* every truncation: an error or a shorter valid message, never a read
	 * past the end (ASan watches), and inspection never fails */
	for (size_t cut = 0; cut < w1.n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
		memcpy(copy, w1.b, cut);
		int rc = rio_sequence_example_validate(copy, cut);
		CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
		rio_feature_lists_iter it;
		rio_feature_lists_iter_init(&it, copy, cut);
		while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
			rio_feature_list_iter li;
			rio_feature_list_iter_init(&li, &fl);
			while (rio_feature_list_iter_next(&li, &f) == 1)
				;
		}
		CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
		if (rc < 0) /* a dead iterator stays dead */
			CU_ASSERT_EQUAL(rio_feature_lists_iter_next(&it, &fl), RIO_EBADEXAMPLE);
		CU_ASSERT_EQUAL(rio_payload_inspect(copy, cut, &info), 0);
		if (rio_sequence_example_validate(copy, cut) != 0)
			CU_ASSERT(info.kind != RIO_PAYLOAD_SEQUENCE_EXAMPLE);
		free(copy);
	}
	/* a FeatureList whose length runs past the entry */
	uint8_t bad1[] = {0x12, 0x06, 0x0a, 0x04, 0x12, 0x05, 0x0a, 0x00};
	CU_ASSERT_EQUAL(rio_sequence_example_validate(bad1, sizeof bad1), RIO_EBADEXAMPLE);
	CU_ASSERT_EQUAL(rio_sequence_example_find_list(bad1, sizeof bad1, "x", &fl), RIO_EBADEXAMPLE);
	/* a step whose int64 varint never ends: find and iteration pass it,
	 * validate and the accessor do not */
	uint8_t bad2[] = {0x12, 0x0f, 0x0a, 0x0d, 0x0a, 0x01, 'z', 0x12, 0x08, 0x0a, 0x06,
	                  0x1a, 0x04, 0x0a, 0x02, 0x80, 0x80};
	CU_ASSERT_EQUAL(rio_sequence_example_validate(bad2, sizeof bad2), RIO_EBADEXAMPLE);
	CU_ASSERT_EQUAL(rio_payload_inspect(bad2, sizeof bad2, &info), 0);
	CU_ASSERT_EQUAL(info.kind, RIO_PAYLOAD_RAW);
	/* a group inside a FeatureList */
	uint8_t bad3[] = {0x12, 0x07, 0x0a, 0x05, 0x12, 0x03, 0x0b, 0x0c, 0x00};
	CU_ASSERT_EQUAL(rio_sequence_example_validate(bad3, sizeof bad3), RIO_EBADEXAMPLE);
	rio_feature_lists_iter it;
	rio_feature_lists_iter_init(&it, bad3, sizeof bad3);
	CU_ASSERT_EQUAL(rio_feature_lists_iter_next(&it, &fl), RIO_EBADEXAMPLE);
	CU_ASSERT_EQUAL(rio_feature_lists_iter_next(&it, &fl), RIO_EBADEXAMPLE);
	CU_ASSERT_EQUAL(rio_sequence_example_validate(NULL, 1), -EINVAL);
}

/* Everything a reader of a SequenceExample may call, on any bytes: only
 * 0, 1 or RIO_EBADEXAMPLE may come back (ASan and UBSan watch the reads).
 * Returns validate's result. */
static int exercise_sequence(const uint8_t *h, size_t n)
{
	rio_feature_lists_iter it;
	rio_feature_list fl;
	rio_feature f;
	rio_payload_info info;
	int64_t iv[16];
	int rc, valid = rio_sequence_example_validate(h, n);
	CU_ASSERT(valid == 0 || valid == RIO_EBADEXAMPLE);
	rio_feature_lists_iter_init(&it, h, n);
	while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
		rio_feature_list_iter li;
		rio_feature_list_iter_init(&li, &fl);
		while ((rc = rio_feature_list_iter_next(&li, &f)) == 1)
			if (f.kind == RIO_FEATURE_INT64)
				(void)rio_feature_int64s(&f, iv, 16);
		CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
	}
	CU_ASSERT(rc == 0 || rc == RIO_EBADEXAMPLE);
	if (valid == 0)
		CU_ASSERT_EQUAL(rc, 0); /* what validates iterates to its end */
	rc = rio_sequence_example_find_list(h, n, "a", &fl);
	CU_ASSERT(rc == 0 || rc == RIO_ENOFEATURE || rc == RIO_EBADEXAMPLE);
	CU_ASSERT_EQUAL(rio_payload_inspect(h, n, &info), 0);
	return valid;
}

static void test_seq_random_damage(void)
{
	build_sequence(&w1);
	uint8_t h[sizeof w1.b];
	int valid_count = 0;
	for (uint64_t seed = 0; seed < 20000; seed++) {
		uint8_t r[8];
		tu_fill_random(r, sizeof r, seed + 7);
		memcpy(h, w1.b, w1.n);
		for (int i = 0; i < 1 + r[0] % 4; i++)
			h[((size_t)r[1 + i] << 8 | r[5 + (i & 1)]) % w1.n] ^= (uint8_t)(1u << (r[7] >> i & 7));
		valid_count += exercise_sequence(h, w1.n) == 0;
	}
	CU_ASSERT(valid_count > 0);
}

/* The SequenceExamples TensorFlow wrote (tests/data/make_tf_files.py). */
static void check_tf_sequence_records(const uint8_t *file, size_t size)
{
	size_t off = 0, len;
	const uint8_t *data;
	rio_feature f, step;
	rio_feature_list fl;
	rio_feature_list_iter li;
	int64_t iv[6];
	float fv[4];
	size_t n;
	rio_payload_info info;

	/* record 0 */
	CU_ASSERT_EQUAL_FATAL(tu_next_frame(file, size, &off, &data, &len), 1);
	CU_ASSERT_EQUAL(rio_sequence_example_validate(data, len), 0);
	CU_ASSERT_EQUAL(rio_payload_inspect(data, len, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE && info.features == 3 &&
	          info.feature_lists == 3 && info.steps == 9 && info.unrepresented == 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "length", &f), 0);
	CU_ASSERT(rio_feature_int64s(&f, iv, 4) == 1 && iv[0] == 3);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(data, len, "weight", &f), 0);
	CU_ASSERT(rio_feature_floats(&f, fv, 4) == 1 && fv[0] == 0.5f);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "ids", &fl), 0);
	CU_ASSERT_EQUAL(list_int64s(&fl, iv, 6, &n), 3);
	CU_ASSERT(n == 5 && iv[0] == 1 && iv[1] == 2 && iv[2] == 3 && iv[3] == -1 &&
	          iv[4] == INT64_MAX);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "scores", &fl), 0);
	rio_feature_list_iter_init(&li, &fl);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &step), 1);
	CU_ASSERT(rio_feature_floats(&step, fv, 4) == 1 && fv[0] == 0.25f);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &step), 1);
	CU_ASSERT(rio_feature_floats(&step, fv, 4) == 2 && isnan(fv[0]) && isinf(fv[1]) && fv[1] > 0);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &step), 1);
	CU_ASSERT(rio_feature_floats(&step, fv, 4) == 2 && isinf(fv[0]) && fv[0] < 0 &&
	          same_bits(fv[1], -0.0f));
	CU_ASSERT_EQUAL(rio_feature_list_iter_next(&li, &step), 0);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "tokens", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 3);
	rio_feature_list_iter_init(&li, &fl);
	static const char *tokens[] = {"the", "cat", "sat", "!"};
	int t = 0;
	while (rio_feature_list_iter_next(&li, &step) == 1) {
		size_t cursor = 0, vlen;
		const uint8_t *v;
		while (rio_feature_bytes_next(&step, &cursor, &v, &vlen) == 1) {
			CU_ASSERT_FATAL(t < 4);
			CU_ASSERT(vlen == strlen(tokens[t]) && !memcmp(v, tokens[t], vlen));
			t++;
		}
	}
	CU_ASSERT_EQUAL(t, 4);

	/* record 1: an empty list and a step with no kind */
	CU_ASSERT_EQUAL_FATAL(tu_next_frame(file, size, &off, &data, &len), 1);
	CU_ASSERT_EQUAL(rio_sequence_example_validate(data, len), 0);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "tokens", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 0);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "unset", &fl), 0);
	CU_ASSERT_EQUAL(fl.count, 1);
	rio_feature_list_iter_init(&li, &fl);
	CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &step), 1);
	CU_ASSERT(step.kind == RIO_FEATURE_NONE && step.count == 0);

	/* record 2: no context */
	CU_ASSERT_EQUAL_FATAL(tu_next_frame(file, size, &off, &data, &len), 1);
	CU_ASSERT_EQUAL(rio_payload_inspect(data, len, &info), 0);
	CU_ASSERT(info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE && info.features == 0 &&
	          info.feature_lists == 1 && info.steps == 2);
	CU_ASSERT_EQUAL_FATAL(rio_sequence_example_find_list(data, len, "x", &fl), 0);
	rio_feature_list_iter_init(&li, &fl);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(rio_feature_list_iter_next(&li, &step), 1);
		CU_ASSERT(rio_feature_floats(&step, fv, 4) == 1 && fv[0] == 1.5f + (float)i);
	}
	CU_ASSERT_EQUAL(tu_next_frame(file, size, &off, &data, &len), 0);
}

static void test_tf_sequence_example(void)
{
	size_t size, gz_size;
	uint8_t *file = load_golden("tf-sequence-example.tfrecord", &size);
	uint8_t *gz = load_golden("tf-sequence-example.tfrecord.gz", &gz_size);
	if (file)
		check_tf_sequence_records(file, size);
	if (file && gz) /* TensorFlow's GZIP file holds the same stream */
		CU_ASSERT(gz_size == size && !memcmp(gz, file, size));
	free(file);
	free(gz);
}

/* ---- TensorBoard events ------------------------------------------------------- */

static void w_f64(wbuf *w, double d)
{
	uint8_t b[8];
	memcpy(b, &d, 8); /* little-endian host */
	w_raw(w, b, 8);
}

static void test_event_hand_built(void)
{
	/* Event{wall_time 12.5, step 7, summary{value{tag "s", simple_value 0.25},
	 * value{tag "t", tensor{dtype float, shape [], content 1.5}},
	 * value{tag "d", tensor{dtype double, shape [1, 1], double_val [2.5]}},
	 * value{tag "i", tensor{dtype int64, int64_val [-3]}},
	 * value{tag "v", tensor{dtype float, shape [2], float_val [1, 2]}},
	 * value{tag "img", image{...}}}} */
	w1.n = 0;
	w1.depth = 0;
	w_tag(&w1, 1, 1);
	w_f64(&w1, 12.5);
	w_tag(&w1, 2, 0);
	w_varint(&w1, 7);
	w_open(&w1, 5);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "s", 1);
	w_tag(&w1, 2, 5);
	w_f32(&w1, 0.25f);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "t", 1);
	w_open(&w1, 8);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 1);
	w_open(&w1, 2);
	w_close(&w1);
	w_tag(&w1, 4, 2);
	w_varint(&w1, 4);
	w_f32(&w1, 1.5f);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "d", 1);
	w_open(&w1, 8);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 2);
	w_open(&w1, 2);
	for (int i = 0; i < 2; i++) {
		w_open(&w1, 2);
		w_tag(&w1, 1, 0);
		w_varint(&w1, 1);
		w_close(&w1);
	}
	w_close(&w1);
	w_tag(&w1, 6, 1);
	w_f64(&w1, 2.5);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "i", 1);
	w_open(&w1, 8);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 9);
	w_tag(&w1, 10, 0);
	w_varint(&w1, (uint64_t)-3);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "v", 1);
	w_open(&w1, 8);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 1);
	w_open(&w1, 2);
	w_open(&w1, 2);
	w_tag(&w1, 1, 0);
	w_varint(&w1, 2);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 5);
	w_f32(&w1, 1);
	w_f32(&w1, 2);
	w_close(&w1);
	w_close(&w1);
	w_close(&w1);
	w_open(&w1, 1);
	w_lenfield(&w1, 1, "img", 3);
	w_lenfield(&w1, 4, "\x08\x01", 2);
	w_close(&w1);
	w_close(&w1);

	rio_event ev;
	CU_ASSERT_EQUAL_FATAL(rio_event_parse(w1.b, w1.n, &ev), 0);
	CU_ASSERT_EQUAL(ev.wall_time, 12.5);
	CU_ASSERT_EQUAL(ev.step, 7);
	CU_ASSERT_PTR_NULL(ev.file_version);
	CU_ASSERT_PTR_NOT_NULL(ev.summary);
	CU_ASSERT_EQUAL(ev.other_fields, 0);
	CU_ASSERT_EQUAL(rio_event_is_file_header(w1.b, w1.n), 0);
	static const char *tags[] = {"s", "t", "d", "i", "v", "img"};
	static const int scalar[] = {1, 1, 1, 1, 0, 0};
	static const double want[] = {0.25, 1.5, 2.5, -3, 0, 0};
	rio_summary_iter it;
	rio_summary_value v;
	int i = 0, rc;
	rio_summary_iter_init(&it, &ev);
	while ((rc = rio_summary_iter_next(&it, &v)) == 1) {
		double x = -1;
		CU_ASSERT_FATAL(i < 6);
		CU_ASSERT(v.tag_len == strlen(tags[i]) && !memcmp(v.tag, tags[i], v.tag_len));
		CU_ASSERT_EQUAL(rio_summary_value_scalar(&v, &x), scalar[i]);
		if (scalar[i])
			CU_ASSERT_EQUAL(x, want[i]);
		CU_ASSERT_EQUAL(v.other_fields, i == 0 ? 0 : 1);
		i++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, 6);

	/* every truncation parses or fails with -EBADMSG */
	for (size_t cut = 0; cut < w1.n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
		memcpy(copy, w1.b, cut);
		rc = rio_event_parse(copy, cut, &ev);
		CU_ASSERT(rc == 0 || rc == -EBADMSG);
		if (rc == 0) {
			rio_summary_iter_init(&it, &ev);
			while ((rc = rio_summary_iter_next(&it, &v)) == 1) {
				double x;
				rc = rio_summary_value_scalar(&v, &x);
				CU_ASSERT(rc == 0 || rc == 1 || rc == -EBADMSG);
			}
			CU_ASSERT_EQUAL(rc, 0);
		}
		free(copy);
	}

	/* a file header; malformed events */
	static const uint8_t header[] = {0x1a, 0x0d, 'b', 'r', 'a', 'i', 'n', '.', 'E', 'v', 'e',
	                                 'n', 't', ':', '2'};
	CU_ASSERT_EQUAL(rio_event_is_file_header(header, sizeof header), 1);
	CU_ASSERT_EQUAL(rio_event_is_file_header(header, sizeof header - 3), 0);
	CU_ASSERT_EQUAL(rio_event_parse(header, sizeof header, &ev), 0);
	CU_ASSERT(ev.file_version_len == 13 && !memcmp(ev.file_version, "brain.Event:2", 13));
	static const uint8_t varint_wall_time[] = {0x08, 0x01};
	CU_ASSERT_EQUAL(rio_event_parse(varint_wall_time, 2, &ev), -EBADMSG);
	static const uint8_t bad_summary[] = {0x2a, 0x02, 0x0a, 0x05};
	CU_ASSERT_EQUAL(rio_event_parse(bad_summary, sizeof bad_summary, &ev), -EBADMSG);
	CU_ASSERT_EQUAL(rio_event_parse("hello", 5, &ev), -EBADMSG);
	CU_ASSERT_EQUAL(rio_event_parse(NULL, 1, &ev), -EINVAL);
	CU_ASSERT_EQUAL(rio_event_is_file_header("hello", 5), 0);
}

/* The Event of test_event_hand_built damaged at random: parse, iterate and
 * read the scalars, only 0, 1 or -EBADMSG come back. */
static void test_event_random_damage(void)
{
	uint8_t h[sizeof w1.b];
	size_t n;
	int parsed = 0;
	test_event_hand_built(); /* leaves its Event in w1 */
	n = w1.n;
	for (uint64_t seed = 0; seed < 20000; seed++) {
		uint8_t r[8];
		rio_event ev;
		tu_fill_random(r, sizeof r, seed + 11);
		memcpy(h, w1.b, n);
		for (int i = 0; i < 1 + r[0] % 4; i++)
			h[((size_t)r[1 + i] << 8 | r[5 + (i & 1)]) % n] ^= (uint8_t)(1u << (r[7] >> i & 7));
		int rc = rio_event_parse(h, n, &ev);
		CU_ASSERT(rc == 0 || rc == -EBADMSG);
		(void)rio_event_is_file_header(h, n);
		if (rc)
			continue;
		parsed++;
		rio_summary_iter it;
		rio_summary_value v;
		rio_summary_iter_init(&it, &ev);
		while ((rc = rio_summary_iter_next(&it, &v)) == 1) {
			double x;
			int s = rio_summary_value_scalar(&v, &x);
			CU_ASSERT(s == 0 || s == 1 || s == -EBADMSG);
		}
		CU_ASSERT_EQUAL(rc, 0); /* a parsed Event's summary iterates to its end */
	}
	CU_ASSERT(parsed > 0);
}

/* The event files TensorFlow and TensorBoard wrote (make_tf_files.py). */
static void test_tf_event_files(void)
{
	size_t size, off = 0, len, records = 0;
	const uint8_t *data;
	uint8_t *file = load_golden("events.out.tfevents.tf-2-x", &size);
	if (!file)
		return;
	int seen_loss = 0, seen_acc = 0;
	while (tu_next_frame(file, size, &off, &data, &len) == 1) {
		rio_event ev;
		CU_ASSERT_EQUAL_FATAL(rio_event_parse(data, len, &ev), 0);
		CU_ASSERT_EQUAL(rio_event_is_file_header(data, len), records == 0);
		CU_ASSERT(ev.wall_time > 1.5e9);
		if (records++ == 0)
			continue;
		rio_summary_iter it;
		rio_summary_value v;
		double x;
		rio_summary_iter_init(&it, &ev);
		CU_ASSERT_EQUAL_FATAL(rio_summary_iter_next(&it, &v), 1);
		CU_ASSERT_EQUAL_FATAL(rio_summary_value_scalar(&v, &x), 1);
		CU_ASSERT(v.other_fields > 0); /* metadata and a tensor */
		if (v.tag_len == 4 && !memcmp(v.tag, "loss", 4)) {
			CU_ASSERT_EQUAL(x, (double)(float)(1.0 / (double)(ev.step + 1)));
			seen_loss++;
		} else {
			CU_ASSERT(v.tag_len == 8 && !memcmp(v.tag, "accuracy", 8));
			CU_ASSERT_EQUAL(x, (double)(float)((double)ev.step / 10.0));
			seen_acc++;
		}
		CU_ASSERT(ev.step >= 0 && ev.step <= 9);
		CU_ASSERT_EQUAL(rio_summary_iter_next(&it, &v), 0);
	}
	CU_ASSERT_EQUAL(records, 21);
	CU_ASSERT(seen_loss == 10 && seen_acc == 10);
	free(file);

	file = load_golden("events.out.tfevents.tb-simple-value", &size);
	if (!file)
		return;
	off = 0;
	records = 0;
	static const int64_t steps[] = {0, 10, 20};
	static const double loss[] = {2, 1, 0.5};
	while (tu_next_frame(file, size, &off, &data, &len) == 1) {
		rio_event ev;
		CU_ASSERT_EQUAL_FATAL(rio_event_parse(data, len, &ev), 0);
		if (records++ == 0) {
			CU_ASSERT_EQUAL(rio_event_is_file_header(data, len), 1);
			continue;
		}
		size_t k = records - 2;
		CU_ASSERT_FATAL(k < 3);
		CU_ASSERT_EQUAL(ev.step, steps[k]);
		CU_ASSERT_EQUAL(ev.wall_time, 1700000000.0 + (double)steps[k]);
		CU_ASSERT_EQUAL(ev.other_fields, 0);
		rio_summary_iter it;
		rio_summary_value v;
		double x;
		rio_summary_iter_init(&it, &ev);
		CU_ASSERT_EQUAL_FATAL(rio_summary_iter_next(&it, &v), 1);
		CU_ASSERT(v.tag_len == 4 && !memcmp(v.tag, "loss", 4) && v.other_fields == 0);
		CU_ASSERT(rio_summary_value_scalar(&v, &x) == 1 && x == loss[k]);
	}
	CU_ASSERT_EQUAL(records, 4);
	free(file);
}

/* The encoder writes what TensorBoard's EventFileWriter wrote into the
 * golden file: its three scalar events byte for byte, and a header that
 * parses as one (TensorBoard's adds source_metadata, which ours leaves out). */
static void test_event_encode(void)
{
	size_t size, off = 0, len;
	const uint8_t *data;
	uint8_t *file = load_golden("events.out.tfevents.tb-simple-value", &size);
	if (!file)
		return;
	static const int64_t steps[] = {0, 10, 20};
	static const float loss[] = {2, 1, 0.5};
	uint8_t buf[128];
	int k = -1;
	while (tu_next_frame(file, size, &off, &data, &len) == 1) {
		if (k++ < 0)
			continue; /* the header */
		CU_ASSERT_FATAL(k - 1 < 3);
		rio_scalar v = {"loss", loss[k - 1]};
		size_t n = rio_event_encode(buf, sizeof buf, 1700000000.0 + (double)steps[k - 1],
		                            steps[k - 1], NULL, &v, 1);
		CU_ASSERT_EQUAL(n, len);
		CU_ASSERT(n == len && memcmp(buf, data, len) == 0);
	}
	CU_ASSERT_EQUAL(k, 3);
	free(file);

	size_t n = rio_event_encode(buf, sizeof buf, 1.5, 0, "brain.Event:2", NULL, 0);
	CU_ASSERT_FATAL(n > 0 && n <= sizeof buf);
	CU_ASSERT_EQUAL(rio_event_is_file_header(buf, n), 1);
	rio_event ev;
	CU_ASSERT_EQUAL_FATAL(rio_event_parse(buf, n, &ev), 0);
	CU_ASSERT(ev.wall_time == 1.5 && ev.file_version_len == 13 && ev.other_fields == 0);

	/* several values, a negative step, sizing like snprintf */
	rio_scalar vs[3] = {{"train/loss", 0.25f}, {"test/accuracy", 0.875f}, {"", -1.0f}};
	n = rio_event_encode(NULL, 0, 2.0, -3, NULL, vs, 3);
	CU_ASSERT_FATAL(n > 12 && n <= sizeof buf);
	CU_ASSERT_EQUAL(rio_event_encode(buf, 5, 2.0, -3, NULL, vs, 3), n); /* did not fit */
	CU_ASSERT_EQUAL(rio_event_encode(buf, sizeof buf, 2.0, -3, NULL, vs, 3), n);
	CU_ASSERT_EQUAL_FATAL(rio_event_parse(buf, n, &ev), 0);
	CU_ASSERT(ev.step == -3 && ev.wall_time == 2.0 && ev.other_fields == 0);
	rio_summary_iter it;
	rio_summary_value sv;
	rio_summary_iter_init(&it, &ev);
	for (int i = 0; i < 3; i++) {
		double x;
		CU_ASSERT_EQUAL_FATAL(rio_summary_iter_next(&it, &sv), 1);
		CU_ASSERT(sv.tag_len == strlen(vs[i].tag) && !memcmp(sv.tag, vs[i].tag, sv.tag_len));
		CU_ASSERT(rio_summary_value_scalar(&sv, &x) == 1 && x == vs[i].value);
		CU_ASSERT_EQUAL(sv.other_fields, 0);
	}
	CU_ASSERT_EQUAL(rio_summary_iter_next(&it, &sv), 0);
	/* bad arguments */
	rio_scalar no_tag = {NULL, 1};
	CU_ASSERT_EQUAL(rio_event_encode(buf, sizeof buf, 0, 0, NULL, &no_tag, 1), 0);
	CU_ASSERT_EQUAL(rio_event_encode(buf, sizeof buf, 0, 0, "brain.Event:2", vs, 1), 0);
	CU_ASSERT_EQUAL(rio_event_encode(NULL, 4, 0, 0, NULL, vs, 1), 0);
}

static const tu_test pb_tests[] = {
	{"varint size and round trip", test_pb_varint_size},
	{"varint limits and truncation", test_pb_varint_limits},
	{"tag rejects field 0, groups, wire 6/7", test_pb_tag},
	{"skip of each wire type", test_pb_skip},
	{NULL, NULL},
};

static const tu_test encode_tests[] = {
	{"int64 bytes as TensorFlow writes them", test_encode_known_int64},
	{"float and bytes lists, names", test_encode_known_floats_bytes},
	{"empty Example, empty lists, no kind", test_encode_known_empty},
	{"empty Examples decode", test_decode_empty_examples},
	{"builder failure is sticky, reset clears", test_builder_sticky_failure},
	{NULL, NULL},
};

static const tu_test roundtrip_tests[] = {
	{"floats bit for bit", test_roundtrip_floats},
	{"int64 incl. INT64_MIN and -1", test_roundtrip_int64s},
	{"bytes lists", test_roundtrip_bytes},
	{"names and feature order", test_roundtrip_names_and_order},
	{"copy up to max, return the count", test_partial_copy},
	{NULL, NULL},
};

static const tu_test wire_tests[] = {
	{"unpacked floats", test_unpacked_floats},
	{"unpacked int64", test_unpacked_int64s},
	{"packed and unpacked mixed", test_mixed_packed_unpacked},
	{"Feature with no kind", test_feature_without_kind},
	{"unknown fields at every level", test_unknown_fields_everywhere},
	{"duplicate keys, repeated features", test_duplicate_keys_and_merged_features},
	{"repeated key, value and oneof", test_repeated_fields_in_entry_and_feature},
	{NULL, NULL},
};

static const tu_test error_tests[] = {
	{"wrong kind, missing feature", test_wrong_kind_and_missing},
	{"malformed vectors", test_malformed_vectors},
	{"bytes cursor at every position", test_bytes_cursor_everywhere},
	{"truncation at every length", test_truncation_every_length},
	{"random damage", test_random_damage},
	{NULL, NULL},
};

static const tu_test golden_tests[] = {
	{"tf-mixed-types: values and identical bytes", test_tf_mixed_types},
	{"every golden record re-encodes identically", test_tf_files_rebuild_byte_identical},
	{"mnist classes and pixels", test_tf_mnist_values},
	{NULL, NULL},
};

static const tu_test sequence_tests[] = {
	{"hand-built: context, find, iterate, merge", test_seq_hand_built},
	{"unknown fields in the feature lists", test_seq_unknown_fields},
	{"malformed and truncated", test_seq_malformed},
	{"random damage", test_seq_random_damage},
	{"payload inspection of Examples", test_payload_inspect_examples},
	{"TensorFlow-written, plain and GZIP", test_tf_sequence_example},
	{NULL, NULL},
};

static const tu_test event_tests[] = {
	{"hand-built: scalars of every form, damage", test_event_hand_built},
	{"random damage", test_event_random_damage},
	{"TensorFlow 2 and TensorBoard event files", test_tf_event_files},
	{"encoder: TensorBoard's bytes", test_event_encode},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"protobuf wire", pb_tests},
	{"example encode", encode_tests},
	{"example round trip", roundtrip_tests},
	{"example wire forms", wire_tests},
	{"example errors", error_tests},
	{"example golden files", golden_tests},
	{"sequence example", sequence_tests},
	{"tensorboard events", event_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * fuzz_example.c — libFuzzer target for the tf.train.Example decoder.
 *
 * Feeds arbitrary bytes to rio_example_validate, the iterator, find and
 * every typed accessor, and checks that they agree with one another: what
 * validate accepts must iterate without error, every accessor must return
 * the count find/iteration reported, and an Example rebuilt from the decoded
 * values with the builder must decode to the same values, and the loader's
 * bf16 decoding (rio__feature_as_bf16) must be the float values, scaled,
 * rounded by half.h. Any disagreement
 * aborts. Built and run by scripts/fuzz.sh (see tests/fuzz/README.md).
 */
#include "fuzz_util.h"
#include "half.h"
#include "internal.h"
#include "recordio.h"

#include <stdlib.h>
#include <string.h>

#define MAXV 4096

static float fl[MAXV], fl2[MAXV];
static int64_t iv[MAXV], iv2[MAXV];
static const void *vals[MAXV];
static size_t lens[MAXV];
static uint16_t bv[MAXV];

/* The bf16 decoding of a float or int64 list of k values: the same count,
 * and each value the float one times the scale, rounded. */
static void check_bf16(const rio_feature *f, int64_t k)
{
	const float scale = 0.5f;
	CHECK(rio__feature_as_bf16(f, bv, MAXV, scale) == k);
	CHECK(rio_feature_as_floats(f, fl2, MAXV) == k);
	for (int64_t i = 0; i < k && i < MAXV; i++)
		CHECK(bv[i] == rio__bf16_from_f32(fl2[i] * scale));
}

/* Checks feature f's values; when `b` is not NULL, adds them to it. Returns
 * 0, or -1 when a value could not be decoded (validate must then fail). */
static int check_feature(const rio_feature *f, const uint8_t *data, size_t size,
                         rio_example_builder *b, const char *name)
{
	int64_t k;
	size_t cursor = 0, len, m = 0;
	const uint8_t *v;
	int rc;
	switch (f->kind) {
	case RIO_FEATURE_NONE:
		CHECK(f->count == 0);
		CHECK(rio_feature_floats(f, fl, MAXV) == 0);
		CHECK(rio_feature_int64s(f, iv, MAXV) == 0);
		CHECK(rio_feature_bytes_next(f, &cursor, &v, &len) == 0);
		if (b)
			rio_example_add_empty(b, name);
		return 0;
	case RIO_FEATURE_FLOAT:
		k = rio_feature_floats(f, fl, MAXV);
		CHECK(k == (int64_t)f->count);
		CHECK(rio_feature_as_floats(f, fl2, 1) == k);
		CHECK(rio_feature_int64s(f, iv, 1) == RIO_EFEATUREKIND);
		check_bf16(f, k);
		if (b && k <= MAXV)
			rio_example_add_floats(b, name, fl, (size_t)k);
		return 0;
	case RIO_FEATURE_INT64:
		k = rio_feature_int64s(f, iv, MAXV);
		if (k == RIO_EBADEXAMPLE) /* a varint over 10 bytes: found, not decodable */
			return -1;
		CHECK(k == (int64_t)f->count);
		CHECK(rio_feature_as_floats(f, fl2, 3) == k);
		CHECK(rio_feature_floats(f, fl, 1) == RIO_EFEATUREKIND);
		check_bf16(f, k);
		if (b && k <= MAXV)
			rio_example_add_int64s(b, name, iv, (size_t)k);
		return 0;
	case RIO_FEATURE_BYTES:
		while ((rc = rio_feature_bytes_next(f, &cursor, &v, &len)) == 1) {
			CHECK(v >= data && len <= size && v + len <= data + size);
			if (m < MAXV) {
				vals[m] = v;
				lens[m] = len;
			}
			m++;
		}
		CHECK(rc == 0);
		CHECK(m == f->count);
		CHECK(rio_feature_floats(f, fl, 1) == RIO_EFEATUREKIND);
		if (b && m <= MAXV)
			rio_example_add_bytes_list(b, name, vals, lens, m);
		return 0;
	}
	abort();
}

/* The values of `f` and `g` are the same. */
static void check_same(const rio_feature *f, const rio_feature *g)
{
	CHECK(f->kind == g->kind && f->count == g->count);
	if (f->count > MAXV)
		return;
	if (f->kind == RIO_FEATURE_FLOAT) {
		CHECK(rio_feature_floats(f, fl, MAXV) == rio_feature_floats(g, fl2, MAXV));
		CHECK(!memcmp(fl, fl2, f->count * sizeof *fl));
	} else if (f->kind == RIO_FEATURE_INT64) {
		CHECK(rio_feature_int64s(f, iv, MAXV) == rio_feature_int64s(g, iv2, MAXV));
		CHECK(!memcmp(iv, iv2, f->count * sizeof *iv));
	} else if (f->kind == RIO_FEATURE_BYTES) {
		size_t c1 = 0, c2 = 0, l1, l2;
		const uint8_t *v1, *v2;
		int r1, r2;
		while ((r1 = rio_feature_bytes_next(f, &c1, &v1, &l1)) == 1) {
			r2 = rio_feature_bytes_next(g, &c2, &v2, &l2);
			CHECK(r2 == 1 && l1 == l2 && !memcmp(v1, v2, l1));
		}
		CHECK(r1 == 0 && rio_feature_bytes_next(g, &c2, &v2, &l2) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so that any overread is caught */
	uint8_t *d = malloc(size ? size : 1);
	if (!d)
		return 0;
	memcpy(d, data, size);

	int valid = rio_example_validate(d, size);
	CHECK(valid == 0 || valid == RIO_EBADEXAMPLE);

	rio_example_builder b;
	rio_example_builder_init(&b);
	rio_example_iter it;
	rio_feature f, g;
	int rc, undecodable = 0, plain_names = 1;
	size_t features = 0;
	rio_example_iter_init(&it, d, size);
	while ((rc = rio_example_iter_next(&it, &f)) == 1) {
		char name[256];
		CHECK(f.name && f.name_len <= size);
		CHECK(!f.name_len || ((const uint8_t *)f.name >= d &&
		                      (const uint8_t *)f.name + f.name_len <= d + size));
		CHECK(!f.list_size || (f.list >= d && f.list + f.list_size <= d + size));
		int plain = f.name_len < sizeof name && !memchr(f.name, 0, f.name_len);
		if (plain) {
			memcpy(name, f.name, f.name_len);
			name[f.name_len] = '\0';
		} else {
			plain_names = 0;
			name[0] = '\0';
		}
		if (check_feature(&f, d, size, &b, name))
			undecodable = 1;
		if (plain) {
			/* find gives the last feature of this name */
			int frc = rio_example_find(d, size, name, &g);
			CHECK(frc == 0 || frc == RIO_EBADEXAMPLE);
			if (frc == 0)
				CHECK(g.name_len == f.name_len &&
				      !memcmp(g.name, name, f.name_len));
		}
		features++;
	}
	CHECK(rc == 0 || rc == RIO_EBADEXAMPLE);
	if (rc != 0)
		CHECK(rio_example_iter_next(&it, &f) == rc); /* the error is sticky */
	if (valid == 0)
		CHECK(rc == 0 && !undecodable);
	/* a name that is (most likely) absent; the fuzzer may still put it in */
	rc = rio_example_find(d, size, "\x01no such feature", &g);
	CHECK(rc == RIO_ENOFEATURE || rc == RIO_EBADEXAMPLE || rc == 0);
	if (valid == 0)
		CHECK(rc != RIO_EBADEXAMPLE);
	if (rc == 0)
		CHECK(g.name_len == 16 && !memcmp(g.name, "\x01no such feature", 16));

	/* re-encode what was decoded: same features, same values */
	const uint8_t *out;
	size_t out_len;
	if (valid == 0 && plain_names && rio_example_finish(&b, &out, &out_len) == 0) {
		CHECK(rio_example_validate(out, out_len) == 0);
		rio_example_iter it1, it2;
		rio_feature f2;
		size_t n = 0;
		rio_example_iter_init(&it1, d, size);
		rio_example_iter_init(&it2, out, out_len);
		while (rio_example_iter_next(&it1, &f) == 1) {
			if (f.count > MAXV)
				continue; /* not added */
			CHECK(rio_example_iter_next(&it2, &f2) == 1);
			CHECK(f.name_len == f2.name_len && !memcmp(f.name, f2.name, f.name_len));
			check_same(&f, &f2);
			n++;
		}
		CHECK(rio_example_iter_next(&it2, &f2) == 0);
		CHECK(n <= features);
	}
	rio_example_builder_free(&b);
	free(d);
	return 0;
}

/*
 * test_loader_bf16.c — the loader's bf16 columns and the 16-bit float
 * conversions under them (lib/half.h).
 *
 * The reference rounding here is written apart from half.h: the two
 * bfloat16 (or fp16) neighbours of a float, compared in double; the
 * nearer wins, a tie goes to the even one, past the largest finite value
 * (by half its ulp or more) is infinity, a NaN stays a NaN of its sign.
 * The loader's bf16 columns are checked against it for every source kind
 * (a float list, an int64 list, a bytes feature), in every shuffle mode,
 * through the rows (narrow bytes widened at the batch), the placed path
 * (decoded straight into the batch) and the cache; and its saved state
 * goes on between f32 and bf16 columns, older states included.
 */
#include "half.h"
#include "loader.h"
#include "loadutil.h"
#include "recordio.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference rounding ---------------------------------------------- */

/* The value of a 16-bit float of `mant` mantissa bits and `ebits` exponent
 * bits, as double; infinity's pattern is 2^(emax + 1) (where rounding
 * meets it). */
static double small_value(uint32_t h, int ebits, int mant)
{
	uint32_t e = (h >> mant) & ((1u << ebits) - 1), m = h & ((1u << mant) - 1);
	int bias = (1 << (ebits - 1)) - 1;
	double v = e == 0 ? ldexp((double)m, 1 - bias - mant)
	                  : ldexp((double)((1u << mant) | m), (int)e - bias - mant);
	if (e == (1u << ebits) - 1)
		v = ldexp(1.0, bias + 1);
	return (h >> (ebits + mant)) & 1 ? -v : v;
}

/* The nearest 16-bit float to x (not a NaN), ties to even, by search: the
 * patterns are ordered as their magnitudes. */
static uint16_t ref_round(float x, int ebits, int mant)
{
	uint32_t sign = signbit(x) ? 1u << (ebits + mant) : 0;
	double ax = fabs((double)x);
	uint32_t lo = 0, hi = (((1u << ebits) - 1) << mant); /* 0 .. inf */
	if (ax >= small_value(hi, ebits, mant))
		return (uint16_t)(sign | hi);
	while (hi - lo > 1) { /* small_value(lo) <= ax < small_value(hi) */
		uint32_t mid = lo + (hi - lo) / 2;
		if (small_value(mid, ebits, mant) <= ax)
			lo = mid;
		else
			hi = mid;
	}
	double a = ax - small_value(lo, ebits, mant), b = small_value(hi, ebits, mant) - ax;
	uint32_t r = a < b ? lo : b < a ? hi : (lo & 1) ? hi : lo;
	return (uint16_t)(sign | r);
}

static uint16_t ref_bf16(float x)
{
	return ref_round(x, 8, 7);
}

/* Whether `got` is ref's rounding of x: the same bits, or for a NaN a NaN
 * of the same sign. */
static int same_rounding(uint16_t got, float x, int ebits, int mant)
{
	if (isnan(x)) {
		uint32_t exp = ((1u << ebits) - 1) << mant, m = (1u << mant) - 1;
		return (got & exp) == exp && (got & m) != 0 &&
		       !!(got >> (ebits + mant)) == !!signbit(x);
	}
	return got == ref_round(x, ebits, mant);
}

/* The floats whose rounding is tricky, then random bit patterns. */
static float tricky(size_t i, uint64_t *rng)
{
	static const uint32_t bits[] = {
	    0x3f808000, /* 1 + 2^-8: a tie, to 1 (even)                */
	    0x3f818000, /* 1 + 3 * 2^-8: a tie, up to 1 + 2^-6 (even)  */
	    0x3f808001, /* just past the tie: up                        */
	    0x3f807fff, /* just short of it: down                       */
	    0xbf808000, 0xbf818000, /* the same ties, negative         */
	    0x7f7fffff, /* FLT_MAX: rounds to inf                       */
	    0x7f7f7fff, /* short of bf16's max + half an ulp: its max   */
	    0x7f7f8000, /* a tie at bf16's max, odd: up to inf          */
	    0xff7f8000, /* and negative                                 */
	    0x7f800000, 0xff800000, /* inf, -inf                       */
	    0x7fc00000, 0xffc00000, /* quiet NaNs                      */
	    0x7f800001, /* a signalling NaN, whose truncation is inf    */
	    0xff80ffff, /* one with low bits that would carry           */
	    0x00000000, 0x80000000, /* zeros                           */
	    0x00008000, /* a subnormal tie: to 0                        */
	    0x00018000, /* a subnormal tie: up to 0x0002               */
	    0x00000001, /* the least subnormal                          */
	    0x007fffff, /* the largest subnormal: up to FLT_MIN         */
	    0x477fe000, /* 65504: fp16's max                            */
	    0x477ff000, /* fp16's max + half an ulp: fp16 inf           */
	};
	size_t n = sizeof bits / sizeof bits[0];
	if (i < n)
		return rio__f32_from_bits(bits[i]);
	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	return rio__f32_from_bits((uint32_t)(*rng >> 32));
}

/* half.h against the reference: the tricky values and a million random
 * ones for both narrowings; widening is exact (every pattern). */
static void test_half_rounding(void)
{
	uint64_t rng = 1;
	size_t bad_bf16 = 0, bad_fp16 = 0;
	for (size_t i = 0; i < 1000000; i++) {
		float x = tricky(i, &rng);
		if (!same_rounding(rio__bf16_from_f32(x), x, 8, 7)) {
			if (bad_bf16++ < 5)
				fprintf(stderr, "bf16 of %a (0x%08x): 0x%04x, want 0x%04x\n", x,
				        rio__f32_bits(x), rio__bf16_from_f32(x), ref_bf16(x));
		}
		if (!same_rounding(rio__fp16_from_f32(x), x, 5, 10)) {
			if (bad_fp16++ < 5)
				fprintf(stderr, "fp16 of %a (0x%08x): 0x%04x, want 0x%04x\n", x,
				        rio__f32_bits(x), rio__fp16_from_f32(x), ref_round(x, 5, 10));
		}
	}
	CU_ASSERT_EQUAL(bad_bf16, 0);
	CU_ASSERT_EQUAL(bad_fp16, 0);
	/* the ties, spelled out */
	CU_ASSERT_EQUAL(rio__bf16_from_f32(rio__f32_from_bits(0x3f808000)), 0x3f80);
	CU_ASSERT_EQUAL(rio__bf16_from_f32(rio__f32_from_bits(0x3f818000)), 0x3f82);
	CU_ASSERT_EQUAL(rio__bf16_from_f32(FLT_MAX), 0x7f80);
	CU_ASSERT_EQUAL(rio__fp16_from_f32(65520.0f), 0x7c00);
	CU_ASSERT_EQUAL(rio__fp16_from_f32(65519.0f), 0x7bff);
	size_t widen = 0;
	for (uint32_t h = 0; h < 65536; h++) {
		float b = rio__f32_from_bf16((uint16_t)h), f = rio__f32_from_fp16((uint16_t)h);
		uint32_t exp5 = (h >> 10) & 31;
		double fv = small_value(h, 5, 10);
		widen += rio__f32_bits(b) != h << 16;
		if (exp5 == 31) /* inf and NaN */
			widen += (h & 0x3ff) ? !isnan(f) : (double)f != (h & 0x8000 ? -INFINITY : INFINITY);
		else
			widen += (double)f != fv || !!signbit(f) != !!(h & 0x8000);
	}
	CU_ASSERT_EQUAL(widen, 0);
}

/* ---- bf16 columns ---------------------------------------------------------- */

enum { NF = 40, NI = 12, NB = 256, RECORDS = 60 };
static const float SCALE_I = 0.5f, SCALE_B = 0.00392157f;

/* Record r's values: floats (tricky ones first, so that every record has
 * them), int64s and bytes. */
static void record_values(int r, float *f, int64_t *iv, uint8_t *b)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
	for (size_t i = 0; i < NF; i++)
		f[i] = tricky(i < 25 ? i : 25 + i + (size_t)r, &rng);
	static const int64_t ints[] = {0, 1, -1, 255, 257, 16777217, -16777219, 1ll << 40,
	                               (1ll << 40) + (1ll << 32) + 1, INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < NI; i++)
		iv[i] = i < sizeof ints / sizeof ints[0] ? ints[i] : (int64_t)r * 1000003 - 7;
	for (size_t i = 0; i < NB; i++)
		b[i] = (uint8_t)(i + (size_t)r);
}

static const char *write_shard(const char *name, rio_compression comp)
{
	const char *path = tu_path(name);
	rio_writer_opts wo = {.compression = comp};
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &wo), 0);
	rio_example_builder eb;
	rio_example_builder_init(&eb);
	for (int r = 0; r < RECORDS; r++) {
		float f[NF];
		int64_t iv[NI], id = r;
		uint8_t b[NB];
		record_values(r, f, iv, b);
		rio_example_builder_reset(&eb);
		rio_example_add_floats(&eb, "f", f, NF);
		rio_example_add_int64s(&eb, "i", iv, NI);
		rio_example_add_bytes(&eb, "b", b, NB);
		rio_example_add_int64s(&eb, "id", &id, 1);
		const uint8_t *data;
		size_t size;
		CU_ASSERT_EQUAL_FATAL(rio_example_finish(&eb, &data, &size), 0);
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, data, size, NULL), 0);
	}
	rio_example_builder_free(&eb);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
	return path;
}

/* The rows of one batch against the reference: how many values differ. */
static size_t check_batch(const rio_batch *b)
{
	size_t bad = 0;
	const uint16_t *f = b->columns[0].host, *iv = b->columns[1].host, *by = b->columns[2].host;
	const int64_t *id = b->columns[3].host;
	for (size_t row = 0; row < b->count; row++) {
		float fv[NF];
		int64_t ivs[NI];
		uint8_t bv[NB];
		record_values((int)id[row], fv, ivs, bv);
		for (size_t i = 0; i < NF; i++)
			bad += !same_rounding(f[row * NF + i], fv[i], 8, 7);
		for (size_t i = 0; i < NI; i++)
			bad += !same_rounding(iv[row * NI + i], (float)ivs[i] * SCALE_I, 8, 7);
		for (size_t i = 0; i < NB; i++)
			bad += !same_rounding(by[row * NB + i], (float)bv[i] * SCALE_B, 8, 7);
	}
	return bad;
}

static rio_column_spec *bf16_columns(size_t *n)
{
	char text[160];
	snprintf(text, sizeof text, "f:bf16:%d,i:bf16:%d:%g,b:bf16:%d:%.9g,id:i64:1", NF, NI,
	         (double)SCALE_I, NB, (double)SCALE_B);
	rio_column_spec *cols = NULL;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(text, &cols, n, NULL), 0);
	return cols;
}

/* Every shuffle mode; plain, mapped (decoded straight into the batch),
 * and LZ4 kept decoded in memory (opts.cache): every value is the
 * reference's rounding, every record comes once. */
static void test_bf16_columns(void)
{
	lu_watchdog("bf16 columns", 120);
	const char *plain = write_shard("bf16-00000-of-00001.tfrecord", RIO_COMPRESSION_NONE);
	const char *lz4 = write_shard("bf16c-00000-of-00001.tfrecord.lz4", RIO_COMPRESSION_LZ4);
	size_t ncols;
	rio_column_spec *cols = bf16_columns(&ncols);
	static const rio_shuffle shuffles[] = {RIO_SHUFFLE_NONE, RIO_SHUFFLE_BUFFER,
	                                       RIO_SHUFFLE_GLOBAL};
	for (int way = 0; way < 3; way++) {
		for (int si = 0; si < 3; si++) {
			if (way == 2 && shuffles[si] == RIO_SHUFFLE_GLOBAL)
				continue; /* global shuffling wants uncompressed shards */
			rio_loader_opts o;
			lu_base_opts(&o);
			o.shuffle = shuffles[si];
			o.batch_size = 7;
			o.shuffle_buffer = 16;
			o.columns = cols;
			o.ncolumns = ncols;
			o.map = way == 1;
			o.cache = way == 2 ? 1u << 20 : 0;
			rio_loader *l = NULL;
			int rc = rio_loader_open(&l, way == 2 ? lz4 : plain, &o);
			CHECK(rc == 0, "open: %d", rc);
			rio_batch *b;
			size_t rows = 0, bad = 0, types = 0;
			uint8_t seen[RECORDS] = {0};
			while (rc >= 0 && (rc = rio_loader_next(l, &b)) == 1) {
				for (size_t c = 0; c < 3; c++)
					types += b->columns[c].type != RIO_DTYPE_BF16;
				bad += check_batch(b);
				for (size_t r = 0; r < b->count; r++, rows++)
					seen[((const int64_t *)b->columns[3].host)[r] % RECORDS]++;
				rio_loader_release(l, b);
			}
			size_t once = 0;
			for (int r = 0; r < RECORDS; r++)
				once += seen[r] == 1;
			CHECK(rc == 0 && rows == RECORDS && once == RECORDS && bad == 0 && types == 0,
			      "%s, %s: rc %d, %zu rows (%zu once), %zu values not rounded to "
			      "nearest even, %zu columns not bf16",
			      rio_shuffle_name(o.shuffle), way == 0 ? "plain" : way == 1 ? "map" : "cache",
			      rc, rows, once, bad, types);
			rio_loader_close(l);
		}
	}
	free(cols);
	lu_watchdog(NULL, 0);
}

/* The spec: bf16 parses, with a scale; its size is 2; an i64 scale is
 * still refused, naming bf16 among the types. */
static void test_bf16_spec(void)
{
	CU_ASSERT_STRING_EQUAL(rio_dtype_name(RIO_DTYPE_BF16), "bf16");
	CU_ASSERT_EQUAL(rio_dtype_size(RIO_DTYPE_BF16), 2);
	rio_column_spec *c = NULL;
	size_t n = 0;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse("image:bf16:784:0.00392157", &c, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(c[0].type, RIO_DTYPE_BF16);
	CU_ASSERT_EQUAL(c[0].length, 784);
	CU_ASSERT(c[0].scale > 0.0039215f && c[0].scale < 0.0039216f);
	free(c);
	CU_ASSERT_EQUAL(rio_column_spec_parse("label:i64:1:2", &c, &n, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "bf16"));
	CU_ASSERT_EQUAL(rio_column_spec_parse("image:bf8:784", &c, &n, &err), -EINVAL);
}

/* A feature that cannot be bf16 (an int64 column's bytes, a list of
 * another length) is the same error as for f32, naming bf16. */
static void test_bf16_mismatch(void)
{
	const char *plain = write_shard("bf16m-00000-of-00001.tfrecord", RIO_COMPRESSION_NONE);
	static const char *const specs[] = {"f:bf16:39", "b:bf16:255"};
	for (int k = 0; k < 2; k++) {
		rio_column_spec *cols = NULL;
		size_t n;
		CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(specs[k], &cols, &n, NULL), 0);
		rio_loader_opts o;
		lu_base_opts(&o);
		o.batch_size = 8;
		o.columns = cols;
		o.ncolumns = n;
		rio_loader *l = NULL;
		int rc = rio_loader_open(&l, plain, &o);
		rio_batch *b;
		if (rc == 0)
			rc = rio_loader_next(l, &b);
		CHECK(rc == RIO_EFEATURELEN && strstr(rio_loader_error(l)->message, "the spec wants"),
		      "%s: %d '%s'", specs[k], rc, l ? rio_loader_error(l)->message : "");
		rio_loader_close(l);
		free(cols);
	}
}

/* ---- the saved state ------------------------------------------------------- */

/* A loader over `path` with the columns `spec`, batches of 5. */
static rio_loader *open_cols(const char *path, const char *spec, rio_column_spec **cols)
{
	size_t n;
	CU_ASSERT_EQUAL_FATAL(rio_column_spec_parse(spec, cols, &n, NULL), 0);
	rio_loader_opts o;
	lu_base_opts(&o);
	o.shuffle = RIO_SHUFFLE_BUFFER;
	o.shuffle_buffer = 16;
	o.seed = 3;
	o.batch_size = 5;
	o.columns = *cols;
	o.ncolumns = n;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, path, &o);
	CHECK(rc == 0, "open %s: %d", spec, rc);
	return l;
}

/* The ids of the rest of the epoch, into ids; returns how many. */
static size_t rest_ids(rio_loader *l, int64_t *ids, size_t idcol)
{
	rio_batch *b;
	size_t n = 0;
	while (rio_loader_next(l, &b) == 1) {
		for (size_t r = 0; r < b->count && n < RECORDS; r++)
			ids[n++] = ((const int64_t *)b->columns[idcol].host)[r];
		rio_loader_release(l, b);
	}
	return n;
}

/* The columns' word of a state made before bf16 (each column's decoded
 * bytes, mixed), and the CRC after it redone. */
static void make_legacy(uint8_t *blob, size_t size, const size_t *bytes, size_t ncols)
{
	uint64_t cols = 0;
	for (size_t c = 0; c < ncols; c++)
		cols = (cols ^ bytes[c]) * 0x100000001b3ull;
	for (int i = 0; i < 8; i++)
		blob[15 * 8 + i] = (uint8_t)(cols >> (8 * i));
	uint32_t crc = rio_crc32c(0, blob, size - 4);
	for (int i = 0; i < 4; i++)
		blob[size - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/* A state saved with f32 columns restores into bf16 ones and the reverse,
 * going on with the same records; so does one saved before bf16 (the
 * columns' word of their bytes); other lengths are still refused. */
static void test_bf16_state(void)
{
	lu_watchdog("bf16 state", 120);
	const char *path = write_shard("bf16s-00000-of-00001.tfrecord", RIO_COMPRESSION_NONE);
	static const char *const spec[2] = {"f:f32:40,id:i64:1", "f:bf16:40,id:i64:1"};
	for (int from = 0; from < 2; from++) {
		for (int legacy = 0; legacy < 2; legacy++) {
			rio_column_spec *ca, *cb;
			rio_loader *a = open_cols(path, spec[legacy ? 0 : from], &ca);
			rio_batch *b;
			CU_ASSERT_EQUAL_FATAL(rio_loader_next(a, &b), 1);
			rio_loader_release(a, b);
			int size = rio_loader_state_save(a, NULL, 0);
			CU_ASSERT_FATAL(size > 0);
			uint8_t *blob = malloc((size_t)size);
			CU_ASSERT_EQUAL(rio_loader_state_save(a, blob, (size_t)size), size);
			if (legacy) {
				size_t bytes[2] = {40 * 4, 8};
				make_legacy(blob, (size_t)size, bytes, 2);
			}
			int64_t want[RECORDS], got[RECORDS];
			size_t nwant = rest_ids(a, want, 1);
			rio_loader *x = open_cols(path, spec[1 - from], &cb);
			int rc = rio_loader_state_restore(x, blob, (size_t)size);
			size_t ngot = rc == 0 ? rest_ids(x, got, 1) : 0;
			CHECK(rc == 0 && ngot == nwant && nwant > 0 &&
			          !memcmp(want, got, nwant * sizeof *want),
			      "%s%s -> %s: restore %d '%s', %zu of %zu records the same",
			      legacy ? "an older state of " : "", spec[legacy ? 0 : from],
			      spec[1 - from], rc, rio_loader_error(x)->message, ngot, nwant);
			rio_loader_close(x);
			free(cb);
			/* another length is other columns */
			x = open_cols(path, "f:bf16:40,id:i64:1,i:i64:12", &cb);
			rc = rio_loader_state_restore(x, blob, (size_t)size);
			CHECK(rc == RIO_ESTATE && strstr(rio_loader_error(x)->message, "another columns"),
			      "a state of other columns: %d '%s'", rc, rio_loader_error(x)->message);
			rio_loader_close(x);
			free(cb);
			rio_loader_close(a);
			free(ca);
			free(blob);
		}
	}
	lu_watchdog(NULL, 0);
}

static const tu_test tests[] = {
    {"half.h: bf16 and fp16 rounding against the reference", test_half_rounding},
    {"bf16 in the column spec", test_bf16_spec},
    {"bf16 columns from floats, int64s and bytes, every path", test_bf16_columns},
    {"bf16 columns: features that do not fit", test_bf16_mismatch},
    {"saved state: f32 <-> bf16 columns, and older states", test_bf16_state},
    {NULL, NULL},
};

static const tu_suite suites[] = {{"loader bf16", tests}, {NULL, NULL}};

int main(int argc, char **argv)
{
	(void)argc;
	return tu_run(argv[0], suites);
}

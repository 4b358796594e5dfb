/*
 * test_testdata.c — the real files TensorFlow wrote (tests/data, see its README).
 *
 * Golden inputs: exact record counts and decoded values, plain and GZIP
 * files, Features with no kind set. The expected values were read with
 * TensorFlow 2.21 (tf.data.TFRecordDataset + tf.train.Example). A missing
 * golden directory is a failure, not a skip.
 */
#include "recordio.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct visit {
	const char *file;
	uint64_t records;
	rio_compression compression;
} visit;

/* Opens a golden file; fails the test when it is missing. */
static rio_reader *open_golden(const char *name)
{
	const char *path = tu_testdata(name);
	CU_ASSERT_PTR_NOT_NULL(path);
	if (!path)
		return NULL;
	rio_reader *r = NULL;
	CU_ASSERT_EQUAL(rio_reader_open(&r, path, NULL), 0);
	return r;
}

static int64_t int64_of(const rio_record *rec, const char *name)
{
	rio_feature f;
	int64_t v = INT64_MIN;
	CU_ASSERT_EQUAL_FATAL(rio_example_find(rec->data, rec->size, name, &f), 0);
	CU_ASSERT_EQUAL(rio_feature_int64s(&f, &v, 1), 1);
	return v;
}

static float float_of(const rio_record *rec, const char *name)
{
	rio_feature f;
	float v = NAN;
	CU_ASSERT_EQUAL_FATAL(rio_example_find(rec->data, rec->size, name, &f), 0);
	CU_ASSERT_EQUAL(rio_feature_floats(&f, &v, 1), 1);
	return v;
}

static void test_counts(void)
{
	static const visit files[] = {
		{"tfx-mnist.tfrecord", 1000, RIO_COMPRESSION_NONE},
		{"tfx-penguin-train.tfrecord.gz", 234, RIO_COMPRESSION_GZIP},
		{"tfx-external-00001-of-00002.tfrecord.gz", 5012, RIO_COMPRESSION_GZIP},
		{"tf-singles.tfrecord", 3, RIO_COMPRESSION_NONE},
		{"tf-mixed-types.tfrecord", 1, RIO_COMPRESSION_NONE},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		/* both inflaters, the default buffer and one of 4 KiB (records
		 * and gzip blocks then cross many refills) */
		for (int pass = 0; pass < 4; pass++) {
			const char *path = tu_testdata(files[i].file);
			CU_ASSERT_PTR_NOT_NULL_FATAL(path);
			rio_reader_opts o;
			rio_reader_opts_init(&o);
			if (pass & 2)
				o.buffer_size = 4096;
			if (pass & 1)
				setenv("RIO_INFLATE", "zlib", 1);
			rio_reader *r = NULL;
			int orc = rio_reader_open(&r, path, &o);
			unsetenv("RIO_INFLATE");
			CU_ASSERT_EQUAL_FATAL(orc, 0);
			rio_record rec;
			uint64_t n = 0, offset = 0, bad = 0;
			int rc;
			while ((rc = rio_reader_next(r, &rec)) == 1) {
				if (rio_example_validate(rec.data, rec.size) != 0 || rec.index != n ||
				    rec.offset != offset)
					bad++;
				offset += rec.size + 16;
				n++;
			}
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(bad, 0);
			CU_ASSERT_EQUAL(n, files[i].records);
			CU_ASSERT_EQUAL(rio_reader_bytes(r), offset);
			CU_ASSERT_EQUAL(rio_reader_skipped(r), 0);
			CU_ASSERT_EQUAL(rio_reader_compression(r), files[i].compression);
			if (files[i].compression == RIO_COMPRESSION_NONE)
				CU_ASSERT_EQUAL(rio_reader_file_bytes(r), offset);
			rio_reader_close(r);
		}
	}
}

static void test_mnist_values(void)
{
	rio_reader *r = open_golden("tfx-mnist.tfrecord");
	if (!r)
		return;
	rio_record rec;
	int64_t class_sum = 0, hist[10] = {0};
	double float_sum = 0;
	float *img = malloc(784 * sizeof *img);
	uint64_t i;
	int rc;
	for (i = 0; (rc = rio_reader_next(r, &rec)) == 1; i++) {
		CU_ASSERT_EQUAL_FATAL(rec.size, 3187); /* 3203 bytes framed */
		CU_ASSERT_EQUAL(rec.offset, i * 3203);
		int64_t c = int64_of(&rec, "image_class");
		CU_ASSERT_TRUE_FATAL(c >= 0 && c < 10);
		class_sum += c;
		hist[c]++;
		rio_feature f;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "image_floats", &f), 0);
		CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_FLOAT);
		CU_ASSERT_EQUAL(f.count, 784);
		CU_ASSERT_EQUAL_FATAL(rio_feature_floats(&f, img, 784), 784);
		for (int k = 0; k < 784; k++)
			float_sum += img[k];
		if (i == 0) {
			CU_ASSERT_EQUAL(c, 9);
			CU_ASSERT_EQUAL(img[0], -0.5f);
			CU_ASSERT_EQUAL(img[400], 0.4882352948188782f);
		}
		if (i == 1)
			CU_ASSERT_EQUAL(c, 3);
		if (i == 500)
			CU_ASSERT_EQUAL(c, 9);
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, 1000);
	static const int64_t want_hist[10] = {87, 137, 87, 90, 118, 79, 78, 107, 120, 97};
	CU_ASSERT_EQUAL(class_sum, 4498);
	CU_ASSERT_EQUAL(memcmp(hist, want_hist, sizeof hist), 0);
	CU_ASSERT_DOUBLE_EQUAL(float_sum, -291181.686237562, 1e-3);
	free(img);
	rio_reader_close(r);
}

static void test_penguin_values(void)
{
	rio_reader *r = open_golden("tfx-penguin-train.tfrecord.gz");
	if (!r)
		return;
	rio_record rec;
	int hist[3] = {0};
	uint64_t i;
	int rc;
	for (i = 0; (rc = rio_reader_next(r, &rec)) == 1; i++) {
		int64_t s = int64_of(&rec, "species");
		CU_ASSERT_TRUE_FATAL(s >= 0 && s < 3);
		hist[s]++;
		if (i == 0) {
			CU_ASSERT_EQUAL(float_of(&rec, "body_mass_g"), 0.2916666567325592f);
			CU_ASSERT_EQUAL(float_of(&rec, "culmen_depth_mm"), 0.6666666865348816f);
			CU_ASSERT_EQUAL(float_of(&rec, "culmen_length_mm"), 0.2545454502105713f);
			CU_ASSERT_EQUAL(float_of(&rec, "flipper_length_mm"), 0.1525423675775528f);
			CU_ASSERT_EQUAL(s, 0);
		}
		if (i == 233) {
			CU_ASSERT_EQUAL(float_of(&rec, "flipper_length_mm"), 0.7288135886192322f);
			CU_ASSERT_EQUAL(s, 2);
		}
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, 234);
	CU_ASSERT_EQUAL(hist[0], 99);
	CU_ASSERT_EQUAL(hist[1], 46);
	CU_ASSERT_EQUAL(hist[2], 89);
	rio_reader_close(r);
}

/* Chicago taxi rows: mixed kinds and 8626 Features with no kind set. */
static void test_external_values(void)
{
	rio_reader *r = open_golden("tfx-external-00001-of-00002.tfrecord.gz");
	if (!r)
		return;
	rio_record rec;
	uint64_t none = 0, features = 0, company_none = 0;
	int64_t ts_sum = 0;
	uint64_t i;
	int rrc;
	for (i = 0; (rrc = rio_reader_next(r, &rec)) == 1; i++) {
		rio_example_iter it;
		rio_feature f;
		int rc;
		rio_example_iter_init(&it, rec.data, rec.size);
		while ((rc = rio_example_iter_next(&it, &f)) == 1) {
			features++;
			if (f.kind == RIO_FEATURE_NONE) {
				none++;
				CU_ASSERT_EQUAL(f.count, 0);
			}
		}
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "company", &f), 0);
		if (f.kind == RIO_FEATURE_NONE)
			company_none++;
		CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "trip_start_timestamp", &f), 0);
		int64_t ts = 0;
		if (f.kind == RIO_FEATURE_INT64) {
			CU_ASSERT_EQUAL(rio_feature_int64s(&f, &ts, 1), 1);
			ts_sum += ts;
		}
		if (i == 0) {
			const uint8_t *v;
			size_t len, cursor = 0;
			CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "company", &f), 0);
			CU_ASSERT_EQUAL_FATAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 1);
			CU_ASSERT_EQUAL(len, 25);
			CU_ASSERT_EQUAL(memcmp(v, "Taxi Affiliation Services", 25), 0);
			CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 0);
			CU_ASSERT_EQUAL(float_of(&rec, "dropoff_longitude"), -87.63575744628906f);
			CU_ASSERT_EQUAL(int64_of(&rec, "trip_start_timestamp"), 1358797500);
			CU_ASSERT_EQUAL(rio_example_find(rec.data, rec.size, "pickup_census_tract", &f), 0);
			CU_ASSERT_EQUAL(f.kind, RIO_FEATURE_NONE);
		}
	}
	CU_ASSERT_EQUAL(rrc, 0);
	CU_ASSERT_EQUAL(i, 5012);
	CU_ASSERT_EQUAL(features, 90216);
	CU_ASSERT_EQUAL(none, 8626);
	CU_ASSERT_EQUAL(company_none, 1738);
	CU_ASSERT_EQUAL(ts_sum, 7059424672800LL);
	rio_reader_close(r);
}

static void test_small_files(void)
{
	rio_reader *r = open_golden("tf-singles.tfrecord");
	if (!r)
		return;
	rio_record rec;
	rio_feature f;
	const uint8_t *v;
	size_t len, cursor = 0;
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT_EQUAL(int64_of(&rec, "int_feature"), 42);
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT_EQUAL(float_of(&rec, "float_feature"), 3.14f);
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "byte_feature", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 1);
	CU_ASSERT_TRUE(len == 5 && memcmp(v, "@ABCD", 5) == 0);
	CU_ASSERT_EQUAL(rio_example_find(rec.data, rec.size, "int_feature", &f), RIO_ENOFEATURE);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	rio_reader_close(r);

	r = open_golden("tf-mixed-types.tfrecord");
	if (!r)
		return;
	CU_ASSERT_EQUAL_FATAL(rio_reader_next(r, &rec), 1);
	CU_ASSERT_EQUAL(int64_of(&rec, "answer"), 42);
	CU_ASSERT_EQUAL(float_of(&rec, "pi"), 3.140000104904175f);
	cursor = 0;
	CU_ASSERT_EQUAL_FATAL(rio_example_find(rec.data, rec.size, "name", &f), 0);
	CU_ASSERT_EQUAL(rio_feature_bytes_next(&f, &cursor, &v, &len), 1);
	CU_ASSERT_TRUE(len == 3 && memcmp(v, "ABC", 3) == 0);
	CU_ASSERT_EQUAL(rio_reader_next(r, &rec), 0);
	rio_reader_close(r);
}

/* A plain copy of a TF file, each record re-written by our writer, is
 * byte-identical to TF's: the same frames, the same CRCs. (Re-encoding the
 * Examples with our builder is test_example's "every golden record
 * re-encodes identically".) */
static void test_rewrite_is_byte_identical(void)
{
	rio_reader *r = open_golden("tfx-mnist.tfrecord");
	if (!r)
		return;
	const char *out = tu_path("mnist-copy.tfrecord");
	rio_writer *w;
	rio_record rec;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, out, NULL), 0);
	while (rio_reader_next(r, &rec) == 1)
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, rec.data, rec.size, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
	rio_reader_close(r);
	size_t a_n, b_n;
	uint8_t *a = tu_read_file(tu_testdata("tfx-mnist.tfrecord"), &a_n);
	uint8_t *b = tu_read_file(out, &b_n);
	CU_ASSERT_EQUAL(a_n, b_n);
	CU_ASSERT_TRUE(a && b && a_n == b_n && memcmp(a, b, a_n) == 0);
	free(a);
	free(b);
}

/* TensorFlow's own CRCs are checked: one changed byte in the data of record
 * 500 of tfx-mnist stops the reader there with a data CRC mismatch after 500
 * intact records; a copy of the GZIP penguin file cut in half gives an
 * error (never a clean end) after a prefix of its records. */
static void test_damaged_copies(void)
{
	const char *src = tu_testdata("tfx-mnist.tfrecord");
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	size_t size;
	uint8_t *file = tu_read_file(src, &size);
	CU_ASSERT_FATAL(file != NULL && size == 1000 * 3203);
	file[500 * 3203 + 12 + 1000] ^= 0x01;
	const char *path = tu_path("mnist-damaged.tfrecord");
	tu_write_file(path, file, size);
	free(file);
	rio_reader *r;
	rio_record rec;
	int rc;
	uint64_t n = 0;
	CU_ASSERT_EQUAL_FATAL(rio_reader_open(&r, path, NULL), 0);
	while ((rc = rio_reader_next(r, &rec)) == 1)
		n++;
	CU_ASSERT_EQUAL(rc, RIO_ECORRUPT_DATA);
	CU_ASSERT_EQUAL(n, 500);
	CU_ASSERT_EQUAL(rio_reader_error(r)->offset, 500 * 3203);
	CU_ASSERT_EQUAL(rio_reader_error(r)->record, 500);
	rio_reader_close(r);

	src = tu_testdata("tfx-penguin-train.tfrecord.gz");
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	file = tu_read_file(src, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	path = tu_path("penguin-cut.tfrecord.gz");
	tu_write_file(path, file, size / 2);
	free(file);
	for (int inflater = 0; inflater < 2; inflater++) {
		if (inflater)
			setenv("RIO_INFLATE", "zlib", 1);
		int orc = rio_reader_open(&r, path, NULL);
		unsetenv("RIO_INFLATE");
		CU_ASSERT_EQUAL_FATAL(orc, 0);
		n = 0;
		while ((rc = rio_reader_next(r, &rec)) == 1)
			n++;
		CU_ASSERT(rc == RIO_ETRUNCATED || rc == RIO_ECOMPRESSED);
		CU_ASSERT(n > 0 && n < 234); /* the records before the cut came out */
		CU_ASSERT_EQUAL(rio_reader_error(r)->record, n);
		rio_reader_close(r);
	}
}

static const tu_test tests[] = {
	{"record counts, both inflaters, two buffer sizes", test_counts},
	{"tfx-mnist values", test_mnist_values},
	{"tfx-penguin (GZIP) values", test_penguin_values},
	{"tfx-external (GZIP, kindless features)", test_external_values},
	{"tf-singles and tf-mixed-types", test_small_files},
	{"rewrite is byte-identical", test_rewrite_is_byte_identical},
	{"damaged copies: TensorFlow's CRCs checked, a cut GZIP file", test_damaged_copies},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"testdata", tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

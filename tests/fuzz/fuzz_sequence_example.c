/*
 * fuzz_sequence_example.c — libFuzzer target for the tf.train.SequenceExample
 * decoder and for rio_payload_inspect.
 *
 * Checks: every view lies inside the input; a list's count is the number of
 * steps its iterator yields, and each step's accessors return its count;
 * what validates iterates to its end without an error, and errors are
 * sticky; find_list returns a list of the name asked for, and for a valid
 * record the last one of that name; rio_payload_inspect never fails and
 * agrees with the validators (a SEQUENCE_EXAMPLE validates as one, an
 * EXAMPLE as an Example).
 */
#include "fuzz_util.h"
#include "recordio.h"

#include <string.h>

#define MAXV 1024

static float fl[MAXV];
static int64_t iv[MAXV];

static int inside(const void *p, size_t n, const uint8_t *d, size_t size)
{
	return n == 0 || ((const uint8_t *)p >= d && (const uint8_t *)p + n <= d + size);
}

/* One step: its accessors agree with its count; -1 when an int64 does not
 * decode (validate must then fail). */
static int check_step(const rio_feature *f, const uint8_t *d, size_t size)
{
	CHECK(inside(f->name, f->name_len, d, size) && inside(f->list, f->list_size, d, size));
	size_t cursor = 0, len, m = 0;
	const uint8_t *v;
	int64_t k;
	int rc;
	switch (f->kind) {
	case RIO_FEATURE_NONE:
		CHECK(f->count == 0);
		return 0;
	case RIO_FEATURE_FLOAT:
		k = rio_feature_floats(f, fl, MAXV);
		CHECK(k == (int64_t)f->count);
		return 0;
	case RIO_FEATURE_INT64:
		k = rio_feature_int64s(f, iv, MAXV);
		if (k == RIO_EBADEXAMPLE)
			return -1;
		CHECK(k == (int64_t)f->count);
		return 0;
	case RIO_FEATURE_BYTES:
		while ((rc = rio_feature_bytes_next(f, &cursor, &v, &len)) == 1) {
			CHECK(inside(v, len, d, size));
			m++;
		}
		CHECK(rc == 0 && m == f->count);
		return 0;
	}
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = malloc(size ? size : 1); /* exact size: overreads are caught */
	CHECK(d);
	memcpy(d, data, size);

	int valid = rio_sequence_example_validate(d, size);
	CHECK(valid == 0 || valid == RIO_EBADEXAMPLE);
	rio_feature_lists_iter it;
	rio_feature_list list, found;
	rio_feature step;
	int rc, undecodable = 0;
	rio_feature_lists_iter_init(&it, d, size);
	while ((rc = rio_feature_lists_iter_next(&it, &list)) == 1) {
		CHECK(inside(list.name, list.name_len, d, size));
		CHECK(inside(list.entry, list.entry_size, d, size));
		rio_feature_list_iter li;
		size_t steps = 0;
		int src;
		rio_feature_list_iter_init(&li, &list);
		while ((src = rio_feature_list_iter_next(&li, &step)) == 1) {
			CHECK(step.name_len == list.name_len);
			if (check_step(&step, d, size))
				undecodable = 1;
			steps++;
		}
		CHECK(src == 0 || src == RIO_EBADEXAMPLE);
		if (src == 0)
			CHECK(steps == list.count);
		else
			CHECK(rio_feature_list_iter_next(&li, &step) == src); /* sticky */
		if (valid == 0)
			CHECK(src == 0);
		char name[128];
		if (list.name_len < sizeof name && !memchr(list.name, 0, list.name_len)) {
			memcpy(name, list.name, list.name_len);
			name[list.name_len] = '\0';
			int frc = rio_sequence_example_find_list(d, size, name, &found);
			CHECK(frc == 0 || frc == RIO_EBADEXAMPLE);
			if (valid == 0)
				CHECK(frc == 0);
			if (frc == 0)
				CHECK(found.name_len == list.name_len &&
				      !memcmp(found.name, name, list.name_len));
		}
	}
	CHECK(rc == 0 || rc == RIO_EBADEXAMPLE);
	if (rc != 0)
		CHECK(rio_feature_lists_iter_next(&it, &list) == rc);
	if (valid == 0)
		CHECK(rc == 0 && !undecodable);

	rio_payload_info info;
	CHECK(rio_payload_inspect(d, size, &info) == 0);
	if (info.kind == RIO_PAYLOAD_SEQUENCE_EXAMPLE)
		CHECK(valid == 0);
	if (info.kind == RIO_PAYLOAD_EXAMPLE)
		CHECK(rio_example_validate(d, size) == 0);
	if (info.kind == RIO_PAYLOAD_RAW)
		CHECK(info.unrepresented == 0);
	free(d);
	return 0;
}

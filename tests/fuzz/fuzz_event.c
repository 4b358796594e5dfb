/*
 * fuzz_event.c — libFuzzer target for the TensorBoard Event and Summary
 * decoder (recordio-info's event-file summary).
 *
 * Checks: only the documented codes come back; views lie inside the input;
 * a parsed Event's summary iterates to its end without an error (its
 * framing was checked by the parse), each value's scalar is found, absent
 * or malformed, never anything else; rio_event_is_file_header says 1 only
 * for an Event that parses and whose file_version starts "brain.Event:".
 */
#include "fuzz_util.h"
#include "recordio.h"

#include <errno.h>
#include <string.h>

static int inside(const void *p, size_t n, const uint8_t *d, size_t size)
{
	return n == 0 || ((const uint8_t *)p >= d && (const uint8_t *)p + n <= d + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = malloc(size ? size : 1); /* exact size: overreads are caught */
	CHECK(d);
	memcpy(d, data, size);

	rio_event ev;
	int rc = rio_event_parse(d, size, &ev);
	CHECK(rc == 0 || rc == -EBADMSG);
	int header = rio_event_is_file_header(d, size);
	CHECK(header == 0 || header == 1);
	if (header)
		CHECK(rc == 0 && ev.file_version && ev.file_version_len >= 12 &&
		      !memcmp(ev.file_version, "brain.Event:", 12));
	if (rc == 0) {
		CHECK(!ev.file_version || inside(ev.file_version, ev.file_version_len, d, size));
		CHECK(!ev.summary || inside(ev.summary, ev.summary_size, d, size));
		rio_summary_iter it;
		rio_summary_value v;
		int vrc;
		rio_summary_iter_init(&it, &ev);
		while ((vrc = rio_summary_iter_next(&it, &v)) == 1) {
			CHECK(v.tag && (v.tag_len == 0 || inside(v.tag, v.tag_len, d, size)));
			CHECK(inside(v.value, v.value_size, d, size));
			double x;
			int src = rio_summary_value_scalar(&v, &x);
			CHECK(src == 1 || src == 0 || src == -EBADMSG);
		}
		CHECK(vrc == 0);
	}
	free(d);
	return 0;
}

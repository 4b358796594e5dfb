/*
 * event_decode.c — reading the Event records of TensorBoard event files
 * (events.out.tfevents.*) in place: wall time, step, file version, and the
 * scalars of a Summary, whether written as TensorFlow 1's simple_value or
 * as TensorFlow 2's scalar tensor.
 *
 *   Event        { double wall_time = 1; int64 step = 2; oneof what {
 *                  string file_version = 3; bytes graph_def = 4;
 *                  Summary summary = 5; LogMessage log_message = 6;
 *                  SessionLog session_log = 7; TaggedRunMetadata = 8;
 *                  bytes meta_graph_def = 9; } SourceMetadata = 10; }
 *   Summary      { repeated Value value = 1; }
 *   Value        { string node_name = 7; string tag = 1; metadata = 9;
 *                  oneof value { float simple_value = 2; bytes
 *                  obsolete_old_style_histogram = 3; Image image = 4;
 *                  HistogramProto histo = 5; Audio audio = 6;
 *                  TensorProto tensor = 8; } }
 *   TensorProto  { DataType dtype = 1; TensorShapeProto tensor_shape = 2;
 *                  bytes tensor_content = 4; repeated float float_val = 5;
 *                  double double_val = 6; int32 int_val = 7;
 *                  int64 int64_val = 10; ... }
 *   TensorShapeProto { repeated Dim dim = 2 { int64 size = 1; }
 *                      bool unknown_rank = 3; }
 *
 * Why here: recordio-info recognises event files and summarises them, and
 * a fuzz target needs a parser it can call; the protobuf helpers are the
 * Example codec's. Nothing allocates. Malformed bytes are -EBADMSG.
 */
#include "config.h"
#include "internal.h"
#include "protobuf.h"

#include <errno.h>
#include <string.h>

#define BAD (-EBADMSG)

#define TAG(f, w) RIO__PB_TAG(f, w)

/* Marks an iterator that hit damage. */
static const uint8_t iter_dead;

static double load_double(const uint8_t *p)
{
	uint64_t u = rio__load_le64(p);
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static float load_float(const uint8_t *p)
{
	uint32_t u = rio__load_le32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

RIO_API int rio_event_parse(const void *data, size_t size, rio_event *ev)
{
	if (!ev || (!data && size))
		return -EINVAL;
	memset(ev, 0, sizeof *ev);
	const uint8_t *p = data, *end = p + size;
	uint32_t what = 0; /* the oneof member set last, 0 for none */
	while (p < end) {
		uint32_t tag, field;
		uint64_t v;
		const uint8_t *body;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		field = tag >> 3;
		if (field == 1) {
			if ((tag & 7) != RIO__PB_FIXED64 || end - p < 8)
				return BAD;
			ev->wall_time = load_double(p);
			p += 8;
		} else if (field == 2) {
			if ((tag & 7) != RIO__PB_VARINT || rio__pb_varint(&p, end, &v))
				return BAD;
			ev->step = (int64_t)v;
		} else if (field >= 3 && field <= 9 && (tag & 7) == RIO__PB_LEN) {
			if (rio__pb_bytes(&p, end, &body, &len))
				return BAD;
			if (what) /* replaces (or, for a Summary, merges with) the earlier */
				ev->other_fields++;
			ev->file_version = NULL;
			ev->file_version_len = 0;
			ev->summary = NULL;
			ev->summary_size = 0;
			what = field;
			if (field == 3) {
				ev->file_version = (const char *)body;
				ev->file_version_len = len;
			} else if (field == 5) {
				ev->summary = body;
				ev->summary_size = len;
			} else {
				ev->other_fields++;
			}
		} else {
			if (rio__pb_skip(&p, end, tag & 7))
				return BAD;
			ev->other_fields++;
		}
	}
	/* the Summary's framing, so that iterating it cannot fail later */
	if (ev->summary) {
		rio_summary_iter it;
		rio_summary_value sv;
		int rc;
		rio_summary_iter_init(&it, ev);
		while ((rc = rio_summary_iter_next(&it, &sv)) == 1)
			;
		if (rc < 0)
			return rc;
	}
	return 0;
}

RIO_API int rio_event_is_file_header(const void *data, size_t size)
{
	static const char magic[] = "brain.Event:";
	rio_event ev;
	if (!data || rio_event_parse(data, size, &ev) != 0 || !ev.file_version)
		return 0;
	return ev.file_version_len >= sizeof magic - 1 &&
	       !memcmp(ev.file_version, magic, sizeof magic - 1);
}

/* ---- Summary values -------------------------------------------------------- */

RIO_API void rio_summary_iter_init(rio_summary_iter *it, const rio_event *ev)
{
	it->p = ev ? ev->summary : NULL;
	it->end = it->p ? it->p + ev->summary_size : NULL;
}

RIO_API int rio_summary_iter_next(rio_summary_iter *it, rio_summary_value *v)
{
	if (!it || !v)
		return -EINVAL;
	if (it->p == &iter_dead)
		return BAD;
	while (it->p != it->end) {
		const uint8_t *p = it->p, *body;
		uint32_t tag;
		size_t len;
		if (rio__pb_tag(&p, it->end, &tag))
			goto bad;
		if (tag != TAG(1, RIO__PB_LEN)) {
			if (rio__pb_skip(&p, it->end, tag & 7))
				goto bad;
			it->p = p;
			continue;
		}
		if (rio__pb_bytes(&p, it->end, &body, &len))
			goto bad;
		it->p = p;
		/* the Value: its tag (the last one given), and its framing */
		const uint8_t *q = body, *qend = body + len, *s;
		size_t slen;
		size_t tags = 0, simple = 0;
		v->tag = "";
		v->tag_len = 0;
		v->value = body;
		v->value_size = len;
		v->other_fields = 0;
		while (q < qend) {
			if (rio__pb_tag(&q, qend, &tag))
				goto bad;
			if (tag == TAG(1, RIO__PB_LEN)) {
				if (rio__pb_bytes(&q, qend, &s, &slen))
					goto bad;
				v->tag = (const char *)s;
				v->tag_len = slen;
				if (tags++)
					v->other_fields++;
				continue;
			}
			if (rio__pb_skip(&q, qend, tag & 7))
				goto bad;
			if (tag != TAG(2, RIO__PB_FIXED32) || simple++)
				v->other_fields++;
		}
		return 1;
	}
	return 0;
bad:
	it->p = it->end = &iter_dead;
	return BAD;
}

/* ---- scalars ----------------------------------------------------------------- */

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9 };

/* The values of one repeated numeric field of a TensorProto: how many, and
 * the last one (as a double for float fields, as its varint for ints). */
typedef struct tensor_vals {
	size_t n;
	double d;
	uint64_t u;
} tensor_vals;

/* One element of wire type `wire` at *pp into `tv`. */
static int tensor_value(const uint8_t **pp, const uint8_t *end, uint32_t wire, tensor_vals *tv)
{
	if (wire == RIO__PB_FIXED32) {
		if (end - *pp < 4)
			return BAD;
		tv->d = load_float(*pp);
		*pp += 4;
	} else if (wire == RIO__PB_FIXED64) {
		if (end - *pp < 8)
			return BAD;
		tv->d = load_double(*pp);
		*pp += 8;
	} else if (rio__pb_varint(pp, end, &tv->u)) {
		return BAD;
	}
	tv->n++;
	return 0;
}

/* One occurrence of a repeated numeric field whose elements have wire type
 * `wire`: packed (length-delimited) or a single element. */
static int tensor_values(uint32_t tag, const uint8_t **pp, const uint8_t *end, uint32_t wire,
                         tensor_vals *tv)
{
	if ((tag & 7) == RIO__PB_LEN) {
		const uint8_t *body;
		size_t len;
		if (rio__pb_bytes(pp, end, &body, &len))
			return BAD;
		for (const uint8_t *bend = body + len; body < bend;)
			if (tensor_value(&body, bend, wire, tv))
				return BAD;
		return 0;
	}
	if ((tag & 7) != wire)
		return rio__pb_skip(pp, end, tag & 7) ? BAD : 0;
	return tensor_value(pp, end, wire, tv);
}

/* 1 when a TensorShapeProto body has exactly one element, 0 when not. */
static int shape_is_one(const uint8_t *p, const uint8_t *end)
{
	int one = 1;
	while (p < end) {
		uint32_t tag;
		const uint8_t *dim;
		size_t len;
		uint64_t v;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG(2, RIO__PB_LEN)) {
			if (rio__pb_bytes(&p, end, &dim, &len))
				return BAD;
			const uint8_t *dend = dim + len;
			uint64_t size = 0;
			while (dim < dend) {
				if (rio__pb_tag(&dim, dend, &tag))
					return BAD;
				if (tag == TAG(1, RIO__PB_VARINT)) {
					if (rio__pb_varint(&dim, dend, &size))
						return BAD;
				} else if (rio__pb_skip(&dim, dend, tag & 7)) {
					return BAD;
				}
			}
			if (size != 1)
				one = 0;
		} else if (tag == TAG(3, RIO__PB_VARINT)) {
			if (rio__pb_varint(&p, end, &v))
				return BAD;
			if (v) /* unknown rank */
				one = 0;
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	return one;
}

/* The scalar of a TensorProto body: 1 and *out, 0 when not a numeric
 * scalar, or -EBADMSG. */
static int tensor_scalar(const uint8_t *p, const uint8_t *end, double *out)
{
	uint64_t dtype = 0;
	int one = 1, rc;
	const uint8_t *content = NULL;
	size_t content_len = 0;
	tensor_vals fv = {0, 0, 0}, dv = {0, 0, 0}, iv = {0, 0, 0}, lv = {0, 0, 0};
	while (p < end) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG(1, RIO__PB_VARINT)) {
			rc = rio__pb_varint(&p, end, &dtype) ? BAD : 0;
		} else if (tag == TAG(2, RIO__PB_LEN)) {
			if (rio__pb_bytes(&p, end, &body, &len))
				return BAD;
			if ((rc = shape_is_one(body, body + len)) >= 0) {
				one = rc; /* the last shape given */
				rc = 0;
			}
		} else if (tag == TAG(4, RIO__PB_LEN)) {
			rc = rio__pb_bytes(&p, end, &content, &content_len) ? BAD : 0;
		} else if ((tag >> 3) == 5) {
			rc = tensor_values(tag, &p, end, RIO__PB_FIXED32, &fv);
		} else if ((tag >> 3) == 6) {
			rc = tensor_values(tag, &p, end, RIO__PB_FIXED64, &dv);
		} else if ((tag >> 3) == 7) {
			rc = tensor_values(tag, &p, end, RIO__PB_VARINT, &iv);
		} else if ((tag >> 3) == 10) {
			rc = tensor_values(tag, &p, end, RIO__PB_VARINT, &lv);
		} else {
			rc = rio__pb_skip(&p, end, tag & 7) ? BAD : 0;
		}
		if (rc < 0)
			return rc;
	}
	if (!one)
		return 0;
	size_t width;
	tensor_vals *tv;
	switch (dtype) {
	case DT_FLOAT: width = 4; tv = &fv; break;
	case DT_DOUBLE: width = 8; tv = &dv; break;
	case DT_INT32: width = 4; tv = &iv; break;
	case DT_INT64: width = 8; tv = &lv; break;
	default: return 0;
	}
	if (content_len) { /* tensor_content: the element, little-endian */
		if (content_len != width)
			return 0;
		switch (dtype) {
		case DT_FLOAT: *out = load_float(content); break;
		case DT_DOUBLE: *out = load_double(content); break;
		case DT_INT32: *out = (double)(int32_t)rio__load_le32(content); break;
		default: *out = (double)(int64_t)rio__load_le64(content); break;
		}
		return 1;
	}
	if (tv->n > 1)
		return 0;
	if (tv->n == 0) { /* no values: TensorFlow's zero */
		*out = 0;
		return 1;
	}
	if (dtype == DT_FLOAT || dtype == DT_DOUBLE)
		*out = tv->d;
	else if (dtype == DT_INT32)
		*out = (double)(int32_t)tv->u;
	else
		*out = (double)(int64_t)tv->u;
	return 1;
}

RIO_API int rio_summary_value_scalar(const rio_summary_value *v, double *out)
{
	if (!v || !out || (!v->value && v->value_size))
		return -EINVAL;
	const uint8_t *p = v->value, *end = p + v->value_size;
	const uint8_t *tensor = NULL;
	size_t tensor_len = 0;
	float simple = 0;
	uint32_t what = 0; /* the oneof member set last */
	while (p < end) {
		uint32_t tag, field;
		const uint8_t *body;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		field = tag >> 3;
		if (tag == TAG(2, RIO__PB_FIXED32)) {
			if (end - p < 4)
				return BAD;
			simple = load_float(p);
			p += 4;
			what = 2;
		} else if (field >= 3 && field <= 8 && field != 7 && (tag & 7) == RIO__PB_LEN) {
			if (rio__pb_bytes(&p, end, &body, &len))
				return BAD;
			what = field;
			if (field == 8) {
				tensor = body;
				tensor_len = len;
			}
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	if (what == 2) {
		*out = simple;
		return 1;
	}
	if (what == 8)
		return tensor_scalar(tensor, tensor + tensor_len, out);
	return 0;
}

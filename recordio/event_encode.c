/*
 * event_encode.c — writing TensorBoard Events (the layout is in
 * event_decode.c and recordio.h): the file header and scalar summaries as
 * Summary.Value.simple_value, byte for byte what TensorBoard's own
 * EventFileWriter writes for them, so that recordio-train can write event
 * files with rio_writer and no protobuf library. Nothing allocates.
 */
#include "config.h"
#include "internal.h"
#include "protobuf.h"

#include <string.h>

#define TAG(f, w) RIO__PB_TAG(f, w)

/* A counting writer: bytes past `cap` are counted, not stored. */
typedef struct out {
	uint8_t *p;
	size_t n, cap;
} out;

static void put(out *o, const void *b, size_t n)
{
	if (o->n < o->cap)
		memcpy(o->p + o->n, b, o->cap - o->n < n ? o->cap - o->n : n);
	o->n += n;
}

static void put_varint(out *o, uint64_t v)
{
	uint8_t b[10];
	put(o, b, (size_t)(rio__pb_put_varint(b, v) - b));
}

static void put_bytes(out *o, uint32_t field, const void *b, size_t n)
{
	put_varint(o, TAG(field, RIO__PB_LEN));
	put_varint(o, n);
	put(o, b, n);
}

/* Bytes of one Summary.Value { tag = 1; simple_value = 2 }. */
static size_t value_size(const rio_scalar *s)
{
	size_t t = strlen(s->tag);
	return 1 + rio__pb_varint_size(t) + t + 1 + 4;
}

RIO_API size_t rio_event_encode(void *buf, size_t cap, double wall_time, int64_t step,
                                const char *file_version, const rio_scalar *values, size_t n)
{
	if ((!buf && cap) || (n && !values) || (file_version && n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!values[i].tag)
			return 0;
	out o = {buf, 0, cap};
	uint8_t b[8];
	uint64_t u;
	memcpy(&u, &wall_time, sizeof u);
	rio__store_le64(b, u);
	put_varint(&o, TAG(1, RIO__PB_FIXED64));
	put(&o, b, 8);
	if (step) { /* proto3: a zero is left out */
		put_varint(&o, TAG(2, RIO__PB_VARINT));
		put_varint(&o, (uint64_t)step);
	}
	if (file_version) {
		put_bytes(&o, 3, file_version, strlen(file_version));
		return o.n;
	}
	size_t summary = 0;
	for (size_t i = 0; i < n; i++) {
		size_t v = value_size(&values[i]);
		summary += 1 + rio__pb_varint_size(v) + v;
	}
	put_varint(&o, TAG(5, RIO__PB_LEN));
	put_varint(&o, summary);
	for (size_t i = 0; i < n; i++) {
		put_varint(&o, TAG(1, RIO__PB_LEN));
		put_varint(&o, value_size(&values[i]));
		put_bytes(&o, 1, values[i].tag, strlen(values[i].tag));
		float f = values[i].value;
		uint32_t w;
		memcpy(&w, &f, sizeof w);
		rio__store_le32(b, w);
		put_varint(&o, TAG(2, RIO__PB_FIXED32));
		put(&o, b, 4);
	}
	return o.n;
}

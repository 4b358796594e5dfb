/*
 * protobuf.h — the few protobuf wire-format helpers the Example codec needs.
 *
 * Why hand-written: a tf.train.Example is three nested messages of one field
 * each, and the loader decodes one per record at millions per second; a
 * protobuf library would allocate a message tree per record. These helpers
 * read straight from the caller's bytes with a bounds check on every byte,
 * and write into buffers the caller sized with rio__pb_varint_size().
 *
 * Reading: each reader takes a cursor `*pp` and the end of the buffer,
 * advances the cursor past what it read and returns 0, or returns -1 and
 * leaves the cursor alone when the bytes are malformed: a varint longer than
 * 10 bytes or cut off by `end`, a tag of field number 0 or above 2^32, a
 * group (wire types 3 and 4, which no Example uses) or wire types 6 and 7, a
 * length that runs past `end`. Nothing ever reads at or beyond `end`.
 */
#ifndef RIO_PROTOBUF_H
#define RIO_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "endian.h"

enum {
	RIO__PB_VARINT = 0,
	RIO__PB_FIXED64 = 1,
	RIO__PB_LEN = 2,
	RIO__PB_FIXED32 = 5,
};

/* A tag as one number: (field << 3) | wire type. */
#define RIO__PB_TAG(field, wire) (((uint32_t)(field) << 3) | (uint32_t)(wire))

/* Reads a varint of at most 10 bytes. Bits beyond 64 in the 10th byte are
 * dropped, as protobuf does. */
static inline int rio__pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	if (p < end && *p < 0x80) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	uint64_t v = 0;
	if (end - p >= 10) { /* all 10 bytes are there: no bound check per byte */
		for (unsigned shift = 0; shift < 70; shift += 7) {
			uint8_t b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (b < 0x80) {
				*out = v;
				*pp = p;
				return 0;
			}
		}
		return -1;
	}
	for (unsigned shift = 0; p < end; shift += 7) { /* < 10 bytes left */
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* Reads a tag: *tag = (field << 3) | wire. Rejects field 0, tags beyond 32
 * bits and wire types other than 0, 1, 2, 5. */
static inline int rio__pb_tag(const uint8_t **pp, const uint8_t *end, uint32_t *tag)
{
	const uint8_t *p = *pp;
	uint64_t v;
	if (p < end && *p < 0x80) { /* fields 1..15: the common case */
		v = *p++;
	} else if (rio__pb_varint(&p, end, &v)) {
		return -1;
	}
	if (v > UINT32_MAX || (v >> 3) == 0)
		return -1;
	switch (v & 7) {
	case RIO__PB_VARINT:
	case RIO__PB_FIXED64:
	case RIO__PB_LEN:
	case RIO__PB_FIXED32:
		break;
	default: /* 3, 4: groups; 6, 7: undefined */
		return -1;
	}
	*tag = (uint32_t)v;
	*pp = p;
	return 0;
}

/* Reads the length of a length-delimited field and hands out its body:
 * *body = the bytes, *len = their count; the cursor moves past them. */
static inline int rio__pb_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t **body,
                                size_t *len)
{
	const uint8_t *p = *pp;
	uint64_t n;
	if (rio__pb_varint(&p, end, &n) || n > (uint64_t)(end - p))
		return -1;
	*body = p;
	*len = (size_t)n;
	*pp = p + n;
	return 0;
}

/* Skips the value of a field of wire type `wire` (the tag already read). */
static inline int rio__pb_skip(const uint8_t **pp, const uint8_t *end, uint32_t wire)
{
	const uint8_t *p = *pp;
	uint64_t v;
	const uint8_t *body;
	size_t len;
	switch (wire) {
	case RIO__PB_VARINT:
		return rio__pb_varint(pp, end, &v);
	case RIO__PB_FIXED64:
		if (end - p < 8)
			return -1;
		*pp = p + 8;
		return 0;
	case RIO__PB_LEN:
		return rio__pb_bytes(pp, end, &body, &len);
	case RIO__PB_FIXED32:
		if (end - p < 4)
			return -1;
		*pp = p + 4;
		return 0;
	default:
		return -1;
	}
}

/* ---- writing --------------------------------------------------------------- */

/* Bytes the varint encoding of `v` takes: 1 to 10. */
static inline size_t rio__pb_varint_size(uint64_t v)
{
	/* 1 + floor(bits / 7), with v | 1 keeping clzll defined for 0 */
	unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
	return (size_t)((bits * 9u + 64u) / 64u);
}

/* Writes `v` as a varint at `p` and returns the position after it. */
static inline uint8_t *rio__pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

#endif /* RIO_PROTOBUF_H */

/*
 * example_encode.c — building a serialized tf.train.Example.
 *
 * The builder appends one map entry per add to the Features body in b->buf,
 * each written exactly as TensorFlow's C++ serializer writes it, so that the
 * same features in the same order give byte-identical output:
 *
 *   0a len  (entry)  0a len key  12 len (Feature)  T len (list)  values
 *
 * with T = 0a bytes_list, 12 float_list, 1a int64_list. Bytes values are
 * repeated fields (0a len value each); floats and int64 are one packed field
 * (0a len data) that is left out when the list is empty, as proto3 does. A
 * Feature with no kind is "12 00"; an empty key is "0a 00" (map entries
 * always write both fields). Every size is computed before anything is
 * written, so each add grows the buffer at most once.
 *
 * rio_example_finish() wraps the body as Example.features: "0a len body".
 * With no features added that is "0a 00" (an Example whose empty Features is
 * set); TensorFlow writes an Example with nothing set as 0 bytes. Both decode
 * as an Example without features. A NULL name is taken as "".
 */
#include "config.h"
#include "internal.h"
#include "grow.h"
#include "protobuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SZ(v) rio__pb_varint_size(v)

/* Bytes a length-delimited field with a body of `len` bytes takes. */
static inline size_t field_size(size_t len)
{
	return 1 + SZ(len) + len;
}

static int fail(rio_example_builder *b, int err)
{
	b->failed = err;
	return err;
}

/* Makes room for `more` bytes after b->size. */
static int reserve(rio_example_builder *b, size_t more)
{
	if (more <= b->cap - b->size)
		return 0;
	if (more > SIZE_MAX / 2 - b->size)
		return fail(b, -ENOMEM);
	int rc = rio__grow(&b->buf, &b->cap, b->size + more, 1, 256);
	return rc ? fail(b, rc) : 0;
}

/* Reserves and writes an entry's head, up to the list's own tag:
 * "0a entry_len 0a key_len key 12 feature_len", where the Feature holds one
 * field of `list_tag` (0 for none) with a body of `list_len` bytes. Returns
 * the write position, or NULL after failing `b`. */
static uint8_t *entry_begin(rio_example_builder *b, const char *name, uint32_t list_tag,
                            size_t list_len)
{
	size_t key_len = name ? strlen(name) : 0;
	/* a list this large cannot be in memory: stop before the sums wrap */
	if (list_len > SIZE_MAX / 4 || key_len > SIZE_MAX / 4) {
		fail(b, -ENOMEM);
		return NULL;
	}
	size_t feature_len = list_tag ? field_size(list_len) : 0;
	size_t entry_len = field_size(key_len) + field_size(feature_len);
	if (reserve(b, field_size(entry_len)))
		return NULL;
	uint8_t *p = b->buf + b->size;
	*p++ = 0x0a;
	p = rio__pb_put_varint(p, entry_len);
	*p++ = 0x0a;
	p = rio__pb_put_varint(p, key_len);
	if (key_len)
		memcpy(p, name, key_len);
	p += key_len;
	*p++ = 0x12;
	p = rio__pb_put_varint(p, feature_len);
	if (list_tag) {
		*p++ = (uint8_t)list_tag;
		p = rio__pb_put_varint(p, list_len);
	}
	return p;
}

/* Ends an entry written up to `p`. */
static int entry_end(rio_example_builder *b, uint8_t *p)
{
	b->size = (size_t)(p - b->buf);
	return 0;
}

RIO_API void rio_example_builder_init(rio_example_builder *b)
{
	memset(b, 0, sizeof *b);
}

RIO_API void rio_example_builder_reset(rio_example_builder *b)
{
	b->size = 0;
	b->failed = 0;
}

RIO_API void rio_example_builder_free(rio_example_builder *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b->out);
	memset(b, 0, sizeof *b);
}

RIO_API int rio_example_add_bytes(rio_example_builder *b, const char *name, const void *value,
                                  size_t len)
{
	return rio_example_add_bytes_list(b, name, &value, &len, 1);
}

RIO_API int rio_example_add_bytes_list(rio_example_builder *b, const char *name,
                                       const void *const *values, const size_t *lens, size_t n)
{
	if (b->failed)
		return b->failed;
	size_t list_len = 0;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] > SIZE_MAX / 4 || list_len > SIZE_MAX / 4)
			return fail(b, -ENOMEM);
		list_len += field_size(lens[i]);
	}
	uint8_t *p = entry_begin(b, name, RIO__PB_TAG(1, RIO__PB_LEN), list_len);
	if (!p)
		return b->failed;
	for (size_t i = 0; i < n; i++) {
		*p++ = 0x0a;
		p = rio__pb_put_varint(p, lens[i]);
		if (lens[i])
			memcpy(p, values[i], lens[i]);
		p += lens[i];
	}
	return entry_end(b, p);
}

RIO_API int rio_example_add_floats(rio_example_builder *b, const char *name, const float *v,
                                   size_t n)
{
	if (b->failed)
		return b->failed;
	if (n > SIZE_MAX / 16)
		return fail(b, -ENOMEM);
	size_t data_len = n * 4;
	uint8_t *p = entry_begin(b, name, RIO__PB_TAG(2, RIO__PB_LEN),
	                         n ? field_size(data_len) : 0);
	if (!p)
		return b->failed;
	if (n) {
		*p++ = 0x0a;
		p = rio__pb_put_varint(p, data_len);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(p, v, data_len);
#else
		for (size_t i = 0; i < n; i++) {
			uint32_t u;
			memcpy(&u, &v[i], 4);
			u = __builtin_bswap32(u);
			memcpy(p + 4 * i, &u, 4);
		}
#endif
		p += data_len;
	}
	return entry_end(b, p);
}

RIO_API int rio_example_add_int64s(rio_example_builder *b, const char *name, const int64_t *v,
                                   size_t n)
{
	if (b->failed)
		return b->failed;
	if (n > SIZE_MAX / 16)
		return fail(b, -ENOMEM);
	size_t data_len = 0;
	for (size_t i = 0; i < n; i++)
		data_len += SZ((uint64_t)v[i]);
	uint8_t *p = entry_begin(b, name, RIO__PB_TAG(3, RIO__PB_LEN),
	                         n ? field_size(data_len) : 0);
	if (!p)
		return b->failed;
	if (n) {
		*p++ = 0x0a;
		p = rio__pb_put_varint(p, data_len);
		for (size_t i = 0; i < n; i++)
			p = rio__pb_put_varint(p, (uint64_t)v[i]);
	}
	return entry_end(b, p);
}

RIO_API int rio_example_add_empty(rio_example_builder *b, const char *name)
{
	if (b->failed)
		return b->failed;
	uint8_t *p = entry_begin(b, name, 0, 0);
	if (!p)
		return b->failed;
	return entry_end(b, p);
}

RIO_API int rio_example_finish(rio_example_builder *b, const uint8_t **data, size_t *size)
{
	if (b->failed)
		return b->failed;
	size_t total = field_size(b->size);
	int rc = rio__grow(&b->out, &b->out_cap, total, 1, 256);
	if (rc)
		return fail(b, rc);
	uint8_t *p = b->out;
	*p++ = 0x0a;
	p = rio__pb_put_varint(p, b->size);
	if (b->size)
		memcpy(p, b->buf, b->size);
	*data = b->out;
	*size = total;
	return 0;
}

/*
 * example_decode.c — reading a serialized tf.train.Example in place.
 *
 *   Example  { Features features = 1; }
 *   Features { map<string, Feature> feature = 1; }  entry: key = 1, value = 2
 *   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
 *                           Int64List int64_list = 3; } }
 *   BytesList { repeated bytes value = 1; }
 *   FloatList { repeated float value = 1 [packed]; }   packed or not
 *   Int64List { repeated int64 value = 1 [packed]; }   packed or not
 *
 * Why in place: the loader decodes one Example per record at millions per
 * second, so nothing here allocates or copies more than the values the caller
 * asks for. A rio_feature is a view of the list message inside the caller's
 * bytes; its count is taken when it is found, and the typed accessors walk
 * the list again to copy values out.
 *
 * Protobuf semantics, as the C++ parser applies them:
 *   - unknown fields (wire types 0, 1, 2, 5) are skipped at every level, and
 *     so is a known field number that arrives with another wire type;
 *     groups (wire types 3, 4) and wire types 6, 7 are malformed (protobuf
 *     would skip a group; no Example carries one);
 *   - Example.features given several times merges: iteration sees every
 *     entry of every Features in order, find sees them all;
 *   - a map key given twice: find returns the last entry (iteration yields
 *     both); an entry without a key has the name "" (length 0);
 *   - an entry's value given twice, or a Feature's oneof set twice: the last
 *     list set wins (a later value with no kind set leaves the earlier kind
 *     in place). Protobuf would also concatenate two occurrences of the
 *     same list kind; no writer emits that, and a view cannot span two
 *     pieces, so here the last one wins;
 *   - keys are taken as bytes (not checked for UTF-8).
 * Find and iteration check the structure they walk (every length, tag and
 * varint, and the list they return); rio_example_validate() checks all of it,
 * including lists a later occurrence overrode and every int64 varint (find
 * counts a packed int64 list by the bytes that end a varint and does not decode it, so a
 * varint over 10 bytes there fails in the accessor, not in find).
 *
 * Where the header is silent: a feature of kind NONE has no values, so the
 * numeric accessors return 0 and rio_feature_bytes_next() returns 0; `out`
 * may be NULL when `max` is 0 (to ask for the count); NULL arguments give
 * -EINVAL; a bytes cursor past the list gives RIO_ERANGE.
 */
#include "config.h"
#include "internal.h"
#include "example_internal.h"
#include "half.h"
#include "protobuf.h"

#include <errno.h>
#include <string.h>

#define BAD RIO_EBADEXAMPLE

#define TAG_LEN1 RIO__PB_TAG(1, RIO__PB_LEN)          /* 0x0a */
#define TAG_LEN2 RIO__PB_TAG(2, RIO__PB_LEN)          /* 0x12 */
#define TAG_FIXED32_1 RIO__PB_TAG(1, RIO__PB_FIXED32) /* 0x0d */
#define TAG_VARINT1 RIO__PB_TAG(1, RIO__PB_VARINT)    /* 0x08 */

/* ---- lists ----------------------------------------------------------------- */

/* Counts the varints of a packed int64 chunk: the bytes that end one. With
 * `strict`, also checks that none is longer than 10 bytes. */
static int count_packed_varints(const uint8_t *p, const uint8_t *end, int strict, size_t *count)
{
	size_t n = 0;
	if (p == end)
		return 0;
	if (end[-1] & 0x80) /* the last varint runs past the chunk */
		return BAD;
	if (strict) {
		uint64_t v;
		while (p < end) {
			if (rio__pb_varint(&p, end, &v))
				return BAD;
			n++;
		}
	} else {
		for (; p < end; p++)
			n += *p < 0x80;
	}
	*count += n;
	return 0;
}

/* Counts the values of a list body of kind `kind`, checking its structure. */
static int list_count(rio_feature_kind kind, const uint8_t *p, const uint8_t *end, int strict,
                      size_t *count)
{
	size_t n = 0;
	while (p < end) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		uint64_t v;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			if (rio__pb_bytes(&p, end, &body, &len))
				return BAD;
			if (kind == RIO_FEATURE_BYTES) {
				n++;
			} else if (kind == RIO_FEATURE_FLOAT) {
				if (len & 3)
					return BAD;
				n += len / 4;
			} else if (count_packed_varints(body, body + len, strict, &n)) {
				return BAD;
			}
		} else if (tag == TAG_FIXED32_1 && kind == RIO_FEATURE_FLOAT) {
			if (end - p < 4)
				return BAD;
			p += 4;
			n++;
		} else if (tag == TAG_VARINT1 && kind == RIO_FEATURE_INT64) {
			if (rio__pb_varint(&p, end, &v))
				return BAD;
			n++;
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	*count = n;
	return 0;
}

/* ---- Feature and map entry ------------------------------------------------- */

/* Parses a Feature message body into f's kind/count/list. With `deep`,
 * checks every list in it, not only the one that wins. */
int rio__feature_parse(const uint8_t *p, const uint8_t *end, int deep, rio_feature *f)
{
	rio_feature_kind kind = RIO_FEATURE_NONE;
	const uint8_t *list = NULL;
	size_t list_size = 0, count = 0;
	while (p < end) {
		uint32_t tag;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		uint32_t field = tag >> 3;
		if ((tag & 7) == RIO__PB_LEN && field >= 1 && field <= 3) {
			if (rio__pb_bytes(&p, end, &list, &list_size))
				return BAD;
			kind = (rio_feature_kind)field;
			if (deep && list_count(kind, list, list + list_size, 1, &count))
				return BAD;
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	/* deep: the loop counted every list, the last (the one that wins) too */
	if (!deep && kind != RIO_FEATURE_NONE && list_count(kind, list, list + list_size, 0, &count))
		return BAD;
	f->kind = kind;
	f->list = list;
	f->list_size = list_size;
	f->count = count;
	return 0;
}

/* Parses a map entry (key = 1, value = 2) into *f. */
static int parse_entry(const uint8_t *p, const uint8_t *end, int deep, rio_feature *f)
{
	const uint8_t *key = (const uint8_t *)"";
	size_t key_len = 0;
	int have_value = 0;
	rio_feature v;
	f->kind = RIO_FEATURE_NONE;
	f->count = 0;
	f->list = NULL;
	f->list_size = 0;
	while (p < end) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			if (rio__pb_bytes(&p, end, &key, &key_len))
				return BAD;
		} else if (tag == TAG_LEN2) {
			if (rio__pb_bytes(&p, end, &body, &len) ||
			    rio__feature_parse(body, body + len, deep, &v))
				return BAD;
			/* merging a Feature with no kind set changes nothing */
			if (!have_value || v.kind != RIO_FEATURE_NONE) {
				f->kind = v.kind;
				f->count = v.count;
				f->list = v.list;
				f->list_size = v.list_size;
				have_value = 1;
			}
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	f->name = (const char *)key;
	f->name_len = key_len;
	return 0;
}

/* ---- Example --------------------------------------------------------------- */

RIO_API int rio_example_find(const void *data, size_t size, const char *name, rio_feature *f)
{
	if (!name || !f || (!data && size))
		return -EINVAL;
	if (!size)
		return RIO_ENOFEATURE;
	const uint8_t *entry;
	size_t len;
	int rc = rio__map_find(data, size, TAG_LEN1, name, strlen(name), &entry, &len);
	if (rc)
		return rc;
	return parse_entry(entry, entry + len, 0, f);
}

RIO_API void rio_example_iter_init(rio_example_iter *it, const void *data, size_t size)
{
	it->p = data;
	it->end = data ? it->p + size : NULL;
	it->fp = NULL;
	it->fend = NULL;
}

/* The next feature; `deep` also checks every value of its list (and of
 * lists a later occurrence overrides). */
static int iter_step(rio_example_iter *it, rio_feature *f, int deep)
{
	const uint8_t *entry;
	size_t len;
	int rc = rio__nested_next(&it->p, it->end, &it->fp, &it->fend, TAG_LEN1, &entry, &len);
	if (rc == 1 && parse_entry(entry, entry + len, deep, f))
		return rio__nested_fail(&it->fp, &it->fend);
	return rc;
}

RIO_API int rio_example_iter_next(rio_example_iter *it, rio_feature *f)
{
	return iter_step(it, f, 0);
}

RIO_API int rio_example_validate(const void *data, size_t size)
{
	if (!data)
		return size ? -EINVAL : 0;
	rio_example_iter it;
	rio_feature f;
	int rc;
	rio_example_iter_init(&it, data, size);
	while ((rc = iter_step(&it, &f, 1)) == 1)
		;
	return rc;
}

/* ---- typed access ---------------------------------------------------------- */

static void copy_floats(float *out, const uint8_t *p, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, p, n * sizeof(float));
#else
	for (size_t i = 0; i < n; i++) {
		uint32_t u = rio__load_le32(p + 4 * i);
		memcpy(&out[i], &u, 4);
	}
#endif
}

/* Floats at p (little-endian), times `scale`, as bf16 (half.h). */
static void floats_to_bf16(uint16_t *out, const uint8_t *p, size_t n, float scale)
{
	for (size_t i = 0; i < n; i++)
		out[i] = rio__bf16_from_f32(rio__f32_from_bits(rio__load_le32(p + 4 * i)) * scale);
}

/* Where decoded values go: `oi` as int64 (an Int64List only), else `ob`
 * as bf16 of each value times `scale`, else `of` as float. */
typedef struct sink {
	int64_t *oi;
	float *of;
	uint16_t *ob;
	float scale;
} sink;

static inline void sink_put(const sink *s, size_t n, int64_t v)
{
	if (s->oi)
		s->oi[n] = v;
	else if (s->ob)
		s->ob[n] = rio__bf16_from_f32((float)v * s->scale);
	else
		s->of[n] = (float)v;
}

/* The float values of a FloatList body into `s` (of or ob): copies up to
 * `max`, returns all. */
static int64_t decode_floats(const uint8_t *p, size_t size, const sink *s, size_t max)
{
	const uint8_t *end = p + size;
	size_t n = 0;
	while (p < end) {
		uint32_t tag;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		const uint8_t *body = p;
		size_t k = 1;
		if (tag == TAG_LEN1) {
			size_t len;
			if (rio__pb_bytes(&p, end, &body, &len) || (len & 3))
				return BAD;
			k = len / 4;
		} else if (tag == TAG_FIXED32_1) {
			if (end - p < 4)
				return BAD;
			p += 4;
		} else {
			if (rio__pb_skip(&p, end, tag & 7))
				return BAD;
			continue;
		}
		if (n < max) {
			size_t take = k < max - n ? k : max - n;
			if (s->ob)
				floats_to_bf16(s->ob + n, body, take, s->scale);
			else
				copy_floats(s->of + n, body, take);
		}
		n += k;
	}
	return (int64_t)n;
}

/* The values of an Int64List body into `s`: copies up to `max`, returns
 * all. */
static inline int64_t decode_int64s(const uint8_t *p, size_t size, const sink *s, size_t max)
{
	const uint8_t *end = p + size;
	size_t n = 0;
	uint64_t v;
	while (p < end) {
		uint32_t tag;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			const uint8_t *q, *qend;
			size_t len;
			if (rio__pb_bytes(&p, end, &q, &len))
				return BAD;
			qend = q + len;
			for (; q < qend && n < max; n++) {
				if (rio__pb_varint(&q, qend, &v))
					return BAD;
				sink_put(s, n, (int64_t)v);
			}
			for (; q < qend; n++) /* past max: count, still checking */
				if (rio__pb_varint(&q, qend, &v))
					return BAD;
		} else if (tag == TAG_VARINT1) {
			if (rio__pb_varint(&p, end, &v))
				return BAD;
			if (n < max)
				sink_put(s, n, (int64_t)v);
			n++;
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	return (int64_t)n;
}

/* Common checks of the typed accessors: 1 to go on, 0 for a feature with
 * no kind (no values), or an error. */
static int check_feature(const rio_feature *f, const void *out, size_t max)
{
	if (!f || (!out && max))
		return -EINVAL;
	if (f->kind == RIO_FEATURE_NONE)
		return 0;
	if (!f->list && f->list_size)
		return -EINVAL;
	return 1;
}

RIO_API int64_t rio_feature_floats(const rio_feature *f, float *out, size_t max)
{
	int rc = check_feature(f, out, max);
	if (rc <= 0)
		return rc;
	if (f->kind != RIO_FEATURE_FLOAT)
		return RIO_EFEATUREKIND;
	if (!f->list_size)
		return 0;
	sink s = {.of = out};
	return decode_floats(f->list, f->list_size, &s, max);
}

RIO_API int64_t rio_feature_int64s(const rio_feature *f, int64_t *out, size_t max)
{
	int rc = check_feature(f, out, max);
	if (rc <= 0)
		return rc;
	if (f->kind != RIO_FEATURE_INT64)
		return RIO_EFEATUREKIND;
	if (!f->list_size)
		return 0;
	sink s = {.oi = out};
	return decode_int64s(f->list, f->list_size, &s, max);
}

/* rio_feature_as_floats and rio__feature_as_bf16: `s` is of or ob. */
static int64_t as_floats(const rio_feature *f, const sink *s, const void *out, size_t max)
{
	int rc = check_feature(f, out, max);
	if (rc <= 0)
		return rc;
	if (f->kind != RIO_FEATURE_FLOAT && f->kind != RIO_FEATURE_INT64)
		return RIO_EFEATUREKIND;
	if (!f->list_size)
		return 0;
	if (f->kind == RIO_FEATURE_FLOAT)
		return decode_floats(f->list, f->list_size, s, max);
	return decode_int64s(f->list, f->list_size, s, max);
}

RIO_API int64_t rio_feature_as_floats(const rio_feature *f, float *out, size_t max)
{
	sink s = {.of = out};
	return as_floats(f, &s, out, max);
}

int64_t rio__feature_as_bf16(const rio_feature *f, uint16_t *out, size_t max, float scale)
{
	sink s = {.ob = out, .scale = scale};
	return as_floats(f, &s, out, max);
}

RIO_API int rio_feature_bytes_next(const rio_feature *f, size_t *cursor, const uint8_t **value,
                                   size_t *len)
{
	if (!f || !cursor || !value || !len)
		return -EINVAL;
	if (f->kind == RIO_FEATURE_NONE)
		return 0;
	if (f->kind != RIO_FEATURE_BYTES)
		return RIO_EFEATUREKIND;
	if (*cursor > f->list_size)
		return RIO_ERANGE;
	if (!f->list)
		return f->list_size ? -EINVAL : 0;
	const uint8_t *p = f->list + *cursor, *end = f->list + f->list_size;
	while (p < end) {
		uint32_t tag;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			if (rio__pb_bytes(&p, end, value, len))
				return BAD;
			*cursor = (size_t)(p - f->list);
			return 1;
		}
		if (rio__pb_skip(&p, end, tag & 7))
			return BAD;
	}
	*cursor = f->list_size;
	return 0;
}

RIO_API const char *rio_feature_kind_name(rio_feature_kind k)
{
	switch (k) {
	case RIO_FEATURE_NONE:
		return "none";
	case RIO_FEATURE_BYTES:
		return "bytes";
	case RIO_FEATURE_FLOAT:
		return "float";
	case RIO_FEATURE_INT64:
		return "int64";
	}
	return "unknown";
}

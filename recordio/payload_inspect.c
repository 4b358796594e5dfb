/*
 * payload_inspect.c — what a record's payload is (an Example, a
 * SequenceExample or raw bytes), and whether the decoded view the iterators
 * give shows all of it.
 *
 * Why: a tool that prints a record decoded (recordio-cat's json format
 * claims to be lossless) must know when the decoder skipped something:
 * an unknown field, a known field of an unexpected wire type, or a value
 * that a later occurrence overrides (a map key or value given twice, a
 * Feature with two lists set). Those parts are counted here, so the tool
 * can add the raw bytes rather than drop them silently.
 *
 * The walk runs only after the payload validated, so every length in it is
 * known to be sound; it still uses the bounds-checked readers throughout.
 * It does not allocate: a map name given in two entries is not counted
 * (iteration shows both entries, so nothing is hidden).
 */
#include "config.h"
#include "internal.h"
#include "protobuf.h"

#include <errno.h>
#include <string.h>

#define TAG_LEN1 RIO__PB_TAG(1, RIO__PB_LEN)
#define TAG_LEN2 RIO__PB_TAG(2, RIO__PB_LEN)
#define TAG_FIXED32_1 RIO__PB_TAG(1, RIO__PB_FIXED32)
#define TAG_VARINT1 RIO__PB_TAG(1, RIO__PB_VARINT)

/* Reads the next field: its tag and, for a length-delimited one, its body
 * (else body is NULL and the value is skipped). 0 at the end or on damage
 * (not expected after validation), 1 with a field. */
static int next_field(const uint8_t **p, const uint8_t *end, uint32_t *tag, const uint8_t **body,
                      size_t *len)
{
	if (*p >= end || rio__pb_tag(p, end, tag))
		return 0;
	*body = NULL;
	*len = 0;
	if ((*tag & 7) == RIO__PB_LEN)
		return rio__pb_bytes(p, end, body, len) == 0;
	return rio__pb_skip(p, end, *tag & 7) == 0;
}

/* Unrepresented parts of a list body of kind `kind`. */
static size_t list_extra(rio_feature_kind kind, const uint8_t *p, const uint8_t *end)
{
	size_t extra = 0, len;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len))
		if (!(tag == TAG_LEN1 || (tag == TAG_FIXED32_1 && kind == RIO_FEATURE_FLOAT) ||
		      (tag == TAG_VARINT1 && kind == RIO_FEATURE_INT64)))
			extra++;
	return extra;
}

/* Unrepresented parts of a Feature body; *lists = the lists set in it. */
static size_t feature_extra(const uint8_t *p, const uint8_t *end, size_t *lists)
{
	size_t extra = 0, len;
	uint32_t tag;
	const uint8_t *body;
	*lists = 0;
	while (next_field(&p, end, &tag, &body, &len)) {
		uint32_t field = tag >> 3;
		if ((tag & 7) == RIO__PB_LEN && field >= 1 && field <= 3) {
			extra += list_extra((rio_feature_kind)field, body, body + len);
			++*lists;
		} else {
			extra++;
		}
	}
	if (*lists > 1) /* oneof: the last list set wins */
		extra += *lists - 1;
	return extra;
}

/* Unrepresented parts of a FeatureList body; counts its Features. */
static size_t feature_list_extra(const uint8_t *p, const uint8_t *end, size_t *steps)
{
	size_t extra = 0, len, lists;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len)) {
		if (tag == TAG_LEN1) {
			extra += feature_extra(body, body + len, &lists);
			++*steps;
		} else {
			extra++;
		}
	}
	return extra;
}

/* Unrepresented parts of a map entry: of Features (`list` 0) or of
 * FeatureLists (`list` 1, whose values concatenate). */
static size_t entry_extra(const uint8_t *p, const uint8_t *end, int list, size_t *steps)
{
	size_t extra = 0, len, keys = 0, set_values = 0, lists;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len)) {
		if (tag == TAG_LEN1) {
			keys++;
		} else if (tag == TAG_LEN2 && list) {
			extra += feature_list_extra(body, body + len, steps);
		} else if (tag == TAG_LEN2) {
			extra += feature_extra(body, body + len, &lists);
			set_values += lists > 0; /* a value with no kind merges away */
		} else {
			extra++;
		}
	}
	if (keys > 1)
		extra += keys - 1;
	if (set_values > 1)
		extra += set_values - 1;
	return extra;
}

/* Unrepresented parts of a Features or FeatureLists body; counts entries. */
static size_t map_extra(const uint8_t *p, const uint8_t *end, int list, size_t *entries,
                        size_t *steps)
{
	size_t extra = 0, len;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len)) {
		if (tag == TAG_LEN1) {
			extra += entry_extra(body, body + len, list, steps);
			++*entries;
		} else {
			extra++;
		}
	}
	return extra;
}

/* Walks a validated payload as an Example (`seq` 0) or a SequenceExample. */
static void walk(const uint8_t *p, const uint8_t *end, int seq, rio_payload_info *info)
{
	size_t len;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len)) {
		if (tag == TAG_LEN1)
			info->unrepresented +=
				map_extra(body, body + len, 0, &info->features, &info->steps);
		else if (tag == TAG_LEN2 && seq)
			info->unrepresented +=
				map_extra(body, body + len, 1, &info->feature_lists, &info->steps);
		else
			info->unrepresented++;
	}
}

/* 1 when the top level of a payload has a length-delimited field 2. */
static int has_field2(const uint8_t *p, const uint8_t *end)
{
	size_t len;
	uint32_t tag;
	const uint8_t *body;
	while (next_field(&p, end, &tag, &body, &len))
		if (tag == TAG_LEN2)
			return 1;
	return 0;
}

RIO_API int rio_payload_inspect(const void *data, size_t size, rio_payload_info *info)
{
	if (!info || (!data && size))
		return -EINVAL;
	memset(info, 0, sizeof *info);
	if (size == 0) {
		info->kind = RIO_PAYLOAD_EXAMPLE;
		return 0;
	}
	const uint8_t *p = data, *end = p + size;
	if (has_field2(p, end) && rio_sequence_example_validate(data, size) == 0) {
		walk(p, end, 1, info);
		if (info->features || info->feature_lists) {
			info->kind = RIO_PAYLOAD_SEQUENCE_EXAMPLE;
			return 0;
		}
		memset(info, 0, sizeof *info);
	}
	if (rio_example_validate(data, size) == 0) {
		walk(p, end, 0, info);
		if (info->features) {
			info->kind = RIO_PAYLOAD_EXAMPLE;
			return 0;
		}
	}
	memset(info, 0, sizeof *info); /* RAW: the bytes are the whole view */
	return 0;
}

RIO_API const char *rio_payload_kind_name(rio_payload_kind k)
{
	switch (k) {
	case RIO_PAYLOAD_RAW:
		return "raw";
	case RIO_PAYLOAD_EXAMPLE:
		return "example";
	case RIO_PAYLOAD_SEQUENCE_EXAMPLE:
		return "sequence_example";
	}
	return "unknown";
}

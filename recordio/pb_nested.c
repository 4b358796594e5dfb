/*
 * pb_nested.c — the one walk the Example family's decoders share: the items
 * of field 1 (length-delimited) inside every occurrence of a length-delimited
 * field of a message. Protobuf merges a message field given several times,
 * so the items are those of every occurrence, in order:
 *
 *   Example.features (1)              -> Features.feature (1)        map entries
 *   SequenceExample.feature_lists (2) -> FeatureLists.feature_list (1) map entries
 *   FeatureLists entry.value (2)      -> FeatureList.feature (1)     Features
 *
 * Here: the step of the iterators (rio_example_iter, rio_feature_lists_iter,
 * rio_feature_list_iter) and the key of a map entry. The search for a key,
 * rio__map_find(), is the same walk as two loops, inline in
 * example_internal.h (rio_example_find() runs per record in the loader).
 * Unknown fields and known fields of another wire type are skipped at both
 * levels; anything malformed is RIO_EBADEXAMPLE.
 */
#include "config.h"
#include "example_internal.h"
#include "protobuf.h"

#define BAD RIO_EBADEXAMPLE

#define TAG_LEN1 RIO__PB_TAG(1, RIO__PB_LEN) /* 0x0a */

/* Marks a walk that hit damage: it keeps returning the error. */
static const uint8_t walk_dead;

int rio__nested_next(const uint8_t **p, const uint8_t *end, const uint8_t **in,
                     const uint8_t **in_end, uint32_t outer_tag, const uint8_t **item,
                     size_t *item_len)
{
	if (*in == &walk_dead)
		return BAD;
	for (;;) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		while (*in != *in_end) { /* the next item of this occurrence */
			const uint8_t *q = *in;
			if (rio__pb_tag(&q, *in_end, &tag))
				goto fail;
			if (tag != TAG_LEN1) {
				if (rio__pb_skip(&q, *in_end, tag & 7))
					goto fail;
				*in = q;
				continue;
			}
			if (rio__pb_bytes(&q, *in_end, item, item_len))
				goto fail;
			*in = q;
			return 1;
		}
		if (*p == end) /* also a message of 0 bytes */
			return 0;
		const uint8_t *q = *p; /* the next occurrence of the outer field */
		if (rio__pb_tag(&q, end, &tag))
			goto fail;
		if (tag == outer_tag) {
			if (rio__pb_bytes(&q, end, &body, &len))
				goto fail;
			*in = body;
			*in_end = body + len;
		} else if (rio__pb_skip(&q, end, tag & 7)) {
			goto fail;
		}
		*p = q;
	}
fail:
	return rio__nested_fail(in, in_end);
}

int rio__nested_fail(const uint8_t **in, const uint8_t **in_end)
{
	*in = *in_end = &walk_dead;
	return BAD;
}

int rio__entry_key(const uint8_t *p, const uint8_t *end, const uint8_t **key, size_t *key_len)
{
	*key = NULL;
	*key_len = 0;
	while (p < end) {
		uint32_t tag;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			if (rio__pb_bytes(&p, end, key, key_len))
				return BAD;
		} else if (rio__pb_skip(&p, end, tag & 7)) {
			return BAD;
		}
	}
	return 0;
}

/*
 * example_internal.h — the pieces of the Example decoder that the
 * SequenceExample decoder and the payload inspection reuse (a FeatureList
 * holds the same Feature messages an Example's map does), and the map walk
 * both decoders share (pb_nested.c); not installed.
 */
#ifndef RIO_EXAMPLE_INTERNAL_H
#define RIO_EXAMPLE_INTERNAL_H

#include "protobuf.h"
#include "recordio.h"

#include <string.h>

/* Parses a Feature message body [p, end) into f's kind, count and list (the
 * last list set wins; f->name is left alone). With `deep`, checks every
 * value of every list in it, not only of the one that wins. Returns 0 or
 * RIO_EBADEXAMPLE. */
int rio__feature_parse(const uint8_t *p, const uint8_t *end, int deep, rio_feature *f);

/* ---- pb_nested.c: the walk over a message field given several times ----- */

/* Steps through the items of field 1 (length-delimited) inside every
 * occurrence of the length-delimited field `outer_tag` (a whole tag, e.g.
 * RIO__PB_TAG(2, RIO__PB_LEN)) of the message [*p, end): the map entries of
 * Example.features and SequenceExample.feature_lists, the Features of a
 * FeatureLists entry's values. The state is the position *p in the message
 * and [*in, *in_end) in the current occurrence (both NULL to start). Returns
 * 1 and the item's body [*item, *item + *item_len), 0 at the end, or
 * RIO_EBADEXAMPLE on damage; after damage it keeps returning the error. */
int rio__nested_next(const uint8_t **p, const uint8_t *end, const uint8_t **in,
                     const uint8_t **in_end, uint32_t outer_tag, const uint8_t **item,
                     size_t *item_len);

/* Marks a walk of rio__nested_next() dead, for damage its caller found in
 * an item, so that it keeps returning the error. Returns RIO_EBADEXAMPLE. */
int rio__nested_fail(const uint8_t **in, const uint8_t **in_end);

/* The key of a map entry body (key = 1; the last one given; NULL and 0 when none)
 * without parsing its value. Returns 0 or RIO_EBADEXAMPLE. */
int rio__entry_key(const uint8_t *p, const uint8_t *end, const uint8_t **key, size_t *key_len);

/* Finds the map entry with key [name, name + name_len) (the last one, as
 * protobuf's map semantics say) among the entries rio__nested_next() walks
 * in [data, data + size) for `outer_tag`. Returns 0 and the entry's body
 * [*entry, *entry + *entry_len), RIO_ENOFEATURE when no entry has that key,
 * or RIO_EBADEXAMPLE when the walk meets damage (even after a match).
 * The walk of rio__nested_next() as two loops, and inline: rio_example_find()
 * runs per record in the loader, and searching with the resumable step took
 * it 22% more instructions, an out-of-line call 3.5% more. */
static inline int rio__map_find(const uint8_t *data, size_t size, uint32_t outer_tag,
                                const char *name, size_t name_len, const uint8_t **entry,
                                size_t *entry_len)
{
	const uint8_t *p = data, *end = size ? data + size : data;
	const uint8_t *hit = NULL;
	size_t hit_len = 0;
	while (p < end) { /* the occurrences of the outer field */
		uint32_t tag;
		const uint8_t *in, *in_end;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return RIO_EBADEXAMPLE;
		if (tag != outer_tag) {
			if (rio__pb_skip(&p, end, tag & 7))
				return RIO_EBADEXAMPLE;
			continue;
		}
		if (rio__pb_bytes(&p, end, &in, &len))
			return RIO_EBADEXAMPLE;
		for (in_end = in + len; in < in_end;) { /* its entries */
			const uint8_t *e, *key;
			size_t key_len;
			if (rio__pb_tag(&in, in_end, &tag))
				return RIO_EBADEXAMPLE;
			if (tag != RIO__PB_TAG(1, RIO__PB_LEN)) {
				if (rio__pb_skip(&in, in_end, tag & 7))
					return RIO_EBADEXAMPLE;
				continue;
			}
			if (rio__pb_bytes(&in, in_end, &e, &len) ||
			    rio__entry_key(e, e + len, &key, &key_len))
				return RIO_EBADEXAMPLE;
			if (key_len == name_len && (!key_len || !memcmp(key, name, name_len))) {
				hit = e; /* the last one wins */
				hit_len = len;
			}
		}
	}
	if (!hit)
		return RIO_ENOFEATURE;
	*entry = hit;
	*entry_len = hit_len;
	return 0;
}

#endif /* RIO_EXAMPLE_INTERNAL_H */

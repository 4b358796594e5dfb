/*
 * sequence_decode.c — reading the feature lists of a serialized
 * tf.train.SequenceExample in place.
 *
 *   SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
 *   FeatureLists    { map<string, FeatureList> feature_list = 1; }
 *                     entry: key = 1, value = 2
 *   FeatureList     { repeated Feature feature = 1; }
 *
 * The context needs no code here: it is field 1, a Features message, as in
 * an Example, so the Example functions read it from the same bytes. This
 * file walks field 2 in the same zero-copy style as example_decode.c, and
 * reuses its Feature parser for each time step.
 *
 * Protobuf semantics, as the C++ parser applies them:
 *   - unknown fields and known fields of another wire type are skipped at
 *     every level; groups and wire types 6, 7 are malformed;
 *   - feature_lists given several times merge: iteration sees every entry
 *     in order, find the last entry of a name;
 *   - an entry's value (a FeatureList) given twice merges, and its repeated
 *     Features concatenate: a rio_feature_list is therefore a view of the
 *     whole entry, and its iterator walks every FeatureList in it;
 *   - an entry's key given twice: the last one is the name.
 * Iteration checks the framing of what it walks and parses each Feature it
 * returns; rio_sequence_example_validate() checks every value too.
 */
#include "config.h"
#include "example_internal.h"
#include "internal.h"
#include "protobuf.h"

#include <errno.h>
#include <string.h>

#define BAD RIO_EBADEXAMPLE

#define TAG_LEN1 RIO__PB_TAG(1, RIO__PB_LEN) /* 0x0a */
#define TAG_LEN2 RIO__PB_TAG(2, RIO__PB_LEN) /* 0x12 */

/* Marks an iterator that hit damage: it keeps returning the error. */
static const uint8_t iter_dead;

/* Parses a FeatureLists map entry body [p, end) into *fl: its name (the
 * last key) and its number of Features over every FeatureList in it. With
 * `deep`, also checks every Feature and its values. */
static int list_entry_parse(const uint8_t *p, const uint8_t *end, int deep, rio_feature_list *fl)
{
	const uint8_t *entry = p, *key = NULL;
	size_t key_len = 0, count = 0;
	while (p < end) {
		uint32_t tag;
		const uint8_t *body, *bend;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag == TAG_LEN1) {
			if (rio__pb_bytes(&p, end, &key, &key_len))
				return BAD;
			continue;
		}
		if (tag != TAG_LEN2) {
			if (rio__pb_skip(&p, end, tag & 7))
				return BAD;
			continue;
		}
		if (rio__pb_bytes(&p, end, &body, &len))
			return BAD;
		for (bend = body + len; body < bend;) { /* one FeatureList */
			const uint8_t *feat;
			size_t flen;
			rio_feature f;
			if (rio__pb_tag(&body, bend, &tag))
				return BAD;
			if (tag != TAG_LEN1) {
				if (rio__pb_skip(&body, bend, tag & 7))
					return BAD;
				continue;
			}
			if (rio__pb_bytes(&body, bend, &feat, &flen))
				return BAD;
			if (deep && rio__feature_parse(feat, feat + flen, 1, &f))
				return BAD;
			count++;
		}
	}
	fl->name = key ? (const char *)key : "";
	fl->name_len = key_len;
	fl->count = count;
	fl->entry = entry;
	fl->entry_size = (size_t)(end - entry);
	return 0;
}

RIO_API int rio_sequence_example_find_list(const void *data, size_t size, const char *name,
                                           rio_feature_list *fl)
{
	if (!name || !fl || (!data && size))
		return -EINVAL;
	const uint8_t *p = data, *end = p + size;
	const uint8_t *hit = NULL, *hit_end = NULL;
	size_t name_len = strlen(name);
	while (p < end) {
		uint32_t tag;
		const uint8_t *lp, *lend;
		size_t len;
		if (rio__pb_tag(&p, end, &tag))
			return BAD;
		if (tag != TAG_LEN2) {
			if (rio__pb_skip(&p, end, tag & 7))
				return BAD;
			continue;
		}
		if (rio__pb_bytes(&p, end, &lp, &len))
			return BAD;
		lend = lp + len;
		while (lp < lend) { /* the entries of one FeatureLists */
			const uint8_t *entry, *key;
			size_t key_len;
			if (rio__pb_tag(&lp, lend, &tag))
				return BAD;
			if (tag != TAG_LEN1) {
				if (rio__pb_skip(&lp, lend, tag & 7))
					return BAD;
				continue;
			}
			if (rio__pb_bytes(&lp, lend, &entry, &len) ||
			    rio__entry_key(entry, entry + len, &key, &key_len))
				return BAD;
			if (key_len == name_len && (!key_len || !memcmp(key, name, name_len))) {
				hit = entry;
				hit_end = entry + len;
			}
		}
	}
	if (!hit)
		return RIO_ENOFEATURE;
	return list_entry_parse(hit, hit_end, 0, fl);
}

/* ---- iterating over the lists ---------------------------------------------- */

RIO_API void rio_feature_lists_iter_init(rio_feature_lists_iter *it, const void *data, size_t size)
{
	it->p = data;
	it->end = data ? it->p + size : NULL;
	it->lp = NULL;
	it->lend = NULL;
}

static int lists_fail(rio_feature_lists_iter *it)
{
	it->lp = it->lend = &iter_dead;
	return BAD;
}

/* The next list; `deep` also checks every Feature and value in it. */
static int lists_step(rio_feature_lists_iter *it, rio_feature_list *fl, int deep)
{
	if (it->lp == &iter_dead)
		return BAD;
	for (;;) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		while (it->lp != it->lend) { /* the next entry of this FeatureLists */
			const uint8_t *lp = it->lp;
			if (rio__pb_tag(&lp, it->lend, &tag))
				return lists_fail(it);
			if (tag != TAG_LEN1) {
				if (rio__pb_skip(&lp, it->lend, tag & 7))
					return lists_fail(it);
				it->lp = lp;
				continue;
			}
			if (rio__pb_bytes(&lp, it->lend, &body, &len) ||
			    list_entry_parse(body, body + len, deep, fl))
				return lists_fail(it);
			it->lp = lp;
			return 1;
		}
		if (it->p == it->end)
			return 0;
		const uint8_t *p = it->p;
		if (rio__pb_tag(&p, it->end, &tag))
			return lists_fail(it);
		if (tag == TAG_LEN2) {
			if (rio__pb_bytes(&p, it->end, &body, &len))
				return lists_fail(it);
			it->lp = body;
			it->lend = body + len;
		} else if (rio__pb_skip(&p, it->end, tag & 7)) {
			return lists_fail(it);
		}
		it->p = p;
	}
}

RIO_API int rio_feature_lists_iter_next(rio_feature_lists_iter *it, rio_feature_list *fl)
{
	return lists_step(it, fl, 0);
}

/* ---- iterating over one list's Features -------------------------------------- */

RIO_API void rio_feature_list_iter_init(rio_feature_list_iter *it, const rio_feature_list *fl)
{
	it->p = fl->entry;
	it->end = fl->entry ? fl->entry + fl->entry_size : NULL;
	it->fp = NULL;
	it->fend = NULL;
	it->name = fl->name;
	it->name_len = fl->name_len;
}

static int list_fail(rio_feature_list_iter *it)
{
	it->fp = it->fend = &iter_dead;
	return BAD;
}

RIO_API int rio_feature_list_iter_next(rio_feature_list_iter *it, rio_feature *f)
{
	if (!it || !f)
		return -EINVAL;
	if (it->fp == &iter_dead)
		return BAD;
	for (;;) {
		uint32_t tag;
		const uint8_t *body;
		size_t len;
		while (it->fp != it->fend) { /* the next Feature of this FeatureList */
			const uint8_t *fp = it->fp;
			if (rio__pb_tag(&fp, it->fend, &tag))
				return list_fail(it);
			if (tag != TAG_LEN1) {
				if (rio__pb_skip(&fp, it->fend, tag & 7))
					return list_fail(it);
				it->fp = fp;
				continue;
			}
			if (rio__pb_bytes(&fp, it->fend, &body, &len) ||
			    rio__feature_parse(body, body + len, 0, f))
				return list_fail(it);
			f->name = it->name;
			f->name_len = it->name_len;
			it->fp = fp;
			return 1;
		}
		if (it->p == it->end)
			return 0;
		const uint8_t *p = it->p; /* the next FeatureList (value) of the entry */
		if (rio__pb_tag(&p, it->end, &tag))
			return list_fail(it);
		if (tag == TAG_LEN2) {
			if (rio__pb_bytes(&p, it->end, &body, &len))
				return list_fail(it);
			it->fp = body;
			it->fend = body + len;
		} else if (rio__pb_skip(&p, it->end, tag & 7)) {
			return list_fail(it);
		}
		it->p = p;
	}
}

RIO_API int rio_sequence_example_validate(const void *data, size_t size)
{
	if (!data)
		return size ? -EINVAL : 0;
	int rc = rio_example_validate(data, size); /* the context, and the framing */
	if (rc)
		return rc;
	rio_feature_lists_iter it;
	rio_feature_list fl;
	rio_feature_lists_iter_init(&it, data, size);
	while ((rc = lists_step(&it, &fl, 1)) == 1)
		;
	return rc;
}

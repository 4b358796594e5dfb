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
 * file reads field 2 with the walk rio_example_find() and rio_example_iter
 * use (pb_nested.c, example_internal.h), zero-copy, and reuses the Example
 * decoder's Feature parser for each time step.
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

#define TAG_LEN2 RIO__PB_TAG(2, RIO__PB_LEN) /* 0x12 */

/* Parses a FeatureLists map entry body [p, end) into *fl: its name (the
 * last key) and its number of Features over every FeatureList in it. With
 * `deep`, also checks every Feature and its values. */
static int list_entry_parse(const uint8_t *p, const uint8_t *end, int deep, rio_feature_list *fl)
{
	const uint8_t *key, *q = p, *in = NULL, *in_end = NULL, *feat;
	size_t key_len, flen, count = 0;
	rio_feature f;
	int rc;
	if (rio__entry_key(p, end, &key, &key_len))
		return BAD;
	while ((rc = rio__nested_next(&q, end, &in, &in_end, TAG_LEN2, &feat, &flen)) == 1) {
		if (deep && rio__feature_parse(feat, feat + flen, 1, &f))
			return BAD;
		count++;
	}
	if (rc)
		return rc;
	fl->name = key ? (const char *)key : "";
	fl->name_len = key_len;
	fl->count = count;
	fl->entry = p;
	fl->entry_size = (size_t)(end - p);
	return 0;
}

RIO_API int rio_sequence_example_find_list(const void *data, size_t size, const char *name,
                                           rio_feature_list *fl)
{
	if (!name || !fl || (!data && size))
		return -EINVAL;
	const uint8_t *entry;
	size_t len;
	int rc = rio__map_find(data, size, TAG_LEN2, name, strlen(name), &entry, &len);
	if (rc)
		return rc;
	return list_entry_parse(entry, entry + len, 0, fl);
}

/* ---- iterating over the lists ---------------------------------------------- */

RIO_API void rio_feature_lists_iter_init(rio_feature_lists_iter *it, const void *data, size_t size)
{
	it->p = data;
	it->end = data ? it->p + size : NULL;
	it->lp = NULL;
	it->lend = NULL;
}

/* The next list; `deep` also checks every Feature and value in it. */
static int lists_step(rio_feature_lists_iter *it, rio_feature_list *fl, int deep)
{
	const uint8_t *entry;
	size_t len;
	int rc = rio__nested_next(&it->p, it->end, &it->lp, &it->lend, TAG_LEN2, &entry, &len);
	if (rc == 1 && list_entry_parse(entry, entry + len, deep, fl))
		return rio__nested_fail(&it->lp, &it->lend);
	return rc;
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

RIO_API int rio_feature_list_iter_next(rio_feature_list_iter *it, rio_feature *f)
{
	if (!it || !f)
		return -EINVAL;
	const uint8_t *feat; /* the next Feature of the entry's FeatureLists */
	size_t len;
	int rc = rio__nested_next(&it->p, it->end, &it->fp, &it->fend, TAG_LEN2, &feat, &len);
	if (rc != 1)
		return rc;
	if (rio__feature_parse(feat, feat + len, 0, f))
		return rio__nested_fail(&it->fp, &it->fend);
	f->name = it->name;
	f->name_len = it->name_len;
	return 1;
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

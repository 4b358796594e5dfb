/*
 * list_parse.c — one page of a ListObjectsV2 answer taken apart (list.h).
 */
#include "config.h"
#include "list.h"

#include "xml.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int push(rio__listing *l, const char *key, size_t keylen, uint64_t size, int is_prefix,
                const char *etag)
{
	if (rio__grow(&l->items, &l->cap, l->n + 1, sizeof *l->items, 64))
		return -ENOMEM;
	char *k = strndup(key, keylen), *t = etag && *etag ? strdup(etag) : NULL;
	if (!k || (etag && *etag && !t)) {
		free(k);
		return -ENOMEM;
	}
	l->items[l->n++] = (rio__listed){k, size, is_prefix, t};
	return 0;
}

/* A decimal size; 0 when it is not one (then the page is malformed). */
static int parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 1;
}

/* The text of the first <name> of xml[s, e) into t: 1, 0 when absent, or
 * a decoding error. */
static int child(const char *xml, size_t s, size_t e, const char *name, rio__text *t)
{
	return rio__xml_find(xml + s, e - s, name, t);
}

int rio__list_parse(const char *xml, size_t len, rio__listing *out, int *truncated,
                    rio__text *token)
{
	rio__text t = {0}, etag = {0};
	int rc = 0;
	size_t pos = 0, s, e;
	*truncated = 0;
	rio__text_clear(token);
	if (!rio__xml_next(xml, len, "ListBucketResult", &pos, &s, &e))
		return -EBADMSG;
	size_t body_s = s, body_e = e;
	for (pos = body_s; rc == 0 && rio__xml_next(xml, body_e, "Contents", &pos, &s, &e);) {
		uint64_t size = 0;
		rc = child(xml, s, e, "Size", &t);
		if (rc == 1)
			rc = parse_size(rio__text_str(&t), &size) ? 0 : -EBADMSG;
		else if (rc == 0)
			rc = -EBADMSG;
		/* the ETag: optional (a listing without one is still a listing) */
		int has_etag = rc == 0 ? child(xml, s, e, "ETag", &etag) : 0;
		if (has_etag < 0)
			rc = has_etag;
		if (rc == 0 && (rc = child(xml, s, e, "Key", &t)) == 1)
			rc = push(out, rio__text_str(&t), t.n, size, 0,
			          has_etag == 1 ? rio__text_str(&etag) : NULL);
		else if (rc == 0)
			rc = -EBADMSG;
	}
	for (pos = body_s; rc == 0 && rio__xml_next(xml, body_e, "CommonPrefixes", &pos, &s, &e);) {
		if ((rc = child(xml, s, e, "Prefix", &t)) == 1)
			rc = push(out, rio__text_str(&t), t.n, 0, 1, NULL);
		else if (rc == 0)
			rc = -EBADMSG;
	}
	if (rc == 0 && (rc = child(xml, body_s, body_e, "IsTruncated", &t)) >= 0) {
		*truncated = rc == 1 && !strcmp(rio__text_str(&t), "true");
		rc = 0;
	}
	if (rc == 0 && *truncated &&
	    (rc = child(xml, body_s, body_e, "NextContinuationToken", &t)) >= 0) {
		rc = rc == 1 && t.n ? rio__text_append(token, t.p, t.n) : -EBADMSG;
	}
	rio__text_free(&t);
	rio__text_free(&etag);
	return rc;
}

void rio__listing_free(rio__listing *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].key);
		free(l->items[i].etag);
	}
	free(l->items);
	memset(l, 0, sizeof *l);
}

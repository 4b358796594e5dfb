/*
 * list.c — ListObjectsV2: every page of the keys under a prefix (remote.h).
 *
 * The query's parameters are put in name order and URI-encoded here: SigV4
 * signs the canonical (sorted) query, and curl 7.88 signs the query as it
 * is written.
 */
#include "config.h"
#include "list.h"

#include "client.h"
#include "http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN
#define PAGE_MAX (16u << 20) /* a page is about 1000 keys: far less */

/* The sorted query of one page. */
static int page_query(rio__text *q, const char *prefix, const char *delimiter,
                      const rio__text *token)
{
	rio__text_clear(q);
	if (token->n) {
		rio__text_puts(q, "continuation-token=");
		rio__text_uri_encode(q, token->p, token->n, 0);
		rio__text_puts(q, "&");
	}
	if (delimiter) {
		rio__text_puts(q, "delimiter=");
		rio__text_uri_encode(q, delimiter, strlen(delimiter), 0);
		rio__text_puts(q, "&");
	}
	rio__text_puts(q, "list-type=2&prefix=");
	return rio__text_uri_encode(q, prefix, strlen(prefix), 0);
}

int rio__remote_list(rio__remote *r, const char *bucket, const char *prefix,
                     const char *delimiter, const char *name, rio__listing *out, rio_error *err)
{
	rio__text query = {0}, url = {0}, page = {0}, token = {0};
	int rc = 0, truncated = 1;
	size_t from = out->n;
	for (unsigned pages = 0; rc == 0 && truncated; pages++) {
		if ((rc = page_query(&query, prefix, delimiter, &token)) < 0) {
			rc = rio__error_set(err, rc, name, UNK, UNK, NULL);
			break;
		}
		if ((rc = rio__client_s3_url(r, bucket, "", rio__text_str(&query), &url, err)) < 0)
			break;
		rio__http q;
		rio__http_init(&q, "GET", rio__text_str(&url), name, 1);
		q.sink = &page;
		q.sink_max = PAGE_MAX;
		rc = rio__http_run(r, &q, err);
		rio__http_release(&q);
		if (rc < 0)
			break;
		rio__text last = token;
		token = (rio__text){0};
		rc = rio__list_parse(rio__text_str(&page), page.n, out, &truncated, &token);
		if (rc < 0)
			rc = rio__error_set(err, rc == -ENOMEM ? rc : RIO_EREMOTE, name, UNK, UNK,
			                    "page %u of the listing of s3://%s/%s is not a "
			                    "ListObjectsV2 answer", pages + 1, bucket, prefix);
		else if (truncated && last.n == token.n && !memcmp(rio__text_str(&last),
		                                                    rio__text_str(&token), token.n))
			rc = rio__error_set(err, RIO_EREMOTE, name, UNK, UNK,
			                    "the listing does not end (the same continuation token "
			                    "twice)");
		rio__text_free(&last);
	}
	if (rc == 0 && (rc = rio__client_note_listed(r, bucket, out, from)) < 0)
		rc = rio__error_set(err, rc, name, UNK, UNK, NULL);
	rio__text_free(&query);
	rio__text_free(&url);
	rio__text_free(&page);
	rio__text_free(&token);
	return rc;
}

/*
 * url.h — the URLs of remote shards, taken apart: s3://BUCKET/KEY, and
 * http(s):// URLs of single shards. No network, no curl: the shard set
 * expansion and the tests parse with it in every build.
 */
#ifndef RIO_REMOTE_URL_H
#define RIO_REMOTE_URL_H

#include "internal.h"

typedef enum rio__url_kind {
	RIO__URL_S3 = 1,
	RIO__URL_HTTP = 2, /* http:// or https:// */
} rio__url_kind;

typedef struct rio__url {
	rio__url_kind kind;
	char *bucket; /* S3: the bucket (3 to 63 of a-z A-Z 0-9 . - _)     */
	char *key;    /* S3: everything after "s3://BUCKET/", as written
	               * (no percent-decoding: a key is taken literally);
	               * "" for the whole bucket                          */
	char *url;    /* HTTP: the URL as given                          */
} rio__url;

/* The longest key S3 takes, in bytes. */
#define RIO__S3_KEY_MAX 1024

/* 1 when `text` starts with s3://, http:// or https:// (scheme in any
 * case). */
int rio__url_is_remote(const char *text);
/* 1 for s3:// (any case). */
int rio__url_is_s3(const char *text);

/* Takes `text` apart. -EINVAL with a message quoting it for a malformed
 * URL: no bucket or a bucket of other characters or length, a key longer
 * than RIO__S3_KEY_MAX or holding control characters, an http(s) URL with
 * no host. Free with rio__url_free (also after a failure). */
int rio__url_parse(const char *text, rio__url *u, rio_error *err);
void rio__url_free(rio__url *u);

#endif /* RIO_REMOTE_URL_H */

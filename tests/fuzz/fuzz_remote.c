/*
 * fuzz_remote.c — libFuzzer target for the parsers of the S3 client
 * (recordio/remote/), which read what a server or a file hands them: a
 * ListObjectsV2 page (list.h), a set's manifest (manifest.h), a URL
 * (url.h) and the AWS tools' INI files (aws_config.h).
 *
 * The input's first byte picks the parser, the rest is its text. Checks
 * beyond "no crash, no leak": a listing's items all have keys, a truncated
 * page has its continuation token; an accepted manifest formats to a text
 * that parses to the same generation and shards, and every shard name
 * passes rio__manifest_name_ok; an accepted S3 URL has a bucket of 3 to 63
 * characters and a key within RIO__S3_KEY_MAX, a refused one says why; an
 * INI value found fits its buffer, one that does not is -E2BIG.
 */
#include "fuzz_util.h"
#include "recordio.h"
#include "remote/aws_config.h"
#include "remote/list.h"
#include "remote/manifest.h"
#include "remote/url.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_list(const char *t, size_t n)
{
	rio__listing l = {0};
	rio__text token = {0};
	int truncated = 0;
	int rc = rio__list_parse(t, n, &l, &truncated, &token);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOMEM);
	for (size_t i = 0; i < l.n; i++)
		CHECK(l.items[i].key != NULL);
	if (rc == 0 && truncated)
		CHECK(token.n > 0);
	rio__listing_free(&l);
	rio__text_free(&token);
}

static void fuzz_manifest(const char *t, size_t n)
{
	rio__manifest m = {0}, again = {0};
	char why[256];
	int rc = rio__manifest_parse(t, n, &m, why, sizeof why);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOMEM);
	if (rc == -EBADMSG)
		CHECK(why[0] != '\0');
	if (rc == 0) {
		CHECK(m.n > 0);
		rio__text out = {0};
		CHECK(rio__manifest_format(&m, &out) == 0);
		CHECK(rio__manifest_parse(out.p, out.n, &again, why, sizeof why) == 0);
		CHECK(again.generation == m.generation && again.n == m.n);
		for (size_t i = 0; i < m.n; i++) {
			CHECK(rio__manifest_name_ok(m.shards[i].name, strlen(m.shards[i].name)));
			CHECK(!strcmp(again.shards[i].name, m.shards[i].name));
			CHECK(again.shards[i].size == m.shards[i].size);
			CHECK(!strcmp(again.shards[i].etag ? again.shards[i].etag : "",
			              m.shards[i].etag ? m.shards[i].etag : ""));
		}
		rio__text_free(&out);
	}
	rio__manifest_free(&again);
	rio__manifest_free(&m);
}

static void fuzz_url(const char *t)
{
	rio__url u = {0};
	rio_error err = {0};
	int rc = rio__url_parse(t, &u, &err);
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc == 0 && u.kind == RIO__URL_S3) {
		size_t b = strlen(u.bucket);
		CHECK(b >= 3 && b <= 63);
		CHECK(strlen(u.key) <= RIO__S3_KEY_MAX);
		CHECK(rio__url_is_s3(t));
	} else if (rc == 0) {
		CHECK(u.kind == RIO__URL_HTTP && u.url != NULL && rio__url_is_remote(t));
	} else if (rc == -EINVAL) {
		CHECK(err.message[0] != '\0');
	}
	rio__url_free(&u);
}

static void fuzz_ini(const char *t, size_t n)
{
	char out[32];
	static const char *const sections[] = {"default", "profile dev", "x"};
	static const char *const keys[] = {"region", "aws_access_key_id", "endpoint_url", "s3"};
	for (size_t s = 0; s < sizeof sections / sizeof *sections; s++) {
		int has = rio__ini_has_section(t, n, sections[s]);
		CHECK(has == 0 || has == 1);
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
			int rc = rio__ini_get(t, n, sections[s], keys[k], out, sizeof out);
			CHECK(rc == 0 || rc == 1 || rc == -E2BIG);
			if (rc == 1) {
				CHECK(strlen(out) < sizeof out);
				CHECK(has == 1); /* a value is of a section that is there */
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* the text, NUL-terminated after its end (a URL is a C string; the
	 * others take a length and must not read the NUL) */
	size_t n = size - 1;
	char *t = malloc(n + 1);
	CHECK(t != NULL);
	memcpy(t, data + 1, n);
	t[n] = '\0';
	switch (data[0] % 4) {
	case 0: fuzz_list(t, n); break;
	case 1: fuzz_manifest(t, n); break;
	case 2: fuzz_url(t); break;
	default: fuzz_ini(t, n); break;
	}
	free(t);
	return 0;
}

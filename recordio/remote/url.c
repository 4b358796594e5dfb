/*
 * url.c — taking remote shard URLs apart (url.h).
 */
#include "config.h"
#include "url.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UNK RIO__UNKNOWN

int rio__url_is_s3(const char *text)
{
	return text && !strncasecmp(text, "s3://", 5);
}

int rio__url_is_remote(const char *text)
{
	return text && (rio__url_is_s3(text) || !strncasecmp(text, "http://", 7) ||
	                !strncasecmp(text, "https://", 8));
}

RIO_API int rio_is_url(const char *path)
{
	return rio__url_is_remote(path);
}

static int bucket_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '_';
}

static int bad(rio_error *err, const char *text, const char *why)
{
	return rio__error_set(err, -EINVAL, text, UNK, UNK, "not a valid URL: %s", why);
}

static int parse_s3(const char *text, rio__url *u, rio_error *err)
{
	const char *b = text + 5, *slash = strchr(b, '/');
	size_t blen = slash ? (size_t)(slash - b) : strlen(b);
	if (blen < 3 || blen > 63)
		return bad(err, text, "an S3 bucket name has 3 to 63 characters (s3://BUCKET/KEY)");
	for (size_t i = 0; i < blen; i++)
		if (!bucket_char(b[i]))
			return bad(err, text, "an S3 bucket name is made of letters, digits, '.', '-' "
			                      "and '_'");
	const char *key = slash ? slash + 1 : "";
	if (strlen(key) > RIO__S3_KEY_MAX)
		return bad(err, text, "an S3 key has at most 1024 bytes");
	for (const char *p = key; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return bad(err, text, "a control character in the key");
	u->kind = RIO__URL_S3;
	u->bucket = strndup(b, blen);
	u->key = strdup(key);
	if (!u->bucket || !u->key)
		return rio__error_set(err, -ENOMEM, text, UNK, UNK, NULL);
	return 0;
}

static int parse_http(const char *text, rio__url *u, rio_error *err)
{
	const char *host = strstr(text, "://") + 3;
	if (!*host || *host == '/' || *host == '?' || *host == '#')
		return bad(err, text, "no host");
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return bad(err, text, "a blank or control character (write it as %20)");
	u->kind = RIO__URL_HTTP;
	if (!(u->url = strdup(text)))
		return rio__error_set(err, -ENOMEM, text, UNK, UNK, NULL);
	return 0;
}

int rio__url_parse(const char *text, rio__url *u, rio_error *err)
{
	memset(u, 0, sizeof *u);
	if (!rio__url_is_remote(text))
		return bad(err, text ? text : "(null)", "want s3://, http:// or https://");
	return rio__url_is_s3(text) ? parse_s3(text, u, err) : parse_http(text, u, err);
}

void rio__url_free(rio__url *u)
{
	free(u->bucket);
	free(u->key);
	free(u->url);
	memset(u, 0, sizeof *u);
}

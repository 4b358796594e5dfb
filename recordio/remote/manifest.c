/*
 * manifest.c — an S3 set's manifest, read and written (manifest.h).
 */
#include "config.h"
#include "manifest.h"

#include "remote.h"
#include "grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_BYTES 1024

int rio__manifest_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > NAME_MAX_BYTES || name[0] == '/')
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] <= 0x20 || name[i] == 0x7f)
			return 0;
	/* no "." or ".." component: a name stays below the manifest */
	for (size_t b = 0; b < len;) {
		const char *slash = memchr(name + b, '/', len - b);
		size_t e = slash ? (size_t)(slash - name) : len;
		size_t n = e - b;
		if (n == 0 || (n == 1 && name[b] == '.') || (n == 2 && !memcmp(name + b, "..", 2)))
			return 0;
		b = e + 1;
		if (slash && b == len)
			return 0; /* a trailing '/' names no object */
	}
	return 1;
}

static int etag_ok(const char *etag, size_t len)
{
	if (len == 0 || len > 190)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)etag[i] <= 0x20 || etag[i] == 0x7f)
			return 0;
	return 1;
}

static int add(rio__manifest *m, const char *name, size_t nlen, uint64_t size, const char *etag,
               size_t elen)
{
	if (rio__grow(&m->shards, &m->cap, m->n + 1, sizeof *m->shards, 16))
		return -ENOMEM;
	rio__manifest_shard *s = &m->shards[m->n];
	s->name = strndup(name, nlen);
	s->etag = strndup(etag, elen);
	s->size = size;
	if (!s->name || !s->etag) {
		free(s->name);
		free(s->etag);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

int rio__manifest_add(rio__manifest *m, const char *name, uint64_t size, const char *etag)
{
	if (!etag || !*etag)
		etag = "-";
	if (!name || !rio__manifest_name_ok(name, strlen(name)) || !etag_ok(etag, strlen(etag)))
		return -EINVAL;
	return add(m, name, strlen(name), size, etag, strlen(etag));
}

/* The next blank-separated word of [*p, e): its bounds, or 0 at the end. */
static int word(const char **p, const char *e, const char **b, size_t *n)
{
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
	*b = *p;
	while (*p < e && **p != ' ' && **p != '\t')
		(*p)++;
	*n = (size_t)(*p - *b);
	return *n > 0;
}

static int number(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0 || n > 20)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 1;
}

static int bad(char *why, size_t cap, unsigned line, const char *what)
{
	snprintf(why, cap, "line %u: %s", line, what);
	return -EBADMSG;
}

/* One line after the magic, [b, e). */
static int parse_line(rio__manifest *m, const char *b, const char *e, unsigned line,
                      int *have_gen, char *why, size_t cap)
{
	const char *w, *p = b;
	size_t n;
	if (!word(&p, e, &w, &n))
		return 0; /* a blank line */
	if (n == 10 && !memcmp(w, "generation", 10)) {
		const char *g;
		size_t gn;
		if (*have_gen)
			return bad(why, cap, line, "a second generation line");
		if (!word(&p, e, &g, &gn) || !number(g, gn, &m->generation) || word(&p, e, &g, &gn))
			return bad(why, cap, line, "want 'generation NUMBER'");
		*have_gen = 1;
		return 0;
	}
	if (n == 5 && !memcmp(w, "shard", 5)) {
		const char *name, *size, *etag, *more;
		size_t nn, sn, en, mn;
		uint64_t bytes;
		if (!word(&p, e, &name, &nn) || !word(&p, e, &size, &sn) || !word(&p, e, &etag, &en) ||
		    word(&p, e, &more, &mn))
			return bad(why, cap, line, "want 'shard NAME SIZE ETAG'");
		if (!rio__manifest_name_ok(name, nn))
			return bad(why, cap, line, "a shard name must be relative, without '.' or '..'");
		if (!number(size, sn, &bytes))
			return bad(why, cap, line, "the size is not a number of bytes");
		if (!etag_ok(etag, en))
			return bad(why, cap, line, "a malformed ETag");
		return add(m, name, nn, bytes, etag, en);
	}
	return bad(why, cap, line, "neither a generation nor a shard line");
}

int rio__manifest_parse(const char *text, size_t len, rio__manifest *m, char *why, size_t cap)
{
	memset(m, 0, sizeof *m);
	const char *p = text, *end = text + len;
	unsigned line = 0;
	int have_gen = 0, rc = 0;
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		if (e > p && e[-1] == '\r')
			e--;
		line++;
		if (line == 1) {
			size_t n = strlen(RIO__MANIFEST_MAGIC);
			if ((size_t)(e - p) != n || memcmp(p, RIO__MANIFEST_MAGIC, n))
				rc = bad(why, cap, 1, "not a recordio set manifest (want '" RIO__MANIFEST_MAGIC
				                      "')");
		} else {
			rc = parse_line(m, p, e, line, &have_gen, why, cap);
		}
		p = nl ? nl + 1 : end;
	}
	if (rc == 0 && line == 0)
		rc = bad(why, cap, 1, "empty");
	else if (rc == 0 && !have_gen)
		rc = bad(why, cap, line, "no generation line");
	else if (rc == 0 && m->n == 0)
		rc = bad(why, cap, line, "no shard");
	return rc;
}

int rio__manifest_format(const rio__manifest *m, rio__text *out)
{
	rio__text_printf(out, "%s\ngeneration %" PRIu64 "\n", RIO__MANIFEST_MAGIC, m->generation);
	for (size_t i = 0; i < m->n; i++)
		rio__text_printf(out, "shard %s %" PRIu64 " %s\n", m->shards[i].name, m->shards[i].size,
		                 m->shards[i].etag);
	return out->failed;
}

void rio__manifest_free(rio__manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->shards[i].name);
		free(m->shards[i].etag);
	}
	free(m->shards);
	memset(m, 0, sizeof *m);
}

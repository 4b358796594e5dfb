/*
 * text.c — the remote client's growable strings (text.h).
 */
#include "config.h"
#include "text.h"
#include "grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `more` bytes and a NUL. */
static int reserve(rio__text *t, size_t more)
{
	if (t->failed)
		return t->failed;
	if (more > (size_t)-1 / 2 - t->n)
		return t->failed = -ENOMEM;
	if (rio__grow(&t->p, &t->cap, t->n + more + 1, 1, 64))
		return t->failed = -ENOMEM;
	return 0;
}

int rio__text_append(rio__text *t, const void *data, size_t n)
{
	int rc = reserve(t, n);
	if (rc)
		return rc;
	if (n)
		memcpy(t->p + t->n, data, n);
	t->n += n;
	t->p[t->n] = '\0';
	return 0;
}

int rio__text_puts(rio__text *t, const char *s)
{
	return rio__text_append(t, s, strlen(s));
}

int rio__text_printf(rio__text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return t->failed = -ENOMEM;
	int rc = reserve(t, (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(t->p + t->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->n += (size_t)n;
	return 0;
}

int rio__text_uri_encode(rio__text *t, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		            c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
		char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
		int rc = plain ? rio__text_append(t, &s[i], 1) : rio__text_append(t, esc, 3);
		if (rc)
			return rc;
	}
	return reserve(t, 0);
}

const char *rio__text_str(const rio__text *t)
{
	return t->p ? t->p : "";
}

void rio__text_clear(rio__text *t)
{
	t->n = 0;
	if (t->p)
		t->p[0] = '\0';
}

void rio__text_free(rio__text *t)
{
	free(t->p);
	t->p = NULL;
	t->n = t->cap = 0;
	t->failed = 0;
}

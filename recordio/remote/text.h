/*
 * text.h — a growable, NUL-terminated byte string for the remote client:
 * request URLs and bodies put together piece by piece, and response bodies
 * (listings, error documents) collected as they arrive.
 *
 * Every append keeps the text NUL-terminated and returns 0, or -ENOMEM
 * (remembered: later appends do nothing and return it too, so a caller may
 * check once at the end). rio__text_free() leaves an empty text.
 */
#ifndef RIO_REMOTE_TEXT_H
#define RIO_REMOTE_TEXT_H

#include <stddef.h>

typedef struct rio__text {
	char *p;    /* NUL-terminated once anything was appended; else NULL */
	size_t n;   /* bytes, without the NUL                               */
	size_t cap;
	int failed; /* -ENOMEM once an append failed                       */
} rio__text;

int rio__text_append(rio__text *t, const void *data, size_t n);
int rio__text_puts(rio__text *t, const char *s);
int rio__text_printf(rio__text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0, n) URI-encoded as SigV4 wants it: A-Z a-z 0-9 - . _ ~ as
 * they are, '/' too when keep_slash, every other byte as %XX (upper-case
 * hex). */
int rio__text_uri_encode(rio__text *t, const char *s, size_t n, int keep_slash);
/* The text, "" when empty. */
const char *rio__text_str(const rio__text *t);
void rio__text_clear(rio__text *t);
void rio__text_free(rio__text *t);

#endif /* RIO_REMOTE_TEXT_H */

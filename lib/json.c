/*
 * json.c — see json.h.
 */
#include "config.h"
#include "json.h"

#include <math.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* reject overlong forms, surrogates and values past U+10FFFF */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

int rio__utf8_valid(const void *s, size_t len)
{
	const unsigned char *p = s, *end = p + len;
	while (p < end) {
		size_t n = utf8_len(p, (size_t)(end - p));
		if (n == 0)
			return 0;
		p += n;
	}
	return 1;
}

void rio__json_number(FILE *out, double v, int digits)
{
	if (isfinite(v))
		fprintf(out, "%.*g", digits, v);
	else
		fputs("null", out);
}

void rio__json_member(FILE *out, const char *key, double v, int digits)
{
	fprintf(out, "\"%s\": ", key);
	rio__json_number(out, v, digits);
	fputs(", ", out);
}

void rio__json_string(FILE *out, const void *s, size_t len)
{
	const unsigned char *p = s, *end = p + len;
	putc('"', out);
	while (p < end) {
		unsigned char c = *p;
		switch (c) {
		case '"': fputs("\\\"", out); p++; continue;
		case '\\': fputs("\\\\", out); p++; continue;
		case '\n': fputs("\\n", out); p++; continue;
		case '\r': fputs("\\r", out); p++; continue;
		case '\t': fputs("\\t", out); p++; continue;
		case '\b': fputs("\\b", out); p++; continue;
		case '\f': fputs("\\f", out); p++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			p++;
			continue;
		}
		size_t n = utf8_len(p, (size_t)(end - p));
		if (n == 0) {
			fprintf(out, "\\u%04x", c); /* a stray byte: shown as U+00XX */
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
	putc('"', out);
}

/*
 * xml.c — the few XML elements S3 answers with (xml.h).
 */
#include "config.h"
#include "xml.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* 1 when xml[at, len) starts with `s`. */
static int at_str(const char *xml, size_t len, size_t at, const char *s)
{
	size_t n = strlen(s);
	return at <= len && len - at >= n && !memcmp(xml + at, s, n);
}

/* The position of the first '>' at or after `at` (len when none). */
static size_t tag_end(const char *xml, size_t len, size_t at)
{
	const char *gt = at < len ? memchr(xml + at, '>', len - at) : NULL;
	return gt ? (size_t)(gt - xml) : len;
}

int rio__xml_next(const char *xml, size_t len, const char *name, size_t *pos, size_t *start,
                  size_t *end)
{
	size_t n = strlen(name);
	for (size_t i = *pos; i < len;) {
		const char *lt = memchr(xml + i, '<', len - i);
		if (!lt)
			return 0;
		i = (size_t)(lt - xml) + 1;
		if (!at_str(xml, len, i, name))
			continue;
		size_t after = i + n; /* what follows the name: '>', '/', a blank */
		if (after >= len)
			return 0;
		char c = xml[after];
		if (c != '>' && c != '/' && c != ' ' && c != '\t' && c != '\r' && c != '\n')
			continue;
		size_t gt = tag_end(xml, len, after);
		if (gt == len)
			return 0;
		if (xml[gt - 1] == '/') { /* <name/> */
			*start = *end = gt + 1;
			*pos = gt + 1;
			return 1;
		}
		/* the closing tag; elements of one name do not nest in S3's answers */
		for (size_t j = gt + 1; j < len;) {
			const char *close = memchr(xml + j, '<', len - j);
			if (!close)
				return 0;
			j = (size_t)(close - xml);
			if (at_str(xml, len, j + 1, "/") && at_str(xml, len, j + 2, name)) {
				size_t k = j + 2 + n;
				while (k < len && (xml[k] == ' ' || xml[k] == '\t' || xml[k] == '\r' ||
				                   xml[k] == '\n'))
					k++;
				if (k < len && xml[k] == '>') {
					*start = gt + 1;
					*end = j;
					*pos = k + 1;
					return 1;
				}
			}
			j++;
		}
		return 0;
	}
	return 0;
}

/* Appends code point cp as UTF-8. */
static int put_utf8(rio__text *out, uint32_t cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return rio__text_append(out, b, n);
}

/* A character reference's digits, xml[b, e) ("#65" or "#x41" without '#'). */
static int char_ref(const char *xml, size_t b, size_t e, rio__text *out)
{
	int hex = b < e && (xml[b] == 'x' || xml[b] == 'X');
	if (hex)
		b++;
	if (b == e || e - b > 8)
		return -EBADMSG;
	uint32_t cp = 0;
	for (size_t i = b; i < e; i++) {
		char c = xml[i];
		uint32_t d;
		if (c >= '0' && c <= '9')
			d = (uint32_t)(c - '0');
		else if (hex && c >= 'a' && c <= 'f')
			d = (uint32_t)(c - 'a' + 10);
		else if (hex && c >= 'A' && c <= 'F')
			d = (uint32_t)(c - 'A' + 10);
		else
			return -EBADMSG;
		cp = cp * (hex ? 16u : 10u) + d;
		if (cp > 0x10FFFF)
			return -EBADMSG;
	}
	if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
		return -EBADMSG;
	return put_utf8(out, cp);
}

int rio__xml_text(const char *xml, size_t start, size_t end, rio__text *out)
{
	static const struct {
		const char *name, *text;
	} ent[] = {{"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
	size_t i = start;
	while (i < end) {
		const char *amp = memchr(xml + i, '&', end - i);
		size_t stop = amp ? (size_t)(amp - xml) : end;
		int rc = rio__text_append(out, xml + i, stop - i);
		if (rc || !amp)
			return rc;
		const char *semi = memchr(amp, ';', end - stop);
		if (!semi)
			return -EBADMSG;
		size_t b = stop + 1, e = (size_t)(semi - xml);
		if (b < e && xml[b] == '#') {
			rc = char_ref(xml, b + 1, e, out);
		} else {
			rc = -EBADMSG;
			for (size_t k = 0; k < sizeof ent / sizeof ent[0]; k++)
				if (strlen(ent[k].name) == e - b && !memcmp(xml + b, ent[k].name, e - b))
					rc = rio__text_puts(out, ent[k].text);
		}
		if (rc)
			return rc;
		i = e + 1;
	}
	return 0;
}

int rio__xml_find(const char *xml, size_t len, const char *name, rio__text *out)
{
	size_t pos = 0, s, e;
	rio__text_clear(out);
	if (!rio__xml_next(xml, len, name, &pos, &s, &e))
		return 0;
	int rc = rio__xml_text(xml, s, e, out);
	return rc < 0 ? rc : 1;
}

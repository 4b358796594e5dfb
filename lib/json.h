/*
 * json.h — the JSON the tools (-J/--json, recordio-cat's json formats) and
 * the trainer (--metrics) write: numbers that are never "nan" or "inf",
 * strings that read back as the bytes written. One writer, so every JSON
 * line the project prints follows the same rules.
 */
#ifndef RIO_JSON_H
#define RIO_JSON_H

#include <stddef.h>
#include <stdio.h>

/* 1 when `len` bytes are valid UTF-8 (so rio__json_string() writes them
 * back exactly), 0 when not. */
int rio__utf8_valid(const void *s, size_t len);

/* Writes `len` bytes as a JSON string literal (quotes included), escaping
 * '"', '\\', control bytes, and bytes that are not valid UTF-8 (as \u00XX). */
void rio__json_string(FILE *out, const void *s, size_t len);

/* Writes v as a JSON number with `digits` significant digits ("%.*g"), or
 * as null when it is NaN or infinite: JSON has no such numbers, and a
 * reader must never be handed "nan". */
void rio__json_number(FILE *out, double v, int digits);
/* Writes the member `"KEY": NUMBER, ` (rio__json_number(), the comma and
 * blank after it): for objects written as a run of such members. */
void rio__json_member(FILE *out, const char *key, double v, int digits);

#endif /* RIO_JSON_H */

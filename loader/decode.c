/*
 * decode.c — the column spec ("name:type:length[:scale],...") and the
 * decoding of one tf.train.Example into a row of typed values.
 *
 * Conversions: u8 takes a bytes feature of exactly `length` bytes; f32 takes
 * a float list, an int64 list (cast) or a bytes feature (each byte a
 * number), times `scale` when it is set; bf16 is f32's value rounded to
 * bfloat16 (nearest, ties to even: half.h) as it is written, never held
 * as floats; i64 takes an int64 list. A list of another length is
 * RIO_EFEATURELEN: nothing is padded or cut silently.
 */
#include "config.h"
#include "decode.h"
#include "bf16_vec.h"
#include "half.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RIO_API const char *rio_dtype_name(rio_dtype t)
{
	switch (t) {
	case RIO_DTYPE_U8:
		return "u8";
	case RIO_DTYPE_F32:
		return "f32";
	case RIO_DTYPE_I64:
		return "i64";
	case RIO_DTYPE_BF16:
		return "bf16";
	}
	return "?";
}

RIO_API size_t rio_dtype_size(rio_dtype t)
{
	switch (t) {
	case RIO_DTYPE_U8:
		return 1;
	case RIO_DTYPE_BF16:
		return 2;
	case RIO_DTYPE_F32:
		return 4;
	case RIO_DTYPE_I64:
		return 8;
	}
	return 0;
}

/* Parses one "name:type:length[:scale]" item of `len` bytes. */
static int parse_item(const char *item, size_t len, rio_column_spec *c, rio_error *err)
{
	char buf[256];
	if (len == 0 || len >= sizeof buf)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "column spec item '%.*s': want name:type:length[:scale]",
		                      (int)(len > 64 ? 64 : len), item);
	memcpy(buf, item, len);
	buf[len] = '\0';
	char orig[256];
	memcpy(orig, buf, len + 1);
	char *fields[5] = {0};
	int nf = 0;
	char *save = NULL;
	for (char *f = strtok_r(buf, ":", &save); f && nf < 5; f = strtok_r(NULL, ":", &save))
		fields[nf++] = f;
	memset(c, 0, sizeof *c);
	int bad = nf < 3 || nf > 4 || strlen(fields[0]) >= sizeof c->name;
	if (!bad) {
		snprintf(c->name, sizeof c->name, "%s", fields[0]);
		if (!strcmp(fields[1], "u8"))
			c->type = RIO_DTYPE_U8;
		else if (!strcmp(fields[1], "f32"))
			c->type = RIO_DTYPE_F32;
		else if (!strcmp(fields[1], "i64"))
			c->type = RIO_DTYPE_I64;
		else if (!strcmp(fields[1], "bf16"))
			c->type = RIO_DTYPE_BF16;
		else
			bad = 1;
	}
	if (!bad) {
		char *end;
		unsigned long long n = strtoull(fields[2], &end, 10);
		bad = *end || n == 0 || n > RIO_LOADER_MAX_COLUMN_LENGTH || fields[2][0] == '-';
		c->length = (size_t)n;
	}
	if (!bad && nf == 4) {
		char *end;
		c->scale = strtof(fields[3], &end);
		bad = *end || (c->type != RIO_DTYPE_F32 && c->type != RIO_DTYPE_BF16);
	}
	if (bad)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "column spec item '%s': want name:type:length[:scale] with type "
		                      "u8, f32, bf16 or i64, length >= 1, and a scale only for f32 "
		                      "or bf16",
		                      orig);
	return 0;
}

RIO_API int rio_column_spec_parse(const char *text, rio_column_spec **specs, size_t *n,
                                  rio_error *err)
{
	rio__error_clear(err);
	*specs = NULL;
	*n = 0;
	if (!text || !*text)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "empty column spec: want name:type:length[:scale],...");
	size_t count = 1;
	for (const char *p = text; *p; p++)
		count += *p == ',';
	rio_column_spec *out = calloc(count, sizeof *out);
	if (!out)
		return -ENOMEM;
	const char *p = text;
	for (size_t i = 0; i < count; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int rc = parse_item(p, len, &out[i], err);
		if (rc < 0) {
			free(out);
			return rc;
		}
		p += len + 1;
	}
	*specs = out;
	*n = count;
	return 0;
}

/* Spec c checked, its bytes in *bytes: 0, or -EINVAL naming it. */
static int check_column(const rio_column_spec *spec, size_t c, size_t *bytes, rio_error *err)
{
	const rio_column_spec *s = &spec[c];
	size_t name_len = strnlen(s->name, sizeof s->name);
	if (name_len == 0 || name_len == sizeof s->name)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "column %zu: a name of 1 to %zu bytes, NUL-terminated", c,
		                      sizeof s->name - 1);
	if (rio_dtype_size(s->type) == 0)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "column %s: type %d: want u8, f32, bf16 or i64", s->name,
		                      (int)s->type);
	if (s->length == 0 || s->length > RIO_LOADER_MAX_COLUMN_LENGTH ||
	    __builtin_mul_overflow(s->length, rio_dtype_size(s->type), bytes))
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "column %s: length %zu: want 1 to %u values", s->name,
		                      s->length, RIO_LOADER_MAX_COLUMN_LENGTH);
	return 0;
}

int rio__colplan_init(rio__colplan *cp, const rio_column_spec *spec, size_t n, size_t batch_size,
                      rio_error *err)
{
	memset(cp, 0, sizeof *cp);
	if (n == 0)
		return 0;
	cp->spec = malloc(n * sizeof *cp->spec);
	cp->col_offset = malloc(n * sizeof *cp->col_offset);
	cp->col_bytes = malloc(n * sizeof *cp->col_bytes);
	if (!cp->spec || !cp->col_offset || !cp->col_bytes) {
		rio__colplan_free(cp);
		return -ENOMEM;
	}
	memcpy(cp->spec, spec, n * sizeof *spec);
	cp->ncols = n;
	size_t off = 0, whole;
	for (size_t c = 0; c < n; c++) {
		int rc = check_column(spec, c, &cp->col_bytes[c], err);
		cp->col_offset[c] = off;
		if (rc == 0 && __builtin_add_overflow(off, (cp->col_bytes[c] + 7) & ~(size_t)7, &off))
			rc = rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "columns: %zu columns up to %s do not fit in memory", c + 1,
			                    spec[c].name);
		if (rc < 0) {
			rio__colplan_free(cp);
			return rc;
		}
	}
	cp->row_bytes = off;
	cp->flags_offset = off;
	if (__builtin_add_overflow(off, (n + 7) & ~(size_t)7, &cp->row_stride) ||
	    __builtin_mul_overflow(cp->row_stride, batch_size, &whole)) {
		rio__colplan_free(cp);
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "columns: a batch of %zu rows of %zu columns does not fit in "
		                      "memory", batch_size, n);
	}
	return 0;
}

void rio__colplan_free(rio__colplan *cp)
{
	free(cp->spec);
	free(cp->col_offset);
	free(cp->col_bytes);
	memset(cp, 0, sizeof *cp);
}

/* The single value of a bytes feature, which must be `length` bytes. */
static int one_bytes_value(const rio_feature *f, size_t length, const uint8_t **v,
                           size_t *got)
{
	size_t cursor = 0, len = 0;
	int rc = rio_feature_bytes_next(f, &cursor, v, &len);
	if (rc < 0)
		return rc;
	*got = rc == 1 ? len : 0;
	if (rc == 0 || f->count != 1 || len != length)
		return RIO_EFEATURELEN;
	return 0;
}

/* The hot loops of decoding: restrict (bytes may alias anything) and, with
 * GCC, -O3 for these two (its -O2 leaves the u8 -> f32 conversion scalar),
 * compiled for AVX-512, AVX2 and the baseline, the best picked at load
 * time (an ifunc). The baseline's SSE alone ran at half speed or less
 * after AVX-512 code on the same thread (ISA-L's CRCs) on a 2-core AMD
 * EPYC, and at a third of AVX2's speed gathering rows (cache.c). The
 * results are the same in each: a conversion is exact, then one multiply. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) /* ThreadSanitizer: an ifunc's resolver runs
                                   * before its runtime is up, and crashes */
#define RIO_VECTORIZE \
	__attribute__((optimize("O3"), target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define RIO_VECTORIZE __attribute__((optimize("O3")))
#else
#define RIO_VECTORIZE
#endif

RIO_VECTORIZE static void u8_to_f32(float *restrict dst, const uint8_t *restrict src, size_t n,
                                    float scale)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = (float)src[i] * scale;
}

RIO_VECTORIZE static void u8_to_bf16(uint16_t *restrict dst, const uint8_t *restrict src,
                                     size_t n, float scale)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = rio__bf16_from_f32((float)src[i] * scale);
}

RIO_VECTORIZE static void scale_f32(float *restrict dst, size_t n, float scale)
{
	for (size_t i = 0; i < n; i++)
		dst[i] *= scale;
}

/* Bytes `v` of column `c` widened into `out`: floats or bf16, times the
 * scale. */
static void widen_bytes(const rio_column_spec *c, const uint8_t *v, uint8_t *out)
{
	float scale = c->scale != 0.0f ? c->scale : 1.0f;
	if (c->type == RIO_DTYPE_BF16 && rio__bf16_vec_available()) /* the same bits, faster */
		rio__bf16_from_u8_n((uint16_t *)(void *)out, v, c->length, scale);
	else if (c->type == RIO_DTYPE_BF16)
		u8_to_bf16((uint16_t *)(void *)out, v, c->length, scale);
	else
		u8_to_f32((float *)(void *)out, v, c->length, scale);
}

/* A float, int64 or bytes feature into a column of floats or bf16. With
 * `narrow` (a row's flag), bytes are kept as bytes, and *narrow says so. */
static int decode_numbers(const rio_column_spec *c, const rio_feature *f, uint8_t *out,
                          size_t *got, uint8_t *narrow)
{
	float scale = c->scale != 0.0f ? c->scale : 1.0f;
	if (f->kind == RIO_FEATURE_BYTES) {
		const uint8_t *v;
		int rc = one_bytes_value(f, c->length, &v, got);
		if (rc < 0)
			return rc;
		if (narrow) {
			memcpy(out, v, c->length);
			*narrow = 1;
		} else {
			widen_bytes(c, v, out);
		}
		return 0;
	}
	if (f->kind != RIO_FEATURE_FLOAT && f->kind != RIO_FEATURE_INT64)
		return RIO_EFEATUREKIND;
	if (f->count != c->length)
		return RIO_EFEATURELEN;
	int64_t n;
	if (c->type == RIO_DTYPE_BF16) {
		n = rio__feature_as_bf16(f, (uint16_t *)(void *)out, c->length, scale);
	} else {
		n = rio_feature_as_floats(f, (float *)(void *)out, c->length);
		if (n == (int64_t)c->length && scale != 1.0f)
			scale_f32((float *)(void *)out, c->length, scale);
	}
	if (n < 0)
		return (int)n;
	return (size_t)n == c->length ? 0 : RIO_EFEATURELEN;
}

/* One column of one record into `out`. With `narrow` (a row's flag),
 * an f32 or bf16 column from a bytes feature keeps the bytes, and *narrow
 * says so. */
static int decode_column(const rio_column_spec *c, const rio_feature *f, uint8_t *out,
                         size_t *got, uint8_t *narrow)
{
	*got = f->count;
	if (narrow)
		*narrow = 0;
	switch (c->type) {
	case RIO_DTYPE_U8: {
		if (f->kind != RIO_FEATURE_BYTES)
			return RIO_EFEATUREKIND;
		const uint8_t *v;
		int rc = one_bytes_value(f, c->length, &v, got);
		if (rc < 0)
			return rc;
		memcpy(out, v, c->length);
		return 0;
	}
	case RIO_DTYPE_F32:
	case RIO_DTYPE_BF16:
		return decode_numbers(c, f, out, got, narrow);
	case RIO_DTYPE_I64: {
		if (f->kind != RIO_FEATURE_INT64)
			return RIO_EFEATUREKIND;
		if (f->count != c->length)
			return RIO_EFEATURELEN;
		int64_t n = rio_feature_int64s(f, (int64_t *)(void *)out, c->length);
		if (n < 0)
			return (int)n;
		return (size_t)n == c->length ? 0 : RIO_EFEATURELEN;
	}
	}
	return -EINVAL;
}

/* Column c of a record into `out` (narrow: see decode_column), or the
 * error with what is wrong in `detail`. */
static int decode_one(const rio__colplan *cp, size_t c, const uint8_t *data, size_t size,
                      uint8_t *out, uint8_t *narrow, char *detail, size_t detail_size)
{
	const rio_column_spec *s = &cp->spec[c];
	rio_feature f;
	int rc = rio_example_find(data, size, s->name, &f);
	size_t got = 0;
	if (rc == 0)
		rc = decode_column(s, &f, out, &got, narrow);
	if (rc < 0) {
		if (rc == RIO_EFEATURELEN)
			snprintf(detail, detail_size, "feature '%s' has %zu %s, the spec wants %zu",
			         s->name, got, f.kind == RIO_FEATURE_BYTES ? "bytes" : "values",
			         s->length);
		else if (rc == RIO_EFEATUREKIND)
			snprintf(detail, detail_size, "feature '%s' is a %s list, which cannot be %s",
			         s->name, rio_feature_kind_name(f.kind), rio_dtype_name(s->type));
		else
			snprintf(detail, detail_size, "feature '%s'", s->name);
	}
	return rc;
}

int rio__decode_into(const rio__colplan *cp, const uint8_t *data, size_t size,
                     uint8_t *const *dst, size_t row, char *detail, size_t detail_size)
{
	for (size_t c = 0; c < cp->ncols; c++) {
		int rc = decode_one(cp, c, data, size, dst[c] + row * cp->col_bytes[c], NULL, detail,
		                    detail_size);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int rio__decode_row(const rio__colplan *cp, const uint8_t *data, size_t size, uint8_t *row,
                    char *detail, size_t detail_size)
{
	for (size_t c = 0; c < cp->ncols; c++) {
		int rc = decode_one(cp, c, data, size, row + cp->col_offset[c],
		                    row + cp->flags_offset + c, detail, detail_size);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Column c's part of a row, `narrow` (bytes to widen) or its values, into
 * row `at` of the batch's column: what a decoded row and a packed one
 * share. */
static void part_to_column(const rio__colplan *cp, size_t c, const uint8_t *part, int narrow,
                           const rio_batch_column *cols, size_t at)
{
	uint8_t *out = (uint8_t *)cols[c].host + at * cp->col_bytes[c];
	if (narrow) {
		widen_bytes(&cp->spec[c], part, out);
	} else {
		memcpy(out, part, cp->col_bytes[c]);
	}
}

void rio__row_to_columns(const rio__colplan *cp, const uint8_t *row, const rio_batch_column *cols,
                         size_t at)
{
	for (size_t c = 0; c < cp->ncols; c++)
		part_to_column(cp, c, row + cp->col_offset[c], row[cp->flags_offset + c] != 0, cols, at);
}

/* The bytes column c takes in a packed row: a narrow part's bytes, else
 * its values. */
static size_t packed_bytes(const rio__colplan *cp, size_t c, int narrow)
{
	return narrow ? cp->spec[c].length : cp->col_bytes[c];
}

rio__rowpack *rio__rowpack_new(const rio__colplan *cp, const uint8_t *row, uint64_t nrows)
{
	rio__rowpack *pk = calloc(1, sizeof *pk);
	if (!pk)
		return NULL;
	pk->offset = malloc(cp->ncols * sizeof *pk->offset);
	pk->narrow = malloc(cp->ncols);
	if (!pk->offset || !pk->narrow) {
		rio__rowpack_free(pk);
		return NULL;
	}
	for (size_t c = 0; c < cp->ncols; c++) {
		pk->narrow[c] = row[cp->flags_offset + c] != 0;
		pk->offset[c] = pk->stride;
		pk->stride += packed_bytes(cp, c, pk->narrow[c]);
	}
	if (pk->stride == 0 || nrows > SIZE_MAX / pk->stride ||
	    !(pk->data = malloc(nrows ? (size_t)nrows * pk->stride : 1))) {
		rio__rowpack_free(pk);
		return NULL;
	}
	return pk;
}

void rio__rowpack_free(rio__rowpack *pk)
{
	if (!pk)
		return;
	free(pk->offset);
	free(pk->narrow);
	free(pk->data);
	free(pk);
}

int rio__rowpack_put(const rio__rowpack *pk, const rio__colplan *cp, const uint8_t *row,
                     uint8_t *out)
{
	for (size_t c = 0; c < cp->ncols; c++) {
		if ((row[cp->flags_offset + c] != 0) != pk->narrow[c])
			return -1;
		memcpy(out + pk->offset[c], row + cp->col_offset[c], packed_bytes(cp, c, pk->narrow[c]));
	}
	return 0;
}

void rio__rowpack_to_columns(const rio__rowpack *pk, const rio__colplan *cp, const uint8_t *prow,
                             const rio_batch_column *cols, size_t at)
{
	for (size_t c = 0; c < cp->ncols; c++)
		part_to_column(cp, c, prow + pk->offset[c], pk->narrow[c], cols, at);
}

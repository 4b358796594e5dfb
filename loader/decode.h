/*
 * decode.h — tf.train.Example records into fixed-size rows.
 *
 * A worker decodes each record into one row: the columns' values side by
 * side (column c at row + col_offset[c], col_bytes[c] long). The batcher
 * later copies each part of a row into its column of the batch. Fixed rows
 * keep the shuffle buffer and the batch copy simple and fast.
 */
#ifndef RIO_LOADER_DECODE_H
#define RIO_LOADER_DECODE_H

#include "loader.h"

typedef struct rio__colplan {
	size_t ncols;               /* 0: raw payloads, no decoding        */
	rio_column_spec *spec;      /* a copy of the options' specs         */
	size_t *col_offset;
	size_t *col_bytes;
	size_t row_bytes;
} rio__colplan;

int rio__colplan_init(rio__colplan *cp, const rio_column_spec *spec, size_t n);
void rio__colplan_free(rio__colplan *cp);

/* Decodes one Example into `row`. Returns 0, or RIO_EBADEXAMPLE,
 * RIO_ENOFEATURE, RIO_EFEATUREKIND, RIO_EFEATURELEN with the feature named
 * in `detail` (a short static-size text). */
int rio__decode_row(const rio__colplan *cp, const uint8_t *data, size_t size, uint8_t *row,
                    char *detail, size_t detail_size);

/* Decodes one Example straight into column tables: column c's values go to
 * dst[c] + row * col_bytes[c] (the batch's own memory). Same returns. */
int rio__decode_into(const rio__colplan *cp, const uint8_t *data, size_t size,
                     uint8_t *const *dst, size_t row, char *detail, size_t detail_size);

#endif /* RIO_LOADER_DECODE_H */

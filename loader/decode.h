/*
 * decode.h — tf.train.Example records into fixed-size rows.
 *
 * A worker decodes each record into one row: the columns' values side by
 * side (column c at row + col_offset[c], room for col_bytes[c]), then one
 * flag byte per column (at row + flags_offset). The batcher later copies
 * each part of a row into its column of the batch. Fixed rows keep the
 * shuffle buffer and the batch copy simple and fast.
 * Narrow parts: an f32 column read from a bytes feature (an image's
 * pixels) keeps the bytes themselves in the row, its flag set, and becomes
 * floats (times the scale) only as the batcher copies it into the batch:
 * a quarter of the bytes written by the worker, held by the shuffle buffer
 * and read back by the batcher, and the same floats (the same product of
 * the same two floats, made later). Rows were memory-bound: with rows of
 * floats, a shuffle buffer of 10,000 Fashion-MNIST images is 31 MB, which
 * no cache holds, read back at random.
 */
#ifndef RIO_LOADER_DECODE_H
#define RIO_LOADER_DECODE_H

#include "loader.h"

typedef struct rio__colplan {
	size_t ncols;               /* 0: raw payloads, no decoding        */
	rio_column_spec *spec;      /* a copy of the options' specs         */
	size_t *col_offset;         /* in a row                             */
	size_t *col_bytes;          /* a value's bytes in its batch column  */
	size_t row_bytes;           /* the parts, each 8-aligned: a record's
	                             * bytes (as the statistics count them) */
	size_t flags_offset;        /* a row's flag bytes, one per column   */
	size_t row_stride;          /* a row's size in memory               */
} rio__colplan;

/* The row layout of `n` column specs, checked: -EINVAL (with a message in
 * `err` naming the column) for a spec rio_loader_open() refuses (loader.h)
 * or sizes that do not fit a size_t; once it succeeds, batch_size *
 * col_bytes[c] and batch_size * row_stride fit too. -ENOMEM. */
int rio__colplan_init(rio__colplan *cp, const rio_column_spec *spec, size_t n, size_t batch_size,
                      rio_error *err);
void rio__colplan_free(rio__colplan *cp);

/* Decodes one Example into a row of row_stride bytes (narrow parts and
 * their flags as above). Returns 0, or RIO_EBADEXAMPLE,
 * RIO_ENOFEATURE, RIO_EFEATUREKIND, RIO_EFEATURELEN with the feature named
 * in `detail` (a short static-size text). */
int rio__decode_row(const rio__colplan *cp, const uint8_t *data, size_t size, uint8_t *row,
                    char *detail, size_t detail_size);

/* Decodes one Example straight into column tables: column c's values go to
 * dst[c] + row * col_bytes[c] (the batch's own memory). Same returns. */
int rio__decode_into(const rio__colplan *cp, const uint8_t *data, size_t size,
                     uint8_t *const *dst, size_t row, char *detail, size_t detail_size);

/* Copies a decoded row into row `at` of a batch's columns, widening its
 * narrow parts. */
void rio__row_to_columns(const rio__colplan *cp, const uint8_t *row, const rio_batch_column *cols,
                         size_t at);

/* Rows packed for keeping (opts.cache, cache.c): the decoded rows of one
 * shard, whose narrow flags are the same in every row, so that each part
 * takes only the bytes it holds (an image's pixels, not room for its
 * floats) and no flag bytes: `stride` bytes a row, column c's part at
 * offset[c], narrow[c] saying whether it is bytes to widen. */
typedef struct rio__rowpack {
	size_t stride;
	size_t *offset;
	uint8_t *narrow;
	uint8_t *data;    /* room for the rows                             */
} rio__rowpack;

/* A new pack with room for `nrows` rows laid out by the flags of decoded
 * row `row`; NULL when there is no memory. */
rio__rowpack *rio__rowpack_new(const rio__colplan *cp, const uint8_t *row, uint64_t nrows);
/* Frees the pack, its layout and its rows; NULL is nothing to free. */
void rio__rowpack_free(rio__rowpack *pk);
/* Packs decoded row `row` into `out` (pk->stride bytes); -1 when its flags
 * are not the layout's. */
int rio__rowpack_put(const rio__rowpack *pk, const rio__colplan *cp, const uint8_t *row,
                     uint8_t *out);
/* rio__row_to_columns for packed row `prow`. */
void rio__rowpack_to_columns(const rio__rowpack *pk, const rio__colplan *cp, const uint8_t *prow,
                             const rio_batch_column *cols, size_t at);

#endif /* RIO_LOADER_DECODE_H */

/*
 * embed.h — embedding tables for categorical int64 features (--embed
 * FEATURE:VOCAB:DIM): each record holds k ids of a feature (a fixed-length
 * int64 column, k taken from the first record), looked up in a vocab x dim
 * table and mean-pooled into dim floats, which sit in the MLP's input beside
 * the dense features. A table's gradient touches only the rows of the ids
 * in the batch, so it is kept sparse: the batch's unique ids and, for each,
 * the summed gradient of its row (what a parameter-server worker pulls and
 * pushes), and the optimizer updates only those rows.
 *
 * Host memory, plain C (the CPU side: a table on a parameter server, or a
 * worker's pulled rows); nothing here prints or exits.
 *
 * A step on one table, with ids rows x k (row-major, record r's ids at
 * ids[r * k]):
 *   n = tr_embed_unique(ids, rows * k, uniq, pos);    rows to pull/update
 *   tr_embed_forward(t, params, ids, rows, x, ld, &bad)   (or, on pulled
 *       rows, tr_embed_pool(pulled, pos, rows, k, dim, x, ld))
 *   ... MLP forward, loss, backward with its input gradient dx ...
 *   tr_embed_backward(dx, ld, pos, rows, k, dim, n, rowgrad);
 *   tr_embed_update(opt, params, t, uniq, n, rowgrad);  (lazy: below)
 */
#ifndef RIO_TRAINER_EMBED_H
#define RIO_TRAINER_EMBED_H

#include "optim.h"

#include <stddef.h>
#include <stdint.h>

/* One table. Row i (id i) is the dim floats at params[offset + i * dim] of
 * the parameter buffer the functions below are given (offset 0 for a
 * buffer that holds the table alone). */
typedef struct tr_embed_table {
	char feature[128]; /* the int64 feature's name in the records      */
	int64_t vocab;     /* ids are in [0, vocab)                        */
	int dim;           /* floats per row                               */
	int k;             /* ids per record (>= 1; the first record's count) */
	size_t offset;     /* the table's first float in the buffer        */
} tr_embed_table;

/* Floats in the table: vocab * dim. */
size_t tr_embed_param_count(const tr_embed_table *t);

/* DLRM's initialisation of a table, from `seed`: every float uniform in
 * +-sqrt(1 / vocab); `salt` (e.g. the table's index) makes tables of the
 * same seed differ. Writes the vocab x dim floats at params + t->offset. */
void tr_embed_init_params(const tr_embed_table *t, uint64_t seed, uint64_t salt, float *params);
/* The same values for rows [lo, hi) only, into dst ((hi - lo) x dim): each
 * row is drawn from its own stream, so a parameter server makes its rows
 * alone, as they are in the whole table. */
void tr_embed_init_rows(const tr_embed_table *t, uint64_t seed, uint64_t salt, int64_t lo,
                        int64_t hi, float *dst);

/* The first record of `rows` (ids rows x k) holding an id outside
 * [0, vocab), or -1 when every id is in range. */
int tr_embed_check(const int64_t *ids, int rows, int k, int64_t vocab);

/* Mean pooling: out[r][j] = (1/k) * sum over i < k of src[idx[r * k + i]][j],
 * for r < rows and j < dim; src is rows of dim floats, out has row stride ld
 * (>= dim), so a table's block can be written into columns of a wider
 * input matrix. The indices are not checked (see tr_embed_check). */
void tr_embed_pool(const float *src, const int64_t *idx, int rows, int k, int dim, float *out,
                   int ld);

/* Forward of one table: tr_embed_check, then tr_embed_pool from the table's
 * rows in params. 0; or -ERANGE with *bad_row (may be NULL) the first
 * record (row of the batch) holding an id outside [0, vocab), so the caller
 * can name it; out is then left untouched. */
int tr_embed_forward(const tr_embed_table *t, const float *params, const int64_t *ids, int rows,
                     float *out, int ld, int *bad_row);

/* The batch's unique ids: uniq[0..return) the n ids sorted ascending
 * without repeats (uniq has room for n), and pos[i] (n of them) the index
 * in uniq of ids[i], so that uniq[pos[i]] == ids[i]. Returns the number of
 * unique ids (0 when n is 0). Deterministic; no allocation. */
size_t tr_embed_unique(const int64_t *ids, size_t n, int64_t *uniq, int64_t *pos);

/* Backward of the mean pooling: from dout (rows x dim, row stride ld, the
 * gradient of the pooled block) the compact row gradients grad (nunique x
 * dim, overwritten): grad[u] = sum over the occurrences i of unique id u
 * (pos[i] == u, i = r * k + slot) of dout[r] / k. The sums run in one fixed
 * order (records ascending, then slots), so the bits are the same every
 * run. */
void tr_embed_backward(const float *dout, int ld, const int64_t *pos, int rows, int k, int dim,
                       size_t nunique, float *grad);

/* Adds the compact row gradients into a dense gradient buffer laid out as
 * the parameters (row uniq[u] at dense + t->offset + uniq[u] * dim): what
 * a dense allreduce of the table needs (the rest of the table's gradient
 * being zero). */
void tr_embed_scatter_grad(const tr_embed_table *t, const int64_t *uniq, size_t nunique,
                           const float *grad, float *dense);

/* Sparse optimizer update of the table's rows uniq[0..nunique) (ids in
 * range, e.g. from tr_embed_unique after tr_embed_forward) with their
 * compact gradients grad (nunique x dim), through tr_optim_update_rows: the
 * optimizer `o` spans the buffer params (its state at the same offsets), and
 * tr_optim_begin() has been called for the step. SGD and Adam: exactly
 * optim.h's formulas, weight decay included, for those rows. Rows not in
 * the batch are not touched: no weight decay, no momentum carried on, no
 * Adam moment decay for them (the lazy update of TensorFlow's
 * LazyAdamOptimizer and PyTorch's sparse gradients: a row's state moves only
 * when its id is seen; Adam's bias correction uses the global step count).
 * 0, or -ENOTSUP for LARS (a layer-wise norm needs the whole table). */
int tr_embed_update(tr_optim *o, float *params, const tr_embed_table *t, const int64_t *uniq,
                    size_t nunique, const float *grad);

#endif /* RIO_TRAINER_EMBED_H */

/*
 * tensor_slice.h — what a rank holds of the model under a D x P x T layout
 * (layout.h): its stage's layers, each whole or, under tensor parallelism,
 * its slice of a Megatron-LM pair (the first layer's output units, the
 * second's input columns; the second's bias whole on every rank of the
 * group), as a network of its own (mlp.h); and the copies of its
 * parameters to and from the whole model's layout, the one checkpoints
 * keep.
 */
#ifndef RIO_TRAINER_TENSOR_SLICE_H
#define RIO_TRAINER_TENSOR_SLICE_H

#include "layout.h"

#include <stddef.h>

typedef struct tr_slice {
	int first, nlayers;                 /* the stage's layers of the model */
	int sizes[TR_MLP_MAX_LAYERS + 1];   /* this rank's network's sizes     */
	int split[TR_MLP_MAX_LAYERS];       /* each of its layers: TR_SPLIT_*  */
	size_t nparams;                     /* its parameters                  */
} tr_slice;

/* This rank's part (stage l->p, tensor rank l->t) of a model of these
 * sizes, its stages set (tr_layout_stages). */
void tr_slice_of(tr_slice *s, const tr_layout *l, const int *sizes, int nlayers);

/* A run of floats this rank holds that is contiguous in the whole model's
 * layout too: n floats at whole_at there, at mine_at in its own. */
typedef struct tr_slice_run {
	size_t whole_at, mine_at, n;
} tr_slice_run;

/* Calls fn for each run of this rank's part (a row of a pair's second
 * layer, a whole block elsewhere), layer by layer: all it holds, or with
 * `owned` only what it owns (its slices; what the group holds whole, only
 * tensor rank 0: each float of the model owned by one rank of the copy). */
typedef void (*tr_slice_run_fn)(void *ctx, const tr_slice_run *r);
void tr_slice_each_run(const tr_slice *s, const tr_layout *l, const int *sizes, int nlayers,
                       int owned, tr_slice_run_fn fn, void *ctx);

/* Copies between this rank's parameters (`mine`, nparams floats of host
 * memory, in its network's layout) and the whole model's (`whole`, the
 * whole model's layout): to_whole 0 fills mine from whole; 1 writes mine
 * into whole, only the parts this rank owns (its slices; what the group
 * holds whole, only tensor rank 0), the rest of whole untouched. */
void tr_slice_copy(const tr_slice *s, const tr_layout *l, const int *sizes, int nlayers,
                   float *whole, float *mine, int to_whole);

#endif /* RIO_TRAINER_TENSOR_SLICE_H */

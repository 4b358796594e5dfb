/*
 * mlp.h — the model: a multilayer perceptron (dense layers, ReLU between
 * them, softmax cross-entropy at the end) written once against backend.h, so
 * the same code trains on the CPU and on a GPU.
 *
 * Parameters and gradients are each one contiguous buffer, laid out from
 * the last layer to the first (W then b of each): backward finishes layers
 * in that order, so the gradients ready at any moment are a prefix of the
 * buffer and can be handed to the allreduce in contiguous buckets while the
 * earlier layers are still being differentiated. The gradient buffer has
 * TR_MLP_EXTRA more floats after the parameters' (see below), reduced with
 * them in the same collectives.
 */
#ifndef RIO_TRAINER_MLP_H
#define RIO_TRAINER_MLP_H

#include "backend.h"

#include <stddef.h>
#include <stdint.h>

enum { TR_MLP_MAX_LAYERS = 16, TR_MLP_MAX_INPUTS = 32 };

/* The floats after the gradients: filled by a step, summed by the allreduce. */
enum {
	TR_EXTRA_LOSS = 0,      /* summed loss of the rank's batch          */
	TR_EXTRA_CORRECT = 1,   /* rows whose prediction was right          */
	TR_EXTRA_COUNT = 2,     /* rows in the batch                         */
	TR_EXTRA_NONFINITE = 3, /* 1 when the rank saw a NaN or infinity     */
	TR_EXTRA_FAILED = 4,    /* 1 when the rank's data failed (its error
	                         * message is then agreed on and reported)  */
	TR_MLP_EXTRA = 5
};

/* One batch's input: the features' dense blocks (backend memory), each
 * rows x width row-major, concatenated left to right into the model's
 * input; and the int64 labels (backend memory). Under --precision bf16 a
 * block may come as bf16 already (part16[p] non-NULL; part[p] may then be
 * NULL): the first layer's GEMMs take it as it is; an fp32 block is
 * rounded to bf16 by the forward pass. */
typedef struct tr_input {
	int nparts;
	const float *part[TR_MLP_MAX_INPUTS];
	const tr_bf16 *part16[TR_MLP_MAX_INPUTS];
	int width[TR_MLP_MAX_INPUTS];
	const int64_t *labels;
	int rows;
} tr_input;

typedef struct tr_mlp {
	tr_math *math;
	int nlayers;                        /* dense layers                */
	int sizes[TR_MLP_MAX_LAYERS + 1];   /* inputs, hidden..., classes  */
	int max_rows;
	size_t nparams;
	size_t w_off[TR_MLP_MAX_LAYERS];    /* in params and grads         */
	size_t b_off[TR_MLP_MAX_LAYERS];
	size_t ready[TR_MLP_MAX_LAYERS];    /* grads [0, ready[l]) are final
	                                     * once layer l's backward ran */
	float *params;                      /* backend, nparams (lent)     */
	float *grads;                       /* backend, nparams + EXTRA
	                                     * (lent)                      */
	float *out[TR_MLP_MAX_LAYERS];      /* each layer's output, max_rows
	                                     * x sizes[l + 1]; the last is
	                                     * the logits                  */
	float *delta[2];                    /* backward scratch            */
	float *dinput;                      /* backend, max_rows x
	                                     * dinput_cols, or NULL: see
	                                     * tr_mlp_want_dinput          */
	int dinput_col, dinput_cols;
	int relu_last;                      /* 1: the last layer has a ReLU
	                                     * too (a pipeline stage before
	                                     * the last, whose output is the
	                                     * next stage's input)         */
	float *dz_from;                     /* tr_mlp_output_grad's: where
	                                     * the next backward starts    */
	/* tensor parallelism (a slice of each layer, layout.h): layer l's
	 * output before its bias is a partial sum to be summed over the
	 * group (sum_out[l]: the second of a Megatron-LM pair), or the
	 * gradient of its input is (sum_din[l]: the first); `reduce` sums
	 * n floats of backend memory in place over the group */
	unsigned char sum_out[TR_MLP_MAX_LAYERS], sum_din[TR_MLP_MAX_LAYERS];
	void (*reduce)(void *ctx, float *x, size_t n);
	void *reduce_ctx;
	/* --precision bf16 (tr_mlp_use_bf16): the GEMMs take bf16 operands */
	tr_precision precision;
	tr_bf16 *params16;                  /* backend, nparams (lent): the
	                                     * parameters rounded to bf16 */
	int params16_by_update;             /* 1: every update writes them
	                                     * (tr_optim_write16)          */
	int params16_stale;                 /* 1: made again by the next
	                                     * forward                     */
	tr_bf16 *in16;                      /* the fp32 input blocks rounded,
	                                     * block p at max_rows x its
	                                     * first column                */
	const tr_bf16 *part16[TR_MLP_MAX_INPUTS]; /* the forward's bf16
	                                     * input blocks, for backward  */
	tr_bf16 *out16[TR_MLP_MAX_LAYERS];  /* the hidden layers' outputs   */
	tr_bf16 *delta16[2];                /* delta[] rounded              */
	int in16_row0;                      /* a pipeline stage's microbatch
	                                     * slot: its input's rows in in16
	                                     * from this row of each block */
	int dinput16;                       /* 1: the input gradient's GEMM
	                                     * in bf16 too (a pipeline
	                                     * stage's input: the GEMM that
	                                     * data-parallel training does
	                                     * at that layer)              */
	float *wsum;                        /* NULL, or where the weight
	                                     * gradients go in place of
	                                     * grads (laid out as grads): a
	                                     * pipeline stage's sum over its
	                                     * microbatches, added into by
	                                     * the GEMMs (beta 1) unless
	                                     * wsum_first; the biases'
	                                     * gradients still go to grads */
	int wsum_first;
} tr_mlp;

/* The layout alone of a model of these sizes (inputs, then the hidden
 * sizes, then classes; `nlayers` dense layers, 1 + number of hidden
 * sizes): nlayers, sizes, nparams and the offsets, no memory (enough for
 * tr_mlp_init_params). 0 or -EINVAL. */
int tr_mlp_layout(tr_mlp *net, const int *sizes, int nlayers);

/* A model to compute with: its layout, and its activations for up to
 * max_rows rows (backend memory, its own). The parameters (nparams
 * floats) and the gradients (nparams + TR_MLP_EXTRA floats) are backend
 * memory lent by the caller (the parameter store, store.h): the model
 * computes in them and never frees them. 0, -EINVAL or -ENOMEM. */
int tr_mlp_init(tr_mlp *net, tr_math *math, const int *sizes, int nlayers, int max_rows,
                float *params, float *grads);
/* Frees what the model allocated (not the lent parameters and gradients). */
void tr_mlp_free(tr_mlp *net);

/* Parameters a model of these sizes has. */
size_t tr_mlp_param_count(const int *sizes, int nlayers);

/* PyTorch's default initialisation of a Linear layer, from `seed`: W and b
 * uniform in +-1/sqrt(fan_in). Writes nparams floats of host memory. */
void tr_mlp_init_params(const tr_mlp *net, uint64_t seed, float *host);
/* Layer l's share of it alone: its weights then its biases (sizes[l + 1] x
 * (sizes[l] + 1) floats, as they follow each other in host), each layer
 * drawn from a stream of its own. */
void tr_mlp_init_layer(const int *sizes, int l, uint64_t seed, float *layer);

/* Forward through all layers: net->out[nlayers - 1] holds the logits. */
void tr_mlp_forward(tr_mlp *net, const tr_input *in);

/* Loss of the last forward: adds the summed loss and correct count to
 * stats[0..1] (backend memory); with `backward`, also keeps the loss's
 * gradient for tr_mlp_backward and writes the last layer's bias gradient
 * (in the same pass). */
void tr_mlp_loss(tr_mlp *net, const tr_input *in, float *stats, int backward);

/* In place of tr_mlp_loss on a pipeline stage before the last (relu_last):
 * the summed loss's gradient with respect to the last layer's output (its
 * ReLU's), `rows` x sizes[nlayers] from the next stage (backend memory),
 * taken through the ReLU in place, with the last layer's bias gradient;
 * the next tr_mlp_backward starts from it. */
void tr_mlp_output_grad(tr_mlp *net, float *dout, int rows);

/* Backward of the summed loss into net->grads (unscaled: the caller
 * divides by the global batch). After each layer calls ready(ctx, end):
 * grads [0, end) are final (queued, on a GPU), and params [0, end) are
 * read no more by this backward, so they may be updated at once. */
typedef void (*tr_mlp_ready_fn)(void *ctx, size_t end);
void tr_mlp_backward(tr_mlp *net, const tr_input *in, tr_mlp_ready_fn ready, void *ctx);

/* Asks every later tr_mlp_backward for the gradient of the summed loss
 * with respect to the input columns [col, col + cols) too (e.g. the pooled
 * embeddings, embed.h, placed there): it is written to net->dinput (backend
 * memory, rows x cols, row stride cols) by one more GEMM in the first
 * layer's backward, before ready() is called for it (so before W_0 may
 * change). Call once after tr_mlp_init; freed by tr_mlp_free. Without it,
 * backward computes no input gradient (and costs nothing more). 0,
 * -EINVAL for a range outside the inputs, -ENOMEM. */
int tr_mlp_want_dinput(tr_mlp *net, int col, int cols);

/* --precision bf16: from now on the forward and backward GEMMs take bf16
 * operands (the input, the hidden layers' outputs, the output gradients,
 * the weights in params16) and accumulate and write fp32; the rest stays
 * fp32. params16 (nparams, backend memory) is lent like params. With
 * by_update 0 the forward pass rounds the parameters into params16 every
 * time; with 1 the caller's optimizer writes them as it updates
 * (tr_optim_write16), and whatever else writes the parameters (a
 * checkpoint's, an evaluated copy's) says so with tr_mlp_params_changed.
 * Call once after tr_mlp_init. 0 or -ENOMEM. */
int tr_mlp_use_bf16(tr_mlp *net, tr_bf16 *params16, int by_update);

/* Under bf16: net->part16, the input blocks as the forward of `in` left
 * them, without rounding again (a backward on another copy of the net than
 * its forward's: a pipeline stage's view of a microbatch slot). */
void tr_mlp_bind16(tr_mlp *net, const tr_input *in);

/* The parameters were written other than by an update that wrote params16
 * too: the next forward rounds them again (nothing under fp32). */
static inline void tr_mlp_params_changed(tr_mlp *net) { net->params16_stale = 1; }

#endif /* RIO_TRAINER_MLP_H */

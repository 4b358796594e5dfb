/*
 * optim.h — the optimizers and the learning-rate schedule.
 *
 * Every update first forms g = grad * grad_scale + weight_decay * param
 * (grad_scale turns the allreduced sum into the global batch's mean;
 * weight decay is L2, as PyTorch's SGD and Adam apply it), then:
 *   SGD:  v = momentum * v + g;  param -= lr * v
 *   Adam: m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
 *         param -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
 *   LARS: per block of parameters (You et al. 2017; optim_lars.c), with
 *         the rate of the schedule below as the global rate.
 * Schedule (Goyal et al., "Accurate, Large Minibatch SGD"): the rate is
 * lr * scale, where scale is the linear scaling rule's k (how many times
 * larger the global batch is than the batch `lr` was chosen for), reached
 * by gradual warmup: from lr at step 0, linearly, to lr * scale at
 * warmup_steps; without scaling (scale 1), warmup rises from 0 to lr.
 * Then constant, or cosine decay to 0 over the remaining
 * steps.
 */
#ifndef RIO_TRAINER_OPTIM_H
#define RIO_TRAINER_OPTIM_H

#include "backend.h"

#include <stdint.h>

typedef enum tr_opt_kind { TR_OPT_SGD = 0, TR_OPT_ADAM = 1, TR_OPT_LARS = 2 } tr_opt_kind;

/* A tensor of the parameter buffer: n floats from off; `adapt` 1 for a
 * weight matrix (LARS's trust ratio and weight decay), 0 for a bias. */
typedef struct tr_param_block {
	size_t off, n;
	int adapt;
} tr_param_block;
enum { TR_OPT_MAX_BLOCKS = 64 };

typedef struct tr_optim_config {
	tr_opt_kind kind;
	float lr;
	float momentum;     /* SGD                                          */
	float weight_decay;
	float beta1, beta2, eps; /* Adam                                    */
	float scale;        /* the linear scaling rule's k (1: none)        */
	uint64_t warmup_steps;
	int cosine;         /* 1: cosine decay after warmup                  */
	uint64_t total_steps; /* for the cosine decay                        */
	float trust;        /* LARS's trust coefficient (eta)                */
} tr_optim_config;

typedef struct tr_optim {
	tr_optim_config cfg;
	tr_math *math;
	size_t n;
	float *state1, *state2; /* backend (lent): SGD velocity; Adam m, v  */
	uint64_t t;             /* updates applied                          */
	float lr, grad_scale;   /* of the update begun                      */
	tr_param_block block[TR_OPT_MAX_BLOCKS]; /* LARS: the tensors      */
	int nblocks;
	/* LARS under tensor parallelism: block i's norms of this rank's slice
	 * made the whole layer's (NULL: the blocks are whole) */
	void (*whole_norms)(void *ctx, int block, float *wn, float *gn);
	void *norms_ctx;
	tr_bf16 *params16;      /* backend (lent) or NULL: --precision bf16's
	                         * copy of the parameters, written by each
	                         * update in the same pass (tr_optim_write16) */
} tr_optim;

/* An optimizer over n parameters with the configuration cfg; its state
 * (tr_optim_states(cfg->kind) buffers of n floats, zeroed: SGD's
 * velocity; Adam's m, then v) is backend memory lent by the caller (the
 * parameter store, store.h, or a server's own): the optimizer updates it
 * and never frees it. 0, or -EINVAL when a buffer is missing. */
int tr_optim_init(tr_optim *o, tr_math *math, size_t n, const tr_optim_config *cfg,
                  float *state1, float *state2);
/* How many state buffers of n floats an optimizer of this kind keeps
 * (1 or 2), and `o` keeps. */
int tr_optim_states(tr_opt_kind kind);
int tr_optim_state_count(const tr_optim *o);

/* What a checkpoint keeps of a buffer `params` that `o` updates: the
 * parameters (which 0), or the optimizer's first or second state buffer
 * (1, 2; NULL where the optimizer keeps none). */
static inline float *tr_optim_buffer(tr_optim *o, float *params, int which)
{
	return which == 0 ? params : which == 1 ? o->state1 : o->state2;
}

/* Asks every later update of the buffer `params` (indices from 0, as
 * tr_optim_update's) to also write the updated values rounded to bf16 at
 * the same indices of params16 (n elements, backend memory), in the same
 * pass; NULL: no more. The MLP's --precision bf16 weights (mlp.h). */
static inline void tr_optim_write16(tr_optim *o, tr_bf16 *params16) { o->params16 = params16; }

/* LARS (optim_lars.c): the tensors of the parameter buffer, at most
 * TR_OPT_MAX_BLOCKS (-EINVAL beyond). Set after init, before any step. */
int tr_optim_set_blocks(tr_optim *o, const tr_param_block *b, int n);
/* One LARS update at rate lr (tr_optim_update calls it over [0, n)). 0, or -EIO when
 * the backend failed to compute a norm. */
int tr_lars_step(tr_optim *o, float *params, const float *grads, float grad_scale, float lr);

/* The learning rate at global step `step` (from 0). */
float tr_optim_lr(const tr_optim_config *cfg, uint64_t step);

/* An update in pieces: tr_optim_begin() once for global step `step`
 * (the rate, Adam's bias corrections), then tr_optim_update() over ranges
 * that together cover [0, n) once, in any order (each a single pass over
 * its range: a bucket of the allreduce, updated as soon as its sum is in).
 * Each element's new value depends only on its own state, so the order
 * changes nothing. */
void tr_optim_begin(tr_optim *o, float grad_scale, uint64_t step);
void tr_optim_update(tr_optim *o, float *params, const float *grads, size_t begin, size_t end);
/* 1 when a range can be updated on its own (SGD, Adam); 0 for an optimizer
 * that needs whole layers first (a layer-wise trust ratio): then one
 * tr_optim_update() over [0, n) once every gradient is in. */
int tr_optim_bucketwise(const tr_optim *o);

/* The sparse form of tr_optim_update (embedding tables, embed.h): updates
 * only the rows rows[0..nrows) of a table of rows of row_len floats that
 * starts at params[offset] (row i: params[offset + i * row_len], its state
 * at the same offsets of state1/state2), with their gradients packed in
 * `grads` (nrows x row_len, row r for rows[r]). The same per-element code
 * and formulas as tr_optim_update over each row's range; the rows not
 * listed are left as they are (a lazy update). Rows must be distinct and
 * inside the optimizer's n. 0, or -ENOTSUP for LARS. Each row is one
 * backend call: meant for host memory (CPU backend). */
int tr_optim_update_rows(tr_optim *o, float *params, size_t offset, size_t row_len,
                         const int64_t *rows, size_t nrows, const float *grads);

/* One whole update of params from grads, at global step `step`: begin,
 * then update [0, n). */
void tr_optim_step(tr_optim *o, float *params, const float *grads, float grad_scale,
                   uint64_t step);

#endif /* RIO_TRAINER_OPTIM_H */

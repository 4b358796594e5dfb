/*
 * optim.h — the optimizers and the learning-rate schedule.
 *
 * Every update first forms g = grad * grad_scale + weight_decay * param
 * (grad_scale turns the allreduced sum into the global batch's mean;
 * weight decay is L2, as PyTorch's SGD and Adam apply it), then:
 *   SGD:  v = momentum * v + g;  param -= lr * v
 *   Adam: m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
 *         param -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
 * Schedule (Goyal et al., "Accurate, Large Minibatch SGD"): the rate is
 * lr * scale, where scale is the linear scaling rule's k (how many times
 * larger the global batch is than the batch `lr` was chosen for), reached
 * by gradual warmup: from lr at step 0, linearly, to lr * scale at
 * warmup_steps. Then constant, or cosine decay to 0 over the remaining
 * steps.
 */
#ifndef RIO_TRAINER_OPTIM_H
#define RIO_TRAINER_OPTIM_H

#include "backend.h"

#include <stdint.h>

typedef enum tr_opt_kind { TR_OPT_SGD = 0, TR_OPT_ADAM = 1 } tr_opt_kind;

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
} tr_optim_config;

typedef struct tr_optim {
	tr_optim_config cfg;
	tr_math *math;
	size_t n;
	float *state1, *state2; /* backend: SGD velocity; Adam m and v      */
	uint64_t t;             /* updates applied                          */
} tr_optim;

int tr_optim_init(tr_optim *o, tr_math *math, size_t n, const tr_optim_config *cfg);
void tr_optim_free(tr_optim *o);
/* How many state buffers of n floats the optimizer keeps (1 or 2). */
int tr_optim_state_count(const tr_optim *o);

/* The learning rate at global step `step` (from 0). */
float tr_optim_lr(const tr_optim_config *cfg, uint64_t step);

/* One update of params from grads, at global step `step`. */
void tr_optim_step(tr_optim *o, float *params, const float *grads, float grad_scale,
                   uint64_t step);

#endif /* RIO_TRAINER_OPTIM_H */

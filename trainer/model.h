/*
 * model.h — a rank's model: the math backend, the MLP, the optimizer (its
 * configuration, with the rate's schedule, on every rank), the --embed
 * tables, the evaluation's sums. The model holds none of the parameters,
 * gradients or optimizer state itself: it asks the parameter store
 * (store.h) for them, in the places the strategy chooses, and computes in
 * what the store lends. A parameter server keeps only the model's shape
 * (its slice is the server's own, ps.h).
 */
#ifndef RIO_TRAINER_MODEL_H
#define RIO_TRAINER_MODEL_H

#include "backend.h"
#include "data.h"
#include "embed_run.h"
#include "mlp.h"
#include "optim.h"
#include "run_config.h"
#include "store.h"

#include <stddef.h>

/* Where the strategy wants the model's buffers (-1: none on this rank). */
typedef struct tr_model_places {
	int params, grads;     /* tr_place of the parameters and gradients    */
	int staging;           /* a host copy of the gradients (a GPU's), or
	                        * -1: they are host memory already          */
	int state;             /* the optimizer's state: where this rank
	                        * updates the whole model                   */
	int tables;            /* --embed tables held whole (allreduce)      */
	int table_grads;       /* ... and their dense gradient               */
	int update16;          /* 1: the optimizer's updates alone write the
	                        * parameters (this rank's, or with params16
	                        * shared the host's ranks' slices), so under
	                        * --precision bf16 they write the bf16 copy;
	                        * the strategy says tr_mlp_params_changed
	                        * for anything else that writes them. 0: the
	                        * forward pass rounds them every step       */
	int params16_shared;   /* 1: the bf16 copy is the host's one copy
	                        * (TR_PLACE_HOST_SHARED) beside shared
	                        * parameters, each rank's sharded update
	                        * writing its slices of it                  */
} tr_model_places;

typedef struct tr_model {
	tr_math *math;
	int sizes[TR_MLP_MAX_LAYERS + 1], nlayers;
	size_t nparams;
	int rows;              /* the largest batch a rank takes             */
	tr_mlp net;            /* built where the model is computed (net.math
	                        * NULL on a parameter server)               */
	tr_optim opt;          /* opt.cfg: the rate's schedule, every rank;
	                        * state only where this rank updates        */
	tr_embed_run embed;    /* --embed (embed.n 0 without)                */
	float *staging;        /* host copy of the gradients (the gradients
	                        * themselves on the CPU)                    */
	float *eval_stats;     /* backend: an evaluation's loss and correct  */
	size_t table_floats;   /* the --embed tables held whole: their floats */
	double planned_bytes;  /* what this rank was planned to hold (fit.h) */
	/* the store's regions (-1: none) */
	int r_params, r_grads, r_staging, r_state[2];
	int r_params16;        /* --precision bf16: the parameters rounded   */
	int update16;          /* tr_model_places's                          */
	int r_tables, r_table_grads, r_table_state[2];
} tr_model;

/* The math backend: the local rank's GPU, or the host's cores shared among
 * its ranks (a parameter server: the CPU, one thread); under --precision
 * bf16 checked for bf16 GEMMs (refused without: backend.h's
 * tr_math_bf16_check). 0, or a negative errno with a one-line message. */
int tr_model_open_math(tr_model *m, const tr_config *c, char *err, size_t errlen);

/* The model's shape from the data's widths: inputs (and the --embed
 * tables' pooled rows), hidden layers, classes. */
void tr_model_shape(tr_model *m, const tr_config *c, const tr_data *d);

/* The rate's schedule, once the steps per epoch are known: the linear
 * scaling rule's scale (the checkpoint's on resume), warmup, total steps. */
void tr_model_schedule(tr_model *m, const tr_config *c, uint64_t steps_per_epoch);

/* Asks the store for the model's buffers, where `at` says. */
void tr_model_plan(tr_model *m, const tr_config *c, const tr_data *d, tr_store *s,
                   const tr_model_places *at);

/* The --embed tables' part of tr_model_plan alone: the tables whole (and
 * their optimizer state) in `tables`, their dense gradient in `grads` (a
 * pipeline's first stage, which plans its own block). */
void tr_model_plan_tables(tr_model *m, const tr_config *c, const tr_data *d, tr_store *s,
                          tr_place tables, tr_place grads);

/* Once the store is open: the MLP (with the --embed tables' input
 * gradient), the optimizer (LARS: each layer's W and b), the tables, in
 * what the store lends. 0 or -ENOMEM. */
int tr_model_build(tr_model *m, const tr_config *c, const tr_data *d, const tr_store *s);

/* The --embed tables' part of tr_model_build alone, once m->net is built:
 * the tables (whole where tr_model_plan_tables placed them, else room for
 * the rows pulled from servers) and the network's input gradient of their
 * block (its first layer's last columns). 0, -ENOMEM or -EINVAL. */
int tr_model_build_tables(tr_model *m, const tr_config *c, const tr_data *d, const tr_store *s);

void tr_model_close(tr_model *m);

#endif /* RIO_TRAINER_MODEL_H */

/*
 * layout.h — the world as D x P x T ranks (model parallelism,
 * doc/parallelism.md): T ranks split each hidden layer's matrix (tensor
 * parallelism, Megatron-LM pairs), P stages hold contiguous layers
 * (pipeline parallelism), and D copies of that train on their own parts of
 * the data (data parallelism over what is left, D = N / (P x T)).
 *
 * Placement: rank r = (d x P + p) x T + t. mpirun gives a host's slots
 * consecutive ranks, so a tensor group (the most traffic: two allreduces
 * a layer pair, each way) is one host's where the host has T slots; a
 * pipeline's stages come next, data parallelism outermost. Where hosts
 * have fewer slots, groups span hosts: that is allowed, and said.
 */
#ifndef RIO_TRAINER_LAYOUT_H
#define RIO_TRAINER_LAYOUT_H

#include "mlp.h"
#include "options.h"
#include "world.h"

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

typedef struct tr_layout {
	int D, P, T;          /* data x pipeline x tensor = the world's size  */
	int d, p, t;          /* this rank's coordinates                       */
	MPI_Comm data;        /* the D ranks of this (p, t): a stage's
	                       * gradients are summed over them              */
	MPI_Comm pipe;        /* the P ranks of this (d, t), rank p = stage p  */
	MPI_Comm tensor;      /* the T ranks of this (d, p)                    */
	MPI_Comm replica;     /* the P x T ranks of this d: one model copy     */
	int tensor_hosts;     /* the most hosts one tensor group spans         */
	int pipe_hosts;       /* ... one pipeline                              */
	int hosts;            /* hosts in the world                            */
	/* stage s holds layers [first[s], first[s + 1]) (tr_layout_stages) */
	int first[TR_MLP_MAX_LAYERS + 1];
} tr_layout;

/* D, P, T and this rank's coordinates from --pipeline and --tensor, for a
 * world of `size` ranks (no MPI). 0, or -1 with a one-line usage error
 * when P x T does not divide the world. */
int tr_layout_shape(tr_layout *l, const tr_options *o, int rank, int size, char *err,
                    size_t errlen);

/* Collective: the data, pipeline and tensor communicators, and how many
 * hosts the groups span. */
void tr_layout_open(tr_layout *l, const tr_world *w);
void tr_layout_close(tr_layout *l);

/* Each stage's layers of a model of these sizes: --stages, or contiguous
 * groups balanced by compute (a layer's multiply-adds, sizes[i] x
 * sizes[i + 1]: the split whose costliest stage costs least). */
void tr_layout_stages(tr_layout *l, const tr_options *o, const int *sizes, int nlayers);

/* How tensor parallelism cuts layer i of stage p: TR_SPLIT_COLUMNS (its
 * output units, the first of a Megatron-LM pair), TR_SPLIT_ROWS (its
 * inputs, the second: the partial outputs are summed over the group) or
 * TR_SPLIT_NONE (whole on every rank of the group: T = 1, or a layer
 * without a partner in its stage). */
enum { TR_SPLIT_NONE = 0, TR_SPLIT_COLUMNS = 1, TR_SPLIT_ROWS = 2 };
int tr_layout_split(const tr_layout *l, int p, int layer, int nlayers);

/* "D2xP2xT1" */
void tr_layout_name(const tr_layout *l, char *buf, size_t len);

/* Collective: rank 0 writes the placement to f: each rank's host,
 * coordinates and what it holds of the model (layers, and slices of
 * them; the first stage the `tables` --embed tables); whether groups span
 * hosts. */
void tr_layout_print(const tr_layout *l, const tr_world *w, const int *sizes, int nlayers,
                     int tables, FILE *f);

#endif /* RIO_TRAINER_LAYOUT_H */

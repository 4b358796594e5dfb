/*
 * data.h — a run's data: the training and test loaders (or --synthetic's
 * batches), their columns, the --cache budget and the --loader-cpus, and
 * what a checkpoint keeps of them (the sharding as the loader resolved it,
 * every shard's records, the loader positions). A batch is handed to the
 * model as its input, its labels checked; a loader's failure is said in
 * the trainer's terms. A rank that does not read the data (a parameter
 * server) has no loaders.
 */
#ifndef RIO_TRAINER_DATA_H
#define RIO_TRAINER_DATA_H

#include "checkpoint.h"
#include "loader.h"
#include "mlp.h"
#include "run_config.h"
#include "synthetic.h"

#include <stddef.h>
#include <stdint.h>

enum { TR_DATA_MAX_COLUMNS = TR_MLP_MAX_INPUTS + TR_MAX_EMBED + 1 };

typedef struct tr_data {
	rio_column_spec specs[TR_DATA_MAX_COLUMNS]; /* the --x inputs, the
	                             * --embed ids, then the --y label        */
	rio_loader *train, *test;   /* train NULL with --synthetic            */
	tr_synthetic synth_pool;
	tr_synthetic *synth;        /* --synthetic: &synth_pool, else NULL    */
	uint64_t cache_bytes;       /* --cache: the training data held decoded */
	int *loader_cpus;           /* --loader-cpus spare: the loaders' CPUs  */
	int nloader_cpus;           /* ... how many (0: the rank's own)        */
	/* what the checkpoint keeps: the training data's sharding, and every
	 * shard's records (UINT64_MAX: no rank counted it) */
	rio_sharding sharding;
	uint64_t nshards, *shard_records;
} tr_data;

/* Collective: the columns, from the first record of the training data
 * (--synthetic without it: the test data's); the test data must match.
 * A failure: one line, every rank exits 1. */
void tr_data_columns(tr_data *d, const tr_config *c);

/* Collective: the loaders' CPUs, the loaders (training data from epoch 0,
 * then test data, in one --cache budget; none on a rank that does not
 * read the data, and no training loader with --synthetic), and what the
 * checkpoint keeps of the data, on every rank. A failure: one line, every
 * rank exits 1. */
void tr_data_open(tr_data *d, const tr_config *c);

/* --synthetic: the pool of batches (backend memory of m) of `inputs`
 * values a record, drawn for reader `reader` (the same batches for the
 * same reader in any layout). 0 or -ENOMEM. */
int tr_data_synthetic(tr_data *d, tr_math *m, int inputs, const tr_config *c, int reader);

void tr_data_close(tr_data *d);

/* The input values of a record (the label and --embed ids excluded). */
int tr_data_inputs(const tr_data *d, const tr_config *c);

/* This rank's full batches in an epoch (--synthetic: its share of a
 * synthetic epoch; 0 without data). */
uint64_t tr_data_full_batches(const tr_data *d, const tr_config *c);

/* The step's batch (--synthetic: made for global step `step`) as the
 * model's input, the wait timed into *wait: 1, or 0 when the rank's epoch
 * ended early (damaged records were skipped; with `must`, a failure: the
 * epoch was to have `steps` steps). *failed is set, with a message in err,
 * when the data failed. *b is the loader's batch (NULL with --synthetic):
 * give it back with rio_loader_release. The --embed ids are the model's
 * to read (columns nx and on). */
int tr_data_next(tr_data *d, const tr_config *c, uint64_t step, uint64_t steps, rio_batch **b,
                 tr_input *in, int must, int *failed, double *wait, char *err, size_t errlen);

/* The batch b of loader l as the model's input (the --x blocks and the
 * labels, backend memory: the device's copies with gpu); every label
 * checked against --classes. 0, or -1 with "SHARD: record R: label L is
 * outside [0, C) (--classes)" in err. */
int tr_data_input(const tr_config *c, const tr_data *d, rio_loader *l, const rio_batch *b,
                  int gpu, tr_input *in, char *err, size_t errlen);

/* 1 when a batch's input block that can hold NaN or infinities (a float
 * or int64 list) holds one; read on the host. */
int tr_data_nonfinite(const tr_config *c, const tr_data *d, const rio_batch *b);

/* The loader's message for a failure rc of loader l (in the trainer's
 * terms for a feature of another length than the first record's). */
void tr_data_error(rio_loader *l, int rc, char *err, size_t errlen);

/* Collective: the next epoch started (its shuffle) on every loader. */
void tr_data_set_epoch(tr_data *d, const tr_config *c, uint64_t epoch);

/* ---- checkpoints -------------------------------------------------------- */

/* The columns as a checkpoint keeps them (cols: TR_CKPT_MAX_COLUMNS);
 * their number (0 under --synthetic without data). */
uint32_t tr_data_ckpt_columns(const tr_data *d, const tr_config *c, tr_ckpt_column *cols);

/* This rank's loader position (--synthetic, or no loader: one byte; the
 * step says where). A malloc'd blob and its size; every rank agrees on a
 * failure (one line, exit 1). */
uint8_t *tr_data_position(tr_data *d, const tr_config *c, uint32_t *size);

/* Collective, on resume: was the training data sharded anew between
 * epochs (the plan chose another sharding at an epoch's end)? Then the
 * checkpoint's positions are of other shares and each loader starts the
 * epoch: 1; else 0. */
int tr_data_resharded(tr_data *d, const tr_config *c, uint64_t epoch);

/* Collective, on resume: each rank's own position from rank 0's
 * checkpoint ck (NULL elsewhere), whose blobs are the readers' in order:
 * blob i to the rank whose roles.data_rank is i (allreduce: rank i; ps:
 * worker i; a pipeline: the first stage of data group i); with `all`,
 * every reader gets every blob (an elastic resume re-shards the rest of
 * the epoch). `who`: "rank" or "worker", for the message. */
void tr_data_restore(tr_data *d, const tr_config *c, const tr_ckpt *ck, int all, const char *who);

#endif /* RIO_TRAINER_DATA_H */

/*
 * checkpoint.h — a training run's whole state in one file, DIR/checkpoint:
 * the parameters, the optimizer's state, every rank's loader position (a
 * blob from rio_loader_state_save), the step counters, the running sums of
 * the epoch in progress, and what must match to resume (world size, seed,
 * model sizes, optimizer), and what an elastic resume at another world
 * size keeps (the global batch, the learning rate's scale). Nothing that depends on timing is kept, so two
 * runs that did the same work write the same bytes.
 *
 * Writing is atomic: the bytes go to a temporary file beside it
 * (DIR/.checkpoint.XXXXXX.tmp), are fsync'd, and are renamed over
 * DIR/checkpoint, then DIR is fsync'd; a failure of any step, the
 * directory's fsync too, fails the write. A crash at any moment leaves the
 * previous checkpoint whole; a stale temporary file is never read. The
 * file ends with a CRC-32C of all before it, so a damaged file is refused
 * rather than half-loaded.
 *
 * The one figure that depends on timing, the training seconds so far (the
 * metrics' wall_seconds), lives beside it in DIR/clock, written the same
 * way just after, and tied to the checkpoint by its CRC: a clock left from
 * another checkpoint (a crash between the two renames) reads as unknown.
 */
#ifndef RIO_TRAINER_CHECKPOINT_H
#define RIO_TRAINER_CHECKPOINT_H

#include "mlp.h"
#include "strategy.h"

#include <stddef.h>
#include <stdint.h>

/* What a column of the training data was (version 4): the --x inputs,
 * the --embed ids and the --y label, with their values per record. */
typedef enum tr_ckpt_role { TR_CKPT_X = 0, TR_CKPT_EMBED = 1, TR_CKPT_Y = 2 } tr_ckpt_role;
enum { TR_CKPT_MAX_COLUMNS = TR_MLP_MAX_INPUTS + TR_MAX_EMBED + 1, TR_CKPT_NAME = 128 };
typedef struct tr_ckpt_column {
	uint32_t role;              /* tr_ckpt_role                         */
	uint64_t length;            /* values per record                    */
	char name[TR_CKPT_NAME];    /* the feature                          */
} tr_ckpt_column;

/* A parameter server's counts (version 4, ps and hybrid): those of the
 * epoch in progress and those since the start (tr_ps_stats, ps.h). */
typedef struct tr_ckpt_server {
	uint64_t updates, gradients, dropped, skipped, staleness_max;
	double staleness_sum, samples;
	uint64_t total_updates, total_gradients;
	double total_samples;
} tr_ckpt_server;

typedef struct tr_ckpt {
	uint32_t world;             /* the ranks that read the data, whose
	                             * loader positions the blobs are       */
	uint32_t layout[3];         /* version 5: D, P, T of the run that wrote
	                             * it (layout.h); older: world, 1, 1. The
	                             * tensors are the whole model whatever
	                             * the layout                           */
	uint32_t global_batch;      /* records per step over all ranks (0 in
	                             * a version 1 file: not known)         */
	float lr_scale;             /* the linear scaling rule's k in use   */
	uint64_t seed;
	uint32_t optimizer;         /* tr_opt_kind                          */
	uint32_t nlayers;
	int32_t sizes[TR_MLP_MAX_LAYERS + 1];
	uint64_t epoch;             /* the epoch in progress (from 0)       */
	uint64_t step_in_epoch;     /* its steps done                       */
	uint64_t global_step;       /* steps taken, skipped ones included   */
	uint64_t skipped_steps;     /* steps skipped for non-finite values  */
	uint64_t optimizer_t;       /* updates applied (Adam's t)           */
	double epoch_loss, epoch_correct, epoch_count; /* the epoch so far  */
	uint64_t nparams;
	float *params;              /* host, nparams                        */
	float *state1, *state2;     /* optimizer state, nparams each (state2
	                             * NULL for SGD)                        */
	uint32_t nblobs;            /* one loader position per rank (under
	                             * ps: per worker; world is then the
	                             * number of workers)                   */
	uint32_t *blob_size;
	uint8_t **blob;
	/* version 3 */
	uint32_t strategy;          /* tr_strategy (0, allreduce, before 3) */
	uint32_t servers;           /* ps: the servers that held the slices */
	uint64_t server_version;    /* ps: the servers' step count (K = 0:
	                             * versions made; the rate's step)      */
	uint64_t *worker_step_in_epoch, *worker_global_step; /* ps: nblobs */
	uint32_t ntables;           /* --embed: the tables, whole           */
	int64_t table_vocab[TR_MAX_EMBED];
	uint32_t table_dim[TR_MAX_EMBED];
	float *table_params[TR_MAX_EMBED]; /* vocab x dim each              */
	float *table_state1[TR_MAX_EMBED], *table_state2[TR_MAX_EMBED];
	/* version 4 (before it: all 0, not known) */
	uint32_t sharding;          /* the training data's sharding as the
	                             * loader resolved it (rio_sharding:
	                             * files 1, records 2; 0 without data) */
	uint32_t nshards;
	uint64_t *shard_records;    /* each shard's records (nshards)       */
	uint32_t ncolumns;
	tr_ckpt_column columns[TR_CKPT_MAX_COLUMNS];
	double total_samples;       /* allreduce: records trained on since
	                             * the start (ps: the servers')         */
	uint64_t total_gradients;   /* allreduce: each step's ranks, summed */
	uint64_t epoch_skipped;     /* the epoch's steps skipped so far (ps:
	                             * the workers')                        */
	uint64_t epoch_overflows;   /* ... of them, for a 16-bit overflow
	                             * (version 6; before: 0)               */
	tr_ckpt_server *server;     /* ps, hybrid: one per server           */
	/* DIR/clock, not in DIR/checkpoint: NAN when not known */
	double seconds;             /* training seconds since the run began */
	/* read: where the tensors are (tr_ckpt_read_meta leaves them there) */
	uint64_t tensors_at;        /* params' byte offset in the file; then
	                             * state1's, state2's, nparams x 4 apart */
	uint64_t file_id[3];        /* the file read: st_dev, st_ino, size   */
	uint32_t crc;               /* its CRC-32C (DIR/clock's tie)         */
} tr_ckpt;

/* The checkpoint's path in `dir` (malloc'd). */
char *tr_ckpt_path(const char *dir);

/* Writes `c` atomically to DIR/checkpoint (creating DIR if needed), then
 * c->seconds to DIR/clock. 0, or a negative errno with a one-line message
 * in err. */
int tr_ckpt_write(const char *dir, const tr_ckpt *c, char *err, size_t errlen);

/* Checks, before any work, that a checkpoint can be written in DIR:
 * creates DIR if needed (its parent must exist, as for tr_ckpt_write),
 * creates and removes a temporary file in it, and refuses a DIR/checkpoint
 * or DIR/clock that is not a regular file (the rename would fail). 0, or a negative
 * errno with a one-line message naming the path in err. */
int tr_ckpt_probe(const char *dir, char *err, size_t errlen);

/* Whether `path` is, or would be made as, a file DIR keeps: its checkpoint,
 * its clock or their temporaries (by the directory's and the file's
 * identity, not their spelling): an output given there would be replaced
 * by the next checkpoint, or write into it. */
int tr_ckpt_owns(const char *dir, const char *path);

/* Reads DIR/checkpoint into `c` (allocating its arrays; tr_ckpt_free),
 * and c->seconds from DIR/clock (NAN when it is missing, damaged or of
 * another checkpoint). -ENOENT when there is none; RIO_ECORRUPT style
 * errors (-EBADMSG) with a message naming the file when it is damaged or
 * of another version. */
int tr_ckpt_read(const char *dir, tr_ckpt *c, char *err, size_t errlen);

/* tr_ckpt_read without the tensors (params, state1, state2 stay NULL;
 * c->tensors_at says where they are): every byte is still read once, a
 * block at a time, for the CRC, but the model is never held whole. For
 * model parallelism, whose ranks each read their own part
 * (checkpoint_split.h). */
int tr_ckpt_read_meta(const char *dir, tr_ckpt *c, char *err, size_t errlen);

void tr_ckpt_free(tr_ckpt *c);

#endif /* RIO_TRAINER_CHECKPOINT_H */

/*
 * checkpoint_split.h — a split model's checkpoint (model parallelism,
 * strategy_pipeline.c) written and read by the ranks that hold its parts,
 * so that no rank ever holds the whole model: the file is checkpoint.h's,
 * byte for byte what tr_ckpt_write makes of the whole model.
 *
 * Writing: rank 0 opens the temporary file (lib/atomic_file.h) and writes
 * the header and the fields after the tensors; each rank of one
 * data-parallel copy writes the runs of each tensor it owns (each float of
 * the model has one owner: tensor_slice.h) at their offsets (pwrite, a run
 * a row of a Megatron-LM pair's second layer; a MiB at a time) and
 * fsyncs. The file's
 * CRC-32C is made of the ranks' own: each rank's CRC of the file as if it
 * held zeros but for its bytes, which the CRC's linearity sums (XOR, less
 * the CRC of zeros) into the whole file's. Only when every rank has
 * written (one collective carries any rank's failure) does rank 0 write
 * the CRC and rename the file into place, then DIR/clock; a failure on any
 * rank removes the temporary file on rank 0, so nothing that looks whole
 * is left, and the checkpoint fails on every rank.
 *
 * Reading: rank 0 has read the file but its tensors (tr_ckpt_read_meta:
 * the CRC checked a block at a time); each rank reads the runs it holds
 * (pread), in whatever layout the run has.
 */
#ifndef RIO_TRAINER_CHECKPOINT_SPLIT_H
#define RIO_TRAINER_CHECKPOINT_SPLIT_H

#include "checkpoint.h"
#include "tensor_slice.h"
#include "world.h"

#include <stddef.h>

/* This rank's part of the model's tensors (the parameters, then each of
 * the optimizer's states), in the whole model's layout. */
typedef struct tr_ckpt_part { /* (strategy_ops.h names it) */
	int tensors;                 /* 2, or 3 (Adam)                        */
	int writes;                  /* one data-parallel copy's ranks write  */
	const tr_slice_run *owned;   /* what it writes, ascending whole_at    */
	size_t nowned;
	const tr_slice_run *held;    /* what it reads: all it holds           */
	size_t nheld;
	/* n floats from `at` of this rank's tensor `which` (0 the parameters,
	 * in its own layout) to and from host memory, a block of a run at a
	 * time: the part is never copied whole; not collective */
	void (*fetch)(void *ctx, int which, size_t at, size_t n, float *dst);
	void (*put)(void *ctx, int which, size_t at, size_t n, const float *src);
	void *ctx;
} tr_ckpt_part;

/* Runs of this rank's part, ascending by whole_at, neighbours merged
 * (tr_slice_each_run's, owned or all held): malloc'd, *n of them; NULL
 * when out of memory. */
tr_slice_run *tr_ckpt_part_runs(const tr_slice *s, const tr_layout *l, const int *sizes,
                                int nlayers, int owned, size_t *n);

/* Collective: DIR/checkpoint written from rank 0's c (all but the tensors;
 * NULL elsewhere) and every rank's part, then DIR/clock. `failed`: rank
 * 0 failed before (its message in err): nothing is written. 0, or -1 on
 * the ranks that failed, each with its message in err (the caller agrees
 * on it: tr_world_agree); when any rank failed, nothing was renamed. */
int tr_ckpt_split_write(const tr_world *w, const char *dir, const tr_ckpt *c, int failed,
                        const tr_ckpt_part *part, char *err, size_t errlen);

/* Collective, on resume: each rank's part of DIR/checkpoint, which rank 0
 * read into c (tr_ckpt_read_meta; NULL elsewhere), read and handed to
 * part->put a block at a time. A failure on any rank ends the run on every rank (one line,
 * exit 1). */
void tr_ckpt_split_read(const tr_world *w, const char *dir, const tr_ckpt *c,
                        const tr_ckpt_part *part);

#endif /* RIO_TRAINER_CHECKPOINT_SPLIT_H */

/*
 * synthetic.h — batches made in memory for --synthetic: no loader, no files,
 * so that a run shows what the model and the allreduce cost without the
 * input pipeline (compare its samples/s with the same run on real data).
 *
 * Each rank makes a pool of batches once, at start, from the seed and its
 * rank: every record's label is uniform in [0, classes) and its inputs are
 * half its class's prototype (fixed random values in [0, 1)) and half noise
 * in [0, 1), so the model has something to learn and the loss falls. Step
 * s trains on pool batch s mod the pool's size: the same batches for the
 * same seed, rank and step, so a resumed run is the uninterrupted one.
 */
#ifndef RIO_TRAINER_SYNTHETIC_H
#define RIO_TRAINER_SYNTHETIC_H

#include "backend.h"
#include "mlp.h"

#include <stdint.h>

/* Records in a synthetic epoch, over all ranks (Fashion-MNIST's training
 * set): steps per epoch are this divided by the global batch. */
#define TR_SYNTHETIC_EPOCH_RECORDS 60000

typedef struct tr_synthetic {
	tr_math *math;
	int inputs, classes, batch, nbatches;
	float *x;   /* backend: nbatches x batch x inputs */
	int64_t *y; /* backend: nbatches x batch          */
} tr_synthetic;

/* Makes the pool: 0, or -ENOMEM. */
int tr_synthetic_init(tr_synthetic *s, tr_math *m, int inputs, int classes, int batch,
                      uint64_t seed, int rank);
void tr_synthetic_free(tr_synthetic *s);

/* The batch of global step `step`, as the model's input (one block). */
void tr_synthetic_batch(const tr_synthetic *s, uint64_t step, tr_input *in);

#endif /* RIO_TRAINER_SYNTHETIC_H */

/*
 * train.h — the run loop: epochs of segments (the strategy's), each
 * epoch's evaluation, report (its line, its JSON metrics, TensorBoard) and
 * --eval-every copies, and the checkpoints at the right moments: between
 * segments at --checkpoint-every steps, at each epoch's end, where
 * --max-steps stopped the run. It asks nothing of which strategy runs.
 */
#ifndef RIO_TRAINER_TRAIN_H
#define RIO_TRAINER_TRAIN_H

#include "strategy_ops.h"

/* Collective: trains from where the cursor is to the last epoch, or to
 * --max-steps. A failure: one line, every rank exits. */
void tr_train(const tr_parts *p, tr_strategy_state *s);

#endif /* RIO_TRAINER_TRAIN_H */

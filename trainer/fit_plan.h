/*
 * fit_plan.h — memory planning across layouts: what the most loaded rank of a
 * P x T split of the run's model would hold (the strategies' own
 * memory_need, asked of each stage), and, for a run that cannot fit, the
 * smallest --pipeline or --tensor that would. No MPI: each rank plans for
 * itself, before anything is allocated.
 */
#ifndef RIO_TRAINER_FIT_PLAN_H
#define RIO_TRAINER_FIT_PLAN_H

#include "strategy_ops.h"

#include <stddef.h>

/* Bytes the most loaded rank holds when the run's model is split over
 * P stages x T slices (1 x 1: data parallelism, every rank whole). */
double tr_plan_rank_bytes(const tr_parts *p, int P, int T);

/* Into buf, for a rank that may hold `allowed` bytes: "--pipeline 2 (3.1
 * MiB a rank) or --tensor 2 (2.9 MiB) would fit", the smallest of each
 * above the run's own that fits (a P up to the layers, a T that divides
 * every hidden width), or what even the finest split would need; "" for a
 * run model parallelism does not take (--embed, parameter servers...). */
void tr_plan_hint(const tr_parts *p, double allowed, char *buf, size_t len);

#endif /* RIO_TRAINER_FIT_PLAN_H */

/*
 * fit.h — whether a run's model and --embed tables fit the memory of its
 * hosts, measured before anything is allocated: what each rank would hold
 * (an allreduce rank the model and every table whole, each with its
 * gradient and optimizer state; a parameter server its slices; a worker
 * the model and a batch's rows), summed over the ranks of each host,
 * against the memory they may use (memory.h). A run that cannot fit is
 * refused in one line with the numbers, rather than allocating until the
 * kernel kills it.
 */
#ifndef RIO_TRAINER_FIT_H
#define RIO_TRAINER_FIT_H

#include "run.h"

/* Collective: returns when the ranks of every host fit; else the lowest
 * rank that does not says what needs how much, and every rank exits
 * (tr_world_agree). sizes[0..nlayers]: the model's layers; rows: the
 * largest batch a rank takes. */
void tr_run_check_memory(tr_run *r, const int *sizes, int nlayers, int rows);

#endif /* RIO_TRAINER_FIT_H */

/*
 * fit.h — whether a run's model and --embed tables fit the memory of its
 * hosts, measured before anything is allocated: what each rank would hold
 * (its strategy says: tr_strategy_ops.memory_need), summed over the ranks
 * of each host, against the memory they may use (memory.h). A run that
 * cannot fit is refused in one line with the numbers, rather than
 * allocating until the kernel kills it.
 */
#ifndef RIO_TRAINER_FIT_H
#define RIO_TRAINER_FIT_H

#include "run_config.h"

/* What a rank holds of the model and the --embed tables, in bytes: in
 * all, and the largest part, named. */
typedef struct tr_need {
	double total, part;
	char what[320];
} tr_need;

/* Adds `bytes` of the part `what`. */
void tr_need_add(tr_need *n, double bytes, const char *what);

/* Adds the --embed tables held whole: each table, its dense gradient and
 * its optimizer state (allreduce's ranks, a pipeline's first stage). */
void tr_need_tables(tr_need *n, const tr_options *o);

/* Collective: returns when every rank fits: with --memory-limit, each
 * rank's own need against it; else the ranks of each host together
 * against the host's limit. Else the lowest rank that does not says what
 * needs how much, what it may use, and the smallest --pipeline or
 * --tensor that would fit (fit_plan.h), and every rank exits
 * (tr_world_agree). */
typedef struct tr_parts tr_parts;
void tr_fit_check(const tr_parts *p, const tr_need *n);

#endif /* RIO_TRAINER_FIT_H */

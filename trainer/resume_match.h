/*
 * resume_match.h — what a checkpoint must have in common with the run that
 * resumes it, checked on rank 0, each difference named in one line: the
 * seed and the optimizer (before the loaders open), the number of shards;
 * then, once the model and the data are known, the columns (each feature by
 * name and values per record), each shard's records, the --embed tables'
 * shapes and the model's sizes.
 */
#ifndef RIO_TRAINER_RESUME_MATCH_H
#define RIO_TRAINER_RESUME_MATCH_H

#include "checkpoint.h"
#include "run.h"

#include <stddef.h>
#include <stdint.h>

/* The run's columns as a checkpoint keeps them: the --x inputs, the
 * --embed ids and the --y label, each with its values per record, into
 * cols (TR_CKPT_MAX_COLUMNS); their number (0 under --synthetic without
 * data). */
uint32_t tr_run_columns(const tr_run *r, tr_ckpt_column *cols);

/* Rank 0: checkpoint c (read from `path`) against the run: `model` 0
 * before the loaders open, 1 once the model is built and the data counted.
 * 0, or -1 with a one-line message in err naming what differs and how. */
int tr_resume_match(const tr_run *r, const tr_ckpt *c, const char *path, int model, char *err,
                    size_t errlen);

#endif /* RIO_TRAINER_RESUME_MATCH_H */

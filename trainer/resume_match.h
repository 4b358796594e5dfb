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
#include "data.h"
#include "model.h"
#include "run_config.h"

#include <stddef.h>
#include <stdint.h>

/* Rank 0, before the loaders open: checkpoint c (read from `path`)
 * against the run's options: the seed, the optimizer, the number of
 * shards. 0, or -1 with a one-line message in err naming what differs and
 * how. */
int tr_resume_match_options(const tr_config *cfg, const tr_ckpt *c, const char *path, char *err,
                            size_t errlen);

/* Rank 0, once the model is built and the data counted: the columns, each
 * shard's records, the --embed tables' shapes, the model's sizes. */
int tr_resume_match_model(const tr_config *cfg, const tr_data *d, const tr_model *m,
                          const tr_ckpt *c, const char *path, char *err, size_t errlen);

#endif /* RIO_TRAINER_RESUME_MATCH_H */

/*
 * feature_spec.h — from feature names to the loader's dense columns: reads the
 * first record of a shard set, finds each --x feature, --embed id feature
 * and the --y label, and chooses how the loader decodes them (bytes: uint8
 * scaled by 1/255 to float; float lists as they are; int64 lists cast to
 * float; ids as int64 lists; the label as one int64).
 */
#ifndef RIO_TRAINER_FEATURES_H
#define RIO_TRAINER_FEATURES_H

#include "loader.h"

#include <stddef.h>

/* Fills specs[0..nx-1] with the inputs x, specs[nx..nx+nids-1] with the
 * --embed id features (each an int64 list of as many ids as the record
 * holds, k >= 1) and specs[nx + nids] with the label, as found in the
 * first record of `shards` (a glob, list or PREFIX). 0, or -1 with a
 * one-line message naming the shard, the feature and what the record holds
 * instead. */
int tr_features_resolve(const char *shards, char *const *x, int nx, const char *const *ids,
                        int nids, const char *y, rio_column_spec *specs, char *err,
                        size_t errlen);

/* The number of input values a set of specs makes (the label excluded). */
size_t tr_features_width(const rio_column_spec *specs, int nx);

#endif /* RIO_TRAINER_FEATURES_H */

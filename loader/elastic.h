/*
 * elastic.h — an epoch carried on at another world size (elastic resume).
 *
 * An epoch interrupted at world W (stage 0: each rank r had delivered
 * pos[r] records of its usual order) goes on at world W' over what is left
 * of it: the records no rank had delivered, in shard order, cut into W'
 * contiguous balanced ranges (sizes differ by at most one), each read in
 * the loader's shuffle mode as if it were the rank's share of an epoch.
 * That can be interrupted again (stage 1, ...): a stage is the world it ran
 * at and each of its ranks' positions. Every order is a function of the
 * seed, the epoch, the data, the options and the stages, so the stages
 * alone let any rank rebuild its share of the rest (elastic.c replays
 * each rank's order without reading the data).
 */
#ifndef RIO_LOADER_ELASTIC_H
#define RIO_LOADER_ELASTIC_H

#include "plan.h"

#include <stddef.h>
#include <stdint.h>

/* The stages of an epoch before the current one. */
typedef struct rio__stages {
	size_t n;        /* 0: the epoch is an ordinary one              */
	uint64_t *world; /* n worlds                                     */
	uint64_t *pos;   /* their ranks' positions, stage after stage    */
	size_t npos;     /* the sum of the worlds                        */
} rio__stages;

void rio__stages_free(rio__stages *st);
/* Appends a stage of `world` ranks at positions pos[0..world). */
int rio__stages_push(rio__stages *st, uint64_t world, const uint64_t *pos);

/* The pieces of rank `rank` of `world` in the stage after `st` of epoch
 * `epoch` (every shard counted): a malloc'd array, and their records. 0,
 * -ENOMEM, or RIO_ESTATE (message in err) when a stage's position is past
 * what that rank had. */
int rio__elastic_pieces(const rio__dataset *ds, const rio_loader_opts *o, uint64_t epoch,
                        const rio__stages *st, int rank, int world, rio__piece **pieces,
                        size_t *npieces, uint64_t *records, rio_error *err);

#endif /* RIO_LOADER_ELASTIC_H */

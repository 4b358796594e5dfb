/*
 * run_config.h — a run's configuration: the options as parsed, the MPI
 * world, and what the world and the resume plan decide: who reads the data
 * (a rank's index among the readers and their number), whether this rank
 * serves parameters, the records per rank and step, the strategy's
 * operations. Built once, at the start (main.c), then read only: every
 * part takes a const tr_config *. (Not "config.h": that is the build's.)
 */
#ifndef RIO_TRAINER_RUN_CONFIG_H
#define RIO_TRAINER_RUN_CONFIG_H

#include "layout.h"
#include "options.h"
#include "resume.h"
#include "world.h"

#include <stdint.h>

typedef struct tr_strategy_ops tr_strategy_ops;

/* What the strategy makes of each rank (tr_strategy_ops.roles). */
typedef struct tr_roles {
	int data_rank;   /* this rank's index among those that read the data,
	                  * -1 on a rank that does not (a parameter server)  */
	int data_world;  /* how many read it                                 */
	int server;      /* this rank serves parameters                      */
} tr_roles;

typedef struct tr_config {
	tr_options o;
	tr_world w;
	const tr_strategy_ops *ops;  /* --strategy's                          */
	tr_roles roles;
	int batch;                   /* records per rank and step              */
	tr_resume_plan plan;         /* --resume's (plan.resume 0: afresh)     */
	tr_layout layout;            /* D x P x T (D = N without --pipeline or
	                              * --tensor)                            */
} tr_config;

/* Before MPI_Init, on every rank: the command line parsed and checked
 * into c->o, and where the launcher says the world's size (mpirun), the
 * checks that need only that (the layout, the strategy's roles,
 * --straggler, --global-batch). --help and --version: rank 0 prints,
 * every rank exits 0. A usage error: one line (rank 0's), and every rank
 * exits 2 (tr_world_refuse_unstarted). Why before MPI_Init: a command
 * line refused costs no MPI start-up (under AddressSanitizer, MPI_Init's
 * many allocations each unwound the slow way took seconds a rank), and a
 * run never starts a job it would end at once. */
void tr_config_parse(tr_config *c, int argc, char **argv);

/* Collective, once the world is up (c->w), the options parsed
 * (tr_config_parse): the strategy's operations and roles, the D x P x T
 * layout and its communicators (layout.h), and the checks that need the
 * world: the strategy's, --straggler naming ranks that step,
 * --global-batch splitting evenly. A usage error: one line, and every rank
 * exits 2. */
void tr_config_init(tr_config *c);

/* The resume plan's decisions: the batch, the loaders' sharding (before
 * the loaders open). */
void tr_config_apply_plan(tr_config *c, const tr_resume_plan *p);

void tr_config_free(tr_config *c);

#endif /* RIO_TRAINER_RUN_CONFIG_H */

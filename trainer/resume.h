/*
 * resume.h — the resume plan: what a run that resumes a checkpoint keeps
 * of it and what it refuses, decided by a pure function (no MPI, no I/O)
 * from a summary of the checkpoint and the run's own settings, before any
 * loader opens. It says the records per rank and step (the checkpoint's
 * global batch, split over this world: an elastic resume at another world
 * size), the learning rate's scale (kept with the global batch), the
 * loaders' sharding (the epoch in progress keeps the checkpoint's), or
 * why the resume is refused, in one line. Applying it (rank 0's
 * checkpoint broadcast, the tensors placed, the loader positions
 * restored) is the strategies' and the data's work (start.c).
 */
#ifndef RIO_TRAINER_RESUME_H
#define RIO_TRAINER_RESUME_H

#include "loader.h"

#include <stddef.h>
#include <stdint.h>

/* What rank 0 read of the checkpoint and every rank learns. */
typedef struct tr_ckpt_summary {
	int have;               /* there is a checkpoint (0: start afresh)   */
	uint32_t world;         /* written by: ranks, or workers with servers */
	uint32_t global_batch;  /* records per step (0: a version 1 file)    */
	float lr_scale;         /* the rate's scale in use                   */
	uint32_t strategy;      /* tr_strategy                               */
	const char *strategy_name; /* ... its name (--strategy)              */
	uint32_t servers;       /* 0 without parameter servers               */
	uint32_t sharding;      /* its data's rio_sharding (0: not known)    */
	uint32_t nshards;       /* its data's shards                         */
	int mid_epoch;          /* it was written with an epoch in progress  */
} tr_ckpt_summary;

/* The run that resumes. */
typedef struct tr_resume_run {
	const char *path;       /* DIR/checkpoint, for messages              */
	uint32_t strategy;      /* --strategy (tr_strategy)                  */
	int servers;            /* --servers (0 without)                     */
	int world;              /* ranks                                     */
	int data_world;         /* those that read the data (ranks, workers) */
	const char *data_unit;  /* ... named: "ranks" or "workers"           */
	int global_batch;       /* --global-batch (0: not given)             */
	rio_sharding sharding;  /* --sharding                                */
} tr_resume_run;

typedef struct tr_resume_plan {
	int resume;             /* resume the checkpoint (0: start afresh)   */
	int batch;              /* records per rank and step; 0: the run's own */
	int keep_scale;         /* the rate's scale is the checkpoint's ...  */
	float scale;            /* ... this one                              */
	uint32_t elastic_from;  /* written at another world size: that one, or 0 */
	rio_sharding sharding;  /* the loaders' sharding                     */
	uint32_t ckpt_sharding; /* the checkpoint's data's (0: not known)    */
} tr_resume_plan;

/* The plan for resuming `ck` (ck->have 0: start afresh, with the run's own
 * settings). 0; or -1 with a one-line message in err: the resume is
 * refused (a usage error): another strategy or number of servers or
 * workers; a version 1 file at another world size; a --global-batch other
 * than the checkpoint's; a world that does not divide its global batch;
 * an epoch in progress whose sharding this run cannot keep. */
int tr_resume_plan_make(const tr_ckpt_summary *ck, const tr_resume_run *run, tr_resume_plan *p,
                        char *err, size_t errlen);

#endif /* RIO_TRAINER_RESUME_H */

/*
 * resume.c — the resume plan (resume.h): a pure function of the
 * checkpoint's summary and the run.
 */
#include "config.h"
#include "resume.h"

#include <stdio.h>

/* The same strategy, and with servers the same servers and workers. */
static int same_layout(const tr_ckpt_summary *ck, const tr_resume_run *run, char *err,
                       size_t errlen)
{
	if (ck->strategy == run->strategy &&
	    (!ck->servers ||
	     (ck->servers == (uint32_t)run->servers && ck->world == (uint32_t)run->data_world)))
		return 0;
	if (ck->servers)
		snprintf(err, errlen, "%s was written by --strategy %s with %u server%s and %u workers; "
		         "resume with the same", run->path, ck->strategy_name, ck->servers,
		         ck->servers == 1 ? "" : "s", ck->world);
	else
		snprintf(err, errlen, "%s was written by --strategy %s; resume with the same", run->path,
		         ck->strategy_name);
	return -1;
}

/* The sharding of the checkpoint's data, which its epoch in progress must
 * keep: its loader positions are within that sharding's shares. Under
 * --sharding auto it is kept at every epoch, as auto's choice depends on
 * the world size and the .idx sidecars, unless files sharding cannot serve
 * this world: then, between epochs, auto chooses anew. */
static int keep_sharding(const tr_ckpt_summary *ck, const tr_resume_run *run, tr_resume_plan *p,
                         char *err, size_t errlen)
{
	uint32_t saved = ck->sharding;
	if (saved < RIO_SHARD_FILES || saved > RIO_SHARD_RECORDS)
		return 0; /* an older checkpoint's, or --synthetic */
	p->ckpt_sharding = saved;
	int serves = saved != RIO_SHARD_FILES || ck->nshards >= (uint32_t)run->data_world;
	if (run->sharding == RIO_SHARD_AUTO && serves) {
		p->sharding = (rio_sharding)saved;
	} else if (run->sharding == RIO_SHARD_AUTO && ck->mid_epoch) {
		snprintf(err, errlen,
		         "%s: its epoch in progress is sharded by files, and %u shards cannot serve %d "
		         "%s by files: resume it on %u or fewer (the next epochs may then run on "
		         "more), or from a checkpoint at an epoch's end",
		         run->path, ck->nshards, run->data_world, run->data_unit, ck->nshards);
		return -1;
	} else if (run->sharding != RIO_SHARD_AUTO && run->sharding != (rio_sharding)saved &&
	           ck->mid_epoch) {
		snprintf(err, errlen,
		         "--sharding %s: %s's epoch in progress is sharded by %s; resume with "
		         "--sharding %s (or auto), or from a checkpoint at an epoch's end",
		         rio_sharding_name(run->sharding), run->path,
		         rio_sharding_name((rio_sharding)saved), rio_sharding_name((rio_sharding)saved));
		return -1;
	}
	return 0;
}

int tr_resume_plan_make(const tr_ckpt_summary *ck, const tr_resume_run *run, tr_resume_plan *p,
                        char *err, size_t errlen)
{
	*p = (tr_resume_plan){.sharding = run->sharding};
	if (!ck->have)
		return 0;
	p->resume = 1;
	if (same_layout(ck, run, err, errlen) < 0 || keep_sharding(ck, run, p, err, errlen) < 0)
		return -1;
	uint32_t g = ck->global_batch, W = (uint32_t)run->data_world;
	if (g == 0 && ck->world == W)
		return 0; /* version 1 at its own world size: the run's batch */
	if (g == 0) {
		snprintf(err, errlen,
		         "%s was written by %u ranks, by a recordio-train too old to resume at another "
		         "world size; this run has %d",
		         run->path, ck->world, run->world);
		return -1;
	}
	if (run->global_batch && (uint32_t)run->global_batch != g) {
		snprintf(err, errlen,
		         "--global-batch %d: %s was written with a global batch of %u, which a resume "
		         "keeps",
		         run->global_batch, run->path, g);
		return -1;
	}
	if (g % W) {
		snprintf(err, errlen,
		         "%s: its global batch of %u records (%u ranks x %u) does not split evenly over "
		         "%d ranks: resume with a world size that divides it",
		         run->path, g, ck->world, ck->world ? g / ck->world : 0, run->data_world);
		return -1;
	}
	/* the run's global batch and rate are the checkpoint's, at any world
	 * size (one resumed elastically before may have another --batch) */
	p->batch = (int)(g / W);
	p->keep_scale = 1;
	p->scale = ck->lr_scale;
	p->elastic_from = ck->world != W ? ck->world : 0;
	return 0;
}

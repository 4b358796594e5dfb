/*
 * resume_match.c — a checkpoint against the run that resumes it
 * (resume_match.h).
 */
#include "config.h"
#include "resume_match.h"

#include <stdio.h>
#include <string.h>

/* The checkpoint's --embed tables are this run's, shape for shape. */
static int same_tables(const tr_options *o, const tr_ckpt *c)
{
	if (c->ntables != (uint32_t)o->nembed)
		return 0;
	for (int t = 0; t < o->nembed; t++)
		if (c->table_vocab[t] != o->embed[t].vocab ||
		    c->table_dim[t] != (uint32_t)o->embed[t].dim)
			return 0;
	return 1;
}

/* "--embed cat0 (3 values), cat1 (1 value)", or "no --embed": the columns
 * of one role. */
static void describe_columns(char *buf, size_t size, const tr_ckpt_column *c, uint32_t n,
                             uint32_t role)
{
	static const char *const option[] = {"--x", "--embed", "--y"};
	size_t at = (size_t)snprintf(buf, size, "%s", option[role]);
	int any = 0;
	for (uint32_t i = 0; i < n && at < size; i++)
		if (c[i].role == role) {
			at += (size_t)snprintf(buf + at, size - at, "%s%s (%llu value%s)", any ? ", " : " ",
			                       c[i].name, (unsigned long long)c[i].length,
			                       c[i].length == 1 ? "" : "s");
			any = 1;
		}
	if (!any)
		snprintf(buf, size, "no %s", option[role]);
}

/* Rank 0: the checkpoint's columns are this run's, name for name and
 * length for length (a checkpoint before version 4 does not say). */
static int same_columns(const tr_config *cfg, const tr_data *d, const tr_ckpt *c,
                        const char *path, char *err, size_t errlen)
{
	tr_ckpt_column mine[TR_CKPT_MAX_COLUMNS];
	uint32_t n = tr_data_ckpt_columns(d, cfg, mine);
	if (!c->ncolumns || !n)
		return 0;
	for (uint32_t role = TR_CKPT_X; role <= TR_CKPT_Y; role++) {
		char was[900], now[900];
		describe_columns(was, sizeof was, c->columns, c->ncolumns, role);
		describe_columns(now, sizeof now, mine, n, role);
		if (strcmp(was, now) != 0) {
			snprintf(err, errlen, "%s was written with %s, this run has %s: resume with "
			         "the same", path, was, now);
			return -1;
		}
	}
	return 0;
}

/* Rank 0: --train names as many shards as the checkpoint's data had
 * (before the loaders open: their sharding is the checkpoint's); `n` of
 * them, or -1 to count them here. */
static int same_shard_count(const tr_options *o, const tr_ckpt *c, const char *path, int64_t n,
                            char *err, size_t errlen)
{
	if (!c->nshards || !o->train || o->synthetic)
		return 0; /* not known: an older checkpoint, --synthetic */
	rio_shardset set = {0};
	rio_error e;
	if (n < 0 && rio_shardset_expand(o->train, &set, &e) == 0)
		n = (int64_t)set.count;
	rio_shardset_free(&set);
	if (n < 0 || n == (int64_t)c->nshards)
		return 0; /* (a --train that names nothing is the loader's to say) */
	snprintf(err, errlen, "--train %s: %lld shard%s, %s was written on %u: resume on the "
	         "same data", o->train, (long long)n, n == 1 ? "" : "s", path, c->nshards);
	return -1;
}

/* Rank 0: the checkpoint's data are this run's: as many shards, each of
 * as many records (where both were counted). */
static int same_data(const tr_options *o, const tr_data *d, const tr_ckpt *c, const char *path,
                     char *err, size_t errlen)
{
	if (!c->nshards || !d->nshards)
		return 0; /* not known: an older checkpoint, --synthetic */
	if (same_shard_count(o, c, path, (int64_t)d->nshards, err, errlen) < 0)
		return -1;
	for (uint32_t i = 0; i < c->nshards; i++) {
		uint64_t was = c->shard_records[i], now = d->shard_records[i];
		if (was == now || was == UINT64_MAX || now == UINT64_MAX)
			continue;
		rio_shardset set = {0};
		rio_error e;
		int named = rio_shardset_expand(o->train, &set, &e) == 0 && i < set.count;
		snprintf(err, errlen, "--train: %s (shard %u) has %llu records, %s was written "
		         "when it had %llu: resume on the same data",
		         named ? set.paths[i] : o->train, i, (unsigned long long)now, path,
		         (unsigned long long)was);
		rio_shardset_free(&set);
		return -1;
	}
	return 0;
}

int tr_resume_match_options(const tr_config *cfg, const tr_ckpt *c, const char *path, char *err,
                            size_t errlen)
{
	const tr_options *o = &cfg->o;
	const char *what = c->seed != o->seed                       ? "--seed"
	                   : c->optimizer != (uint32_t)o->optim.kind ? "--optimizer"
	                                                            : NULL;
	if (!what)
		return same_shard_count(o, c, path, -1, err, errlen);
	snprintf(err, errlen, "%s was written with another %s; resume with the same", path, what);
	return -1;
}

int tr_resume_match_model(const tr_config *cfg, const tr_data *d, const tr_model *m,
                          const tr_ckpt *c, const char *path, char *err, size_t errlen)
{
	const char *what = NULL;
	if (same_columns(cfg, d, c, path, err, errlen) < 0 ||
	    same_data(&cfg->o, d, c, path, err, errlen) < 0)
		return -1;
	if (!same_tables(&cfg->o, c)) /* (their dims are in the model's inputs) */
		what = "--embed tables";
	else if (c->nlayers != (uint32_t)m->nlayers ||
	         memcmp(c->sizes, m->sizes, sizeof(int) * (c->nlayers + 1)) != 0)
		what = "model (--x, --hidden, --classes)";
	else
		return 0;
	snprintf(err, errlen, "%s was written with another %s; resume with the same", path, what);
	return -1;
}

/*
 * data.c — a run's data (data.h): columns, loaders, batches as the model's
 * input, and the loader positions a checkpoint keeps.
 */
#include "config.h"
#include "exit_status.h"
#include "data.h"
#include "clock.h"
#include "cpus.h"
#include "feature_spec.h"
#include "reducer.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG = 2048 };

/* The loader's columns as a shard set's first record has them: the --x
 * inputs, the --embed ids, then the --y label. */
static int resolve_columns(const tr_config *c, const char *shards, rio_column_spec *specs,
                           char *err, size_t errlen)
{
	const tr_options *o = &c->o;
	const char *ids[TR_MAX_EMBED];
	for (int i = 0; i < o->nembed; i++)
		ids[i] = o->embed[i].feature;
	return tr_features_resolve(shards, o->x, o->nx, ids, o->nembed, o->y, specs, err, errlen);
}

void tr_data_columns(tr_data *d, const tr_config *c)
{
	const tr_options *o = &c->o;
	char msg[MSG] = "";
	const char *first = o->train ? o->train : o->test;
	int rc = first ? resolve_columns(c, first, d->specs, msg, sizeof msg) : 0;
	if (rc == 0 && o->test && o->train) {
		rio_column_spec t[TR_DATA_MAX_COLUMNS];
		rc = resolve_columns(c, o->test, t, msg, sizeof msg);
		for (int i = 0; rc == 0 && i < o->nx + o->nembed; i++)
			if (t[i].length != d->specs[i].length) {
				snprintf(msg, sizeof msg,
				         "--%s %s: %zu values in the training data but %zu in the test data",
				         i < o->nx ? "x" : "embed", d->specs[i].name, d->specs[i].length,
				         t[i].length);
				rc = -1;
			}
	}
	/* --precision bf16: the loader decodes the inputs straight into bf16
	 * (half the bytes in its pool), the first GEMM's operands as they are */
	for (int i = 0; rc == 0 && o->precision == TR_PRECISION_BF16 && i < o->nx; i++)
		if (d->specs[i].type == RIO_DTYPE_F32)
			d->specs[i].type = RIO_DTYPE_BF16;
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
}

/* --cache auto: min(1 GiB, a quarter of the physical memory). */
static uint64_t auto_cache_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	uint64_t quarter = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : 0;
	uint64_t gib = 1ull << 30;
	return quarter < gib ? quarter : gib;
}

/* `budget`: opts.cache for this loader (what --cache leaves). */
static int open_loader(tr_data *d, const tr_config *c, rio_loader **l, const char *shards,
                       int train, uint64_t budget, char *err, size_t errlen)
{
	const tr_options *o = &c->o;
	rio_loader_opts lo;
	rio_loader_opts_init(&lo);
	lo.rank = c->roles.data_rank;
	lo.world = c->roles.data_world;
	lo.columns = d->specs;
	lo.ncolumns = (size_t)(o->nx + o->nembed) + 1;
	lo.workers = o->workers;
	/* a rank holds one batch at a time (a step's, an evaluation's); two
	 * under --pipeline-schedule async (the step's and the next one's, whose
	 * first microbatches go forward before the step ends) */
	lo.hold = train && o->pipe_schedule == TR_PIPE_ASYNC ? 2 : 1;
	/* Where the loader's threads share the ranks' cores (no spare CPU),
	 * they fill a batch only by taking the core from the rank's GEMMs, so
	 * batches queued further ahead add no speed; they only add pool
	 * memory that is cold again by the time it is refilled: at 2 ranks
	 * on 2 cores, widening a batch into a pool of 6 took twice the cycles
	 * it took in a pool of 2, and one batch ahead ran 1.5-3 % faster,
	 * from the cache or from the page cache (doc/performance.md). */
	if (train && d->nloader_cpus == 0)
		lo.prefetch = 1;
	lo.seed = o->seed;
	lo.cpus = d->loader_cpus;
	lo.ncpus = (size_t)d->nloader_cpus;
	lo.cache = budget;
	lo.shard_cache = o->shard_cache;
	lo.shard_cache_limit = (uint64_t)o->shard_cache_limit;
	lo.remote.part_size = (uint64_t)o->remote_part_size;
	lo.remote.inflight = (unsigned)o->remote_inflight;
	lo.remote.attempts = (unsigned)o->remote_attempts;
	lo.remote.stall_seconds = (unsigned)o->remote_stall;
	if (train) {
		lo.batch_size = (size_t)c->batch;
		lo.drop_remainder = 1;
		lo.shuffle = o->shuffle;
		lo.shuffle_buffer = o->shuffle_buffer;
		lo.sharding = o->sharding;
	} else {
		/* every test record exactly once over the ranks, in order */
		lo.batch_size = (size_t)o->eval_batch;
		lo.shuffle = RIO_SHUFFLE_NONE;
		lo.sharding = RIO_SHARD_RECORDS;
	}
	if (o->device == TR_DEVICE_CUDA) {
		lo.device_copy = 1;
		lo.device = c->w.local_rank;
	}
	int rc = rio_loader_open(l, shards, &lo);
	if (rc < 0) {
		const rio_error *e = *l ? rio_loader_error(*l) : NULL;
		snprintf(err, errlen, "%s %s: %s", train ? "--train" : "--test", shards,
		         e && e->message[0] ? e->message : rio_strerror(rc));
	}
	return rc;
}

/* Collective, once the loaders are open: the training data as the
 * checkpoint keeps it, on every rank: the sharding (the training ranks'),
 * and each shard's records, from the ranks that counted it (files
 * sharding: each its own). */
static void know_data(tr_data *d, const tr_config *c)
{
	uint64_t n = d->train ? rio_loader_shards(d->train)->count : 0;
	uint64_t mode = d->train ? (uint64_t)rio_loader_sharding(d->train) : 0;
	n = tr_world_max_u64(&c->w, n);
	d->sharding = (rio_sharding)tr_world_max_u64(&c->w, mode);
	d->nshards = n;
	d->shard_records = calloc(n ? n : 1, sizeof *d->shard_records);
	tr_world_agree(&c->w, !d->shard_records, "out of memory", EXIT_DATA);
	/* count + 1, 0 where this rank has none: the largest is the count */
	for (uint64_t i = 0; d->train && i < n; i++) {
		uint64_t k = rio_loader_shard_records(d->train, i);
		d->shard_records[i] = k == UINT64_MAX ? 0 : k + 1;
	}
	if (n)
		MPI_Allreduce(MPI_IN_PLACE, d->shard_records, (int)n, MPI_UINT64_T, MPI_MAX, c->w.comm);
	for (uint64_t i = 0; i < n; i++)
		d->shard_records[i] = d->shard_records[i] ? d->shard_records[i] - 1 : UINT64_MAX;
}

void tr_data_open(tr_data *d, const tr_config *c)
{
	const tr_options *o = &c->o;
	char msg[MSG] = "";
	/* the loaders' threads: off the rank's own core where the node has
	 * cores no rank is bound to (collective: every rank takes part, even
	 * one without the memory for the answer, which then keeps its own) */
	if (o->loader_cpus_spare) {
		d->loader_cpus = malloc(CPU_SETSIZE * sizeof(int));
		d->nloader_cpus =
			tr_loader_cpus(c->w.comm, d->loader_cpus, d->loader_cpus ? CPU_SETSIZE : 0);
	}
	/* --cache: one budget for both loaders, the training data first */
	uint64_t budget = o->cache < 0 ? auto_cache_bytes() : (uint64_t)o->cache;
	int reads = c->roles.data_rank >= 0;
	/* --synthetic: no loader for the training data */
	int rc = o->synthetic || !reads ? 0
	                                : open_loader(d, c, &d->train, o->train, 1, budget, msg,
	                                              sizeof msg);
	if (rc == 0 && d->train) {
		rio_loader_stats st;
		rio_loader_stats_get(d->train, &st);
		budget -= st.cache_bytes < budget ? st.cache_bytes : budget;
		d->cache_bytes = st.cache_bytes;
	}
	/* start filling the first batches (and the shuffle buffer) now */
	if (rc == 0 && d->train && (rc = rio_loader_set_epoch(d->train, 0)) < 0)
		snprintf(msg, sizeof msg, "--train %s: %s", o->train,
		         rio_loader_error(d->train)->message);
	if (rc == 0 && o->test && reads)
		rc = open_loader(d, c, &d->test, o->test, 0, budget, msg, sizeof msg);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	know_data(d, c);
}

int tr_data_synthetic(tr_data *d, tr_math *m, int inputs, const tr_config *c, int reader)
{
	d->synth = &d->synth_pool;
	return tr_synthetic_init(d->synth, m, inputs, c->o.classes, c->batch, c->o.seed, reader);
}

void tr_data_close(tr_data *d)
{
	if (d->synth)
		tr_synthetic_free(d->synth);
	rio_loader_close(d->train);
	rio_loader_close(d->test);
	free(d->loader_cpus);
	free(d->shard_records);
	memset(d, 0, sizeof *d);
}

int tr_data_inputs(const tr_data *d, const tr_config *c)
{
	return c->o.synthetic_inputs ? c->o.synthetic_inputs
	                             : (int)tr_features_width(d->specs, c->o.nx);
}

uint64_t tr_data_full_batches(const tr_data *d, const tr_config *c)
{
	uint64_t global = (uint64_t)c->batch * (uint64_t)c->roles.data_world;
	if (d->synth)
		return (TR_SYNTHETIC_EPOCH_RECORDS + global - 1) / global;
	return d->train ? rio_loader_full_batches(d->train) : 0;
}

/* ---- batches ---------------------------------------------------------------- */

/* The loader's message (shard, offset, record, what). A feature whose
 * length differs from the column spec is said in the trainer's terms: the
 * specs are the lengths of the first record of --train (feature_spec.c),
 * "SHARD: offset O (record R): feature 'image' has 780 bytes, the first
 * record of --train had 784". */
void tr_data_error(rio_loader *l, int rc, char *err, size_t errlen)
{
	const rio_error *e = rio_loader_error(l);
	const char *m = e->message[0] ? e->message : rio_strerror(rc);
	char what[128];
	snprintf(what, sizeof what, ": %s: ", rio_strerror(RIO_EFEATURELEN));
	const char *cut = rc == RIO_EFEATURELEN ? strstr(m, what) : NULL;
	const char *wants = cut ? strstr(cut, ", the spec wants ") : NULL;
	if (!wants) {
		snprintf(err, errlen, "%s", m);
		return;
	}
	snprintf(err, errlen, "%.*s: %.*s, the first record of --train had %s", (int)(cut - m), m,
	         (int)(wants - cut - strlen(what)), cut + strlen(what),
	         wants + strlen(", the spec wants "));
}

int tr_data_input(const tr_config *c, const tr_data *d, rio_loader *l, const rio_batch *b,
                  int gpu, tr_input *in, char *err, size_t errlen)
{
	int nx = c->o.nx;
	memset(in, 0, sizeof *in);
	in->nparts = nx;
	in->rows = (int)b->count;
	for (int i = 0; i < nx; i++) {
		in->part[i] = gpu ? b->columns[i].device : b->columns[i].host;
		in->width[i] = (int)d->specs[i].length;
		if (d->specs[i].type == RIO_DTYPE_BF16) { /* --precision bf16 */
			in->part16[i] = (const tr_bf16 *)in->part[i];
			in->part[i] = NULL;
		}
	}
	int label = nx + c->o.nembed; /* after the inputs and the --embed ids */
	const int64_t *y = b->columns[label].host;
	for (size_t i = 0; i < b->count; i++)
		if (y[i] < 0 || y[i] >= c->o.classes) {
			const rio_batch_record *rec = &b->records[i];
			snprintf(err, errlen, "%s: record %llu: label %lld is outside [0, %d) (--classes)",
			         rio_loader_shards(l)->paths[rec->shard], (unsigned long long)rec->index,
			         (long long)y[i], c->o.classes);
			return -1;
		}
	in->labels = gpu ? b->columns[label].device : y;
	return 0;
}

/* A NaN or an infinity among n bf16 values: the exponent's bits all set. */
static int nonfinite16(const uint16_t *v, size_t n)
{
	unsigned bad = 0;
	for (size_t i = 0; i < n; i++)
		bad |= (v[i] & 0x7f80u) == 0x7f80u;
	return (int)bad;
}

int tr_data_nonfinite(const tr_config *c, const tr_data *d, const rio_batch *b)
{
	for (int i = 0; i < c->o.nx; i++) {
		size_t n = b->count * d->specs[i].length;
		if (d->specs[i].scale == 0.0f &&
		    (d->specs[i].type == RIO_DTYPE_BF16 ? nonfinite16(b->columns[i].host, n)
		                                        : tr_nonfinite(b->columns[i].host, n)))
			return 1;
	}
	return 0;
}

int tr_data_next(tr_data *d, const tr_config *c, uint64_t step, uint64_t steps, rio_batch **b,
                 tr_input *in, int must, int *failed, double *wait, char *err, size_t errlen)
{
	double t0 = rio__now();
	int rc = 1;
	*b = NULL;
	if (d->synth) /* made finite, with labels in range */
		tr_synthetic_batch(d->synth, step, in);
	else
		rc = rio_loader_next(d->train, b);
	*wait += rio__now() - t0;
	if (d->synth) {
	} else if (rc < 0) {
		tr_data_error(d->train, rc, err, errlen);
		*failed = 1;
	} else if (rc == 0 && must) {
		snprintf(err, errlen, "--train %s: the epoch ended before its %llu steps", c->o.train,
		         (unsigned long long)steps);
		*failed = 1;
	} else if (rc == 1 && tr_data_input(c, d, d->train, *b, c->o.device == TR_DEVICE_CUDA, in,
	                                    err, errlen) < 0) {
		*failed = 1;
	}
	return rc;
}

void tr_data_set_epoch(tr_data *d, const tr_config *c, uint64_t epoch)
{
	int rc = d->train ? rio_loader_set_epoch(d->train, epoch) : 0;
	tr_world_agree(&c->w, rc < 0, rc < 0 ? rio_loader_error(d->train)->message : "", EXIT_DATA);
}

/* ---- checkpoints ------------------------------------------------------------ */

uint32_t tr_data_ckpt_columns(const tr_data *d, const tr_config *c, tr_ckpt_column *cols)
{
	const tr_options *o = &c->o;
	if (!o->train && !o->test)
		return 0;
	uint32_t n = (uint32_t)(o->nx + o->nembed) + 1;
	for (uint32_t i = 0; i < n; i++) {
		int x = (int)i < o->nx, embed = !x && i + 1 < n;
		cols[i].role = x ? TR_CKPT_X : embed ? TR_CKPT_EMBED : TR_CKPT_Y;
		cols[i].length = d->specs[i].length;
		snprintf(cols[i].name, sizeof cols[i].name, "%s",
		         x ? o->x[i] : embed ? o->embed[i - (uint32_t)o->nx].feature : o->y);
	}
	return n;
}

uint8_t *tr_data_position(tr_data *d, const tr_config *c, uint32_t *size)
{
	/* --synthetic (or no loader): one byte for the position the step says */
	int n = d->train ? rio_loader_state_save(d->train, NULL, 0) : 1;
	uint8_t *blob = n > 0 ? calloc(1, (size_t)n) : NULL;
	tr_world_agree(&c->w, !blob || (d->train && rio_loader_state_save(d->train, blob,
	                                                                  (size_t)n) != n),
	               "cannot save the loader's position", EXIT_DATA);
	*size = (uint32_t)n;
	return blob;
}

int tr_data_resharded(tr_data *d, const tr_config *c, uint64_t epoch)
{
	uint32_t was = c->plan.ckpt_sharding;
	if (!was || !d->sharding || d->sharding == (rio_sharding)was)
		return 0;
	int rc = d->train ? rio_loader_set_epoch(d->train, epoch) : 0;
	char msg[MSG] = "";
	if (rc < 0)
		snprintf(msg, sizeof msg, "--train %s: %s", c->o.train,
		         rio_loader_error(d->train)->message);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	return 1;
}

/* Every rank gets all of rank 0's loader positions (an elastic resume). */
static void restore_all(tr_data *d, const tr_config *c, const tr_ckpt *ck)
{
	const tr_world *w = &c->w;
	uint32_t n = w->rank == 0 ? ck->nblobs : 0;
	tr_world_bcast(w, &n, sizeof n);
	uint32_t *sizes = calloc(n, sizeof *sizes);
	uint8_t **blobs = calloc(n, sizeof *blobs);
	int rc = sizes && blobs ? 0 : -ENOMEM;
	tr_world_agree(w, rc < 0, "out of memory", EXIT_DATA);
	if (w->rank == 0)
		memcpy(sizes, ck->blob_size, n * sizeof *sizes);
	tr_world_bcast(w, sizes, n * sizeof *sizes);
	for (uint32_t i = 0; i < n && rc == 0; i++)
		if (!(blobs[i] = malloc(sizes[i] ? sizes[i] : 1)))
			rc = -ENOMEM;
	tr_world_agree(w, rc < 0, "out of memory", EXIT_DATA);
	size_t *lens = malloc(n * sizeof *lens);
	tr_world_agree(w, !lens, "out of memory", EXIT_DATA);
	for (uint32_t i = 0; i < n; i++) {
		if (w->rank == 0)
			memcpy(blobs[i], ck->blob[i], sizes[i]);
		tr_world_bcast(w, blobs[i], sizes[i]);
		lens[i] = sizes[i];
	}
	char msg[MSG] = "";
	/* (a rank that does not read the data, a later pipeline stage, only
	 * took part) */
	rc = d->train ? rio_loader_state_restore_all(d->train, (const void *const *)blobs, lens, n)
	              : 0;
	if (rc < 0)
		snprintf(msg, sizeof msg,
		         "%s/checkpoint: the loader positions of its %u ranks do not fit rank %d of %d "
		         "(%s)",
		         c->o.checkpoint, n, w->rank, w->size, rio_loader_error(d->train)->message);
	for (uint32_t i = 0; i < n; i++)
		free(blobs[i]);
	free(blobs);
	free(sizes);
	free(lens);
	tr_world_agree(w, rc < 0, msg, EXIT_DATA);
}

/* Each rank gets the blob of its index among the readers (data_rank; the
 * ranks of a tensor group the same one, a rank that reads nothing none). */
static void restore_own(tr_data *d, const tr_config *c, const tr_ckpt *ck, const char *who)
{
	const tr_world *w = &c->w;
	int rc = 0;
	uint32_t *sizes = w->rank == 0 ? calloc((size_t)w->size, sizeof *sizes) : NULL;
	uint8_t **blobs = w->rank == 0 ? calloc((size_t)w->size, sizeof *blobs) : NULL;
	int *reader = w->rank == 0 ? calloc((size_t)w->size, sizeof *reader) : NULL;
	rc = w->rank == 0 && (!sizes || !blobs || !reader) ? -1 : 0;
	tr_world_agree(w, rc < 0, "out of memory", EXIT_DATA);
	MPI_Gather(&c->roles.data_rank, 1, MPI_INT, reader, 1, MPI_INT, 0, w->comm);
	for (int r = 0; w->rank == 0 && r < w->size; r++)
		if (reader[r] >= 0 && (uint32_t)reader[r] < ck->nblobs) {
			sizes[r] = ck->blob_size[reader[r]];
			blobs[r] = ck->blob[reader[r]];
		}
	free(reader);
	uint32_t size;
	uint8_t *blob = tr_world_scatter_blobs(w, sizes, blobs, &size);
	free(sizes);
	free(blobs);
	char msg[MSG] = "";
	if (d->train) {
		rc = rio_loader_state_restore(d->train, blob, size);
		if (rc < 0)
			snprintf(msg, sizeof msg, "%s/checkpoint: the loader position of %s %d does not "
			         "fit the data (%s)", c->o.checkpoint, who, c->roles.data_rank,
			         rio_loader_error(d->train)->message);
	}
	free(blob);
	tr_world_agree(w, rc < 0, msg, EXIT_DATA);
}

void tr_data_restore(tr_data *d, const tr_config *c, const tr_ckpt *ck, int all, const char *who)
{
	if (all)
		restore_all(d, c, ck);
	else
		restore_own(d, c, ck, who);
}

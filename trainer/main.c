/*
 * main.c — recordio-train: sets up one rank (options, features, math
 * backend, loaders, model, optimizer), starts from rank 0's parameters or
 * from a checkpoint, then runs epochs of agreed length, evaluates, reports
 * and checkpoints. Every failure is agreed on where all ranks pass
 * (tr_world_agree): one line from one rank, every rank exits; only a
 * failure inside a collective ends the job with MPI_Abort (world.c): no
 * rank is left waiting in a collective.
 */
#include "config.h"
#include "checkpoint.h"
#include "clock.h"
#include "common.h"
#include "cpus.h"
#include "feature_spec.h"
#include "fit.h"
#include "progress.h"
#include "ps_run.h"
#include "report.h"
#include "resume_match.h"
#include "run.h"
#include "tensorboard.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>


static char msg[2048];

/* --resume: the checkpoint (rank 0 holds it), and, when it was written by
 * another world size, that size (an elastic resume), else 0 */
static tr_ckpt ck;
static int have_ck;
static uint32_t elastic_from;
static int have_scale; /* a version 2 checkpoint: its rate's scale */
static float ckpt_scale;
static uint32_t ckpt_sharding; /* version 4: its data's sharding (0: not known) */

/* --straggler R:F: R is a rank of this run that steps (under ps and
 * hybrid a worker: ranks S and up), else the option would do nothing. */
static void stragglers(tr_run *r)
{
	int S = r->o.strategy != TR_STRATEGY_ALLREDUCE ? r->o.servers : 0, bad = 0;
	for (int i = 0; i < r->o.nstraggler && !bad; i++) {
		int k = r->o.straggler[i].rank;
		double f = r->o.straggler[i].factor;
		if (k >= r->w.size)
			snprintf(msg, sizeof msg, "--straggler %d:%g: there is no rank %d (this run has "
			         "ranks 0 to %d)", k, f, k, r->w.size - 1);
		else if (k < S)
			snprintf(msg, sizeof msg, "--straggler %d:%g: rank %d is a parameter server; the "
			         "workers, which step, are ranks %d to %d", k, f, k, S, r->w.size - 1);
		bad = k >= r->w.size || k < S;
	}
	tr_world_agree(&r->w, bad, msg, EXIT_USAGE);
}

static void options(tr_run *r, int argc, char **argv)
{
	int rc = tr_options_parse(argc, argv, &r->o, msg, sizeof msg);
	if (rc == 1 || rc == 2) {
		if (r->w.rank == 0) {
			if (rc == 1)
				tr_options_usage(stdout);
			else
				printf("recordio-train (recordio %s)\n", rio_version());
		}
		tr_world_finish(&r->w);
		exit(0);
	}
	if (rc < 0) {
		size_t n = strlen(msg);
		snprintf(msg + n, sizeof msg - n, "\nTry 'recordio-train --help'.");
	}
	tr_world_agree(&r->w, rc < 0, msg, EXIT_USAGE);
	r->data_rank = r->w.rank;
	r->data_world = r->w.size;
	if (r->o.strategy != TR_STRATEGY_ALLREDUCE) {
		/* the data is the workers' */
		int S = r->o.servers, W = r->w.size - S;
		if (W < 1)
			snprintf(msg, sizeof msg, "--strategy %s with %d server%s needs at least %d "
			         "ranks (servers and one worker or more); this run has %d",
			         r->o.strategy == TR_STRATEGY_PS ? "ps" : "hybrid", S, S > 1 ? "s" : "",
			         S + 1, r->w.size);
		else if (r->o.backup_workers >= W)
			snprintf(msg, sizeof msg, "--backup-workers %d: leaves no gradient of %d workers "
			         "to apply", r->o.backup_workers, W);
		tr_world_agree(&r->w, W < 1 || r->o.backup_workers >= W, msg, EXIT_USAGE);
		r->data_world = W;
		r->data_rank = r->w.rank < S ? -1 : r->w.rank - S;
	}
	stragglers(r);
	if (r->o.global_batch) {
		if (r->o.global_batch % r->data_world) {
			snprintf(msg, sizeof msg, "--global-batch %d does not split evenly over %d %s",
			         r->o.global_batch, r->data_world,
			         r->o.strategy != TR_STRATEGY_ALLREDUCE ? "workers" : "ranks");
			tr_world_agree(&r->w, 1, msg, EXIT_USAGE);
		}
		r->batch = r->o.global_batch / r->data_world;
	} else {
		r->batch = r->o.batch;
	}
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
static int open_loader(tr_run *r, rio_loader **l, const char *shards, int train, uint64_t budget)
{
	rio_loader_opts lo;
	rio_loader_opts_init(&lo);
	lo.rank = r->data_rank;
	lo.world = r->data_world;
	lo.columns = r->specs;
	lo.ncolumns = (size_t)(r->o.nx + r->o.nembed) + 1;
	lo.workers = r->o.workers;
	/* a rank holds one batch at a time (a step's, an evaluation's) */
	lo.hold = 1;
	/* Where the loader's threads share the ranks' cores (no spare CPU),
	 * they fill a batch only by taking the core from the rank's GEMMs, so
	 * batches queued further ahead add no speed; they only add pool
	 * memory that is cold again by the time it is refilled: at 2 ranks
	 * on 2 cores, widening a batch into a pool of 6 took twice the cycles
	 * it took in a pool of 2, and one batch ahead ran 1.5-3 % faster,
	 * from the cache or from the page cache (doc/performance.md). */
	if (train && r->nloader_cpus == 0)
		lo.prefetch = 1;
	lo.seed = r->o.seed;
	lo.cpus = r->loader_cpus;
	lo.ncpus = (size_t)r->nloader_cpus;
	lo.cache = budget;
	if (train) {
		lo.batch_size = (size_t)r->batch;
		lo.drop_remainder = 1;
		lo.shuffle = r->o.shuffle;
		lo.shuffle_buffer = r->o.shuffle_buffer;
		lo.sharding = r->o.sharding;
	} else {
		/* every test record exactly once over the ranks, in order */
		lo.batch_size = (size_t)r->o.eval_batch;
		lo.shuffle = RIO_SHUFFLE_NONE;
		lo.sharding = RIO_SHARD_RECORDS;
	}
	if (r->o.device == TR_DEVICE_CUDA) {
		lo.device_copy = 1;
		lo.device = r->w.local_rank;
	}
	int rc = rio_loader_open(l, shards, &lo);
	if (rc < 0) {
		const rio_error *e = *l ? rio_loader_error(*l) : NULL;
		snprintf(msg, sizeof msg, "%s %s: %s", train ? "--train" : "--test", shards,
		         e && e->message[0] ? e->message : rio_strerror(rc));
	}
	return rc;
}

static void schedule(tr_run *r);
static void setup_embed(tr_run *r, int rows);

/* Collective, once the loaders are open: the training data as the
 * checkpoint keeps it, on every rank: the sharding (the training ranks'),
 * and each shard's records, from the ranks that counted it (files
 * sharding: each its own). */
static void know_data(tr_run *r)
{
	uint64_t n = r->train ? rio_loader_shards(r->train)->count : 0;
	uint64_t mode = r->train ? (uint64_t)rio_loader_sharding(r->train) : 0;
	n = tr_world_max_u64(&r->w, n);
	r->sharding = (rio_sharding)tr_world_max_u64(&r->w, mode);
	r->nshards = n;
	r->shard_records = calloc(n ? n : 1, sizeof *r->shard_records);
	tr_world_agree(&r->w, !r->shard_records, "out of memory", EXIT_DATA);
	/* count + 1, 0 where this rank has none: the largest is the count */
	for (uint64_t i = 0; r->train && i < n; i++) {
		uint64_t c = rio_loader_shard_records(r->train, i);
		r->shard_records[i] = c == UINT64_MAX ? 0 : c + 1;
	}
	if (n)
		MPI_Allreduce(MPI_IN_PLACE, r->shard_records, (int)n, MPI_UINT64_T, MPI_MAX, r->w.comm);
	for (uint64_t i = 0; i < n; i++)
		r->shard_records[i] = r->shard_records[i] ? r->shard_records[i] - 1 : UINT64_MAX;
}

/* A training rank's buffers beside the model: the host staging of the
 * gradients (the gradients themselves on the CPU), the evaluation's sums,
 * and --synthetic's batches. 0 or -ENOMEM. */
static int setup_buffers(tr_run *r, int inputs)
{
	const tr_options *o = &r->o;
	size_t n = r->net.nparams + TR_MLP_EXTRA;
	r->staging = o->device == TR_DEVICE_CUDA ? tr_math_host_alloc(r->math, n) : r->net.grads;
	r->eval_stats = tr_math_alloc(r->math, 2);
	if (!r->staging || !r->eval_stats)
		return -ENOMEM;
	if (!o->synthetic)
		return 0;
	r->synth = &r->synth_pool;
	return tr_synthetic_init(r->synth, r->math, inputs, o->classes, r->batch, o->seed,
	                         r->w.rank);
}

/* --strategy ps: a worker builds the whole model (no optimizer: the
 * servers update); a server only knows its shape, and holds its slice
 * (ps_run.c). A worker does every full batch of its own data, so an
 * epoch's steps differ between workers when their shards do; the rate's
 * schedule counts the most steps any worker has. */
static void setup_ps_model(tr_run *r, const int *sizes, int nlayers, int rows)
{
	const tr_options *o = &r->o;
	int rc = 0;
	r->opt.cfg = o->optim;
	if (r->data_rank < 0) {
		r->net.nlayers = nlayers;
		memcpy(r->net.sizes, sizes, sizeof(int) * (size_t)(nlayers + 1));
		r->net.nparams = tr_mlp_param_count(sizes, nlayers);
	} else {
		rc = tr_mlp_init(&r->net, r->math, sizes, nlayers, rows);
		if (rc == 0)
			rc = setup_buffers(r, sizes[0]);
	}
	if (rc < 0)
		snprintf(msg, sizeof msg, "out of memory for a model of %zu parameters",
		         tr_mlp_param_count(sizes, nlayers));
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	uint64_t mine = 0;
	if (r->data_rank >= 0) {
		uint64_t global = (uint64_t)r->batch * (uint64_t)r->data_world;
		mine = r->synth ? (TR_SYNTHETIC_EPOCH_RECORDS + global - 1) / global
		                : rio_loader_full_batches(r->train);
	}
	r->steps_per_epoch = tr_world_max_u64(&r->w, mine);
	if (r->steps_per_epoch == 0)
		snprintf(msg, sizeof msg, "--train %s: every worker has fewer records than one "
		         "batch of %d", o->train, r->batch);
	tr_world_agree(&r->w, r->steps_per_epoch == 0, msg, EXIT_DATA);
	if (o->strategy == TR_STRATEGY_HYBRID) {
		/* the workers allreduce the dense layers every step, in step:
		 * an epoch is what every worker can do */
		mine = tr_world_min_u64(&r->w, r->data_rank >= 0 ? mine : UINT64_MAX);
		if (mine == 0) { /* no step at all: the run would train nothing */
			uint64_t fewest = tr_world_min_u64(
				&r->w, r->data_rank >= 0 ? rio_loader_records(r->train) : UINT64_MAX);
			snprintf(msg, sizeof msg, "--train %s: a worker has fewer records (%llu) than "
			         "one batch of %d, and under hybrid the workers step together",
			         o->train, (unsigned long long)fewest, r->batch);
		}
		tr_world_agree(&r->w, mine == 0, msg, EXIT_DATA);
		MPI_Comm_split(r->w.comm, r->data_rank >= 0 ? 0 : 1, r->w.rank, &r->wcomm);
		if (r->data_rank >= 0 && tr_optim_init(&r->opt, r->math, r->net.nparams, &o->optim) < 0)
			rc = -ENOMEM;
		tr_world_agree(&r->w, rc < 0, "out of memory for the optimizer", EXIT_DATA);
	}
	r->epoch_steps = r->own_steps = mine;
	schedule(r);
	rc = tr_ps_open(r);
	tr_world_agree(&r->w, rc < 0, "out of memory for the parameter server's buffers",
	               EXIT_DATA);
	setup_embed(r, rows);
}

/* The loader's columns as a shard set's first record has them: the --x
 * inputs, the --embed ids, then the --y label. */
static int resolve_columns(tr_run *r, const char *shards, rio_column_spec *specs)
{
	const tr_options *o = &r->o;
	const char *ids[TR_MAX_EMBED];
	for (int i = 0; i < o->nembed; i++)
		ids[i] = o->embed[i].feature;
	return tr_features_resolve(shards, o->x, o->nx, ids, o->nembed, o->y, specs, msg,
	                           sizeof msg);
}

/* --embed: the tables (whole on an allreduce rank, rows pulled on a
 * worker, a server's own rows on a server) and the MLP's input gradient
 * of their block. */
static void setup_embed(tr_run *r, int rows)
{
	const tr_options *o = &r->o;
	if (!o->nembed)
		return;
	int rc = 0;
	if (r->ps_server) {
		tr_embed_table t[TR_MAX_EMBED];
		tr_embed_run_tables(t, o->embed, o->nembed, r->specs + o->nx);
		for (int i = 0; rc == 0 && i < o->nembed; i++)
			rc = tr_ps_server_add_table(r->ps_server, &t[i], i, o->seed, &r->opt.cfg);
	} else {
		int whole = o->strategy == TR_STRATEGY_ALLREDUCE;
		rc = tr_embed_run_init(&r->embed, o->embed, o->nembed, r->specs + o->nx, rows, whole,
		                       r->math, &r->opt.cfg, o->seed);
		if (rc == 0)
			rc = tr_mlp_want_dinput(&r->net, r->net.sizes[0] - r->embed.width,
			                        r->embed.width);
		if (r->ps_worker)
			r->ps_worker->embed = &r->embed;
	}
	tr_world_agree(&r->w, rc < 0, "out of memory for the --embed tables", EXIT_DATA);
}

static void setup(tr_run *r)
{
	const tr_options *o = &r->o;
	/* features, from the training data's first record (--synthetic without
	 * it: the test data's); the test data must match */
	const char *first = o->train ? o->train : o->test;
	int rc = first ? resolve_columns(r, first, r->specs) : 0;
	if (rc == 0 && o->test && o->train) {
		rio_column_spec t[TR_RUN_MAX_COLUMNS];
		rc = resolve_columns(r, o->test, t);
		for (int i = 0; rc == 0 && i < o->nx + o->nembed; i++)
			if (t[i].length != r->specs[i].length) {
				snprintf(msg, sizeof msg,
				         "--%s %s: %zu values in the training data but %zu in the test data",
				         i < o->nx ? "x" : "embed", r->specs[i].name, r->specs[i].length,
				         t[i].length);
				rc = -1;
			}
	}
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);

	/* where the checkpoints go must be writable now, not after an epoch */
	rc = 0;
	if (o->checkpoint && r->w.rank == 0)
		rc = tr_ckpt_probe(o->checkpoint, msg, sizeof msg);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	/* ... and the metrics go elsewhere (the checkpoint's rename replaced
	 * them; appended on resume, they went into the checkpoint) */
	rc = o->checkpoint && o->metrics && r->w.rank == 0 && tr_ckpt_owns(o->checkpoint, o->metrics);
	if (rc)
		snprintf(msg, sizeof msg, "--metrics %s: a file of --checkpoint %s, which writes "
		         "it: give the metrics another name", o->metrics, o->checkpoint);
	tr_world_agree(&r->w, rc, msg, EXIT_USAGE);

	/* math: the local rank's GPU, or the node's cores shared among its ranks */
	int threads = o->threads;
	if (!threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		threads = (int)(cores / r->w.local_size);
		/* no more than the CPUs the rank is bound to (mpirun binds a
		 * rank to one core when there are few): two threads on one
		 * core only take turns */
		int own = tr_own_cpus();
		if (own > 0 && threads > own)
			threads = own;
		if (threads < 1)
			threads = 1;
	}
	/* a parameter server updates its slice on the CPU, with one thread */
	int server = o->strategy != TR_STRATEGY_ALLREDUCE && r->data_rank < 0;
	rc = tr_math_open(&r->math, server ? TR_DEVICE_CPU : o->device, r->w.local_rank,
	                  server ? 1 : threads, msg, sizeof msg);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);

	/* the loaders' threads: off the rank's own core where the node has
	 * cores no rank is bound to (collective: every rank takes part, even
	 * one without the memory for the answer, which then keeps its own) */
	if (o->loader_cpus_spare) {
		r->loader_cpus = malloc(CPU_SETSIZE * sizeof(int));
		r->nloader_cpus =
			tr_loader_cpus(r->w.comm, r->loader_cpus, r->loader_cpus ? CPU_SETSIZE : 0);
	}

	/* --cache: one budget for both loaders, the training data first */
	uint64_t budget = o->cache < 0 ? auto_cache_bytes() : (uint64_t)o->cache;
	/* --synthetic: no loader for the training data; a server has none */
	rc = o->synthetic || server ? 0 : open_loader(r, &r->train, o->train, 1, budget);
	if (rc == 0 && r->train) {
		rio_loader_stats st;
		rio_loader_stats_get(r->train, &st);
		budget -= st.cache_bytes < budget ? st.cache_bytes : budget;
		r->cache_bytes = st.cache_bytes;
	}
	/* start filling the first batches (and the shuffle buffer) now */
	if (rc == 0 && r->train && (rc = rio_loader_set_epoch(r->train, 0)) < 0)
		snprintf(msg, sizeof msg, "--train %s: %s", o->train, rio_loader_error(r->train)->message);
	if (rc == 0 && o->test && !server)
		rc = open_loader(r, &r->test, o->test, 0, budget);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	know_data(r);

	/* the model */
	int sizes[TR_MLP_MAX_LAYERS + 1], nlayers = o->nhidden + 1;
	sizes[0] = o->synthetic_inputs ? o->synthetic_inputs
	                               : (int)tr_features_width(r->specs, o->nx);
	for (int i = 0; i < o->nembed; i++)
		sizes[0] += o->embed[i].dim; /* the pooled rows, after the inputs */
	for (int i = 0; i < o->nhidden; i++)
		sizes[i + 1] = o->hidden[i];
	sizes[nlayers] = o->classes;
	int rows = r->batch > o->eval_batch ? r->batch : o->eval_batch;
	tr_run_check_memory(r, sizes, nlayers, rows);
	if (o->strategy != TR_STRATEGY_ALLREDUCE) {
		setup_ps_model(r, sizes, nlayers, rows);
		return;
	}
	rc = tr_mlp_init(&r->net, r->math, sizes, nlayers, rows);
	if (rc == 0)
		rc = tr_optim_init(&r->opt, r->math, r->net.nparams, &o->optim);
	if (rc == 0) { /* each layer's W and b, for LARS */
		tr_param_block blocks[2 * TR_MLP_MAX_LAYERS];
		for (int l = 0; l < nlayers; l++) {
			blocks[2 * l] = (tr_param_block){r->net.w_off[l], (size_t)sizes[l] * sizes[l + 1], 1};
			blocks[2 * l + 1] = (tr_param_block){r->net.b_off[l], (size_t)sizes[l + 1], 0};
		}
		rc = tr_optim_set_blocks(&r->opt, blocks, 2 * nlayers);
	}
	if (rc == 0)
		rc = setup_buffers(r, sizes[0]);
	if (rc == 0)
		rc = tr_reducer_init(&r->red, r->w.comm, (tr_reduce_mode)o->reduce,
		                     o->device == TR_DEVICE_CPU, r->staging, r->net.nparams,
		                     o->bucket_bytes, r->staging + r->net.nparams, TR_MLP_EXTRA,
		                     /* shm: the parameters and the optimizer's state,
		                      * one copy per host, each rank updating its slices */
		                     o->shard_optimizer && o->device == TR_DEVICE_CPU &&
		                                     tr_optim_bucketwise(&r->opt)
		                             ? 1 + tr_optim_state_count(&r->opt) : 0);
	if (rc == 0 && r->red.buf != r->staging) {
		/* shm: the gradients (CPU) or their staging copy (GPU) live in the
		 * node's shared window, where the other ranks read them */
		if (o->device == TR_DEVICE_CPU) {
			tr_math_free(r->math, r->net.grads);
			r->net.grads = r->red.buf;
		} else {
			tr_math_host_free(r->math, r->staging);
		}
		r->staging = r->red.buf;
	}
	if (rc == 0 && r->red.sharded) {
		tr_math_free(r->math, r->net.params);
		r->net.params = r->red.shared[0];
		tr_math_free(r->math, r->opt.state1);
		r->opt.state1 = r->red.shared[1];
		if (r->opt.state2) {
			tr_math_free(r->math, r->opt.state2);
			r->opt.state2 = r->red.shared[2];
		}
	}
	if (rc == 0 && o->shard_optimizer && !r->red.sharded) {
		snprintf(msg, sizeof msg, "--shard-optimizer: needs the sums in shared memory (every "
		         "rank on one host, more than one), the CPU and SGD or Adam");
		rc = -1;
	} else if (rc == -EINVAL && o->reduce == TR_REDUCE_SHM)
		snprintf(msg, sizeof msg, "--reduce shm: the ranks are not all on one host (or "
		         "cannot share memory); use --reduce alltoall or mpi");
	else if (rc < 0)
		snprintf(msg, sizeof msg, "out of memory for a model of %zu parameters",
		         tr_mlp_param_count(sizes, nlayers));
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);

	/* steps per epoch: what every rank can do with full batches */
	uint64_t global = (uint64_t)r->batch * (uint64_t)r->w.size;
	r->steps_per_epoch = r->synth ? (TR_SYNTHETIC_EPOCH_RECORDS + global - 1) / global
	                              : tr_world_min_u64(&r->w, rio_loader_full_batches(r->train));
	if (r->steps_per_epoch == 0) { /* every rank says so: the fewest records, not its own */
		uint64_t fewest = tr_world_min_u64(&r->w, rio_loader_records(r->train));
		snprintf(msg, sizeof msg,
		         "--train %s: a rank has fewer records (%llu) than one batch of %d", o->train,
		         (unsigned long long)fewest, r->batch);
	}
	tr_world_agree(&r->w, r->steps_per_epoch == 0, msg, EXIT_DATA);
	r->epoch_steps = r->steps_per_epoch;
	schedule(r);
	setup_embed(r, rows);
}

/* The rate's scale and schedule, once the steps per epoch are known. */
static void schedule(tr_run *r)
{
	const tr_options *o = &r->o;
	tr_optim_config *c = &r->opt.cfg;
	c->scale = o->lr_scaling && !o->global_batch ? (float)r->data_world : 1.0f;
	if (have_scale)
		c->scale = ckpt_scale; /* the global batch is kept: so is its rate */
	c->warmup_steps = (uint64_t)llround(o->warmup_epochs * (double)r->steps_per_epoch);
	c->total_steps = o->epochs * r->steps_per_epoch;
}

/* OpenBLAS picks its kernels from the CPU's model; virtual machines that
 * hide it ("Intel(R) Xeon(R) Processor") get the Prescott (SSE3) fallback,
 * 4 to 5 times slower than the AVX-512 or AVX2 kernels the CPU can run.
 * When the user has not chosen (OPENBLAS_CORETYPE), restart once with the
 * kernels the CPU's flags allow. OpenBLAS reads the variable when it is
 * loaded, hence the exec, before MPI_Init. */
static void choose_blas_kernels(char **argv)
{
	if (getenv("OPENBLAS_CORETYPE"))
		return;
	const char *core = openblas_get_corename();
	if (!core || (strcasecmp(core, "prescott") && strcasecmp(core, "core2") &&
	              strcasecmp(core, "nehalem") && strcasecmp(core, "katmai")))
		return;
	const char *better = NULL;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl"))
		better = "SkylakeX";
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		better = "Haswell";
	if (!better)
		return;
	setenv("OPENBLAS_CORETYPE", better, 1);
	/* by the program's own path, not /proc/self/exe: the process would
	 * be named "exe" (ps, top, /proc/PID/comm) */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		execv(self, argv);
	}
	execv("/proc/self/exe", argv);
	/* could not restart: carry on with the slow kernels */
}

/* ---- starting point: rank 0's initialisation, or the checkpoint ----------- */

/* Parameters or optimizer state from the host: under a sharded reducer
 * they are the node's one copy, written by one rank (then
 * tr_reducer_shared_sync). */
static void load_shared(tr_run *r, float *dst, const float *host, size_t n)
{
	if (!r->red.sharded || r->w.rank == 0)
		tr_math_from_host(r->math, dst, host, n);
}

static void fresh_start(tr_run *r)
{
	size_t n = r->net.nparams;
	float *host = malloc(n * sizeof *host);
	tr_world_agree(&r->w, !host, "out of memory", EXIT_DATA);
	int rc = 0;
	if (r->w.rank == 0 && !r->net.math) {
		/* a parameter server: the model's layout, for a moment */
		tr_mlp shape;
		rc = tr_mlp_init(&shape, r->math, r->net.sizes, r->net.nlayers, 1);
		if (rc == 0)
			tr_mlp_init_params(&shape, r->o.seed, host);
		tr_mlp_free(&shape);
	} else if (r->w.rank == 0) {
		tr_mlp_init_params(&r->net, r->o.seed, host);
	}
	tr_world_agree(&r->w, rc < 0, "out of memory", EXIT_DATA);
	rc = tr_world_bcast_checked(&r->w, host, n);
	tr_world_agree(&r->w, rc < 0, "the ranks' initial parameters differ after the broadcast",
	               EXIT_DATA);
	if (r->o.strategy != TR_STRATEGY_ALLREDUCE)
		tr_ps_place(r, 0, host);
	else
		load_shared(r, r->net.params, host, n);
	tr_reducer_shared_sync(&r->red);
	free(host);
}

/* --resume, before the loaders open: the sharding of the checkpoint's data
 * (`saved`, 0 when not known; `nshards` of them), which the epoch in
 * progress (`mid`) must keep: its loader positions are within that
 * sharding's shares. Under --sharding auto it is kept at every epoch, as
 * auto's choice depends on the world size and the .idx sidecars, unless
 * files sharding cannot serve this world: then, between epochs, auto
 * chooses anew. */
static void choose_sharding(tr_run *r, uint32_t saved, uint32_t nshards, int mid,
                            const char *path)
{
	static const char *const names[] = {"auto", "files", "records"};
	tr_options *o = &r->o;
	if (saved < RIO_SHARD_FILES || saved > RIO_SHARD_RECORDS)
		return; /* an older checkpoint's, or --synthetic */
	ckpt_sharding = saved;
	int serves = saved != RIO_SHARD_FILES || nshards >= (uint32_t)r->data_world;
	int rc = 0;
	if (o->sharding == RIO_SHARD_AUTO && serves) {
		o->sharding = (rio_sharding)saved;
	} else if (o->sharding == RIO_SHARD_AUTO && mid) {
		snprintf(msg, sizeof msg,
		         "%s: its epoch in progress is sharded by files, and %u shards cannot serve %d "
		         "%s by files: resume it on %u or fewer (the next epochs may then run on "
		         "more), or from a checkpoint at an epoch's end",
		         path, nshards, r->data_world,
		         o->strategy != TR_STRATEGY_ALLREDUCE ? "workers" : "ranks", nshards);
		rc = -1;
	} else if (o->sharding != RIO_SHARD_AUTO && o->sharding != (rio_sharding)saved && mid) {
		snprintf(msg, sizeof msg,
		         "--sharding %s: %s's epoch in progress is sharded by %s; resume with "
		         "--sharding %s (or auto), or from a checkpoint at an epoch's end",
		         names[o->sharding], path, names[saved], names[saved]);
		rc = -1;
	}
	tr_world_agree(&r->w, rc < 0, msg, EXIT_USAGE);
}

/* --resume, before the loaders open: reads the checkpoint on rank 0 and
 * decides the batch. The global batch is the checkpoint's: G = B x W
 * records per step become G / W' per rank at another world size (elastic),
 * and a world size that does not divide G is refused. */
static void read_checkpoint(tr_run *r)
{
	int rc = 0;
	char *path = tr_ckpt_path(r->o.checkpoint);
	/* have, world, global batch, scale, strategy, servers, sharding, shards,
	 * whether an epoch is in progress */
	uint32_t v[9] = {0};
	if (r->w.rank == 0) {
		/* what is there is a regular file, before it is opened (a FIFO
		 * would wait for a writer) */
		int probed = path ? tr_ckpt_probe(r->o.checkpoint, msg, sizeof msg) : -ENOMEM;
		rc = probed == 0 ? tr_ckpt_read(r->o.checkpoint, &ck, msg, sizeof msg) : probed;
		if (rc == -ENOENT && probed == 0) {
			fprintf(stderr, "recordio-train: no checkpoint in %s yet: starting from scratch\n",
			        r->o.checkpoint);
			rc = 0;
		} else if (rc == 0) {
			v[0] = 1;
			v[1] = ck.world;
			v[2] = ck.global_batch;
			memcpy(&v[3], &ck.lr_scale, 4);
			v[4] = ck.strategy;
			v[5] = ck.servers;
			v[6] = ck.sharding;
			v[7] = ck.nshards;
			v[8] = ck.step_in_epoch > 0;
			rc = tr_resume_match(r, &ck, path, 0, msg, sizeof msg);
		}
	}
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	tr_world_bcast(&r->w, v, sizeof v);
	have_ck = (int)v[0];
	uint32_t g = v[2];
	static const char *const strategies[] = {"allreduce", "ps", "hybrid"};
	if (have_ck && (v[4] != (uint32_t)r->o.strategy ||
	                (v[4] && (v[5] != (uint32_t)r->o.servers || v[1] != (uint32_t)r->data_world)))) {
		const char *p = path ? path : r->o.checkpoint;
		if (v[4])
			snprintf(msg, sizeof msg, "%s was written by --strategy %s with %u server%s and "
			         "%u workers; resume with the same", p, strategies[v[4] < 3 ? v[4] : 0],
			         v[5], v[5] == 1 ? "" : "s", v[1]);
		else
			snprintf(msg, sizeof msg, "%s was written by --strategy allreduce; resume with "
			         "the same", p);
		tr_world_agree(&r->w, 1, msg, EXIT_USAGE);
	}
	if (have_ck)
		choose_sharding(r, v[6], v[7], (int)v[8], path ? path : r->o.checkpoint);
	if (!have_ck || (g == 0 && v[1] == (uint32_t)r->data_world)) {
		free(path); /* none, or version 1 at its own world size */
		return;
	}
	rc = -1;
	if (g == 0)
		snprintf(msg, sizeof msg,
		         "%s was written by %u ranks, by a recordio-train too old to resume at another "
		         "world size; this run has %d",
		         path, v[1], r->w.size);
	else if (r->o.global_batch && (uint32_t)r->o.global_batch != g)
		snprintf(msg, sizeof msg,
		         "--global-batch %d: %s was written with a global batch of %u, which a "
		         "resume keeps",
		         r->o.global_batch, path, g);
	else if (g % (uint32_t)r->data_world)
		snprintf(msg, sizeof msg,
		         "%s: its global batch of %u records (%u ranks x %u) does not split evenly over "
		         "%d ranks: resume with a world size that divides it",
		         path, g, v[1], g / v[1], r->data_world);
	else
		rc = 0;
	free(path);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_USAGE);
	/* the run's global batch and rate are the checkpoint's, at any world
	 * size (one resumed elastically before may have another --batch) */
	r->batch = (int)(g / (uint32_t)r->data_world);
	have_scale = 1;
	memcpy(&ckpt_scale, &v[3], 4);
	elastic_from = v[1] != (uint32_t)r->data_world ? v[1] : 0;
}

/* Every rank gets all of rank 0's loader positions (an elastic resume). */
static void restore_all_positions(tr_run *r)
{
	uint32_t n = r->w.rank == 0 ? ck.nblobs : 0;
	tr_world_bcast(&r->w, &n, sizeof n);
	uint32_t *sizes = calloc(n, sizeof *sizes);
	uint8_t **blobs = calloc(n, sizeof *blobs);
	int rc = sizes && blobs ? 0 : -ENOMEM;
	tr_world_agree(&r->w, rc < 0, "out of memory", EXIT_DATA);
	if (r->w.rank == 0)
		memcpy(sizes, ck.blob_size, n * sizeof *sizes);
	tr_world_bcast(&r->w, sizes, n * sizeof *sizes);
	for (uint32_t i = 0; i < n && rc == 0; i++)
		if (!(blobs[i] = malloc(sizes[i] ? sizes[i] : 1)))
			rc = -ENOMEM;
	tr_world_agree(&r->w, rc < 0, "out of memory", EXIT_DATA);
	size_t *lens = malloc(n * sizeof *lens);
	tr_world_agree(&r->w, !lens, "out of memory", EXIT_DATA);
	for (uint32_t i = 0; i < n; i++) {
		if (r->w.rank == 0)
			memcpy(blobs[i], ck.blob[i], sizes[i]);
		tr_world_bcast(&r->w, blobs[i], sizes[i]);
		lens[i] = sizes[i];
	}
	rc = rio_loader_state_restore_all(r->train, (const void *const *)blobs, lens, n);
	if (rc < 0)
		snprintf(msg, sizeof msg,
		         "%s/checkpoint: the loader positions of its %u ranks do not fit rank %d of %d "
		         "(%s)",
		         r->o.checkpoint, n, r->w.rank, r->w.size, rio_loader_error(r->train)->message);
	for (uint32_t i = 0; i < n; i++)
		free(blobs[i]);
	free(blobs);
	free(sizes);
	free(lens);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
}

/* Collective, on resume: the --embed tables from rank 0's checkpoint c,
 * whole to the allreduce ranks, each server its rows. */
static void place_tables(tr_run *r, const tr_ckpt *c)
{
	int states = tr_optim_state_count(&r->opt);
	for (int t = 0; t < r->o.nembed; t++) {
		size_t n = (size_t)r->o.embed[t].vocab * (size_t)r->o.embed[t].dim;
		float *host = malloc(n * sizeof *host);
		tr_world_agree(&r->w, !host, "out of memory", EXIT_DATA);
		for (int i = 0; i <= states; i++) {
			if (r->w.rank == 0)
				memcpy(host, i == 0 ? c->table_params[t] : i == 1 ? c->table_state1[t]
				                                                   : c->table_state2[t],
				       n * sizeof *host);
			tr_world_bcast(&r->w, host, n * sizeof *host);
			if (r->o.strategy != TR_STRATEGY_ALLREDUCE) {
				tr_ps_place_table(r, t, i, host);
			} else {
				tr_embed_run *e = &r->embed;
				memcpy(tr_optim_buffer(&e->opt, e->params, i) + e->t[t].offset, host,
				       n * sizeof *host);
			}
		}
		free(host);
	}
	if (r->o.strategy == TR_STRATEGY_ALLREDUCE)
		r->embed.opt.t = r->opt.t;
}

/* Collective, on resume: the training seconds so far, from DIR/clock
 * (rank 0's `seconds`); when it is not known (no clock, or another
 * checkpoint's: a crash between the two writes, an older build), said
 * once, and wall_seconds count from here. */
static void resume_clock(tr_run *r, double seconds)
{
	tr_world_bcast(&r->w, &seconds, sizeof seconds);
	if (isnan(seconds) && r->w.rank == 0)
		fprintf(stderr, "recordio-train: %s/clock is missing or not its checkpoint's: the "
		        "metrics' wall_seconds count from this resume\n", r->o.checkpoint);
	r->train_seconds = isnan(seconds) ? 0 : seconds;
	if (r->ps_server)
		r->ps_server->seconds_before = r->train_seconds;
}

/* Collective: were the data sharded anew between epochs (choose_sharding)?
 * The checkpoint's positions are then of another sharding's shares, and
 * at an epoch's end there is nothing of them to restore: each loader
 * starts the epoch. 1 then (a failure agreed on), else 0. */
static int resharded(tr_run *r)
{
	if (!ckpt_sharding || !r->sharding || r->sharding == (rio_sharding)ckpt_sharding)
		return 0;
	int rc = r->train ? rio_loader_set_epoch(r->train, r->epoch) : 0;
	if (rc < 0)
		snprintf(msg, sizeof msg, "--train %s: %s", r->o.train,
		         rio_loader_error(r->train)->message);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	return 1;
}

/* --strategy ps, collective: the counters of rank 0's checkpoint c: each
 * server its version and counts (of the epoch so far, and since the
 * start), each worker its steps, worker 0 the epoch's sums so far. */
static void resume_ps_counters(tr_run *r, const tr_ckpt *c)
{
	int S = r->o.servers, W = r->data_world;
	uint64_t u[4] = {c->epoch, c->server_version, c->optimizer_t, c->epoch_skipped};
	double d[3] = {c->epoch_loss, c->epoch_correct, c->epoch_count};
	tr_world_bcast(&r->w, u, sizeof u);
	tr_world_bcast(&r->w, d, sizeof d);
	uint64_t *steps = calloc(2 * (size_t)W, sizeof *steps);
	tr_ckpt_server *sv = calloc((size_t)S, sizeof *sv);
	tr_world_agree(&r->w, !steps || !sv, "out of memory", EXIT_DATA);
	if (r->w.rank == 0) {
		for (int i = 0; i < W; i++) {
			steps[2 * i] = c->worker_step_in_epoch[i];
			steps[2 * i + 1] = c->worker_global_step[i];
		}
		if (c->server) /* (an older checkpoint's: not known, from 0) */
			memcpy(sv, c->server, (size_t)S * sizeof *sv);
	}
	tr_world_bcast(&r->w, steps, 2 * (size_t)W * sizeof *steps);
	tr_world_bcast(&r->w, sv, (size_t)S * sizeof *sv);
	r->epoch = u[0];
	if (r->ps_server) {
		tr_ps_server *s = r->ps_server;
		const tr_ckpt_server *v = &sv[r->w.rank];
		s->version = u[1];
		s->opt.t = u[2];
		for (int t = 0; t < s->ntables; t++)
			s->tab[t].opt.t = u[2];
		r->ps_epoch = (tr_ps_stats){v->updates,       v->gradients,     v->dropped,
		                            v->skipped,       v->staleness_max, v->staleness_sum,
		                            v->samples};
		s->total_updates = v->total_updates;
		s->total_gradients = v->total_gradients;
		s->total_samples = v->total_samples;
	} else {
		r->opt.t = u[2]; /* hybrid: the dense layers' optimizer */
		r->step_in_epoch = steps[2 * r->data_rank];
		r->global_step = steps[2 * r->data_rank + 1];
		if (r->data_rank == 0) {
			r->ep_loss = d[0];
			r->ep_correct = d[1];
			r->ep_count = d[2];
			r->ep_skipped = u[3];
		}
	}
	free(steps);
	free(sv);
}

/* --strategy ps, collective: each worker its loader position from rank
 * 0's checkpoint c (a server has none). */
static void restore_ps_positions(tr_run *r, const tr_ckpt *c)
{
	int S = r->o.servers, W = r->data_world, rc = 0;
	uint32_t *sizes = r->w.rank == 0 ? calloc((size_t)r->w.size, sizeof *sizes) : NULL;
	uint8_t **blobs = r->w.rank == 0 ? calloc((size_t)r->w.size, sizeof *blobs) : NULL;
	rc = r->w.rank == 0 && (!sizes || !blobs) ? -1 : 0;
	tr_world_agree(&r->w, rc < 0, "out of memory", EXIT_DATA);
	for (int i = 0; r->w.rank == 0 && i < W; i++) {
		sizes[S + i] = c->blob_size[i];
		blobs[S + i] = c->blob[i];
	}
	uint32_t size;
	uint8_t *blob = tr_world_scatter_blobs(&r->w, sizes, blobs, &size);
	free(sizes);
	free(blobs);
	if (r->train) {
		rc = rio_loader_state_restore(r->train, blob, size);
		if (rc < 0)
			snprintf(msg, sizeof msg, "%s/checkpoint: the loader position of worker %d does "
			         "not fit the data (%s)", r->o.checkpoint, r->data_rank,
			         rio_loader_error(r->train)->message);
	}
	free(blob);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
}

/* --strategy ps: the servers take their slices, each worker its own
 * counters and loader position, worker 0 the epoch's sums so far. */
static void resume_ps(tr_run *r)
{
	const tr_ckpt c = ck; /* rank 0's (freed below) */
	resume_ps_counters(r, &c);
	/* the tensors */
	size_t n = r->net.nparams;
	float *host = malloc(n * sizeof *host);
	tr_world_agree(&r->w, !host, "out of memory", EXIT_DATA);
	float *src[3] = {c.params, c.state1, c.state2};
	int states = tr_optim_state_count(&r->opt);
	for (int i = 0; i <= states; i++) {
		if (r->w.rank == 0)
			memcpy(host, src[i], n * sizeof *host);
		if (tr_world_bcast_checked(&r->w, host, n) < 0)
			tr_world_agree(&r->w, 1, "the ranks' parameters differ after the broadcast",
			               EXIT_DATA);
		tr_ps_place(r, i, host);
	}
	free(host);
	place_tables(r, &c);
	/* each worker's loader position (none for a server) */
	if (!resharded(r))
		restore_ps_positions(r, &c);
	/* the steps of this worker's epoch in progress */
	if (r->train)
		r->epoch_steps = r->step_in_epoch + rio_loader_remaining(r->train) / (uint64_t)r->batch;
	if (r->w.rank == 0) {
		if (!r->o.quiet)
			printf("resumed from %s/checkpoint: epoch %llu, %llu versions made by the "
			       "servers\n", r->o.checkpoint, (unsigned long long)r->epoch + 1,
			       (unsigned long long)c.server_version);
		tr_ckpt_free(&ck);
	}
}

static void resume(tr_run *r)
{
	const tr_ckpt c = ck; /* rank 0's (freed below) */
	int rc = 0;
	if (!have_ck) {
		fresh_start(r);
		return;
	}
	/* under every strategy: the model, its columns and data are the
	 * checkpoint's (the tensors are copied at this run's sizes) */
	char *path = tr_ckpt_path(r->o.checkpoint);
	if (r->w.rank == 0)
		rc = path ? tr_resume_match(r, &c, path, 1, msg, sizeof msg) : -1;
	free(path);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	resume_clock(r, c.seconds);
	if (r->o.strategy != TR_STRATEGY_ALLREDUCE) {
		resume_ps(r);
		return;
	}
	/* the counters, then the tensors, then each rank's loader position */
	uint64_t u[7];
	double d[4];
	if (r->w.rank == 0) {
		uint64_t v[7] = {c.epoch,       c.step_in_epoch,   c.global_step,  c.skipped_steps,
		                 c.optimizer_t, c.total_gradients, c.epoch_skipped};
		memcpy(u, v, sizeof u);
		d[0] = c.epoch_loss;
		d[1] = c.epoch_correct;
		d[2] = c.epoch_count;
		d[3] = c.total_samples;
	}
	tr_world_bcast(&r->w, u, sizeof u);
	tr_world_bcast(&r->w, d, sizeof d);
	r->epoch = u[0];
	r->step_in_epoch = u[1];
	r->global_step = u[2];
	r->skipped_steps = u[3];
	r->opt.t = u[4];
	r->total_gradients = u[5];
	r->ep_skipped = u[6];
	r->ep_loss = d[0];
	r->ep_correct = d[1];
	r->ep_count = d[2];
	r->total_samples = d[3];
	size_t n = r->net.nparams;
	float *host = malloc(n * sizeof *host);
	tr_world_agree(&r->w, !host, "out of memory", EXIT_DATA);
	float *src[3] = {c.params, c.state1, c.state2};
	float *dst[3] = {r->net.params, r->opt.state1, r->opt.state2};
	for (int i = 0; i < 1 + tr_optim_state_count(&r->opt); i++) {
		if (r->w.rank == 0)
			memcpy(host, src[i], n * sizeof *host);
		if (tr_world_bcast_checked(&r->w, host, n) < 0)
			tr_world_agree(&r->w, 1, "the ranks' parameters differ after the broadcast",
			               EXIT_DATA);
		load_shared(r, dst[i], host, n);
	}
	tr_reducer_shared_sync(&r->red);
	free(host);
	place_tables(r, &c);
	if (!r->train) {
		/* --synthetic: the step alone says which batch comes next */
	} else if (resharded(r)) {
		/* an epoch's end, sharded anew (choose_sharding): no position */
	} else if (elastic_from) {
		restore_all_positions(r);
	} else {
		uint32_t size;
		uint8_t *blob = tr_world_scatter_blobs(&r->w, r->w.rank == 0 ? c.blob_size : NULL,
		                                       r->w.rank == 0 ? c.blob : NULL, &size);
		rc = rio_loader_state_restore(r->train, blob, size);
		free(blob);
		if (rc < 0)
			snprintf(msg, sizeof msg, "%s/checkpoint: the loader position of rank %d does not "
			         "fit the data (%s)", r->o.checkpoint, r->w.rank,
			         rio_loader_error(r->train)->message);
		tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	}
	/* the steps of the epoch in progress: those done, and what every rank
	 * can do with full batches of its rest (after an elastic resume, its
	 * share of the rest re-sharded over this world, at any world size
	 * after one) */
	r->epoch_steps = !r->train ? r->steps_per_epoch
	                 : r->step_in_epoch + tr_world_min_u64(&r->w, rio_loader_remaining(r->train) /
	                                                                   (uint64_t)r->batch);
	if (r->w.rank == 0) {
		if (!r->o.quiet && elastic_from)
			printf("resumed from %s/checkpoint written by %u ranks: epoch %llu, step %llu of "
			       "%llu; the global batch of %d kept (%d per rank), the rest of the epoch "
			       "re-sharded\n",
			       r->o.checkpoint, elastic_from, (unsigned long long)r->epoch + 1,
			       (unsigned long long)r->step_in_epoch, (unsigned long long)r->epoch_steps,
			       r->batch * r->w.size, r->batch);
		else if (!r->o.quiet)
			printf("resumed from %s/checkpoint: epoch %llu, step %llu of %llu\n",
			       r->o.checkpoint, (unsigned long long)r->epoch + 1,
			       (unsigned long long)r->step_in_epoch,
			       (unsigned long long)r->steps_per_epoch);
		tr_ckpt_free(&ck);
	}
}

/* --strategy ps, on rank 0: the checkpoint's worker part from the
 * world's gathered blobs (a server's is empty) and the workers' counters;
 * the servers' slices whole. */
static int fill_ps_checkpoint(tr_run *r, tr_ckpt *c, const uint64_t *counters)
{
	int S = r->o.servers, W = r->data_world;
	/* the servers' blobs go: the workers' move to the front */
	for (int i = 0; i < S; i++)
		free(c->blob[i]);
	memmove(c->blob, c->blob + S, (size_t)W * sizeof *c->blob);
	memmove(c->blob_size, c->blob_size + S, (size_t)W * sizeof *c->blob_size);
	c->nblobs = (uint32_t)W;
	c->world = (uint32_t)W;
	c->strategy = (uint32_t)r->o.strategy;
	c->servers = (uint32_t)S;
	c->server_version = r->ps_server->version;
	c->optimizer_t = r->ps_server->opt.t;
	c->worker_step_in_epoch = calloc((size_t)W, sizeof(uint64_t));
	c->worker_global_step = calloc((size_t)W, sizeof(uint64_t));
	if (!c->worker_step_in_epoch || !c->worker_global_step)
		return -1;
	c->step_in_epoch = c->global_step = c->skipped_steps = c->epoch_skipped = 0;
	for (int i = 0; i < W; i++) {
		const uint64_t *k = counters + 4 * (S + i);
		c->worker_step_in_epoch[i] = k[0];
		c->worker_global_step[i] = k[1];
		if (k[0] > c->step_in_epoch)
			c->step_in_epoch = k[0];
		if (k[1] > c->global_step)
			c->global_step = k[1];
		c->skipped_steps += k[2];
		c->epoch_skipped += k[3];
	}
	return 0;
}

/* A server's counts as the checkpoint keeps them (zero on a worker). */
static tr_ckpt_server server_counts(const tr_run *r)
{
	const tr_ps_server *s = r->ps_server;
	const tr_ps_stats *e = &r->ps_epoch;
	if (!s)
		return (tr_ckpt_server){0};
	return (tr_ckpt_server){e->updates,       e->gradients,       e->dropped,
	                        e->skipped,       e->staleness_max,   e->staleness_sum,
	                        e->samples,       s->total_updates,   s->total_gradients,
	                        s->total_samples};
}

/* Rank 0: what the checkpoint keeps of the run beside its state: the
 * data's sharding and shard counts, the columns, the counters since the
 * start, and (in DIR/clock) the training seconds so far. */
static void describe_run(tr_run *r, tr_ckpt *c)
{
	c->sharding = (uint32_t)r->sharding;
	c->nshards = (uint32_t)r->nshards;
	c->shard_records = r->shard_records; /* lent: taken back before the free */
	c->ncolumns = tr_run_columns(r, c->columns);
	c->total_samples = r->total_samples;
	c->total_gradients = r->total_gradients;
	c->epoch_skipped = r->ep_skipped;
	c->seconds = r->train_seconds + (r->t_epoch0 > 0 ? tr_now() - r->t_epoch0 : 0);
}

/* Collective: the --embed tables whole into rank 0's checkpoint c (NULL
 * elsewhere): under allreduce rank 0's own, else the servers' rows. Out of
 * memory on rank 0 while servers send, the job is aborted. */
static int collect_tables(tr_run *r, tr_ckpt *c)
{
	int ps = r->o.strategy != TR_STRATEGY_ALLREDUCE;
	int states = tr_optim_state_count(&r->opt);
	for (int t = 0; t < r->o.nembed; t++) {
		size_t n = (size_t)r->o.embed[t].vocab * (size_t)r->o.embed[t].dim;
		float *dst[3] = {NULL, NULL, NULL};
		if (c) {
			c->ntables = (uint32_t)t + 1;
			c->table_vocab[t] = r->o.embed[t].vocab;
			c->table_dim[t] = (uint32_t)r->o.embed[t].dim;
			for (int i = 0; i <= states; i++)
				if (!(dst[i] = malloc(n * sizeof(float)))) {
					snprintf(msg, sizeof msg, "out of memory writing a checkpoint");
					if (ps)
						tr_world_abort(&r->w, msg, EXIT_DATA);
					for (int j = 0; j < i; j++)
						free(dst[j]);
					return -1;
				}
			c->table_params[t] = dst[0];
			c->table_state1[t] = dst[1];
			c->table_state2[t] = dst[2];
		}
		for (int i = 0; i <= states; i++) {
			if (ps) {
				tr_ps_collect_table(r, t, i, dst[i]);
			} else if (c) {
				tr_embed_run *e = &r->embed;
				memcpy(dst[i], tr_optim_buffer(&e->opt, e->params, i) + e->t[t].offset,
				       n * sizeof(float));
			}
		}
	}
	return 0;
}

/* Collective: gathers the loader positions, and rank 0 writes everything. */
static void save_checkpoint(tr_run *r)
{
	int ps = r->o.strategy != TR_STRATEGY_ALLREDUCE;
	/* ps: each worker's counters and the epoch's sums so far; each
	 * server's counts */
	uint64_t mine[4] = {r->step_in_epoch, r->global_step, r->skipped_steps, r->ep_skipped};
	uint64_t *counters = ps && r->w.rank == 0 ? calloc(4 * (size_t)r->w.size, sizeof *counters)
	                                          : NULL;
	tr_ckpt_server *servers = ps && r->w.rank == 0 ? calloc((size_t)r->w.size, sizeof *servers)
	                                               : NULL;
	double sums[3] = {r->ep_loss, r->ep_correct, r->ep_count}, total[3] = {0, 0, 0};
	if (ps) {
		uint64_t dummy[4];
		tr_ckpt_server own = server_counts(r), none;
		MPI_Gather(mine, 4, MPI_UINT64_T, counters ? counters : dummy, 4, MPI_UINT64_T, 0,
		           r->w.comm);
		MPI_Gather(&own, sizeof own, MPI_BYTE, servers ? (void *)servers : &none, sizeof own,
		           MPI_BYTE, 0, r->w.comm);
		MPI_Reduce(sums, total, 3, MPI_DOUBLE, MPI_SUM, 0, r->w.comm);
	}
	/* --synthetic: no loader, one byte for the position the step says */
	int size = r->train ? rio_loader_state_save(r->train, NULL, 0) : 1;
	uint8_t *blob = size > 0 ? calloc(1, (size_t)size) : NULL;
	tr_world_agree(&r->w, !blob || (r->train && rio_loader_state_save(r->train, blob,
	                                                                  (size_t)size) != size),
	               "cannot save the loader's position", EXIT_DATA);
	tr_ckpt c = {0};
	int rc = tr_world_gather_blobs(&r->w, blob, (uint32_t)size, &c.blob_size, &c.blob);
	free(blob);
	size_t n = r->net.nparams;
	if (r->w.rank == 0) {
		c.world = (uint32_t)r->w.size;
		c.global_batch = (uint32_t)r->batch * (uint32_t)r->data_world;
		c.lr_scale = r->opt.cfg.scale;
		c.seed = r->o.seed;
		c.optimizer = (uint32_t)r->o.optim.kind;
		c.nlayers = (uint32_t)r->net.nlayers;
		for (int l = 0; l <= r->net.nlayers; l++)
			c.sizes[l] = r->net.sizes[l];
		c.epoch = r->epoch;
		c.step_in_epoch = r->step_in_epoch;
		c.global_step = r->global_step;
		c.skipped_steps = r->skipped_steps;
		c.optimizer_t = r->opt.t;
		c.epoch_loss = ps ? total[0] : r->ep_loss;
		c.epoch_correct = ps ? total[1] : r->ep_correct;
		c.epoch_count = ps ? total[2] : r->ep_count;
		describe_run(r, &c);
		c.nparams = n;
		c.nblobs = (uint32_t)r->w.size;
		c.params = malloc(n * sizeof(float));
		c.state1 = malloc(n * sizeof(float));
		int states = tr_optim_state_count(&r->opt);
		if (states == 2)
			c.state2 = malloc(n * sizeof(float));
		if (rc == 0 && ps && (!counters || !servers || fill_ps_checkpoint(r, &c, counters) < 0))
			rc = -1;
		if (rc == 0 && ps) { /* the servers' counts: ranks 0 .. S - 1 */
			c.server = servers;
			servers = NULL;
		}
		if (rc < 0 || !c.params || !c.state1 || (states == 2 && !c.state2)) {
			snprintf(msg, sizeof msg, "out of memory writing a checkpoint");
			rc = -1;
			if (ps) /* the other servers are sending their slices */
				tr_world_abort(&r->w, msg, EXIT_DATA);
		} else if (ps) {
			tr_ps_collect(r, 0, c.params);
			tr_ps_collect(r, 1, c.state1);
			if (c.state2)
				tr_ps_collect(r, 2, c.state2);
			collect_tables(r, &c);
			rc = tr_ckpt_write(r->o.checkpoint, &c, msg, sizeof msg);
		} else {
			tr_math_to_host(r->math, c.params, r->net.params, n);
			tr_math_to_host(r->math, c.state1, r->opt.state1, n);
			if (c.state2)
				tr_math_to_host(r->math, c.state2, r->opt.state2, n);
			rc = collect_tables(r, &c);
			if (rc == 0)
				rc = tr_ckpt_write(r->o.checkpoint, &c, msg, sizeof msg);
		}
		c.shard_records = NULL; /* the run's (describe_run) */
		tr_ckpt_free(&c);
	} else if (ps) {
		/* the other servers send their slices (rank 0 may have failed
		 * before receiving them: it then aborts the job, see below) */
		int states = tr_optim_state_count(&r->opt);
		for (int i = 0; i <= states; i++)
			tr_ps_collect(r, i, NULL);
		collect_tables(r, NULL);
	}
	free(counters);
	free(servers);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
}

/* ---- the epochs -------------------------------------------------------------- */

/* What a ring allreduce of a step's gradients moves through one rank, sent
 * and received: 2 (W - 1) / W x their bytes (the dense layers, and under
 * allreduce the --embed tables, densely); the dense layers among the
 * workers under hybrid; nothing under ps. */
static double ring_bytes(const tr_run *r)
{
	int W = r->data_world;
	double floats = r->o.strategy == TR_STRATEGY_PS ? 0 : (double)r->net.nparams;
	if (r->o.strategy == TR_STRATEGY_ALLREDUCE)
		floats += (double)r->embed.floats;
	return W > 1 ? 2.0 * (W - 1) / W * floats * sizeof(float) * 2 : 0;
}

/* Rank 0 prints the epoch's line and writes its metrics: -1 (message in
 * msg) when the metrics cannot be written. `partial`: the run stopped in
 * the epoch (--max-steps), whose line is the epoch so far. gemm0 and
 * gemm1: the GEMM counters at the epoch's first step and after its last
 * (the evaluation's forward passes are not the step's). Its rates count
 * what this process did, in the seconds it took: a resumed epoch's
 * samples before the resume are in its sums, not in its rates. */
static int report_epoch(tr_run *r, FILE *metrics, tr_tboard *tb, int partial, double seconds,
                        const double test[3], const tr_math_stats *gemm0,
                        const tr_math_stats *gemm1)
{
	double t[3] = {r->t_wait, r->red.seconds, r->t_optimizer};
	double loss = r->ep_loss, correct = r->ep_correct, count = r->ep_count;
	double before = r->ep_count0;
	uint64_t skipped = r->ep_skipped, steps = r->step_in_epoch;
	/* ps: the workers' sums and the servers' counts (collective) */
	tr_ps_figures f = {0};
	int ps = r->o.strategy != TR_STRATEGY_ALLREDUCE;
	uint64_t last_step = r->global_step;
	if (ps) {
		tr_ps_epoch_figures(r, &f);
		last_step = tr_world_max_u64(&r->w, r->global_step);
		loss = f.loss;
		correct = f.correct;
		count = f.count;
		before = f.count_before;
		skipped = f.skipped_steps + f.skipped_server;
		t[0] = f.data_wait;
		t[1] = f.exchange;
		steps = 0; /* the most any worker took */
		for (int i = 0; i < f.nworkers && f.worker_steps; i++)
			steps = f.worker_steps[i] > steps ? f.worker_steps[i] : steps;
	}
	if (r->w.rank != 0)
		return 0;
	tr_epoch_report e = {
		.epoch = r->epoch + 1,
		.partial = partial,
		.steps = steps,
		.samples = (uint64_t)count,
		.skipped_steps = skipped,
		.train_loss = count > 0 ? loss / count : NAN,
		.train_accuracy = count > 0 ? correct / count : NAN,
		.has_test = r->o.test != NULL,
		.test_loss = test[2] > 0 ? test[0] / test[2] : NAN,
		.test_accuracy = test[2] > 0 ? test[1] / test[2] : NAN,
		.test_records = (uint64_t)test[2],
		.seconds = seconds,
		.samples_per_s = seconds > 0 ? (count - before) / seconds : 0,
		.data_wait_seconds = t[0],
		.gemm_seconds = gemm1->gemm_seconds - gemm0->gemm_seconds,
		.allreduce_seconds = t[1],
		.optimizer_seconds = t[2],
		.lr = tr_optim_lr(&r->opt.cfg, last_step ? last_step - 1 : 0),
		.world = r->w.size,
		.wall_seconds = r->train_seconds,
		.bytes_per_step = ring_bytes(r) + f.bytes_per_step,
		.strategy = (int)r->o.strategy,
		.server_bytes_per_step = f.bytes_per_step * f.nworkers,
		.updates = f.updates,
		.gradients = f.gradients,
		.dropped_gradients = f.dropped,
		.staleness_max = f.staleness_max,
		.staleness_mean = f.staleness_mean,
		.workers = f.nworkers,
		.worker_steps = f.worker_steps,
	};
	double flops = gemm1->gemm_flops - gemm0->gemm_flops;
	e.gemm_gflops = e.gemm_seconds > 0 ? flops / e.gemm_seconds * 1e-9 : 0;
	if (!r->o.quiet)
		tr_report_line(stdout, &e);
	int unwritten = metrics && tr_report_json(metrics, &e) < 0, werr = errno;
	free(f.worker_steps_block); /* e.worker_steps pointed into it */
	e.worker_steps = NULL;
	if (unwritten) {
		snprintf(msg, sizeof msg, "--metrics %s: write failed: %s", r->o.metrics,
		         strerror(werr));
		return -1;
	}
	tr_tb_epoch(tb, (int64_t)last_step, &e);
	if (tb->failed) { /* this write or a step's since the last epoch */
		snprintf(msg, sizeof msg, "%s", tb->err);
		return -1;
	}
	return 0;
}

/* Collective: the --eval-every copies taken and not yet evaluated are
 * evaluated and written to the metrics; then, under allreduce, the own
 * parameters back for the next step or the checkpoint (a ps worker pulls
 * them anew; a server's are not touched). */
static void eval_copies(tr_run *r, FILE *metrics)
{
	if (!r->o.eval_every)
		return;
	int own = r->o.strategy == TR_STRATEGY_ALLREDUCE;
	float *keep = own ? malloc(r->net.nparams * sizeof *keep) : NULL;
	tr_world_agree(&r->w, own && !keep, "out of memory", EXIT_DATA);
	if (keep)
		tr_math_to_host(r->math, keep, r->net.params, r->net.nparams);
	int rc = tr_snapshots_eval(r, metrics, msg, sizeof msg);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	if (keep)
		tr_math_from_host(r->math, r->net.params, keep, r->net.nparams);
	free(keep);
}

/* Collective: a --checkpoint-every checkpoint in an epoch. The copies
 * taken up to it are evaluated first, off the clock: a run that fails
 * after it and is resumed from it takes only the later copies, so the
 * earlier ones, kept in memory until the epoch's end, were lost. */
static void checkpoint_in_epoch(tr_run *r, FILE *metrics)
{
	double t0 = tr_now();
	eval_copies(r, metrics);
	r->t_epoch0 += tr_now() - t0;
	save_checkpoint(r);
}

/* Collective: the epoch's steps (allreduce) or segments (ps), from where
 * it is to its end, or to --max-steps (*stopped: some rank stopped with
 * steps of the epoch left). */
static void run_epoch(tr_run *r, FILE *metrics, tr_tboard *tb, tr_progress *prog, int *stopped)
{
	int rc;
	while (r->o.strategy != TR_STRATEGY_ALLREDUCE) {
		/* segments: to the epoch's end, or a cut for a checkpoint */
		int mid = 0;
		rc = tr_ps_segment(r, stopped, &mid, msg, sizeof msg);
		tr_world_agree(&r->w, rc, msg, EXIT_DATA);
		if (!mid) { /* every worker at the epoch's end: the epoch is whole,
		             * --max-steps reached with it or not */
			*stopped = 0;
			return;
		}
		if (*stopped)
			return;
		checkpoint_in_epoch(r, metrics);
	}
	while (r->step_in_epoch < r->epoch_steps) {
		if (r->o.max_steps && r->global_step >= r->o.max_steps) {
			*stopped = 1;
			return;
		}
		double loss0 = r->ep_loss, count0 = r->ep_count;
		rc = tr_run_step(r, msg, sizeof msg);
		if (rc != 0)
			tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
		r->total_samples += r->ep_count - count0;
		r->total_gradients += (uint64_t)r->w.size;
		tr_progress_update(prog, r->epoch + 1, r->o.epochs, r->step_in_epoch, r->epoch_steps,
		                   (uint64_t)r->batch * (uint64_t)r->w.size);
		if (tb->w && r->global_step % r->o.tensorboard_every == 0 && r->ep_count > count0) {
			rio_scalar v = {"train/step_loss",
			                (float)((r->ep_loss - loss0) / (r->ep_count - count0))};
			tr_tb_scalars(tb, (int64_t)r->global_step, &v, 1);
		}
		if (r->o.eval_every && r->global_step % r->o.eval_every == 0) {
			rc = tr_snapshot_take(r, r->train_seconds + tr_now() - r->t_epoch0);
			tr_world_agree(&r->w, rc < 0, "out of memory for a copy of the parameters "
			               "(--eval-every)", EXIT_DATA);
		}
		if (r->o.checkpoint_every && r->global_step % r->o.checkpoint_every == 0)
			checkpoint_in_epoch(r, metrics);
	}
}

/* Collective, at an epoch's end or where the run stopped in it
 * (`partial`): the test set evaluated, the epoch reported, and its
 * --eval-every copies evaluated, off the clock. */
static void report(tr_run *r, FILE *metrics, tr_tboard *tb, int partial, double seconds,
                   const tr_math_stats *gemm0, const tr_math_stats *gemm1)
{
	double test[3] = {0, 0, 0};
	int rc;
	if (r->o.test) {
		rc = tr_run_eval(r, test, msg, sizeof msg);
		tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	}
	rc = report_epoch(r, metrics, tb, partial, seconds, test, gemm0, gemm1);
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	eval_copies(r, metrics);
}

static void train(tr_run *r)
{
	FILE *metrics = NULL;
	if (r->w.rank == 0 && r->o.metrics) {
		/* appended on resume, so one file tells the whole run */
		metrics = fopen(r->o.metrics, r->o.resume ? "a" : "w");
		if (!metrics)
			snprintf(msg, sizeof msg, "--metrics %s: %s", r->o.metrics, strerror(errno));
	}
	tr_world_agree(&r->w, r->w.rank == 0 && r->o.metrics && !metrics, msg, EXIT_DATA);
	tr_tboard tb = {0};
	int rc = r->w.rank == 0 && r->o.tensorboard ? tr_tb_open(&tb, r->o.tensorboard, msg,
	                                                         sizeof msg) : 0;
	tr_world_agree(&r->w, rc < 0, msg, EXIT_DATA);
	tr_progress prog;
	tr_progress_init(&prog, r->w.rank == 0 && !r->o.quiet);
	int stopped = 0;
	while (r->epoch < r->o.epochs && !stopped) {
		tr_math_stats gemm0, gemm1;
		tr_math_stats_get(r->math, &gemm0);
		r->t_wait = r->t_optimizer = r->t_step = 0;
		r->red.seconds = 0;
		/* this process's part of the epoch begins (all of it, but after
		 * a resume) */
		r->t_epoch0 = tr_now();
		r->ep_count0 = r->ep_count;
		r->step0 = r->step_in_epoch;
		uint64_t step0 = r->global_step;
		tr_progress_begin(&prog, r->step_in_epoch);
		run_epoch(r, metrics, &tb, &prog, &stopped);
		tr_progress_clear(&prog);
		double seconds = tr_now() - r->t_epoch0;
		/* the training steps' GEMMs, not the evaluation's that follow */
		tr_math_stats_get(r->math, &gemm1);
		r->t_epoch0 = 0;
		/* stopped where a resumed run had stopped: nothing new to say */
		if (stopped && tr_world_max_u64(&r->w, r->global_step - step0) == 0)
			break;
		r->train_seconds += seconds;
		/* the ranks agreed on fewer steps than some have batches */
		rc = r->train && !stopped ? rio_loader_set_epoch(r->train, r->epoch + 1) : 0;
		tr_world_agree(&r->w, rc < 0, rc < 0 ? rio_loader_error(r->train)->message : "",
		               EXIT_DATA);
		report(r, metrics, &tb, stopped, seconds, &gemm0, &gemm1);
		if (stopped)
			break;
		r->epoch++;
		r->step_in_epoch = 0;
		r->epoch_steps = r->o.strategy != TR_STRATEGY_ALLREDUCE ? r->own_steps : r->steps_per_epoch;
		r->ep_loss = r->ep_correct = r->ep_count = 0;
		r->ep_skipped = 0;
		memset(&r->ps_epoch, 0, sizeof r->ps_epoch);
		if (r->o.checkpoint)
			save_checkpoint(r);
	}
	if (stopped) {
		if (r->o.checkpoint)
			save_checkpoint(r);
		if (r->w.rank == 0 && !r->o.quiet)
			printf("stopped after %llu steps (--max-steps)%s\n",
			       (unsigned long long)r->global_step,
			       r->o.checkpoint ? "; --resume continues" : "");
	}
	if (metrics)
		fclose(metrics);
	rc = tr_tb_close(&tb);
	tr_world_agree(&r->w, rc < 0, tb.err, EXIT_DATA);
}

static void teardown(tr_run *r)
{
	if (r->red.mode == TR_REDUCE_SHM && r->red.shm) {
		/* the window's memory goes with the reducer */
		if (r->net.grads == r->red.buf)
			r->net.grads = NULL;
		r->staging = NULL;
		if (r->red.sharded) {
			r->net.params = r->opt.state1 = r->opt.state2 = NULL;
		}
	}
	tr_reducer_free(&r->red);
	tr_ps_close(r);
	tr_embed_run_free(&r->embed);
	if (r->wcomm != MPI_COMM_NULL)
		MPI_Comm_free(&r->wcomm);
	for (int i = 0; i < r->nsnap; i++)
		free(r->snap[i].params);
	free(r->snap);
	free(r->shard_records);
	if (r->math && r->staging && r->staging != r->net.grads)
		tr_math_host_free(r->math, r->staging);
	if (r->math)
		tr_math_free(r->math, r->eval_stats);
	tr_optim_free(&r->opt);
	if (r->synth)
		tr_synthetic_free(r->synth);
	tr_mlp_free(&r->net);
	rio_loader_close(r->train);
	rio_loader_close(r->test);
	free(r->loader_cpus);
	tr_math_close(r->math);
	tr_options_free(&r->o);
}

int main(int argc, char **argv)
{
	static tr_run run;
	tr_run *r = &run;
	r->wcomm = MPI_COMM_NULL;
	choose_blas_kernels(argv);
	if (tr_world_init(&r->w, &argc, &argv) < 0) {
		fprintf(stderr, "recordio-train: MPI_Init failed\n");
		return EXIT_DATA;
	}
	options(r, argc, argv);
	if (r->o.resume)
		read_checkpoint(r);
	setup(r);
	if (r->o.resume)
		resume(r);
	else
		fresh_start(r);
	if (r->w.rank == 0 && !r->o.quiet) {
		printf("recordio-train: %d rank%s, %zu parameters (%d", r->w.size,
		       r->w.size > 1 ? "s" : "", r->net.nparams, r->net.sizes[0]);
		for (int l = 1; l <= r->net.nlayers; l++)
			printf("-%d", r->net.sizes[l]);
		if (r->o.strategy != TR_STRATEGY_ALLREDUCE) {
			char k[32];
			if (r->o.staleness == TR_STALENESS_INF)
				snprintf(k, sizeof k, "asynchronous");
			else if (r->o.staleness)
				snprintf(k, sizeof k, "staleness %lld", (long long)r->o.staleness);
			else
				snprintf(k, sizeof k, "bulk-synchronous");
			printf("), %d parameter server%s and %d workers (%s", r->o.servers,
			       r->o.servers > 1 ? "s" : "", r->data_world, k);
			if (r->o.backup_workers)
				printf(", %d backup", r->o.backup_workers);
			printf("), %d records per worker and step, up to %llu steps per epoch%s, %s",
			       r->batch, (unsigned long long)r->steps_per_epoch,
			       r->synth ? " of synthetic data" : "",
			       r->o.device == TR_DEVICE_CUDA ? "cuda" : "cpu");
		} else {
			printf("), %d records per rank and step, %llu steps per epoch%s, %s", r->batch,
			       (unsigned long long)r->steps_per_epoch, r->synth ? " of synthetic data" : "",
			       r->o.device == TR_DEVICE_CUDA ? "cuda" : "cpu");
		}
		if (r->o.device == TR_DEVICE_CPU)
			printf(" (OpenBLAS %s kernels, %d thread%s)", openblas_get_corename(),
			       openblas_get_num_threads(), openblas_get_num_threads() > 1 ? "s" : "");
		if (r->w.size > 1 && r->o.strategy == TR_STRATEGY_ALLREDUCE)
			printf(", gradients summed by %s", tr_reduce_mode_name(r->red.mode));
		printf("\n");
		if (r->cache_bytes)
			printf("recordio-train: the training shards held in memory, decoded once "
			       "(%.1f MiB on rank 0, --cache)\n",
			       (double)r->cache_bytes / (1 << 20));
		fflush(stdout);
	}
	train(r);
	teardown(r);
	tr_world_finish(&r->w);
	return 0;
}

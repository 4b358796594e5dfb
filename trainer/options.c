/*
 * options.c — recordio-train's options (getopt_long), their defaults and
 * their checks, and --help. Values are checked here, once, so every rank
 * reaches the same verdict on the same command line; the loader's options
 * take the loader's own limits (RIO_LOADER_MAX_* in loader.h), so what
 * recordio-bench accepts the trainer accepts.
 */
#include "config.h"
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tr_options_usage(FILE *f)
{
	fputs("Usage: mpirun -np N recordio-train --train SHARDS --x FEATURE[,FEATURE...] --y FEATURE\n"
	      "           [OPTION]...\n"
	      "Data-parallel training of an MLP classifier on TFRecord shards: every rank reads\n"
	      "its own part of the data, gradients are averaged with MPI_Allreduce (or sent to\n"
	      "parameter servers: --strategy ps). Runs as one rank without mpirun too. SHARDS\n"
	      "is a glob ('data/train-*.tfrecord', quoted), a comma-separated list, a\n"
	      "directory (its shard files) or a shard PREFIX.\n"
	      "\n"
	      "Data:\n"
	      "      --train SHARDS         training shards (required)\n"
	      "      --test SHARDS          test shards, evaluated after every epoch\n"
	      "      --x FEATURES           input features, concatenated: bytes are uint8\n"
	      "                             scaled to [0,1], float lists as they are, int64\n"
	      "                             lists cast to float (required)\n"
	      "      --y FEATURE            the int64 class label (required; not also an\n"
	      "                             input in --x or --embed)\n"
	      "      --embed FEATURE:VOCAB:DIM[,...]  an int64 feature's ids (k per record,\n"
	      "                             as many as its first record has) looked up in\n"
	      "                             a VOCAB x DIM table trained with the model and\n"
	      "                             mean-pooled into DIM inputs (doc/embeddings.md)\n"
	      "      --classes K            number of classes; labels in [0, K) (default 10)\n"
	      "      --shuffle MODE         none, buffer (default) or global\n"
	      "      --shuffle-buffer N     records in the shuffle buffer (default 10000)\n"
	      "      --sharding MODE        auto (default), files or records (see the loader;\n"
	      "                             a resume keeps the checkpoint's)\n"
	      "      --workers N            loader threads per rank (default 1)\n"
	      "      --cache SIZE|auto|off  decompress compressed shards once into memory\n"
	      "                             when the rank's fit SIZE bytes, and serve\n"
	      "                             every epoch from there (same batches); SIZE\n"
	      "                             is digits and K, M or G; auto (default):\n"
	      "                             SIZE = min(1G, a quarter of RAM)\n"
	      "      --loader-cpus MODE     where they run: spare (default): on the node's\n"
	      "                             CPUs no rank is bound to, when there are any;\n"
	      "                             rank: on the rank's own (mpirun binds a rank to\n"
	      "                             a core by default)\n"
	      "      --synthetic[=N]        train on batches made in memory (no loader, no\n"
	      "                             files; from --seed), to see what the input\n"
	      "                             pipeline costs: N inputs (default 784, or the\n"
	      "                             width of --train/--test's --x when given),\n"
	      "                             --classes classes, 60000 records an epoch\n"
	      "\n"
	      "Model and optimisation:\n"
	      "      --hidden SIZES         hidden layer sizes (default 256,128), or none\n"
	      "      --batch B              records per rank and step (default 128)\n"
	      "      --global-batch G       records per step over all ranks, G/N each\n"
	      "      --epochs E             (default 20)\n"
	      "      --max-steps S          stop after S steps in all (default: no limit),\n"
	      "                             reporting the epoch so far (\"partial\")\n"
	      "      --optimizer NAME       sgd (default), adam or lars (layer-wise trust\n"
	      "                             ratio for large batches, You et al. 2017)\n"
	      "      --lr LR                learning rate for one rank's batch, or for the\n"
	      "                             global batch with --global-batch (default 0.05\n"
	      "                             for sgd, 0.001 for adam, 20 for lars)\n"
	      "      --lr-scaling MODE      linear (default): with --batch, the rate is\n"
	      "                             multiplied by N; none\n"
	      "      --warmup-epochs W      gradual warmup from LR to the scaled rate (from 0\n"
	      "                             to LR when nothing is scaled) over W epochs\n"
	      "                             (default 1)\n"
	      "      --schedule NAME        cosine decay to 0 (default) or constant\n"
	      "      --momentum M           SGD's and LARS's momentum (default 0.9)\n"
	      "      --weight-decay D       L2 weight decay (default 0.0001)\n"
	      "      --lars-trust ETA       LARS's trust coefficient (default 0.001)\n"
	      "      --seed S               initialisation and shuffling (default 1)\n"
	      "\n"
	      "Running:\n"
	      "      --device NAME          cpu (default) or cuda (each rank uses the GPU of\n"
	      "                             its local rank)\n"
	      "      --threads N            OpenBLAS threads per rank (default: the cores\n"
	      "                             divided among the node's ranks, at most the\n"
	      "                             CPUs the rank is bound to)\n"
	      "      --bucket-size SIZE     gradient bytes per allreduce (default 256K)\n"
	      "      --reduce HOW           how gradients are summed: shm (the ranks of one\n"
	      "                             host, in shared memory), alltoall (slices over\n"
	      "                             MPI, any hosts), mpi (MPI's allreduce), or auto\n"
	      "                             (default: shm when every rank is on one host\n"
	      "                             and the device is the CPU, else alltoall)\n"
	      "      --shard-optimizer      with shm: each rank updates only its slices of\n"
	      "                             one shared copy of the parameters and optimizer\n"
	      "                             state (SGD, Adam)\n"
	      "      --eval-batch N         records per evaluation batch (default 1024)\n"
	      "      --eval-every S         also copy the parameters every S steps (under\n"
	      "                             ps: every S x workers gradients applied) and\n"
	      "                             evaluate each copy on --test (required) at the\n"
	      "                             epoch's end, the stop or a --checkpoint-every\n"
	      "                             checkpoint, off the clock: a learning curve in\n"
	      "                             --metrics\n"
	      "      --metrics FILE         one JSON object per epoch (appended on resume)\n"
	      "      --tensorboard DIR      TensorBoard event file in DIR (rank 0), written\n"
	      "                             as the run goes: epoch scalars, and the loss\n"
	      "      --tensorboard-every S  ... of every S-th step (default 20)\n"
	      "\n"
	      "Strategy (doc/consistency.md):\n"
	      "      --strategy NAME        allreduce (default: every rank trains, gradients\n"
	      "                             summed) or ps: the first S ranks are parameter\n"
	      "                             servers, each holding a slice of the parameters\n"
	      "                             and the optimizer state; the others are workers\n"
	      "                             that read the data, pull and push; or hybrid\n"
	      "                             (with --embed): the servers hold the tables,\n"
	      "                             the workers allreduce the dense layers\n"
	      "      --servers S            parameter servers (default 1)\n"
	      "      --staleness K          ps: 0 bulk-synchronous (default), K >= 1 stale-\n"
	      "                             synchronous (a worker runs at most K steps ahead\n"
	      "                             of the slowest), inf asynchronous\n"
	      "      --staleness-lr         ps, K >= 1: a gradient's step divided by its\n"
	      "                             staleness (Zhang et al. 2016)\n"
	      "      --backup-workers B     ps, K = 0: a step is applied with the first\n"
	      "                             workers - B gradients; late ones are dropped\n"
	      "      --straggler R:F[,...]  rank R (a worker) takes F times its compute time\n"
	      "                             per step (it sleeps the difference): for\n"
	      "                             experiments\n"
	      "      --straggler-random P:F:SEED  each worker is slow (F times) with\n"
	      "                             probability P per step\n"
	      "\n"
	      "      --checkpoint DIR       keep the run's state in DIR/checkpoint (written\n"
	      "                             atomically after every epoch), its training\n"
	      "                             seconds in DIR/clock\n"
	      "      --checkpoint-every S   ... and every S steps\n"
	      "      --resume               continue from DIR/checkpoint (a fresh start when\n"
	      "                             there is none yet)\n"
	      "  -q, --quiet                no per-epoch lines, no progress line (shown on\n"
	      "                             a terminal during each epoch)\n"
	      "  -h, --help                 this help\n"
	      "      --version              the library version\n"
	      "\n"
	      "Exit status: 0 success, 1 data, I/O or training error, 2 usage error.\n"
	      "Example:\n"
	      "  mpirun -np 2 recordio-train --train 'data/train-*.tfrecord.lz4' \\\n"
	      "      --test 'data/test-*.tfrecord.lz4' --x image --y label\n",
	      f);
}

enum {
	OPT_TRAIN = 256, OPT_TEST, OPT_X, OPT_Y, OPT_CLASSES, OPT_HIDDEN, OPT_BATCH,
	OPT_GLOBAL_BATCH, OPT_EPOCHS, OPT_MAX_STEPS, OPT_LR, OPT_LR_SCALING, OPT_WARMUP,
	OPT_MOMENTUM, OPT_WD, OPT_OPTIMIZER, OPT_SEED, OPT_WORKERS, OPT_SHUFFLE, OPT_SHUFFLE_BUFFER,
	OPT_SHARDING, OPT_METRICS, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME, OPT_DEVICE,
	OPT_BUCKET, OPT_THREADS, OPT_EVAL_BATCH, OPT_SCHEDULE, OPT_VERSION,
	OPT_SYNTHETIC,
	OPT_LARS_TRUST, OPT_TENSORBOARD, OPT_TENSORBOARD_EVERY, OPT_LOADER_CPUS, OPT_CACHE,
	OPT_REDUCE, OPT_SHARD_OPTIMIZER, OPT_EVAL_EVERY, OPT_STRATEGY, OPT_SERVERS, OPT_STALENESS,
	OPT_STALENESS_LR, OPT_BACKUP_WORKERS, OPT_STRAGGLER, OPT_STRAGGLER_RANDOM, OPT_EMBED,
	OPT_END, /* (the options given are bits 1 << (code - OPT_TRAIN)) */
};
_Static_assert(OPT_END - OPT_TRAIN <= 64, "the options given fit one uint64_t");
#define GIVEN(code) (given & (1ull << ((code) - OPT_TRAIN)))

static const struct option long_options[] = {
	{"train", required_argument, 0, OPT_TRAIN},
	{"test", required_argument, 0, OPT_TEST},
	{"x", required_argument, 0, OPT_X},
	{"y", required_argument, 0, OPT_Y},
	{"classes", required_argument, 0, OPT_CLASSES},
	{"hidden", required_argument, 0, OPT_HIDDEN},
	{"batch", required_argument, 0, OPT_BATCH},
	{"global-batch", required_argument, 0, OPT_GLOBAL_BATCH},
	{"epochs", required_argument, 0, OPT_EPOCHS},
	{"max-steps", required_argument, 0, OPT_MAX_STEPS},
	{"lr", required_argument, 0, OPT_LR},
	{"lr-scaling", required_argument, 0, OPT_LR_SCALING},
	{"warmup-epochs", required_argument, 0, OPT_WARMUP},
	{"schedule", required_argument, 0, OPT_SCHEDULE},
	{"momentum", required_argument, 0, OPT_MOMENTUM},
	{"weight-decay", required_argument, 0, OPT_WD},
	{"optimizer", required_argument, 0, OPT_OPTIMIZER},
	{"seed", required_argument, 0, OPT_SEED},
	{"workers", required_argument, 0, OPT_WORKERS},
	{"loader-cpus", required_argument, 0, OPT_LOADER_CPUS},
	{"cache", required_argument, 0, OPT_CACHE},
	{"shuffle", required_argument, 0, OPT_SHUFFLE},
	{"shuffle-buffer", required_argument, 0, OPT_SHUFFLE_BUFFER},
	{"sharding", required_argument, 0, OPT_SHARDING},
	{"metrics", required_argument, 0, OPT_METRICS},
	{"checkpoint", required_argument, 0, OPT_CHECKPOINT},
	{"checkpoint-every", required_argument, 0, OPT_CHECKPOINT_EVERY},
	{"resume", no_argument, 0, OPT_RESUME},
	{"device", required_argument, 0, OPT_DEVICE},
	{"bucket-size", required_argument, 0, OPT_BUCKET},
	{"reduce", required_argument, 0, OPT_REDUCE},
	{"shard-optimizer", no_argument, 0, OPT_SHARD_OPTIMIZER},
	{"threads", required_argument, 0, OPT_THREADS},
	{"eval-batch", required_argument, 0, OPT_EVAL_BATCH},
	{"quiet", no_argument, 0, 'q'},
	{"help", no_argument, 0, 'h'},
	{"version", no_argument, 0, OPT_VERSION},
	{"synthetic", optional_argument, 0, OPT_SYNTHETIC},
	{"lars-trust", required_argument, 0, OPT_LARS_TRUST},
	{"tensorboard", required_argument, 0, OPT_TENSORBOARD},
	{"tensorboard-every", required_argument, 0, OPT_TENSORBOARD_EVERY},
	{"eval-every", required_argument, 0, OPT_EVAL_EVERY},
	{"strategy", required_argument, 0, OPT_STRATEGY},
	{"servers", required_argument, 0, OPT_SERVERS},
	{"staleness", required_argument, 0, OPT_STALENESS},
	{"staleness-lr", no_argument, 0, OPT_STALENESS_LR},
	{"backup-workers", required_argument, 0, OPT_BACKUP_WORKERS},
	{"straggler", required_argument, 0, OPT_STRAGGLER},
	{"straggler-random", required_argument, 0, OPT_STRAGGLER_RANDOM},
	{"embed", required_argument, 0, OPT_EMBED},
	{0, 0, 0, 0},
};

static const char *option_name(int code)
{
	for (const struct option *o = long_options; o->name; o++)
		if (o->val == code)
			return o->name;
	return "?";
}

/* An error message for a bad value; returns -1. */
static int bad(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, int code, const char *fmt, ...)
{
	int n = snprintf(err, errlen, "--%s: ", option_name(code));
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!isdigit((unsigned char)*s)) /* strtoull would take " -1" as 2^64 - 1 */
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(const char *s, int min, int max, int *out)
{
	uint64_t v;
	if (parse_u64(s, (uint64_t)min, (uint64_t)max, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_float(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || errno || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "256K", "1M", "1.5G", "4096": bytes. A number in decimal digits (a
 * point and an exponent allowed), never nan, inf, a sign, hex or spaces. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return -1;
	double v = strtod(s, &end);
	const char *hex = strpbrk(s, "xXpP");
	if (errno || end == s || !isfinite(v) || v < 0 || (hex && hex < end))
		return -1;
	double mult = 1;
	if (*end == 'K' || *end == 'k')
		mult = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mult = 1024.0 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mult = 1024.0 * 1024 * 1024, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * mult < 4 || v * mult > 1e12)
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

/* The index of `value` in names[0..n-1] (each option's keywords are listed
 * in the order of its enum's values), or -1. */
static int keyword(const char *value, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}

/* Splits "a,b,c" into malloc'd names. */
static int parse_names(const char *s, tr_options *o)
{
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n >= 128 || o->nx == TR_MLP_MAX_INPUTS)
			return -1;
		if (!(o->x[o->nx] = strndup(p, n)))
			return -1;
		o->nx++;
		p += n + (comma ? 1 : 0);
		if (comma && !*p)
			return -1;
	}
	return o->nx ? 0 : -1;
}

static int parse_hidden(const char *s, tr_options *o)
{
	if (!*s) /* no layers is said "none", never an empty word */
		return -1;
	o->nhidden = 0;
	if (!strcmp(s, "none"))
		return 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > 1 << 16 || (*end && *end != ',') ||
		    o->nhidden == TR_MLP_MAX_LAYERS - 1)
			return -1;
		o->hidden[o->nhidden++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return 0;
}

/* "R:F[,R:F...]": ranks and slowdown factors (F >= 1). */
static int parse_stragglers(const char *s, tr_options *o)
{
	const char *p = s;
	o->nstraggler = 0;
	while (*p) {
		char *end;
		errno = 0;
		long rank = strtol(p, &end, 10);
		if (errno || end == p || rank < 0 || rank > 1 << 20 || *end != ':')
			return -1;
		p = end + 1;
		double f = strtod(p, &end);
		if (end == p || !isfinite(f) || f < 1 || f > 1000 || (*end && *end != ','))
			return -1;
		if (o->nstraggler == TR_MAX_STRAGGLERS)
			return -1;
		for (int i = 0; i < o->nstraggler; i++)
			if (o->straggler[i].rank == (int)rank)
				return -1; /* one factor per rank */
		o->straggler[o->nstraggler++] = (tr_straggler){(int)rank, f};
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return o->nstraggler ? 0 : -1;
}

/* "FEATURE:VOCAB:DIM[,...]" */
static int parse_embed(const char *s, tr_options *o)
{
	const char *p = s;
	while (*p) {
		const char *colon = strchr(p, ':');
		if (!colon || colon == p || (size_t)(colon - p) >= sizeof o->embed[0].feature ||
		    o->nembed == TR_MAX_EMBED)
			return -1;
		tr_embed_option *e = &o->embed[o->nembed];
		snprintf(e->feature, sizeof e->feature, "%.*s", (int)(colon - p), p);
		char *end;
		errno = 0;
		long long v = strtoll(colon + 1, &end, 10);
		if (errno || end == colon + 1 || v < 1 || v > (1ll << 40) || *end != ':')
			return -1;
		const char *d = end + 1;
		long dim = strtol(d, &end, 10);
		if (errno || end == d || dim < 1 || dim > 4096 || (*end && *end != ','))
			return -1;
		e->vocab = v;
		e->dim = (int)dim;
		o->nembed++;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return o->nembed ? 0 : -1;
}

/* "P:F:SEED" */
static int parse_random_straggler(const char *s, tr_options *o)
{
	char *end;
	errno = 0;
	double p = strtod(s, &end);
	if (end == s || !isfinite(p) || p < 0 || p > 1 || *end != ':')
		return -1;
	s = end + 1;
	double f = strtod(s, &end);
	if (end == s || !isfinite(f) || f < 1 || f > 1000 || *end != ':')
		return -1;
	if (parse_u64(end + 1, 0, UINT64_MAX, &o->straggler_seed) < 0)
		return -1;
	o->straggler_p = p;
	o->straggler_f = f;
	return 0;
}

/* Input i's feature: --x's, then --embed's. */
static const char *input_name(const tr_options *o, int i)
{
	return i < o->nx ? o->x[i] : o->embed[i - o->nx].feature;
}

/* Options that would have no effect, or a wrong one, with the others
 * given: the label among the inputs (a model that reads its answer), an
 * input named twice, and an option for something the run does not do. -1
 * with a message. */
static int check_given(const tr_options *o, uint64_t given, char *err, size_t errlen)
{
	for (int i = 0; i < o->nx + o->nembed; i++) {
		const char *opt = i < o->nx ? "x" : "embed";
		if (o->y && !strcmp(o->y, input_name(o, i))) {
			snprintf(err, errlen, "--y %s: the label is also in --%s; the model would read "
			         "its answer: leave it out of the inputs", o->y, opt);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(input_name(o, i), input_name(o, j))) {
				snprintf(err, errlen, "--%s %s: the feature is named twice", opt,
				         input_name(o, i));
				return -1;
			}
	}
	const char *what = NULL;
	if (GIVEN(OPT_EVAL_EVERY) && !o->test)
		what = "--eval-every needs --test (its copies are evaluated on the test data)";
	else if (GIVEN(OPT_EVAL_BATCH) && !o->test)
		what = "--eval-batch needs --test (it is the evaluation's batch)";
	else if (GIVEN(OPT_TENSORBOARD_EVERY) && !o->tensorboard)
		what = "--tensorboard-every needs --tensorboard DIR";
	else if (GIVEN(OPT_LARS_TRUST) && o->optim.kind != TR_OPT_LARS)
		what = "--lars-trust needs --optimizer lars";
	else if (GIVEN(OPT_MOMENTUM) && o->optim.kind == TR_OPT_ADAM)
		what = "--momentum: not with --optimizer adam (its moments have their own decay)";
	else if (GIVEN(OPT_SHUFFLE_BUFFER) && o->shuffle != RIO_SHUFFLE_BUFFER)
		what = "--shuffle-buffer needs --shuffle buffer";
	else if (GIVEN(OPT_BATCH) && o->global_batch)
		what = "--batch: not with --global-batch, which sets each rank's batch";
	else if (GIVEN(OPT_LR_SCALING) && o->global_batch)
		what = "--lr-scaling: not with --global-batch, whose --lr is the global batch's "
		       "(nothing is scaled)";
	if (what) {
		snprintf(err, errlen, "%s", what);
		return -1;
	}
	return 0;
}

static void defaults(tr_options *o)
{
	memset(o, 0, sizeof *o);
	o->classes = 10;
	o->hidden[0] = 256;
	o->hidden[1] = 128;
	o->nhidden = 2;
	o->batch = 128;
	o->eval_batch = 1024;
	/* the defaults reach 0.895 test accuracy on Fashion-MNIST at 1 and 2
	 * ranks (doc/trainer.md): 20 epochs, cosine, 1 epoch of warmup, 1e-4 */
	o->epochs = 20;
	o->optim.cosine = 1;
	o->warmup_epochs = 1;
	o->optim.weight_decay = 1e-4f;
	o->optim.kind = TR_OPT_SGD;
	o->optim.lr = -1; /* by optimizer, below */
	o->optim.momentum = 0.9f;
	o->optim.beta1 = 0.9f;
	o->optim.beta2 = 0.999f;
	o->optim.eps = 1e-8f;
	o->optim.scale = 1;
	o->optim.trust = 0.001f;
	o->tensorboard_every = 20;
	o->lr_scaling = 1;
	o->seed = 1;
	o->workers = 1;
	o->loader_cpus_spare = 1;
	o->shuffle = RIO_SHUFFLE_BUFFER;
	o->sharding = RIO_SHARD_AUTO;
	o->shuffle_buffer = 10000;
	o->cache = -1;
	o->device = TR_DEVICE_CPU;
	o->bucket_bytes = 256 * 1024;
	o->strategy = TR_STRATEGY_ALLREDUCE;
}

int tr_options_parse(int argc, char **argv, tr_options *o, char *err, size_t errlen)
{
	defaults(o);
	opterr = 0;
	optind = 1;
	int c, k;
	double d;
	uint64_t u, given = 0;
	while ((c = getopt_long(argc, argv, ":qh", long_options, NULL)) != -1) {
		if (c >= OPT_TRAIN && c < OPT_END)
			given |= 1ull << (c - OPT_TRAIN);
		switch (c) {
		case OPT_TRAIN: o->train = optarg; break;
		case OPT_TEST: o->test = optarg; break;
		case OPT_X:
			if (parse_names(optarg, o) < 0)
				return bad(err, errlen, c, "'%s' is not a list of feature names", optarg);
			break;
		case OPT_Y: o->y = optarg; break;
		case OPT_CLASSES:
			if (parse_int(optarg, 2, 1 << 20, &o->classes) < 0)
				return bad(err, errlen, c, "'%s' is not a number of classes (2 or more)",
				           optarg);
			break;
		case OPT_HIDDEN:
			if (parse_hidden(optarg, o) < 0)
				return bad(err, errlen, c, "'%s' is not a list of layer sizes (e.g. 256,128)",
				           optarg);
			break;
		case OPT_BATCH:
			if (parse_int(optarg, 1, RIO_LOADER_MAX_BATCH, &o->batch) < 0)
				return bad(err, errlen, c, "'%s' is not a batch size (1 to %u)", optarg,
				           RIO_LOADER_MAX_BATCH);
			break;
		case OPT_GLOBAL_BATCH:
			if (parse_int(optarg, 1, RIO_LOADER_MAX_BATCH, &o->global_batch) < 0)
				return bad(err, errlen, c, "'%s' is not a batch size (1 to %u)", optarg,
				           RIO_LOADER_MAX_BATCH);
			break;
		case OPT_EVAL_BATCH:
			if (parse_int(optarg, 1, RIO_LOADER_MAX_BATCH, &o->eval_batch) < 0)
				return bad(err, errlen, c, "'%s' is not a batch size (1 to %u)", optarg,
				           RIO_LOADER_MAX_BATCH);
			break;
		case OPT_EPOCHS:
			if (parse_u64(optarg, 1, 1000000, &o->epochs) < 0)
				return bad(err, errlen, c, "'%s' is not a number of epochs", optarg);
			break;
		case OPT_MAX_STEPS:
			if (parse_u64(optarg, 1, UINT64_MAX >> 1, &o->max_steps) < 0)
				return bad(err, errlen, c, "'%s' is not a number of steps", optarg);
			break;
		case OPT_LR:
			if (parse_float(optarg, 1e-12, 1e6, &d) < 0)
				return bad(err, errlen, c, "'%s' is not a positive rate", optarg);
			o->optim.lr = (float)d;
			break;
		case OPT_LR_SCALING:
			if ((k = keyword(optarg, (const char *const[]){"none", "linear"}, 2)) < 0)
				return bad(err, errlen, c, "'%s': want linear or none", optarg);
			o->lr_scaling = k;
			break;
		case OPT_WARMUP:
			if (parse_float(optarg, 0, 1e6, &o->warmup_epochs) < 0)
				return bad(err, errlen, c, "'%s' is not a number of epochs", optarg);
			break;
		case OPT_SCHEDULE:
			if ((k = keyword(optarg, (const char *const[]){"constant", "cosine"}, 2)) < 0)
				return bad(err, errlen, c, "'%s': want constant or cosine", optarg);
			o->optim.cosine = k;
			break;
		case OPT_MOMENTUM:
			if (parse_float(optarg, 0, 0.999999, &d) < 0)
				return bad(err, errlen, c, "'%s' is not in [0, 1)", optarg);
			o->optim.momentum = (float)d;
			break;
		case OPT_WD:
			if (parse_float(optarg, 0, 1, &d) < 0)
				return bad(err, errlen, c, "'%s' is not in [0, 1]", optarg);
			o->optim.weight_decay = (float)d;
			break;
		case OPT_OPTIMIZER:
			if ((k = keyword(optarg, (const char *const[]){"sgd", "adam", "lars"}, 3)) < 0)
				return bad(err, errlen, c, "'%s': want sgd, adam or lars", optarg);
			o->optim.kind = (tr_opt_kind)k;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &o->seed) < 0)
				return bad(err, errlen, c, "'%s' is not a seed", optarg);
			break;
		case OPT_WORKERS:
			if (parse_int(optarg, 1, RIO_LOADER_MAX_WORKERS, &o->workers) < 0)
				return bad(err, errlen, c, "'%s' is not 1 to %d", optarg,
				           RIO_LOADER_MAX_WORKERS);
			break;
		case OPT_THREADS:
			if (parse_int(optarg, 1, 1024, &o->threads) < 0)
				return bad(err, errlen, c, "'%s' is not 1 to 1024", optarg);
			break;
		case OPT_SHUFFLE:
			if ((k = keyword(optarg, (const char *const[]){"none", "buffer", "global"}, 3)) < 0)
				return bad(err, errlen, c, "'%s': want none, buffer or global", optarg);
			o->shuffle = (rio_shuffle)k;
			break;
		case OPT_SHUFFLE_BUFFER:
			if (parse_u64(optarg, 1, RIO_LOADER_MAX_SHUFFLE_BUFFER, &u) < 0)
				return bad(err, errlen, c, "'%s' is not a number of records (1 to %u)",
				           optarg, RIO_LOADER_MAX_SHUFFLE_BUFFER);
			o->shuffle_buffer = (size_t)u;
			break;
		case OPT_CACHE: {
			size_t v;
			if (!strcmp(optarg, "auto"))
				o->cache = -1;
			else if (!strcmp(optarg, "off") || !strcmp(optarg, "0"))
				o->cache = 0;
			else if (parse_size(optarg, &v) == 0)
				o->cache = (int64_t)v;
			else
				return bad(err, errlen, c, "'%s': want a size (e.g. 512M, 2G), auto or off",
				           optarg);
			break;
		}
		case OPT_LOADER_CPUS:
			if ((k = keyword(optarg, (const char *const[]){"rank", "spare"}, 2)) < 0)
				return bad(err, errlen, c, "'%s': want spare or rank", optarg);
			o->loader_cpus_spare = k;
			break;
		case OPT_SHARDING:
			if ((k = keyword(optarg, (const char *const[]){"auto", "files", "records"}, 3)) < 0)
				return bad(err, errlen, c, "'%s': want auto, files or records", optarg);
			o->sharding = (rio_sharding)k;
			break;
		case OPT_METRICS: o->metrics = optarg; break;
		case OPT_CHECKPOINT: o->checkpoint = optarg; break;
		case OPT_CHECKPOINT_EVERY:
			if (parse_u64(optarg, 1, UINT64_MAX >> 1, &o->checkpoint_every) < 0)
				return bad(err, errlen, c, "'%s' is not a number of steps", optarg);
			break;
		case OPT_RESUME: o->resume = 1; break;
		case OPT_DEVICE:
			if ((k = keyword(optarg, (const char *const[]){"cpu", "cuda"}, 2)) < 0)
				return bad(err, errlen, c, "'%s': want cpu or cuda", optarg);
			o->device = (tr_device)k;
			break;
		case OPT_BUCKET:
			if (parse_size(optarg, &o->bucket_bytes) < 0)
				return bad(err, errlen, c, "'%s' is not a size (e.g. 256K, 1M)", optarg);
			break;
		case OPT_REDUCE:
			if ((k = keyword(optarg, (const char *const[]){"auto", "mpi", "shm", "alltoall"},
			                 4)) < 0)
				return bad(err, errlen, c, "'%s': want auto, mpi, shm or alltoall", optarg);
			o->reduce = k;
			break;
		case OPT_SHARD_OPTIMIZER: o->shard_optimizer = 1; break;
		case OPT_SYNTHETIC:
			o->synthetic = 1;
			if (optarg && parse_int(optarg, 1, 1 << 24, &o->synthetic_inputs) < 0)
				return bad(err, errlen, c, "'%s' is not a number of inputs",
				           optarg);
			break;
		case OPT_LARS_TRUST:
			if (parse_float(optarg, 1e-9, 1e3, &d) < 0)
				return bad(err, errlen, c, "'%s' is not a positive coefficient", optarg);
			o->optim.trust = (float)d;
			break;
		case OPT_TENSORBOARD: o->tensorboard = optarg; break;
		case OPT_TENSORBOARD_EVERY:
			if (parse_u64(optarg, 1, UINT64_MAX >> 1, &o->tensorboard_every) < 0)
				return bad(err, errlen, c, "'%s' is not a number of steps", optarg);
			break;
		case OPT_EVAL_EVERY:
			if (parse_u64(optarg, 1, UINT64_MAX >> 1, &o->eval_every) < 0)
				return bad(err, errlen, c, "'%s' is not a number of steps", optarg);
			break;
		case OPT_STRATEGY:
			if ((k = keyword(optarg, (const char *const[]){"allreduce", "ps", "hybrid"}, 3)) <
			    0)
				return bad(err, errlen, c, "'%s': want allreduce, ps or hybrid", optarg);
			o->strategy = (tr_strategy)k;
			break;
		case OPT_SERVERS:
			if (parse_int(optarg, 1, 1 << 16, &o->servers) < 0)
				return bad(err, errlen, c, "'%s' is not a number of servers (1 or more)",
				           optarg);
			break;
		case OPT_STALENESS:
			if (!strcmp(optarg, "inf"))
				o->staleness = TR_STALENESS_INF;
			else if (parse_u64(optarg, 0, 1u << 30, &u) == 0)
				o->staleness = (int64_t)u;
			else
				return bad(err, errlen, c, "'%s': want a number of steps (0, 1, ...) or inf",
				           optarg);
			break;
		case OPT_STALENESS_LR: o->staleness_lr = 1; break;
		case OPT_BACKUP_WORKERS:
			if (parse_int(optarg, 0, 1 << 16, &o->backup_workers) < 0)
				return bad(err, errlen, c, "'%s' is not a number of workers", optarg);
			break;
		case OPT_STRAGGLER:
			if (parse_stragglers(optarg, o) < 0)
				return bad(err, errlen, c, "'%s': want RANK:FACTOR[,RANK:FACTOR...] with "
				           "FACTOR from 1 to 1000, each rank once", optarg);
			break;
		case OPT_STRAGGLER_RANDOM:
			if (parse_random_straggler(optarg, o) < 0)
				return bad(err, errlen, c, "'%s': want P:FACTOR:SEED with P in [0, 1] and "
				           "FACTOR from 1 to 1000", optarg);
			break;
		case OPT_EMBED:
			if (parse_embed(optarg, o) < 0)
				return bad(err, errlen, c, "'%s': want FEATURE:VOCAB:DIM[,...] with VOCAB "
				           "from 1 to 2^40, DIM from 1 to 4096, at most %d tables", optarg,
				           TR_MAX_EMBED);
			break;
		case 'q': o->quiet = 1; break;
		case 'h': return 1;
		case OPT_VERSION: return 2;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -1;
		default:
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (shards go after --train/--test)",
		         argv[optind]);
		return -1;
	}
	if (!o->train && !o->synthetic) {
		snprintf(err, errlen, "--train SHARDS is required");
		return -1;
	}
	/* --synthetic: the data, when given, only says the input width */
	if (o->synthetic && !o->train && !o->test && !o->nx && !o->y) {
		if (!o->synthetic_inputs)
			o->synthetic_inputs = 784;
	} else if (o->synthetic && o->synthetic_inputs) {
		snprintf(err, errlen, "--synthetic=%d: the input width is that of --x in the data "
		         "given; leave out =N or the data", o->synthetic_inputs);
		return -1;
	} else if (o->synthetic && !o->train && !o->test) {
		snprintf(err, errlen, "--synthetic with --x/--y needs --train or --test to read "
		         "their widths from");
		return -1;
	}
	if (o->nembed && (o->synthetic || o->device == TR_DEVICE_CUDA)) {
		snprintf(err, errlen, "--embed: not with %s (embedding tables are trained on the "
		         "CPU, from the data)", o->synthetic ? "--synthetic" : "--device cuda");
		return -1;
	}
	for (int i = 0; i < o->nembed; i++)
		for (int j = 0; j < o->nx; j++)
			if (!strcmp(o->embed[i].feature, o->x[j])) {
				snprintf(err, errlen, "--embed %s: the feature is also in --x; an input "
				         "is one or the other", o->x[j]);
				return -1;
			}
	if (check_given(o, given, err, errlen) < 0)
		return -1;
	if (!o->nx && !o->nembed && !o->synthetic_inputs) {
		snprintf(err, errlen, "--x FEATURE[,FEATURE...] is required");
		return -1;
	}
	if (!o->y && !o->synthetic_inputs) {
		snprintf(err, errlen, "--y FEATURE is required");
		return -1;
	}
	if (o->resume && !o->checkpoint) {
		snprintf(err, errlen, "--resume needs --checkpoint DIR");
		return -1;
	}
	if (o->checkpoint_every && !o->checkpoint) {
		snprintf(err, errlen, "--checkpoint-every needs --checkpoint DIR");
		return -1;
	}
	if (o->strategy == TR_STRATEGY_ALLREDUCE) {
		const char *ps_only = o->servers          ? "--servers"
		                      : o->staleness      ? "--staleness"
		                      : o->backup_workers ? "--backup-workers"
		                      : o->staleness_lr   ? "--staleness-lr"
		                                          : NULL;
		if (ps_only) {
			snprintf(err, errlen, "%s needs --strategy ps (parameter servers)", ps_only);
			return -1;
		}
	} else {
		const char *no = o->optim.kind == TR_OPT_LARS ? "--optimizer lars (a layer's trust "
		                                                "ratio needs the whole layer)"
		                 : o->shard_optimizer ? "--shard-optimizer (the servers hold the "
		                                        "optimizer state)"
		                 : o->reduce ? "--reduce" : NULL;
		if (no) {
			snprintf(err, errlen, "--strategy %s: not with %s",
			         o->strategy == TR_STRATEGY_PS ? "ps" : "hybrid", no);
			return -1;
		}
		if (!o->servers)
			o->servers = 1;
		if (o->strategy == TR_STRATEGY_HYBRID && !o->nembed) {
			snprintf(err, errlen, "--strategy hybrid needs --embed (the servers hold the "
			         "embedding tables; the dense layers are allreduced)");
			return -1;
		}
		if (o->strategy == TR_STRATEGY_HYBRID && (o->staleness || o->backup_workers)) {
			snprintf(err, errlen, "--strategy hybrid: the dense layers' allreduce is "
			         "synchronous: not with --staleness or --backup-workers");
			return -1;
		}
		if (o->backup_workers && o->staleness) {
			snprintf(err, errlen, "--backup-workers needs --staleness 0 (backup workers drop "
			         "late gradients of a synchronous step)");
			return -1;
		}
		if (o->staleness_lr && !o->staleness) {
			snprintf(err, errlen, "--staleness-lr needs --staleness 1 or more (at 0 no "
			         "gradient is stale)");
			return -1;
		}
	}
	if (o->nembed && o->eval_every) {
		snprintf(err, errlen, "--embed: not with --eval-every yet (its copies are of the "
		         "dense parameters)");
		return -1;
	}
	if (o->eval_every && o->shard_optimizer) {
		snprintf(err, errlen, "--eval-every: not with --shard-optimizer (the copies are "
		         "evaluated on each rank's own parameters)");
		return -1;
	}
	if (o->optim.lr < 0)
		o->optim.lr = o->optim.kind == TR_OPT_ADAM ? 0.001f
		              : o->optim.kind == TR_OPT_LARS ? 20.0f : 0.05f;
	return 0;
}

void tr_options_free(tr_options *o)
{
	for (int i = 0; i < o->nx; i++)
		free(o->x[i]);
	o->nx = 0;
}

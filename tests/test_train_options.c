/*
 * test_train_options.c — recordio-train's option table (trainer/options.c)
 * without MPI: each option's accepted values land in their field of
 * tr_options, its refused values give its one-line message (the exact
 * text, as the users and tests/train_*.sh see it), every row's range is
 * held at both ends, every word of a keyword option is taken (the loader's
 * names for --shuffle and --sharding, from its tables), sizes in
 * lib/size.h's grammar, the checks
 * between options each refuse in their line, and --help lists every option
 * of the table, in its sections, in lines of 79 columns at most.
 */
#include "testutil.h"

#include "../trainer/options.h"
#include "../trainer/options_table.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The data options every command line below starts with (the checks
 * between options need them); --test, --tensorboard and --checkpoint so
 * that the options that need them are taken. */
#define BASE "--train t --x a --y label --test u --tensorboard tb --checkpoint ck --shard-cache sc "

enum { MAX_ARGS = 64, ERR_LEN = 512 };

/* Parses `line`: words split at spaces, '~' standing for a space within a
 * word. Returns tr_options_parse's result; err holds its message. */
static int parse_line(tr_options *o, char *err, size_t errlen, const char *line)
{
	char buf[4096];
	char *argv[MAX_ARGS + 1];
	int argc = 0;
	CU_ASSERT_FATAL(strlen(line) < sizeof buf);
	strcpy(buf, line);
	argv[argc++] = "recordio-train";
	for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
		CU_ASSERT_FATAL(argc < MAX_ARGS);
		for (char *p = w; *p; p++)
			if (*p == '~')
				*p = ' ';
		argv[argc++] = strcmp(w, "''") ? w : w + 2; /* '' : the empty word */
	}
	argv[argc] = NULL;
	err[0] = '\0';
	return tr_options_parse(argc, argv, o, err, errlen);
}

/* `line` is accepted; then `cond` (on `o`) holds. Strings in o point into
 * the parsed words, so conditions compare them before the next parse. */
#define ACCEPT(line, cond)                                                                     \
	do {                                                                                       \
		tr_options opts_;                                                                      \
		char err_[ERR_LEN];                                                                    \
		int rc_ = parse_line(&opts_, err_, sizeof err_, line);                                 \
		if (rc_ != 0)                                                                          \
			fprintf(stderr, "\n  refused: %s\n  -> %s\n", line, err_);                         \
		CU_ASSERT_EQUAL(rc_, 0);                                                               \
		const tr_options *o = &opts_;                                                          \
		if (rc_ == 0 && !(cond))                                                               \
			fprintf(stderr, "\n  %s: not %s\n", line, #cond);                                 \
		CU_ASSERT(rc_ == 0 && (cond));                                                         \
		(void)o;                                                                               \
		tr_options_free(&opts_);                                                               \
	} while (0)

/* `line` is refused with exactly `message`. */
static void refuse(const char *line, const char *message)
{
	tr_options o;
	char err[ERR_LEN];
	int rc = parse_line(&o, err, sizeof err, line);
	if (rc != -1 || strcmp(err, message))
		fprintf(stderr, "\n  %s\n  -> %d '%s'\n  want '%s'\n", line, rc, err, message);
	CU_ASSERT_EQUAL(rc, -1);
	CU_ASSERT_STRING_EQUAL(err, message);
	tr_options_free(&o);
}

/* ---- each option's values, by the literal text users see ------------------ */

typedef struct refusal_case {
	const char *line;
	const char *message;
} refusal_case;

/* One or more refused values of every option that takes one, with the
 * message word for word. */
static const refusal_case value_refusals[] = {
	{BASE "--pipeline 0", "--pipeline: '0' is not a number of stages (1 to 16)"},
	{BASE "--stages 1-2", "--stages: '1-2': want contiguous ranges of layer indices from 0, "
	                      "e.g. 0-1,2-3"},
	{BASE "--stages 0-1,", "--stages: '0-1,': want contiguous ranges of layer indices from 0, "
	                       "e.g. 0-1,2-3"},
	{BASE "--microbatches 0", "--microbatches: '0' is not 1 to 65536"},
	{BASE "--pipeline-schedule zigzag",
	 "--pipeline-schedule: 'zigzag': want 1f1b, gpipe, sequential, async or eager-1f1b"},
	{BASE "--tensor 0", "--tensor: '0' is not 1 to 65536"},
	{BASE "--memory-limit 0", "--memory-limit: '0': want a size (e.g. 512M, 2G)"},
	{BASE "--x a,,b", "--x: 'a,,b' is not a list of feature names"},
	{BASE "--x a,", "--x: 'a,' is not a list of feature names"},
	{"--train t --y label --x ''", "--x: '' is not a list of feature names"},
	{BASE "--embed cat:0:8", "--embed: 'cat:0:8': want FEATURE:VOCAB:DIM[,...] with VOCAB from 1 "
	                         "to 2^40, DIM from 1 to 4096, at most 8 tables"},
	{BASE "--embed cat:5:4097", "--embed: 'cat:5:4097': want FEATURE:VOCAB:DIM[,...] with VOCAB "
	                            "from 1 to 2^40, DIM from 1 to 4096, at most 8 tables"},
	{BASE "--embed a:1:1,b:1:1,c:1:1,d:1:1,e:1:1,f:1:1,g:1:1,h:1:1,i:1:1",
	 "--embed: 'a:1:1,b:1:1,c:1:1,d:1:1,e:1:1,f:1:1,g:1:1,h:1:1,i:1:1': want "
	 "FEATURE:VOCAB:DIM[,...] with VOCAB from 1 to 2^40, DIM from 1 to 4096, at most 8 tables"},
	{BASE "--classes 1", "--classes: '1' is not a number of classes (2 or more)"},
	{BASE "--classes 1048577", "--classes: '1048577' is not a number of classes (2 or more)"},
	{BASE "--shuffle random", "--shuffle: 'random': want none, buffer or global"},
	{BASE "--shuffle-buffer 0", "--shuffle-buffer: '0' is not a number of records (1 to 1073741824)"},
	{BASE "--shuffle-buffer 1073741825",
	 "--shuffle-buffer: '1073741825' is not a number of records (1 to 1073741824)"},
	{BASE "--sharding rec", "--sharding: 'rec': want auto, files or records"},
	{BASE "--workers 0", "--workers: '0' is not 1 to 256"},
	{BASE "--remote-inflight 0", "--remote-inflight: '0' is not 1 to 256"},
	{BASE "--remote-attempts 101", "--remote-attempts: '101' is not 1 to 100"},
	{BASE "--remote-stall 0", "--remote-stall: '0' is not 1 to 3600 seconds"},
	{BASE "--remote-part-size 1K", "--remote-part-size: '1K': want a size from 64K to 1G"},
	{BASE "--workers 257", "--workers: '257' is not 1 to 256"},
	{BASE "--cache nan", "--cache: 'nan': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache ~5M", "--cache: ' 5M': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache 0x100000", "--cache: '0x100000': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache 1e8", "--cache: '1e8': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache 64k", "--cache: '64k': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache 1.5", "--cache: '1.5': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache -0", "--cache: '-0': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache 9223372036854775808",
	 "--cache: '9223372036854775808': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--cache AUTO", "--cache: 'AUTO': want a size (e.g. 512M, 2G), auto or off"},
	{BASE "--shard-cache-limit 1e9", "--shard-cache-limit: '1e9': want a size (e.g. 50G)"},
	{BASE "--shard-cache-limit -1", "--shard-cache-limit: '-1': want a size (e.g. 50G)"},
	{BASE "--loader-cpus all", "--loader-cpus: 'all': want spare or rank"},
	{BASE "--synthetic=0", "--synthetic: '0' is not a number of inputs"},
	{BASE "--synthetic=16777217", "--synthetic: '16777217' is not a number of inputs"},
	{BASE "--hidden 12,,3", "--hidden: '12,,3' is not a list of layer sizes (e.g. 256,128)"},
	{BASE "--hidden 65537", "--hidden: '65537' is not a list of layer sizes (e.g. 256,128)"},
	{BASE "--hidden 0", "--hidden: '0' is not a list of layer sizes (e.g. 256,128)"},
	{BASE "--hidden ''", "--hidden: '' is not a list of layer sizes (e.g. 256,128)"}, /* none */
	{BASE "--batch 0", "--batch: '0' is not a batch size (1 to 16777216)"},
	{BASE "--batch 16777217", "--batch: '16777217' is not a batch size (1 to 16777216)"},
	{BASE "--global-batch 16777217",
	 "--global-batch: '16777217' is not a batch size (1 to 16777216)"},
	{BASE "--epochs 0", "--epochs: '0' is not a number of epochs"},
	{BASE "--epochs 1000001", "--epochs: '1000001' is not a number of epochs"},
	{BASE "--max-steps 0", "--max-steps: '0' is not a number of steps"},
	{BASE "--max-steps 9223372036854775808",
	 "--max-steps: '9223372036854775808' is not a number of steps"},
	{BASE "--optimizer momentum", "--optimizer: 'momentum': want sgd, adam or lars"},
	{BASE "--lr fast", "--lr: 'fast' is not a positive rate"},
	{BASE "--lr 0", "--lr: '0' is not a positive rate"},
	{BASE "--lr nan", "--lr: 'nan' is not a positive rate"},
	{BASE "--lr 1000001", "--lr: '1000001' is not a positive rate"},
	{BASE "--lr-scaling sqrt", "--lr-scaling: 'sqrt': want linear or none"},
	{BASE "--warmup-epochs -1", "--warmup-epochs: '-1' is not a number of epochs"},
	{BASE "--schedule step", "--schedule: 'step': want constant or cosine"},
	{BASE "--momentum 1", "--momentum: '1' is not in [0, 1)"},
	{BASE "--weight-decay 1.5", "--weight-decay: '1.5' is not in [0, 1]"},
	{BASE "--optimizer lars --lars-trust 0", "--lars-trust: '0' is not in [1e-9, 1000]"},
	{BASE "--seed -1", "--seed: '-1' is not a seed"},
	{BASE "--seed ~-1", "--seed: ' -1' is not a seed"}, /* strtoull: 2^64 - 1 */
	{BASE "--epochs ~2", "--epochs: ' 2' is not a number of epochs"},
	{BASE "--seed 18446744073709551616", "--seed: '18446744073709551616' is not a seed"},
	{BASE "--device gpu", "--device: 'gpu': want cpu or cuda"},
	{BASE "--precision fp16", "--precision: 'fp16': want fp32 or bf16"},
	{BASE "--threads 1025", "--threads: '1025' is not 1 to 1024"},
	{BASE "--bucket-size nan",
	 "--bucket-size: 'nan' is not a size from 4 B to 1.0 TiB (e.g. 256K, 1M)"},
	{BASE "--bucket-size 0",
	 "--bucket-size: '0' is not a size from 4 B to 1.0 TiB (e.g. 256K, 1M)"},
	{BASE "--bucket-size 3B",
	 "--bucket-size: '3B' is not a size from 4 B to 1.0 TiB (e.g. 256K, 1M)"},
	{BASE "--bucket-size 1e5",
	 "--bucket-size: '1e5' is not a size from 4 B to 1.0 TiB (e.g. 256K, 1M)"},
	{BASE "--bucket-size 1025G",
	 "--bucket-size: '1025G' is not a size from 4 B to 1.0 TiB (e.g. 256K, 1M)"},
	{BASE "--reduce ring", "--reduce: 'ring': want auto, mpi, shm or alltoall"},
	{BASE "--grad-compression fp8", "--grad-compression: 'fp8': want none, bf16 or fp16"},
	{BASE "--eval-batch 0", "--eval-batch: '0' is not a batch size (1 to 16777216)"},
	{BASE "--eval-every 0", "--eval-every: '0' is not a number of steps"},
	{BASE "--tensorboard-every 0", "--tensorboard-every: '0' is not a number of steps"},
	{BASE "--strategy ring", "--strategy: 'ring': want allreduce, ps or hybrid"},
	{BASE "--strategy ps --servers 0", "--servers: '0' is not a number of servers (1 or more)"},
	{BASE "--strategy ps --staleness -1",
	 "--staleness: '-1': want a number of steps (0, 1, ...) or inf"},
	{BASE "--strategy ps --staleness 1073741825",
	 "--staleness: '1073741825': want a number of steps (0, 1, ...) or inf"},
	{BASE "--strategy ps --backup-workers 65537",
	 "--backup-workers: '65537' is not a number of workers"},
	{BASE "--straggler 1:2,1:3", "--straggler: '1:2,1:3': want RANK:FACTOR[,RANK:FACTOR...] with "
	                             "FACTOR from 1 to 1000, each rank once"},
	{BASE "--straggler 1:0.5", "--straggler: '1:0.5': want RANK:FACTOR[,RANK:FACTOR...] with "
	                           "FACTOR from 1 to 1000, each rank once"},
	{BASE "--straggler-random 1.1:2:3", "--straggler-random: '1.1:2:3': want P:FACTOR:SEED with P "
	                                    "in [0, 1] and FACTOR from 1 to 1000"},
	{BASE "--straggler-random 0.5:2", "--straggler-random: '0.5:2': want P:FACTOR:SEED with P in "
	                                  "[0, 1] and FACTOR from 1 to 1000"},
	{BASE "--checkpoint-every 0", "--checkpoint-every: '0' is not a number of steps"},
	/* the command line itself */
	{BASE "--bogus", "unknown option '--bogus'"},
	{BASE "-x", "unknown option '-x'"},
	{BASE "--resume=yes", "unknown option '--resume=yes'"},
	{BASE "--lr", "option '--lr' needs a value"},
	{BASE "extra", "unexpected argument 'extra' (shards go after --train/--test)"},
	{BASE "--lr fast --help", "--lr: 'fast' is not a positive rate"},
};

static void test_values_refused(void)
{
	for (size_t i = 0; i < sizeof value_refusals / sizeof *value_refusals; i++)
		refuse(value_refusals[i].line, value_refusals[i].message);
}

/* Every option with a value to refuse has a case above. */
static void test_every_option_has_a_refusal(void)
{
	const tr_option_row *t = tr_option_table();
	for (int i = 0; i < OPT_COUNT; i++) {
		if (t[i].kind == TR_KIND_FLAG || t[i].kind == TR_KIND_STRING ||
		    t[i].kind == TR_KIND_HELP || t[i].kind == TR_KIND_VERSION)
			continue;
		char want[64];
		snprintf(want, sizeof want, "--%s: '", t[i].name);
		int found = 0;
		for (size_t k = 0; k < sizeof value_refusals / sizeof *value_refusals; k++)
			found |= !strncmp(value_refusals[k].message, want, strlen(want));
		if (!found)
			fprintf(stderr, "\n  no refused value of --%s\n", t[i].name);
		CU_ASSERT(found);
	}
}

static void test_values_taken(void)
{
	ACCEPT(BASE, !strcmp(o->train, "t") && !strcmp(o->test, "u") && !strcmp(o->y, "label") &&
	                 !strcmp(o->tensorboard, "tb") && !strcmp(o->checkpoint, "ck"));
	ACCEPT("--train t --x a,b --x c --y label", o->nx == 3 && !strcmp(o->x[2], "c"));
	ACCEPT(BASE "--embed cat:1099511627776:4096,dog:5:4 --embed e:1:1",
	       o->nembed == 3 && !strcmp(o->embed[0].feature, "cat") &&
	           o->embed[0].vocab == 1099511627776 && o->embed[0].dim == 4096 &&
	           o->embed[1].vocab == 5 && o->embed[2].dim == 1);
	ACCEPT(BASE "--classes 2", o->classes == 2);
	ACCEPT(BASE "--classes 1048576", o->classes == 1048576);
	ACCEPT(BASE "--shuffle global", o->shuffle == RIO_SHUFFLE_GLOBAL);
	ACCEPT(BASE "--shuffle-buffer 1073741824", o->shuffle_buffer == 1073741824);
	ACCEPT(BASE "--sharding records", o->sharding == RIO_SHARD_RECORDS);
	ACCEPT(BASE "--workers 256", o->workers == 256);
	ACCEPT(BASE "--remote-part-size 1M --remote-inflight 4 --remote-attempts 3 --remote-stall 5",
	       o->remote_part_size == 1048576 && o->remote_inflight == 4 &&
	               o->remote_attempts == 3 && o->remote_stall == 5);
	ACCEPT(BASE "--cache auto", o->cache == -1);
	ACCEPT(BASE "--cache off", o->cache == 0);
	/* sizes: lib/size.h's grammar (K = 1024, KB = 1000); 0 is off */
	ACCEPT(BASE "--cache 0", o->cache == 0);
	ACCEPT(BASE "--cache 0K", o->cache == 0);
	ACCEPT(BASE "--cache 1", o->cache == 1);
	ACCEPT(BASE "--cache 1.5M", o->cache == 1572864);
	ACCEPT(BASE "--cache 2G", o->cache == 2147483648);
	ACCEPT(BASE "--cache 2GiB", o->cache == 2147483648);
	ACCEPT(BASE "--cache 1MB", o->cache == 1000000);
	ACCEPT(BASE "--cache 1T", o->cache == 1099511627776);
	ACCEPT(BASE "--loader-cpus rank", o->loader_cpus_spare == 0);
	ACCEPT(BASE "--shard-cache-limit 50G",
	       !strcmp(o->shard_cache, "sc") && o->shard_cache_limit == 53687091200);
	ACCEPT("--synthetic", o->synthetic == 1 && o->synthetic_inputs == 784);
	ACCEPT("--synthetic=16777216", o->synthetic == 1 && o->synthetic_inputs == 16777216);
	ACCEPT(BASE "--hidden none", o->nhidden == 0);
	ACCEPT(BASE "--hidden 8,65536", o->nhidden == 2 && o->hidden[0] == 8 && o->hidden[1] == 65536);
	ACCEPT(BASE "--batch 16777216", o->batch == 16777216);
	ACCEPT(BASE "--global-batch 64", o->global_batch == 64);
	ACCEPT(BASE "--epochs 1000000", o->epochs == 1000000);
	ACCEPT(BASE "--max-steps 9223372036854775807", o->max_steps == UINT64_MAX >> 1);
	/* the rate by optimizer, unless given */
	ACCEPT(BASE, o->optim.kind == TR_OPT_SGD && o->optim.lr == 0.05f);
	ACCEPT(BASE "--optimizer adam", o->optim.kind == TR_OPT_ADAM && o->optim.lr == 0.001f);
	ACCEPT(BASE "--optimizer lars", o->optim.kind == TR_OPT_LARS && o->optim.lr == 20.0f);
	ACCEPT(BASE "--optimizer adam --lr 1e-12", o->optim.lr == 1e-12f);
	ACCEPT(BASE "--lr-scaling none", o->lr_scaling == 0);
	ACCEPT(BASE "--warmup-epochs 0.5", o->warmup_epochs == 0.5);
	ACCEPT(BASE "--schedule constant", o->optim.cosine == 0);
	ACCEPT(BASE "--momentum 0", o->optim.momentum == 0);
	ACCEPT(BASE "--weight-decay 1", o->optim.weight_decay == 1);
	ACCEPT(BASE "--optimizer lars --lars-trust 1e3", o->optim.trust == 1e3f);
	ACCEPT(BASE "--seed 18446744073709551615", o->seed == UINT64_MAX);
	ACCEPT(BASE "--seed 0", o->seed == 0);
	ACCEPT(BASE "--device cuda", o->device == TR_DEVICE_CUDA);
	ACCEPT(BASE "--precision bf16", o->precision == TR_PRECISION_BF16);
	ACCEPT(BASE, o->precision == TR_PRECISION_FP32);
	ACCEPT(BASE "--threads 3", o->threads == 3);
	ACCEPT(BASE "--bucket-size 256K", o->bucket_bytes == 262144);
	ACCEPT(BASE "--bucket-size 100KB", o->bucket_bytes == 100000);
	ACCEPT(BASE "--bucket-size 1.5K", o->bucket_bytes == 1536);
	ACCEPT(BASE "--bucket-size 4", o->bucket_bytes == 4);
	ACCEPT(BASE "--bucket-size 1T", o->bucket_bytes == 1099511627776);
	ACCEPT(BASE "--reduce alltoall", o->reduce == 3);
	ACCEPT(BASE "--grad-compression fp16", o->grad_compression == 2);
	ACCEPT(BASE "--pipeline 2 --grad-compression bf16", o->grad_compression == 1);
	ACCEPT(BASE "--tensor 2 --grad-compression fp16", o->grad_compression == 2);
	ACCEPT(BASE "--tensor 2 --pipeline 2 --precision bf16", o->precision == TR_PRECISION_BF16);
	ACCEPT(BASE "--shard-optimizer", o->shard_optimizer == 1);
	ACCEPT(BASE "--eval-batch 7 --eval-every 9", o->eval_batch == 7 && o->eval_every == 9);
	ACCEPT(BASE "--metrics m.json", !strcmp(o->metrics, "m.json"));
	ACCEPT(BASE "--tensorboard-every 5", o->tensorboard_every == 5);
	/* with model parallelism too: --eval-every, --straggler */
	ACCEPT(BASE "--pipeline 2 --tensor 2 --eval-every 5", o->eval_every == 5 && o->pipeline == 2);
	ACCEPT(BASE "--tensor 2 --straggler 1:3", o->nstraggler == 1 && o->tensor == 2);
	ACCEPT(BASE "--strategy ps", o->strategy == TR_STRATEGY_PS && o->servers == 1);
	ACCEPT(BASE "--strategy hybrid --embed c:9:2 --servers 65536",
	       o->strategy == TR_STRATEGY_HYBRID && o->servers == 65536);
	ACCEPT(BASE "--strategy ps --staleness inf --staleness-lr",
	       o->staleness == TR_STALENESS_INF && o->staleness_lr == 1);
	ACCEPT(BASE "--strategy ps --staleness 1073741824", o->staleness == 1073741824);
	ACCEPT(BASE "--strategy ps --backup-workers 2", o->backup_workers == 2);
	ACCEPT(BASE "--straggler 3:2.5,1:1000",
	       o->nstraggler == 2 && o->straggler[0].rank == 3 && o->straggler[0].factor == 2.5 &&
	           o->straggler[1].rank == 1);
	ACCEPT(BASE "--straggler-random 0.5:20:7",
	       o->straggler_p == 0.5 && o->straggler_f == 20 && o->straggler_seed == 7);
	ACCEPT(BASE "--checkpoint-every 10 --resume", o->checkpoint_every == 10 && o->resume == 1);
	ACCEPT(BASE "-q", o->quiet == 1);
	ACCEPT(BASE "--quiet", o->quiet == 1);
	/* getopt_long's unambiguous abbreviations, and --name=value */
	ACCEPT(BASE "--epoch 3 --lr=0.5", o->epochs == 3 && o->optim.lr == 0.5f);
}

static void test_help_and_version(void)
{
	tr_options o;
	char err[ERR_LEN];
	CU_ASSERT_EQUAL(parse_line(&o, err, sizeof err, "--help"), 1);
	tr_options_free(&o);
	CU_ASSERT_EQUAL(parse_line(&o, err, sizeof err, "--lr 0.1 -h --bogus"), 1);
	tr_options_free(&o);
	CU_ASSERT_EQUAL(parse_line(&o, err, sizeof err, "--version"), 2);
	tr_options_free(&o);
}

/* ---- each row's range and words, from the table ---------------------------- */

/* What a row needs besides BASE to be taken at all. */
static const char *const companions[OPT_COUNT] = {
	[OPT_SERVERS] = "--strategy ps ",
	[OPT_STALENESS] = "--strategy ps ",
	[OPT_BACKUP_WORKERS] = "--strategy ps ",
	[OPT_LARS_TRUST] = "--optimizer lars ",
	[OPT_STRATEGY] = "--embed c:9:2 ", /* hybrid */
	[OPT_PIPELINE] = "--hidden 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 ", /* 16 layers */
	[OPT_MICROBATCHES] = "--pipeline 2 ",
	[OPT_PIPE_SCHEDULE] = "--pipeline 2 ",
	[OPT_TENSOR] = "--hidden 65536 ", /* divisible by every T taken */
};

/* The row's field as a number. */
static double field_value(const tr_options *o, const tr_option_row *r)
{
	const char *at = (const char *)o + r->offset;
	switch (r->field) {
	case TR_FIELD_INT: return *(const int *)at;
	case TR_FIELD_U64: return (double)*(const uint64_t *)at;
	case TR_FIELD_I64: return (double)*(const int64_t *)at;
	case TR_FIELD_SIZE: return (double)*(const size_t *)at;
	case TR_FIELD_FLOAT: return *(const float *)at;
	case TR_FIELD_DOUBLE: return *(const double *)at;
	default: return NAN;
	}
}

/* --NAME VALUE after BASE and the row's companions: taken, and the field
 * then holds `want` (within float's rounding); or refused with a message
 * that names the option and the value. */
static void try_value(int id, const char *value, int taken, double want)
{
	const tr_option_row *r = &tr_option_table()[id];
	char line[512], err[ERR_LEN], head[256];
	snprintf(line, sizeof line, BASE "%s--%s %s", companions[id] ? companions[id] : "", r->name,
	         value);
	tr_options o;
	int rc = parse_line(&o, err, sizeof err, line);
	snprintf(head, sizeof head, "--%s: '%s'", r->name, value);
	if (taken) {
		double got = rc == 0 ? field_value(&o, r) : NAN;
		int same = rc == 0 && fabs(got - want) <= fabs(want) * FLT_EPSILON;
		if (!same)
			fprintf(stderr, "\n  %s: rc %d '%s', field %.17g, want %.17g\n", line, rc, err, got,
			        want);
		CU_ASSERT(same);
	} else {
		if (rc != -1 || strncmp(err, head, strlen(head)))
			fprintf(stderr, "\n  %s: rc %d '%s', want a refusal\n", line, rc, err);
		CU_ASSERT(rc == -1 && !strncmp(err, head, strlen(head)));
	}
	tr_options_free(&o);
}

static void test_ranges_held(void)
{
	const tr_option_row *t = tr_option_table();
	char v[64];
	for (int i = 0; i < OPT_COUNT; i++) {
		const tr_option_row *r = &t[i];
		if (r->kind == TR_KIND_COUNT || r->kind == TR_KIND_SIZE) {
			snprintf(v, sizeof v, "%llu", (unsigned long long)r->lo);
			try_value(i, v, 1, (double)r->lo);
			snprintf(v, sizeof v, "%llu", (unsigned long long)r->hi);
			try_value(i, v, 1, (double)r->hi);
			if (r->lo > 0) {
				snprintf(v, sizeof v, "%llu", (unsigned long long)r->lo - 1);
				try_value(i, v, 0, 0);
			}
			if (r->hi < UINT64_MAX) {
				snprintf(v, sizeof v, "%llu", (unsigned long long)r->hi + 1);
				try_value(i, v, 0, 0);
			} else {
				try_value(i, "18446744073709551616", 0, 0);
			}
			try_value(i, "-1", 0, 0);
			try_value(i, "nan", 0, 0);
		} else if (r->kind == TR_KIND_REAL) {
			snprintf(v, sizeof v, "%.17g", r->min);
			try_value(i, v, 1, r->min);
			snprintf(v, sizeof v, "%.17g", r->max);
			try_value(i, v, 1, r->max);
			snprintf(v, sizeof v, "%.17g", nextafter(r->min, -INFINITY));
			try_value(i, v, 0, 0);
			snprintf(v, sizeof v, "%.17g", nextafter(r->max, INFINITY));
			try_value(i, v, 0, 0);
			try_value(i, "nan", 0, 0);
			try_value(i, "inf", 0, 0);
		}
		for (const tr_option_word *w = r->words; w && w->name; w++)
			try_value(i, w->name, 1, (double)w->value);
		for (int k = 0; r->name_of && r->name_of(k); k++)
			try_value(i, r->name_of(k), 1, k);
		if (r->kind == TR_KIND_KEYWORD)
			try_value(i, "bogus", 0, 0);
	}
}

/* ---- the checks between options ------------------------------------------- */

static const refusal_case check_refusals[] = {
	{BASE "--pipeline 4", "--pipeline 4: the model has 3 layers (--hidden and the output); a "
	                      "stage needs one at least"},
	{BASE "--stages 0,1", "--stages: the ranges end at layer 1, the model's last is 2 (3 "
	                      "layers: --hidden and the output)"},
	{BASE "--pipeline 2 --stages 0-2", "--stages: 1 ranges for --pipeline 2"},
	{BASE "--tensor 3", "--tensor 3: hidden layer 1's width 256 is not divisible by 3"},
	{BASE "--pipeline 2 --pipeline-schedule sequential --microbatches 2",
	 "--microbatches 2: not with --pipeline-schedule sequential (the batch goes whole)"},
	{BASE "--microbatches 2", "--microbatches needs --pipeline 2 or more"},
	{BASE "--pipeline 2 --strategy ps", "--pipeline 2: not with --strategy ps"},
	{BASE "--tensor 2 --device cuda", "--tensor 2: not with --device cuda (yet)"},
	{BASE "--pipeline 2 --pipeline-schedule async --precision bf16",
	 "--pipeline 2: not with --precision bf16 under --pipeline-schedule async (yet: one bf16 "
	 "copy of the weights, not the stash's)"},
	{BASE "--pipeline 2 --shard-optimizer",
	 "--pipeline 2: not with --shard-optimizer (it needs the shm reducer's shared window; the "
	 "stages' gradients go by MPI_Allreduce)"},
	{"--x a --y label", "--train SHARDS is required"},
	{"--synthetic=5 --train t --x a --y label",
	 "--synthetic=5: the input width is that of --x in the data given; leave out =N or the data"},
	{"--synthetic --x a --y label",
	 "--synthetic with --x/--y needs --train or --test to read their widths from"},
	{BASE "--embed c:9:2 --device cuda",
	 "--embed: not with --device cuda (embedding tables are trained on the CPU, from the data)"},
	{"--synthetic --test u --embed c:9:2 --y label",
	 "--embed: not with --synthetic (embedding tables are trained on the CPU, from the data)"},
	{BASE "--embed a:9:2", "--embed a: the feature is also in --x; an input is one or the other"},
	{"--train t --x a,label --y label", "--y label: the label is also in --x; the model would "
	                                    "read its answer: leave it out of the inputs"},
	{"--train t --embed label:2:4 --y label", "--y label: the label is also in --embed; the model "
	                                          "would read its answer: leave it out of the inputs"},
	{"--train t --x a --y label --eval-every 5",
	 "--eval-every needs --test (its copies are evaluated on the test data)"},
	{"--train t --x a --y label --eval-batch 64",
	 "--eval-batch needs --test (it is the evaluation's batch)"},
	{"--train t --x a --y label --tensorboard-every 5",
	 "--tensorboard-every needs --tensorboard DIR"},
	{"--train t --x a --y label --shard-cache-limit 1G",
	 "--shard-cache-limit needs --shard-cache DIR"},
	{BASE "--lars-trust 0.01", "--lars-trust needs --optimizer lars"},
	{BASE "--optimizer adam --momentum 0.5",
	 "--momentum: not with --optimizer adam (its moments have their own decay)"},
	{BASE "--shuffle global --shuffle-buffer 100", "--shuffle-buffer needs --shuffle buffer"},
	{BASE "--batch 16 --global-batch 64",
	 "--batch: not with --global-batch, which sets each rank's batch"},
	{BASE "--lr-scaling linear --global-batch 64",
	 "--lr-scaling: not with --global-batch, whose --lr is the global batch's (nothing is "
	 "scaled)"},
	{"--train t --x a,b,a --y label", "--x a: the feature is named twice"},
	{"--train t --x a --x a --y label", "--x a: the feature is named twice"},
	{"--train t --x a --embed c:9:2,c:9:2 --y label", "--embed c: the feature is named twice"},
	{"--train t --y label", "--x FEATURE[,FEATURE...] is required"},
	{"--train t --x a", "--y FEATURE is required"},
	{"--train t --x a --y label --resume", "--resume needs --checkpoint DIR"},
	{"--train t --x a --y label --checkpoint-every 5",
	 "--checkpoint-every needs --checkpoint DIR"},
	{BASE "--servers 2", "--servers needs --strategy ps (parameter servers)"},
	{BASE "--staleness 1", "--staleness needs --strategy ps (parameter servers)"},
	{BASE "--backup-workers 1", "--backup-workers needs --strategy ps (parameter servers)"},
	{BASE "--staleness-lr", "--staleness-lr needs --strategy ps (parameter servers)"},
	{BASE "--strategy ps --optimizer lars",
	 "--strategy ps: not with --optimizer lars (a layer's trust ratio needs the whole layer)"},
	{BASE "--strategy hybrid --embed c:9:2 --shard-optimizer",
	 "--strategy hybrid: not with --shard-optimizer (the servers hold the optimizer state)"},
	{BASE "--strategy ps --reduce shm", "--strategy ps: not with --reduce"},
	{BASE "--grad-compression bf16 --reduce shm",
	 "--grad-compression: not with --reduce shm (nothing is sent there); use --reduce alltoall "
	 "or mpi"},
	{BASE "--strategy hybrid --embed c:9:2 --grad-compression fp16",
	 "--grad-compression: --strategy allreduce or ps (not hybrid, for now)"},
	{BASE "--strategy hybrid", "--strategy hybrid needs --embed (the servers hold the embedding "
	                           "tables; the dense layers are allreduced)"},
	{BASE "--strategy hybrid --embed c:9:2 --staleness 1",
	 "--strategy hybrid: the dense layers' allreduce is synchronous: not with --staleness or "
	 "--backup-workers"},
	{BASE "--strategy ps --staleness 2 --backup-workers 1",
	 "--backup-workers needs --staleness 0 (backup workers drop late gradients of a synchronous "
	 "step)"},
	{BASE "--strategy ps --staleness-lr",
	 "--staleness-lr needs --staleness 1 or more (at 0 no gradient is stale)"},
	{BASE "--embed c:9:2 --eval-every 5",
	 "--embed: not with --eval-every yet (its copies are of the dense parameters)"},
	{BASE "--shard-optimizer --eval-every 5",
	 "--eval-every: not with --shard-optimizer (the copies are evaluated on each rank's own "
	 "parameters)"},
};

static void test_checks_between_options(void)
{
	for (size_t i = 0; i < sizeof check_refusals / sizeof *check_refusals; i++)
		refuse(check_refusals[i].line, check_refusals[i].message);
}

/* A message longer than the buffer is cut, and ends in a NUL. */
static void test_short_buffer(void)
{
	tr_options o;
	char err[12];
	memset(err, 'x', sizeof err);
	CU_ASSERT_EQUAL(parse_line(&o, err, sizeof err, BASE "--lr fast"), -1);
	CU_ASSERT_STRING_EQUAL(err, "--lr: 'fast");
	tr_options_free(&o);
	CU_ASSERT_EQUAL(parse_line(&o, err, sizeof err, BASE "--classes 1"), -1);
	CU_ASSERT_STRING_EQUAL(err, "--classes: ");
	tr_options_free(&o);
}

/* ---- --help ---------------------------------------------------------------- */

static void test_help_lists_every_option(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	CU_ASSERT_FATAL(f != NULL);
	tr_options_usage(f);
	CU_ASSERT_FATAL(fclose(f) == 0);
	const tr_option_row *t = tr_option_table();
	const char *last = text;
	for (int i = 0; i < OPT_COUNT; i++) {
		char want[128];
		if (t[i].section && *t[i].section) {
			snprintf(want, sizeof want, "\n\n%s:\n", t[i].section);
			const char *at = strstr(text, want);
			CU_ASSERT(at != NULL && at >= last); /* the sections in the table's order */
			last = at ? at : last;
		}
		/* "      --name ARG" or "  -q, --name", at the start of a line, in order */
		if (t[i].short_name)
			snprintf(want, sizeof want, "\n  -%c, --%s", t[i].short_name, t[i].name);
		else
			snprintf(want, sizeof want, "\n      --%s", t[i].name);
		const char *at = strstr(last, want);
		if (!at)
			fprintf(stderr, "\n  --help has no line for --%s after its previous option\n",
			        t[i].name);
		CU_ASSERT(at != NULL);
		if (at && t[i].arg) {
			size_t n = strlen(want);
			CU_ASSERT(at[n] == (t[i].optional ? '[' : ' '));
			CU_ASSERT(!strncmp(at + n + 1 + (size_t)t[i].optional, t[i].arg, strlen(t[i].arg)));
		}
		last = at ? at + 1 : last;
	}
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");
		if (n > 79)
			fprintf(stderr, "\n  a line of %zu columns: %.*s\n", n, (int)n, line);
		CU_ASSERT(n <= 79);
		line += n + (line[n] == '\n');
	}
	CU_ASSERT(!strncmp(text, "Usage: mpirun -np N recordio-train", 34));
	free(text);
}

static const tu_test value_tests[] = {
	{"each option's values taken into its field", test_values_taken},
	{"each option's values refused in its words", test_values_refused},
	{"every option with a value has a refusal tested", test_every_option_has_a_refusal},
	{"every row's range held at both ends, every word taken", test_ranges_held},
	{"--help and --version", test_help_and_version},
	{"a message cut to the buffer", test_short_buffer},
	{NULL, NULL},
};

static const tu_test check_tests[] = {
	{"each check between options, in its line", test_checks_between_options},
	{NULL, NULL},
};

static const tu_test help_tests[] = {
	{"--help lists every option of the table, in its sections", test_help_lists_every_option},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"values", value_tests},
	{"checks", check_tests},
	{"help", help_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * options_check.c — the checks between recordio-train's options, after the
 * table's parse (options.c) has taken each value on its own: what the run
 * reads, options that would have no effect (or a wrong one) with the others
 * given, what is required, what goes with each strategy; then the defaults
 * that depend on other options. The checks that need the world size
 * (servers against ranks, --global-batch's split, stragglers naming ranks)
 * are made once the world is known, in main.c. Each refusal is one line.
 */
#include "config.h"
#include "options_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GIVEN(id) tr_given_has(&given, (id))

/* A refusal: the message in err; returns -1. */
static int refuse(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Input i's feature: --x's, then --embed's. */
static const char *input_name(const tr_options *o, int i)
{
	return i < o->nx ? o->x[i] : o->embed[i - o->nx].feature;
}

/* Where the data comes from: --train, or --synthetic (which takes its width
 * from the data when given); --embed's tables are trained from the data on
 * the CPU, and each input is an --x or an --embed, never both, nor the
 * label, and named once. */
static int check_data(tr_options *o, char *err, size_t errlen)
{
	if (!o->train && !o->synthetic)
		return refuse(err, errlen, "--train SHARDS is required");
	if (o->synthetic && !o->train && !o->test && !o->nx && !o->y) {
		if (!o->synthetic_inputs)
			o->synthetic_inputs = 784;
	} else if (o->synthetic && o->synthetic_inputs) {
		return refuse(err, errlen, "--synthetic=%d: the input width is that of --x in the "
		              "data given; leave out =N or the data", o->synthetic_inputs);
	} else if (o->synthetic && !o->train && !o->test) {
		return refuse(err, errlen, "--synthetic with --x/--y needs --train or --test to read "
		              "their widths from");
	}
	if (o->nembed && (o->synthetic || o->device == TR_DEVICE_CUDA))
		return refuse(err, errlen, "--embed: not with %s (embedding tables are trained on "
		              "the CPU, from the data)",
		              o->synthetic ? "--synthetic" : "--device cuda");
	for (int i = 0; i < o->nembed; i++)
		for (int j = 0; j < o->nx; j++)
			if (!strcmp(o->embed[i].feature, o->x[j]))
				return refuse(err, errlen, "--embed %s: the feature is also in --x; an "
				              "input is one or the other", o->x[j]);
	for (int i = 0; i < o->nx + o->nembed; i++) {
		const char *opt = i < o->nx ? "x" : "embed";
		if (o->y && !strcmp(o->y, input_name(o, i)))
			return refuse(err, errlen, "--y %s: the label is also in --%s; the model would "
			              "read its answer: leave it out of the inputs", o->y, opt);
		for (int j = 0; j < i; j++)
			if (!strcmp(input_name(o, i), input_name(o, j)))
				return refuse(err, errlen, "--%s %s: the feature is named twice", opt,
				              input_name(o, i));
	}
	return 0;
}

/* Options given for something the run does not do. */
static int check_no_effect(const tr_options *o, tr_options_given given, char *err,
                           size_t errlen)
{
	const char *what = NULL;
	if (GIVEN(OPT_EVAL_EVERY) && !o->test)
		what = "--eval-every needs --test (its copies are evaluated on the test data)";
	else if (GIVEN(OPT_EVAL_BATCH) && !o->test)
		what = "--eval-batch needs --test (it is the evaluation's batch)";
	else if (GIVEN(OPT_TENSORBOARD_EVERY) && !o->tensorboard)
		what = "--tensorboard-every needs --tensorboard DIR";
	else if (GIVEN(OPT_SHARD_CACHE_LIMIT) && !o->shard_cache)
		what = "--shard-cache-limit needs --shard-cache DIR";
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
	return what ? refuse(err, errlen, "%s", what) : 0;
}

/* The inputs, the label, and the checkpoint directory of --resume and
 * --checkpoint-every. */
static int check_required(const tr_options *o, char *err, size_t errlen)
{
	if (!o->nx && !o->nembed && !o->synthetic_inputs)
		return refuse(err, errlen, "--x FEATURE[,FEATURE...] is required");
	if (!o->y && !o->synthetic_inputs)
		return refuse(err, errlen, "--y FEATURE is required");
	if (o->resume && !o->checkpoint)
		return refuse(err, errlen, "--resume needs --checkpoint DIR");
	if (o->checkpoint_every && !o->checkpoint)
		return refuse(err, errlen, "--checkpoint-every needs --checkpoint DIR");
	return 0;
}

/* allreduce takes none of the servers' options; ps and hybrid: no option of
 * allreduce's reducer or optimizer sharding, no LARS; hybrid needs its
 * tables and is synchronous; backup workers and a stale gradient's rate
 * each go with one kind of staleness. */
static int check_strategy(const tr_options *o, char *err, size_t errlen)
{
	if (o->strategy == TR_STRATEGY_ALLREDUCE) {
		const char *ps_only = o->servers          ? "--servers"
		                      : o->staleness      ? "--staleness"
		                      : o->backup_workers ? "--backup-workers"
		                      : o->staleness_lr   ? "--staleness-lr"
		                                          : NULL;
		if (ps_only)
			return refuse(err, errlen, "%s needs --strategy ps (parameter servers)", ps_only);
		if (o->grad_compression && o->reduce == 2 /* TR_REDUCE_SHM */)
			return refuse(err, errlen, "--grad-compression: not with --reduce shm (nothing "
			              "is sent there); use --reduce alltoall or mpi");
		return 0;
	}
	if (o->grad_compression && o->strategy == TR_STRATEGY_HYBRID)
		return refuse(err, errlen, "--grad-compression: --strategy allreduce or ps (not "
		              "hybrid, for now)");
	const char *no = o->optim.kind == TR_OPT_LARS ? "--optimizer lars (a layer's trust "
	                                                "ratio needs the whole layer)"
	                 : o->shard_optimizer ? "--shard-optimizer (the servers hold the "
	                                        "optimizer state)"
	                 : o->reduce ? "--reduce" : NULL;
	if (no)
		return refuse(err, errlen, "--strategy %s: not with %s",
		              o->strategy == TR_STRATEGY_PS ? "ps" : "hybrid", no);
	if (o->strategy == TR_STRATEGY_HYBRID && !o->nembed)
		return refuse(err, errlen, "--strategy hybrid needs --embed (the servers hold the "
		              "embedding tables; the dense layers are allreduced)");
	if (o->strategy == TR_STRATEGY_HYBRID && (o->staleness || o->backup_workers))
		return refuse(err, errlen, "--strategy hybrid: the dense layers' allreduce is "
		              "synchronous: not with --staleness or --backup-workers");
	if (o->backup_workers && o->staleness)
		return refuse(err, errlen, "--backup-workers needs --staleness 0 (backup workers "
		              "drop late gradients of a synchronous step)");
	if (o->staleness_lr && !o->staleness)
		return refuse(err, errlen, "--staleness-lr needs --staleness 1 or more (at 0 no "
		              "gradient is stale)");
	return 0;
}

/* --eval-every's copies: of the dense parameters, each rank's own. */
static int check_eval_every(const tr_options *o, char *err, size_t errlen)
{
	if (o->nembed && o->eval_every)
		return refuse(err, errlen, "--embed: not with --eval-every yet (its copies are of "
		              "the dense parameters)");
	if (o->eval_every && o->shard_optimizer)
		return refuse(err, errlen, "--eval-every: not with --shard-optimizer (the copies are "
		              "evaluated on each rank's own parameters)");
	return 0;
}

/* --pipeline, --stages, --microbatches, --tensor: what the options alone
 * decide (the world's share, P x T dividing it, is layout.c's): a stage
 * has a layer at least, --stages cover the layers, each hidden width
 * splits into T slices; with what model parallelism does not run. */
static int check_model_parallel(tr_options *o, tr_options_given given, char *err, size_t errlen)
{
	int L = o->nhidden + 1;
	if (o->nstages && !GIVEN(OPT_PIPELINE))
		o->pipeline = o->nstages;
	if (o->nstages && o->nstages != o->pipeline)
		return refuse(err, errlen, "--stages: %d ranges for --pipeline %d", o->nstages,
		              o->pipeline);
	if (o->nstages && o->stage_first[o->nstages] != L)
		return refuse(err, errlen, "--stages: the ranges end at layer %d, the model's last "
		              "is %d (%d layers: --hidden and the output)",
		              o->stage_first[o->nstages] - 1, L - 1, L);
	if (o->pipeline > L)
		return refuse(err, errlen, "--pipeline %d: the model has %d layer%s (--hidden and "
		              "the output); a stage needs one at least", o->pipeline, L,
		              L > 1 ? "s" : "");
	for (int i = 0; i < o->nhidden && o->tensor > 1; i++)
		if (o->hidden[i] % o->tensor)
			return refuse(err, errlen, "--tensor %d: hidden layer %d's width %d is not "
			              "divisible by %d", o->tensor, i + 1, o->hidden[i], o->tensor);
	if (o->pipe_schedule == TR_PIPE_SEQUENTIAL && o->microbatches > 1)
		return refuse(err, errlen, "--microbatches %d: not with --pipeline-schedule "
		              "sequential (the batch goes whole)", o->microbatches);
	if (o->pipe_schedule == TR_PIPE_ASYNC && o->pipeline < 2)
		return refuse(err, errlen, "--pipeline-schedule async needs --pipeline 2 or more "
		              "(it overlaps one batch's backwards with the next's forwards)");
	int split = o->pipeline > 1 || o->tensor > 1;
	if (!split && (GIVEN(OPT_MICROBATCHES) || GIVEN(OPT_PIPE_SCHEDULE)))
		return refuse(err, errlen, "--%s needs --pipeline 2 or more",
		              GIVEN(OPT_MICROBATCHES) ? "microbatches" : "pipeline-schedule");
	if (!split)
		return 0;
	const char *no = o->strategy == TR_STRATEGY_PS ? "--strategy ps"
	                 : o->strategy == TR_STRATEGY_HYBRID ? "--strategy hybrid"
	                 : o->device == TR_DEVICE_CUDA ? "--device cuda (yet)"
	                 : o->shard_optimizer ? "--shard-optimizer (it needs the shm reducer's "
	                                         "shared window; the stages' gradients go "
	                                         "by MPI_Allreduce)"
	                 : o->reduce ? "--reduce (the stages' gradients go by MPI_Allreduce)"
	                 : o->precision == TR_PRECISION_BF16 && o->pipe_schedule == TR_PIPE_ASYNC
	                     ? "--precision bf16 under --pipeline-schedule async (yet: one bf16 "
	                       "copy of the weights, not the stash's)"
	                 : NULL;
	if (no)
		return refuse(err, errlen, "--%s %d: not with %s", o->pipeline > 1 ? "pipeline" : "tensor",
		              o->pipeline > 1 ? o->pipeline : o->tensor, no);
	return 0;
}

int tr_options_check(tr_options *o, tr_options_given given, char *err, size_t errlen)
{
	if (check_data(o, err, errlen) < 0 || check_no_effect(o, given, err, errlen) < 0 ||
	    check_required(o, err, errlen) < 0 || check_strategy(o, err, errlen) < 0 ||
	    check_eval_every(o, err, errlen) < 0 || check_model_parallel(o, given, err, errlen) < 0)
		return -1;
	/* the defaults that depend on other options */
	if (o->strategy != TR_STRATEGY_ALLREDUCE && !o->servers)
		o->servers = 1;
	if (o->optim.lr < 0)
		o->optim.lr = o->optim.kind == TR_OPT_ADAM ? 0.001f
		              : o->optim.kind == TR_OPT_LARS ? 20.0f : 0.05f;
	return 0;
}

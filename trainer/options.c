/*
 * options.c — recordio-train's options as a table (options_table.h): one
 * row per option says its names, the kind of its value, where it is stored,
 * its range, what a refusal says and its help. The parse (getopt_long over
 * the table), --help and the defaults are made from it; the value grammars
 * are in options_value.c, the checks between options in options_check.c.
 * Values are checked here, once, so every rank reaches the same verdict on
 * the same command line; the loader's options take the loader's own limits
 * (RIO_LOADER_MAX_* in loader.h), so what recordio-bench accepts the
 * trainer accepts.
 */
#include "config.h"
#include "options.h"
#include "options_table.h"
#include "options_value.h"
#include "size.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The field f of tr_options, of field type t; a field whose size is not
 * the type's does not compile. */
#define AT(f, t)                                                                        \
	.offset = offsetof(tr_options, f) +                                                  \
	          0 * sizeof(char[sizeof(((tr_options *)0)->f) == sizeof(TR_CTYPE_##t) ? 1 : -1]), \
	.field = TR_FIELD_##t
#define TR_CTYPE_INT int
#define TR_CTYPE_U64 uint64_t
#define TR_CTYPE_I64 int64_t
#define TR_CTYPE_SIZE size_t
#define TR_CTYPE_FLOAT float
#define TR_CTYPE_DOUBLE double
#define TR_CTYPE_STRING const char *
#define WORDS(...) ((const tr_option_word[]){__VA_ARGS__, {NULL, 0}})

/* refusals shared by several rows */
#define NOT_STEPS " is not a number of steps"
#define NOT_BATCH " is not a batch size ({lo} to {hi})"
#define STEPS_MAX (UINT64_MAX >> 1)

static const tr_option_row table[OPT_COUNT] = {
	/* ---- Data ---- */
	[OPT_TRAIN] = {"train", .kind = TR_KIND_STRING, AT(train, STRING), .section = "Data",
	               .arg = "SHARDS", .help = "training shards (required)"},
	[OPT_TEST] = {"test", .kind = TR_KIND_STRING, AT(test, STRING), .arg = "SHARDS",
	              .help = "test shards, evaluated after every epoch"},
	[OPT_X] = {"x", .kind = TR_KIND_LIST, .parse = tr_parse_names,
	           .refusal = " is not a list of feature names", .arg = "FEATURES",
	           .help = "input features, concatenated: bytes are uint8 scaled to [0,1], float "
	                   "lists as they are, int64 lists cast to float (required)"},
	[OPT_Y] = {"y", .kind = TR_KIND_STRING, AT(y, STRING), .arg = "FEATURE",
	           .help = "the int64 class label (required; not also an input in --x or --embed)"},
	[OPT_EMBED] = {"embed", .kind = TR_KIND_LIST, .parse = tr_parse_embed, .hi = TR_MAX_EMBED,
	               .refusal = ": want FEATURE:VOCAB:DIM[,...] with VOCAB from 1 to 2^40, DIM "
	                          "from 1 to 4096, at most {hi} tables",
	               .arg = "FEATURE:VOCAB:DIM[,...]",
	               .help = "an int64 feature's ids (k per record, as many as its first record "
	                       "has) looked up in a VOCAB x DIM table trained with the model and "
	                       "mean-pooled into DIM inputs (doc/embeddings.md)"},
	[OPT_CLASSES] = {"classes", .kind = TR_KIND_COUNT, AT(classes, INT), .lo = 2, .hi = 1 << 20,
	                 .refusal = " is not a number of classes ({lo} or more)", .arg = "K",
	                 .help = "number of classes; labels in [0, K) (default 10)"},
	[OPT_SHUFFLE] = {"shuffle", .kind = TR_KIND_KEYWORD, AT(shuffle, INT),
	                 .name_of = tr_shuffle_name, .arg = "MODE",
	                 .help = "none, buffer (default) or global"},
	[OPT_SHUFFLE_BUFFER] = {"shuffle-buffer", .kind = TR_KIND_COUNT, AT(shuffle_buffer, SIZE),
	                        .lo = 1, .hi = RIO_LOADER_MAX_SHUFFLE_BUFFER,
	                        .refusal = " is not a number of records ({lo} to {hi})", .arg = "N",
	                        .help = "records in the shuffle buffer (default 10000)"},
	[OPT_SHARDING] = {"sharding", .kind = TR_KIND_KEYWORD, AT(sharding, INT),
	                  .name_of = tr_sharding_name, .arg = "MODE",
	                  .help = "auto (default), files or records (see the loader; a resume keeps "
	                          "the checkpoint's)"},
	[OPT_WORKERS] = {"workers", .kind = TR_KIND_COUNT, AT(workers, INT), .lo = 1,
	                 .hi = RIO_LOADER_MAX_WORKERS, .refusal = " is not {lo} to {hi}", .arg = "N",
	                 .help = "loader threads per rank (default 1)"},
	[OPT_CACHE] = {"cache", .kind = TR_KIND_SIZE, AT(cache, I64), .lo = 0, .hi = INT64_MAX,
	               .words = WORDS({"auto", -1}, {"off", 0}),
	               .refusal = ": want a size (e.g. 512M, 2G), auto or off", .arg = "SIZE|auto|off",
	               .help = "decompress compressed shards once into memory when the rank's fit "
	                       "SIZE bytes, and serve every epoch from there (same batches); auto "
	                       "(default): SIZE = min(1G, a quarter of RAM); off, or 0: read the "
	                       "files every epoch"},
	[OPT_SHARD_CACHE] = {"shard-cache", .kind = TR_KIND_STRING, AT(shard_cache, STRING),
	                     .arg = "DIR",
	                     .help = "remote shards (s3://, http(s)://) downloaded whole into DIR "
	                             "once, verified, and read from there; the ranks and processes "
	                             "of a host may share DIR (not --cache)"},
	[OPT_SHARD_CACHE_LIMIT] = {"shard-cache-limit", .kind = TR_KIND_SIZE,
	                           AT(shard_cache_limit, I64), .lo = 0, .hi = INT64_MAX,
	                           .refusal = ": want a size (e.g. 50G)", .arg = "SIZE",
	                           .help = "bytes of copies in --shard-cache DIR (default 0: no "
	                                   "limit); the least recently used copies no process "
	                                   "reads are deleted to make room, and a shard that does "
	                                   "not fit is read from the network"},
	[OPT_REMOTE_PART] = {"remote-part-size", .kind = TR_KIND_SIZE, AT(remote_part_size, I64),
	                     .lo = RIO_REMOTE_MIN_PART, .hi = RIO_REMOTE_MAX_PART,
	                     .refusal = ": want a size from 64K to 1G", .arg = "SIZE",
	                     .help = "bytes per ranged GET of a remote shard (s3://, http(s)://; "
	                             "default 8M)"},
	[OPT_REMOTE_INFLIGHT] = {"remote-inflight", .kind = TR_KIND_COUNT, AT(remote_inflight, INT),
	                         .lo = 1, .hi = RIO_REMOTE_MAX_INFLIGHT,
	                         .refusal = " is not {lo} to {hi}", .arg = "N",
	                         .help = "requests in flight at once for a loader's remote shards "
	                                 "(default 16)"},
	[OPT_REMOTE_ATTEMPTS] = {"remote-attempts", .kind = TR_KIND_COUNT, AT(remote_attempts, INT),
	                         .lo = 1, .hi = RIO_REMOTE_MAX_ATTEMPTS,
	                         .refusal = " is not {lo} to {hi}", .arg = "N",
	                         .help = "tries of a remote request that fails for a passing reason "
	                                 "(a broken connection, a stall, HTTP 429 or 5xx) before it "
	                                 "is an error (default 10)"},
	[OPT_REMOTE_STALL] = {"remote-stall", .kind = TR_KIND_COUNT, AT(remote_stall, INT), .lo = 1,
	                      .hi = RIO_REMOTE_MAX_STALL, .refusal = " is not {lo} to {hi} seconds",
	                      .arg = "SECONDS",
	                      .help = "a remote transfer under 1 KiB/s this long is retried "
	                              "(default 30)"},
	[OPT_LOADER_CPUS] = {"loader-cpus", .kind = TR_KIND_KEYWORD, AT(loader_cpus_spare, INT),
	                     .words = WORDS({"spare", 1}, {"rank", 0}), .arg = "MODE",
	                     .help = "where they run: spare (default): on the node's CPUs no rank is "
	                             "bound to, when there are any; rank: on the rank's own (mpirun "
	                             "binds a rank to a core by default)"},
	[OPT_SYNTHETIC] = {"synthetic", .kind = TR_KIND_LIST, .parse = tr_parse_synthetic,
	                   .optional = 1, .refusal = " is not a number of inputs", .arg = "N",
	                   .help = "train on batches made in memory (no loader, no files; from "
	                           "--seed), to see what the input pipeline costs: N inputs (default "
	                           "784, or the width of --train/--test's --x when given), --classes "
	                           "classes, 60000 records an epoch"},

	/* ---- Model and optimisation ---- */
	[OPT_HIDDEN] = {"hidden", .kind = TR_KIND_LIST, .parse = tr_parse_hidden,
	                .refusal = " is not a list of layer sizes (e.g. 256,128)",
	                .section = "Model and optimisation", .arg = "SIZES",
	                .help = "hidden layer sizes, or none (default 256,128)"},
	[OPT_BATCH] = {"batch", .kind = TR_KIND_COUNT, AT(batch, INT), .lo = 1,
	               .hi = RIO_LOADER_MAX_BATCH, .refusal = NOT_BATCH, .arg = "B",
	               .help = "records per rank and step (default 128)"},
	[OPT_GLOBAL_BATCH] = {"global-batch", .kind = TR_KIND_COUNT, AT(global_batch, INT), .lo = 1,
	                      .hi = RIO_LOADER_MAX_BATCH, .refusal = NOT_BATCH, .arg = "G",
	                      .help = "records per step over all ranks, G/N each"},
	[OPT_EPOCHS] = {"epochs", .kind = TR_KIND_COUNT, AT(epochs, U64), .lo = 1, .hi = 1000000,
	                .refusal = " is not a number of epochs", .arg = "E",
	                .help = "passes over the training data (default 20)"},
	[OPT_MAX_STEPS] = {"max-steps", .kind = TR_KIND_COUNT, AT(max_steps, U64), .lo = 1,
	                   .hi = STEPS_MAX, .refusal = NOT_STEPS, .arg = "S",
	                   .help = "stop after S steps in all (default: no limit), reporting the "
	                           "epoch so far (\"partial\")"},
	[OPT_OPTIMIZER] = {"optimizer", .kind = TR_KIND_KEYWORD, AT(optim.kind, INT),
	                   .words = WORDS({"sgd", TR_OPT_SGD}, {"adam", TR_OPT_ADAM},
	                                  {"lars", TR_OPT_LARS}),
	                   .arg = "NAME", .help = "sgd (default), adam or lars (layer-wise trust "
	                                          "ratio for large batches, You et al. 2017)"},
	[OPT_LR] = {"lr", .kind = TR_KIND_REAL, AT(optim.lr, FLOAT), .min = 1e-12, .max = 1e6,
	            .refusal = " is not a positive rate", .arg = "LR",
	            .help = "learning rate for one rank's batch, or for the global batch with "
	                    "--global-batch (default 0.05 for sgd, 0.001 for adam, 20 for lars)"},
	[OPT_LR_SCALING] = {"lr-scaling", .kind = TR_KIND_KEYWORD, AT(lr_scaling, INT),
	                    .words = WORDS({"linear", 1}, {"none", 0}), .arg = "MODE",
	                    .help = "linear (default): with --batch, the rate is multiplied by N; "
	                            "none"},
	[OPT_WARMUP] = {"warmup-epochs", .kind = TR_KIND_REAL, AT(warmup_epochs, DOUBLE),
	                .min = 0, .max = 1e6, .refusal = " is not a number of epochs", .arg = "W",
	                .help = "gradual warmup from LR to the scaled rate (from 0 to LR when "
	                        "nothing is scaled) over W epochs (default 1)"},
	[OPT_SCHEDULE] = {"schedule", .kind = TR_KIND_KEYWORD, AT(optim.cosine, INT),
	                  .words = WORDS({"constant", 0}, {"cosine", 1}), .arg = "NAME",
	                  .help = "cosine decay to 0 (default) or constant"},
	[OPT_MOMENTUM] = {"momentum", .kind = TR_KIND_REAL, AT(optim.momentum, FLOAT), .min = 0,
	                  .max = 0.999999, .refusal = " is not in [0, 1)", .arg = "M",
	                  .help = "SGD's and LARS's momentum (default 0.9)"},
	[OPT_WEIGHT_DECAY] = {"weight-decay", .kind = TR_KIND_REAL, AT(optim.weight_decay, FLOAT),
	                      .min = 0, .max = 1, .refusal = " is not in [0, 1]", .arg = "D",
	                      .help = "L2 weight decay (default 0.0001)"},
	[OPT_LARS_TRUST] = {"lars-trust", .kind = TR_KIND_REAL, AT(optim.trust, FLOAT), .min = 1e-9,
	                    .max = 1e3, .refusal = " is not in [1e-9, 1000]", .arg = "ETA",
	                    .help = "LARS's trust coefficient (default 0.001)"},
	[OPT_SEED] = {"seed", .kind = TR_KIND_COUNT, AT(seed, U64), .lo = 0, .hi = UINT64_MAX,
	              .refusal = " is not a seed", .arg = "S",
	              .help = "initialisation and shuffling (default 1)"},

	/* ---- Running ---- */
	[OPT_DEVICE] = {"device", .kind = TR_KIND_KEYWORD, AT(device, INT),
	                .words = WORDS({"cpu", TR_DEVICE_CPU}, {"cuda", TR_DEVICE_CUDA}),
	                .section = "Running", .arg = "NAME",
	                .help = "cpu (default) or cuda (each rank uses the GPU of its local rank)"},
	[OPT_PRECISION] = {"precision", .kind = TR_KIND_KEYWORD, AT(precision, INT),
	                   .words = WORDS({"fp32", TR_PRECISION_FP32}, {"bf16", TR_PRECISION_BF16}),
	                   .arg = "P",
	                   .help = "the GEMMs' operands: fp32 (default) or bf16 (fp32 "
	                           "accumulation, fp32 master weights; CPUs with AVX512_BF16 or "
	                           "AMX-BF16, and GPUs)"},
	[OPT_THREADS] = {"threads", .kind = TR_KIND_COUNT, AT(threads, INT), .lo = 1, .hi = 1024,
	                 .refusal = " is not {lo} to {hi}", .arg = "N",
	                 .help = "OpenBLAS (and oneDNN) threads per rank (default: the cores divided among the "
	                         "node's ranks, at most the CPUs the rank is bound to; 1 under --precision bf16)"},
	[OPT_BUCKET_SIZE] = {"bucket-size", .kind = TR_KIND_SIZE, AT(bucket_bytes, SIZE), .lo = 4,
	                     .hi = 1ull << 40,
	                     .refusal = " is not a size from {lo} to {hi} (e.g. 256K, 1M)",
	                     .arg = "SIZE",
	                     .help = "gradient bytes per allreduce, from 4 (one float; 0 is refused) "
	                             "to 1T (default 256K)"},
	/* the values are tr_reduce_mode's (reducer.h, which needs MPI) */
	[OPT_REDUCE] = {"reduce", .kind = TR_KIND_KEYWORD, AT(reduce, INT),
	                .words = WORDS({"auto", 0}, {"mpi", 1}, {"shm", 2}, {"alltoall", 3}),
	                .arg = "HOW",
	                .help = "how gradients are summed: shm (the ranks of one host, in shared "
	                        "memory), alltoall (slices over MPI, any hosts), mpi (MPI's "
	                        "allreduce), or auto (default: shm when every rank is on one host "
	                        "and the device is the CPU, else alltoall)"},
	/* the values are tr_grad_comp's (reducer.h) */
	[OPT_GRAD_COMPRESSION] = {"grad-compression", .kind = TR_KIND_KEYWORD,
	                          AT(grad_compression, INT),
	                          .words = WORDS({"none", 0}, {"bf16", 1}, {"fp16", 2}),
	                          .arg = "HOW",
	                          .help = "gradients cast to 16 bits for the exchange, summed in "
	                                  "fp32: none (default), bf16, or fp16 (divided by the "
	                                  "ranks first; a step whose sum still overflows is "
	                                  "skipped, counted as grad_overflows); half the bytes. "
	                                  "With --reduce alltoall or mpi (auto picks alltoall), "
	                                  "or --strategy ps (its pushes; pulls stay fp32, bf16 under --precision bf16)"},
	[OPT_SHARD_OPTIMIZER] = {"shard-optimizer", .kind = TR_KIND_FLAG, AT(shard_optimizer, INT),
	                         .help = "with shm: each rank updates only its slices of one shared "
	                                 "copy of the parameters and optimizer state (SGD, Adam); "
	                                 "the default under --precision bf16 without --eval-every"},
	[OPT_EVAL_BATCH] = {"eval-batch", .kind = TR_KIND_COUNT, AT(eval_batch, INT), .lo = 1,
	                    .hi = RIO_LOADER_MAX_BATCH, .refusal = NOT_BATCH, .arg = "N",
	                    .help = "records per evaluation batch (default 1024)"},
	[OPT_EVAL_EVERY] = {"eval-every", .kind = TR_KIND_COUNT, AT(eval_every, U64), .lo = 1,
	                    .hi = STEPS_MAX, .refusal = NOT_STEPS, .arg = "S",
	                    .help = "also copy the parameters every S steps (under ps: every S x "
	                            "workers gradients applied) and evaluate each copy on --test "
	                            "(required) at the epoch's end, the stop or a "
	                            "--checkpoint-every checkpoint, off the clock: a learning "
	                            "curve in --metrics"},
	[OPT_METRICS] = {"metrics", .kind = TR_KIND_STRING, AT(metrics, STRING), .arg = "FILE",
	                 .help = "one JSON object per epoch (appended on resume)"},
	[OPT_TENSORBOARD] = {"tensorboard", .kind = TR_KIND_STRING, AT(tensorboard, STRING),
	                     .arg = "DIR",
	                     .help = "TensorBoard event file in DIR (rank 0), written as the run "
	                             "goes: epoch scalars, and the loss"},
	[OPT_TENSORBOARD_EVERY] = {"tensorboard-every", .kind = TR_KIND_COUNT,
	                           AT(tensorboard_every, U64), .lo = 1, .hi = STEPS_MAX,
	                           .refusal = NOT_STEPS, .arg = "S",
	                           .help = "... of every S-th step (default 20)"},

	/* ---- Strategy ---- */
	[OPT_STRATEGY] = {"strategy", .kind = TR_KIND_KEYWORD, AT(strategy, INT),
	                  .words = WORDS({"allreduce", TR_STRATEGY_ALLREDUCE}, {"ps", TR_STRATEGY_PS},
	                                 {"hybrid", TR_STRATEGY_HYBRID}),
	                  .section = "Strategy (doc/consistency.md)", .arg = "NAME",
	                  .help = "allreduce (default: every rank trains, gradients summed) or ps: "
	                          "the first S ranks are parameter servers, each holding a slice of "
	                          "the parameters and the optimizer state; the others are workers "
	                          "that read the data, pull and push; or hybrid (with --embed): the "
	                          "servers hold the tables, the workers allreduce the dense layers"},
	[OPT_SERVERS] = {"servers", .kind = TR_KIND_COUNT, AT(servers, INT), .lo = 1, .hi = 1 << 16,
	                 .refusal = " is not a number of servers ({lo} or more)", .arg = "S",
	                 .help = "parameter servers (default 1)"},
	[OPT_STALENESS] = {"staleness", .kind = TR_KIND_COUNT, AT(staleness, I64), .lo = 0,
	                   .hi = 1u << 30, .words = WORDS({"inf", TR_STALENESS_INF}),
	                   .refusal = ": want a number of steps (0, 1, ...) or inf", .arg = "K",
	                   .help = "ps: 0 bulk-synchronous (default), K >= 1 stale-synchronous (a "
	                           "worker runs at most K steps ahead of the slowest), inf "
	                           "asynchronous"},
	[OPT_STALENESS_LR] = {"staleness-lr", .kind = TR_KIND_FLAG, AT(staleness_lr, INT),
	                      .help = "ps, K >= 1: a gradient's step divided by its staleness (Zhang "
	                              "et al. 2016)"},
	[OPT_BACKUP_WORKERS] = {"backup-workers", .kind = TR_KIND_COUNT, AT(backup_workers, INT),
	                        .lo = 0, .hi = 1 << 16, .refusal = " is not a number of workers",
	                        .arg = "B",
	                        .help = "ps, K = 0: a step is applied with the first workers - B "
	                                "gradients; late ones are dropped"},
	[OPT_STRAGGLER] = {"straggler", .kind = TR_KIND_LIST, .parse = tr_parse_stragglers,
	                   .refusal = ": want RANK:FACTOR[,RANK:FACTOR...] with FACTOR from 1 to "
	                              "1000, each rank once",
	                   .arg = "R:F[,...]",
	                   .help = "rank R (a worker) takes F times its compute time per step (it "
	                           "sleeps the difference): for experiments"},
	[OPT_STRAGGLER_RANDOM] = {"straggler-random", .kind = TR_KIND_LIST,
	                          .parse = tr_parse_random_straggler,
	                          .refusal = ": want P:FACTOR:SEED with P in [0, 1] and FACTOR from "
	                                     "1 to 1000",
	                          .arg = "P:F:SEED",
	                          .help = "each worker is slow (F times) with probability P per "
	                                  "step"},

	/* ---- Model parallelism ---- */
	[OPT_PIPELINE] = {"pipeline", .kind = TR_KIND_COUNT, AT(pipeline, INT), .lo = 1,
	                  .hi = TR_MLP_MAX_LAYERS, .refusal = " is not a number of stages ({lo} to {hi})",
	                  .section = "Model parallelism (doc/parallelism.md)", .arg = "P",
	                  .help = "split the layers into P contiguous stages on successive ranks, "
	                          "balanced by compute, fed with microbatches (default 1)"},
	[OPT_STAGES] = {"stages", .kind = TR_KIND_LIST, .parse = tr_parse_stages,
	                .refusal = ": want contiguous ranges of layer indices from 0, e.g. 0-1,2-3",
	                .arg = "A-B,...",
	                .help = "each stage's layers (0 the first weight matrix), overriding the "
	                        "balanced split; P ranges"},
	[OPT_MICROBATCHES] = {"microbatches", .kind = TR_KIND_COUNT, AT(microbatches, INT),
	                      .lo = 1, .hi = 1 << 16, .refusal = " is not {lo} to {hi}", .arg = "M",
	                      .help = "microbatches a rank's batch is split into (default 4 x P, at "
	                              "most the batch; 1 with sequential or without --pipeline)"},
	[OPT_PIPE_SCHEDULE] = {"pipeline-schedule", .kind = TR_KIND_KEYWORD,
	                       AT(pipe_schedule, INT),
	                       .name_of = tr_pipe_schedule_name,
	                       .arg = "NAME",
	                       .help = "1f1b (default: one forward, one backward; at most P "
	                               "microbatches' activations held), eager-1f1b (1f1b with one "
	                               "more forward ahead: at most P + 1 held; a lower bubble "
	                               "where stages' compute varies), gpipe (all forwards, then "
	                               "all backwards), sequential (the batch whole, one stage "
	                               "busy at a time) or async (1f1b without a flush between "
	                               "batches: PipeDream-2BW, gradients one weight version "
	                               "stale)"},
	[OPT_TENSOR] = {"tensor", .kind = TR_KIND_COUNT, AT(tensor, INT), .lo = 1, .hi = 1 << 16,
	                .refusal = " is not {lo} to {hi}", .arg = "T",
	                .help = "split each hidden layer's matrix over T ranks, Megatron-LM "
	                        "pairs (default 1; --tensor is no longer short for --tensorboard)"},
	[OPT_MEMORY_LIMIT] = {"memory-limit", .kind = TR_KIND_SIZE, AT(memory_limit, I64), .lo = 1,
	                      .hi = INT64_MAX, .refusal = ": want a size (e.g. 512M, 2G)",
	                      .arg = "SIZE",
	                      .help = "bytes each rank may hold: its parameters, gradients, "
	                              "optimizer state and the activations its schedule keeps, "
	                              "planned before the first step; a layout that cannot fit is "
	                              "refused, naming the smallest --pipeline or --tensor that "
	                              "would (default: the cgroup's memory.max, or the machine's "
	                              "memory, shared by the host's ranks)"},
	[OPT_LAYOUT] = {"layout", .kind = TR_KIND_FLAG, AT(layout_only, INT),
	                .help = "print where each rank is (host, data x pipeline x tensor "
	                        "coordinates, layers) and exit"},
	/* ---- checkpoints and the rest ---- */
	[OPT_CHECKPOINT] = {"checkpoint", .kind = TR_KIND_STRING, AT(checkpoint, STRING),
	                    .section = "", .arg = "DIR",
	                    .help = "keep the run's state in DIR/checkpoint (written atomically "
	                            "after every epoch), its training seconds in DIR/clock"},
	[OPT_CHECKPOINT_EVERY] = {"checkpoint-every", .kind = TR_KIND_COUNT,
	                          AT(checkpoint_every, U64), .lo = 1, .hi = STEPS_MAX,
	                          .refusal = NOT_STEPS, .arg = "S",
	                          .help = "... and every S steps"},
	[OPT_RESUME] = {"resume", .kind = TR_KIND_FLAG, AT(resume, INT),
	                .help = "continue from DIR/checkpoint (a fresh start when there is none "
	                        "yet)"},
	[OPT_QUIET] = {"quiet", 'q', .kind = TR_KIND_FLAG, AT(quiet, INT),
	               .help = "no per-epoch lines, no progress line (shown on a terminal during "
	                       "each epoch)"},
	[OPT_HELP] = {"help", 'h', .kind = TR_KIND_HELP, .help = "this help"},
	[OPT_VERSION] = {"version", .kind = TR_KIND_VERSION, .help = "the library version"},
};

const tr_option_row *tr_option_table(void)
{
	return table;
}

/* ---- --help ---------------------------------------------------------------- */

enum { HELP_COLUMN = 29, HELP_WIDTH = 79 };

/* One row: "  -q, --quiet" or "      --train SHARDS", then its help from
 * HELP_COLUMN, wrapped at spaces to lines of HELP_WIDTH at most. */
static void usage_row(FILE *f, const tr_option_row *r)
{
	int col;
	if (r->short_name)
		col = fprintf(f, "  -%c, --%s", r->short_name, r->name);
	else
		col = fprintf(f, "      --%s", r->name);
	if (r->arg)
		col += fprintf(f, r->optional ? "[=%s]" : " %s", r->arg);
	col += fprintf(f, "%*s", col < HELP_COLUMN - 2 ? HELP_COLUMN - col : 2, "");
	for (const char *p = r->help; *p; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");
		if (p > r->help && col + 1 + (int)n > HELP_WIDTH)
			col = fprintf(f, "\n%*s", HELP_COLUMN, "") - 1;
		else if (p > r->help)
			col += fprintf(f, " ");
		col += fprintf(f, "%.*s", (int)n, p);
		p += n;
	}
	fputc('\n', f);
}

void tr_options_usage(FILE *f)
{
	fputs("Usage: mpirun -np N recordio-train --train SHARDS --x FEATURE[,FEATURE...]\n"
	      "           --y FEATURE [OPTION]...\n"
	      "Data-parallel training of an MLP classifier on TFRecord shards: every rank\n"
	      "reads its own part of the data, gradients are averaged with MPI_Allreduce (or\n"
	      "sent to parameter servers: --strategy ps). Runs as one rank without mpirun\n"
	      "too. SHARDS is a glob ('data/train-*.tfrecord', quoted), a comma-separated\n"
	      "list, a directory (its shard files) or a shard PREFIX.\n",
	      f);
	for (int i = 0; i < OPT_COUNT; i++) {
		if (table[i].section)
			fprintf(f, *table[i].section ? "\n%s:\n" : "\n%s", table[i].section);
		usage_row(f, &table[i]);
	}
	fputs("\n" RIO__SIZE_HELP
	      "\n"
	      "Exit status: 0 success, 1 data, I/O or training error, 2 usage error.\n"
	      "Example:\n"
	      "  mpirun -np 2 recordio-train --train 'data/train-*.tfrecord.lz4' \\\n"
	      "      --test 'data/test-*.tfrecord.lz4' --x image --y label\n",
	      f);
}

/* ---- the parse ------------------------------------------------------------- */

/* Appends to err at *n, as snprintf would write it there (cut to fit). */
static void append(char *err, size_t errlen, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *err, size_t errlen, size_t *n, const char *fmt, ...)
{
	size_t at = *n < errlen ? *n : errlen;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(err + at, errlen - at, fmt, ap);
	va_end(ap);
	*n += k > 0 ? (size_t)k : 0;
}

/* A bound of row r's range for a message: bytes with a unit for a size. */
static const char *bound(const tr_option_row *r, uint64_t v, char *buf, size_t size)
{
	if (r->kind == TR_KIND_SIZE)
		return rio__format_bytes(buf, size, v);
	snprintf(buf, size, "%llu", (unsigned long long)v);
	return buf;
}

/* The i-th word row r takes, and its value in *value: from the row's own
 * words, or its name_of table (value i); NULL past the last. */
static const char *word(const tr_option_row *r, int i, int64_t *value)
{
	*value = i;
	if (r->name_of)
		return r->name_of(i);
	if (!r->words)
		return NULL;
	for (int k = 0; k < i; k++) /* stop at the end, never past it */
		if (!r->words[k].name)
			return NULL;
	*value = r->words[i].value;
	return r->words[i].name;
}

/* A refusal of `value` for row r: "--NAME: 'VALUE'" and the row's refusal,
 * {lo} and {hi} replaced by its range, or ": want" and its words; returns
 * -1. */
static int refuse(const tr_option_row *r, const char *value, char *err, size_t errlen)
{
	size_t n = 0;
	char buf[32];
	int64_t v;
	append(err, errlen, &n, "--%s: '%s'", r->name, value);
	if (!r->refusal) {
		append(err, errlen, &n, ": want ");
		for (int i = 0; word(r, i, &v); i++)
			append(err, errlen, &n, "%s%s", word(r, i, &v),
			       !word(r, i + 1, &v) ? "" : !word(r, i + 2, &v) ? " or " : ", ");
		return -1;
	}
	for (const char *p = r->refusal; *p;) {
		if (!strncmp(p, "{lo}", 4) || !strncmp(p, "{hi}", 4)) {
			append(err, errlen, &n, "%s", bound(r, p[1] == 'l' ? r->lo : r->hi, buf, sizeof buf));
			p += 4;
		} else {
			int k = (int)strcspn(p + 1, "{") + 1; /* up to the next brace */
			append(err, errlen, &n, "%.*s", k, p);
			p += k;
		}
	}
	return -1;
}

/* An integer into the row's field. */
static void store_integer(const tr_option_row *r, tr_options *o, int64_t v)
{
	void *at = (char *)o + r->offset;
	switch (r->field) {
	case TR_FIELD_INT: *(int *)at = (int)v; break;
	case TR_FIELD_U64: *(uint64_t *)at = (uint64_t)v; break;
	case TR_FIELD_I64: *(int64_t *)at = v; break;
	case TR_FIELD_SIZE: *(size_t *)at = (size_t)v; break;
	default: break;
	}
}

/* The value of row r into o: 0, or -1 when it is refused. */
static int take_value(const tr_option_row *r, const char *value, tr_options *o)
{
	void *at = (char *)o + r->offset;
	if (!value) /* an optional value left out */
		return r->parse(NULL, o);
	const char *name;
	int64_t v;
	for (int i = 0; (name = word(r, i, &v)); i++)
		if (!strcmp(value, name)) {
			store_integer(r, o, v);
			return 0;
		}
	uint64_t u;
	double d;
	switch (r->kind) {
	case TR_KIND_COUNT:
		if (tr_parse_u64(value, r->lo, r->hi, &u) < 0)
			return -1;
		if (r->field == TR_FIELD_U64)
			*(uint64_t *)at = u;
		else
			store_integer(r, o, (int64_t)u);
		return 0;
	case TR_KIND_SIZE:
		if (rio__size_parse(value, r->hi, &u, NULL, 0) < 0 || u < r->lo)
			return -1;
		store_integer(r, o, (int64_t)u);
		return 0;
	case TR_KIND_REAL:
		if (tr_parse_real(value, r->min, r->max, &d) < 0)
			return -1;
		if (r->field == TR_FIELD_FLOAT)
			*(float *)at = (float)d;
		else
			*(double *)at = d;
		return 0;
	case TR_KIND_STRING: *(const char **)at = value; return 0;
	case TR_KIND_LIST: return r->parse(value, o);
	default: return -1; /* a keyword that is none of the row's words */
	}
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
	o->optim.lr = -1; /* by optimizer, in tr_options_check */
	o->optim.momentum = 0.9f;
	o->optim.beta1 = 0.9f;
	o->optim.beta2 = 0.999f;
	o->optim.eps = 1e-8f;
	o->optim.scale = 1;
	o->optim.trust = 0.001f;
	o->tensorboard_every = 20;
	o->pipeline = 1;
	o->tensor = 1;
	o->lr_scaling = 1;
	o->seed = 1;
	o->workers = 1;
	o->loader_cpus_spare = 1;
	o->shuffle = RIO_SHUFFLE_BUFFER;
	o->sharding = RIO_SHARD_AUTO;
	o->shuffle_buffer = 10000;
	o->cache = -1;
	o->remote_part_size = 8 << 20;
	o->remote_inflight = 16;
	o->remote_attempts = 10;
	o->remote_stall = 30;
	o->device = TR_DEVICE_CPU;
	o->bucket_bytes = 256 * 1024;
	o->strategy = TR_STRATEGY_ALLREDUCE;
}

/* getopt_long's view of the table: long option i returns 256 + i. */
static void getopt_tables(struct option *longs, char *shorts)
{
	*shorts++ = ':';
	for (int i = 0; i < OPT_COUNT; i++) {
		const tr_option_row *r = &table[i];
		int has = r->kind == TR_KIND_FLAG || r->kind == TR_KIND_HELP ||
		                  r->kind == TR_KIND_VERSION
		              ? no_argument
		          : r->optional ? optional_argument
		                        : required_argument;
		longs[i] = (struct option){r->name, has, NULL, 256 + i};
		if (r->short_name) {
			*shorts++ = r->short_name;
			if (has == required_argument)
				*shorts++ = ':';
		}
	}
	longs[OPT_COUNT] = (struct option){0};
	*shorts = '\0';
}

/* The row of what getopt_long returned, or -1 */
static int row_of(int code)
{
	if (code >= 256 && code < 256 + OPT_COUNT)
		return code - 256;
	for (int i = 0; code > 0 && code < 256 && i < OPT_COUNT; i++)
		if (table[i].short_name == code && code != ':' && code != '?')
			return i;
	return -1;
}

int tr_options_parse(int argc, char **argv, tr_options *o, char *err, size_t errlen)
{
	struct option longs[OPT_COUNT + 1];
	char shorts[2 * OPT_COUNT + 2];
	getopt_tables(longs, shorts);
	defaults(o);
	opterr = 0;
	optind = 0; /* glibc: a whole new scan, even after one left mid-word (-qx) */
	tr_options_given given = {{0}};
	int code;
	while ((code = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		int i = row_of(code);
		if (i < 0) {
			snprintf(err, errlen, code == ':' ? "option '%s' needs a value"
			                                  : "unknown option '%s'", argv[optind - 1]);
			return -1;
		}
		const tr_option_row *r = &table[i];
		tr_given_set(&given, i);
		if (r->kind == TR_KIND_HELP)
			return 1;
		if (r->kind == TR_KIND_VERSION)
			return 2;
		if (r->kind == TR_KIND_FLAG)
			*(int *)((char *)o + r->offset) = 1;
		else if (take_value(r, optarg, o) < 0)
			return refuse(r, optarg, err, errlen);
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (shards go after --train/--test)",
		         argv[optind]);
		return -1;
	}
	return tr_options_check(o, given, err, errlen);
}

void tr_options_free(tr_options *o)
{
	for (int i = 0; i < o->nx; i++)
		free(o->x[i]);
	o->nx = 0;
}

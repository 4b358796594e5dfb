/*
 * options_table.h — recordio-train's options as a table, for options.c (the
 * parse and --help), options_check.c (the checks between options) and the
 * unit test (tests/test_train_options.c). One row per option: its names,
 * the kind of its value, where the value goes in tr_options, its range,
 * what a refusal says and its line in --help. Private to the trainer:
 * options.h is the interface.
 */
#ifndef RIO_TRAINER_OPTIONS_TABLE_H
#define RIO_TRAINER_OPTIONS_TABLE_H

#include "options.h"

#include <stddef.h>
#include <stdint.h>

/* Each row's index, in the order --help lists them. */
typedef enum tr_option_id {
	/* Data */
	OPT_TRAIN, OPT_TEST, OPT_X, OPT_Y, OPT_EMBED, OPT_CLASSES, OPT_SHUFFLE,
	OPT_SHUFFLE_BUFFER, OPT_SHARDING, OPT_WORKERS, OPT_CACHE, OPT_SHARD_CACHE,
	OPT_SHARD_CACHE_LIMIT, OPT_REMOTE_PART, OPT_REMOTE_INFLIGHT, OPT_REMOTE_ATTEMPTS,
	OPT_REMOTE_STALL, OPT_LOADER_CPUS,
	OPT_SYNTHETIC,
	/* Model and optimisation */
	OPT_HIDDEN, OPT_BATCH, OPT_GLOBAL_BATCH, OPT_EPOCHS, OPT_MAX_STEPS, OPT_OPTIMIZER,
	OPT_LR, OPT_LR_SCALING, OPT_WARMUP, OPT_SCHEDULE, OPT_MOMENTUM, OPT_WEIGHT_DECAY,
	OPT_LARS_TRUST, OPT_SEED,
	/* Running */
	OPT_DEVICE, OPT_PRECISION, OPT_THREADS, OPT_BUCKET_SIZE, OPT_REDUCE, OPT_GRAD_COMPRESSION,
	OPT_SHARD_OPTIMIZER,
	OPT_EVAL_BATCH, OPT_EVAL_EVERY, OPT_METRICS, OPT_TENSORBOARD, OPT_TENSORBOARD_EVERY,
	/* Strategy */
	OPT_STRATEGY, OPT_SERVERS, OPT_STALENESS, OPT_STALENESS_LR, OPT_BACKUP_WORKERS,
	OPT_STRAGGLER, OPT_STRAGGLER_RANDOM,
	/* Model parallelism */
	OPT_PIPELINE, OPT_STAGES, OPT_MICROBATCHES, OPT_PIPE_SCHEDULE, OPT_TENSOR, OPT_LAYOUT,
	OPT_MEMORY_LIMIT,
	/* checkpoints and the rest */
	OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME, OPT_QUIET, OPT_HELP, OPT_VERSION,
	OPT_COUNT
} tr_option_id;

/* The options given on a command line: bit id % 64 of word id / 64. */
typedef struct tr_options_given {
	uint64_t bits[(OPT_COUNT + 63) / 64];
} tr_options_given;

static inline void tr_given_set(tr_options_given *g, int id)
{
	g->bits[id / 64] |= (uint64_t)1 << (id % 64);
}

static inline int tr_given_has(const tr_options_given *g, int id)
{
	return (int)((g->bits[id / 64] >> (id % 64)) & 1);
}

typedef enum tr_option_kind {
	TR_KIND_FLAG,    /* no value: the field (int) is set to 1                */
	TR_KIND_COUNT,   /* decimal digits, in [lo, hi]                          */
	TR_KIND_REAL,    /* a finite number (strtod's syntax), in [min, max]     */
	TR_KIND_SIZE,    /* bytes: lib/size.h's grammar, in [lo, hi]             */
	TR_KIND_KEYWORD, /* one of `words`, or of `name_of`'s names             */
	TR_KIND_STRING,  /* any text: the field points into argv                 */
	TR_KIND_LIST,    /* the row's `parse`: lists and compound values         */
	TR_KIND_HELP,    /* no value: tr_options_parse returns 1                 */
	TR_KIND_VERSION, /* no value: tr_options_parse returns 2                 */
} tr_option_kind;

/* The C type of the field a value is stored in. */
typedef enum tr_option_field {
	TR_FIELD_NONE,   /* nothing stored (help, version; lists store their own) */
	TR_FIELD_INT,    /* int, or an enum                                      */
	TR_FIELD_U64,    /* uint64_t                                             */
	TR_FIELD_I64,    /* int64_t                                              */
	TR_FIELD_SIZE,   /* size_t                                               */
	TR_FIELD_FLOAT,  /* float                                                */
	TR_FIELD_DOUBLE, /* double                                               */
	TR_FIELD_STRING, /* const char *                                         */
} tr_option_field;

/* A word an option takes and the value it stands for. A KEYWORD row takes
 * only its words; a COUNT or SIZE row takes its words besides numbers
 * (--staleness inf, --cache auto). Lists end with a NULL name. */
typedef struct tr_option_word {
	const char *name;
	int64_t value;
} tr_option_word;

typedef struct tr_option_row {
	const char *name;            /* the long name, without "--"          */
	char short_name;             /* -q, -h; 0: none                      */
	tr_option_kind kind;
	tr_option_field field;
	size_t offset;               /* of the field in tr_options           */
	uint64_t lo, hi;             /* COUNT, SIZE: the range; LIST: {hi}   */
	double min, max;             /* REAL: the range                      */
	const tr_option_word *words; /* KEYWORD; extra words of COUNT, SIZE  */
	/* LIST: 0, or -1 when the value is refused; `value` is NULL when an
	 * optional value was left out */
	int (*parse)(const char *value, tr_options *o);
	/* KEYWORD, in place of words: another part's table, the name of each
	 * value 0, 1, ... (NULL past the last), as the loader's
	 * rio_shuffle_name() */
	const char *(*name_of)(int value);
	int optional;                /* 1: --name or --name=VALUE            */
	/* what a refusal says after "--NAME: 'VALUE'", with {lo} and {hi}
	 * standing for the range (in bytes and units for a SIZE row); NULL for
	 * a KEYWORD row: ": want " and its words */
	const char *refusal;
	const char *section;         /* starts a section of --help: its title
	                              * ("" for a blank line only)          */
	const char *arg;             /* the value's name in --help           */
	const char *help;            /* one paragraph, wrapped by --help     */
} tr_option_row;

/* The table: OPT_COUNT rows, row i for id i. */
const tr_option_row *tr_option_table(void);

/* The checks between options and the defaults that depend on others, after
 * the table's parse (options_check.c): 0, or -1 with a one-line message. */
int tr_options_check(tr_options *o, tr_options_given given, char *err, size_t errlen);

#endif /* RIO_TRAINER_OPTIONS_TABLE_H */

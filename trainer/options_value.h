/*
 * options_value.h — the grammars of recordio-train's option values: whole
 * numbers, real numbers and the list forms (--x, --hidden, --embed,
 * --straggler, --straggler-random, --synthetic[=N]); sizes are lib/size.h's.
 * The table in options.c names them; each returns 0, or -1 when the value
 * is refused (the table's row says the message). And the loader's names
 * of --shuffle and --sharding, from its tables.
 */
#ifndef RIO_TRAINER_OPTIONS_VALUE_H
#define RIO_TRAINER_OPTIONS_VALUE_H

#include "options.h"

#include <stdint.h>

/* Decimal digits (no sign) in [min, max]. */
int tr_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A finite number (strtod's syntax) in [min, max]. */
int tr_parse_real(const char *s, double min, double max, double *out);

/* The list forms: each stores into o. */
int tr_parse_names(const char *s, tr_options *o);             /* --x a,b,c          */
int tr_parse_hidden(const char *s, tr_options *o);            /* --hidden 256,128   */
int tr_parse_embed(const char *s, tr_options *o);             /* --embed F:V:D,...  */
int tr_parse_stragglers(const char *s, tr_options *o);        /* --straggler R:F,...*/
int tr_parse_random_straggler(const char *s, tr_options *o);  /* P:F:SEED           */
int tr_parse_synthetic(const char *s, tr_options *o);         /* [=N]; s may be NULL */
int tr_parse_stages(const char *s, tr_options *o);            /* --stages 0-1,2-3   */

/* The loader's name of a value (loader.h: rio_shuffle_name ...), NULL
 * past the last. */
const char *tr_shuffle_name(int value);
const char *tr_sharding_name(int value);
/* A --pipeline-schedule's name (strategy.h: TR_PIPE_1F1B ...), NULL past
 * the last: the option's words and the trainer's first line. */
const char *tr_pipe_schedule_name(int value);

#endif /* RIO_TRAINER_OPTIONS_VALUE_H */

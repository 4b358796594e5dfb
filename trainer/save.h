/*
 * save.h — a run's checkpoint written (checkpoint.h has the file): every
 * rank's loader position gathered on rank 0, which fills in what every
 * strategy keeps (the model's shape, the cursor, the data's description);
 * the strategy adds its own (tensors, tables, counters: collect), and rank
 * 0 writes the file.
 */
#ifndef RIO_TRAINER_SAVE_H
#define RIO_TRAINER_SAVE_H

#include "strategy_ops.h"

/* Collective: the checkpoint written; a failure agreed on (one line,
 * every rank exits 1). */
void tr_save(const tr_parts *p, tr_strategy_state *s);

/* Collective where fn is (rank 0 alone, or every rank): the --embed tables
 * whole into rank 0's c (NULL elsewhere), buffer `which` of table t
 * fetched by fn into host (NULL off rank 0). 0; or, out of memory on rank
 * 0, -1 with a message (with `aborts`, the job is ended instead: other
 * ranks are sending). */
typedef void (*tr_fetch_table_fn)(void *ctx, int t, int which, float *host);
int tr_save_tables(const tr_parts *p, tr_ckpt *c, tr_fetch_table_fn fn, void *ctx, int aborts,
                   char *err, size_t errlen);

#endif /* RIO_TRAINER_SAVE_H */

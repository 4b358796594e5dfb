/*
 * embed_run.h — the embedding tables of a run (--embed; doc/embeddings.md),
 * on the side that trains the model (every rank under allreduce, a worker
 * under ps and hybrid): each batch's ids made unique per table, the rows
 * they need (the whole tables under allreduce; pulled from the servers
 * under ps and hybrid) mean-pooled into one more input block of the MLP,
 * and from the MLP's input gradient the rows' sparse gradients.
 *
 * Under allreduce every rank holds every table and their gradients travel
 * densely: each step zeroes and fills a gradient as large as the tables,
 * which the strategy sums over the ranks (a reducer, as the dense layers'),
 * and the optimizer updates every row, as a dense embedding in PyTorch's
 * DDP does: its cost grows with the vocabulary, not with the batch. Under
 * ps and hybrid only the batch's rows move (ps_worker.c, ps.h), and the
 * servers update only those (lazily).
 */
#ifndef RIO_TRAINER_EMBED_RUN_H
#define RIO_TRAINER_EMBED_RUN_H

#include "embed.h"
#include "loader.h"
#include "optim.h"
#include "strategy.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tr_embed_run {
	int n;                         /* tables                                */
	tr_embed_table t[TR_MAX_EMBED];
	int width;                     /* the pooled block: sum of the dims     */
	int col[TR_MAX_EMBED];         /* each table's first column in it       */
	int max_rows;
	float *block;                  /* max_rows x width, host                */
	int64_t *uniq[TR_MAX_EMBED], *pos[TR_MAX_EMBED]; /* max_rows x k each  */
	size_t nuniq[TR_MAX_EMBED];    /* of the batch in hand                  */
	const int64_t *ids[TR_MAX_EMBED]; /* ... its ids (the batch's memory)   */
	float *rows[TR_MAX_EMBED];     /* ps: the pulled rows, nuniq x dim      */
	float *rowgrad[TR_MAX_EMBED];  /* nuniq x dim                           */
	/* allreduce: every table whole, concatenated (t[i].offset), in memory
	 * lent by the parameter store */
	size_t floats;
	float *params, *grads;
	tr_optim opt;
	int whole;
} tr_embed_run;

/* The tables' descriptions alone (features, shapes, k from ids[i].length,
 * offsets in one buffer of them all): what a server needs to make its
 * rows. Returns the floats of them all. */
size_t tr_embed_run_tables(tr_embed_table *t, const tr_embed_option *opt, int n,
                           const rio_column_spec *ids);

/* The tables of the features of opt[0..n), whose k comes from
 * ids[i].length, and the scratch of batches of up to max_rows records;
 * `whole`: this rank holds them whole (allreduce, then
 * tr_embed_run_lend), else only room for the rows pulled from the servers.
 * 0 or -ENOMEM. */
int tr_embed_run_init(tr_embed_run *e, const tr_embed_option *opt, int n,
                      const rio_column_spec *ids, int max_rows, int whole);
/* Whole tables: their parameters and dense gradient (e->floats each) and
 * the optimizer's state (cfg's kind; state2 for Adam), lent; the
 * parameters made from `seed`, as the servers make their rows. 0 or
 * -EINVAL. */
int tr_embed_run_lend(tr_embed_run *e, tr_math *math, const tr_optim_config *cfg,
                      uint64_t seed, float *params, float *grads, float *state1, float *state2);
/* Frees the scratch (not the lent tables). */
void tr_embed_run_free(tr_embed_run *e);

/* The batch's ids (columns ids[0..n) of b): checked against each vocabulary
 * and made unique. -1 with "SHARD: record R: --embed F: id I is outside
 * [0, VOCAB)" in err (paths: the loader's shard paths). */
int tr_embed_run_ids(tr_embed_run *e, const rio_batch *b, int first_column,
                     const rio_shardset *shards, char *err, size_t errlen);

/* The pooled block of `rows` records, from the whole tables or from the
 * pulled rows. */
void tr_embed_run_pool(tr_embed_run *e, int rows);

/* The rows' gradients from the MLP's input gradient of the block (rows x
 * width). */
void tr_embed_run_backward(tr_embed_run *e, const float *dblock, int rows);

/* Whole tables: their dense gradient, zero but for the batch's rows, into
 * e->grads; then, once it is summed over the ranks (into `sum`, which may
 * be e->grads), one update of every row (grad_scale and step as the dense
 * layers'). */
void tr_embed_run_dense_grad(tr_embed_run *e);
void tr_embed_run_update(tr_embed_run *e, const float *sum, float grad_scale, uint64_t step);

/* Whole tables, for checkpoints (save.h's and start.h's callbacks; ctx the
 * tr_embed_run): buffer `which` (0 the parameters, 1 and 2 the optimizer's
 * state) of table t copied out to host, or in from it. */
void tr_embed_run_fetch(void *ctx, int t, int which, float *host);
void tr_embed_run_place(void *ctx, int t, int which, const float *host);

/* Server s's rows of a table of `vocab` ids: balanced, contiguous. */
void tr_embed_rows_of(int64_t vocab, int servers, int s, int64_t *lo, int64_t *hi);

#endif /* RIO_TRAINER_EMBED_RUN_H */

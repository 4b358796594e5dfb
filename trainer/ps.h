/*
 * ps.h — the parameter-server strategy (--strategy ps; doc/consistency.md).
 *
 * Ranks 0..S-1 are servers; ranks S..N-1 are workers. Server s holds a
 * balanced contiguous slice of the parameters (tr_ps_slice) and the
 * optimizer's state for it, and applies gradients; workers read the data
 * (the loader sharded over the workers only), compute gradients of the
 * whole model and exchange slices with every server by non-blocking MPI
 * point-to-point messages.
 *
 * Protocol. Every message from a worker asks for a reply: a PULL (no
 * gradient: the first message of a segment) or a PUSH (a tr_ps_msg, then
 * the gradient's slice), answered with a tr_ps_msg and the parameters'
 * slice once the consistency model allows (below). A worker's last message
 * of a segment carries TR_PS_LAST; its reply comes once every worker has
 * sent its last, so the end of a segment (an epoch, a checkpoint, the
 * last step) is a barrier at which every server holds every gradient of it.
 * A worker whose data failed sends TR_PS_FAILED with its last message: the
 * servers then answer every other worker with TR_PS_STOP, each of them ends
 * its segment at once, and the job ends with that worker's error.
 *
 * Consistency (--staleness K, clocks counted in steps within a segment):
 *   K = 0 (bulk-synchronous): a server sums the gradients of its version v
 *     in worker order, applies one update (the same sum and the same
 *     update as the allreduce strategy's, bit for bit), and answers the
 *     workers with version v + 1. With --backup-workers B the update is
 *     made with the first W - B gradients to arrive; a gradient computed
 *     from an older version arrives late and is dropped (and counted).
 *   K >= 1 (stale-synchronous, Ho et al. 2013): each gradient is applied
 *     as it arrives; a worker whose clock is c gets parameters only when
 *     every worker still in the segment has a clock of at least c - K. It
 *     always sees its own updates (its push is applied before the reply).
 *   K = inf (asynchronous): every pull is answered at once.
 * A gradient applied alone is scaled as one worker's share of the global
 * batch (1 / (rows x W), and weight decay 1 / W), so that W gradients move
 * the parameters as one synchronous step of the same global batch.
 * Staleness of a gradient, measured by the server: the worker's clock when
 * it read the parameters it was computed from, minus the slowest active
 * worker's clock then (0 under K = 0; at most K under SSP).
 */
#ifndef RIO_TRAINER_PS_H
#define RIO_TRAINER_PS_H

#include "backend.h"
#include "copies.h"
#include "embed_run.h"
#include "optim.h"
#include "reducer.h"
#include "strategy.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum {
	TR_PS_PULL = 1 << 0,      /* wants parameters, carries no gradient      */
	TR_PS_PUSH = 1 << 1,      /* carries a gradient, then wants parameters  */
	TR_PS_LAST = 1 << 2,      /* the worker's last message of the segment   */
	TR_PS_NONFINITE = 1 << 3, /* its batch or loss held a NaN or infinity  */
	TR_PS_FAILED = 1 << 4,    /* its data failed: end the job              */
	TR_PS_STOP = 1 << 5,      /* reply: another worker failed; stop        */
	TR_PS_ROWS = 1 << 6,      /* wants embedding rows: per table, the ids
	                           * (TR_PS_TAG_IDS + t), answered at once with
	                           * their rows (TR_PS_TAG_ROWS + t)           */
	TR_PS_SPARSE = 1 << 7,    /* a push also carries, per table, the ids
	                           * and the rows' gradients                   */
};

enum {
	TR_PS_TAG_MSG = 7101, TR_PS_TAG_GRAD, TR_PS_TAG_REPLY, TR_PS_TAG_PARAMS,
	TR_PS_TAG_IDS = 7200,     /* + table                                    */
	TR_PS_TAG_ROWS = 7300,    /* + table: rows pulled, or their gradients   */
};

typedef struct tr_ps_msg {
	uint32_t flags;
	uint32_t reserved;
	uint64_t clock;  /* push: the version (K = 0) or clock the gradient's
	                  * parameters had; reply: the version to push with */
	uint64_t step;   /* push: the worker's global step (the rate's)      */
	double rows;     /* push: the records of its batch                   */
} tr_ps_msg;

/* Server s's slice [*lo, *hi) of n parameters: balanced, contiguous,
 * starting at multiples of 16 floats (a cache line). */
void tr_ps_slice(size_t n, int servers, int s, size_t *lo, size_t *hi);

/* What one server counted in a segment. */
typedef struct tr_ps_stats {
	uint64_t updates;        /* optimizer updates applied                   */
	uint64_t gradients;      /* gradients in them                           */
	uint64_t dropped;        /* late gradients dropped (backup workers)     */
	uint64_t skipped;        /* gradients or steps skipped: not finite      */
	uint64_t staleness_max;
	double staleness_sum;    /* over the gradients applied                  */
	double samples;          /* records in the gradients applied            */
} tr_ps_stats;

/* A server's rows of one embedding table (--embed), [lo, hi) of its ids
 * (tr_embed_rows_of), and what it keeps to update them. */
typedef struct tr_ps_table {
	int64_t lo, hi;
	int dim;
	float *params;           /* (hi - lo) x dim                            */
	tr_optim opt;            /* over them (lazily: the rows pushed)        */
	float *opt_state[2];     /* ... its state                              */
	float *acc;              /* K = 0: the version's summed rows, compact:
	                          * acc row i is local row list[i]            */
	uint32_t *touched;       /* ... per local row, 1 + its place in acc, 0
	                          * when the version has none of it (a version
	                          * holds at most the workers' batches' ids) */
	int64_t *list;
	size_t nlist;
	int64_t **ids;           /* K = 0: per worker, its pushed ids and      */
	float **grads;           /* rows until the version is made             */
	size_t *count, *cap;
} tr_ps_table;

typedef struct tr_ps_server {
	MPI_Comm comm;
	int servers, workers;    /* workers are ranks servers .. + workers - 1 */
	size_t lo, hi, n;        /* this server's slice of the parameters      */
	tr_math *math;           /* the CPU backend                            */
	float *params;           /* n floats                                   */
	tr_optim opt;            /* over the slice                             */
	float *opt_state[2];     /* ... its state                              */
	int64_t staleness;       /* K                                          */
	int staleness_lr, backups;
	uint64_t version;        /* K = 0: updates made (skipped ones too), all
	                          * segments: the rate's step                 */
	/* per worker, this segment */
	uint64_t *clock;         /* pushes                                      */
	uint64_t *label;         /* K = 0: the version of its last push + 1, 0
	                          * before any                                */
	uint64_t *read_gap;      /* its clock minus the slowest's, at its read */
	int *waiting, *done, *have, *have_bad;
	double *have_rows;
	int ndone, nhave;
	float *slots;            /* K = 0: a gradient slot per worker          */
	float *grad;             /* K >= 1: the gradient received; K = 0: sum  */
	tr_grad_comp comp;       /* pushes in 16 bits (--grad-compression)    */
	uint16_t *crx;           /* ... a push as received                     */
	float cscale;            /* ... what it is widened times               */
	uint16_t *ptx;           /* --precision bf16: the slice rounded for a
	                          * reply (pulls in bf16), else NULL          */
	int stop;                /* a worker failed                           */
	tr_ps_stats st;          /* this segment's                             */
	uint64_t total_gradients, total_updates; /* all segments            */
	double total_samples;
	/* --eval-every: a copy of the slice every eval_every x W gradients,
	 * with what had been applied */
	uint64_t eval_every;
	tr_copies copies;
	double seconds_before;   /* training seconds of the earlier segments   */
	int ntables;             /* --embed                                    */
	tr_ps_table tab[TR_MAX_EMBED];
	/* a message's ids and rows, per table, as received */
	int64_t *rx_ids[TR_MAX_EMBED];
	float *rx_rows[TR_MAX_EMBED];
	size_t rx_n[TR_MAX_EMBED], rx_cap[TR_MAX_EMBED];
} tr_ps_server;

/* Allocates server `rank` (< servers) of a world of servers + workers over
 * nparams parameters, with the optimizer `cfg` (SGD or Adam). 0 or
 * -ENOMEM. */
int tr_ps_server_init(tr_ps_server *s, MPI_Comm comm, int servers, int workers,
                      tr_math *math, size_t nparams, const tr_optim_config *cfg,
                      int64_t staleness, int staleness_lr, int backups, uint64_t eval_every);
void tr_ps_server_free(tr_ps_server *s);
/* --embed: this server's rows of table t (embed_run.h), made from `seed` as
 * the whole table would be, and an optimizer over them (`cfg`, as the
 * dense one's). 0 or -ENOMEM. */
int tr_ps_server_add_table(tr_ps_server *s, const tr_embed_table *t, int index, uint64_t seed,
                           const tr_optim_config *cfg);

/* Serves one segment, from the workers' first pulls to the reply to their
 * last messages. Returns the lowest rank of a worker that failed, or -1.
 * -ENOMEM when a copy or pushed rows could not be kept (the run ends,
 * told by the caller). s->st holds the segment's counts. `training` 0: an
 * evaluation's (the workers pull --embed rows only), off the clock. */
int tr_ps_serve(tr_ps_server *s, int training);

/* The worker's side. */
typedef struct tr_ps_worker {
	MPI_Comm comm;
	int servers;
	size_t n;
	size_t *lo, *hi;         /* per server                                 */
	float *params;           /* host: where the replies' slices land       */
	tr_ps_msg *out, *in;     /* per server                                 */
	MPI_Request *req;        /* 4 per server                               */
	const tr_embed_run *embed; /* --embed: the tables' ids and rows        */
	double bytes;            /* sent and received since the start          */
	uint64_t *version;       /* per server, K = 0: the version the next
	                          * push is labelled with (each server makes
	                          * its own, with backup workers its own set) */
	int in_flight;
	tr_grad_comp comp;       /* pushes in 16 bits (--grad-compression)    */
	uint16_t *cgrad;         /* ... the gradient as pushed (n values)      */
	float cscale;            /* ... what it is multiplied by first         */
	uint16_t *prx;           /* --precision bf16: the pulls' parameters as
	                          * received, widened into params; else NULL */
} tr_ps_worker;

int tr_ps_worker_init(tr_ps_worker *w, MPI_Comm comm, int servers, size_t nparams,
                      float *params_host);
void tr_ps_worker_free(tr_ps_worker *w);

/* --grad-compression: pushes of 16-bit gradients (fp16: divided by the
 * `workers` first, and multiplied back by the server), summed and applied
 * in fp32 on the servers; pulls stay fp32 (bf16 under --precision bf16:
 * below). 0 or -ENOMEM. */
int tr_ps_worker_compress(tr_ps_worker *w, tr_grad_comp comp, int workers);
int tr_ps_server_compress(tr_ps_server *s, tr_grad_comp comp, int workers);
/* --precision bf16: pulls carry the parameters rounded to bf16 (half the
 * bytes; the workers compute with bf16 copies anyway, and take the
 * biases as the rounded values too); the servers' masters stay fp32.
 * Both sides or neither. 0 or -ENOMEM. */
int tr_ps_worker_pull16(tr_ps_worker *w);
int tr_ps_server_pull16(tr_ps_server *s);
/* Narrows grads_host into the 16-bit copy tr_ps_send pushes: 1 when a
 * value became an infinity (fp16's overflow; the push is then flagged
 * not finite, and skipped as a NaN is), else 0. */
int tr_ps_narrow(tr_ps_worker *w, const float *grads_host);

/* Sends `flags` (TR_PS_PULL or TR_PS_PUSH, with TR_PS_LAST and the others)
 * to every server: with TR_PS_PUSH the gradient's slices from grads_host
 * (which must stay unchanged until tr_ps_wait returns), the global step
 * and the batch's records; and posts the receives of the replies into
 * params_host. */
void tr_ps_send(tr_ps_worker *w, uint32_t flags, const float *grads_host, uint64_t step,
                double rows);
/* Waits for every server's reply: 1 when one said TR_PS_STOP, else 0. */
int tr_ps_wait(tr_ps_worker *w);

/* --embed: pulls the rows of the batch's unique ids (w->embed->uniq) from
 * the servers that hold them into w->embed->rows, and waits. With
 * TR_PS_SPARSE, tr_ps_send pushes the rows' gradients (rowgrad) the same
 * way. */
void tr_ps_pull_rows(tr_ps_worker *w);

#endif /* RIO_TRAINER_PS_H */

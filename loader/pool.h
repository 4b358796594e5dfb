/*
 * pool.h — the batch pool: the slots' memory, allocated once when the
 * loader opens (pool_memory.c), and every move of a slot, under the pool's
 * own lock (pool.c).
 *
 * The pool has prefetch + hold slots. Each slot is one batch: its record
 * table, its columns (page-aligned host memory, or pinned host memory
 * with CUDA) and, with device copies, device buffers that an asynchronous
 * copy on the pool's own stream fills. Raw batches keep their payloads in
 * an arena per slot that grows to the largest batch seen and is then reused;
 * raw batches of buffer shuffling instead own the shuffle buffer's record
 * buffers they were given (no second copy), which go back to the pool's
 * spare list when the batch is released.
 *
 * Where a slot is. A slot is in exactly one place at a time, and only the
 * calls below move it:
 *
 *   free ──take / claim / take_turn──► a producer's hands (filling)
 *   filling ──publish (FIFO) / file (by number)──► delivered
 *   filling ──put──► free                (not filled: a stop, an error)
 *   delivered ──next──► the consumer's hands ──release──► free
 *   delivered ──reset (after a stop)──► free
 *
 * Producers are the pipeline's batcher (take, publish, finish: batches in
 * the order they are published) or the placed path's workers (claim or
 * claim_batches + take_turn, then file: batches by number, filed in any
 * order, handed out strictly by number). The consumer is the thread that
 * calls rio_loader_next(). Every call here takes the pool's lock itself;
 * none is called with another lock held, and none calls out of the pool
 * while holding it, so the pool's lock is never part of a lock order.
 * Waiting calls return early (NULL, 0) once rio__pool_stop() was called.
 */
#ifndef RIO_LOADER_POOL_H
#define RIO_LOADER_POOL_H

#include "decode.h"
#include "loader.h"

#include <pthread.h>
#include <time.h>

/* A record buffer handed from the shuffle buffer to a batch and back. */
typedef struct rio__recbuf {
	uint8_t *data;
	size_t cap;
} rio__recbuf;

typedef struct rio__slot {
	rio_batch batch;         /* first member: a batch is its slot       */
	rio_batch_record *recs;  /* batch_size entries                     */
	rio_batch_column *cols;  /* ncols entries                           */
	uint8_t *arena;          /* raw payloads                            */
	size_t arena_cap, arena_used;
	rio__recbuf *owned;      /* buffer shuffling: the records' buffers  */
	size_t nowned;
	void *event;             /* CUDA: the copy's completion event       */
	struct rio__slot *next;  /* free list, or the filed batches         */
	int held;                /* handed to the consumer                  */
	uint64_t bytes;          /* payload (or decoded row) bytes          */
} rio__slot;

/* How an epoch's batches reach the consumer. */
typedef enum rio__order {
	RIO__ORDER_FIFO = 0,   /* the pipeline: in the order published       */
	RIO__ORDER_CLAIMS = 1, /* the placed path: workers claim free slots
	                        * with the next batch numbers (claim)       */
	RIO__ORDER_TURNS = 2,  /* the placed path under O_DIRECT: workers
	                        * claim batch numbers ahead (claim_batches)
	                        * and slots go to them in batch order
	                        * (take_turn)                               */
} rio__order;

typedef struct rio__pool {
	rio__slot *slots;
	size_t nslots;
	size_t batch_size;
	size_t prefetch;         /* ready batches the consumer waits for at
	                          * most (the placed path's wakeups)       */
	int pinned, device_copy;
	void *stream;            /* CUDA stream for the copies              */

	/* under mu: the slots' places, and the epoch's end */
	pthread_mutex_t mu;
	pthread_cond_t slot_cv;  /* producers: a free slot, or a turn      */
	pthread_cond_t ready_cv; /* the consumer: a batch, the end        */
	int stop;                /* producers and waits leave              */
	rio__order order;
	rio__slot *free_list;
	rio__slot **ready;       /* FIFO: a ring of nslots entries         */
	size_t ready_head, ready_count;
	rio__slot *filed;        /* CLAIMS, TURNS: filled, any order       */
	size_t nfiled;
	size_t wake_nfiled;      /* the waiting consumer is woken once this
	                          * many are filed (0: it does not wait)   */
	uint64_t next_batch;     /* CLAIMS, TURNS: the next number claimed */
	uint64_t nbatches;       /* CLAIMS, TURNS: the epoch's batches     */
	uint64_t turn;           /* TURNS: the batch the next slot goes to */
	uint64_t next_out;       /* CLAIMS, TURNS: the batch handed out next */
	size_t held;             /* batches the consumer holds             */
	int ended;               /* FIFO: the producer published its last  */
	int error;               /* < 0: the epoch failed ...               */
	uint64_t error_batch;    /* ... at this batch (CLAIMS, TURNS)      */
	rio_error err;           /* ... here                                */

	/* under mu: memory passed between threads, reused */
	rio__recbuf *spare;      /* record buffers back from released batches,
	                          * and the shuffle buffer's after an epoch */
	size_t nspare, capspare;
	/* buffer shuffling of decoded rows: rows of row_bytes that workers
	 * decode into and the shuffle buffer then holds (no copy into it),
	 * free ones here; allocated in blocks, kept until the pool is freed */
	uint8_t **free_rows;
	size_t nfree_rows, capfree_rows;
	uint8_t **row_blocks;
	size_t nrow_blocks;
} rio__pool;

/* ---- memory (pool_memory.c) ------------------------------------------- */

/* `nslots` slots of `batch_size` records (0, or an error in err). */
int rio__pool_init(rio__pool *p, size_t nslots, size_t batch_size, size_t prefetch,
                   const rio__colplan *cp, const rio_loader_opts *o, rio_error *err);
void rio__pool_free(rio__pool *p, const rio__colplan *cp);

/* Gives record buffers to the spare list (those it has no room for are
 * freed). */
void rio__pool_spare(rio__pool *p, const rio__recbuf *bufs, size_t n);
/* Takes up to `n` spare record buffers into the empty entries (data NULL)
 * of out[0..n). */
void rio__pool_spares_take(rio__pool *p, rio__recbuf *out, size_t n);

/* Decoded rows for buffer shuffling: take `n` free rows of `row_bytes`
 * (a new block when short; -ENOMEM), or give them back. */
int rio__rows_take(rio__pool *p, size_t row_bytes, uint8_t **out, size_t n);
void rio__rows_give(rio__pool *p, uint8_t *const *rows, size_t n);

/* Makes sure a raw slot's arena holds `need` more bytes (its producer's). */
int rio__slot_reserve(rio__slot *s, size_t need);

/* Starts the copy of the first `count` rows of each column to the device
 * and waits for it (on the pool's stream: the consumer never waits, as
 * the batch is queued ahead). No-op without device copies. */
int rio__pool_to_device(rio__pool *p, rio__slot *s, size_t count, const rio__colplan *cp);

/* ---- the slots' moves (pool.c) ---------------------------------------- */

/* A new epoch (every slot free or held, nothing waiting): batches reach
 * the consumer in `order`; CLAIMS and TURNS number them from `first` (a
 * resumed epoch) to `nbatches`. */
void rio__pool_epoch(rio__pool *p, rio__order order, uint64_t first, uint64_t nbatches);
/* Wakes every wait and makes the producers' waits return at once. */
void rio__pool_stop(rio__pool *p);
/* After a stop, once the producers are gone: every filed or queued batch
 * back to the free list (the consumer's keep theirs), stop cleared. */
void rio__pool_reset(rio__pool *p);

/* FIFO (the batcher): a free slot for the next batch (waits), NULL on a
 * stop; publish queues a filled one; put gives back one not filled; finish
 * ends the epoch, after the published batches, with `rc` (< 0: the error
 * the consumer gets then, placed in *err) or cleanly (0). */
rio__slot *rio__pool_take(rio__pool *p);
void rio__pool_publish(rio__pool *p, rio__slot *s);
void rio__pool_put(rio__pool *p, rio__slot *s);
void rio__pool_finish(rio__pool *p, int rc, const rio_error *err);

/* CLAIMS: up to `most` free slots and as many next batch numbers, taken
 * together (waits for one free slot): returns the count k, slots in
 * slots[0..k) for batches *first .. *first + k - 1; 0 once every batch is
 * claimed, or on a stop. */
size_t rio__pool_claim(rio__pool *p, size_t most, rio__slot **slots, uint64_t *first);
/* TURNS: up to `most` next batch numbers, without slots: returns the count
 * (0 once all are claimed, or on a stop) and the first in *first. */
uint64_t rio__pool_claim_batches(rio__pool *p, uint64_t most, uint64_t *first);
/* TURNS: batch b's slot, once the batches before it have theirs and one is
 * free (waits); NULL on a stop. */
rio__slot *rio__pool_take_turn(rio__pool *p, uint64_t b);
/* CLAIMS, TURNS: files the slots of batches first .. first + k - 1: those
 * before `failed` filled, the one at `failed` (when < k) failed with `rc`
 * (its error placed in *err: the earliest failed batch is the one the
 * consumer gets), and those after it not filled (free again). Wakes the
 * consumer when it waits for them. */
void rio__pool_file(rio__pool *p, rio__slot *const *slots, size_t k, uint64_t first,
                    size_t failed, int rc, const rio_error *err);

/* The consumer: the next batch (FIFO: in publishing order; CLAIMS, TURNS:
 * strictly by number), waiting until `deadline` (CLOCK_REALTIME; NULL: for
 * as long as it takes). Returns 1 with *out, now the consumer's; 0 at the
 * end of the epoch; the epoch's error (< 0, its place copied to *err) once
 * the batches before it are out, and at every call after; -ETIMEDOUT when
 * the deadline passed with nothing handed out. */
int rio__pool_next(rio__pool *p, const struct timespec *deadline, rio__slot **out, rio_error *err);
/* The batches the consumer holds. */
size_t rio__pool_held(rio__pool *p);
/* The consumer gives a batch back: its slot is free (a no-op for one not
 * held). */
void rio__pool_release(rio__pool *p, rio__slot *s);

/* CUDA glue (cuda.c; without CUDA these return -ENOTSUP). init makes
 * `device` current on the calling thread (for the pool's allocations) and
 * says which device was current before, for the pool to give back. */
int rio__cuda_init(int device, void **stream, int *caller_device);
void rio__cuda_fini(void *stream);
/* Makes `device` current for the calling thread (the copying threads; the
 * caller's own device again after open); -1 does nothing. */
int rio__cuda_set_device(int device);
int rio__cuda_host_alloc(void **p, size_t size);
void rio__cuda_host_free(void *p);
int rio__cuda_device_alloc(void **p, size_t size);
void rio__cuda_device_free(void *p);
int rio__cuda_event_create(void **ev);
void rio__cuda_event_destroy(void *ev);
int rio__cuda_copy_async(void *dst, const void *src, size_t size, void *stream);
int rio__cuda_record_and_wait(void *ev, void *stream);

#endif /* RIO_LOADER_POOL_H */

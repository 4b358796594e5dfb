/*
 * pool.h — batch memory, allocated once when the loader opens.
 *
 * The pool has prefetch + hold slots. Each slot is one batch: its record
 * table, its columns (page-aligned host memory, or pinned host memory
 * with CUDA) and, with device copies, device buffers that an asynchronous
 * copy on the pool's own stream fills. Raw batches keep their payloads in
 * an arena per slot that grows to the largest batch seen and is then reused;
 * raw batches of buffer shuffling instead own the shuffle buffer's record
 * buffers they were given (no second copy), which go back to the pool's
 * spare list when the batch is released.
 * A slot is in exactly one place at a time: the free list, the batcher's
 * hands, the ready queue, or the consumer's hands.
 */
#ifndef RIO_LOADER_POOL_H
#define RIO_LOADER_POOL_H

#include "decode.h"
#include "loader.h"

/* A record buffer handed from the shuffle buffer to a batch and back. */
typedef struct rio__recbuf {
	uint8_t *data;
	size_t cap;
} rio__recbuf;

typedef struct rio__slot {
	rio_batch batch;
	rio_batch_record *recs;  /* batch_size entries                     */
	rio_batch_column *cols;  /* ncols entries                           */
	uint8_t *arena;          /* raw payloads                            */
	size_t arena_cap, arena_used;
	rio__recbuf *owned;      /* buffer shuffling: the records' buffers  */
	size_t nowned;
	void *event;             /* CUDA: the copy's completion event       */
	struct rio__slot *next;  /* free list                               */
	int held;                /* handed to the consumer                  */
	uint64_t bytes;          /* payload (or decoded row) bytes          */
} rio__slot;

typedef struct rio__pool {
	rio__slot *slots;
	size_t nslots;
	size_t batch_size;
	rio__slot *free_list;
	rio__slot **ready;       /* FIFO ring of nslots entries             */
	size_t ready_head, ready_count;
	int pinned, device_copy;
	void *stream;            /* CUDA stream for the copies              */
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

int rio__pool_init(rio__pool *p, size_t nslots, size_t batch_size, const rio__colplan *cp,
                   const rio_loader_opts *o, rio_error *err);
void rio__pool_free(rio__pool *p, const rio__colplan *cp);

/* Moves a slot's owned record buffers to the spare list (-ENOMEM: freed). */
void rio__slot_disown(rio__pool *p, rio__slot *s);

/* Gives record buffers to the spare list (-ENOMEM: freed). */
void rio__pool_spare(rio__pool *p, const rio__recbuf *bufs, size_t n);

/* Decoded rows for buffer shuffling (under the loader's lock): take `n`
 * free rows of `row_bytes` (a new block when short; -ENOMEM), or give them
 * back. */
int rio__rows_take(rio__pool *p, size_t row_bytes, uint8_t **out, size_t n);
void rio__rows_give(rio__pool *p, uint8_t *const *rows, size_t n);

/* Makes sure a raw slot's arena holds `need` more bytes. */
int rio__slot_reserve(rio__slot *s, size_t need);

/* Starts the copy of the first `count` rows of each column to the device
 * and waits for it (on the pool's stream: the consumer never waits, as
 * the batch is queued ahead). No-op without device copies. */
int rio__pool_to_device(rio__pool *p, rio__slot *s, size_t count, const rio__colplan *cp);

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

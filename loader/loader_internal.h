/*
 * loader_internal.h — the loader's shared state, seen by its parts:
 * plan.c (what to read this epoch), worker.c (reading, checking and decoding
 * chunks), batcher.c (ordering, shuffling and filling batches), placed.c
 * (the placed path), pool.c (the batch slots), loader.c (open and close),
 * epoch.c (an epoch's threads and batches), state.c (saved positions) and
 * report.c (statistics).
 *
 * The flow (doc/loader.md draws it):
 *   plan: tasks 0..T-1  →  workers claim tasks in order, each fills one of
 *   its own chunks  →  batcher takes chunks in task order, shuffles, copies
 *   into a pool slot  →  ready queue  →  rio_loader_next()  →  release.
 * One mutex guards the shared counters and lists; each waiting side has its
 * own condition variable.
 */
#ifndef RIO_LOADER_INTERNAL_H
#define RIO_LOADER_INTERNAL_H

#include "frame_scan.h"
#include "internal.h"
#include "loader.h"
#include "io.h"
#include "dataset.h"
#include "route.h"
#include "plan.h"
#include "pool.h"
#include "decode.h"
#include "elastic.h"

#include <pthread.h>

/* Chunks per worker: one being filled while the batcher drains another. */
#define RIO__CHUNKS_PER_WORKER 2

/* One delivered record inside a chunk: its payload is at buf + off (an
 * offset, as the buffer may move while the chunk fills); decoded, its row
 * is rows + i * row_bytes. */
typedef struct rio__chunk_rec {
	size_t off;
	size_t size;
	uint32_t shard;
	uint64_t index;
} rio__chunk_rec;

/* A worker's output for one task. Owned by its worker; lent to the batcher
 * between "done" and "returned". */
typedef struct rio__chunk {
	struct rio__worker *owner;
	uint64_t task;          /* task number in the epoch's plan           */
	uint8_t *buf;           /* bytes read (raw records point here)      */
	size_t cap;
	rio__chunk_rec *recs;
	size_t nrec, rec_cap;
	uint8_t *rows;          /* decoded rows, nrec * row_bytes            */
	size_t rows_cap;        /* in rows                                   */
	int row_ptrs;           /* buffer shuffling of decoded rows: record
	                         * i's row is rowp[i], a row of the pool's
	                         * that the shuffle buffer takes over (the
	                         * batcher sets it NULL); rows is unused    */
	uint8_t **rowp;
	size_t rowp_cap;
	int huge;               /* the buffer is backed by transparent huge
	                         * pages (chunk.c): under opts.direct, and
	                         * as a read-ahead claim's (placed.c)      */
	int own_recs;           /* buffer shuffling of raw records: record i
	                         * is copied into own[i] (rio__chunk_own()),
	                         * a buffer the shuffle buffer and then a
	                         * batch take over (the batcher empties it) */
	rio__recbuf *own;
	size_t own_cap;
	uint64_t extra;         /* SKIP: records past those the index lists
	                         * (skipped too: the file holds more)        */
	int index_mismatch;     /* the stream and its .idx disagree          */
	uint64_t file_bytes;
	int lent;               /* handed to the batcher                     */
	int dead;               /* a compressed piece's data CRC failed here:
	                         * the piece ends (the batcher drops its later
	                         * chunks, which may have gone on)           */
	int error;              /* < 0: the task failed (err says where)    */
	rio_error err;
	struct rio__chunk *next; /* in the loader's done list              */
} rio__chunk;

typedef struct rio__worker {
	struct rio_loader *l;
	pthread_t thread;
	int started;
	rio__io *io;
	rio__chunk chunks[RIO__CHUNKS_PER_WORKER];
	int free_chunks;        /* chunks not lent to the batcher            */
	void *places;           /* placed path: scratch per record         */
	size_t nplaces;
	rio_error err;          /* placed path: this batch's error          */
	uint64_t file_bytes;    /* placed path: bytes read for batches not
	                         * filed yet (counted in stats when filed)  */
} rio__worker;

/* A compressed piece is read by one reader that its tasks pass along in
 * order (a stream cannot be split). */
typedef struct rio__piece_stream {
	struct rio__istream *in; /* the decompressing stream, while open     */
	int fd;
	int ended;              /* the stream ended (or damage stopped it)   */
	uint64_t next_seq;      /* the task sequence number that may go next */
	uint64_t pos;           /* the record number the stream gives next   */
	uint64_t base;          /* stream offset of the next byte to parse   */
	uint8_t *carry;         /* bytes read past the last task's records   */
	size_t ncarry, capcarry;
	int busy;               /* a worker claimed a task and holds (or
	                         * waits for) the turn                       */
	struct rio__worker *owner; /* the worker that claimed the last one  */
} rio__piece_stream;

struct rio_loader {
	rio_loader_opts o;
	rio_error err;
	rio__dataset ds;        /* shards, counts, indexes, this rank's pieces */
	rio__colplan cols;      /* decoding: the row layout (ncols == 0: raw)  */
	int use_uring;
	rio__route route;       /* the epoch's path and reading: chosen at its
	                         * start (rio__route_choose), nowhere else  */
	int routed;             /* an epoch was started: route is its        */

	/* the epoch being delivered */
	uint64_t epoch;
	uint64_t position;      /* records handed out in this epoch           */
	uint64_t batches_out;   /* batches handed out in this epoch           */
	int running;            /* threads started for this epoch            */
	int finished;           /* this epoch ended (next() returned 0)     */
	uint64_t resume_skip;   /* records to discard at the start (resume)  */
	uint64_t epoch_skip;    /* what the running epoch's threads took of it */
	rio__plan plan;
	rio__piece_stream *streams; /* one per piece (compressed shards)    */
	struct rio__parts *parts; /* remote shards in shard order: the
	                         * epoch's bytes read ahead (parts.h,
	                         * rio__placed_parts), or NULL             */

	/* threads: the pipeline's tasks, chunks and piece streams, the
	 * statistics and the warning are under mu (the batch slots are the
	 * pool's, under its own lock) */
	pthread_mutex_t mu;
	pthread_cond_t work_cv;  /* workers: a task, a chunk or a turn      */
	pthread_cond_t done_cv;  /* batcher: a chunk is done                */
	int stop;                /* workers and batcher: leave now          */
	uint64_t next_task;      /* the next task a pipeline worker claims  */
	rio__chunk *done;        /* chunks done, not yet taken by batcher   */
	rio__worker *workers;
	int nworkers;
	pthread_t batcher;
	int batcher_started;
	void *cpuset;            /* opts.cpus as a cpu_set_t, or NULL        */

	/* batches: the slots, where each is, and the epoch's end (pool.h) */
	rio__pool pool;

	/* statistics (under mu; file_bytes apart, counted by every reading
	 * thread without a lock: rio__count_file_bytes) */
	rio_loader_stats stats;
	uint64_t file_bytes;
	char warning[640];       /* the first warning ("" while none)       */

	/* elastic resume (elastic.h): while stages.n > 0 the epoch in progress
	 * goes on from stages at other world sizes, ds.pieces and
	 * ds.rank_records are this rank's share of its rest, and the usual
	 * ones wait here until the epoch ends */
	rio__stages stages;
	rio__piece *usual_pieces;
	size_t usual_npieces;
	uint64_t usual_records;
};

/* affinity.c: opts.cpus checked and copied at open (the message in
 * l->err), freed at close; an epoch's threads started on them (0, or
 * a negative errno). */
int rio__cpus_init(rio_loader *l);
void rio__cpus_free(rio_loader *l);
int rio__thread_start(rio_loader *l, pthread_t *t, void *(*fn)(void *), void *arg);

/* report.c: counts an .idx that disagreed with its shard and keeps the
 * first such message for rio_loader_warning(); under l->mu once threads
 * run. */
void rio__loader_warn(struct rio_loader *l, const char *text);

/* epoch.c: stops the epoch's threads wherever they are and puts every
 * chunk, slot and stream back where an epoch starts (batches the consumer
 * holds stay valid); nothing when no epoch runs. */
void rio__epoch_stop(struct rio_loader *l);
/* Ends an elastic epoch's share (threads stopped): the usual pieces back. */
void rio__epoch_elastic_end(struct rio_loader *l);
/* The rank's records in an ordinary epoch. */
uint64_t rio__usual_records(const struct rio_loader *l);

/* The descriptor the epoch reads shard s through: its O_DIRECT one when
 * the route reads with O_DIRECT (route.h) and the shard has one. */
static inline int rio__shard_fd(const struct rio_loader *l, const rio__shard *s)
{
	return l->route.reading == RIO__READ_DIRECT && s->src.fd_direct >= 0 ? s->src.fd_direct
	                                                                     : s->src.fd;
}

/* Counts bytes read from the files (stats.file_bytes), from any thread. */
static inline void rio__count_file_bytes(struct rio_loader *l, uint64_t n)
{
	__atomic_fetch_add(&l->file_bytes, n, __ATOMIC_RELAXED);
}

/* worker.c: the worker thread; runs tasks until none are left or stop. */
void *rio__worker_main(void *arg);
int rio__worker_init(rio__worker *w, struct rio_loader *l);
void rio__worker_free(rio__worker *w);

/* chunk.c: a chunk's memory and records. Grows the buffer to `need` bytes
 * keeping the first `keep`; appends a record (payload at buf + off);
 * decodes the last record into its row (a mismatch drops it: counted under
 * SKIP, an error under FAIL). */
int rio__chunk_grow(rio__chunk *c, size_t keep, size_t need);
int rio__chunk_add(rio__chunk *c, const rio__colplan *cp, size_t off, size_t size, uint32_t shard,
                   uint64_t index);
int rio__chunk_decode_last(rio__chunk *c, struct rio_loader *l, const char *path,
                           uint64_t offset);
/* With own_recs: copies each record into its own buffer (spares of the
 * pool's, else new), by the worker, so that the batcher only moves
 * pointers. 0 or -ENOMEM. */
int rio__chunk_own(rio__chunk *c, struct rio_loader *l);
/* Where record i's decoded row goes (with row_ptrs, a pool row taken
 * when the slot has none); NULL when out of memory. */
uint8_t *rio__chunk_row(rio__chunk *c, struct rio_loader *l, size_t i);

/* piece_stream.c: runs a task of a compressed piece into chunk c. */
int rio__run_compressed(rio__worker *w, rio__chunk *c, const rio__task *t);
/* Closes a compressed piece's stream (its carry buffer stays for reuse). */
void rio__piece_stream_close(rio__piece_stream *ps);

/* batcher.c: the batcher thread. */
void *rio__batcher_main(void *arg);

/* Checks the whole frame at p, avail bytes being all there are
 * (frame_scan.h): RIO__FRAME_OK with *len set, or the damage. */
static inline int rio__loader_frame(const struct rio_loader *l, const uint8_t *p, size_t avail,
                                    uint64_t *len)
{
	return rio__frame_check(p, avail, 1, l->o.max_record_size, l->o.verify_crc, len);
}

/* The same for a frame read at an index entry of `framed` bytes
 * (rio__frame_check_entry()): RIO_EBADINDEX when it is not that size. */
static inline int rio__loader_frame_entry(const struct rio_loader *l, const uint8_t *p,
                                          size_t avail, uint64_t framed, uint64_t *len)
{
	return rio__frame_check_entry(p, avail, framed, l->o.max_record_size, l->o.verify_crc,
	                              len);
}

/* placed.c: the placed path's worker thread (its plan: rio__plan_batches). */
void *rio__placed_main(void *arg);
/* placed.c: the records a worker of the placed path claims and reads
 * ahead at once (O_DIRECT, remote shards), or 0 when its workers fill
 * one batch at a time; the pool then hands out slots in TURNS, not
 * CLAIMS (pool.h). For the epoch about to start (l->route set). */
uint64_t rio__placed_ahead(const struct rio_loader *l);
/* placed.c: l->parts for the epoch about to start (its plan's batches from
 * `first` on), or NULL where it reads no remote shards in shard order. */
void rio__placed_parts(struct rio_loader *l, uint64_t first);

#endif /* RIO_LOADER_INTERNAL_H */

/*
 * loader.h — the recordio loader: the public interface, and its manual.
 *
 * The loader turns a set of TFRecord shards into a stream of batches for one
 * rank of a data-parallel job: it picks this rank's part of the data, reads
 * it with io_uring (or pread), checks every CRC, decompresses, decodes
 * tf.train.Example records into dense columns, shuffles, and fills batches
 * ahead of the consumer in a pool of page-aligned (or, with CUDA, pinned)
 * buffers. It is part of librecordio (link with `pkg-config --libs
 * recordio`).
 *
 * Lifecycle
 *   rio_loader_opts o; rio_loader_opts_init(&o);
 *   o.batch_size = 128; o.shuffle = RIO_SHUFFLE_BUFFER; o.seed = 42;
 *   rio_loader *l;
 *   if (rio_loader_open(&l, "data/train-*.tfrecord", &o) < 0) ... message
 *       in rio_loader_error(l) (l is set even on failure; close it).
 *   for (;;) {                                   // one epoch
 *       rio_batch *b;
 *       while ((rc = rio_loader_next(l, &b)) == 1) {
 *           ... use b->records or b->columns ...
 *           rio_loader_release(l, b);
 *       }
 *       if (rc < 0) ... error (rio_loader_error(l)->message)
 *       // rc == 0: the epoch ended; the next call starts epoch + 1
 *   }
 *   rio_loader_close(l);
 *
 * Threads
 *   Workers (opts.workers threads) read, verify, decompress and decode
 *   chunks of records; one batcher thread puts them in order, shuffles and
 *   fills batches; the consumer takes ready batches with rio_loader_next().
 *   A loader is used from one consumer thread; two loaders in one process
 *   are independent (no global state). doc/loader.md draws the queues.
 *
 * Determinism
 *   The records a rank gets, and their order, depend only on the seed, the
 *   epoch, the rank, the world size, the data and the options: never on the
 *   number of workers or on timing. Across the ranks of a world, every
 *   record appears exactly once per epoch (before remainders are dropped).
 *
 * Memory
 *   Bounded whatever the size of the dataset: the batch pool (prefetch +
 *   held batches), the workers' chunk buffers, and the shuffle buffer. The
 *   indexes cost 8 bytes per 64 records, or 12 bytes per record where every
 *   record's place is kept: global shuffling, and the placed path (no or
 *   global shuffle over uncompressed shards under RIO_DAMAGE_FAIL, where
 *   workers read each batch straight into its memory, without a copy).
 *
 * Errors
 *   As in recordio.h: negative errno or RIO_E* codes; rio_loader_error()
 *   keeps a one-line message naming the shard, offset and record. An error
 *   in a worker comes out of rio_loader_next() as its code, after the
 *   batches before it; the loader never prints, exits or hangs on it.
 */
#ifndef RECORDIO_LOADER_H
#define RECORDIO_LOADER_H

#include "recordio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Decoding spec: which Example features become which dense columns          */
/* ------------------------------------------------------------------------ */

typedef enum rio_dtype {
	RIO_DTYPE_U8 = 0,  /* uint8: from a bytes feature of `length` bytes   */
	RIO_DTYPE_F32 = 1, /* float: from a float list, an int64 list (cast),
	                    * or a bytes feature (each byte as a number);
	                    * multiplied by `scale` when scale != 0          */
	RIO_DTYPE_I64 = 2, /* int64: from an int64 list                       */
	RIO_DTYPE_BF16 = 3, /* bfloat16, as uint16_t bit patterns (the upper
	                    * half of a float): from the same features as
	                    * f32, the f32 value (scaled) rounded to nearest,
	                    * ties to even, as it is decoded; too large
	                    * becomes inf, NaN stays NaN. Half of f32's
	                    * bytes in the pool, the pinned copies and on
	                    * the bus. Widen with (uint32_t)v << 16.       */
} rio_dtype;

/* "u8", "f32", "i64", "bf16"; bytes per element: 1, 4, 8, 2. */
RIO_API const char *rio_dtype_name(rio_dtype t);
RIO_API size_t rio_dtype_size(rio_dtype t);

/* One column: feature `name` holding exactly `length` values of `type`.
 * rio_loader_open() refuses (-EINVAL, naming the column) an empty name or
 * one without its NUL within the array, an unknown type, and a length
 * outside 1 to RIO_LOADER_MAX_COLUMN_LENGTH. */
typedef struct rio_column_spec {
	char name[128];
	rio_dtype type;
	size_t length;
	float scale; /* f32 and bf16 only: 0 (default) means 1 */
} rio_column_spec;

/* Parses "name:type:length[:scale],..." (e.g. "image:f32:784:0.00392157,
 * label:i64:1"; "image:bf16:784:0.00392157" for bf16) into a malloc'd array of *n specs (free it with free()).
 * Returns 0, or -EINVAL with a message naming the bad item in `err` (may be
 * NULL). */
RIO_API int rio_column_spec_parse(const char *text, rio_column_spec **specs, size_t *n,
                                  rio_error *err);

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum rio_shuffle {
	RIO_SHUFFLE_NONE = 0,   /* the rank's records in shard order          */
	RIO_SHUFFLE_BUFFER = 1, /* tf.data's scheme: the rank's shards (pieces)
	                         * in an order shuffled per epoch, `interleave`
	                         * of them read at once in turns of one chunk,
	                         * through a shuffle buffer of `shuffle_buffer`
	                         * records. Sequential reads.                */
	RIO_SHUFFLE_GLOBAL = 2, /* an exact permutation of all the rank's
	                         * records per epoch, read with batched random
	                         * reads. Needs uncompressed shards.          */
} rio_shuffle;

typedef enum rio_sharding {
	RIO_SHARD_AUTO = 0,    /* RECORDS when every shard has an .idx or there
	                        * are fewer shards than ranks, else FILES     */
	RIO_SHARD_FILES = 1,   /* rank r takes shards r, r + W, r + 2W, ...
	                        * (-EINVAL from open with fewer shards than
	                        * ranks: some would have none)              */
	RIO_SHARD_RECORDS = 2, /* rank r takes the r-th of W contiguous,
	                        * balanced ranges of all records (sizes differ
	                        * by at most one)                            */
} rio_sharding;

typedef enum rio_io_backend {
	RIO_IO_AUTO = 0,  /* io_uring when it works here, else pread; the
	                   * environment variable RIO_LOADER_IO=pread|uring
	                   * overrides AUTO                               */
	RIO_IO_URING = 1, /* io_uring (-ENOSYS from open when unavailable)  */
	RIO_IO_PREAD = 2,
} rio_io_backend;

/* How uncompressed shards are read (opts.reading). Whichever it is, the
 * records, their bytes and their order are the same. */
typedef enum rio_reading {
	RIO_READ_AUTO = 0,     /* the loader picks, at the start of each epoch,
	                        * from whether the shards are in the page
	                        * cache (doc/loader.md, "Choosing the path"):
	                        * shuffled and resident, MAP; in shard order and
	                        * not resident, DIRECT (where the file system
	                        * takes O_DIRECT); else BUFFERED              */
	RIO_READ_BUFFERED = 1, /* reads through the page cache               */
	RIO_READ_MAP = 2,      /* views into mappings of the shards: what
	                        * opts.map says (map = 1 is this)           */
	RIO_READ_DIRECT = 3,   /* O_DIRECT: what opts.direct says (direct = 1
	                        * is this)                                  */
} rio_reading;

/* The options' names, one table each, as recordio-bench, recordio-train
 * and the Python Loader take them:
 *   shuffle   "none", "buffer", "global"   (RIO_SHUFFLE_NONE ... GLOBAL)
 *   sharding  "auto", "files", "records"   (RIO_SHARD_AUTO ... RECORDS)
 *   io        "auto", "uring", "pread"     (RIO_IO_AUTO ... PREAD)
 *   reading   "auto", "buffered", "map", "direct" (RIO_READ_AUTO ... DIRECT)
 * _name() gives a value's name, NULL for a value outside the enum. _parse()
 * takes exactly those names (lower case): 0 with *out set, or -EINVAL
 * (*out untouched) for anything else, NULL included, with the message
 * "'NAME': want none, buffer or global" (listing them all) in `err` (may
 * be NULL) for the caller to prefix with its option's name. */
RIO_API const char *rio_shuffle_name(rio_shuffle s);
RIO_API int rio_shuffle_parse(const char *name, rio_shuffle *out, rio_error *err);
RIO_API const char *rio_sharding_name(rio_sharding s);
RIO_API int rio_sharding_parse(const char *name, rio_sharding *out, rio_error *err);
RIO_API const char *rio_io_name(rio_io_backend b);
RIO_API int rio_io_parse(const char *name, rio_io_backend *out, rio_error *err);
RIO_API const char *rio_reading_name(rio_reading r);
RIO_API int rio_reading_parse(const char *name, rio_reading *out, rio_error *err);

/* The ranges rio_loader_open() accepts (outside them: -EINVAL, with a
 * message naming the option). recordio-bench and recordio-train check their
 * options against these same limits, so a value one accepts the others do. */
#define RIO_LOADER_MAX_BATCH (1u << 24)          /* batch_size: 1 to this    */
#define RIO_LOADER_MAX_WORKERS 256               /* workers: 1 to this       */
#define RIO_LOADER_MAX_PREFETCH 4096             /* prefetch: 0 (automatic) to
                                                  * this; hold: 1 to this   */
#define RIO_LOADER_MAX_SHUFFLE_BUFFER (1u << 30) /* shuffle_buffer: 1 to this */
#define RIO_LOADER_MAX_INTERLEAVE 256            /* interleave: 1 to this    */
#define RIO_LOADER_MIN_CHUNK_BYTES 4096          /* chunk_bytes: this or more */
#define RIO_LOADER_MAX_QUEUE_DEPTH 4096          /* queue_depth: 1 to this   */
#define RIO_LOADER_MIN_READ_SIZE 4096            /* read_size: from this ... */
#define RIO_LOADER_MAX_READ_SIZE (1u << 30)      /* ... to this              */
#define RIO_LOADER_MAX_WORLD (1 << 24)           /* world: 1 to this         */
#define RIO_LOADER_MAX_COLUMN_LENGTH (1u << 30)  /* a column's length: 1 to
                                                  * this (values per record;
                                                  * the spec parser's limit
                                                  * too)                    */

typedef struct rio_loader_opts {
	/* the rank's part of the data */
	int rank;  /* -1 (default): from the environment (OMPI_COMM_WORLD_RANK,
	            * PMI_RANK, SLURM_PROCID), else 0                      */
	int world; /* -1 (default): OMPI_COMM_WORLD_SIZE, PMI_SIZE,
	            * SLURM_NTASKS, else 1                                 */
	rio_sharding sharding;

	/* batches */
	size_t batch_size;  /* records per batch (default 32)              */
	int drop_remainder; /* 1: the last, short batch of an epoch is not
	                     * delivered (default 0)                       */

	/* order */
	rio_shuffle shuffle;   /* default NONE                                */
	uint64_t seed;         /* default 0                                   */
	size_t shuffle_buffer; /* BUFFER: records held (default 10000)        */
	size_t interleave;     /* BUFFER: pieces read at once (default 4)     */

	/* decoding: NULL / 0 delivers raw payloads in batch->records */
	const rio_column_spec *columns;
	size_t ncolumns;

	/* threads and memory */
	int workers;         /* reader/decoder threads (default 2)           */
	size_t prefetch;     /* ready batches queued ahead; 0 (default):
	                      * automatic, 4 batches, or more for small ones
	                      * so that about 512 records are queued ahead
	                      * (up to 16 batches: with small batches the
	                      * threads' wakeups, not the bytes, would set
	                      * the pace)                                   */
	size_t hold;         /* batches the consumer may hold unreleased at
	                      * once (default 2); the pool has prefetch + hold
	                      * batches                                      */
	size_t chunk_bytes;  /* a worker's unit of reading (default 1 MiB)   */

	/* I/O */
	rio_io_backend io;
	unsigned queue_depth; /* io_uring entries per worker (default 128)  */
	size_t read_size;     /* bytes per read request (default 256 KiB)   */
	rio_reading reading;  /* AUTO (default): the loader picks, unless
	                       * the environment variable
	                       * RIO_LOADER_READING names one; BUFFERED, MAP
	                       * or DIRECT: that one (map = 1 and direct = 1
	                       * say MAP and DIRECT too; -EINVAL from open
	                       * when they disagree with reading).
	                       * rio_loader_route() says what an epoch took */
	int direct;           /* 1: O_DIRECT for uncompressed shards (reads
	                       * aligned to 4 KiB; with io_uring into a
	                       * registered buffer)                        */
	int map;              /* 1: shuffled (BUFFER, GLOBAL), uncompressed
	                       * shards are mapped read-only (mmap) and,
	                       * under RIO_DAMAGE_FAIL, nothing is read or
	                       * copied: a raw batch's records are views into
	                       * the mappings (valid until the loader is
	                       * closed, even after the batch is released),
	                       * a decoded batch is decoded straight from
	                       * them, the CRCs are checked in place. BUFFER
	                       * shuffling then runs the order its shuffle
	                       * buffer gives as a permutation (the same
	                       * order as without map, and no buffer of
	                       * records: 8 bytes a record instead). Under
	                       * SKIP, GLOBAL copies from the mappings and
	                       * BUFFER reads. From the page cache about
	                       * 1.4-2x the bytes/s of reads (no system call
	                       * per record). No effect in shard order
	                       * (NONE), where reads into the batch are
	                       * faster than views, except with `cache`
	                       * (which serves plain shards, mapped, and
	                       * decompressed ones alike). The costs: the mapped
	                       * pages count in the process's RSS, up to the
	                       * shards' size (clean file pages, which the
	                       * kernel can reclaim, but which a cgroup limit
	                       * counts), and a shard cut short while the
	                       * loader has it mapped kills the process with
	                       * SIGBUS instead of an error (a shard shorter
	                       * at open is an error naming the file and
	                       * offset, as with reads). Hence off by
	                       * default (doc/loader.md); not with direct
	                       * (default 0)                               */
	uint64_t cache;       /* bytes (0, the default: off). When the shards
	                       * this rank reads are compressed (gzip, zlib,
	                       * LZ4) and hold at most `cache` bytes
	                       * decompressed, rio_loader_open() decompresses
	                       * each whole into memory once (the shards in
	                       * parallel, `workers` threads) and every epoch
	                       * is then served from there as from mapped
	                       * uncompressed shards (see map): no system
	                       * call, no decompression, raw records are views
	                       * into the copies (valid until close), the data
	                       * CRCs checked once, as the copies are made
	                       * (nothing writes to them after). With
	                       * columns, uncompressed shards are read into
	                       * memory too (in BUFFER order: in NONE order
	                       * the placed path reads them as they lie),
	                       * and when the rows fit, each record is
	                       * decoded once, as it is cached, and batches
	                       * are filled from the decoded rows with no
	                       * parsing (the copies freed).
	                       * The same records, bytes, values and order
	                       * as without it for the same seed, so results
	                       * do not change.
	                       * All or nothing: when they do not fit, when a
	                       * stream cannot be decompressed whole, its
	                       * records are not where its .idx says or one's
	                       * data CRC is wrong, nothing is cached and the
	                       * files are read as without the option (which
	                       * then reports the damage, after the same
	                       * batches); stats.cache_bytes says what is
	                       * held. Applies
	                       * under RIO_DAMAGE_FAIL, in NONE and BUFFER
	                       * order (GLOBAL needs uncompressed shards
	                       * anyway), not with direct, and, without
	                       * columns, where every uncompressed shard the
	                       * rank needs is mapped (map). An epoch resumed
	                       * at another world size
	                       * (rio_loader_state_restore_all) reads the
	                       * files; the ordinary epochs after it use the
	                       * cache again (unless that resume made the rank
	                       * open shards it did not read, files sharding:
	                       * then the files are read from then on). Memory:
	                       * the decompressed bytes plus 12 bytes per
	                       * record of the index, freed at close        */

	/* damage */
	int verify_crc;              /* 1 (default): check both CRCs. 0:
	                              * skip the data CRC only; the length
	                              * CRC, the length limit and
	                              * truncation are always checked      */
	rio_damage_policy on_damage; /* FAIL (default) or SKIP (REPORT is
	                              * taken as SKIP): a damaged record, or
	                              * one that does not match the columns,
	                              * is skipped and counted. Under SKIP,
	                              * in every shuffle mode, with or
	                              * without .idx files, each epoch's
	                              * delivered + stats.skipped records =
	                              * the records the shards hold (by the
	                              * file or by the .idx, whichever is
	                              * more; a damaged region a scan meets
	                              * is one record)                     */
	uint64_t max_record_size;    /* RIO_DEFAULT_MAX_RECORD by default     */

	/* GPU (builds with CUDA only; otherwise -ENOTSUP from open when set) */
	int pinned;      /* 1: the pool's column memory is pinned host memory
	                  * (cudaHostAlloc)                                 */
	int device_copy; /* 1 (implies pinned): each batch's columns are also
	                  * copied to device memory on the loader's own
	                  * stream, and the copy has completed before the
	                  * batch is handed out                             */
	int device;      /* the CUDA device to use (default 0)            */

	/* thread placement (Linux) */
	const int *cpus; /* the CPUs the loader's threads (workers and
	                  * batcher) may run on: ncpus CPU numbers, copied
	                  * at open. NULL (default): those of the thread
	                  * that starts an epoch, which they inherit. An
	                  * MPI rank bound to one core (mpirun binds ranks
	                  * to cores by default when there are few) shares
	                  * that core with its loader, which then preempts
	                  * the rank's work while other cores may sit
	                  * idle: give the loader those (recordio-train
	                  * does, --loader-cpus). CPUs this process may not
	                  * use are ignored; when none is left, the epoch
	                  * fails to start (-EINVAL)                      */
	size_t ncpus;
	const char *shard_cache; /* a directory (NULL, the default: none):
	                  * remote shards (s3://, http(s)://) are
	                  * downloaded whole there once, verified, and read
	                  * from the local disk after; shared by the ranks
	                  * and processes of a host (loader/shard_cache.h
	                  * has the rules). Not the in-memory `cache`.
	                  * Local shards are read where they are        */
	uint64_t shard_cache_limit; /* bytes of copies in shard_cache (0,
	                  * the default: no limit). The least recently
	                  * used copies no loader holds are deleted to make
	                  * room; a shard that does not fit is read from
	                  * the network instead (never a wait)            */
	rio_remote_opts remote; /* remote shards (s3://, http(s)://): bytes
	                  * per ranged GET, requests in flight at once for
	                  * the whole loader (its shards share one client),
	                  * attempts, stall limit; rio_loader_opts_init sets
	                  * rio_remote_opts_init's defaults (recordio.h)   */
} rio_loader_opts;

RIO_API void rio_loader_opts_init(rio_loader_opts *opts);

/* ------------------------------------------------------------------------ */
/* Batches                                                                   */
/* ------------------------------------------------------------------------ */

/* One record of a raw batch: a view into the batch's memory. */
typedef struct rio_batch_record {
	const uint8_t *data;
	size_t size;
	uint32_t shard;  /* position in the sorted shard list                */
	uint64_t index;  /* record number in that shard, from 0               */
} rio_batch_record;

/* One dense column of a decoded batch: `count` rows of `length` values. */
typedef struct rio_batch_column {
	const char *name;
	rio_dtype type;
	size_t length;
	void *host;   /* count * length values, row-major; page-aligned
	               * (pinned with opts.pinned)                        */
	void *device; /* with opts.device_copy: the same in device memory,
	               * ready; else NULL                                 */
} rio_batch_column;

typedef struct rio_batch {
	size_t count;        /* records in the batch (batch_size, or fewer
	                      * for an epoch's last batch)               */
	uint64_t epoch;
	uint64_t number;     /* batch number within the epoch, from 0      */
	/* every batch: where each record came from (count entries; data and
	 * size are set only for raw batches) */
	const rio_batch_record *records;
	/* decoded batches: one column per spec, in spec order */
	const rio_batch_column *columns;
	size_t ncolumns;
} rio_batch;

/* ------------------------------------------------------------------------ */
/* The loader                                                                */
/* ------------------------------------------------------------------------ */

typedef struct rio_loader rio_loader;

/* Opens a loader over `shards` (a glob, a comma-separated list or a shard
 * PREFIX, as rio_shardset_expand() takes), `opts` may be NULL for defaults.
 * Reads each shard's .idx sidecar, or scans shards that have none (once:
 * recordio-index writes the sidecars). On failure *out is still set (unless
 * it is -ENOMEM before anything) so rio_loader_error() can say why; close
 * it. No thread runs until the first rio_loader_next(). */
RIO_API int rio_loader_open(rio_loader **out, const char *shards, const rio_loader_opts *opts);

/* Hands out the next batch of the current epoch: returns 1 and sets *batch
 * (valid until rio_loader_release()), 0 when the epoch has ended (the next
 * call begins epoch + 1), or a negative error: a worker's error (damaged
 * data under FAIL, an I/O error), -ENOBUFS when the consumer already holds
 * opts.hold batches. Blocks only while the batch is not ready yet (that
 * time is counted in the stats). */
RIO_API int rio_loader_next(rio_loader *l, rio_batch **batch);

/* As rio_loader_next(), but waits at most `timeout_ms` milliseconds for a
 * batch that is not ready yet (< 0: as long as it takes): then returns
 * -ETIMEDOUT having handed out nothing (call again; the epoch goes on). For
 * a consumer that must stay responsive while it waits: the Python binding
 * checks for Ctrl-C between waits. */
RIO_API int rio_loader_next_timeout(rio_loader *l, rio_batch **batch, int timeout_ms);

/* Gives a batch's memory back to the pool. */
RIO_API void rio_loader_release(rio_loader *l, rio_batch *batch);

/* Batches this rank delivers per ordinary epoch: full ones (what ranks agree on,
 * taking the minimum, before an epoch: no collective then waits on a rank
 * that ran out), and all of them with a short last one unless dropped.
 * Counted from the records the shards hold: under RIO_DAMAGE_SKIP, damaged
 * records that are skipped make an epoch shorter, so a trainer must still
 * be ready for rio_loader_next() to end the epoch (return 0) first. */
RIO_API uint64_t rio_loader_full_batches(const rio_loader *l);
RIO_API uint64_t rio_loader_batches(const rio_loader *l);
/* Records this rank reads per epoch (before damaged ones are skipped). */
RIO_API uint64_t rio_loader_records(const rio_loader *l);

/* The epoch the next batch comes from, and records delivered in it (after
 * an elastic resume: since the resume). */
RIO_API uint64_t rio_loader_epoch(const rio_loader *l);
RIO_API uint64_t rio_loader_position(const rio_loader *l);

/* Stops the current epoch wherever it is (batches still held stay valid
 * until released) and makes the next batch the first of `epoch`, which the
 * threads start reading at once (so a shuffle buffer refills while the
 * caller evaluates). A trainer that stops early (at the steps all ranks
 * agreed on) calls this. 0, or a negative error (threads not started). */
RIO_API int rio_loader_set_epoch(rio_loader *l, uint64_t epoch);

/* The loader's position as a small blob (seed, epoch, position in the
 * epoch, and what identifies the data and options): writes up to `size`
 * bytes to `buf` and returns the blob's size (call with size 0 to ask), or
 * a negative error. The position counts batches handed out by
 * rio_loader_next(). 132 bytes; in an epoch resumed at another world size
 * (rio_loader_state_restore_all) its history follows: 8 bytes, then for
 * each earlier world 8 and 8 per rank. */
RIO_API int rio_loader_state_save(const rio_loader *l, void *buf, size_t size);
/* Restores a saved position: the next batch is the one an uninterrupted
 * loader would have handed out next. RIO_ESTATE when the blob is damaged
 * or was saved by a loader over other data, rank, world or options. */
RIO_API int rio_loader_state_restore(rio_loader *l, const void *buf, size_t size);

/* Elastic resume: restores from the states of every rank of the world
 * that saved them (blobs[r], sizes[r] bytes, saved by rank r; n = that
 * world's size), at this loader's own rank and world.
 *
 * - The same world size: the same as rio_loader_state_restore() with this
 *   rank's blob: bit-exact, the batches an uninterrupted run gets.
 * - Another world size W' (a host lost, or added): the epoch in progress
 *   goes on over what is left of it. Its records that no old rank had
 *   handed out (those it had read ahead, and those in its shuffle buffer,
 *   included) are taken in shard order and cut into W' contiguous ranges
 *   whose sizes differ by at most one; this rank reads its range in the
 *   loader's shuffle mode (NONE: in order; BUFFER: pieces shuffled and
 *   interleaved through the shuffle buffer; GLOBAL: a permutation), seeded
 *   as the epoch, so across the new ranks every record of the epoch is
 *   handed out exactly once: before the stop or after the resume. The
 *   order within the rest of the epoch is not the one W ranks would have
 *   given. The next epoch is an ordinary one at W'. The saved states of
 *   the resumed epoch carry its history, so it can be saved and resumed
 *   again, at any world size.
 *
 * The blobs must agree with this loader on the seed, epoch, data and
 * order options; the batch size may differ (positions count records).
 * Rebuilding the rest replays each old rank's order from the plan alone,
 * without reading (time and memory: a bit per record of the dataset): it
 * assumes no record of the interrupted epoch was skipped as damaged
 * (RIO_DAMAGE_SKIP) before the stop; if one was, records near the stop
 * may be handed out twice or not at all. With files sharding the rest may
 * span any shard: this loader opens and counts them all, so each rank
 * needs every shard (a shared file system) for that epoch. Returns 0, or
 * RIO_ESTATE with a message naming the rank and field that disagree. */
RIO_API int rio_loader_state_restore_all(rio_loader *l, const void *const *blobs,
                                         const size_t *sizes, size_t n);

/* Records this rank has still to hand out in the current epoch (before
 * damaged ones are skipped): rio_loader_records() minus the position in an
 * ordinary epoch, this rank's share of the rest after an elastic resume.
 * A trainer takes the minimum over its ranks, divided by the batch size,
 * as the steps left in the epoch. */
RIO_API uint64_t rio_loader_remaining(const rio_loader *l);

typedef struct rio_loader_stats {
	uint64_t records;       /* delivered                                 */
	uint64_t bytes;         /* payload bytes delivered (decoded batches:
	                         * the bytes of their columns)               */
	uint64_t batches;       /* delivered                                 */
	uint64_t skipped;       /* damaged or non-matching records skipped   */
	uint64_t file_bytes;    /* read from the files                       */
	uint64_t index_mismatches; /* SKIP: .idx sidecars that disagreed with
	                         * their shards (a shard cut short or grown,
	                         * a stale, partial, empty or unreadable
	                         * .idx): rebuilt from the shard in memory at
	                         * open, or, for a compressed shard, found
	                         * while reading it. rio_loader_warning()
	                         * names the first. (Under FAIL such an
	                         * .idx is an error naming it.)             */
	double wait_seconds;    /* time rio_loader_next() waited for a batch */
	uint64_t cache_bytes;   /* opts.cache: bytes held in memory, the
	                         * decompressed shards or, with columns,
	                         * their decoded rows (0: no cache in use)  */
	int io_uring;           /* 1 when the io_uring backend is in use     */
	double remote_get_seconds; /* remote shards: the time one ranged GET
	                         * or more was in flight, since open        */
	double remote_gets_in_flight; /* ... and their mean number in flight
	                         * over that time (opts.remote.inflight at
	                         * most; 0: no GET yet)                     */
} rio_loader_stats;

RIO_API void rio_loader_stats_get(const rio_loader *l, rio_loader_stats *stats);

/* How the epoch last started is read (opts.reading AUTO picks it at each
 * epoch's start: doc/loader.md, "Choosing the path"): the path, "placed"
 * (workers fill each batch in place) or "pipeline" (workers and a
 * batcher), then how shards are read: "buffered" (through the page
 * cache), "direct" (O_DIRECT), "map" (views into mappings), "memory"
 * (opts.cache's copies), "whole" (views into remote shards fetched whole:
 * a globally shuffled epoch from S3); e.g. "placed/map". "" before the
 * first epoch. A
 * static string; call it from the thread that calls rio_loader_next(). */
RIO_API const char *rio_loader_route(const rio_loader *l);

/* The first warning (see stats.index_mismatches), a one-line message
 * naming the file, e.g. "shard-00000.tfrecord.idx: disagrees with its
 * shard (N entries, the shard holds M records): rebuilt from the shard":
 * copied into buf (NUL-terminated, cut to size). Returns its length, 0
 * when there is none. Safe while the loader's threads run. */
RIO_API size_t rio_loader_warning(const rio_loader *l, char *buf, size_t size);

/* The shard list (sorted, as batch records number them), rank and world. */
RIO_API const rio_shardset *rio_loader_shards(const rio_loader *l);
RIO_API int rio_loader_rank(const rio_loader *l);
RIO_API int rio_loader_world(const rio_loader *l);
/* The sharding in use: FILES or RECORDS (AUTO resolved at open, from the
 * .idx sidecars and the world size). A trainer that saves the loader's
 * state keeps it, and opens with it again to resume (the state holds
 * positions within this sharding's shares). */
RIO_API rio_sharding rio_loader_sharding(const rio_loader *l);
/* Shard `shard`'s records (its index in rio_loader_shards()), as this
 * loader counted them; UINT64_MAX for a shard it has not counted (files
 * sharding: another rank's shard) or one out of range. */
RIO_API uint64_t rio_loader_shard_records(const rio_loader *l, size_t shard);

/* The last error with its context. */
RIO_API const rio_error *rio_loader_error(const rio_loader *l);

/* Stops the threads and frees everything (batches still held too). NULL is a
 * no-op. */
RIO_API void rio_loader_close(rio_loader *l);

#ifdef __cplusplus
}
#endif

#endif /* RECORDIO_LOADER_H */

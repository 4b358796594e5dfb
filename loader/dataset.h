/*
 * dataset.h — what a rank reads, fixed when the loader opens: the shard
 * list, each shard's record count and a sparse index (the offset of every
 * 64th record, so a task can start reading in the middle of an
 * uncompressed shard; every record's place where an epoch may need it),
 * and this rank's pieces: (shard, first record, count) ranges from `files`
 * or `records` sharding (dataset.c). What opts.cache holds in memory
 * (cache.c), and running work on every shard on a few threads
 * (shards_run.c).
 */
#ifndef RIO_LOADER_DATASET_H
#define RIO_LOADER_DATASET_H

#include "loader.h"
#include "source.h"

#include <stdint.h>

/* Records between two entries of the sparse index. */
#define RIO__CKPT 64u

typedef struct rio__shard {
	const char *path;       /* owned by the dataset's shardset            */
	rio__source src;        /* its bytes (source.h), open for the
	                         * loader's lifetime where needed; src.size
	                         * is its size at open                      */
	const uint8_t *map;     /* its bytes in memory: the source's mapping
	                         * (src.map, map_len = src.size) or
	                         * opts.cache's decompressed copy (= cache);
	                         * or NULL                                   */
	size_t map_len;
	uint8_t *cache;         /* opts.cache: the decompressed shard, owned
	                         * (cache.c), or NULL                       */
	struct rio__rowpack *rows; /* opts.cache with columns: every record
	                         * decoded once, its row packed (decode.h),
	                         * owned (cache.c); the decompressed copy is
	                         * then freed (cache and map NULL); or NULL  */
	rio_compression comp;
	int needed;             /* this rank reads it (or counts it)         */
	int counted;            /* opened and counted (count_all)            */
	uint64_t count;         /* records                                   */
	uint64_t *ckpt;         /* uncompressed: offset of record k*64       */
	uint64_t data_end;      /* uncompressed: where the last record ends */
	uint64_t missing;       /* SKIP: records its .idx lists beyond what
	                         * the shard holds (skipped every epoch)     */
	char index_warning[600]; /* SKIP: why its .idx was not used ("" if
	                         * it was, or there is none)                */
	int index_warned;       /* compressed: its .idx was found wrong while
	                         * reading and counted (once; under l->mu)  */
	uint64_t *offset;       /* global shuffle: every record's offset    */
	uint32_t *framed;       /* global shuffle: every record's frame size */
	rio_index sidecar;      /* a URL's .idx, read while the sharding was
	                         * chosen, for shard_count (sidecar_read 1) */
	int sidecar_read;       /* 1: its .idx is in sidecar; -1: it has none;
	                         * 0: not read yet                          */
	int opened;             /* shard_open done (src, comp)               */
	int plausible;          /* its sidecar checked against the shard
	                         * with the sidecar's read (index_plausible):
	                         * 1 agrees, -1 not; 0 not checked yet      */
} rio__shard;

/* A run of records of a shard: [first, first + count). */
typedef struct rio__run {
	uint64_t first, count;
} rio__run;

typedef struct rio__piece {
	uint32_t shard;
	uint64_t first, count;  /* records [first, first + count) of shard  */
	uint64_t rank_start;    /* ordinal of `first` among the rank's records */
	uint32_t run, nruns;    /* nruns > 0 (an elastic share, elastic.h):
	                         * the rank's records are only the runs
	                         * ds->runs[run .. run + nruns), which
	                         * [first, first + count) spans; the piece's
	                         * tasks cover those, and the stream of a
	                         * compressed shard passes over the rest
	                         * once, rather than being read again from
	                         * its start for each run                 */
} rio__piece;

typedef struct rio__dataset {
	rio_shardset set;
	rio__shard *shards;
	size_t nshards;
	int rank, world;
	rio_sharding sharding;  /* FILES or RECORDS (AUTO resolved)          */
	rio__piece *pieces;
	size_t npieces;
	rio__run *runs;         /* the runs of pieces that have some (NULL) */
	uint64_t rank_records;
	uint64_t total_records;
	uint64_t ident;         /* a hash of the shard counts (saved state) */
	int placed;             /* every shard is uncompressed (or cached)
	                         * with every record's place kept: the placed
	                         * path can serve this rank's ordinary epochs
	                         * where the route takes it (route.h)       */
	int direct;             /* some shard has an O_DIRECT descriptor    */
	uint64_t cache_bytes;   /* opts.cache: the bytes of the decompressed
	                         * shards or their rows held (0: none,
	                         * cache.c)                                  */
	uint64_t cache_file_bytes; /* the compressed bytes read to fill it    */
	rio__source_ctx sources; /* what the shards' sources share: the
	                         * opts.shard_cache (or NULL) and the one
	                         * remote client, made when a shard is a URL
	                         * (or NULL)                                 */
	int whole_mode;         /* RIO_REMOTE_WHOLE (remote_whole.h): the
	                         * route's remote shards fetched whole      */
} rio__dataset;

struct rio__colplan;
struct rio__case;

/* Drops the shard's mapping (its source's; opts.cache's copy stays). */
static inline void rio__shard_unmap(rio__shard *s)
{
	if (s->cache)
		return;
	if (s->src.map && s->src.ops && s->src.ops->unmap)
		s->src.ops->unmap(&s->src);
	s->map = NULL;
	s->map_len = 0;
}

/* 1 when the shard is served from opts.cache's memory (its decompressed
 * copy, or its decoded rows). */
static inline int rio__shard_cached(const rio__shard *s)
{
	return s->cache != NULL || s->rows != NULL;
}

/* Opens the shards of `spec` and finds this rank's pieces (rank, world and
 * sharding from `o`, resolved from the environment when -1 / AUTO). `cols`:
 * the decoding (decode.h; no columns: raw records), for opts.cache. */
int rio__dataset_open(rio__dataset *ds, const char *spec, const rio_loader_opts *o,
                      const struct rio__colplan *cols, rio_error *err);
void rio__dataset_close(rio__dataset *ds);

/* The pieces of rank `rank` of `world` (ds->sharding; every shard that
 * rank reads must be counted): a malloc'd array, with their records. */
int rio__pieces_for(const rio__dataset *ds, int rank, int world, rio__piece **pieces,
                    size_t *npieces, uint64_t *records);
/* What identifies the data of rank `rank` of `world` in a saved state: a
 * hash of the record counts of the shards it reads. */
uint64_t rio__dataset_ident(const rio__dataset *ds, int rank, int world);
/* Opens and counts the shards this rank did not need (files sharding): an
 * elastic resume may give it records of any shard. */
int rio__dataset_count_every_shard(rio__dataset *ds, const rio_loader_opts *o, rio_error *err);

/* Runs fn(arg, s, &e) for every shard s in [0, nshards), the shards
 * taken in turn by `threads` threads: started here, and the calling
 * thread among them when `caller_works` (else it only waits, and works
 * only when no thread could be started). Shards after a failed one are
 * not started. Returns 0, or the error of the first failing shard in
 * order with its rio_error in *err (when err is not NULL). */
typedef int (*rio__shard_fn)(void *arg, size_t shard, rio_error *e);
int rio__shards_run(size_t nshards, int threads, int caller_works, rio__shard_fn fn, void *arg,
                    rio_error *err);

/* The case an epoch's route is chosen for (route.h), from the shards the
 * rank reads: whether they are cached, mapped, have O_DIRECT descriptors,
 * and (with `look`: the page cache is asked) sit in the page cache. */
void rio__dataset_case(const rio__dataset *ds, int look, struct rio__case *c);

/* Maps the uncompressed shards of the rank's pieces that are not mapped
 * yet (an epoch whose route reads them mapped: route.h), between epochs. */
int rio__dataset_map(rio__dataset *ds, rio_error *err);

/* The shard and record of the rank's `ordinal`-th record. */
void rio__dataset_locate(const rio__dataset *ds, uint64_t ordinal, uint32_t *piece,
                         uint32_t *shard, uint64_t *record);

/* cache.c: the decompressed bytes of the rank's compressed shards (those
 * of its pieces, whole), by their counts; with `decoding` (columns), of its
 * uncompressed ones too. */
uint64_t rio__cache_need(const rio__dataset *ds, int decoding);
/* Decompresses the rank's compressed shards (those of its pieces,
 * counted with every record's place) into memory when they fit
 * opts.cache bytes, each shard's map then pointing at its copy: returns 1
 * (ds->cache_bytes set), or 0 with nothing cached (too big, a stream that
 * cannot be decompressed whole, records not where the index says, no
 * memory). With columns (cols->ncols), when every shard's rows fit too,
 * each shard's records are then decoded into rows (rio__shard.rows) and its
 * copy freed. *file_bytes: the compressed bytes read. The copies are freed
 * by rio__dataset_close. */
int rio__cache_load(rio__dataset *ds, const rio_loader_opts *o, const struct rio__colplan *cols,
                    uint64_t *file_bytes);

/* Reads the rank and world from the environment of Open MPI, PMI or Slurm
 * (in that order); returns 1 when found, 0 when none is set, or -EINVAL
 * when a variable is not a number. */
int rio__rank_from_env(int *rank, int *world);

#endif /* RIO_LOADER_DATASET_H */

/*
 * route.h — which path serves an epoch, and how its shards are read:
 * decided by one function, rio__route_choose(), and nowhere else.
 *
 * Two paths (doc/loader.md draws them):
 *   - the placed path (placed.c): every record's place is known in advance
 *     (the full index), so each worker fills whole batches straight into
 *     their pool slots and no batcher runs; it needs uncompressed shards
 *     (or opts.cache's copies), damage failing the epoch (a skipped record
 *     would shift the rest), and an order that is a permutation known in
 *     advance (NONE, GLOBAL, or BUFFER replayed as one);
 *   - the pipeline (worker.c, batcher.c): chunks of records handed to a
 *     batcher that orders and shuffles them; everything else.
 * And four ways to get a shard's bytes:
 *   - BUFFERED: reads through the page cache (io_uring or pread);
 *   - DIRECT: O_DIRECT reads, around the page cache;
 *   - MAP: views into mappings of the shards (no read, no copy);
 *   - MEMORY: views into what opts.cache holds (cache.c), and the
 *     mappings of plain shards beside them.
 * A globally shuffled epoch of remote shards (source_remote.c) whose
 * batches' ranged GETs would carry few bytes each (route.c) reads MAP from
 * the shards fetched whole (remote_whole.h): the route's `whole`.
 *
 * The choice is a function of the options and the case (rio__case), never
 * of timing, and the order of the records never depends on it: every path
 * delivers the plan's order (plan.h).
 */
#ifndef RIO_LOADER_ROUTE_H
#define RIO_LOADER_ROUTE_H

#include "loader.h"

typedef enum rio__reading {
	RIO__READ_BUFFERED = 0,
	RIO__READ_DIRECT = 1,
	RIO__READ_MAP = 2,
	RIO__READ_MEMORY = 3,
} rio__reading;

typedef struct rio__route {
	int placed;           /* 1: the placed path; 0: the pipeline        */
	rio__reading reading; /* how uncompressed shards are read            */
	int whole;            /* 1: the remote shards fetched whole and
	                       * mapped (reading MAP; remote_whole.h)       */
} rio__route;

/* What the choice looks at besides the options. */
typedef struct rio__case {
	int plain;    /* every shard the epoch reads is uncompressed, with
	               * every record's place kept (rio__route_keeps_places) */
	int cached;   /* opts.cache holds the rank's shards (cache.c)        */
	int elastic;  /* the epoch is an elastic resume's share (elastic.h) */
	int resident; /* the shards the epoch reads are in the page cache   */
	int mappable; /* they are local files that can be mapped           */
	int direct;   /* they have O_DIRECT descriptors                     */
	/* remote shards the epoch reads that have no local copy (the shard
	 * cache's: those are read as local files) */
	uint64_t remote_shards, remote_bytes, remote_records;
	uint64_t records;   /* the records the epoch reads, remote or not    */
	int whole_mode;     /* RIO_REMOTE_WHOLE: 0 auto, 1 always, -1 never  */
} rio__case;

/* A batch's records of remote shards, read with ranged GETs, that a GET
 * would carry less than this share of part_size of (route.c): the shards
 * are fetched whole instead. */
#define RIO__WHOLE_BELOW_PART 4

/* The path and the reading for an epoch of case `c` under options `o`
 * (checked at open: loader.c). */
rio__route rio__route_choose(const rio_loader_opts *o, const rio__case *c);

/* "placed/map", "pipeline/buffered", ...: the path, then the reading
 * ("buffered", "direct", "map", "memory"; "whole" for MAP from remote
 * shards fetched whole). */
const char *rio__route_name(rio__route r);

/* The reading the options ask for: opts.reading, or map = 1 (MAP) or
 * direct = 1 (DIRECT) when it is AUTO. */
rio_reading rio__route_asked(const rio_loader_opts *o);

/* What the dataset prepares at open, for the epochs rio__route_choose may
 * give over shards that are all uncompressed (`plain`), whether resident
 * or not: every record's place (the placed path, global shuffling), and
 * O_DIRECT descriptors (1: wanted where the file system takes them; 2:
 * required, opts asked for DIRECT). */
int rio__route_keeps_places(const rio_loader_opts *o, int plain);
/* 1 when shuffled records are read from mappings of the uncompressed
 * shards whatever the case (reading MAP asked for), so the dataset maps
 * them at open; AUTO maps them when an epoch's route first takes MAP. */
int rio__route_maps(const rio_loader_opts *o);
int rio__route_wants_direct(const rio_loader_opts *o);

/* opts.cache is worth filling at open (cache.c): damage fails the epoch,
 * the order is NONE or BUFFER (GLOBAL needs uncompressed shards anyway),
 * not O_DIRECT, where the placed path would not serve the files anyway
 * (in shard order it reads them as they lie), and every shard can be
 * served from memory: compressed ones decompressed, plain ones decoded
 * (`decoding`: with columns) or mapped (opts asked for MAP). `plain_shards`:
 * some shard the rank needs is uncompressed and not empty; `plain`: all
 * are. */
int rio__route_tries_cache(const rio_loader_opts *o, int plain, int plain_shards, int decoding);

#endif /* RIO_LOADER_ROUTE_H */

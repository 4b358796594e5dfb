/*
 * route.c — the one decision of which path serves an epoch and how its
 * shards are read (route.h), and what the dataset prepares at open for the
 * epochs it may give.
 *
 * With opts.reading AUTO (the default) the loader takes the fastest way it
 * measured for the case (bench/loader.sh, doc/loader.md: "Choosing the
 * path"), from page-cache residency as the dataset sees it at the start of
 * each epoch (mincore, or cachestat where the kernel has it):
 *   - shuffled (BUFFER, GLOBAL), resident: views into mappings (MAP): no
 *     system call per record, where a read per record tops out near 0.4
 *     of `cat` (the cost of a system call per 4 KiB record);
 *   - in shard order (NONE), not resident: O_DIRECT, whose reads of a cold
 *     shard keep the device busy at `cat`'s speed, where buffered reads
 *     leave it idle between the kernel's readahead windows;
 *   - otherwise buffered reads (in shard order from the page cache they
 *     beat views: a copy into the batch is cheaper than the faults);
 *   - globally shuffled, remote shards (no local copy) whose ranged GETs
 *     would carry little (whole_pays): the shards fetched whole and mapped
 *     (MAP, the route's `whole`), once for the loader's life, where a
 *     batch would cost a GET a record.
 */
#include "config.h"
#include "route.h"
#include "../recordio/remote/remote.h"

rio_reading rio__route_asked(const rio_loader_opts *o)
{
	if (o->reading != RIO_READ_AUTO)
		return o->reading;
	return o->map ? RIO_READ_MAP : o->direct ? RIO_READ_DIRECT : RIO_READ_AUTO;
}

/* 1 when a globally shuffled epoch's remote shards are better fetched
 * whole than a batch at a time (RIO_REMOTE_WHOLE aside): the record bytes
 * a batch's ranged GET would carry are under part_size /
 * RIO__WHOLE_BELOW_PART. A batch holds n of those shards' records; where
 * they lie further apart than RIO__REMOTE_COALESCE_GAP (sparse: the set
 * over n), each is a GET; else the batch's GETs span the shards, a GET a
 * part_size (and one a shard at least), for n records. A whole fetch reads
 * each byte once, a GET a part_size: never more GETs or bytes than an
 * epoch of ranges, only sooner (the shards before the epoch's first
 * batch) and into a spill. */
static int whole_pays(const rio_loader_opts *o, const rio__case *c)
{
	if (c->whole_mode)
		return c->whole_mode > 0;
	if (!c->remote_records || !c->records)
		return 0;
	double part = (double)o->remote.part_size, bytes = (double)c->remote_bytes;
	double n = (double)o->batch_size * (double)c->remote_records / (double)c->records;
	double gets = bytes / part > (double)c->remote_shards ? bytes / part : (double)c->remote_shards;
	if (n < 1)
		n = 1;
	if (bytes / n > RIO__REMOTE_COALESCE_GAP || gets > n)
		gets = n;
	double per_get = n * (bytes / (double)c->remote_records) / gets;
	return per_get < part / RIO__WHOLE_BELOW_PART;
}

/* The reading before the path is known: what the options ask for, or
 * AUTO's choice for the case. */
static rio__reading reading_for(const rio_loader_opts *o, const rio__case *c)
{
	switch (rio__route_asked(o)) {
	case RIO_READ_DIRECT:
		return RIO__READ_DIRECT;
	case RIO_READ_MAP: /* in shard order reads into the batch beat views */
		return o->shuffle != RIO_SHUFFLE_NONE ? RIO__READ_MAP : RIO__READ_BUFFERED;
	case RIO_READ_BUFFERED:
		return RIO__READ_BUFFERED;
	case RIO_READ_AUTO:
		break;
	}
	if (c->remote_shards && o->shuffle == RIO_SHUFFLE_GLOBAL && c->mappable &&
	    whole_pays(o, c))
		return RIO__READ_MAP;
	if (c->resident && o->shuffle != RIO_SHUFFLE_NONE && c->mappable)
		return RIO__READ_MAP;
	if (!c->resident && o->shuffle == RIO_SHUFFLE_NONE && c->direct)
		return RIO__READ_DIRECT;
	return RIO__READ_BUFFERED;
}

rio__route rio__route_choose(const rio_loader_opts *o, const rio__case *c)
{
	/* opts.cache's memory serves the ordinary epochs; an elastic share
	 * reads the files, as without the cache (its pieces have holes) */
	if (c->cached)
		return c->elastic ? (rio__route){0, RIO__READ_BUFFERED, 0}
		                  : (rio__route){1, RIO__READ_MEMORY, 0};
	rio__reading reading = reading_for(o, c);
	/* the placed path needs the order as a permutation known in advance:
	 * BUFFER's is one only replayed over pieces without holes, and it is
	 * worth it only without reads (the pipeline reads in order) */
	int known = o->shuffle != RIO_SHUFFLE_BUFFER || (reading == RIO__READ_MAP && !c->elastic);
	int whole = reading == RIO__READ_MAP && c->remote_shards > 0;
	if (c->plain && o->on_damage == RIO_DAMAGE_FAIL && known)
		return (rio__route){1, reading, whole};
	/* the pipeline: mappings serve only global shuffling's records
	 * (copied); O_DIRECT its uncompressed ranges when asked for */
	if (reading == RIO__READ_MAP && o->shuffle != RIO_SHUFFLE_GLOBAL)
		reading = RIO__READ_BUFFERED;
	if (reading == RIO__READ_DIRECT && rio__route_asked(o) != RIO_READ_DIRECT)
		reading = RIO__READ_BUFFERED;
	return (rio__route){0, reading, whole && reading == RIO__READ_MAP};
}

const char *rio__route_name(rio__route r)
{
	static const char *const names[2][4] = {
	        {"pipeline/buffered", "pipeline/direct", "pipeline/map", "pipeline/memory"},
	        {"placed/buffered", "placed/direct", "placed/map", "placed/memory"},
	};
	if (r.whole)
		return r.placed ? "placed/whole" : "pipeline/whole";
	return names[r.placed != 0][r.reading & 3];
}

/* The routes of the ordinary epochs over `plain` shards that AUTO may
 * take: cold and resident, the fast paths available. */
static void routes(const rio_loader_opts *o, int plain, rio__route r[2])
{
	for (int resident = 0; resident < 2; resident++) {
		rio__case c = {.plain = plain, .resident = resident, .mappable = 1, .direct = 1};
		r[resident] = rio__route_choose(o, &c);
	}
}

int rio__route_keeps_places(const rio_loader_opts *o, int plain)
{
	rio__route r[2];
	routes(o, plain, r);
	return o->shuffle == RIO_SHUFFLE_GLOBAL || r[0].placed || r[1].placed;
}

int rio__route_maps(const rio_loader_opts *o)
{
	return o->shuffle != RIO_SHUFFLE_NONE && rio__route_asked(o) == RIO_READ_MAP;
}

int rio__route_wants_direct(const rio_loader_opts *o)
{
	if (rio__route_asked(o) == RIO_READ_DIRECT)
		return 2;
	rio__route r[2];
	routes(o, 1, r);
	return r[0].reading == RIO__READ_DIRECT || r[1].reading == RIO__READ_DIRECT;
}

int rio__route_tries_cache(const rio_loader_opts *o, int plain, int plain_shards, int decoding)
{
	rio_reading asked = rio__route_asked(o);
	if (!o->cache || o->on_damage != RIO_DAMAGE_FAIL || asked == RIO_READ_DIRECT ||
	    (o->shuffle != RIO_SHUFFLE_NONE && o->shuffle != RIO_SHUFFLE_BUFFER))
		return 0;
	rio__case cold = {.plain = plain, .mappable = 1};
	if (rio__route_choose(o, &cold).placed)
		return 0;
	return decoding || !plain_shards || asked == RIO_READ_MAP;
}

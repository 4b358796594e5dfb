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
 *     beat views: a copy into the batch is cheaper than the faults).
 */
#include "config.h"
#include "route.h"

rio_reading rio__route_asked(const rio_loader_opts *o)
{
	if (o->reading != RIO_READ_AUTO)
		return o->reading;
	return o->map ? RIO_READ_MAP : o->direct ? RIO_READ_DIRECT : RIO_READ_AUTO;
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
		return c->elastic ? (rio__route){0, RIO__READ_BUFFERED}
		                  : (rio__route){1, RIO__READ_MEMORY};
	rio__reading reading = reading_for(o, c);
	/* the placed path needs the order as a permutation known in advance:
	 * BUFFER's is one only replayed over pieces without holes, and it is
	 * worth it only without reads (the pipeline reads in order) */
	int known = o->shuffle != RIO_SHUFFLE_BUFFER || (reading == RIO__READ_MAP && !c->elastic);
	if (c->plain && o->on_damage == RIO_DAMAGE_FAIL && known)
		return (rio__route){1, reading};
	/* the pipeline: mappings serve only global shuffling's records
	 * (copied); O_DIRECT its uncompressed ranges when asked for */
	if (reading == RIO__READ_MAP && o->shuffle != RIO_SHUFFLE_GLOBAL)
		reading = RIO__READ_BUFFERED;
	if (reading == RIO__READ_DIRECT && rio__route_asked(o) != RIO_READ_DIRECT)
		reading = RIO__READ_BUFFERED;
	return (rio__route){0, reading};
}

const char *rio__route_name(rio__route r)
{
	static const char *const names[2][4] = {
	        {"pipeline/buffered", "pipeline/direct", "pipeline/map", "pipeline/memory"},
	        {"placed/buffered", "placed/direct", "placed/map", "placed/memory"},
	};
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

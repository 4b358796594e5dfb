/*
 * report.c — what a loader tells about itself while it runs: the
 * statistics (rio_loader_stats_get) and the first warning (an .idx that
 * disagreed with its shard), kept under the loader's mutex; the bytes read
 * are counted without it (rio__count_file_bytes).
 */
#include "config.h"
#include "loader_internal.h"
#include "../recordio/remote/remote.h"

#include <stdio.h>
#include <string.h>

RIO_API void rio_loader_stats_get(const rio_loader *l, rio_loader_stats *stats)
{
	pthread_mutex_lock((pthread_mutex_t *)&l->mu);
	*stats = l->stats;
	stats->cache_bytes = l->ds.cache_bytes;
	pthread_mutex_unlock((pthread_mutex_t *)&l->mu);
	stats->file_bytes = __atomic_load_n(&l->file_bytes, __ATOMIC_RELAXED);
	double busy = 0, gets = 0;
	if (l->ds.sources.remote)
		rio__remote_gets_time(l->ds.sources.remote, &busy, &gets);
	stats->remote_get_seconds = busy;
	stats->remote_gets_in_flight = busy > 0 ? gets / busy : 0;
}

RIO_API size_t rio_loader_warning(const rio_loader *l, char *buf, size_t size)
{
	pthread_mutex_lock((pthread_mutex_t *)&l->mu);
	size_t n = strlen(l->warning);
	if (size > 0)
		snprintf(buf, size, "%s", l->warning);
	pthread_mutex_unlock((pthread_mutex_t *)&l->mu);
	return n;
}

void rio__loader_warn(rio_loader *l, const char *text)
{
	l->stats.index_mismatches++;
	if (!l->warning[0])
		snprintf(l->warning, sizeof l->warning, "%s", text);
}

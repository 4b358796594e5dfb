/*
 * opts.c — rio_remote_opts: the defaults and their ranges (recordio.h), in
 * every build (with or without libcurl).
 */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <string.h>

#define UNK RIO__UNKNOWN

RIO_API void rio_remote_opts_init(rio_remote_opts *o)
{
	memset(o, 0, sizeof *o);
	o->part_size = 8u << 20;
	o->inflight = 16;
	o->attempts = 10;
	o->stall_seconds = 30;
}

RIO_API int rio_remote_opts_check(const rio_remote_opts *o, rio_error *err)
{
	const char *what = NULL;
	if (!o)
		what = "no options";
	else if (o->part_size < RIO_REMOTE_MIN_PART || o->part_size > RIO_REMOTE_MAX_PART)
		what = "remote part size: want 64K to 1G";
	else if (o->inflight < 1 || o->inflight > RIO_REMOTE_MAX_INFLIGHT)
		what = "remote requests in flight: want 1 to 256";
	else if (o->attempts < 1 || o->attempts > RIO_REMOTE_MAX_ATTEMPTS)
		what = "remote attempts: want 1 to 100";
	else if (o->stall_seconds < 1 || o->stall_seconds > RIO_REMOTE_MAX_STALL)
		what = "remote stall seconds: want 1 to 3600";
	if (!what)
		return 0;
	return rio__error_set(err, -EINVAL, NULL, UNK, UNK, "%s", what);
}


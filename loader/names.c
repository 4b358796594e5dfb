/*
 * names.c — the names of the loader's order, sharding, I/O and reading
 * options (loader.h: rio_shuffle_name() ... rio_reading_parse()): one
 * table each, which recordio-bench, recordio-train and the Python package
 * read, so a name one accepts the others do.
 */
#include "config.h"
#include "loader_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Each table is indexed by the enum's value (0, 1, ...: loader.h). */
static const char *const shuffle_names[] = {"none", "buffer", "global"};
static const char *const sharding_names[] = {"auto", "files", "records"};
static const char *const io_names[] = {"auto", "uring", "pread"};
static const char *const reading_names[] = {"auto", "buffered", "map", "direct"};

#define COUNT(a) (sizeof(a) / sizeof(a)[0])

static const char *name_of(const char *const *names, size_t n, int value)
{
	return value >= 0 && (size_t)value < n ? names[value] : NULL;
}

/* The index of `name` in names[0, n), or -EINVAL with err's message
 * "'NAME': want A, B or C". */
static int parse(const char *const *names, size_t n, const char *name, rio_error *err)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	rio__error_clear(err);
	if (err) {
		err->code = -EINVAL;
		size_t len = (size_t)snprintf(err->message, sizeof err->message, "'%.100s': want ",
		                              name ? name : "(null)");
		for (size_t i = 0; i < n && len < sizeof err->message; i++)
			len += (size_t)snprintf(err->message + len, sizeof err->message - len, "%s%s",
			                        i == 0 ? "" : i + 1 < n ? ", " : " or ", names[i]);
	}
	return -EINVAL;
}

RIO_API const char *rio_shuffle_name(rio_shuffle s)
{
	return name_of(shuffle_names, COUNT(shuffle_names), (int)s);
}

RIO_API int rio_shuffle_parse(const char *name, rio_shuffle *out, rio_error *err)
{
	int v = parse(shuffle_names, COUNT(shuffle_names), name, err);
	if (v < 0)
		return v;
	*out = (rio_shuffle)v;
	return 0;
}

RIO_API const char *rio_sharding_name(rio_sharding s)
{
	return name_of(sharding_names, COUNT(sharding_names), (int)s);
}

RIO_API int rio_sharding_parse(const char *name, rio_sharding *out, rio_error *err)
{
	int v = parse(sharding_names, COUNT(sharding_names), name, err);
	if (v < 0)
		return v;
	*out = (rio_sharding)v;
	return 0;
}

RIO_API const char *rio_io_name(rio_io_backend b)
{
	return name_of(io_names, COUNT(io_names), (int)b);
}

RIO_API int rio_io_parse(const char *name, rio_io_backend *out, rio_error *err)
{
	int v = parse(io_names, COUNT(io_names), name, err);
	if (v < 0)
		return v;
	*out = (rio_io_backend)v;
	return 0;
}

RIO_API const char *rio_reading_name(rio_reading r)
{
	return name_of(reading_names, COUNT(reading_names), (int)r);
}

RIO_API int rio_reading_parse(const char *name, rio_reading *out, rio_error *err)
{
	int v = parse(reading_names, COUNT(reading_names), name, err);
	if (v < 0)
		return v;
	*out = (rio_reading)v;
	return 0;
}

/*
 * error.c — error texts and error context.
 *
 * One X-macro table in recordio.h defines the codes and their texts;
 * rio_strerror() maps those, negative errno values, and 0. Also the output
 * path's check every writer makes (the temporary name, fsync and rename
 * are lib/atomic_file.c's).
 */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

RIO_API const char *rio_strerror(int code)
{
	switch (code) {
#define RIO__CASE(name, value, text)                                                               \
	case name:                                                                                 \
		return text;
		RIO_ERROR_TABLE(RIO__CASE)
#undef RIO__CASE
	case 0:
		return "success";
	default:
		break;
	}
	if (code < 0 && code > -1000)
		return strerror(-code); /* glibc: static text for known errno values */
	return "unknown error";
}

RIO_API const char *rio_version(void)
{
	return PACKAGE_VERSION;
}

void rio__error_clear(rio_error *e)
{
	if (!e)
		return;
	e->code = 0;
	e->offset = RIO__UNKNOWN;
	e->record = RIO__UNKNOWN;
	e->message[0] = '\0';
}

int rio__error_set(rio_error *e, int code, const char *path, uint64_t offset, uint64_t record,
                   const char *fmt, ...)
{
	if (!e)
		return code;
	e->code = code;
	e->offset = offset;
	e->record = record;
	size_t cap = sizeof e->message, n = 0;
	int w;
#define APPEND(...)                                                                                \
	do {                                                                                       \
		w = snprintf(e->message + n, cap - n, __VA_ARGS__);                                \
		if (w > 0)                                                                         \
			n = (size_t)w < cap - n ? n + (size_t)w : cap - 1;                         \
	} while (0)
	e->message[0] = '\0';
	if (path)
		APPEND("%s: ", path);
	if (offset != RIO__UNKNOWN && record != RIO__UNKNOWN)
		APPEND("offset %llu (record %llu): ", (unsigned long long)offset,
		       (unsigned long long)record);
	else if (offset != RIO__UNKNOWN)
		APPEND("offset %llu: ", (unsigned long long)offset);
	else if (record != RIO__UNKNOWN)
		APPEND("record %llu: ", (unsigned long long)record);
	APPEND("%s", rio_strerror(code));
	if (fmt) {
		va_list ap;
		APPEND(": ");
		va_start(ap, fmt);
		w = vsnprintf(e->message + n, cap - n, fmt, ap);
		va_end(ap);
		(void)w;
	}
#undef APPEND
	return code;
}

const char *rio__error_detail(const rio_error *e)
{
	if (!e->code)
		return "";
	const char *text = rio_strerror(e->code), *at = strstr(e->message, text);
	if (!at)
		return e->message;
	at += strlen(text);
	return at[0] == ':' && at[1] == ' ' ? at + 2 : at;
}

const char *rio__file_kind(unsigned mode)
{
	return S_ISDIR(mode)    ? "a directory"
	       : S_ISLNK(mode)  ? "a symbolic link"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
	                        : "not a regular file";
}

RIO_API int rio_output_check(const char *path, rio_error *err)
{
	rio__error_clear(err);
	struct stat st;
	if (!path || !*path)
		return rio__error_set(err, -ENOENT, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "an empty output path");
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : rio__error_set(err, -errno, path, RIO__UNKNOWN,
		                                            RIO__UNKNOWN, NULL);
	if (S_ISREG(st.st_mode))
		return 0;
	return rio__error_set(err, S_ISDIR(st.st_mode) ? -EISDIR : RIO_EUNSUPPORTED, path,
	                      RIO__UNKNOWN, RIO__UNKNOWN,
	                      "%s, not a regular file: a writer replaces only regular files%s",
	                      rio__file_kind(st.st_mode),
	                      S_ISLNK(st.st_mode) ? " (write to the link's target instead)" : "");
}

int rio__output_replaceable(const char *path)
{
	return rio_output_check(path, NULL);
}

void *rio__aligned_alloc(size_t align, size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, align, size ? size : align))
		return NULL;
	return p;
}

void *rio__huge_alloc(size_t align, size_t size)
{
	int huge = size >= RIO__HUGE_PAGE;
	void *p = rio__aligned_alloc(huge ? RIO__HUGE_PAGE : align, size);
#ifdef MADV_HUGEPAGE
	if (p && huge)
		(void)madvise(p, size, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
	return p;
}

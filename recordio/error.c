/*
 * error.c — error texts and error context.
 *
 * One X-macro table in recordio.h defines the codes and their texts;
 * rio_strerror() maps those, negative errno values, and 0. Also the small
 * file helpers every writer shares (the output path's check, temporary
 * name + rename, write_all).
 */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int rio__tmpfile_open(const char *path, char **tmp_path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dir_len;
	size_t len = dir_len + 1 + strlen(base) + sizeof ".XXXXXX.tmp";
	char *tmp = malloc(len);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%.*s.%s.XXXXXX.tmp", (int)dir_len, path, base);
	int fd = mkostemps(tmp, 4, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		free(tmp);
		return err;
	}
	*tmp_path = tmp;
	return fd;
}

/* The process umask, read without changing it (umask(2) would race with
 * other threads creating files): from /proc/self/status, else 022. */
static unsigned process_umask(void)
{
	unsigned mask = 022;
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return mask;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Umask: %o", &mask) == 1)
			break;
	fclose(f);
	return mask;
}

/* rename() that fails with -EEXIST instead of replacing `to`, atomically. */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	/* a kernel or filesystem without the flag: link() refuses too */
	if (link(from, to))
		return -errno;
	unlink(from);
	return 0;
}

static int fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n >= sizeof dir)
			return -ENAMETOOLONG;
		memcpy(dir, path, n);
		dir[n ? n : 1] = '\0';
		if (!n)
			dir[0] = '/';
	} else {
		strcpy(dir, ".");
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

int rio__tmpfile_commit(int fd, const char *tmp_path, const char *path, int do_fsync,
                        int replace)
{
	int rc = 0;
	if (fchmod(fd, 0666 & ~process_umask()))
		rc = -errno;
	if (!rc && do_fsync && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	/* checked at open too: what appeared there since is not replaced either */
	if (!rc && replace)
		rc = rio_output_check(path, NULL);
	if (!rc && replace && rename(tmp_path, path))
		rc = -errno;
	if (!rc && !replace)
		rc = rename_noreplace(tmp_path, path);
	if (rc) {
		unlink(tmp_path);
		return rc;
	}
	if (do_fsync)
		rc = fsync_dir_of(path);
	return rc;
}

int rio__write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void *rio__aligned_alloc(size_t align, size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, align, size ? size : align))
		return NULL;
	return p;
}

/*
 * atomic_file.c — see atomic_file.h: temporary name, fsync, rename,
 * directory fsync, each failure returned.
 */
#include "config.h"
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The write loop of both: at the file's offset, or (positional) at `at`. */
static int write_each(int fd, const char *p, size_t n, int positional, uint64_t at)
{
	while (n) {
		ssize_t w = positional ? pwrite(fd, p, n, (off_t)at) : write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO; /* no progress: never loop on it */
		p += w;
		n -= (size_t)w;
		at += (uint64_t)w;
	}
	return 0;
}

int rio__write_all(int fd, const void *data, size_t n)
{
	return write_each(fd, data, n, 0, 0);
}

int rio__pwrite_all(int fd, const void *data, size_t n, uint64_t at)
{
	return write_each(fd, data, n, 1, at);
}

ssize_t rio__pread_full(int fd, void *buf, size_t n, uint64_t at)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int rio__fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

int rio__fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	if (!slash)
		return rio__fsync_dir(".");
	size_t n = (size_t)(slash - path);
	if (n >= sizeof dir)
		return -ENAMETOOLONG;
	if (n == 0)
		return rio__fsync_dir("/");
	memcpy(dir, path, n);
	dir[n] = '\0';
	return rio__fsync_dir(dir);
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

/* rio__tmpfile_commit(), saying in *step which step failed. */
static int commit(int fd, const char *tmp_path, const char *path, int do_fsync, int replace,
                  rio__replace_check check, const char **step)
{
	int rc = 0;
	if (fchmod(fd, 0666 & ~process_umask()))
		rc = -errno, *step = "chmod";
	if (!rc && do_fsync && fsync(fd))
		rc = -errno, *step = "fsync";
	if (close(fd) && !rc)
		rc = -errno, *step = "close";
	/* checked at open too: what appeared there since is not replaced either */
	if (!rc && replace && check && (rc = check(path)) < 0)
		*step = "rename";
	if (!rc && replace && rename(tmp_path, path))
		rc = -errno, *step = "rename";
	if (!rc && !replace && (rc = rename_noreplace(tmp_path, path)) < 0)
		*step = "rename";
	if (rc) {
		unlink(tmp_path);
		return rc;
	}
	if (do_fsync && (rc = rio__fsync_dir_of(path)) < 0)
		*step = "directory fsync";
	return rc;
}

int rio__tmpfile_commit(int fd, const char *tmp_path, const char *path, int do_fsync,
                        int replace, rio__replace_check check)
{
	const char *step;
	return commit(fd, tmp_path, path, do_fsync, replace, check, &step);
}

int rio__write_file_atomic(const char *path, const void *data, size_t n, const char **step)
{
	const char *unused;
	if (!step)
		step = &unused;
	char *tmp = NULL;
	int fd = rio__tmpfile_open(path, &tmp);
	if (fd < 0) {
		*step = "create";
		return fd;
	}
	int rc = rio__write_all(fd, data, n);
	if (rc < 0) {
		*step = "write";
		close(fd);
		unlink(tmp);
	} else {
		rc = commit(fd, tmp, path, 1, 1, NULL, step);
	}
	free(tmp);
	return rc;
}

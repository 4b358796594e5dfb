/*
 * remote_whole.c — a remote shard fetched whole into a private spill and
 * mapped (remote_whole.h): what a globally shuffled epoch of remote shards
 * reads its records from when route.c says ranged GETs would cost one a
 * record.
 */
#include "config.h"
#include "remote_whole.h"
#include "internal.h"
#include "../recordio/remote/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define UNK RIO__UNKNOWN

static const char *spill_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

int rio__remote_whole_room(uint64_t bytes, const char *name, rio_error *err)
{
	const char *dir = spill_dir();
	struct statvfs fs;
	if (statvfs(dir, &fs) == 0 && bytes > (uint64_t)fs.f_bavail * fs.f_frsize / 2)
		return rio__error_set(err, -ENOSPC, name, UNK, UNK,
		                      "fetching %" PRIu64 " bytes whole would take more than half "
		                      "of the free space in %s",
		                      bytes, dir);
	return 0;
}

/* An unlinked file in `dir` with `size` bytes reserved: its descriptor, or
 * a negative error named in err. */
static int spill_open(const char *dir, uint64_t size, const char *url, rio_error *err)
{
	int rc = rio__remote_whole_room(size, url, err);
	if (rc < 0)
		return rc;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* no O_TMPFILE there: a named file, unlinked at once */
		char path[4096];
		snprintf(path, sizeof path, "%s/rio-spill-XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return rio__error_set(err, -errno, dir, UNK, UNK,
		                      "cannot make a spill file for %s", url);
	rc = posix_fallocate(fd, 0, (off_t)size);
	if (rc != 0) {
		close(fd);
		return rio__error_set(err, -rc, url, UNK, UNK,
		                      "cannot reserve %" PRIu64 " bytes in %s to fetch it whole",
		                      size, dir);
	}
	return fd;
}

int rio__remote_whole_map(rio__source *src, struct rio__robj *o, rio_error *err)
{
	if (src->map || src->size == 0)
		return 0;
	if (!o)
		return rio__source_file.map(src, err); /* the shard cache's copy */
	int fd = spill_open(spill_dir(), src->size, src->path, err);
	if (fd < 0)
		return fd;
	size_t len = (size_t)src->size;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd); /* the mapping holds the file */
	if (m == MAP_FAILED)
		return rio__error_set(err, -e, src->path, UNK, UNK, "cannot map its spill file");
	ssize_t n = rio__robj_read(o, m, len, 0, err);
	if (n >= 0 && (size_t)n != len) /* the object shrank since its open */
		n = rio__error_set(err, RIO_ECHANGED, src->path, (uint64_t)n, UNK,
		                   "the object ended early (%" PRIu64 " bytes at open)", src->size);
	if (n < 0 || mprotect(m, len, PROT_READ) != 0) {
		munmap(m, len);
		return n < 0 ? (int)n : rio__error_set(err, -errno, src->path, UNK, UNK, "mprotect");
	}
	src->map = m;
	return 0;
}

int rio__remote_whole_mode(int *mode, rio_error *err)
{
	const char *v = getenv("RIO_REMOTE_WHOLE");
	*mode = 0;
	if (!v || !*v || !strcmp(v, "auto"))
		return 0;
	if (!strcmp(v, "always") || !strcmp(v, "never")) {
		*mode = v[0] == 'a' ? 1 : -1;
		return 0;
	}
	return rio__error_set(err, -EINVAL, NULL, UNK, UNK,
	                      "RIO_REMOTE_WHOLE: '%s': want auto, always or never", v);
}

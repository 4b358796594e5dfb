/*
 * source_file.c — shards in local files (source.h): a descriptor for the
 * loader's positional reads, another with O_DIRECT where asked for and the
 * file system takes it, read-only mappings, a fresh descriptor per stream,
 * and how much of the file the page cache holds (cachestat, Linux 6.5 and
 * later, else mincore over a mapping).
 */
#include "config.h"
#include "source.h"
#include "internal.h"

#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int file_open(rio__source *src, rio_error *err)
{
	/* O_NONBLOCK: a FIFO must be refused, not waited on for a writer */
	src->fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (src->fd < 0)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	struct stat st;
	if (fstat(src->fd, &st) < 0)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	/* shards are read at offsets, by several workers, every epoch: a pipe,
	 * a FIFO or a device cannot serve that */
	if (!S_ISREG(st.st_mode))
		return rio__error_set(err, RIO_EUNSUPPORTED, src->path, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "not a regular file (a pipe, FIFO or device): the loader reads "
		                      "shards at offsets, more than once; save the stream to a file");
	if (fcntl(src->fd, F_SETFL, fcntl(src->fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	src->size = (uint64_t)st.st_size;
	return 0;
}

static int file_direct(rio__source *src, int required, rio_error *err)
{
	if (src->fd_direct >= 0)
		return 0;
	src->fd_direct = open(src->path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (src->fd_direct < 0 && required)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "cannot open with O_DIRECT");
	return 0;
}

static ssize_t file_read_at(const rio__source *src, void *buf, size_t len, uint64_t offset)
{
	return rio__pread_full(src->fd, buf, len, offset);
}

static int file_stream(const rio__source *src, rio_error *err)
{
	int fd = open(src->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	return fd;
}

static int file_map(rio__source *src, rio_error *err)
{
	if (src->map || src->size == 0)
		return 0;
	void *m = mmap(NULL, (size_t)src->size, PROT_READ, MAP_SHARED, src->fd, 0);
	if (m == MAP_FAILED)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "cannot map the shard");
	src->map = m;
	return 0;
}

static void file_unmap(rio__source *src)
{
	if (src->map)
		munmap((void *)src->map, (size_t)src->size);
	src->map = NULL;
}

/* cachestat(2) (Linux 6.5): the pages of [off, off + len) in the page
 * cache, without mapping anything; -1 where the kernel has no such call. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct rio__cachestat_range {
	uint64_t off, len;
};
struct rio__cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static double resident_cachestat(const rio__source *src)
{
	struct rio__cachestat_range r = {0, src->size};
	struct rio__cachestat cs;
	if (syscall(__NR_cachestat, src->fd, &r, &cs, 0) != 0)
		return -1;
	double pages = (double)((src->size + 4095) / 4096);
	double in = (double)cs.nr_cache / pages;
	return in > 1 ? 1 : in;
}

/* mincore(2) over a mapping of the file (its own, or the source's). */
static double resident_mincore(const rio__source *src)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)src->size, pages = (len + (size_t)psz - 1) / (size_t)psz;
	void *m = src->map ? (void *)src->map
	                   : mmap(NULL, len, PROT_READ, MAP_SHARED, src->fd, 0);
	unsigned char *vec = m == MAP_FAILED ? NULL : malloc(pages);
	size_t in = 0;
	int ok = vec && mincore(m, len, vec) == 0;
	for (size_t i = 0; ok && i < pages; i++)
		in += vec[i] & 1;
	free(vec);
	if (m != MAP_FAILED && m != src->map)
		munmap(m, len);
	return ok ? (double)in / (double)pages : -1;
}

static double file_resident(const rio__source *src)
{
	if (src->size == 0)
		return 1;
	double r = resident_cachestat(src);
	return r >= 0 ? r : resident_mincore(src);
}

static void file_close(rio__source *src)
{
	file_unmap(src);
	if (src->fd >= 0)
		close(src->fd);
	if (src->fd_direct >= 0)
		close(src->fd_direct);
	src->fd = src->fd_direct = -1;
}

const rio__source_ops rio__source_file = {
	"file", file_open, file_read_at, file_stream, file_direct, file_map, file_unmap, file_resident,
	file_close, NULL, NULL, NULL, /* read_many (and its halves): a pread costs no round trip */
	NULL,
};

const rio__source_ops *rio__source_kind(const char *path)
{
	return rio_is_url(path) ? &rio__source_remote : &rio__source_file;
}

int rio__source_exists(const char *path, const rio__source_ctx *ctx)
{
	return rio_is_url(path) ? rio__source_remote_exists(path, ctx) : access(path, F_OK) == 0;
}

int rio__source_open(rio__source *src, const char *path, const rio__source_ctx *ctx,
                     rio_error *err)
{
	*src = (rio__source){rio__source_kind(path), path, 0, -1, -1, NULL, NULL, ctx};
	int rc = src->ops->open(src, err);
	if (rc < 0)
		rio__source_close(src);
	return rc;
}

void rio__source_close(rio__source *src)
{
	if (src->ops)
		src->ops->close(src);
	src->ops = NULL;
}

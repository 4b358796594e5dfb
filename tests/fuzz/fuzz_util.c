/*
 * fuzz_util.c — scratch files, compression and CHECK's report for the fuzz
 * targets (see fuzz_util.h). One directory per process, removed at exit, so
 * parallel fuzzing jobs (-jobs=N) never share files.
 */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>

static char dir[256];

void fuzz_check_failed(const char *cond, const char *file, int line)
{
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, cond);
	abort();
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char path[512];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

const char *fuzz_dir(void)
{
	if (dir[0])
		return dir;
	const char *base = getenv("TMPDIR");
	struct stat st;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	if (!base || !*base)
		base = "/tmp";
	snprintf(dir, sizeof dir, "%s/recordio-fuzz-%ld", base, (long)getpid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz: cannot make %s: %s\n", dir, strerror(errno));
		abort();
	}
	atexit(remove_dir);
	return dir;
}

const char *fuzz_write_file(int slot, const char *name, const void *data, size_t size)
{
	static char paths[8][512];
	char *path = paths[slot & 7];
	snprintf(path, sizeof paths[0], "%s/%s", fuzz_dir(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	const uint8_t *p = data;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n <= 0) {
			fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
			abort();
		}
		p += n;
		size -= (size_t)n;
	}
	close(fd);
	return path;
}

void fuzz_remove_file(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	unlink(path);
}

const uint8_t *fuzz_compress(rio_compression codec, const uint8_t *in, size_t n, size_t *size)
{
	static uint8_t *out;
	static size_t out_cap;
	z_stream z;
	memset(&z, 0, sizeof z);
	CHECK(codec == RIO_COMPRESSION_GZIP || codec == RIO_COMPRESSION_ZLIB ||
	      codec == RIO_COMPRESSION_LZ4);
	if (codec != RIO_COMPRESSION_LZ4)
		CHECK(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED,
		                   codec == RIO_COMPRESSION_GZIP ? 31 : 15, 8,
		                   Z_DEFAULT_STRATEGY) == Z_OK);
	size_t cap = codec == RIO_COMPRESSION_LZ4 ? LZ4F_compressFrameBound(n, NULL)
	                                          : deflateBound(&z, n);
	if (cap > out_cap) {
		free(out);
		out = malloc(cap);
		out_cap = cap;
		CHECK(out);
	}
	if (codec == RIO_COMPRESSION_LZ4) {
		*size = LZ4F_compressFrame(out, cap, in, n, NULL);
		CHECK(!LZ4F_isError(*size));
		return out;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*size = z.total_out;
	deflateEnd(&z);
	return out;
}

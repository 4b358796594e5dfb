/*
 * fuzz_util.c — scratch files and CHECK's report for the fuzz targets (see
 * fuzz_util.h). One directory per process, removed at exit, so parallel
 * fuzzing jobs (-jobs=N) never share files.
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

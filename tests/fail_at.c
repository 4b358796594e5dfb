/*
 * fail_at.c — an LD_PRELOAD shim that makes the Nth call of one file
 * system function fail or kills the process there, for the set-commit
 * tests (tests/cli_setcommit.sh).
 *
 *   FAIL_AT=FUNC:N        the Nth call of FUNC fails with EIO (ENOSPC for
 *                         write), without doing anything
 *   FAIL_AT=FUNC:N:kill   the process SIGKILLs itself at the Nth call,
 *                         before doing it
 *   FAIL_COUNT=FILE       at exit, appends "FUNC COUNT" for every FUNC
 *                         (how many steps there are to try)
 *
 * FUNC is rename (rename, renameat, renameat2), fsync (fsync, fdatasync),
 * write, unlink (unlink, unlinkat) or open (open, open64, openat,
 * openat64). Only calls through the dynamic symbol are seen: glibc's own
 * internal calls (stdio, mkstemp) are not, which is what a test of the
 * program's own steps wants. Under AddressSanitizer the shim must come
 * after libasan in LD_PRELOAD; ASan's interceptors then call into it.
 * Built with plain $(CC) -shared -fPIC, without the project's flags.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum { F_RENAME, F_FSYNC, F_WRITE, F_UNLINK, F_OPEN, F_COUNT };
static const char *const names[F_COUNT] = {"rename", "fsync", "write", "unlink", "open"};

static unsigned long calls[F_COUNT];
static int target = -1;
static unsigned long target_n;
static int kill_mode;

__attribute__((constructor)) static void fail_at_init(void)
{
	const char *spec = getenv("FAIL_AT");
	if (!spec || !*spec)
		return;
	char fn[32];
	unsigned long n = 0;
	char mode[16] = "";
	if (sscanf(spec, "%31[a-z]:%lu:%15s", fn, &n, mode) < 2)
		return;
	for (int i = 0; i < F_COUNT; i++)
		if (!strcmp(fn, names[i]))
			target = i;
	target_n = n;
	kill_mode = !strcmp(mode, "kill");
}

__attribute__((destructor)) static void fail_at_report(void)
{
	const char *path = getenv("FAIL_COUNT");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	for (int i = 0; i < F_COUNT; i++)
		fprintf(f, "%s %lu\n", names[i], calls[i]);
	fclose(f);
}

/* Counts a call of family `f`: 1 when this one must fail (errno set). */
static int hit(int f, int err)
{
	calls[f]++;
	if (f != target || calls[f] != target_n)
		return 0;
	if (kill_mode)
		kill(getpid(), SIGKILL);
	errno = err;
	return 1;
}

#define NEXT(type, name) ((type)dlsym(RTLD_NEXT, name))

int rename(const char *a, const char *b)
{
	if (hit(F_RENAME, EIO))
		return -1;
	return NEXT(int (*)(const char *, const char *), "rename")(a, b);
}

int renameat(int da, const char *a, int db, const char *b)
{
	if (hit(F_RENAME, EIO))
		return -1;
	return NEXT(int (*)(int, const char *, int, const char *), "renameat")(da, a, db, b);
}

int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
	if (hit(F_RENAME, EIO))
		return -1;
	return NEXT(int (*)(int, const char *, int, const char *, unsigned), "renameat2")(da, a, db,
	                                                                                   b, flags);
}

int fsync(int fd)
{
	if (hit(F_FSYNC, EIO))
		return -1;
	return NEXT(int (*)(int), "fsync")(fd);
}

int fdatasync(int fd)
{
	if (hit(F_FSYNC, EIO))
		return -1;
	return NEXT(int (*)(int), "fdatasync")(fd);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (hit(F_WRITE, ENOSPC))
		return -1;
	return NEXT(ssize_t (*)(int, const void *, size_t), "write")(fd, buf, n);
}

int unlink(const char *path)
{
	if (hit(F_UNLINK, EIO))
		return -1;
	return NEXT(int (*)(const char *), "unlink")(path);
}

int unlinkat(int dfd, const char *path, int flags)
{
	if (hit(F_UNLINK, EIO))
		return -1;
	return NEXT(int (*)(int, const char *, int), "unlinkat")(dfd, path, flags);
}

/* The mode argument is there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                                                                     \
	do {                                                                                       \
		if ((flags) & (O_CREAT | O_TMPFILE)) {                                             \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, int);                                                    \
			va_end(ap);                                                                \
		}                                                                                  \
	} while (0)

int open(const char *path, int flags, ...)
{
	int mode = 0;
	OPEN_MODE(flags, mode);
	if (hit(F_OPEN, EIO))
		return -1;
	return NEXT(int (*)(const char *, int, ...), "open")(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	int mode = 0;
	OPEN_MODE(flags, mode);
	if (hit(F_OPEN, EIO))
		return -1;
	return NEXT(int (*)(const char *, int, ...), "open64")(path, flags, mode);
}

int openat(int dfd, const char *path, int flags, ...)
{
	int mode = 0;
	OPEN_MODE(flags, mode);
	if (hit(F_OPEN, EIO))
		return -1;
	return NEXT(int (*)(int, const char *, int, ...), "openat")(dfd, path, flags, mode);
}

int openat64(int dfd, const char *path, int flags, ...)
{
	int mode = 0;
	OPEN_MODE(flags, mode);
	if (hit(F_OPEN, EIO))
		return -1;
	return NEXT(int (*)(int, const char *, int, ...), "openat64")(dfd, path, flags, mode);
}

/*
 * shard_cache.c — the loader's shard cache on local disk; the rules and
 * the files are in shard_cache.h.
 */
#include "config.h"
#include "shard_cache.h"
#include "../recordio/remote/remote.h"
#include "atomic_file.h"
#include "grow.h"
#include "stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define UNK RIO__UNKNOWN
#define LOCK_NAME "rio-cache.lock"
#define KEY_HEX 16

struct rio__shard_cache {
	char *dir;
	int dirfd;
	uint64_t limit; /* 0: none */
};

/* ---- names ------------------------------------------------------------------ */

/* FNV-1a over the URL, the size and the ETag: the entry's key. */
static uint64_t entry_key(const char *url, uint64_t size, const char *etag)
{
	char sz[24];
	snprintf(sz, sizeof sz, "%" PRIu64, size);
	const char *parts[3] = {url, sz, etag};
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 3; i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull; /* a separator no string holds */
	}
	return h;
}

static int is_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* "rio-K.shard" or "rio-K.idx": 1. */
static int is_copy(const char *name)
{
	size_t n = strlen(name);
	return !strncmp(name, "rio-", 4) && n > 4 + KEY_HEX && is_hex(name + 4, KEY_HEX) &&
	       (!strcmp(name + 4 + KEY_HEX, ".shard") || !strcmp(name + 4 + KEY_HEX, ".idx"));
}

/* "rio-K.part-PID-SIZE": 1 with its PID and SIZE. */
static int is_part(const char *name, long *pid, uint64_t *size)
{
	if (strncmp(name, "rio-", 4) || strlen(name) < 4 + KEY_HEX + 10 ||
	    !is_hex(name + 4, KEY_HEX) || strncmp(name + 4 + KEY_HEX, ".part-", 6))
		return 0;
	const char *p = name + 4 + KEY_HEX + 6;
	char *end;
	errno = 0;
	*pid = strtol(p, &end, 10);
	if (end == p || *end != '-' || errno)
		return 0;
	p = end + 1;
	*size = strtoull(p, &end, 10);
	return end != p && !*end && !errno && *pid > 0;
}

/* ---- the directory's lock, its scan --------------------------------------- */

static int lock_dir(const rio__shard_cache *c)
{
	int fd = openat(c->dirfd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return -e;
		}
	}
	return fd;
}

static void unlock_dir(int lockfd)
{
	close(lockfd); /* releases the flock */
}

typedef struct copy {
	char name[4 + KEY_HEX + 7];
	uint64_t size;
	struct timespec used;
} copy;

/* Under the directory's lock: the bytes of copies and downloads, the
 * copies in *copies (malloc'd, *n); parts of dead processes deleted when
 * `reap`. `live_part` is set when a live download of `key_hex` is under
 * way. */
static int scan(const rio__shard_cache *c, int reap, const char *key_hex, int *live_part,
                uint64_t *used, copy **copies, size_t *n)
{
	int dfd = dup(c->dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -errno;
	}
	rewinddir(d);
	*used = 0;
	*n = 0;
	if (live_part)
		*live_part = 0;
	size_t cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		long pid;
		uint64_t size;
		struct stat st;
		if (is_part(e->d_name, &pid, &size)) {
			int gone = kill((pid_t)pid, 0) < 0 && errno == ESRCH;
			if (gone && reap) {
				unlinkat(c->dirfd, e->d_name, 0);
				continue;
			}
			*used += size;
			if (live_part && !gone && key_hex && !strncmp(e->d_name + 4, key_hex, KEY_HEX))
				*live_part = 1;
		} else if (is_copy(e->d_name) && fstatat(c->dirfd, e->d_name, &st, 0) == 0) {
			*used += (uint64_t)st.st_size;
			if (!copies)
				continue;
			if (rio__grow(copies, &cap, *n + 1, sizeof **copies, 16)) {
				rc = -ENOMEM;
				break;
			}
			copy *k = &(*copies)[(*n)++];
			/* is_copy: the name fits (strnlen: the compiler can see it) */
			size_t len = strnlen(e->d_name, sizeof k->name - 1);
			memcpy(k->name, e->d_name, len);
			k->name[len] = 0;
			k->size = (uint64_t)st.st_size;
			k->used = st.st_mtim;
		}
	}
	closedir(d);
	return rc;
}

static int older(const void *a, const void *b)
{
	const copy *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* Under the directory's lock: deletes the least recently used copies that
 * no process holds until `need` more bytes fit. 1 when they do. */
static int make_room(const rio__shard_cache *c, uint64_t need)
{
	copy *copies = NULL;
	size_t n = 0;
	uint64_t used;
	if (scan(c, 0, NULL, NULL, &used, &copies, &n) < 0) {
		free(copies);
		return 0;
	}
	qsort(copies, n, sizeof *copies, older);
	for (size_t i = 0; i < n && used + need > c->limit; i++) {
		int fd = openat(c->dirfd, copies[i].name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* held by a reader (in use): not evicted */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && unlinkat(c->dirfd, copies[i].name, 0) == 0)
			used -= copies[i].size;
		close(fd);
	}
	free(copies);
	return used + need <= c->limit;
}

/* ---- open, close ------------------------------------------------------------- */

int rio__shard_cache_open(rio__shard_cache **out, const char *dir, uint64_t limit,
                          rio_error *err)
{
	*out = NULL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return rio__error_set(err, -errno, dir, UNK, UNK, "cannot make the shard cache");
	rio__shard_cache *c = calloc(1, sizeof *c);
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return rio__error_set(err, -ENOMEM, dir, UNK, UNK, NULL);
	}
	c->limit = limit;
	c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int lockfd = c->dirfd < 0 ? -errno : lock_dir(c);
	if (lockfd < 0) {
		rio__shard_cache_close(c);
		return rio__error_set(err, lockfd, dir, UNK, UNK, "the shard cache");
	}
	uint64_t used;
	size_t n;
	int rc = scan(c, 1, NULL, NULL, &used, NULL, &n); /* the dead's downloads */
	unlock_dir(lockfd);
	if (rc < 0) {
		rio__shard_cache_close(c);
		return rio__error_set(err, rc, dir, UNK, UNK, "the shard cache");
	}
	*out = c;
	return 0;
}

void rio__shard_cache_close(rio__shard_cache *c)
{
	if (!c)
		return;
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	free(c);
}

/* ---- a copy -------------------------------------------------------------------- */

/* The download on its way to the reader that checks it: each read from
 * the object's stream (parallel ranged GETs, read ahead) is written to the
 * .part file as it passes, so the copy is checked while it is written, in
 * one pass, not read back after. */
typedef struct passing {
	rio__rstream *s;
	int fd;
	const char *part_path;
	uint64_t written;
	int rc; /* the stream's or a write's error: the download failed */
	rio_error err;
} passing;

static ssize_t pass_read(void *arg, void *buf, size_t n)
{
	passing *t = arg;
	ssize_t got = rio__rstream_read(t->s, buf, n);
	if (got < 0 && t->rc == 0) {
		t->rc = (int)got;
		t->err = *rio__rstream_error(t->s);
	}
	if (got <= 0)
		return got;
	int rc = rio__write_all(t->fd, buf, (size_t)got); /* in order, from 0 */
	if (rc < 0) {
		t->rc = rio__error_set(&t->err, rc, t->part_path, t->written, UNK, NULL);
		return rc;
	}
	t->written += (uint64_t)got;
	return got;
}

/* Downloads o into fd, through a reader when `records` (every CRC checked
 * on the way):
 * 0, 1 when the copy is damaged (not cached: the loader reads the
 * network and meets the damage as it would), or a download's error. */
static int download(rio__robj *o, int records, int fd, const char *part_path, rio_error *err)
{
	passing t = {NULL, fd, part_path, 0, 0, {0}};
	int rc = rio__rstream_open(&t.s, o, 0);
	if (rc < 0)
		return rio__error_set(err, rc, rio__robj_name(o), UNK, UNK, NULL);
	rio__rstream_whole(t.s, 0, RIO__SHARD_CACHE_PARTS);
	int damaged = 0;
	if (records) {
		rio__byte_source src = {pass_read, NULL, NULL, &t};
		rio_reader *r;
		damaged = rio__reader_open_source(&r, &src, part_path, NULL) < 0;
		rio_record rec;
		while (!damaged && (rc = rio_reader_next(r, &rec)) == 1)
			;
		if (!damaged) {
			rio_reader_close(r);
			damaged = rc != 0;
		}
	}
	/* what the records leave after them (a codec's trailer, say) is the
	 * file's too */
	uint8_t rest[4096];
	while (!damaged && t.rc == 0 && pass_read(&t, rest, sizeof rest) > 0)
		;
	uint64_t size = rio__robj_size(o);
	if (t.rc < 0) {
		rc = t.rc;
		if (err)
			*err = t.err;
	} else if (t.written != size) {
		rc = damaged ? 1 : rio__error_set(err, RIO_ECHANGED, rio__robj_name(o), t.written,
		                                  UNK, "the object ended early");
	} else {
		rc = damaged;
	}
	rio__rstream_close(t.s);
	return rc;
}

/* Opens and holds the copy `name`: its descriptor, or -1. */
static int hold_copy(const rio__shard_cache *c, const char *name)
{
	int fd = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	futimens(fd, NULL); /* used now: the last to be evicted */
	return fd;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* What look() finds (RIO__SHARD_CACHE_STREAM, 1, is the fourth: no room) */
#define LOOK_ROOM 0  /* room made for a new copy */
#define LOOK_BUSY 2  /* a download of it under way elsewhere */
#define LOOK_THERE 3 /* the copy, held in *fd */

/* Under the lock: the copy if it is there, a download of it under way
 * elsewhere, room made for a new one, or no room (STREAM). */
static int look(const rio__shard_cache *c, const char *copy_name, uint64_t size, int *fd)
{
	if ((*fd = hold_copy(c, copy_name)) >= 0)
		return LOOK_THERE;
	int live = 0;
	uint64_t used;
	size_t n;
	if (scan(c, 0, copy_name + 4, &live, &used, NULL, &n) < 0)
		return RIO__SHARD_CACHE_STREAM;
	if (live)
		return LOOK_BUSY;
	if (c->limit && (size > c->limit || (used + size > c->limit && !make_room(c, size))))
		return RIO__SHARD_CACHE_STREAM;
	return LOOK_ROOM;
}

int rio__shard_cache_get(rio__shard_cache *c, rio__robj *o, int records, int *fd, char **path,
                         rio_error *err)
{
	*fd = -1;
	*path = NULL;
	uint64_t size = rio__robj_size(o);
	char copy_name[4 + KEY_HEX + 7], part_name[128];
	snprintf(copy_name, sizeof copy_name, "rio-%016" PRIx64 "%s",
	         entry_key(rio__robj_name(o), size, rio__robj_etag(o)), records ? ".shard" : ".idx");
	snprintf(part_name, sizeof part_name, "rio-%.*s.part-%ld-%" PRIu64, KEY_HEX, copy_name + 4,
	         (long)getpid(), size);
	int lockfd, state;
	for (;;) {
		if ((lockfd = lock_dir(c)) < 0)
			return rio__error_set(err, lockfd, c->dir, UNK, UNK, "the shard cache");
		state = look(c, copy_name, size, fd);
		if (state != LOOK_BUSY)
			break;
		unlock_dir(lockfd);
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL); /* another's download */
	}
	int wfd = -1;
	if (state == LOOK_ROOM)
		wfd = openat(c->dirfd, part_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	unlock_dir(lockfd);
	if (state == RIO__SHARD_CACHE_STREAM || (state == LOOK_ROOM && wfd < 0))
		return RIO__SHARD_CACHE_STREAM;
	if (state == LOOK_THERE) {
		if ((*path = join(c->dir, copy_name)))
			return 0;
		close(*fd);
		*fd = -1;
		return -ENOMEM;
	}

	char *part_path = join(c->dir, part_name);
	int rc = part_path ? download(o, records, wfd, part_path, err) : -ENOMEM;
	free(part_path);
	if (rc == 0 && (lockfd = lock_dir(c)) >= 0) {
		/* the copy appears whole, and held: no evictor runs in between */
		if (renameat(c->dirfd, part_name, c->dirfd, copy_name) < 0 ||
		    flock(wfd, LOCK_SH | LOCK_NB) < 0)
			rc = -errno;
		unlock_dir(lockfd);
	} else if (rc == 0) {
		rc = lockfd;
	}
	if (rc != 0) {
		unlinkat(c->dirfd, part_name, 0);
		close(wfd);
		if (rc == 1 || rc == -ENOSPC || rc == -EDQUOT)
			return RIO__SHARD_CACHE_STREAM; /* a damaged copy; a full disk */
		return rc;
	}
	*fd = wfd;
	return (*path = join(c->dir, copy_name)) ? 0 : -ENOMEM;
}

/*
 * checkpoint_write.c — a tr_ckpt serialised (little-endian fields, then
 * arrays, then a CRC-32C of everything before it; checkpoint_format.h) and
 * written atomically (lib/atomic_file.h: temporary file, fsync, rename,
 * fsync of the directory, every failure reported); DIR/clock the same way
 * just after. The probe of a checkpoint
 * directory before any work is here too.
 */
#include "config.h"
#include "checkpoint.h"
#include "checkpoint_format.h"

#include "atomic_file.h"
#include "endian.h"
#include "grow.h"
#include "recordio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a growable byte buffer -------------------------------------------- */

typedef struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
} buf;

static void put(buf *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (rio__grow(&b->p, &b->cap, b->len + n, 1, 4096)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put32(buf *b, uint32_t v)
{
	uint8_t x[4];
	rio__store_le32(x, v);
	put(b, x, 4);
}

static void put64(buf *b, uint64_t v)
{
	uint8_t x[8];
	rio__store_le64(x, v);
	put(b, x, 8);
}

static void putf64(buf *b, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	put64(b, u);
}

static void put_floats(buf *b, const float *v, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		put32(b, u);
	}
}

/* ---- the format ---------------------------------------------------------- */

/* Version 4's fields: the data, the columns, the counters. */
static void encode_v4(buf *b, const tr_ckpt *c)
{
	put32(b, c->sharding);
	put32(b, c->nshards);
	for (uint32_t s = 0; s < c->nshards; s++)
		put64(b, c->shard_records[s]);
	put32(b, c->ncolumns);
	for (uint32_t i = 0; i < c->ncolumns; i++) {
		const tr_ckpt_column *col = &c->columns[i];
		size_t n = strnlen(col->name, TR_CKPT_NAME - 1);
		put32(b, col->role);
		put64(b, col->length);
		put32(b, (uint32_t)n);
		put(b, col->name, n);
	}
	putf64(b, c->total_samples);
	put64(b, c->total_gradients);
	put64(b, c->epoch_skipped);
	const tr_ckpt_server none = {0}; /* counts not known (an older file's) */
	for (uint32_t i = 0; c->strategy && i < c->servers; i++) {
		const tr_ckpt_server *v = c->server ? &c->server[i] : &none;
		put64(b, v->updates);
		put64(b, v->gradients);
		put64(b, v->dropped);
		put64(b, v->skipped);
		put64(b, v->staleness_max);
		putf64(b, v->staleness_sum);
		putf64(b, v->samples);
		put64(b, v->total_updates);
		put64(b, v->total_gradients);
		putf64(b, v->total_samples);
	}
}

/* The header: the fields before the tensors, to nparams. */
static void encode_head(buf *b, const tr_ckpt *c)
{
	put(b, TR_CKPT_MAGIC, 8);
	put32(b, TR_CKPT_VERSION);
	put32(b, c->world);
	put32(b, c->global_batch);
	uint32_t scale;
	memcpy(&scale, &c->lr_scale, 4);
	put32(b, scale);
	put64(b, c->seed);
	put32(b, c->optimizer);
	put32(b, c->nlayers);
	for (uint32_t l = 0; l <= c->nlayers; l++)
		put32(b, (uint32_t)c->sizes[l]);
	put64(b, c->epoch);
	put64(b, c->step_in_epoch);
	put64(b, c->global_step);
	put64(b, c->skipped_steps);
	put64(b, c->optimizer_t);
	putf64(b, c->epoch_loss);
	putf64(b, c->epoch_correct);
	putf64(b, c->epoch_count);
	put64(b, c->nparams);
}

/* The fields after the tensors, to the CRC. */
static void encode_tail(buf *b, const tr_ckpt *c)
{
	put32(b, c->nblobs);
	for (uint32_t i = 0; i < c->nblobs; i++) {
		put32(b, c->blob_size[i]);
		put(b, c->blob[i], c->blob_size[i]);
	}
	put32(b, c->strategy);
	if (c->strategy) {
		put32(b, c->servers);
		put64(b, c->server_version);
		for (uint32_t i = 0; i < c->nblobs; i++) {
			put64(b, c->worker_step_in_epoch[i]);
			put64(b, c->worker_global_step[i]);
		}
	}
	put32(b, c->ntables);
	for (uint32_t t = 0; t < c->ntables; t++) {
		uint64_t n = (uint64_t)c->table_vocab[t] * c->table_dim[t];
		put64(b, (uint64_t)c->table_vocab[t]);
		put32(b, c->table_dim[t]);
		put_floats(b, c->table_params[t], n);
		put_floats(b, c->table_state1[t], n);
		if (c->optimizer == 1)
			put_floats(b, c->table_state2[t], n);
	}
	encode_v4(b, c);
	for (int i = 0; i < 3; i++) /* version 5 */
		put32(b, c->layout[i]);
	put64(b, c->epoch_overflows); /* version 6 */
}

static void encode(buf *b, const tr_ckpt *c)
{
	encode_head(b, c);
	put_floats(b, c->params, c->nparams);
	put_floats(b, c->state1, c->nparams);
	if (c->state2)
		put_floats(b, c->state2, c->nparams);
	encode_tail(b, c);
	put32(b, rio_crc32c(0, b->p, b->len));
}

uint8_t *tr_ckpt_encode_ends(const tr_ckpt *c, size_t *head, size_t *tail)
{
	buf b = {0};
	encode_head(&b, c);
	*head = b.len;
	encode_tail(&b, c);
	*tail = b.len - *head;
	if (b.oom)
		free(b.p);
	return b.oom ? NULL : b.p;
}

/* ---- files ---------------------------------------------------------------- */

/* DIR/NAME made of p[0, n) at once, durably (lib's atomic replace: a
 * temporary file beside it, fsync'd, renamed over it, DIR fsync'd). 0, or
 * a negative errno with a message naming the file and the step that
 * failed (a failed directory fsync too: the file is in place, but its
 * name may not survive a power cut). */
static int write_atomic(const char *dir, const char *name, const uint8_t *p, size_t n,
                        char *err, size_t errlen)
{
	char *path = tr_ckpt_file(dir, name);
	if (!path) {
		snprintf(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	const char *step = NULL;
	int rc = rio__write_file_atomic(path, p, n, &step);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s failed: %s", path, step ? step : "write", strerror(-rc));
	free(path);
	return rc;
}

/* DIR/clock: c's seconds, tied to the checkpoint whose CRC is `crc`. */
static void encode_clock(buf *k, uint32_t crc, double seconds)
{
	put(k, TR_CLOCK_MAGIC, 8);
	put32(k, 1);
	put32(k, crc);
	putf64(k, seconds);
	put32(k, rio_crc32c(0, k->p, k->len));
}

int tr_ckpt_write_clock(const char *dir, uint32_t crc, double seconds, char *err, size_t errlen)
{
	buf k = {0};
	encode_clock(&k, crc, seconds);
	int rc = -ENOMEM;
	if (k.oom)
		snprintf(err, errlen, "%s: out of memory writing a checkpoint", dir);
	else
		rc = write_atomic(dir, "clock", k.p, k.len, err, errlen);
	free(k.p);
	return rc;
}

int tr_ckpt_mkdir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create the checkpoint directory: %s", dir,
		         strerror(e));
		return -e;
	}
	return 0;
}

int tr_ckpt_write(const char *dir, const tr_ckpt *c, char *err, size_t errlen)
{
	int rc = tr_ckpt_mkdir(dir, err, errlen);
	if (rc < 0)
		return rc;
	buf b = {0};
	encode(&b, c);
	if (b.oom) {
		snprintf(err, errlen, "%s: out of memory writing a checkpoint", dir);
		rc = -ENOMEM;
	} else if ((rc = write_atomic(dir, "checkpoint", b.p, b.len, err, errlen)) == 0) {
		rc = tr_ckpt_write_clock(dir, rio__load_le32(b.p + b.len - 4), c->seconds, err,
		                         errlen);
	}
	free(b.p);
	return rc;
}

int tr_ckpt_probe(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "--checkpoint %s: cannot create the directory: %s", dir,
		         strerror(e));
		return -e;
	}
	int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e) {
		snprintf(err, errlen, "--checkpoint %s: %s", dir, strerror(e));
		return -e;
	}
	char *final = tr_ckpt_path(dir), *clock = tr_ckpt_file(dir, "clock");
	char *probe = tr_ckpt_file(dir, ".checkpoint.probe");
	int rc = final && clock && probe ? 0 : -ENOMEM;
	const char *odd = NULL;
	if (rc == 0 && lstat(final, &st) == 0 && !S_ISREG(st.st_mode))
		odd = final;
	else if (rc == 0 && lstat(clock, &st) == 0 && !S_ISREG(st.st_mode))
		odd = clock;
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
	} else if (odd) {
		rc = -EISDIR;
		snprintf(err, errlen, "--checkpoint %s: %s is not a regular file", dir, odd);
	} else {
		int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "--checkpoint %s: cannot write in it: %s", dir,
			         strerror(errno));
		} else {
			close(fd);
			unlink(probe);
		}
	}
	free(final);
	free(clock);
	free(probe);
	return rc;
}

/* Whether `base` is a name DIR keeps: its checkpoint, its clock, their
 * temporaries (lib/atomic_file.c's ".NAME.XXXXXX.tmp") or the probe. */
static int own_name(const char *base)
{
	static const char *const own[] = {"checkpoint", "clock"};
	size_t n = strlen(base);
	if (!strcmp(base, ".checkpoint.probe"))
		return 1;
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		size_t k = strlen(own[i]);
		if (!strcmp(base, own[i]))
			return 1;
		if (n > k + 6 && base[0] == '.' && !strncmp(base + 1, own[i], k) &&
		    base[k + 1] == '.' && !strcmp(base + n - 4, ".tmp"))
			return 1;
	}
	return 0;
}

/* Whether a and b are one file (both stat'd). */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* tr_ckpt_owns, following at most `links` dangling symbolic links. */
static int owns_file(const char *dir, const char *path, int links)
{
	static const char *const own[] = {"checkpoint", "clock"};
	struct stat d, p, f;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *parent = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
	                     : strdup(".");
	int owns = 0;
	if (parent && stat(dir, &d) == 0 && stat(parent, &p) == 0 && same_file(&d, &p))
		owns = own_name(base);
	for (size_t i = 0; !owns && i < 2 && stat(path, &p) == 0; i++) { /* a link to one */
		char *mine = tr_ckpt_file(dir, own[i]);
		owns = mine && stat(mine, &f) == 0 && same_file(&p, &f);
		free(mine);
	}
	char target[4096];
	ssize_t n;
	if (!owns && parent && links > 0 && stat(path, &p) < 0 &&
	    (n = readlink(path, target, sizeof target - 1)) > 0) { /* a dangling link */
		target[n] = '\0';
		char *t = target[0] == '/' || !slash ? strdup(target) : tr_ckpt_file(parent, target);
		owns = t && owns_file(dir, t, links - 1);
		free(t);
	}
	free(parent);
	return owns;
}

int tr_ckpt_owns(const char *dir, const char *path)
{
	return owns_file(dir, path, 8);
}

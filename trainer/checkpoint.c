/*
 * checkpoint.c — serialising a tr_ckpt (little-endian fields, then arrays,
 * then a CRC-32C of everything before it) and the atomic write: temporary
 * file, fsync, rename, fsync of the directory.
 *
 * Layout: "RIOCKPT1" | u32 version | u32 world | (version 2: u32
 * global_batch | f32 lr_scale) | u64 seed | u32 optimizer |
 * u32 nlayers | i32 sizes[nlayers + 1] | u64 epoch, step_in_epoch,
 * global_step, skipped_steps, optimizer_t | f64 epoch_loss, epoch_correct,
 * epoch_count | u64 nparams | f32 params[n] | f32 state1[n] | f32 state2[n]
 * (Adam only) | u32 nblobs | (u32 size, bytes)[nblobs] | (version 3:
 * u32 strategy | strategy ps: u32 servers | u64 server_version | (u64
 * step_in_epoch, u64 global_step)[nblobs] | u32 ntables | (i64 vocab | u32
 * dim | f32 params[vocab x dim] | f32 state1[...] | f32 state2[...] (Adam
 * only))[ntables]) | (version 4: u32 sharding | u32 nshards | u64
 * shard_records[nshards] | u32 ncolumns | (u32 role | u64 length | u32
 * name length | name bytes)[ncolumns] | f64 total_samples | u64
 * total_gradients | u64 epoch_skipped | strategy ps: (u64 updates,
 * gradients, dropped, skipped, staleness_max | f64 staleness_sum, samples
 * | u64 total_updates, total_gradients | f64 total_samples)[servers]) |
 * u32 crc32c.
 *
 * DIR/clock: "RIOCLOCK" | u32 version 1 | u32 the checkpoint's crc32c |
 * f64 seconds | u32 crc32c.
 */
#include "config.h"
#include "checkpoint.h"

#include "endian.h"
#include "recordio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "RIOCKPT1"
#define CLOCK_MAGIC "RIOCLOCK"
enum { CKPT_VERSION = 4 }; /* 1, 2 and 3 are read too */
enum { CLOCK_SIZE = 28, SERVER_BYTES = 80 };

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
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
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

/* ---- a bounded reader ---------------------------------------------------- */

typedef struct cursor {
	const uint8_t *p, *end;
	int short_read;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
	if (c->short_read || (size_t)(c->end - c->p) < n) {
		c->short_read = 1;
		return NULL;
	}
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}

static uint32_t get32(cursor *c)
{
	const uint8_t *p = take(c, 4);
	return p ? rio__load_le32(p) : 0;
}

static uint64_t get64(cursor *c)
{
	const uint8_t *p = take(c, 8);
	return p ? rio__load_le64(p) : 0;
}

static double getf64(cursor *c)
{
	uint64_t u = get64(c);
	double v;
	memcpy(&v, &u, 8);
	return v;
}

static float *get_floats(cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p) / 4) {
		c->short_read = 1;
		return NULL;
	}
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t u = get32(c);
		memcpy(&v[i], &u, 4);
	}
	return v;
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

static int decode_v4(cursor *cur, tr_ckpt *c)
{
	c->sharding = get32(cur);
	c->nshards = get32(cur);
	if (cur->short_read || c->sharding > 2 || c->nshards > (uint64_t)(cur->end - cur->p) / 8)
		return -EBADMSG;
	if (!(c->shard_records = calloc(c->nshards ? c->nshards : 1, sizeof *c->shard_records)))
		return -ENOMEM;
	for (uint32_t s = 0; s < c->nshards; s++)
		c->shard_records[s] = get64(cur);
	c->ncolumns = get32(cur);
	if (cur->short_read || c->ncolumns > TR_CKPT_MAX_COLUMNS)
		return -EBADMSG;
	for (uint32_t i = 0; i < c->ncolumns; i++) {
		tr_ckpt_column *col = &c->columns[i];
		col->role = get32(cur);
		col->length = get64(cur);
		uint32_t n = get32(cur);
		const uint8_t *name = n < TR_CKPT_NAME ? take(cur, n) : NULL;
		/* a name as the command line gives it: no NUL */
		if (!name || col->role > TR_CKPT_Y || memchr(name, 0, n))
			return -EBADMSG;
		memcpy(col->name, name, n);
		col->name[n] = 0;
	}
	c->total_samples = getf64(cur);
	c->total_gradients = get64(cur);
	c->epoch_skipped = get64(cur);
	if (cur->short_read)
		return -EBADMSG;
	if (!c->strategy)
		return 0;
	if (c->servers > (uint64_t)(cur->end - cur->p) / SERVER_BYTES)
		return -EBADMSG;
	if (!(c->server = calloc(c->servers, sizeof *c->server)))
		return -ENOMEM;
	for (uint32_t i = 0; i < c->servers; i++) {
		tr_ckpt_server *v = &c->server[i];
		v->updates = get64(cur);
		v->gradients = get64(cur);
		v->dropped = get64(cur);
		v->skipped = get64(cur);
		v->staleness_max = get64(cur);
		v->staleness_sum = getf64(cur);
		v->samples = getf64(cur);
		v->total_updates = get64(cur);
		v->total_gradients = get64(cur);
		v->total_samples = getf64(cur);
	}
	return cur->short_read ? -EBADMSG : 0;
}

static void encode(buf *b, const tr_ckpt *c)
{
	put(b, MAGIC, 8);
	put32(b, CKPT_VERSION);
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
	put_floats(b, c->params, c->nparams);
	put_floats(b, c->state1, c->nparams);
	if (c->state2)
		put_floats(b, c->state2, c->nparams);
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
	put32(b, rio_crc32c(0, b->p, b->len));
}

static int decode(cursor *cur, tr_ckpt *c)
{
	const uint8_t *magic = take(cur, 8);
	uint32_t version = magic ? get32(cur) : 0;
	if (!magic || memcmp(magic, MAGIC, 8) != 0 || version < 1 || version > CKPT_VERSION)
		return -EBADMSG;
	c->world = get32(cur);
	if (version >= 2) {
		c->global_batch = get32(cur);
		uint32_t scale = get32(cur);
		memcpy(&c->lr_scale, &scale, 4);
	}
	c->seed = get64(cur);
	c->optimizer = get32(cur);
	c->nlayers = get32(cur);
	if (c->nlayers < 1 || c->nlayers > TR_MLP_MAX_LAYERS || c->optimizer > 2 /* lars */)
		return -EBADMSG;
	for (uint32_t l = 0; l <= c->nlayers; l++)
		c->sizes[l] = (int32_t)get32(cur);
	c->epoch = get64(cur);
	c->step_in_epoch = get64(cur);
	c->global_step = get64(cur);
	c->skipped_steps = get64(cur);
	c->optimizer_t = get64(cur);
	c->epoch_loss = getf64(cur);
	c->epoch_correct = getf64(cur);
	c->epoch_count = getf64(cur);
	c->nparams = get64(cur);
	if (cur->short_read || c->nparams != tr_mlp_param_count(c->sizes, (int)c->nlayers))
		return -EBADMSG;
	c->params = get_floats(cur, c->nparams);
	c->state1 = get_floats(cur, c->nparams);
	if (c->optimizer == 1)
		c->state2 = get_floats(cur, c->nparams);
	if (cur->short_read)
		return -EBADMSG;
	if (!c->params || !c->state1 || (c->optimizer == 1 && !c->state2))
		return -ENOMEM;
	c->nblobs = get32(cur);
	if (c->nblobs != c->world)
		return -EBADMSG;
	c->blob_size = calloc(c->nblobs, sizeof *c->blob_size);
	c->blob = calloc(c->nblobs, sizeof *c->blob);
	if (!c->blob_size || !c->blob)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nblobs; i++) {
		c->blob_size[i] = get32(cur);
		const uint8_t *p = take(cur, c->blob_size[i]);
		if (!p)
			return -EBADMSG;
		if (!(c->blob[i] = malloc(c->blob_size[i] ? c->blob_size[i] : 1)))
			return -ENOMEM;
		memcpy(c->blob[i], p, c->blob_size[i]);
	}
	if (version >= 3 && (c->strategy = get32(cur)) != 0) {
		c->servers = get32(cur);
		c->server_version = get64(cur);
		if (cur->short_read || c->strategy > 2 || c->servers < 1)
			return -EBADMSG;
		c->worker_step_in_epoch = calloc(c->nblobs, sizeof(uint64_t));
		c->worker_global_step = calloc(c->nblobs, sizeof(uint64_t));
		if (!c->worker_step_in_epoch || !c->worker_global_step)
			return -ENOMEM;
		for (uint32_t i = 0; i < c->nblobs; i++) {
			c->worker_step_in_epoch[i] = get64(cur);
			c->worker_global_step[i] = get64(cur);
		}
	}
	if (version >= 3) {
		c->ntables = get32(cur);
		if (cur->short_read || c->ntables > TR_MAX_EMBED)
			return -EBADMSG;
		for (uint32_t t = 0; t < c->ntables; t++) {
			c->table_vocab[t] = (int64_t)get64(cur);
			c->table_dim[t] = get32(cur);
			uint64_t n = (uint64_t)c->table_vocab[t] * c->table_dim[t];
			/* within --embed's limits, so that n cannot wrap */
			if (cur->short_read || c->table_vocab[t] < 1 || c->table_vocab[t] > (1ll << 40) ||
			    c->table_dim[t] < 1 || c->table_dim[t] > 4096 ||
			    n > (uint64_t)(cur->end - cur->p) / 4)
				return -EBADMSG;
			c->table_params[t] = get_floats(cur, n);
			c->table_state1[t] = get_floats(cur, n);
			if (c->optimizer == 1)
				c->table_state2[t] = get_floats(cur, n);
			if (cur->short_read)
				return -EBADMSG;
			if (!c->table_params[t] || !c->table_state1[t] ||
			    (c->optimizer == 1 && !c->table_state2[t]))
				return -ENOMEM;
		}
	}
	if (version >= 4) {
		int rc = decode_v4(cur, c);
		if (rc < 0)
			return rc;
	}
	/* every byte accounted for: a file longer than its fields is damaged */
	return cur->short_read || cur->p != cur->end ? -EBADMSG : 0;
}

/* ---- files ---------------------------------------------------------------- */

/* DIR/NAME (malloc'd). */
static char *dir_file(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

char *tr_ckpt_path(const char *dir)
{
	return dir_file(dir, "checkpoint");
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
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

/* DIR/NAME made of p[0, n) at once: written to DIR/.NAME.tmp, fsync'd,
 * renamed, DIR fsync'd. 0, or a negative errno with a message. */
static int write_atomic(const char *dir, const char *name, const uint8_t *p, size_t n,
                        char *err, size_t errlen)
{
	char dotted[64];
	snprintf(dotted, sizeof dotted, ".%s.tmp", name);
	char *final = dir_file(dir, name), *tmp = dir_file(dir, dotted);
	int rc = final && tmp ? 0 : -ENOMEM;
	const char *what = "out of memory";
	int fd = -1;
	if (rc == 0) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			rc = -errno;
			what = "cannot create";
		}
	}
	if (rc == 0 && (rc = write_all(fd, p, n)) < 0)
		what = "write failed";
	if (rc == 0 && fsync(fd) < 0) {
		rc = -errno;
		what = "fsync failed";
	}
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		rc = -errno;
		what = "close failed";
	}
	if (rc == 0 && rename(tmp, final) < 0) {
		rc = -errno;
		what = "rename failed";
	}
	if (rc == 0) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	} else {
		snprintf(err, errlen, "%s: %s: %s", tmp ? tmp : dir, what, strerror(-rc));
		if (fd >= 0)
			unlink(tmp);
	}
	free(final);
	free(tmp);
	return rc;
}

int tr_ckpt_write(const char *dir, const tr_ckpt *c, char *err, size_t errlen)
{
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create the checkpoint directory: %s", dir,
		         strerror(e));
		return -e;
	}
	buf b = {0}, k = {0};
	encode(&b, c);
	if (!b.oom) { /* the clock, tied to the checkpoint by its CRC */
		put(&k, CLOCK_MAGIC, 8);
		put32(&k, 1);
		put(&k, b.p + b.len - 4, 4);
		putf64(&k, c->seconds);
		put32(&k, rio_crc32c(0, k.p, k.len));
	}
	int rc;
	if (b.oom || k.oom) {
		snprintf(err, errlen, "%s: out of memory writing a checkpoint", dir);
		rc = -ENOMEM;
	} else if ((rc = write_atomic(dir, "checkpoint", b.p, b.len, err, errlen)) == 0) {
		rc = write_atomic(dir, "clock", k.p, k.len, err, errlen);
	}
	free(b.p);
	free(k.p);
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
	char *final = tr_ckpt_path(dir), *clock = dir_file(dir, "clock");
	char *probe = dir_file(dir, ".checkpoint.probe");
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

/* Whether a and b are one file (both stat'd). */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* tr_ckpt_owns, following at most `links` dangling symbolic links. */
static int owns_file(const char *dir, const char *path, int links)
{
	static const char *const own[] = {"checkpoint", "clock", ".checkpoint.tmp", ".clock.tmp",
	                                  ".checkpoint.probe"};
	struct stat d, p, f;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *parent = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
	                     : strdup(".");
	int owns = 0;
	if (parent && stat(dir, &d) == 0 && stat(parent, &p) == 0 && same_file(&d, &p))
		for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
			owns |= !strcmp(base, own[i]);
	for (size_t i = 0; !owns && i < 2 && stat(path, &p) == 0; i++) { /* a link to one */
		char *mine = dir_file(dir, own[i]);
		owns = mine && stat(mine, &f) == 0 && same_file(&p, &f);
		free(mine);
	}
	char target[4096];
	ssize_t n;
	if (!owns && parent && links > 0 && stat(path, &p) < 0 &&
	    (n = readlink(path, target, sizeof target - 1)) > 0) { /* a dangling link */
		target[n] = '\0';
		char *t = target[0] == '/' || !slash ? strdup(target) : dir_file(parent, target);
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

/* The whole of a small file (malloc'd, *len), or NULL. */
static uint8_t *slurp(FILE *f, size_t *len)
{
	uint8_t *data = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			uint8_t *p = realloc(data, cap);
			if (!p)
				break;
			data = p;
		}
		size_t got = fread(data + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0)
			break;
	}
	return data;
}

/* DIR/clock's seconds, when it belongs to the checkpoint whose CRC is
 * `crc`; else NAN. */
static double read_clock(const char *dir, uint32_t crc)
{
	char *path = dir_file(dir, "clock");
	FILE *f = path ? fopen(path, "rb") : NULL;
	free(path);
	if (!f)
		return NAN;
	uint8_t k[CLOCK_SIZE + 1];
	size_t n = fread(k, 1, sizeof k, f);
	fclose(f);
	if (n != CLOCK_SIZE || memcmp(k, CLOCK_MAGIC, 8) != 0 || rio__load_le32(k + 8) != 1 ||
	    rio__load_le32(k + 12) != crc || rio__load_le32(k + 24) != rio_crc32c(0, k, 24))
		return NAN;
	cursor cur = {k + 16, k + 24, 0};
	return getf64(&cur);
}

int tr_ckpt_read(const char *dir, tr_ckpt *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	char *path = tr_ckpt_path(dir);
	if (!path)
		return -ENOMEM;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		free(path);
		return -e;
	}
	size_t len;
	uint8_t *data = slurp(f, &len);
	int rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc == 0 && (len < 4 || rio__load_le32(data + len - 4) != rio_crc32c(0, data, len - 4)))
		rc = -EBADMSG;
	if (rc == 0) {
		cursor cur = {data, data + len - 4, 0};
		rc = decode(&cur, c);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path,
		         rc == -EBADMSG ? "not a recordio-train checkpoint, or damaged (CRC or "
		                          "layout mismatch)"
		                        : strerror(-rc));
		tr_ckpt_free(c);
	} else {
		c->seconds = read_clock(dir, rio__load_le32(data + len - 4));
	}
	free(data);
	free(path);
	return rc;
}

void tr_ckpt_free(tr_ckpt *c)
{
	free(c->params);
	free(c->state1);
	free(c->state2);
	for (uint32_t i = 0; c->blob && i < c->nblobs; i++)
		free(c->blob[i]);
	free(c->blob);
	free(c->blob_size);
	free(c->worker_step_in_epoch);
	free(c->worker_global_step);
	for (uint32_t t = 0; t < c->ntables && t < TR_MAX_EMBED; t++) {
		free(c->table_params[t]);
		free(c->table_state1[t]);
		free(c->table_state2[t]);
	}
	free(c->shard_records);
	free(c->server);
	memset(c, 0, sizeof *c);
}

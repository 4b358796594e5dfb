/*
 * checkpoint_read.c — DIR/checkpoint read back into a tr_ckpt
 * (checkpoint_format.h), every field checked against what the file can
 * hold, any version from 1 on; DIR/clock read when it is the checkpoint's.
 */
#include "config.h"
#include "checkpoint.h"
#include "checkpoint_format.h"

#include "atomic_file.h"
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
	if (c->servers > (uint64_t)(cur->end - cur->p) / TR_CKPT_SERVER_BYTES)
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

/* The header, to nparams: the version in *version. */
static int decode_head(cursor *cur, tr_ckpt *c, uint32_t *version)
{
	const uint8_t *magic = take(cur, 8);
	*version = magic ? get32(cur) : 0;
	if (!magic || memcmp(magic, TR_CKPT_MAGIC, 8) != 0 || *version < 1 ||
	    *version > TR_CKPT_VERSION)
		return -EBADMSG;
	c->world = get32(cur);
	if (*version >= 2) {
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
	return 0;
}

/* The fields after the tensors, to the CRC, every byte accounted for. */
static int decode_tail(cursor *cur, tr_ckpt *c, uint32_t version)
{
	c->nblobs = get32(cur);
	if (cur->short_read || c->nblobs != c->world)
		return -EBADMSG;
	c->blob_size = calloc(c->nblobs ? c->nblobs : 1, sizeof *c->blob_size);
	c->blob = calloc(c->nblobs ? c->nblobs : 1, sizeof *c->blob);
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
		c->worker_step_in_epoch = calloc(c->nblobs ? c->nblobs : 1, sizeof(uint64_t));
		c->worker_global_step = calloc(c->nblobs ? c->nblobs : 1, sizeof(uint64_t));
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
	c->layout[0] = c->world; /* before version 5: data parallelism alone */
	c->layout[1] = c->layout[2] = 1;
	for (int i = 0; i < 3 && version >= 5; i++)
		c->layout[i] = get32(cur);
	if (version >= 6)
		c->epoch_overflows = get64(cur);
	/* every byte accounted for: a file longer than its fields is damaged */
	return cur->short_read || cur->p != cur->end ? -EBADMSG : 0;
}

/* ---- files ---------------------------------------------------------------- */

/* DIR/NAME (malloc'd). */
char *tr_ckpt_file(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

char *tr_ckpt_path(const char *dir)
{
	return tr_ckpt_file(dir, "checkpoint");
}

/* All n bytes at `at` of fd: 0, -EBADMSG for a file that ends before
 * them, or a negative errno. */
static int read_at(int fd, void *dst, size_t n, uint64_t at)
{
	ssize_t got = rio__pread_full(fd, dst, n, at);
	return got < 0 ? (int)got : (size_t)got < n ? -EBADMSG : 0;
}

int tr_ckpt_read_floats(int fd, uint64_t at, float *dst, size_t n)
{
	int rc = read_at(fd, dst, n * sizeof *dst, at);
	for (size_t i = 0; rc == 0 && i < n; i++) { /* little-endian in the file */
		uint32_t u = rio__load_le32(&dst[i]);
		memcpy(&dst[i], &u, 4);
	}
	return rc;
}

/* The CRC-32C of fd's first n bytes, read a block at a time: 0 or a
 * negative errno. */
static int crc_of(int fd, uint64_t n, uint32_t *crc)
{
	enum { BLOCK = 1 << 20 };
	uint8_t *block = malloc(BLOCK);
	if (!block)
		return -ENOMEM;
	int rc = 0;
	*crc = 0;
	for (uint64_t at = 0; rc == 0 && at < n; at += BLOCK) {
		size_t len = n - at < BLOCK ? (size_t)(n - at) : BLOCK;
		if ((rc = read_at(fd, block, len, at)) == 0)
			*crc = rio_crc32c(*crc, block, len);
	}
	free(block);
	return rc;
}

/* fd's checkpoint of `size` bytes into c, all but its tensors: the CRC
 * over the whole file (a block at a time), then the header and the fields
 * after the tensors. */
static int decode_file(int fd, uint64_t size, tr_ckpt *c)
{
	uint8_t crc_bytes[4];
	uint32_t crc = 0, version = 0;
	int rc = size < 4 ? -EBADMSG : read_at(fd, crc_bytes, 4, size - 4);
	if (rc == 0)
		rc = crc_of(fd, size - 4, &crc);
	if (rc == 0 && crc != rio__load_le32(crc_bytes))
		rc = -EBADMSG;
	if (rc < 0)
		return rc;
	c->crc = crc;
	/* the header: its longest is that of the most layers */
	uint8_t head[64 + 4 * (TR_MLP_MAX_LAYERS + 1) + 80];
	size_t hn = size - 4 < sizeof head ? (size_t)(size - 4) : sizeof head;
	if ((rc = read_at(fd, head, hn, 0)) < 0)
		return rc;
	cursor cur = {head, head + hn, 0};
	if ((rc = decode_head(&cur, c, &version)) < 0)
		return rc;
	c->tensors_at = (uint64_t)(cur.p - head);
	uint64_t tensors = c->nparams * 4 * (c->optimizer == 1 ? 3 : 2);
	if (c->nparams > size / 4 || c->tensors_at + tensors > size - 4)
		return -EBADMSG;
	uint64_t at = c->tensors_at + tensors, n = size - 4 - at;
	uint8_t *tail = malloc(n ? (size_t)n : 1);
	if (!tail)
		return -ENOMEM;
	rc = read_at(fd, tail, (size_t)n, at);
	cursor t = {tail, tail + n, 0};
	if (rc == 0)
		rc = decode_tail(&t, c, version);
	free(tail);
	return rc;
}

/* DIR/clock's seconds, when it belongs to the checkpoint whose CRC is
 * `crc`; else NAN. */
static double read_clock(const char *dir, uint32_t crc)
{
	char *path = tr_ckpt_file(dir, "clock");
	FILE *f = path ? fopen(path, "rb") : NULL;
	free(path);
	if (!f)
		return NAN;
	uint8_t k[TR_CLOCK_SIZE + 1];
	size_t n = fread(k, 1, sizeof k, f);
	fclose(f);
	if (n != TR_CLOCK_SIZE || memcmp(k, TR_CLOCK_MAGIC, 8) != 0 || rio__load_le32(k + 8) != 1 ||
	    rio__load_le32(k + 12) != crc || rio__load_le32(k + 24) != rio_crc32c(0, k, 24))
		return NAN;
	cursor cur = {k + 16, k + 24, 0};
	return getf64(&cur);
}

/* The message of a failed read of `path`. */
static void read_error(char *err, size_t errlen, const char *path, int rc)
{
	snprintf(err, errlen, "%s: %s", path,
	         rc == -EBADMSG ? "not a recordio-train checkpoint, or damaged (CRC or layout "
	                          "mismatch)"
	                        : strerror(-rc));
}

int tr_ckpt_open(const char *dir, const tr_ckpt *c, char *err, size_t errlen)
{
	char *path = tr_ckpt_path(dir);
	if (!path) {
		snprintf(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int rc = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0 && ((uint64_t)st.st_dev != c->file_id[0] ||
	                (uint64_t)st.st_ino != c->file_id[1] || (uint64_t)st.st_size != c->file_id[2])) {
		snprintf(err, errlen, "%s: replaced while the run resumed from it", path);
		rc = -ESTALE;
	} else if (rc < 0) {
		read_error(err, errlen, path, rc);
	}
	if (rc < 0 && fd >= 0)
		close(fd);
	free(path);
	return rc < 0 ? rc : fd;
}

int tr_ckpt_read_meta(const char *dir, tr_ckpt *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	char *path = tr_ckpt_path(dir);
	if (!path)
		return -ENOMEM;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		free(path);
		return -e;
	}
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0) {
		c->file_id[0] = (uint64_t)st.st_dev;
		c->file_id[1] = (uint64_t)st.st_ino;
		c->file_id[2] = (uint64_t)st.st_size;
		rc = decode_file(fd, (uint64_t)st.st_size, c);
	}
	close(fd);
	if (rc < 0) {
		read_error(err, errlen, path, rc);
		tr_ckpt_free(c);
	} else {
		c->seconds = read_clock(dir, c->crc);
	}
	free(path);
	return rc;
}

int tr_ckpt_read(const char *dir, tr_ckpt *c, char *err, size_t errlen)
{
	int rc = tr_ckpt_read_meta(dir, c, err, errlen);
	if (rc < 0)
		return rc;
	size_t n = (size_t)c->nparams;
	float **dst[3] = {&c->params, &c->state1, &c->state2};
	int tensors = c->optimizer == 1 ? 3 : 2, fd = tr_ckpt_open(dir, c, err, errlen);
	rc = fd < 0 ? fd : 0;
	for (int i = 0; rc == 0 && i < tensors; i++) {
		if (!(*dst[i] = malloc((n ? n : 1) * sizeof(float)))) {
			snprintf(err, errlen, "%s: out of memory reading its checkpoint", dir);
			rc = -ENOMEM;
		} else if ((rc = tr_ckpt_read_floats(fd, c->tensors_at + (uint64_t)i * n * 4, *dst[i],
		                                     n)) < 0) {
			char *path = tr_ckpt_path(dir);
			read_error(err, errlen, path ? path : dir, rc);
			free(path);
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		tr_ckpt_free(c);
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

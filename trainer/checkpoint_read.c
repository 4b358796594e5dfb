/*
 * checkpoint_read.c — DIR/checkpoint read back into a tr_ckpt
 * (checkpoint_format.h), every field checked against what the file can
 * hold, any version from 1 on; DIR/clock read when it is the checkpoint's.
 */
#include "config.h"
#include "checkpoint.h"
#include "checkpoint_format.h"

#include "endian.h"
#include "recordio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int decode(cursor *cur, tr_ckpt *c)
{
	const uint8_t *magic = take(cur, 8);
	uint32_t version = magic ? get32(cur) : 0;
	if (!magic || memcmp(magic, TR_CKPT_MAGIC, 8) != 0 || version < 1 || version > TR_CKPT_VERSION)
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

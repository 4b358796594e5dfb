/*
 * fuzz_checkpoint.c — libFuzzer target for recordio-train's checkpoint
 * parser (tr_ckpt_read, trainer/checkpoint_read.c).
 * fuzz-sources: trainer/checkpoint_read.c trainer/checkpoint_write.c trainer/mlp_shape.c
 *
 * A valid checkpoint is hard to reach by mutation (a CRC-32C guards it), so
 * the input edits one of three valid checkpoints written at start-up by
 * tr_ckpt_write (allreduce with SGD; parameter servers with Adam, worker
 * clocks, the servers' counts and two --embed tables; the same without
 * tables; each with its data's shard counts and columns): its first byte
 * picks the base and whether the CRC is made right
 * again after the edits, the next two a new length, then (offset, byte)
 * pairs overwrite bytes. Checks: a file whose CRC does not match is
 * refused; what is accepted is consistent (the parameter count is the
 * model's, a loader position per rank, the ps section and the tables
 * present and sized as they say) and writes back to a file that reads to
 * the same fields; a version 4 file accepted writes back to its own bytes.
 */
#include "fuzz_util.h"
#include "../../trainer/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#define BASES 3

static uint8_t *base[BASES];
static size_t base_len[BASES];

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	static uint8_t buf[1 << 16];
	*len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	uint8_t *p = malloc(*len);
	CHECK(p != NULL);
	memcpy(p, buf, *len);
	return p;
}

static float *floats(size_t n, float v)
{
	float *p = malloc(n * sizeof *p);
	CHECK(p != NULL);
	for (size_t i = 0; i < n; i++)
		p[i] = v + (float)i * 0.25f;
	return p;
}

/* Base i: written by tr_ckpt_write, read back as bytes. */
static void make_base(int i)
{
	tr_ckpt c = {0};
	int ps = i >= 1;
	c.world = ps ? 2 : 3;
	c.global_batch = 96;
	c.lr_scale = 1.0f;
	c.seed = 7;
	c.optimizer = ps ? 1 : 0; /* Adam under ps */
	c.nlayers = 2;
	int sizes[3] = {5, 4, 3};
	memcpy(c.sizes, sizes, sizeof sizes);
	c.epoch = 1;
	c.step_in_epoch = 3;
	c.global_step = 11;
	c.optimizer_t = 11;
	c.epoch_loss = 1.5;
	c.epoch_count = 64;
	c.nparams = tr_mlp_param_count(sizes, 2);
	c.params = floats(c.nparams, 0.5f);
	c.state1 = floats(c.nparams, -1.0f);
	if (ps)
		c.state2 = floats(c.nparams, 2.0f);
	c.nblobs = c.world;
	c.blob_size = calloc(c.nblobs, sizeof *c.blob_size);
	c.blob = calloc(c.nblobs, sizeof *c.blob);
	CHECK(c.blob_size && c.blob);
	for (uint32_t r = 0; r < c.nblobs; r++) {
		c.blob_size[r] = 3 + r;
		c.blob[r] = malloc(c.blob_size[r]);
		CHECK(c.blob[r] != NULL);
		memset(c.blob[r], 'a' + (int)r, c.blob_size[r]);
	}
	if (ps) {
		c.strategy = 1;
		c.servers = 2;
		c.server_version = 9;
		c.worker_step_in_epoch = calloc(c.nblobs, sizeof(uint64_t));
		c.worker_global_step = calloc(c.nblobs, sizeof(uint64_t));
		CHECK(c.worker_step_in_epoch && c.worker_global_step);
		c.worker_step_in_epoch[1] = 4;
		c.worker_global_step[1] = 12;
		c.server = calloc(c.servers, sizeof *c.server);
		CHECK(c.server != NULL);
		c.server[1].updates = 5;
		c.server[1].staleness_sum = 2.5;
		c.server[1].total_samples = 640;
	}
	c.sharding = ps ? 1 : 2;
	c.nshards = 2 + (uint32_t)i;
	c.shard_records = calloc(c.nshards, sizeof *c.shard_records);
	CHECK(c.shard_records != NULL);
	for (uint32_t s = 0; s < c.nshards; s++)
		c.shard_records[s] = 40 + s;
	c.ncolumns = 2;
	c.columns[0] = (tr_ckpt_column){.role = TR_CKPT_X, .length = 5, .name = "x"};
	c.columns[1] = (tr_ckpt_column){.role = TR_CKPT_Y, .length = 1, .name = "label"};
	c.total_samples = 704;
	c.total_gradients = 33;
	c.epoch_skipped = 1;
	if (i == 1) {
		c.ntables = 2;
		for (int t = 0; t < 2; t++) {
			c.table_vocab[t] = 3 + t;
			c.table_dim[t] = 2;
			size_t n = (size_t)c.table_vocab[t] * c.table_dim[t];
			c.table_params[t] = floats(n, 0.1f);
			c.table_state1[t] = floats(n, 0.2f);
			c.table_state2[t] = floats(n, 0.3f);
		}
	}
	char dir[512], err[512];
	snprintf(dir, sizeof dir, "%s/base%d", fuzz_dir(), i);
	CHECK(tr_ckpt_write(dir, &c, err, sizeof err) == 0);
	tr_ckpt_free(&c);
	char path[600];
	snprintf(path, sizeof path, "%s/checkpoint", dir);
	base[i] = slurp(path, &base_len[i]);
}

/* At exit, before fuzz_util's removal of the directory's files: the
 * directories made here, and what tr_ckpt_write leaves in them (they had
 * been left in /dev/shm, where a later process of the same pid met them). */
static void remove_subdirs(void)
{
	static const char *const subs[] = {"base0", "base1", "base2", "ck", "back"};
	static const char *const files[] = {"checkpoint", "clock", ".checkpoint.tmp", ".clock.tmp"};
	char path[700];
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
			snprintf(path, sizeof path, "%s/%s/%s", fuzz_dir(), subs[i], files[f]);
			unlink(path);
		}
		snprintf(path, sizeof path, "%s/%s", fuzz_dir(), subs[i]);
		rmdir(path);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_dir();
	atexit(remove_subdirs); /* runs before fuzz_dir's own, registered first */
	for (int i = 0; i < BASES; i++)
		make_base(i);
	char dir[512];
	snprintf(dir, sizeof dir, "%s/ck", fuzz_dir());
	CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
	return 0;
}

static void check_consistent(const tr_ckpt *c)
{
	CHECK(c->nlayers >= 1 && c->nlayers <= TR_MLP_MAX_LAYERS);
	CHECK(c->nparams == tr_mlp_param_count(c->sizes, (int)c->nlayers));
	CHECK(c->params && c->state1 && (c->optimizer != 1 || c->state2));
	CHECK(c->nblobs == c->world && c->blob_size && c->blob);
	for (uint32_t r = 0; r < c->nblobs; r++)
		CHECK(c->blob[r] != NULL);
	if (c->strategy)
		CHECK(c->servers >= 1 && c->worker_step_in_epoch && c->worker_global_step);
	CHECK(c->ntables <= TR_MAX_EMBED);
	for (uint32_t t = 0; t < c->ntables; t++) {
		CHECK(c->table_vocab[t] >= 1 && c->table_dim[t] >= 1);
		CHECK(c->table_params[t] && c->table_state1[t]);
		CHECK(c->optimizer != 1 || c->table_state2[t]);
		size_t n = (size_t)c->table_vocab[t] * c->table_dim[t];
		volatile float last = c->table_params[t][n - 1] + c->table_state1[t][n - 1];
		(void)last;
	}
	CHECK(c->sharding <= 2 && c->ncolumns <= TR_CKPT_MAX_COLUMNS);
	if (c->nshards) {
		volatile uint64_t last = c->shard_records[c->nshards - 1];
		(void)last;
	}
	for (uint32_t i = 0; i < c->ncolumns; i++)
		CHECK(c->columns[i].role <= TR_CKPT_Y && strlen(c->columns[i].name) < TR_CKPT_NAME);
	/* a version 4 file's ps section has every server's counts */
	if (c->strategy && c->server) {
		volatile uint64_t last = c->server[c->servers - 1].total_updates;
		(void)last;
	}
}

/* The fields two reads must agree on. */
static void check_same(const tr_ckpt *a, const tr_ckpt *b)
{
	CHECK(a->world == b->world && a->seed == b->seed && a->optimizer == b->optimizer);
	CHECK(a->nparams == b->nparams && a->nblobs == b->nblobs && a->ntables == b->ntables);
	CHECK(a->epoch == b->epoch && a->global_step == b->global_step);
	CHECK(memcmp(a->params, b->params, a->nparams * sizeof(float)) == 0);
	CHECK(memcmp(a->state1, b->state1, a->nparams * sizeof(float)) == 0);
	for (uint32_t r = 0; r < a->nblobs; r++)
		CHECK(a->blob_size[r] == b->blob_size[r] &&
		      memcmp(a->blob[r], b->blob[r], a->blob_size[r]) == 0);
	CHECK(a->strategy == b->strategy && a->servers == b->servers);
	for (uint32_t t = 0; t < a->ntables; t++) {
		size_t n = (size_t)a->table_vocab[t] * a->table_dim[t];
		CHECK(a->table_vocab[t] == b->table_vocab[t] && a->table_dim[t] == b->table_dim[t]);
		CHECK(memcmp(a->table_params[t], b->table_params[t], n * sizeof(float)) == 0);
	}
	CHECK(a->sharding == b->sharding && a->nshards == b->nshards && a->ncolumns == b->ncolumns);
	CHECK(a->nshards == 0 ||
	      memcmp(a->shard_records, b->shard_records, a->nshards * sizeof(uint64_t)) == 0);
	for (uint32_t i = 0; i < a->ncolumns; i++)
		CHECK(a->columns[i].role == b->columns[i].role &&
		      a->columns[i].length == b->columns[i].length &&
		      strcmp(a->columns[i].name, b->columns[i].name) == 0);
	CHECK(a->total_gradients == b->total_gradients && a->epoch_skipped == b->epoch_skipped);
	CHECK(!a->server || memcmp(a->server, b->server, a->servers * sizeof *a->server) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_input in = {data, data + size};
	uint8_t mode = fuzz_u8(&in);
	int b = mode % BASES, fix_crc = (mode & 0x80) == 0;
	size_t len = base_len[b];
	uint16_t cut = (uint16_t)(fuzz_u8(&in) << 8 | fuzz_u8(&in));
	if (cut && cut < len)
		len = cut;
	static uint8_t buf[1 << 16];
	memcpy(buf, base[b], len);
	while (in.p + 3 <= in.end) {
		size_t at = (size_t)(fuzz_u8(&in) << 8 | fuzz_u8(&in));
		uint8_t v = fuzz_u8(&in);
		if (len)
			buf[at % len] = v;
	}
	int crc_ok = len >= 4;
	if (len >= 4 && fix_crc) {
		uint32_t crc = rio_crc32c(0, buf, len - 4);
		memcpy(buf + len - 4, &crc, 4); /* little-endian hosts, as the format */
	} else if (len >= 4) {
		uint32_t have;
		memcpy(&have, buf + len - 4, 4);
		crc_ok = have == rio_crc32c(0, buf, len - 4);
	}
	fuzz_write_file(0, "ck/checkpoint", buf, len);
	char dir[512], err[512];
	snprintf(dir, sizeof dir, "%s/ck", fuzz_dir());
	tr_ckpt c;
	int rc = tr_ckpt_read(dir, &c, err, sizeof err);
	if (rc < 0) {
		CHECK(err[0] != 0);
		return 0;
	}
	CHECK(crc_ok);
	check_consistent(&c);
	/* written back: the same fields, and for a version 4 file its bytes */
	char dir2[512];
	snprintf(dir2, sizeof dir2, "%s/back", fuzz_dir());
	CHECK(tr_ckpt_write(dir2, &c, err, sizeof err) == 0);
	tr_ckpt d;
	CHECK(tr_ckpt_read(dir2, &d, err, sizeof err) == 0);
	check_same(&c, &d);
	uint32_t version;
	memcpy(&version, buf + 8, 4);
	if (version == 4) {
		char path[600];
		snprintf(path, sizeof path, "%s/checkpoint", dir2);
		size_t n;
		uint8_t *again = slurp(path, &n);
		CHECK(n == len && memcmp(again, buf, n) == 0);
		free(again);
	}
	tr_ckpt_free(&d);
	tr_ckpt_free(&c);
	return 0;
}

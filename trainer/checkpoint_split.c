/*
 * checkpoint_split.c — a split model's checkpoint written and read by the
 * ranks that hold its parts (checkpoint_split.h): each rank's runs at
 * their offsets, the file's CRC-32C summed from the ranks' own.
 */
#include "config.h"
#include "checkpoint_split.h"
#include "checkpoint_format.h"

#include "atomic_file.h"
#include "crc32c.h"
#include "endian.h"
#include "exit_status.h"
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a rank's runs ---------------------------------------------------------- */

typedef struct runs {
	tr_slice_run *v;
	size_t n, cap;
	int oom;
} runs;

static void add_run(void *ctx, const tr_slice_run *r)
{
	runs *a = ctx;
	if (a->oom)
		return;
	if (rio__grow(&a->v, &a->cap, a->n + 1, sizeof *a->v, 64)) {
		a->oom = 1;
		return;
	}
	a->v[a->n++] = *r;
}

static int by_whole_at(const void *x, const void *y)
{
	const tr_slice_run *a = x, *b = y;
	return a->whole_at < b->whole_at ? -1 : a->whole_at > b->whole_at;
}

tr_slice_run *tr_ckpt_part_runs(const tr_slice *s, const tr_layout *l, const int *sizes,
                                int nlayers, int owned, size_t *n)
{
	runs a = {0};
	tr_slice_each_run(s, l, sizes, nlayers, owned, add_run, &a);
	*n = 0;
	if (a.oom || !a.n) {
		free(a.v);
		return a.oom ? NULL : calloc(1, sizeof(tr_slice_run));
	}
	qsort(a.v, a.n, sizeof *a.v, by_whole_at);
	size_t k = 0; /* neighbours in both layouts made one */
	for (size_t i = 1; i < a.n; i++) {
		tr_slice_run *last = &a.v[k];
		if (last->whole_at + last->n == a.v[i].whole_at && last->mine_at + last->n == a.v[i].mine_at)
			last->n += a.v[i].n;
		else
			a.v[++k] = a.v[i];
	}
	*n = k + 1;
	return a.v;
}

/* ---- writing ----------------------------------------------------------------- */

/* A rank's writes into the temporary file, and the CRC-32C of the file as
 * if it held zeros but for them (crc over [0, pos)). */
typedef struct writer {
	int fd;
	uint64_t pos;
	uint32_t crc;
	int rc;
	const char *tmp;
	char *err;
	size_t errlen;
} writer;

/* n bytes at `at` (not before pos) written and summed in. */
static void write_bytes(writer *wr, const void *data, size_t n, uint64_t at)
{
	if (wr->rc < 0)
		return;
	if ((wr->rc = rio__pwrite_all(wr->fd, data, n, at)) < 0) {
		snprintf(wr->err, wr->errlen, "%s: write failed: %s", wr->tmp, strerror(-wr->rc));
		return;
	}
	wr->crc = rio__crc32c(rio__crc32c_zeros(wr->crc, at - wr->pos), data, n);
	wr->pos = at + n;
}

/* Floats a block of a run: what a rank holds for writing and reading a
 * checkpoint besides its part (a MiB). */
enum { BLOCK = 1 << 18 };

/* What rank 0 tells the writers. */
typedef struct plan {
	uint64_t tensors_at, nparams, length; /* length: the bytes before the CRC */
	uint32_t name_len;                    /* 0: rank 0 failed, nothing to do */
} plan;

/* This rank's owned runs of every tensor written, a block at a time
 * (fetched, made little-endian, written), then fsync'd. */
static void write_part(writer *wr, const plan *pl, const tr_ckpt_part *part, float *block)
{
	for (int t = 0; t < part->tensors && wr->rc == 0; t++) {
		uint64_t base = pl->tensors_at + (uint64_t)t * pl->nparams * 4;
		for (size_t i = 0; i < part->nowned && wr->rc == 0; i++) {
			const tr_slice_run *r = &part->owned[i];
			for (size_t j = 0; j < r->n && wr->rc == 0; j += BLOCK) {
				size_t k = r->n - j < BLOCK ? r->n - j : BLOCK;
				part->fetch(part->ctx, t, r->mine_at + j, k, block);
				for (size_t x = 0; x < k; x++) {
					uint32_t u;
					memcpy(&u, &block[x], 4);
					rio__store_le32(&block[x], u);
				}
				write_bytes(wr, block, k * 4, base + 4 * (uint64_t)(r->whole_at + j));
			}
		}
	}
	if (wr->rc == 0 && fsync(wr->fd) < 0) {
		wr->rc = -errno;
		snprintf(wr->err, wr->errlen, "%s: fsync failed: %s", wr->tmp, strerror(errno));
	}
}

/* Rank 0: the temporary file opened, c's header and tail encoded; pl and
 * the name filled. 0, or -1 with a message. */
static int begin(const char *dir, const tr_ckpt *c, int tensors, plan *pl, char **path,
                 char **tmp, uint8_t **ends, size_t *head, int *fd, char *err, size_t errlen)
{
	size_t tail;
	int rc = tr_ckpt_mkdir(dir, err, errlen);
	if (rc == 0 && (!(*ends = tr_ckpt_encode_ends(c, head, &tail)) || !(*path = tr_ckpt_path(dir)))) {
		snprintf(err, errlen, "%s: out of memory writing a checkpoint", dir);
		rc = -ENOMEM;
	}
	if (rc == 0 && (*fd = rio__tmpfile_open(*path, tmp)) < 0) {
		snprintf(err, errlen, "%s: create failed: %s", *path, strerror(-*fd));
		rc = *fd;
	}
	if (rc < 0)
		return -1;
	pl->tensors_at = *head;
	pl->nparams = c->nparams;
	pl->length = *head + (uint64_t)tensors * c->nparams * 4 + tail;
	pl->name_len = (uint32_t)strlen(*tmp) + 1;
	return 0;
}

/* Rank 0, every rank's part written: the CRC (`sum`: the ranks' CRCs
 * summed), the rename, the clock. */
static int finish(const char *dir, const tr_ckpt *c, writer *wr, uint64_t length, uint32_t sum,
                  const char *path, char *err, size_t errlen)
{
	uint32_t crc = sum ^ rio__crc32c_zeros(0, length);
	uint8_t le[4];
	rio__store_le32(le, crc);
	write_bytes(wr, le, 4, length);
	int rc = wr->rc;
	if (rc < 0) {
		close(wr->fd);
		unlink(wr->tmp);
		return rc;
	}
	/* (closes the fd; unlinks the temporary file on a failure before the
	 * rename) */
	if ((rc = rio__tmpfile_commit(wr->fd, wr->tmp, path, 1, 1, NULL)) < 0) {
		snprintf(err, errlen, "%s: fsync or rename failed: %s", path, strerror(-rc));
		return rc;
	}
	return tr_ckpt_write_clock(dir, crc, c->seconds, err, errlen);
}

/* This rank's bytes written into the file rank 0 opened (fd; -1 on the
 * other ranks, which open it): rank 0's header first, its tail last. Its
 * CRC's share returned: that of the file with zeros but for its bytes, less
 * the CRC of zeros (0 where it writes nothing). */
static uint32_t write_mine(writer *wr, const plan *pl, const tr_ckpt_part *part,
                           const uint8_t *ends, size_t head)
{
	int root = ends != NULL;
	if (!root && part->writes && (wr->fd = open(wr->tmp, O_WRONLY | O_CLOEXEC)) < 0) {
		wr->rc = -errno;
		snprintf(wr->err, wr->errlen, "%s: open failed: %s", wr->tmp, strerror(errno));
	}
	if (root)
		write_bytes(wr, ends, head, 0);
	float *block = part->writes ? malloc(BLOCK * sizeof *block) : NULL;
	if (part->writes && !block && wr->rc == 0) {
		wr->rc = -ENOMEM;
		snprintf(wr->err, wr->errlen, "out of memory writing a checkpoint");
	}
	if (block && wr->rc == 0)
		write_part(wr, pl, part, block);
	free(block);
	if (root) {
		size_t tail = (size_t)(pl->length - pl->tensors_at) -
		              (size_t)part->tensors * (size_t)pl->nparams * 4;
		write_bytes(wr, ends + head, tail, pl->length - tail);
	}
	if (!root && wr->fd >= 0)
		close(wr->fd);
	return rio__crc32c_zeros(wr->crc, pl->length - wr->pos) ^ rio__crc32c_zeros(0, pl->length);
}

int tr_ckpt_split_write(const tr_world *w, const char *dir, const tr_ckpt *c, int failed,
                        const tr_ckpt_part *part, char *err, size_t errlen)
{
	int root = w->rank == 0, fd = -1, rc = 0;
	plan pl = {0};
	char *path = NULL, *tmp = NULL;
	uint8_t *ends = NULL;
	size_t head = 0;
	if (root && !failed)
		rc = begin(dir, c, part->tensors, &pl, &path, &tmp, &ends, &head, &fd, err, errlen);
	tr_world_bcast(w, &pl, sizeof pl);
	if (!pl.name_len) { /* rank 0 failed, and says why */
		free(path);
		free(ends);
		return root ? -1 : 0;
	}
	char *name = root ? tmp : malloc(pl.name_len);
	if (!name)
		tr_world_abort(w, "out of memory writing a checkpoint", EXIT_DATA);
	tr_world_bcast(w, name, pl.name_len);
	writer wr = {.fd = fd, .tmp = name, .err = err, .errlen = errlen};
	uint32_t share = write_mine(&wr, &pl, part, ends, head), sum = 0;
	MPI_Reduce(&share, &sum, 1, MPI_UINT32_T, MPI_BXOR, 0, w->comm);
	/* every rank has written and fsync'd, or one failed: then rank 0
	 * removes the file and the failing rank says why */
	int first = tr_world_first_failure(w, wr.rc < 0);
	if (root && first < 0) {
		rc = finish(dir, c, &wr, pl.length, sum, path, err, errlen);
	} else if (root) {
		close(fd);
		unlink(tmp);
		rc = wr.rc;
	} else {
		rc = wr.rc;
		free(name);
	}
	free(path);
	free(tmp);
	free(ends);
	return rc < 0 ? -1 : 0;
}

/* ---- reading ----------------------------------------------------------------- */

void tr_ckpt_split_read(const tr_world *w, const char *dir, const tr_ckpt *c,
                        const tr_ckpt_part *part)
{
	uint64_t at[5] = {0};
	if (w->rank == 0) {
		at[0] = c->tensors_at;
		at[1] = c->nparams;
		memcpy(at + 2, c->file_id, sizeof c->file_id);
	}
	tr_world_bcast(w, at, sizeof at);
	tr_ckpt same = {.tensors_at = at[0]};
	memcpy(same.file_id, at + 2, sizeof same.file_id);
	char err[2048] = "";
	int fd = tr_ckpt_open(dir, &same, err, sizeof err), rc = fd < 0 ? fd : 0;
	float *block = malloc(BLOCK * sizeof *block);
	if (!block && rc == 0) {
		snprintf(err, sizeof err, "out of memory resuming from %s", dir);
		rc = -ENOMEM;
	}
	for (int t = 0; t < part->tensors && rc == 0; t++) {
		uint64_t base = at[0] + (uint64_t)t * at[1] * 4;
		for (size_t i = 0; i < part->nheld && rc == 0; i++) {
			const tr_slice_run *r = &part->held[i];
			for (size_t j = 0; j < r->n && rc == 0; j += BLOCK) {
				size_t k = r->n - j < BLOCK ? r->n - j : BLOCK;
				rc = tr_ckpt_read_floats(fd, base + 4 * (uint64_t)(r->whole_at + j), block, k);
				if (rc == 0)
					part->put(part->ctx, t, r->mine_at + j, k, block);
			}
		}
	}
	if (rc < 0 && !*err)
		snprintf(err, sizeof err, "%s/checkpoint: read failed: %s", dir,
		         rc == -EBADMSG ? "shorter than its header says" : strerror(-rc));
	free(block);
	if (fd >= 0)
		close(fd);
	tr_world_agree(w, rc < 0, err, EXIT_DATA);
}

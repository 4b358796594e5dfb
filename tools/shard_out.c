/*
 * shard_out.c — staged sharded output for recordio-pack; see shard_out.h.
 *
 * Life of one shard k: rio_writer_open() on the staging path
 * DIR/.BASE.pack-PID-k.tfrecord[...] (set_commit_staging_name(); the writer
 * itself writes to its own temporary name and renames on close), records
 * appended while the offsets go into a rio_index, rio_writer_close(), then
 * rio_index_write() of STAGING.idx. shard_out_finish() hands every staged
 * pair and its final name PREFIX-k-of-N.tfrecord[...] to set_commit_apply(),
 * which replaces the set through its commit journal.
 */
#include "config.h"
#include "shard_out.h"
#include "common.h"
#include "grow.h"
#include "set_commit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct shard_out {
	shard_out_opts o;
	char *prefix;  /* copy of o.prefix                          */
	char *dir;     /* directory of the prefix ("." when none)   */
	char *base;    /* last component of the prefix              */
	rio_writer *w; /* the open shard, NULL between shards       */
	rio_index idx; /* its index                                 */
	char cur_path[PATH_MAX];
	uint64_t cur_records, cur_bytes;
	uint32_t opened;  /* shards opened so far; current = opened-1 */
	char **staged;    /* completed shards' staging paths          */
	uint32_t nstaged;
	size_t cap;
	char **finals;    /* their final paths (during finish)        */
	uint64_t records, bytes, file_bytes;
	int committed;
	int pending;      /* the commit journal holds the staged files */
};

/* Removes path, ignoring a file that is not there. */
static void remove_quietly(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		tool_error("%s: cannot remove: %s", path, strerror(errno));
}

int shard_out_open(shard_out **out, const shard_out_opts *opts)
{
	*out = NULL;
	shard_out *s = calloc(1, sizeof *s);
	if (!s || !(s->prefix = strdup(opts->prefix))) {
		tool_error("out of memory");
		free(s);
		return -1;
	}
	s->o = *opts;
	s->o.prefix = s->prefix;
	if (set_commit_split(s->prefix, &s->dir, &s->base) < 0) {
		tool_error("out of memory");
		shard_out_close(s);
		return -1;
	}
	if (access(s->dir, W_OK | X_OK) < 0) {
		tool_error("%s: %s", s->dir, strerror(errno));
		shard_out_close(s);
		return -1;
	}
	if (set_commit_check_existing(s->dir, s->base, s->o.force) < 0) {
		shard_out_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void shard_out_set_total(shard_out *s, uint64_t total)
{
	s->o.total = total;
}

/* Start of shard k's records under --shards N: k*total/N without overflow. */
static uint64_t shard_start(const shard_out *s, uint32_t k)
{
	uint64_t n = s->o.shards, q = s->o.total / n, r = s->o.total % n;
	return q * k + r * k / n;
}

/* fsync()s the file at `path`: 0, or -1 after reporting. */
static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		tool_error("%s: fsync: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Completes the open shard: closes the writer (renaming its temporary file
 * to the staging path) and writes the staging .idx. */
static int close_current(shard_out *s)
{
	if (!s->w)
		return 0;
	int rc = rio_writer_close(s->w);
	s->w = NULL;
	if (rc < 0) {
		tool_error("%s: cannot complete shard %u: %s", s->cur_path, s->opened - 1,
		           rio_strerror(rc));
		rio_index_free(&s->idx);
		/* with fsync the writer renames before its directory fsync, which
		 * may then fail: the staging file can exist */
		remove_quietly(s->cur_path);
		return -1;
	}
	/* from here the staged file exists: list it so an abort removes it */
	if (rio__grow(&s->staged, &s->cap, (size_t)s->nstaged + 1, sizeof *s->staged, 16)) {
		remove_quietly(s->cur_path);
		tool_error("out of memory");
		return -1;
	}
	if (!(s->staged[s->nstaged] = strdup(s->cur_path))) {
		remove_quietly(s->cur_path);
		tool_error("out of memory");
		return -1;
	}
	s->nstaged++;
	struct stat st;
	if (stat(s->cur_path, &st) == 0)
		s->file_bytes += (uint64_t)st.st_size;

	char *ipath = rio_index_path(s->cur_path);
	rio_error err;
	rc = ipath ? rio_index_write(ipath, &s->idx, &err) : -ENOMEM;
	rio_index_free(&s->idx);
	if (rc < 0) {
		if (ipath)
			tool_error("%s", err.message);
		else
			tool_error("out of memory");
		free(ipath);
		return -1;
	}
	/* rio_index_write() has no fsync of its own (the shard's writer does) */
	if (s->o.fsync && fsync_path(ipath) < 0) {
		free(ipath);
		return -1;
	}
	free(ipath);
	return 0;
}

/* Closes the open shard and opens the next one. */
static int next_shard(shard_out *s)
{
	if (close_current(s) < 0)
		return -1;
	if (s->opened == SHARD_OUT_MAX) {
		tool_error("%s: more than %u shards after %llu records; give a larger --shard-size",
		           s->prefix, SHARD_OUT_MAX, (unsigned long long)s->records);
		return -1;
	}
	if (set_commit_staging_name(s->cur_path, sizeof s->cur_path, s->dir, s->base, s->opened,
	                            s->o.compression) < 0) {
		tool_error("%s: %s", s->prefix, strerror(ENAMETOOLONG));
		return -1;
	}
	rio_writer_opts wo;
	rio_writer_opts_init(&wo);
	wo.compression = s->o.compression;
	wo.level = s->o.level;
	wo.fsync = s->o.fsync;
	wo.overwrite = 1;
	int rc = rio_writer_open(&s->w, s->cur_path, &wo);
	if (rc < 0) {
		s->w = NULL;
		tool_error("%s: cannot create a shard there: %s", s->dir, rio_strerror(rc));
		return -1;
	}
	s->opened++;
	s->cur_records = s->cur_bytes = 0;
	return 0;
}

int shard_out_write(shard_out *s, const void *data, size_t size)
{
	uint64_t framed = (uint64_t)size + RIO_FRAME_OVERHEAD;
	if (s->o.shards) {
		while ((!s->w || s->records >= shard_start(s, s->opened)) && s->opened < s->o.shards)
			if (next_shard(s) < 0)
				return -1;
	} else if (!s->w || (s->cur_records > 0 && s->cur_bytes + framed > s->o.shard_size)) {
		if (next_shard(s) < 0)
			return -1;
	}
	uint64_t offset;
	int rc = rio_writer_write(s->w, data, size, &offset);
	if (rc < 0) {
		tool_error("%s", rio_writer_error(s->w)->message);
		return -1;
	}
	if (rio_index_append(&s->idx, offset, framed) < 0) {
		tool_error("out of memory");
		return -1;
	}
	s->records++;
	s->cur_records++;
	s->cur_bytes += framed;
	s->bytes += framed;
	return 0;
}

int shard_out_finish(shard_out *s)
{
	if (s->o.shards) {
		while (s->opened < s->o.shards)
			if (next_shard(s) < 0)
				return -1;
	} else if (s->opened == 0 && next_shard(s) < 0) {
		return -1;
	}
	if (close_current(s) < 0)
		return -1;

	uint32_t n = s->nstaged;
	s->finals = calloc(n, sizeof *s->finals);
	if (!s->finals) {
		tool_error("out of memory");
		return -1;
	}
	for (uint32_t k = 0; k < n; k++) {
		char buf[PATH_MAX];
		int len = rio_shard_name_format(buf, sizeof buf, s->prefix, k, n, s->o.compression);
		if (len < 0 || !(s->finals[k] = strdup(buf))) {
			tool_error("%s: %s", s->prefix, len < 0 ? rio_strerror(len) : "out of memory");
			return -1;
		}
	}
	/* without --force, set_commit_apply() refuses shards of the prefix
	 * that appeared since shard_out_open() */
	int rc = set_commit_apply(s->prefix, s->dir, s->base, s->staged, s->finals, n, s->o.force,
	                          s->o.fsync);
	if (rc == SET_COMMIT_PENDING)
		s->pending = 1;
	if (rc < 0)
		return -1;
	s->committed = 1;
	return 0;
}

void shard_out_close(shard_out *s)
{
	if (!s)
		return;
	rio_writer_abort(s->w);
	if (!s->committed && !s->pending) {
		for (uint32_t k = 0; k < s->nstaged; k++) {
			char *sidx = rio_index_path(s->staged[k]);
			remove_quietly(s->staged[k]);
			if (sidx)
				remove_quietly(sidx);
			free(sidx);
		}
	}
	rio_index_free(&s->idx);
	for (uint32_t k = 0; k < s->nstaged; k++) {
		free(s->staged[k]);
		if (s->finals)
			free(s->finals[k]);
	}
	free(s->staged);
	free(s->finals);
	free(s->prefix);
	free(s->dir);
	free(s->base);
	free(s);
}

uint64_t shard_out_records(const shard_out *s) { return s->records; }
uint64_t shard_out_bytes(const shard_out *s) { return s->bytes; }
uint32_t shard_out_count(const shard_out *s) { return s->opened; }

uint64_t shard_out_file_bytes(const shard_out *s)
{
	return s->file_bytes + (s->w ? rio_writer_file_bytes(s->w) : 0);
}

/*
 * writer.c — rio_writer: frames records and writes one shard atomically.
 *
 * Bytes go to a hidden temporary file beside the target through an output
 * stream (stream.c) that compresses when asked. A target that exists and
 * is not a regular file (a directory, a FIFO, a device, a symbolic link)
 * is refused at open, never replaced (rio_output_check). Only a successful
 * rio_writer_close() renames the temporary file into place, so an error, a
 * crash or rio_writer_abort() never leaves a file under the final name.
 * A live writer (opts.live: TensorBoard event files, read while they grow)
 * writes the final name itself and hands records over on flush.
 */
#include "config.h"
#include "internal.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rio_writer {
	char *path;
	char *tmp_path;
	int fd;
	int fsync;
	int overwrite;
	int live;       /* writing `path` itself: tmp_path is NULL */
	rio__ostream *out;
	uint64_t records;
	uint64_t bytes; /* of the uncompressed stream */
	int failed;     /* a write failed: close must not publish the file */
	rio_error err;
};

RIO_API void rio_writer_opts_init(rio_writer_opts *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->compression = RIO_COMPRESSION_NONE;
	opts->overwrite = 1;
}

static void writer_free(rio_writer *w)
{
	rio__ostream_close(w->out);
	free(w->tmp_path);
	free(w->path);
	free(w);
}

/* Removes the temporary file (a live writer has none: its file stays). */
static void drop_tmp(rio_writer *w)
{
	if (w->tmp_path)
		unlink(w->tmp_path);
}

RIO_API int rio_writer_open(rio_writer **out, const char *path, const rio_writer_opts *opts)
{
	rio_writer_opts defaults;
	if (!opts) {
		rio_writer_opts_init(&defaults);
		opts = &defaults;
	}
	*out = NULL;
	if (opts->compression < RIO_COMPRESSION_NONE || opts->compression > RIO_COMPRESSION_LZ4 ||
	    (opts->live && opts->compression != RIO_COMPRESSION_NONE))
		return -EINVAL;
	struct stat st;
	if (!opts->overwrite && path && lstat(path, &st) == 0)
		return -EEXIST; /* whatever it is, a dangling link included */
	int checked = rio_output_check(path, NULL);
	if (checked < 0)
		return checked;
	rio_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return -ENOMEM;
	}
	rio__error_clear(&w->err);
	w->fsync = opts->fsync;
	w->overwrite = opts->overwrite;
	w->live = opts->live;
	if (w->live) {
		/* O_NOFOLLOW and the fstat: what replaced the checked path since
		 * is refused too (O_NONBLOCK: a FIFO never blocks the open) */
		int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
		            (w->overwrite ? O_TRUNC : O_EXCL);
		w->fd = open(path, flags, 0666);
		if (w->fd < 0)
			w->fd = errno == ELOOP ? RIO_EUNSUPPORTED : -errno;
		else if (fstat(w->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		         fcntl(w->fd, F_SETFL, 0) < 0) {
			close(w->fd);
			w->fd = RIO_EUNSUPPORTED;
		}
	} else {
		w->fd = rio__tmpfile_open(path, &w->tmp_path);
	}
	if (w->fd < 0) {
		int rc = w->fd;
		writer_free(w);
		return rc;
	}
	int rc = rio__ostream_open(&w->out, w->fd, opts->compression, opts->level);
	if (rc) {
		close(w->fd);
		if (w->live) /* created (or emptied) just now */
			unlink(w->path);
		drop_tmp(w);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

RIO_API int rio_writer_write(rio_writer *w, const void *data, size_t size, uint64_t *offset)
{
	uint8_t header[RIO_HEADER_SIZE], footer[RIO_FOOTER_SIZE];
	if (w->failed)
		return w->err.code;
	rio_frame_header(header, size);
	rio_frame_footer(footer, data, size);
	int rc = rio__ostream_write(w->out, header, sizeof header);
	if (!rc && size)
		rc = rio__ostream_write(w->out, data, size);
	if (!rc)
		rc = rio__ostream_write(w->out, footer, sizeof footer);
	if (rc) {
		w->failed = 1;
		return rio__error_set(&w->err, rc, w->path, w->bytes, w->records, "writing record");
	}
	if (offset)
		*offset = w->bytes;
	w->bytes += size + RIO_FRAME_OVERHEAD;
	w->records++;
	return 0;
}

RIO_API uint64_t rio_writer_records(const rio_writer *w)
{
	return w->records;
}

RIO_API uint64_t rio_writer_bytes(const rio_writer *w)
{
	return w->bytes;
}

RIO_API uint64_t rio_writer_file_bytes(const rio_writer *w)
{
	return rio__ostream_file_bytes(w->out);
}

RIO_API int rio_writer_flush(rio_writer *w)
{
	if (w->failed)
		return w->err.code;
	int rc = rio__ostream_flush(w->out);
	if (rc == -ENOTSUP)
		return rc;
	if (rc) {
		w->failed = 1;
		return rio__error_set(&w->err, rc, w->path, w->bytes, w->records, "flushing");
	}
	return 0;
}

RIO_API const rio_error *rio_writer_error(const rio_writer *w)
{
	return &w->err;
}

RIO_API int rio_writer_close(rio_writer *w)
{
	if (!w)
		return 0;
	int rc = w->failed ? w->err.code : rio__ostream_finish(w->out);
	if (rc) {
		close(w->fd);
		drop_tmp(w);
	} else if (w->live) {
		if (w->fsync && fsync(w->fd))
			rc = -errno;
		if (close(w->fd) && !rc)
			rc = -errno;
	} else {
		rc = rio__tmpfile_commit(w->fd, w->tmp_path, w->path, w->fsync, w->overwrite,
		                         rio__output_replaceable);
	}
	writer_free(w);
	return rc;
}

RIO_API void rio_writer_abort(rio_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	drop_tmp(w);
	writer_free(w);
}

/*
 * index.c — the `.idx` sidecar: read, write, build.
 *
 * The format is the one NVIDIA DALI's tfrecord2idx and the Python `tfrecord`
 * package write: one line per record, "<offset> <framed size>\n", the
 * offset in the uncompressed stream. It lets a loader plan reads (and split
 * records among ranks) without scanning the shard.
 */
#include "config.h"
#include "internal.h"
#include "decimal.h"
#include "grow.h"
#include "remote/remote.h"
#include "remote/text.h"
#include "remote/url.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

RIO_API void rio_index_free(rio_index *idx)
{
	if (!idx)
		return;
	free(idx->offset);
	free(idx->framed_size);
	memset(idx, 0, sizeof *idx);
}

RIO_API int rio_index_append(rio_index *idx, uint64_t offset, uint64_t framed_size)
{
	/* capacity is implicit: 64, then doubling at each power of two */
	uint64_t n = idx->count;
	if (n == 0 || (n >= 64 && (n & (n - 1)) == 0)) {
		size_t cap = rio__grow_cap((size_t)n, (size_t)n + 1, 64);
		if (rio__resize(&idx->offset, cap, sizeof *idx->offset) ||
		    rio__resize(&idx->framed_size, cap, sizeof *idx->framed_size))
			return -ENOMEM;
	}
	idx->offset[n] = offset;
	idx->framed_size[n] = framed_size;
	idx->count = n + 1;
	return 0;
}

RIO_API char *rio_index_path(const char *shard_path)
{
	size_t n = strlen(shard_path);
	char *p = malloc(n + 5);
	if (p) {
		memcpy(p, shard_path, n);
		memcpy(p + n, ".idx", 5);
	}
	return p;
}

/* Parses one unsigned decimal number; returns the position after it or NULL. */
static const char *parse_u64(const char *p, uint64_t *out)
{
	if (*p < '0' || *p > '9')
		return NULL;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9') {
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
		p++;
	}
	*out = v;
	return p;
}

/* The longest line an entry can take: two 20-digit numbers, blanks, "\r\n". */
#define INDEX_LINE_MAX 64

/* Reads one line (its "\n" included when there is one) into buf, which
 * holds INDEX_LINE_MAX bytes: returns its length, 0 at the end, -1 for a
 * line longer than any entry (never allocating for it: an .idx of one
 * endless line is malformed, not a reason to run out of memory), or -EIO. */
static long index_line(FILE *f, char *buf)
{
	long n = 0;
	int c;
	while ((c = getc_unlocked(f)) != EOF) {
		if (n == INDEX_LINE_MAX)
			return -1;
		buf[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (c == EOF && ferror(f))
		return -EIO;
	return n;
}

/* The largest .idx read from a URL: 40 million entries. */
#define INDEX_URL_MAX (1ull << 30)

/* The text of a sidecar read whole (`len` bytes, NUL-terminated) as a
 * stream to parse; NULL with errno and the message in err. */
static FILE *open_text(const char *url, char *text, size_t len, rio_error *err)
{
	FILE *f = fmemopen(text, len ? len : 1, "r");
	if (!f)
		rio__error_set(err, -errno, url, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	else if (!len)
		getc(f); /* an empty .idx: the one byte fmemopen needed is not one */
	return f;
}

/* The sidecar at a local path, a regular file only (opening a FIFO would
 * wait for a writer); NULL with errno and the message in err. */
static FILE *open_local(const char *path, rio_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		rio__error_set(err, -e, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		rio__error_set(err, RIO_EBADINDEX, path, RIO__UNKNOWN, RIO__UNKNOWN,
		               "%s, not a regular file", rio__file_kind(st.st_mode));
		errno = -RIO_EBADINDEX;
		return NULL;
	}
	FILE *f = fdopen(fd, "re");
	if (!f) {
		int e = errno;
		close(fd);
		rio__error_set(err, -e, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		errno = e;
	}
	return f;
}

/* Parses the .idx text of f (then closed) into idx, emptied on an error
 * (named after `path`). */
static int index_parse(FILE *f, const char *path, rio_index *idx, rio_error *err)
{
	char line[INDEX_LINE_MAX + 1];
	long len;
	uint64_t lineno = 0, expect = 0;
	int rc = 0;
	while ((len = index_line(f, line)) != 0) {
		lineno++;
		if (len == -EIO) {
			rc = rio__error_set(err, -EIO, path, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "reading line %llu", (unsigned long long)lineno);
			break;
		}
		if (len < 0) {
			rc = rio__error_set(err, RIO_EBADINDEX, path, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "line %llu is longer than %d bytes (no entry is)",
			                    (unsigned long long)lineno, INDEX_LINE_MAX);
			break;
		}
		line[len] = '\0';
		/* all of the line but its "\n" or "\r\n" must parse */
		const char *end = line + len;
		if (end > line && end[-1] == '\n')
			end--;
		if (end > line && end[-1] == '\r')
			end--;
		uint64_t off = 0, size = 0;
		const char *p = parse_u64(line, &off);
		if (p && (*p == ' ' || *p == '\t')) {
			while (*p == ' ' || *p == '\t')
				p++;
			p = parse_u64(p, &size);
		} else {
			p = NULL;
		}
		if (p != end) {
			rc = rio__error_set(err, RIO_EBADINDEX, path, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "line %llu is not \"<offset> <size>\"",
			                    (unsigned long long)lineno);
			break;
		}
		if (size > UINT64_MAX - off) {
			rc = rio__error_set(err, RIO_EBADINDEX, path, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "line %llu: offset %llu + size %llu overflows",
			                    (unsigned long long)lineno, (unsigned long long)off,
			                    (unsigned long long)size);
			break;
		}
		if (size < RIO_FRAME_OVERHEAD || off != expect) {
			rc = rio__error_set(err, RIO_EBADINDEX, path, RIO__UNKNOWN, RIO__UNKNOWN,
			                    "line %llu: offset %llu size %llu does not follow the "
			                    "previous record (expected offset %llu, size >= 16)",
			                    (unsigned long long)lineno, (unsigned long long)off,
			                    (unsigned long long)size, (unsigned long long)expect);
			break;
		}
		expect = off + size;
		if ((rc = rio_index_append(idx, off, size))) {
			rio__error_set(err, rc, path, RIO__UNKNOWN, RIO__UNKNOWN, "line %llu",
			               (unsigned long long)lineno);
			break;
		}
	}
	fclose(f);
	if (rc)
		rio_index_free(idx);
	return rc;
}

int rio__index_read_remote(rio__remote *r, const char *url, int quiet_enoent, rio_index *idx,
                           rio_error *err)
{
	memset(idx, 0, sizeof *idx);
	rio__error_clear(err);
	char *text = NULL;
	size_t len = 0;
	int rc = rio__remote_get_all(r, url, INDEX_URL_MAX, quiet_enoent, &text, &len, err);
	FILE *f = rc == 0 ? open_text(url, text, len, err) : NULL;
	if (f)
		rc = index_parse(f, url, idx, err);
	else if (rc == 0)
		rc = -errno;
	free(text);
	return rc;
}

RIO_API int rio_index_read(const char *path, rio_index *idx, rio_error *err)
{
	return rio_index_read_opts(path, NULL, idx, err);
}

RIO_API int rio_index_read_opts(const char *path, const rio_remote_opts *remote, rio_index *idx,
                                rio_error *err)
{
	memset(idx, 0, sizeof *idx);
	rio__error_clear(err);
	if (rio__url_is_remote(path)) { /* a client of its own, with `remote` */
		rio__remote *r = NULL;
		int rc = rio__remote_open(&r, remote, err);
		if (rc == 0)
			rc = rio__index_read_remote(r, path, 0, idx, err);
		rio__remote_close(r);
		return rc;
	}
	FILE *f = open_local(path, err);
	return f ? index_parse(f, path, idx, err) : -errno;
}

/* Hands the index's text to out(arg, bytes, n) in chunks: 0 or out's
 * error. */
typedef int (*index_sink)(void *arg, const char *p, size_t n);

static int index_emit(const rio_index *idx, index_sink out, void *arg)
{
	enum { CHUNK = 64 * 1024, LINE_MAX_LEN = 42 };
	char *buf = malloc(CHUNK);
	int rc = buf ? 0 : -ENOMEM;
	char *p = buf;
	for (uint64_t i = 0; !rc && i < idx->count; i++) {
		p = rio__put_u64(p, idx->offset[i]);
		*p++ = ' ';
		p = rio__put_u64(p, idx->framed_size[i]);
		*p++ = '\n';
		if (p - buf > CHUNK - LINE_MAX_LEN) {
			rc = out(arg, buf, (size_t)(p - buf));
			p = buf;
		}
	}
	if (!rc)
		rc = out(arg, buf, (size_t)(p - buf));
	free(buf);
	return rc;
}

static int sink_fd(void *arg, const char *p, size_t n)
{
	return rio__write_all(*(int *)arg, p, n);
}

static int sink_text(void *arg, const char *p, size_t n)
{
	return rio__text_append(arg, p, n);
}

/* One PUT of the whole text. */
static int write_url(const char *url, const rio_index *idx, const rio_remote_opts *remote,
                     rio_error *err)
{
	rio__text t = {0};
	rio__remote *r = NULL;
	int rc = index_emit(idx, sink_text, &t);
	if (rc < 0)
		rc = rio__error_set(err, rc, url, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	else if ((rc = rio__remote_open(&r, remote, err)) == 0)
		rc = rio__remote_put(r, url, rio__text_str(&t), t.n, err);
	rio__remote_close(r);
	rio__text_free(&t);
	return rc;
}

RIO_API int rio_index_write(const char *path, const rio_index *idx, rio_error *err)
{
	return rio_index_write_opts(path, idx, NULL, err);
}

RIO_API int rio_index_write_opts(const char *path, const rio_index *idx,
                                 const rio_remote_opts *remote, rio_error *err)
{
	char *tmp = NULL;
	if (rio__url_is_remote(path))
		return write_url(path, idx, remote, err);
	int fd = rio_output_check(path, err);
	if (fd < 0)
		return fd;
	fd = rio__tmpfile_open(path, &tmp);
	if (fd < 0)
		return rio__error_set(err, fd, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	int rc = index_emit(idx, sink_fd, &fd);
	if (rc) {
		close(fd);
		unlink(tmp);
	} else {
		rc = rio__tmpfile_commit(fd, tmp, path, 0, 1, rio__output_replaceable);
	}
	free(tmp);
	if (rc)
		return rio__error_set(err, rc, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	return 0;
}

RIO_API int rio_index_build(const char *shard_path, rio_index *idx, rio_error *err)
{
	return rio_index_build_opts(shard_path, NULL, idx, err);
}

RIO_API int rio_index_build_opts(const char *shard_path, const rio_reader_opts *opts,
                                 rio_index *idx, rio_error *err)
{
	memset(idx, 0, sizeof *idx);
	rio__error_clear(err);
	rio_reader *r;
	int rc = rio_reader_open_err(&r, shard_path, opts, err);
	if (rc)
		return rc;
	rio_record rec;
	while ((rc = rio_reader_next(r, &rec)) == 1)
		if ((rc = rio_index_append(idx, rec.offset, rec.size + RIO_FRAME_OVERHEAD)))
			break;
	if (rc < 0) {
		if (err)
			*err = *rio_reader_error(r);
		if (!err || err->code != rc)
			rio__error_set(err, rc, shard_path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		rio_index_free(idx);
	}
	rio_reader_close(r);
	return rc < 0 ? rc : 0;
}

RIO_API int rio_path_exists(const char *path, const rio_remote_opts *remote, rio_error *err)
{
	return rio_path_size(path, remote, NULL, err);
}

RIO_API int rio_path_size(const char *path, const rio_remote_opts *remote, uint64_t *size,
                          rio_error *err)
{
	rio__error_clear(err);
	if (!rio__url_is_remote(path)) {
		struct stat st;
		if (stat(path, &st) == 0) {
			if (size)
				*size = (uint64_t)st.st_size;
			return 1;
		}
		return errno == ENOENT || errno == ENOTDIR
		               ? 0
		               : rio__error_set(err, -errno, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	rio__remote *r = NULL;
	int rc = rio__remote_open(&r, remote, err);
	if (rc == 0)
		rc = rio__remote_exists(r, path, size, err);
	rio__remote_close(r);
	return rc;
}

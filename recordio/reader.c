/*
 * reader.c — rio_reader: a stream of verified records from one shard.
 *
 * The reader keeps one 64-byte aligned buffer of uncompressed stream bytes
 * and hands out records as views into it: no copy per record. When a frame
 * runs past the end of the buffer, the partial frame is moved to the front
 * (placed so that the next read lands on an aligned address: misaligned
 * destinations make the kernel's copy several times slower) and the buffer
 * is refilled with one large read; a frame larger than the buffer grows it,
 * up to max_record_size.
 *
 * Damage is reported with its place (file, stream offset, record number).
 * Under RIO_DAMAGE_SKIP the reader recovers: a bad data CRC skips that one
 * frame; a bad length (CRC mismatch or over the limit) scans forward byte by
 * byte to the next offset where a valid header starts; a truncated tail ends
 * the file, and so does a compressed stream cut short. Damage inside a
 * compressed stream (the codec's error, or a bad frame in what it decoded)
 * cannot be skipped: the decoded bytes after it cannot be trusted, so it
 * stops the reader, after the records decoded before it.
 */
#include "config.h"
#include "frame_scan.h"
#include "internal.h"
#include "remote/remote.h"
#include "remote/url.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN 64u
/* A larger read gains nothing (and the buffer sums must not wrap). */
#define RIO__MAX_BUFFER ((size_t)1 << 30)

struct rio_reader {
	char *path;
	int fd;
	int own_fd;          /* close fd in rio_reader_close()                */
	rio__remote *remote; /* a URL's: the client, the object, its stream  */
	rio__robj *robj;
	rio__rstream *rstream;
	rio_reader_opts opts;
	rio_compression comp;
	rio__istream *in;
	uint8_t *buf;
	size_t cap;
	size_t start;        /* buf[start, end) holds stream bytes; what lies
	                      * before start is stale (left by make_room)     */
	size_t pos, end;     /* unconsumed bytes: buf[pos, end)               */
	uint64_t offset;     /* stream offset of buf[pos]                     */
	uint64_t index;      /* number of the next record                     */
	size_t read_limit;   /* 0, or the most one refill may read (random access) */
	int eof;             /* the stream returned 0                          */
	int sticky;          /* error every later call returns                 */
	rio__damage dmg;     /* the damage policy and what it skipped         */
	rio_error err;
};

RIO_API void rio_reader_opts_init(rio_reader_opts *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->compression = RIO_COMPRESSION_AUTO;
	opts->verify_crc = 1;
	opts->on_damage = RIO_DAMAGE_FAIL;
	opts->max_record_size = RIO_DEFAULT_MAX_RECORD;
	opts->buffer_size = 1u << 20;
	rio_remote_opts_init(&opts->remote);
}

/* The reader over a byte source (the stream of an fd or of a remote
 * object); on failure *out is NULL and nothing of the source is closed. */
static int reader_new(rio_reader **out, const rio__byte_source *src, const char *name,
                      const rio_reader_opts *opts)
{
	*out = NULL;
	rio_reader *r = calloc(1, sizeof *r);
	if (!r || !(r->path = strdup(name))) {
		free(r);
		return -ENOMEM;
	}
	r->fd = -1;
	r->opts = *opts;
	if (r->opts.max_record_size > RIO__FRAME_MAX)
		r->opts.max_record_size = RIO__FRAME_MAX;
	if (r->opts.buffer_size < 4096)
		r->opts.buffer_size = 4096;
	if (r->opts.buffer_size > RIO__MAX_BUFFER)
		r->opts.buffer_size = RIO__MAX_BUFFER;
	r->opts.buffer_size = (r->opts.buffer_size + 4095) & ~(size_t)4095;
	rio__error_clear(&r->err);
	rio__damage_init(&r->dmg, opts->on_damage);

	/* AUTO: the stream reads the first bytes and detects the codec, with
	 * read(), so that pipes and FIFOs are detected too */
	int rc = rio__istream_open_source(&r->in, src, opts->compression);
	if (!rc)
		r->comp = rio__istream_compression(r->in);
	r->cap = 2 * r->opts.buffer_size;
	if (!rc && !(r->buf = rio__aligned_alloc(4096, r->cap)))
		rc = -ENOMEM;
	if (rc) {
		rio_reader_close(r); /* nothing of the source is its own yet */
		return rc;
	}
	*out = r;
	return 0;
}

static int opts_ok(const rio_reader_opts *opts)
{
	return opts->compression >= RIO_COMPRESSION_AUTO &&
	       opts->compression <= RIO_COMPRESSION_LZ4 && opts->on_damage >= RIO_DAMAGE_FAIL &&
	       opts->on_damage <= RIO_DAMAGE_REPORT;
}

int rio__reader_open_source(rio_reader **out, const rio__byte_source *src, const char *name,
                            const rio_reader_opts *opts)
{
	rio_reader_opts defaults;
	if (!opts) {
		rio_reader_opts_init(&defaults);
		opts = &defaults;
	}
	*out = NULL;
	if (!opts_ok(opts) || !name)
		return -EINVAL;
	return reader_new(out, src, name, opts);
}

/* The reader over an open fd: `own` says whether rio_reader_close() closes
 * it (on failure here it is left open). */
static int reader_open(rio_reader **out, int fd, int own, const char *name,
                       const rio_reader_opts *opts)
{
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode))
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rio__byte_source src;
	rio__fd_source(fd, &src);
	int rc = rio__reader_open_source(out, &src, name, opts);
	if (rc == 0) {
		(*out)->fd = fd;
		(*out)->own_fd = own;
	}
	return rc;
}

/* The reader of a URL: its own client (opts->remote), the object opened
 * (size and ETag taken: every read checks them) and read as a stream. */
static int reader_open_url(rio_reader **out, const char *url, const rio_reader_opts *opts,
                           rio_error *err)
{
	rio__remote *remote = NULL;
	rio__robj *obj = NULL;
	rio__rstream *rs = NULL;
	int rc = rio__remote_open(&remote, &opts->remote, err);
	if (rc == 0)
		rc = rio__robj_open(&obj, remote, url, err);
	if (rc == 0 && (rc = rio__rstream_open(&rs, obj, 0)) < 0)
		rio__error_set(err, rc, url, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	if (rc == 0) {
		rio__byte_source src;
		rio__rstream_source(rs, &src);
		if ((rc = reader_new(out, &src, url, opts)) < 0) {
			const rio_error *re = rio__rstream_error(rs);
			if (err && re->code == rc)
				*err = *re;
			else
				rio__error_set(err, rc, url, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		}
	}
	if (rc < 0) {
		rio__rstream_close(rs);
		rio__robj_close(obj);
		rio__remote_close(remote);
		return rc;
	}
	(*out)->remote = remote;
	(*out)->robj = obj;
	(*out)->rstream = rs;
	return 0;
}

RIO_API int rio_reader_open_err(rio_reader **out, const char *path, const rio_reader_opts *opts,
                                rio_error *err)
{
	*out = NULL;
	rio__error_clear(err);
	rio_reader_opts defaults;
	if (!opts) {
		rio_reader_opts_init(&defaults);
		opts = &defaults;
	}
	if (!path || !opts_ok(opts))
		return rio__error_set(err, -EINVAL, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	if (rio__url_is_remote(path))
		return reader_open_url(out, path, opts, err);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rio__error_set(err, -errno, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	int rc = reader_open(out, fd, 1, path, opts);
	if (rc < 0) {
		close(fd);
		rio__error_set(err, rc, path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	return rc;
}

RIO_API int rio_reader_open(rio_reader **out, const char *path, const rio_reader_opts *opts)
{
	return rio_reader_open_err(out, path, opts, NULL);
}

RIO_API int rio_reader_open_fd(rio_reader **out, int fd, const char *name,
                               const rio_reader_opts *opts)
{
	*out = NULL;
	return reader_open(out, fd, 0, name, opts);
}

/* Makes room so that `need` bytes fit after pos, moving the unconsumed tail
 * to the front (so that it ends on an aligned address) or growing. */
static int make_room(rio_reader *r, size_t need)
{
	size_t have = r->end - r->pos;
	size_t want_cap = need + r->opts.buffer_size + ALIGN;
	if (want_cap > r->cap && need + ALIGN > r->cap) {
		uint8_t *nb = rio__aligned_alloc(4096, want_cap);
		if (!nb)
			return -ENOMEM;
		size_t dst = (ALIGN - have % ALIGN) % ALIGN;
		memcpy(nb + dst, r->buf + r->pos, have);
		free(r->buf);
		r->buf = nb;
		r->cap = want_cap;
		r->start = r->pos = dst;
		r->end = dst + have;
		return 0;
	}
	size_t dst = (ALIGN - have % ALIGN) % ALIGN;
	if (r->pos != dst) {
		memmove(r->buf + dst, r->buf + r->pos, have);
		r->start = r->pos = dst;
		r->end = dst + have;
	}
	return 0;
}

/* Ensures buf[pos, pos + need) is filled, unless the stream ends first. */
static int fill(rio_reader *r, size_t need)
{
	while (r->end - r->pos < need && !r->eof) {
		if (r->cap - r->pos < need || r->cap - r->end < r->opts.buffer_size / 2) {
			int rc = make_room(r, need);
			if (rc)
				return rc;
		}
		size_t room = r->cap - r->end;
		if (r->read_limit) {
			size_t want = (need - (r->end - r->pos) + 4095) & ~(size_t)4095;
			if (want < r->read_limit)
				want = r->read_limit;
			if (want < room)
				room = want;
		}
		ssize_t n = rio__istream_read(r->in, r->buf + r->end, room);
		if (n < 0)
			return (int)n;
		if (n == 0)
			r->eof = 1;
		r->end += (size_t)n;
	}
	return 0;
}

/* Consumes `n` damaged bytes (SKIP or REPORT policy). */
static void skip_bytes(rio_reader *r, size_t n)
{
	r->pos += n;
	r->offset += n;
	r->dmg.bytes += n;
}

/* An error from the stream under the reader (I/O, or a damaged or cut
 * compressed stream), placed at the record being read. A compressed stream
 * cut short is a truncated tail: under SKIP it ends the file like one. */
static int stream_error(rio_reader *r, int code)
{
	rio__error_set(&r->err, code, r->path, r->offset, r->index, "%s", rio__istream_detail(r->in));
	if (rio__damage_action(r->dmg.policy, code, 1) == RIO__RECOVER_END) {
		r->dmg.records++;
		skip_bytes(r, r->end - r->pos);
		r->eof = 1;
		return r->dmg.policy == RIO_DAMAGE_REPORT ? code : 0;
	}
	r->sticky = code;
	return code;
}

/* After a bad header at pos: skips to the next offset where a valid header
 * starts (rio__frame_resync). Returns 1 when found, 0 at the end of the
 * stream, or an error. */
static int resync(rio_reader *r)
{
	skip_bytes(r, 1);
	for (;;) {
		int rc = fill(r, RIO_HEADER_SIZE);
		if (rc)
			return stream_error(r, rc);
		size_t have = r->end - r->pos;
		size_t q = rio__frame_resync(r->buf + r->pos, 0, have, r->opts.max_record_size);
		skip_bytes(r, q);
		if (q + RIO_HEADER_SIZE <= have)
			return 1;
		if (r->eof) {
			skip_bytes(r, r->end - r->pos);
			return 0;
		}
	}
}

RIO_API int rio_reader_next(rio_reader *r, rio_record *rec)
{
	int rc;
	if (r->sticky)
		return r->sticky;
	for (;;) {
		if (r->end - r->pos < RIO_HEADER_SIZE && (rc = fill(r, RIO_HEADER_SIZE)))
			return stream_error(r, rc);
		size_t have = r->end - r->pos;
		if (have == 0)
			return 0;
		/* fill() stops short of a header only at the end of the stream */
		uint64_t len = 0;
		int d = rio__frame_head(r->buf + r->pos, have, 1, r->opts.max_record_size, &len);
		if (d == RIO__FRAME_OK) {
			size_t total = rio__frame_size(len);
			if (have < total) {
				if ((rc = fill(r, total)))
					return stream_error(r, rc);
				have = r->end - r->pos;
			}
			const uint8_t *frame = r->buf + r->pos;
			if (have < total)
				d = RIO_ETRUNCATED;
			else if (r->opts.verify_crc && !rio__frame_data_ok(frame, len))
				d = RIO_ECORRUPT_DATA;
			if (d == RIO__FRAME_OK) {
				rec->data = frame + RIO_HEADER_SIZE;
				rec->size = (size_t)len;
				rec->offset = r->offset;
				rec->index = r->index++;
				r->pos += total;
				r->offset += total;
				return 1;
			}
		}

		rio__frame_error(&r->err, d, r->path, r->offset, r->index, have, len,
		                 r->opts.max_record_size);
		/* In a compressed stream a bad frame means the decoded bytes are
		 * wrong from there on; what follows may even hold intact copies
		 * of earlier frames (the decoder's back-references), so nothing
		 * after it is trusted: it stops the reader under every policy.
		 * Only a cut tail can be skipped there. */
		rio__recover act = rio__damage_action(r->dmg.policy, d, r->comp != RIO_COMPRESSION_NONE);
		if (act == RIO__RECOVER_STOP) {
			r->sticky = d;
			return d;
		}
		r->dmg.records++;
		int report = r->dmg.policy == RIO_DAMAGE_REPORT;
		if (act == RIO__RECOVER_END) {
			skip_bytes(r, have);
			return report ? d : 0;
		}
		if (act == RIO__RECOVER_NEXT) {
			skip_bytes(r, rio__frame_size(len));
			if (report)
				return d;
			continue;
		}
		rc = resync(r);
		if (rc < 0)
			return rc; /* a stream error, already placed */
		if (report)
			return d;
		if (rc == 0)
			return 0; /* no valid header after the damage: the end */
	}
}

RIO_API int rio_reader_stopped(const rio_reader *r)
{
	return r->sticky != 0;
}

RIO_API int rio_reader_seek(rio_reader *r, uint64_t offset, uint64_t record_index)
{
	if (r->comp != RIO_COMPRESSION_NONE)
		return rio__error_set(&r->err, RIO_EUNSUPPORTED, r->path, offset, record_index,
		                      "random access to a %s stream", rio_compression_name(r->comp));
	uint64_t base = r->offset - r->pos; /* stream offset of buf[0] */
	if (offset >= base + r->start && offset <= base + r->end) {
		r->pos = (size_t)(offset - base); /* inside what is buffered: just move */
	} else {
		int rc = rio__istream_seek(r->in, offset);
		if (rc)
			return rio__error_set(&r->err, rc, r->path, offset, record_index, "seek");
		r->start = r->pos = r->end = 0;
		r->eof = 0;
	}
	r->offset = offset;
	r->index = record_index;
	r->sticky = 0;
	return 0;
}

RIO_API int rio_reader_read_at(rio_reader *r, const rio_index *idx, uint64_t i, rio_record *rec)
{
	if (i >= idx->count)
		return rio__error_set(&r->err, RIO_ERANGE, r->path, RIO__UNKNOWN, i,
		                      "the index has %llu records", (unsigned long long)idx->count);
	int rc = rio_reader_seek(r, idx->offset[i], i);
	if (rc)
		return rc;
	r->read_limit = idx->framed_size[i] < r->opts.buffer_size ? (size_t)idx->framed_size[i] : 0;
	/* Under SKIP, next() would skip a damaged record i and deliver the one
	 * after it as if it were i. REPORT skips it the same way but returns
	 * the damage: record i, or its error. */
	rio_damage_policy policy = r->dmg.policy;
	if (policy == RIO_DAMAGE_SKIP)
		r->dmg.policy = RIO_DAMAGE_REPORT;
	rc = rio_reader_next(r, rec);
	r->dmg.policy = policy;
	r->read_limit = 0;
	if (rc == 0)
		return rio__error_set(&r->err, RIO_EBADINDEX, r->path, idx->offset[i], i,
		                      "the index points past the end of the file");
	if (rc == 1 && rec->size + RIO_FRAME_OVERHEAD != idx->framed_size[i])
		return rio__error_set(&r->err, RIO_EBADINDEX, r->path, idx->offset[i], i,
		                      "the index says %llu bytes, the record has %llu",
		                      (unsigned long long)idx->framed_size[i],
		                      (unsigned long long)(rec->size + RIO_FRAME_OVERHEAD));
	return rc;
}

RIO_API rio_compression rio_reader_compression(const rio_reader *r)
{
	return r->comp;
}

RIO_API uint64_t rio_reader_skipped(const rio_reader *r)
{
	return r->dmg.records;
}

RIO_API uint64_t rio_reader_skipped_bytes(const rio_reader *r)
{
	return r->dmg.bytes;
}

RIO_API uint64_t rio_reader_bytes(const rio_reader *r)
{
	return r->offset;
}

RIO_API uint64_t rio_reader_file_bytes(const rio_reader *r)
{
	return rio__istream_file_bytes(r->in);
}

RIO_API const rio_error *rio_reader_error(const rio_reader *r)
{
	return &r->err;
}

RIO_API const char *rio_reader_path(const rio_reader *r)
{
	return r->path;
}

RIO_API void rio_reader_close(rio_reader *r)
{
	if (!r)
		return;
	rio__istream_close(r->in);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	rio__rstream_close(r->rstream);
	rio__robj_close(r->robj);
	rio__remote_close(r->remote);
	free(r->buf);
	free(r->path);
	free(r);
}

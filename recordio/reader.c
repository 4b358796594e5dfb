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
#include "internal.h"
#include "stream.h"

#include "crc32c.h"
#include "endian.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN 64u
/* Whatever the limit asked for, a length beyond this cannot be buffered
 * (and len + 16 must not overflow). */
#define RIO__MAX_FRAME ((uint64_t)SIZE_MAX / 4)
/* A larger read gains nothing (and the buffer sums must not wrap). */
#define RIO__MAX_BUFFER ((size_t)1 << 30)

struct rio_reader {
	char *path;
	int fd;
	int own_fd;          /* close fd in rio_reader_close()                */
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
	uint64_t skipped, skipped_bytes;
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
}

/* The reader over an open fd: `own` says whether rio_reader_close() closes
 * it (on failure here it is left open). */
static int reader_open(rio_reader **out, int fd, int own, const char *name,
                       const rio_reader_opts *opts)
{
	rio_reader_opts defaults;
	if (!opts) {
		rio_reader_opts_init(&defaults);
		opts = &defaults;
	}
	*out = NULL;
	if (opts->compression < RIO_COMPRESSION_AUTO || opts->compression > RIO_COMPRESSION_LZ4 ||
	    opts->on_damage < RIO_DAMAGE_FAIL || opts->on_damage > RIO_DAMAGE_REPORT || !name)
		return -EINVAL;
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode))
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

	rio_reader *r = calloc(1, sizeof *r);
	if (!r || !(r->path = strdup(name))) {
		free(r);
		return -ENOMEM;
	}
	r->fd = fd;
	r->opts = *opts;
	if (r->opts.max_record_size > RIO__MAX_FRAME)
		r->opts.max_record_size = RIO__MAX_FRAME;
	if (r->opts.buffer_size < 4096)
		r->opts.buffer_size = 4096;
	if (r->opts.buffer_size > RIO__MAX_BUFFER)
		r->opts.buffer_size = RIO__MAX_BUFFER;
	r->opts.buffer_size = (r->opts.buffer_size + 4095) & ~(size_t)4095;
	rio__error_clear(&r->err);

	/* AUTO: the stream reads the first bytes and detects the codec, with
	 * read(), so that pipes and FIFOs are detected too */
	int rc = rio__istream_open(&r->in, fd, opts->compression);
	if (!rc)
		r->comp = rio__istream_compression(r->in);
	r->cap = 2 * r->opts.buffer_size;
	if (!rc && !(r->buf = rio__aligned_alloc(4096, r->cap)))
		rc = -ENOMEM;
	if (rc) {
		rio_reader_close(r); /* own_fd is 0: fd stays open, the caller's */
		return rc;
	}
	r->own_fd = own;
	*out = r;
	return 0;
}

RIO_API int rio_reader_open(rio_reader **out, const char *path, const rio_reader_opts *opts)
{
	*out = NULL;
	if (!path)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = reader_open(out, fd, 1, path, opts);
	if (rc < 0)
		close(fd);
	return rc;
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
	r->skipped_bytes += n;
}

/* An error from the stream under the reader (I/O, or a damaged or cut
 * compressed stream), placed at the record being read. A compressed stream
 * cut short is a truncated tail: under SKIP it ends the file like one. */
static int stream_error(rio_reader *r, int code)
{
	rio__error_set(&r->err, code, r->path, r->offset, r->index, "%s", rio__istream_detail(r->in));
	if (code == RIO_ETRUNCATED && r->opts.on_damage != RIO_DAMAGE_FAIL) {
		r->skipped++;
		skip_bytes(r, r->end - r->pos);
		r->eof = 1;
		return r->opts.on_damage == RIO_DAMAGE_REPORT ? code : 0;
	}
	r->sticky = code;
	return code;
}

/* After a bad header at pos: scans forward for the next offset where a valid
 * header (length CRC matches, length within the limit) starts. Returns 1
 * when found, 0 at the end of the stream, or an error. */
static int resync(rio_reader *r)
{
	for (;;) {
		skip_bytes(r, 1);
		int rc = fill(r, RIO_HEADER_SIZE);
		if (rc)
			return stream_error(r, rc);
		if (r->end - r->pos < RIO_HEADER_SIZE) {
			skip_bytes(r, r->end - r->pos);
			return 0;
		}
		uint64_t len;
		if (rio__frame_header_valid(r->buf + r->pos, &len) && len <= r->opts.max_record_size)
			return 1;
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
		int damage;
		uint64_t len = 0;
		if (have < RIO_HEADER_SIZE) {
			damage = rio__error_set(&r->err, RIO_ETRUNCATED, r->path, r->offset, r->index,
			                        "the file ends %zu bytes into a record header of %u",
			                        have, RIO_HEADER_SIZE);
			goto damaged;
		}
		const uint8_t *hdr = r->buf + r->pos;
		if (r->opts.verify_crc) {
			if (!rio__frame_header_valid(hdr, &len)) {
				damage = rio__error_set(&r->err, RIO_ECORRUPT_LENGTH, r->path, r->offset,
				                        r->index, NULL);
				goto damaged;
			}
		} else {
			len = rio__load_le64(hdr);
		}
		if (len > r->opts.max_record_size) {
			damage = rio__error_set(&r->err, RIO_ETOOLARGE, r->path, r->offset, r->index,
			                        "length %llu, limit %llu", (unsigned long long)len,
			                        (unsigned long long)r->opts.max_record_size);
			goto damaged;
		}
		size_t total = (size_t)len + RIO_FRAME_OVERHEAD;
		if (have < total) {
			if ((rc = fill(r, total)))
				return stream_error(r, rc);
			have = r->end - r->pos;
			if (have < total) {
				damage = rio__error_set(&r->err, RIO_ETRUNCATED, r->path, r->offset,
				                        r->index,
				                        "the file ends %zu bytes into a record of %zu",
				                        have, total);
				goto damaged;
			}
			hdr = r->buf + r->pos;
		}
		if (r->opts.verify_crc) {
			uint32_t want = rio__load_le32(hdr + RIO_HEADER_SIZE + len);
			if (rio__crc_mask(rio__crc32c(0, hdr + RIO_HEADER_SIZE, (size_t)len)) != want) {
				damage = rio__error_set(&r->err, RIO_ECORRUPT_DATA, r->path, r->offset,
				                        r->index, "length %llu",
				                        (unsigned long long)len);
				goto damaged;
			}
		}
		rec->data = hdr + RIO_HEADER_SIZE;
		rec->size = (size_t)len;
		rec->offset = r->offset;
		rec->index = r->index++;
		r->pos += total;
		r->offset += total;
		return 1;

	damaged:
		/* In a compressed stream a bad frame means the decoded bytes are
		 * wrong from there on; what follows may even hold intact copies
		 * of earlier frames (the decoder's back-references), so nothing
		 * after it is trusted: it stops the reader under every policy.
		 * Only a cut tail can be skipped there. */
		if (r->opts.on_damage == RIO_DAMAGE_FAIL ||
		    (r->comp != RIO_COMPRESSION_NONE && damage != RIO_ETRUNCATED)) {
			r->sticky = damage;
			return damage;
		}
		r->skipped++;
		if (damage == RIO_ETRUNCATED) {
			skip_bytes(r, have);
			return r->opts.on_damage == RIO_DAMAGE_REPORT ? damage : 0;
		}
		if (damage == RIO_ECORRUPT_DATA) {
			skip_bytes(r, (size_t)len + RIO_FRAME_OVERHEAD);
			if (r->opts.on_damage == RIO_DAMAGE_REPORT)
				return damage;
			continue;
		}
		rc = resync(r);
		if (rc < 0)
			return rc; /* a stream error, already placed */
		if (r->opts.on_damage == RIO_DAMAGE_REPORT)
			return damage;
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
	rio_damage_policy policy = r->opts.on_damage;
	if (policy == RIO_DAMAGE_SKIP)
		r->opts.on_damage = RIO_DAMAGE_REPORT;
	rc = rio_reader_next(r, rec);
	r->opts.on_damage = policy;
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
	return r->skipped;
}

RIO_API uint64_t rio_reader_skipped_bytes(const rio_reader *r)
{
	return r->skipped_bytes;
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
	free(r->buf);
	free(r->path);
	free(r);
}

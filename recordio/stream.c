/*
 * stream.c — the codecs under the record layer (see stream.h).
 *
 * gzip and zlib are TensorFlow's GZIP and ZLIB layouts: a single deflate
 * stream with the gzip (RFC 1952) or zlib (RFC 1950) wrapper. Concatenated
 * gzip members and LZ4 frames are read one after another, as gzip -d and
 * lz4 -d do. Writing uses ISA-L's deflate (level 1) by default when the build
 * has it, zlib's deflate for an explicit level (or RIO_DEFLATE=zlib), and
 * liblz4's frame API.
 *
 * Opened with RIO_COMPRESSION_AUTO, an input stream reads the file's first
 * bytes with read() (not pread(), which a pipe, a FIFO or a socket
 * refuses), detects the codec from them and keeps them as "head": every
 * read takes the head's bytes before the file's, so the codec sees the
 * stream whole and nothing needs to seek back.
 */
#include "config.h"
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define IN_CAP (256u * 1024u)
#define IN_HISTORY 8u /* consumed input kept at a refill, see refill() */
#define OUT_CAP (1024u * 1024u)

/* ---- input ---------------------------------------------------------------- */

enum inflater { INF_NONE, INF_ZLIB, INF_ISAL, INF_LZ4 };

/* The bytes detection looks at: a frame header holds the most. */
#define HEAD_CAP RIO_HEADER_SIZE

struct rio__istream {
	rio__byte_source src;
	rio_compression comp;
	uint8_t head[HEAD_CAP]; /* read from fd to detect the codec, not yet consumed */
	size_t head_pos, head_len;
	enum inflater kind;
	int pending;         /* an error to return once the bytes before it are out */
	char detail[160];    /* what went wrong, for the reader's message         */
	uint64_t file_bytes; /* read from the file                          */
	uint8_t *in;         /* compressed input                             */
	size_t in_pos, in_end;
	int in_eof;   /* the file has no more bytes                           */
	int ended;    /* the codec saw its end marker and no input follows   */
	int in_frame; /* the codec is inside a member/frame                    */
	int z_open;   /* z was initialised                                     */
	z_stream z;
#ifdef HAVE_ISAL
	struct inflate_state *isal;
#endif
	LZ4F_dctx *lz4;
};

/* Reads until `n` bytes, the end of the file or an error. Bytes read before
 * an error are returned first (the next call meets the error again, at its
 * own file offset). */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (uint8_t *)buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (got)
				break;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* read_full() from the stream's file: the head's bytes first, then fd's. */
static ssize_t src_read(rio__istream *s, void *buf, size_t n)
{
	size_t got = s->head_len - s->head_pos;
	if (got > n)
		got = n;
	memcpy(buf, s->head + s->head_pos, got);
	s->head_pos += got;
	if (got == n)
		return (ssize_t)got;
	ssize_t r = s->src.read(s->src.arg, (uint8_t *)buf + got, n - got);
	if (r < 0)
		return got ? (ssize_t)got : r; /* the error comes again with the next call */
	return (ssize_t)got + r;
}

/* The detail of a failed read: where, and what the source says. */
static void read_failed(rio__istream *s)
{
	const char *why = s->src.detail ? s->src.detail(s->src.arg) : NULL;
	snprintf(s->detail, sizeof s->detail, "read failed at file byte %llu%s%s",
	         (unsigned long long)s->file_bytes, why && *why ? ": " : "", why ? why : "");
}

static int inflater_start(rio__istream *s)
{
	switch (s->kind) {
	case INF_ZLIB:
		if (s->z_open) /* a following gzip member */
			return inflateReset(&s->z) == Z_OK ? 0 : -ENOMEM;
		memset(&s->z, 0, sizeof s->z);
		if (inflateInit2(&s->z, s->comp == RIO_COMPRESSION_GZIP ? 16 + MAX_WBITS : MAX_WBITS) !=
		    Z_OK)
			return -ENOMEM;
		s->z_open = 1;
		return 0;
#ifdef HAVE_ISAL
	case INF_ISAL:
		if (!s->isal && !(s->isal = malloc(sizeof *s->isal)))
			return -ENOMEM;
		isal_inflate_init(s->isal);
		s->isal->crc_flag = s->comp == RIO_COMPRESSION_GZIP ? ISAL_GZIP : ISAL_ZLIB;
		return 0;
#endif
	case INF_LZ4:
		if (!s->lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&s->lz4, LZ4F_VERSION)))
			return -ENOMEM;
		return 0;
	default:
		return 0;
	}
}

/* A file descriptor as a byte source. */
static ssize_t fd_read(void *arg, void *buf, size_t n)
{
	return read_full((int)(intptr_t)arg, buf, n);
}

static int fd_seek(void *arg, uint64_t offset)
{
	return lseek((int)(intptr_t)arg, (off_t)offset, SEEK_SET) < 0 ? -errno : 0;
}

void rio__fd_source(int fd, rio__byte_source *out)
{
	*out = (rio__byte_source){fd_read, fd_seek, NULL, (void *)(intptr_t)fd};
}

int rio__istream_open(rio__istream **out, int fd, rio_compression c)
{
	rio__byte_source src;
	rio__fd_source(fd, &src);
	return rio__istream_open_source(out, &src, c);
}

int rio__istream_open_source(rio__istream **out, const rio__byte_source *src, rio_compression c)
{
	rio__istream *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->src = *src;
	if (c == RIO_COMPRESSION_AUTO) {
		ssize_t n = s->src.read(s->src.arg, s->head, HEAD_CAP);
		if (n < 0) {
			free(s);
			return (int)n;
		}
		s->head_len = (size_t)n;
		c = rio_compression_detect(s->head, s->head_len);
	}
	s->comp = c;
	if (c == RIO_COMPRESSION_NONE) {
		s->kind = INF_NONE;
	} else {
		const char *force = getenv("RIO_INFLATE");
		s->kind = c == RIO_COMPRESSION_LZ4 ? INF_LZ4 : INF_ZLIB;
#ifdef HAVE_ISAL
		if (s->kind == INF_ZLIB && !(force && !strcmp(force, "zlib")))
			s->kind = INF_ISAL;
#else
		(void)force;
#endif
		s->in = malloc(IN_CAP);
		if (!s->in) {
			rio__istream_close(s);
			return -ENOMEM;
		}
	}
	*out = s;
	return 0;
}

/* Refills the compressed input buffer when it is empty. The last
 * IN_HISTORY bytes already consumed stay in front of the new ones: an
 * inflater that read ahead past a member's end in an earlier call can
 * always give those bytes back (ISA-L holds up to 8 in its bit buffer). */
static int refill(rio__istream *s)
{
	if (s->in_pos < s->in_end || s->in_eof)
		return 0;
	size_t keep = s->in_end < IN_HISTORY ? s->in_end : IN_HISTORY;
	memmove(s->in, s->in + s->in_end - keep, keep);
	ssize_t r = src_read(s, s->in + keep, IN_CAP - keep);
	if (r < 0) {
		read_failed(s);
		return (int)r;
	}
	s->in_pos = keep;
	s->in_end = keep + (size_t)r;
	s->file_bytes += (uint64_t)r;
	if (r == 0)
		s->in_eof = 1;
	return 0;
}

static int damaged(rio__istream *s, const char *what)
{
	uint64_t off = s->file_bytes - (s->in_end - s->in_pos);
	snprintf(s->detail, sizeof s->detail, "%s stream: %s near compressed byte %llu",
	         rio_compression_name(s->comp), what, (unsigned long long)off);
	return RIO_ECOMPRESSED;
}

/* One decode step from s->in into dst; returns bytes produced or error.
 * Sets s->in_frame to 0 when a member/frame ends. */
static ssize_t decode_step(rio__istream *s, uint8_t *dst, size_t n)
{
	size_t avail = s->in_end - s->in_pos;
	switch (s->kind) {
	case INF_ZLIB: {
		s->z.next_in = s->in + s->in_pos;
		s->z.avail_in = (uInt)avail;
		s->z.next_out = dst;
		s->z.avail_out = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
		int zr = inflate(&s->z, Z_NO_FLUSH);
		size_t produced = (size_t)(s->z.next_out - dst);
		s->in_pos = (size_t)(s->z.next_in - s->in);
		if (zr == Z_STREAM_END) {
			s->in_frame = 0;
		} else if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT) {
			return damaged(s, s->z.msg ? s->z.msg : "invalid data");
		} else if (zr == Z_MEM_ERROR) {
			return -ENOMEM;
		} else if (zr == Z_BUF_ERROR && avail) {
			return damaged(s, "no progress");
		}
		return (ssize_t)produced;
	}
#ifdef HAVE_ISAL
	case INF_ISAL: {
		struct inflate_state *st = s->isal;
		st->next_in = s->in + s->in_pos;
		st->avail_in = (uint32_t)avail;
		st->next_out = dst;
		st->avail_out = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		int ir = isal_inflate(st);
		size_t produced = (size_t)(st->next_out - dst);
		s->in_pos = (size_t)(st->next_in - s->in);
		if (ir < 0) {
			static const char *why[] = {"", "invalid block", "invalid symbol",
			                            "invalid distance", "invalid header",
			                            "unsupported method", "checksum mismatch"};
			return damaged(s, -ir < 7 ? why[-ir] : "invalid data");
		}
		if (ir == ISAL_NEED_DICT) /* as zlib: TensorFlow never sets a dictionary */
			return damaged(s, "needs a preset dictionary");
		if (st->block_state == ISAL_BLOCK_FINISH) {
			/* ISA-L reads ahead into its bit buffer: give back the whole
			 * bytes it holds, they belong to what follows the stream
			 * (refill keeps IN_HISTORY bytes so they are still there) */
			size_t back = (size_t)st->read_in_length / 8;
			if (back > s->in_pos)
				return damaged(s, "read-ahead past the buffer");
			s->in_pos -= back;
			s->in_frame = 0;
		}
		return (ssize_t)produced;
	}
#endif
	case INF_LZ4: {
		size_t dst_size = n, src_size = avail;
		size_t hint = LZ4F_decompress(s->lz4, dst, &dst_size, s->in + s->in_pos, &src_size, NULL);
		s->in_pos += src_size;
		if (LZ4F_isError(hint)) {
			LZ4F_resetDecompressionContext(s->lz4);
			return damaged(s, LZ4F_getErrorName(hint));
		}
		if (hint == 0)
			s->in_frame = 0;
		return (ssize_t)dst_size;
	}
	default:
		return -EINVAL;
	}
}

ssize_t rio__istream_read(rio__istream *s, void *dst, size_t n)
{
	if (s->kind == INF_NONE) {
		ssize_t r = src_read(s, dst, n);
		if (r < 0) {
			read_failed(s);
			return r;
		}
		s->file_bytes += (uint64_t)r;
		return r;
	}
	if (s->pending)
		return s->pending;
	uint8_t *d = dst;
	size_t produced = 0;
	int rc = 0;
	while (produced < n && !s->ended) {
		if ((rc = refill(s)))
			break;
		int no_input = s->in_pos == s->in_end && s->in_eof;
		if (!s->in_frame) {
			if (no_input) {
				s->ended = 1;
				break;
			}
			/* a new member/frame starts (the first, or one concatenated) */
			if ((rc = inflater_start(s)))
				break;
			s->in_frame = 1;
		}
		/* at the end of the input the decoder may still hold output: it
		 * is only cut short when it can give nothing more */
		ssize_t r = decode_step(s, d + produced, n - produced);
		if (r < 0) {
			rc = (int)r;
			break;
		}
		produced += (size_t)r;
		if (r == 0 && no_input && s->in_frame) {
			snprintf(s->detail, sizeof s->detail,
			         "%s stream ends before its end marker (file size %llu)",
			         rio_compression_name(s->comp), (unsigned long long)s->file_bytes);
			rc = RIO_ETRUNCATED;
			break;
		}
		if (r > 0 && produced < n && s->in_pos == s->in_end && !s->in_eof)
			break; /* return what is ready rather than block on more input */
	}
	if (rc) {
		/* every later call returns it: a codec must not be run again
		 * after an error (LZ4F, reset, would decode the rest as a new
		 * frame) */
		s->pending = rc;
		if (produced)
			return (ssize_t)produced; /* deliver the good bytes first */
		return rc;
	}
	return (ssize_t)produced;
}

const char *rio__istream_detail(const rio__istream *s)
{
	return s->detail;
}

rio_compression rio__istream_compression(const rio__istream *s)
{
	return s->comp;
}

uint64_t rio__istream_file_bytes(const rio__istream *s)
{
	return s->file_bytes;
}

int rio__istream_seek(rio__istream *s, uint64_t offset)
{
	if (s->kind != INF_NONE || !s->src.seek)
		return -ESPIPE;
	int rc = s->src.seek(s->src.arg, offset);
	if (rc < 0)
		return rc;
	s->head_pos = s->head_len = 0; /* the file's bytes from `offset` on */
	s->file_bytes = offset;
	return 0;
}

void rio__istream_close(rio__istream *s)
{
	if (!s)
		return;
	if (s->z_open)
		inflateEnd(&s->z);
#ifdef HAVE_ISAL
	free(s->isal);
#endif
	if (s->lz4)
		LZ4F_freeDecompressionContext(s->lz4);
	free(s->in);
	free(s);
}

/* ---- output --------------------------------------------------------------- */

struct rio__ostream {
	int fd;
	rio_compression comp;
	uint8_t *buf; /* bytes ready to write to the file */
	size_t len, cap;
	uint64_t file_bytes;
	z_stream z;
	int z_open;
#ifdef HAVE_ISAL
	struct isal_zstream *isal; /* the default deflater when built with ISA-L */
	uint8_t *isal_level_buf;
#endif
	LZ4F_cctx *lz4;
	LZ4F_preferences_t lz4_prefs;
};

static int write_all(rio__ostream *s, const void *data, size_t n)
{
	int rc = rio__write_all(s->fd, data, n);
	if (!rc)
		s->file_bytes += n;
	return rc;
}

static int flush_buf(rio__ostream *s)
{
	int rc = write_all(s, s->buf, s->len);
	s->len = 0;
	return rc;
}

int rio__ostream_open(rio__ostream **out, int fd, rio_compression c, int level)
{
	rio__ostream *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->comp = c;
	s->cap = OUT_CAP;
	int rc = 0;
	switch (c) {
	case RIO_COMPRESSION_GZIP:
	case RIO_COMPRESSION_ZLIB:
#ifdef HAVE_ISAL
		if (!level && !(getenv("RIO_DEFLATE") && !strcmp(getenv("RIO_DEFLATE"), "zlib"))) {
			/* measured on Fashion-MNIST shards: ISA-L's level 1 is 13x
			 * faster than zlib's level 6 for 4% larger files */
			s->isal = calloc(1, sizeof *s->isal);
			s->isal_level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
			if (!s->isal || !s->isal_level_buf) {
				rc = -ENOMEM;
				break;
			}
			isal_deflate_init(s->isal);
			s->isal->level = 1;
			s->isal->level_buf = s->isal_level_buf;
			s->isal->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
			s->isal->gzip_flag = c == RIO_COMPRESSION_GZIP ? IGZIP_GZIP : IGZIP_ZLIB;
			s->isal->flush = NO_FLUSH;
			break;
		}
#endif
		if (deflateInit2(&s->z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED,
		                 c == RIO_COMPRESSION_GZIP ? 16 + MAX_WBITS : MAX_WBITS, 8,
		                 Z_DEFAULT_STRATEGY) != Z_OK)
			rc = -EINVAL;
		else
			s->z_open = 1;
		break;
	case RIO_COMPRESSION_LZ4:
		memset(&s->lz4_prefs, 0, sizeof s->lz4_prefs);
		/* no content checksum: every record inside already carries two CRCs,
		 * and xxHash over the whole stream would cost readers ~20% */
		s->lz4_prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
		/* 256 KiB blocks: a reader refilling 512 KiB+ at a time decodes each block
		 * straight into its buffer (LZ4F copies through a bounce buffer otherwise) */
		s->lz4_prefs.frameInfo.blockSizeID = LZ4F_max256KB;
		s->lz4_prefs.compressionLevel = level;
		if (LZ4F_isError(LZ4F_createCompressionContext(&s->lz4, LZ4F_VERSION)))
			rc = -ENOMEM;
		else
			s->cap = LZ4F_compressBound(OUT_CAP, &s->lz4_prefs) + LZ4F_HEADER_SIZE_MAX;
		break;
	case RIO_COMPRESSION_NONE:
		break;
	default:
		rc = -EINVAL;
	}
	if (!rc && !(s->buf = rio__aligned_alloc(4096, s->cap)))
		rc = -ENOMEM;
	if (!rc && c == RIO_COMPRESSION_LZ4) {
		size_t h = LZ4F_compressBegin(s->lz4, s->buf, s->cap, &s->lz4_prefs);
		if (LZ4F_isError(h))
			rc = -EINVAL;
		else
			s->len = h;
	}
	if (rc) {
		rio__ostream_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

#ifdef HAVE_ISAL
static int isal_deflate_some(rio__ostream *s, const uint8_t *p, size_t n, int finish)
{
	struct isal_zstream *z = s->isal;
	z->next_in = (uint8_t *)p;
	z->avail_in = (uint32_t)n;
	z->end_of_stream = finish;
	for (;;) {
		z->next_out = s->buf + s->len;
		z->avail_out = (uint32_t)(s->cap - s->len);
		if (isal_deflate(z) != COMP_OK)
			return -EINVAL;
		s->len = s->cap - z->avail_out;
		if (s->len == s->cap) {
			int rc = flush_buf(s);
			if (rc)
				return rc;
			continue;
		}
		if (finish ? z->internal_state.state == ZSTATE_END : z->avail_in == 0)
			return 0;
	}
}
#endif

static int deflate_some(rio__ostream *s, const uint8_t *p, size_t n, int flush)
{
#ifdef HAVE_ISAL
	if (s->isal)
		return isal_deflate_some(s, p, n, flush == Z_FINISH);
#endif
	s->z.next_in = (Bytef *)p;
	s->z.avail_in = (uInt)n;
	for (;;) {
		s->z.next_out = s->buf + s->len;
		s->z.avail_out = (uInt)(s->cap - s->len);
		int zr = deflate(&s->z, flush);
		s->len = s->cap - s->z.avail_out;
		if (zr == Z_STREAM_ERROR)
			return -EINVAL;
		if (s->len == s->cap) {
			int rc = flush_buf(s);
			if (rc)
				return rc;
			continue;
		}
		if (flush == Z_FINISH ? zr == Z_STREAM_END : s->z.avail_in == 0)
			return 0;
	}
}

int rio__ostream_write(rio__ostream *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	int rc = 0;
	switch (s->comp) {
	case RIO_COMPRESSION_NONE:
		if (s->len + n <= s->cap) {
			memcpy(s->buf + s->len, p, n);
			s->len += n;
			return 0;
		}
		if ((rc = flush_buf(s)))
			return rc;
		if (n >= s->cap)
			return write_all(s, p, n);
		memcpy(s->buf, p, n);
		s->len = n;
		return 0;
	case RIO_COMPRESSION_GZIP:
	case RIO_COMPRESSION_ZLIB:
		while (n) {
			size_t chunk = n > (1u << 30) ? (1u << 30) : n;
			if ((rc = deflate_some(s, p, chunk, Z_NO_FLUSH)))
				return rc;
			p += chunk;
			n -= chunk;
		}
		return 0;
	case RIO_COMPRESSION_LZ4:
		while (n) {
			size_t chunk = n > OUT_CAP ? OUT_CAP : n;
			if (s->cap - s->len < LZ4F_compressBound(chunk, &s->lz4_prefs) &&
			    (rc = flush_buf(s)))
				return rc;
			size_t w = LZ4F_compressUpdate(s->lz4, s->buf + s->len, s->cap - s->len, p, chunk,
			                               NULL);
			if (LZ4F_isError(w))
				return -EINVAL;
			s->len += w;
			p += chunk;
			n -= chunk;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

int rio__ostream_flush(rio__ostream *s)
{
	return s->comp == RIO_COMPRESSION_NONE ? flush_buf(s) : -ENOTSUP;
}

int rio__ostream_finish(rio__ostream *s)
{
	int rc = 0;
	if (s->comp == RIO_COMPRESSION_GZIP || s->comp == RIO_COMPRESSION_ZLIB) {
		rc = deflate_some(s, NULL, 0, Z_FINISH);
	} else if (s->comp == RIO_COMPRESSION_LZ4) {
		if (s->cap - s->len < LZ4F_compressBound(0, &s->lz4_prefs))
			rc = flush_buf(s);
		if (!rc) {
			size_t w = LZ4F_compressEnd(s->lz4, s->buf + s->len, s->cap - s->len, NULL);
			if (LZ4F_isError(w))
				rc = -EINVAL;
			else
				s->len += w;
		}
	}
	if (!rc)
		rc = flush_buf(s);
	return rc;
}

uint64_t rio__ostream_file_bytes(const rio__ostream *s)
{
	return s->file_bytes + s->len;
}

void rio__ostream_close(rio__ostream *s)
{
	if (!s)
		return;
	if (s->z_open)
		deflateEnd(&s->z);
#ifdef HAVE_ISAL
	free(s->isal);
	free(s->isal_level_buf);
#endif
	if (s->lz4)
		LZ4F_freeCompressionContext(s->lz4);
	free(s->buf);
	free(s);
}

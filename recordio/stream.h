/*
 * stream.h — byte streams under the record layer: a file read or written
 * through one of the whole-file codecs (none, gzip, zlib, LZ4 frame).
 *
 * The record layer above sees only uncompressed bytes. Input: read() fills a
 * caller's buffer with as many decompressed bytes as are ready. Output:
 * write() buffers, compresses and writes in large chunks; finish() ends the
 * codec's stream and writes what remains.
 *
 * Inflate uses ISA-L when the build has it (about 3x zlib's speed); setting
 * the environment variable RIO_INFLATE=zlib forces zlib (the tests run both).
 */
#ifndef RIO_STREAM_H
#define RIO_STREAM_H

#include "internal.h"

#include <sys/types.h>

typedef struct rio__istream rio__istream;
typedef struct rio__ostream rio__ostream;

/* Where an input stream's bytes come from: a file descriptor (see
 * rio__istream_open), or anything else that reads in order (a remote
 * object's stream). read: up to n bytes as read_full() would, fewer only
 * at the end, or a negative error (bytes read before an error are returned
 * first, the error with the next call); seek (NULL: not seekable): the
 * next read starts at `offset`; detail (may be NULL): a short text of the
 * last error, for the message. */
typedef struct rio__byte_source {
	ssize_t (*read)(void *arg, void *buf, size_t n);
	int (*seek)(void *arg, uint64_t offset);
	const char *(*detail)(void *arg);
	void *arg;
} rio__byte_source;

/* Opens an input stream over `fd` (not closed by the stream) with codec `c`.
 * AUTO reads the first bytes from fd's current position with read() (so a
 * pipe, a FIFO or a socket will do), detects the codec from them and
 * decodes them first: the stream is whole, nothing seeks back. A read
 * error there fails the open (negative errno). */
int rio__istream_open(rio__istream **out, int fd, rio_compression c);
/* `fd` as a byte source: read() until n bytes or the end, lseek(). */
void rio__fd_source(int fd, rio__byte_source *out);
/* The same over a byte source (copied; its arg must outlive the stream). */
int rio__istream_open_source(rio__istream **out, const rio__byte_source *src, rio_compression c);
/* A reader (rio_reader_open's record layer, `opts` as there, NULL for
 * the defaults) over a byte source, `name` in its messages: the shard
 * cache checks a download as it arrives through one. Nothing of the
 * source is closed with it; its arg must outlive the reader. */
int rio__reader_open_source(rio_reader **out, const rio__byte_source *src, const char *name,
                            const rio_reader_opts *opts);
/* The codec: the one given, or the one AUTO found. */
rio_compression rio__istream_compression(const rio__istream *s);
/* Fills up to `n` bytes of `dst`; returns the count (> 0), 0 at the clean
 * end of the stream, or a negative error. A compressed stream that stops
 * before its end marker is RIO_ETRUNCATED; one that is damaged is
 * RIO_ECOMPRESSED. Bytes decoded before an error are returned first; the
 * error comes with the next call, and every call after it. */
ssize_t rio__istream_read(rio__istream *s, void *dst, size_t n);
/* A short description of the last error (with the compressed file offset). */
const char *rio__istream_detail(const rio__istream *s);
/* Bytes consumed from the file so far. */
uint64_t rio__istream_file_bytes(const rio__istream *s);
/* Repositions an uncompressed stream to `offset`; -ESPIPE when compressed
 * or the source cannot seek. */
int rio__istream_seek(rio__istream *s, uint64_t offset);
void rio__istream_close(rio__istream *s);

/* Opens an output stream writing to `fd` (not closed by the stream). */
int rio__ostream_open(rio__ostream **out, int fd, rio_compression c, int level);
int rio__ostream_write(rio__ostream *s, const void *data, size_t n);
/* Writes out what is buffered: NONE only, -ENOTSUP for a codec. */
int rio__ostream_flush(rio__ostream *s);
/* Ends the codec stream and writes everything out. */
int rio__ostream_finish(rio__ostream *s);
uint64_t rio__ostream_file_bytes(const rio__ostream *s);
void rio__ostream_close(rio__ostream *s);

#endif /* RIO_STREAM_H */

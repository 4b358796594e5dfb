/*
 * remote.h — librecordio's client for shards in S3 (or an S3-compatible
 * store) and on HTTP(S) servers, through libcurl. Internal: the public face
 * is rio_remote_opts and URLs wherever a path is taken (recordio.h).
 *
 * Objects
 *   rio__remote   a client: its options, the AWS settings (aws_config.h,
 *                 read at the first S3 request), a pool of curl handles for
 *                 one-off requests, and the engine (engine.c), a thread
 *                 that runs ranged GETs, `inflight` at a time, for every
 *                 thread that asks. Thread-safe: a loader's workers share
 *                 one. Created per reader, per loader, per call.
 *   rio__robj     one object opened for reading: its size, ETag and first
 *                 bytes are taken at open, and every later GET sends
 *                 If-Match with that ETag (and checks the size the server
 *                 gives), so an object replaced since is RIO_ECHANGED,
 *                 never a mix of bytes. Read-only after open: any thread may
 *                 read through it.
 *   rio__rstream  a sequential reader of an object with read-ahead:
 *                 parallel ranged GETs of up to part_size bytes, starting
 *                 small after an open or a seek and growing while reading
 *                 goes on in order. One thread at a time.
 *
 * This is the remote kind of shard "source": a handle with size and
 * identity known at open, reads at offsets (one, or many coalesced and run
 * in parallel) and a streaming read. Local files are the other kind
 * (file descriptors, as the reader and the loader use them).
 *
 * Errors: negative codes with a rio_error one-liner naming the URL, and for
 * HTTP errors the status and S3's error code: -ENOENT (404), -EACCES (403),
 * RIO_ECHANGED (412, or a size that differs from the one at open),
 * RIO_EREMOTE (the other permanent errors, and retries run out),
 * RIO_EUNSUPPORTED (built without libcurl: no_curl.c).
 */
#ifndef RIO_REMOTE_H
#define RIO_REMOTE_H

#include "internal.h"
#include "stream.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rio__remote rio__remote;
typedef struct rio__robj rio__robj;
typedef struct rio__rstream rio__rstream;

/* A new client with `opts` (NULL: the defaults; else checked:
 * rio_remote_opts_check). Starts no thread and makes no request yet. */
int rio__remote_open(rio__remote **out, const rio_remote_opts *opts, rio_error *err);
void rio__remote_close(rio__remote *r);
const rio_remote_opts *rio__remote_opts(const rio__remote *r);

/* Opens the object at `url` (s3:// or http(s)://) with one request (a GET of
 * its first bytes, which gives the size and ETag too). -ENOENT for an
 * object that is not there; errors named in `err`. */
int rio__robj_open(rio__robj **out, rio__remote *r, const char *url, rio_error *err);
/* The same, with no request when r keeps listed objects and listed it
 * (rio__remote_keep_listed): for a caller that reads the object's bytes
 * elsewhere (the shard cache's copy, named by the size and ETag), for
 * which the first bytes would be a request for nothing. */
int rio__robj_open_listed(rio__robj **out, rio__remote *r, const char *url, rio_error *err);
void rio__robj_close(rio__robj *o);
const char *rio__robj_name(const rio__robj *o); /* the URL as given */
uint64_t rio__robj_size(const rio__robj *o);
const char *rio__robj_etag(const rio__robj *o); /* "" when the server gave none */
/* Its first min(size, 16) bytes, read at open (compression detection);
 * none (*len 0) when rio__robj_open_listed took it from a listing. */
const uint8_t *rio__robj_head(const rio__robj *o, size_t *len);

/* From now on opens of r (rio__robj_open) take each object's first
 * part_size bytes with its size and ETag (one GET either way), while
 * `bytes` of room last: the room of a part comes back when it is taken
 * or its object closed. For a caller that will read the objects from
 * their start (the loader's epoch in shard order): a store that reads a
 * whole chunk for a few bytes then reads each first chunk once, and the
 * first parts come in while the caller opens the rest. 0: none (the
 * default). */
void rio__remote_first_parts(rio__remote *r, size_t bytes);
/* Bytes [offset, offset + len) of o's first part taken at open, into
 * buf: the count (short only at the object's end), or -1 when it does not
 * hold them (none taken, or taken already). A read of the whole part is
 * its one use: the part is freed then. Any thread. */
ssize_t rio__robj_take_first(rio__robj *o, void *buf, size_t len, uint64_t offset);
/* o's first part itself, for a caller that reads [offset, offset + len)
 * into buffers of `cap` bytes (which it frees with free()): the buffer,
 * no longer o's, when offset is 0, the part holds len bytes (or the
 * object's end) and its buffer has room for cap, *got the count; else
 * NULL (the part, if any, stays). No copy where rio__robj_take_first
 * would make one. Any thread. */
void *rio__robj_give_first(rio__robj *o, uint64_t offset, size_t len, size_t cap, ssize_t *got);
/* Frees o's first part (a caller that will not read it: a stream). */
void rio__robj_drop_first(rio__robj *o);

/* Reads [offset, offset + len) clipped to the object's size into buf,
 * in parallel parts: the bytes read (short only at the end), or a
 * negative error with its message in `err`. */
ssize_t rio__robj_read(rio__robj *o, void *buf, size_t len, uint64_t offset, rio_error *err);

/* One of many reads at once (rio__remote_read_many). */
typedef struct rio__range {
	rio__robj *obj;
	uint64_t offset;
	size_t len;
	void *buf;
	ssize_t result; /* bytes read (short only at the object's end) */
} rio__range;

/* The largest gap between two ranges of one object that
 * rio__remote_read_many fetches with one request rather than two: the
 * unwanted bytes between cost less than a request's round trip (S3's
 * first byte takes tens of ms; 256 KiB at 1 Gbit/s, 2 ms). The loader's
 * globally shuffled batches of uncompressed remote shards are read so
 * (loader/source_remote.c). */
#define RIO__REMOTE_COALESCE_GAP (256u * 1024u)

/* The ranged GETs of r's engine so far (rio__remote_read_many, streams):
 * the seconds one or more ran (*busy) and the sum of each one's seconds
 * (*gets); both 0 before the first. */
void rio__remote_gets_time(rio__remote *r, double *busy, double *gets);

/* Runs n reads of any objects of r: ranges of one object that lie within
 * RIO__REMOTE_COALESCE_GAP of each other are fetched together (up to
 * part_size a request; larger ranges are split into parts), all requests
 * in flight at once up to `inflight`. Each range's result is set. 0, or
 * the first error (in range order) with its message in `err`. */
int rio__remote_read_many(rio__remote *r, rio__range *ranges, size_t n, rio_error *err);
/* rio__remote_read_many in two halves, so that the caller works while the
 * requests run: _start puts them in flight (*out: what _wait waits for;
 * the ranges and their buffers must stay as they are until then) or
 * returns an error with nothing in flight; _wait waits for every one of
 * them, sets each range's result and frees *out: 0, or the first error
 * (in request order) with its message in `err`. */
typedef struct rio__remote_reads rio__remote_reads;
int rio__remote_read_start(rio__remote *r, rio__range *ranges, size_t n, rio__remote_reads **out,
                           rio_error *err);
int rio__remote_read_wait(rio__remote_reads *rd, rio_error *err);

/* A sequential reader of `o` from `offset`. */
int rio__rstream_open(rio__rstream **out, rio__robj *o, uint64_t offset);
/* The whole object will be read through s, from where it is: no slow
 * start, parts of `part` bytes (0, or more than the client's part_size:
 * part_size), `window` of them asked for at once (0, or more than the
 * client's inflight: inflight), the next as soon as one is read. */
void rio__rstream_whole(rio__rstream *s, size_t part, unsigned window);
/* Up to n bytes into dst, as read(2) on a file: fewer only at the end of
 * the object (0 there), or a negative error (rio__rstream_error). */
ssize_t rio__rstream_read(rio__rstream *s, void *dst, size_t n);
/* Moves to `offset` (what was read ahead past it is dropped). */
int rio__rstream_seek(rio__rstream *s, uint64_t offset);
/* Bytes handed out so far, counted from the start of the object. */
uint64_t rio__rstream_offset(const rio__rstream *s);
const rio_error *rio__rstream_error(const rio__rstream *s);
void rio__rstream_close(rio__rstream *s);
/* The stream as an input stream's byte source (stream.h); s must outlive
 * the input stream. */
void rio__rstream_source(rio__rstream *s, rio__byte_source *out);

/* ---- small objects whole, and writing ---------------------------------- */

/* GETs the whole object at `url` into *out (malloc'd, NUL-terminated, *len
 * bytes), refusing one larger than `max` bytes (-EFBIG). -ENOENT when it
 * is not there, with no message in `err` when `quiet_enoent` (a probe). */
int rio__remote_get_all(rio__remote *r, const char *url, uint64_t max, int quiet_enoent,
                        char **out, size_t *len, rio_error *err);
/* rio_index_read() of the .idx sidecar at `url` through r (index.c): one
 * GET on r's connections. -ENOENT when it is not there, with no message in
 * `err` when `quiet_enoent` (a probe). */
int rio__index_read_remote(rio__remote *r, const char *url, int quiet_enoent, rio_index *idx,
                           rio_error *err);
/* 1 when the object at `url` exists (one HEAD; its Content-Length into
 * *size when size is not NULL: UINT64_MAX when the answer had none), 0
 * when not (404), else an error. */
int rio__remote_exists(rio__remote *r, const char *url, uint64_t *size, rio_error *err);
/* PUTs data[0, n) as the object at `url` (S3 only). */
int rio__remote_put(rio__remote *r, const char *url, const void *data, size_t n, rio_error *err);
/* Uploads the file open at fd (size bytes, from offset 0) as the object at
 * `url` (S3 only): one PUT, or a multipart upload when it is larger than
 * part_size (parts of part_size, or larger to stay within S3's 10,000),
 * aborted on failure so that no part is left behind. */
int rio__remote_put_file(rio__remote *r, const char *url, int fd, uint64_t size, rio_error *err);
/* DELETEs the object at `url` (S3 only); one that is not there is no
 * error. */
int rio__remote_delete(rio__remote *r, const char *url, rio_error *err);

/* ---- listing (ListObjectsV2) ----------------------------------------------- */

/* One key of a listing. */
typedef struct rio__listed {
	char *key;      /* the whole key */
	uint64_t size;
	int is_prefix;  /* a CommonPrefix ("path/"), not an object */
	char *etag;     /* its ETag as the listing gives it, or NULL */
} rio__listed;

typedef struct rio__listing {
	rio__listed *items;
	size_t n, cap;
} rio__listing;

/* Lists the keys of `bucket` that start with `prefix` (every page), with
 * `delimiter` ("/" or NULL): CommonPrefixes are items too (is_prefix).
 * `name` names the listing in messages (the URL asked for). Items in the
 * server's order (by key). */
int rio__remote_list(rio__remote *r, const char *bucket, const char *prefix,
                     const char *delimiter, const char *name, rio__listing *out, rio_error *err);
void rio__listing_free(rio__listing *l);

/* From now on r keeps the size and ETag of every object its listings
 * give (those with a strong ETag), and rio__robj_open_listed of such an
 * object's URL takes them from there, with no request: a set listed once
 * is opened without a round trip per shard (the loader's shard cache then
 * reads the copies at once). Its first bytes are then not taken
 * (rio__robj_head gives none). The reads still send If-Match with that
 * ETag, so an object replaced since the listing is RIO_ECHANGED, as one
 * replaced since an open. */
void rio__remote_keep_listed(rio__remote *r);
int rio__remote_keeps_listed(rio__remote *r);
/* 1 when r's listings gave the object at `url` (rio__robj_open then makes
 * no request), else 0. */
int rio__remote_is_listed(rio__remote *r, const char *url);

/* ---- the set manifest (doc/recordio-format.md) ----------------------------- */

/* recordio-pack's S3 sets: the shards of generation G live under
 * PREFIX.gGGGGGG/, and the manifest PREFIX.manifest, written last in one
 * PUT, names the generation in force and its objects. */
#define RIO__MANIFEST_SUFFIX ".manifest"
#define RIO__MANIFEST_MAGIC "recordio-set 1"

#endif /* RIO_REMOTE_H */

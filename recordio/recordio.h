/*
 * recordio.h — the public interface of librecordio, and its manual.
 *
 * librecordio reads and writes TFRecord files: the sharded binary record
 * format of TensorFlow. Files written here read in TensorFlow
 * (tf.data.TFRecordDataset) and files TensorFlow wrote read here, including
 * its GZIP and ZLIB compressed streams; LZ4 frames are an extension that
 * `lz4 -d` turns back into a plain shard.
 *
 * Objects
 *   rio_writer   writes one shard: records framed with their CRCs, optionally
 *                compressed, to a temporary name, renamed into place by a
 *                successful rio_writer_close().
 *   rio_reader   reads one shard as a stream of records (compression detected
 *                from the file's first bytes), verifying every CRC.
 *   rio_index    the `.idx` sidecar: one (offset, framed size) per record.
 *   rio_shardset the ordered list of shard paths a glob, list or PREFIX names.
 *   rio_example  a view of one serialized tf.train.Example, for finding
 *                features by name without copying; rio_example_builder
 *                encodes one. tf.train.SequenceExample (context and
 *                feature lists) and TensorBoard Event records are read in
 *                the same way.
 *
 * Ownership
 *   Every object is created by an open, init or read call that returns an
 *   int and hands the object out through a pointer argument, and is freed by
 *   its matching close or free call, which accepts NULL. Records returned by
 *   rio_reader_next() and features found in an Example are borrowed views:
 *   they point into memory owned by the reader or by the caller's buffer and
 *   stay valid until the next call on that reader (or until the caller frees
 *   the buffer).
 *
 * Errors
 *   Functions return int: >= 0 is success, a negative value is an error.
 *   System errors are negative errno values (-ENOENT, -ENOMEM, ...); the
 *   library's own errors are the RIO_E* codes below, in [-1099, -1000].
 *   rio_strerror() names any of them. Where an error has a place (a file, a
 *   byte offset, a record number), the object that hit it keeps a rio_error
 *   with a ready one-line message, e.g.
 *     "train-00000-of-00004.tfrecord: offset 8192 (record 2): corrupted record
 *      (data CRC mismatch)".
 *   The library never prints and never exits.
 *
 * Threads
 *   Objects are not shared between threads without the caller's locking; two
 *   objects are independent (there is no global mutable state), so any number
 *   of readers and writers may be used from different threads at once.
 */
#ifndef RECORDIO_H
#define RECORDIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RIO_BUILDING_LIBRARY)
#define RIO_API __attribute__((visibility("default")))
#else
#define RIO_API
#endif

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* X(name, value, text): the library's own error codes. */
#define RIO_ERROR_TABLE(X)                                                     \
	X(RIO_ECORRUPT_LENGTH, -1000, "corrupted record (length CRC mismatch)")  \
	X(RIO_ECORRUPT_DATA, -1001, "corrupted record (data CRC mismatch)")      \
	X(RIO_ETRUNCATED, -1002, "truncated record")                             \
	X(RIO_ETOOLARGE, -1003, "record length exceeds limit")                   \
	X(RIO_ECOMPRESSED, -1004, "damaged compressed stream")                   \
	X(RIO_EBADEXAMPLE, -1005, "malformed tf.train.Example")                  \
	X(RIO_ENOFEATURE, -1006, "feature not found")                            \
	X(RIO_EFEATUREKIND, -1007, "feature has another kind")                   \
	X(RIO_EBADINDEX, -1008, "malformed or mismatched index")                 \
	X(RIO_EMISSINGSHARD, -1009, "missing shard")                             \
	X(RIO_ENOSHARDS, -1010, "no shards match")                               \
	X(RIO_EUNSUPPORTED, -1011, "not supported for this file")                \
	X(RIO_EBADSHARDNAME, -1012, "inconsistent shard names")                  \
	X(RIO_ERANGE, -1013, "index out of range")                               \
	X(RIO_EFEATURELEN, -1014, "feature length does not match the spec")      \
	X(RIO_ESTATE, -1015, "saved loader state does not match this loader")  \
	X(RIO_EINCOMPLETESET, -1016, "incomplete shard set (an interrupted commit)") \
	X(RIO_EREMOTE, -1017, "remote storage error")                            \
	X(RIO_ECHANGED, -1018, "remote object changed while being read")

enum rio_error_code {
#define RIO__ENUM(name, value, text) name = value,
	RIO_ERROR_TABLE(RIO__ENUM)
#undef RIO__ENUM
};

/* A short static text for any return code: RIO_E* codes, negative errno
 * values (strerror's text) and 0 ("success"). Never NULL. */
RIO_API const char *rio_strerror(int code);

/* Where an error happened. `message` is a complete one-line description that
 * names the file, the byte offset and the record when they are known, ready
 * to print. offset/record are UINT64_MAX when unknown. */
typedef struct rio_error {
	int code;
	uint64_t offset;
	uint64_t record;
	char message[512];
} rio_error;

/* ------------------------------------------------------------------------ */
/* CRC-32C and the record frame                                              */
/* ------------------------------------------------------------------------ */

/* CRC-32C (Castagnoli) of `size` bytes, continuing from `crc` (0 to start).
 * rio_crc32c(0, "123456789", 9) == 0xE3069283. Uses ISA-L or SSE4.2 when
 * available. */
RIO_API uint32_t rio_crc32c(uint32_t crc, const void *data, size_t size);

/* TFRecord's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8, and back. */
RIO_API uint32_t rio_crc_mask(uint32_t crc);
RIO_API uint32_t rio_crc_unmask(uint32_t masked);

/* A record frame is 12 header bytes (u64 length LE, u32 masked CRC of the
 * length bytes), the data, and a 4-byte masked CRC of the data. */
#define RIO_HEADER_SIZE 12u
#define RIO_FOOTER_SIZE 4u
#define RIO_FRAME_OVERHEAD 16u

/* Default limit on one record's data length: a damaged length field never
 * makes a reader allocate more than this. */
#define RIO_DEFAULT_MAX_RECORD (256u * 1024u * 1024u)

/* Writes the 12-byte header for a record of `size` bytes into `out`. */
RIO_API void rio_frame_header(uint8_t out[RIO_HEADER_SIZE], uint64_t size);
/* Writes the 4-byte footer (masked CRC of data) into `out`. */
RIO_API void rio_frame_footer(uint8_t out[RIO_FOOTER_SIZE], const void *data, size_t size);

/* ------------------------------------------------------------------------ */
/* Compression                                                               */
/* ------------------------------------------------------------------------ */

typedef enum rio_compression {
	RIO_COMPRESSION_AUTO = -1, /* reader: detect from the file's first bytes */
	RIO_COMPRESSION_NONE = 0,
	RIO_COMPRESSION_GZIP = 1, /* TensorFlow "GZIP": a gzip stream, .gz    */
	RIO_COMPRESSION_ZLIB = 2, /* TensorFlow "ZLIB": a zlib stream, .zz    */
	RIO_COMPRESSION_LZ4 = 3,  /* an LZ4 frame (lz4 -d reads it), .lz4     */
} rio_compression;

/* "none", "gzip", "zlib", "lz4" ("auto" for AUTO). */
RIO_API const char *rio_compression_name(rio_compression c);
/* Parses those names (and "", "GZIP", "ZLIB" as TensorFlow spells them);
 * returns 0 and sets *out, or -EINVAL. */
RIO_API int rio_compression_parse(const char *name, rio_compression *out);
/* The shard file suffix: ".tfrecord", ".tfrecord.gz", ".tfrecord.zz",
 * ".tfrecord.lz4". */
RIO_API const char *rio_compression_suffix(rio_compression c);
/* Detects the compression of a file from its first `size` bytes (at least 12
 * should be given when the file has them): a valid record header means none;
 * else gzip, LZ4 frame or zlib magic. Unknown bytes give NONE (the reader
 * then reports them as a corrupted record). */
RIO_API rio_compression rio_compression_detect(const void *head, size_t size);

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct rio_writer rio_writer;

typedef struct rio_writer_opts {
	rio_compression compression; /* NONE (default), GZIP, ZLIB or LZ4   */
	int level;      /* compression level. 0 (default): for gzip/zlib,
	                 * ISA-L's fast deflate when the build has it (about
	                 * 13x zlib's level 6 for ~4% larger files), else
	                 * zlib's level 6; for lz4, its default. 1-9: zlib's
	                 * deflate at that level; lz4 1-12. The environment
	                 * variable RIO_DEFLATE=zlib makes 0 mean zlib's 6. */
	int fsync;      /* 1: fsync the file and directory on close (default 0) */
	int overwrite;  /* 1: replace an existing file (default 1); 0:
	                 * -EEXIST from open when `path` exists, or from close
	                 * when it appeared meanwhile (never replaced)     */
	int live;       /* 1: write `path` itself, no temporary file, for a
	                 * file read while it grows (a TensorBoard event
	                 * file): records reach it with rio_writer_flush()
	                 * and close; an error or abort leaves what reached
	                 * it. NONE compression only (else -EINVAL). With
	                 * overwrite 0, open is -EEXIST when `path` exists,
	                 * atomically (O_EXCL). Default 0.                 */
} rio_writer_opts;

/* Fills `opts` with the defaults. */
RIO_API void rio_writer_opts_init(rio_writer_opts *opts);

/* Whether `path` may be a writer's output: 0 when nothing is there or a
 * regular file is (which a writer replaces). Anything else is refused, so
 * that no writer ever replaces it: a directory with -EISDIR; a FIFO, a
 * socket, a device node (/dev/null...) or a symbolic link, even one to a
 * regular file, with RIO_EUNSUPPORTED (links are not written through: give
 * the link's target). An empty path is -ENOENT. `err` (may be NULL) gets a
 * message naming the path and what it is. rio_writer_open(),
 * rio_index_write() and recordio-pack apply this rule at open, and again
 * just before the rename that replaces the file. */
RIO_API int rio_output_check(const char *path, rio_error *err);

/* Opens a writer for `path` (opts may be NULL for defaults). Data goes to a
 * hidden temporary file in the same directory (".NAME.XXXXXX.tmp"); only
 * rio_writer_close() renames it to `path`, so a crash or an error never
 * leaves a file under `path` that looks whole. A `path` that exists and is
 * not a regular file is refused here, at open (rio_output_check(): -EISDIR
 * or RIO_EUNSUPPORTED; with overwrite 0, anything there is -EEXIST). */
RIO_API int rio_writer_open(rio_writer **out, const char *path, const rio_writer_opts *opts);

/* Appends one record. If `offset` is not NULL it receives the record's offset
 * in the uncompressed stream (what the .idx holds); its framed size is
 * size + RIO_FRAME_OVERHEAD. */
RIO_API int rio_writer_write(rio_writer *w, const void *data, size_t size, uint64_t *offset);

/* Hands the records written so far to the file (write(2), not fsync), so
 * that a reader of the growing file sees them whole. -ENOTSUP for a
 * compressed writer (its codec's stream is whole only once closed). */
RIO_API int rio_writer_flush(rio_writer *w);

/* Records written so far, and bytes of the uncompressed stream so far. */
RIO_API uint64_t rio_writer_records(const rio_writer *w);
RIO_API uint64_t rio_writer_bytes(const rio_writer *w);
/* Bytes written to the file so far (after compression; grows as the codec
 * flushes). */
RIO_API uint64_t rio_writer_file_bytes(const rio_writer *w);

/* Finishes the stream, flushes, fsyncs if asked, renames the temporary file
 * to its final name (a live writer's file has it already) and frees the
 * writer. On any failure the temporary file
 * is removed, nothing appears under `path`, and the error is returned. `w`
 * is freed in every case. NULL is a no-op returning 0. */
RIO_API int rio_writer_close(rio_writer *w);

/* Discards everything written: removes the temporary file and frees `w`
 * (a live writer's file keeps what was flushed).
 * Safe to call from a cleanup path; NULL is a no-op. */
RIO_API void rio_writer_abort(rio_writer *w);

/* The last error with its context (file and offset). */
RIO_API const rio_error *rio_writer_error(const rio_writer *w);

/* ------------------------------------------------------------------------ */
/* Remote shards: S3 and HTTP(S)                                             */
/* ------------------------------------------------------------------------ */

/*
 * Wherever a shard, a shard specification or an .idx path is taken (the
 * reader, the index functions, rio_shardset_expand(), the loader, the
 * tools), a URL will do, in builds with libcurl (configure --with-curl;
 * without it a URL is RIO_EUNSUPPORTED):
 *   s3://BUCKET/KEY      an object of an S3 bucket (or of an S3-compatible
 *                        store); s3://BUCKET/PREFIX, a glob of keys
 *                        (s3://b/train-*.tfrecord) and a "directory"
 *                        (s3://b/path/) expand as local paths do
 *                        (rio_shardset_expand), listed with ListObjectsV2;
 *   http://..., https:// a single shard on a web server (no listing).
 * S3 requests are signed (AWS Signature Version 4) with the credentials
 * the AWS tools find: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN; else the profile AWS_PROFILE (default "default") of
 * ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE and
 * AWS_CONFIG_FILE move them); none at all: anonymous requests (public
 * buckets). The region: AWS_REGION, AWS_DEFAULT_REGION, the profile's
 * region, else us-east-1. The endpoint: AWS_ENDPOINT_URL_S3,
 * AWS_ENDPOINT_URL or the profile's endpoint_url, addressed path-style
 * (ENDPOINT/BUCKET/KEY), for S3-compatible stores; else AWS's
 * https://BUCKET.s3.REGION.amazonaws.com. doc/remote.md has the details.
 *
 * An object's size and ETag are taken when it is opened, and every read
 * sends If-Match with that ETag: an object replaced while it is read is
 * RIO_ECHANGED, never a mix of old and new bytes. Reads are ranged GETs of
 * part_size bytes, up to `inflight` at a time. Connection errors, stalls
 * (less than 1 KiB/s for stall_seconds), HTTP 429, 500, 502, 503, 504 and
 * S3's SlowDown are retried after a jittered, exponentially growing pause
 * (capped at 20 s), the read resuming at the byte where it broke, up to
 * `attempts` tries; then RIO_EREMOTE, the message naming the URL and the
 * last error. Permanent errors fail at once: -EACCES (403), -ENOENT (404),
 * RIO_EREMOTE for the others (a signature or region mismatch, a missing
 * bucket), each message naming the URL, the HTTP status and the S3 error
 * code, e.g.
 *   "s3://b/train-00000-of-00004.tfrecord: remote storage error: HTTP 403
 *    (SignatureDoesNotMatch): The request signature we calculated does not
 *    match the signature you provided."
 */
typedef struct rio_remote_opts {
	uint64_t part_size;     /* bytes per ranged GET (default 8 MiB;
	                         * RIO_REMOTE_MIN_PART to RIO_REMOTE_MAX_PART) */
	unsigned inflight;      /* requests in flight at once, per reader or
	                         * loader (default 16; 1 to
	                         * RIO_REMOTE_MAX_INFLIGHT)                   */
	unsigned attempts;      /* tries of one request before it fails
	                         * (default 10; 1 to RIO_REMOTE_MAX_ATTEMPTS)  */
	unsigned stall_seconds; /* a transfer moving less than 1 KiB/s for
	                         * this long, or a connection not made in it,
	                         * is broken off and retried (default 30; 1
	                         * to 3600)                                  */
} rio_remote_opts;

#define RIO_REMOTE_MIN_PART (64u * 1024u)
#define RIO_REMOTE_MAX_PART (1u << 30)
#define RIO_REMOTE_MAX_INFLIGHT 256u
#define RIO_REMOTE_MAX_ATTEMPTS 100u
#define RIO_REMOTE_MAX_STALL 3600u

/* Fills `opts` with the defaults. */
RIO_API void rio_remote_opts_init(rio_remote_opts *opts);
/* 0 when every field is in its range, else -EINVAL with a message naming
 * the field and its range in `err` (may be NULL). */
RIO_API int rio_remote_opts_check(const rio_remote_opts *opts, rio_error *err);

/* 1 when `path` is a URL the library reads (s3://, http://, https://,
 * the scheme in any case), else 0. */
RIO_API int rio_is_url(const char *path);

/*
 * Writing a shard set to S3 as a whole (doc/recordio-format.md, "Sets in
 * S3"; recordio-pack --output s3://...). S3 has no rename: each
 * publication of s3://BUCKET/PREFIX is a new generation G whose shards and
 * .idx sidecars are uploaded under PREFIX.gGGGGGG/ (multipart uploads for
 * shards larger than opts->part_size, aborted on failure), then the
 * manifest PREFIX.manifest naming G and its shards is PUT, last. Readers
 * (rio_shardset_expand of s3://BUCKET/PREFIX) read the set the manifest
 * names: the old one or the new one, whole, never a mix or a part. The
 * generation that was in force stays (its readers go on); older ones are
 * deleted once the new manifest is in place.
 */
/* Checks, before a long packing, that `url` (s3://BUCKET/PREFIX) can take
 * a set: the URL, the credentials (a listing of the bucket), and that no
 * set is there unless `replace`. 0, or the error with its one-line message
 * in `err` (-EEXIST for a set already there). */
RIO_API int rio_set_publish_check(const char *url, int replace, const rio_remote_opts *opts,
                                  rio_error *err);
/* Publishes the local shards paths[0, n) (each with PATH.idx beside it
 * when there is one, uploaded next to the shard), in that order, as the
 * set at `url`, replacing one that is there when `replace` (else -EEXIST).
 * The new generation in *generation (may be NULL). On failure, what this
 * call uploaded is deleted and the set is as it was. */
RIO_API int rio_set_publish(const char *url, const char *const *paths, size_t n, int replace,
                            const rio_remote_opts *opts, uint64_t *generation, rio_error *err);

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct rio_reader rio_reader;

/* What a reader does with a damaged record. */
typedef enum rio_damage_policy {
	RIO_DAMAGE_FAIL = 0, /* stop: rio_reader_next() returns the error      */
	RIO_DAMAGE_SKIP = 1, /* skip it, count it and go on: after a bad data
	                      * CRC at the next record; after a bad length or
	                      * length CRC at the next offset where a valid
	                      * header starts; a truncated tail (or a
	                      * compressed stream cut short) ends the file.
	                      * Damage inside a compressed stream (the
	                      * codec's error, or a bad frame in the decoded
	                      * bytes) cannot be skipped: nothing decoded after
	                      * it can be trusted, so it stops the reader after
	                      * the records decoded before it. */
	RIO_DAMAGE_REPORT = 2, /* as SKIP, but each damage is also returned by
	                        * rio_reader_next() as its error code (with its
	                        * place in rio_reader_error()), once, after it
	                        * was skipped: call again to go on. For tools
	                        * that list every damage (recordio-verify
	                        * --all-errors). Errors that stop the reader
	                        * are told apart by rio_reader_stopped(). */
} rio_damage_policy;

typedef struct rio_reader_opts {
	rio_compression compression; /* AUTO (default): detect from the bytes */
	int verify_crc;              /* 1 (default): check both CRCs. 0:
	                              * skip the data CRC only; the length
	                              * CRC, the length against
	                              * max_record_size and truncation are
	                              * always checked (a damaged length
	                              * must never be trusted)             */
	rio_damage_policy on_damage; /* FAIL (default), SKIP or REPORT
	                              * (another value: -EINVAL from open)  */
	uint64_t max_record_size;    /* RIO_DEFAULT_MAX_RECORD by default    */
	size_t buffer_size;          /* read size, default 1 MiB (taken as
	                              * 4 KiB to 1 GiB, in 4 KiB steps)     */
	rio_remote_opts remote;      /* a URL's reads (the defaults)         */
} rio_reader_opts;

/* One record: a borrowed view, valid until the next call on the reader. */
typedef struct rio_record {
	const uint8_t *data;
	size_t size;
	uint64_t offset; /* of its frame in the uncompressed stream          */
	uint64_t index;  /* its number in the shard, from 0 (damaged records
	                  * that were skipped are not numbered)              */
} rio_record;

RIO_API void rio_reader_opts_init(rio_reader_opts *opts);

/* Opens `path` for reading (opts may be NULL). Fails with -ENOENT etc.; the
 * message of a failed open is not kept, as there is no reader: name the path
 * in your own message. */
RIO_API int rio_reader_open(rio_reader **out, const char *path, const rio_reader_opts *opts);

/* As rio_reader_open(), with the failure's one-line message in `err` (may
 * be NULL): the path and the error, and for a URL (s3://, http(s)://: see
 * "Remote shards") the HTTP status and S3's error code. A URL is opened
 * with one request (its size and ETag taken then), read with opts->remote
 * as a stream with read-ahead; rio_reader_seek() works on it too. */
RIO_API int rio_reader_open_err(rio_reader **out, const char *path, const rio_reader_opts *opts,
                                rio_error *err);

/* Opens a reader over `fd`, open for reading, from its current position:
 * standard input, a pipe, a socket. `name` (copied) names it in messages
 * and rio_reader_path(), e.g. "standard input". The reader does not close
 * fd; close it after rio_reader_close(). rio_reader_seek() and
 * rio_reader_read_at() take offsets from the start of the file, so they
 * need a seekable fd that was at offset 0.
 *
 * Detection (compression AUTO) reads the first bytes with read(), here and
 * in rio_reader_open(), and decodes them with the rest: a shard of any
 * compression reads the same through a pipe, a FIFO or /dev/stdin as from
 * its file. */
RIO_API int rio_reader_open_fd(rio_reader **out, int fd, const char *name,
                               const rio_reader_opts *opts);

/* Reads the next record into `*rec`. Returns 1 when a record was read, 0 at a
 * clean end of file, or a negative error (see rio_reader_error() for where).
 * After an error that stops the reader, further calls return the same error:
 * every error under FAIL, and under SKIP and REPORT those no policy skips
 * (I/O and memory errors, damage inside a compressed stream); see
 * rio_reader_stopped(). */
RIO_API int rio_reader_next(rio_reader *r, rio_record *rec);

/* Positions the reader at the record that starts at `offset` in an
 * uncompressed shard, which will be numbered `record_index`, and ends a
 * stop (reading goes on from there). Returns RIO_EUNSUPPORTED for a
 * compressed shard. */
RIO_API int rio_reader_seek(rio_reader *r, uint64_t offset, uint64_t record_index);

/* 1 when the reader has stopped on an error (every later call returns it),
 * 0 while it can go on (also right after a RIO_DAMAGE_REPORT damage). */
RIO_API int rio_reader_stopped(const rio_reader *r);

/* The compression found (or given). */
RIO_API rio_compression rio_reader_compression(const rio_reader *r);
/* Damaged regions skipped under the SKIP policy (one resync over several
 * records counts once), and the bytes they spanned. */
RIO_API uint64_t rio_reader_skipped(const rio_reader *r);
RIO_API uint64_t rio_reader_skipped_bytes(const rio_reader *r);
/* Bytes consumed from the uncompressed stream so far, and from the file. */
RIO_API uint64_t rio_reader_bytes(const rio_reader *r);
RIO_API uint64_t rio_reader_file_bytes(const rio_reader *r);
/* The last error with its context; under SKIP, the last damage skipped. */
RIO_API const rio_error *rio_reader_error(const rio_reader *r);
/* The path the reader was opened with. */
RIO_API const char *rio_reader_path(const rio_reader *r);

RIO_API void rio_reader_close(rio_reader *r);

/* ------------------------------------------------------------------------ */
/* Index (.idx sidecar)                                                      */
/* ------------------------------------------------------------------------ */

/* The DALI / `tfrecord` package text format: one line per record,
 * "<offset> <framed size>\n", offsets in the uncompressed stream. */
typedef struct rio_index {
	uint64_t count;
	uint64_t *offset;      /* count entries                              */
	uint64_t *framed_size; /* count entries: data length + 16            */
} rio_index;

/* Reads `path` (an .idx file). Malformed lines give RIO_EBADINDEX with the
 * line number in `err` (err may be NULL), and so does a `path` that is not
 * a regular file (a FIFO, which is never opened to wait for a writer; a
 * directory). Free with rio_index_free(). */
RIO_API int rio_index_read(const char *path, rio_index *idx, rio_error *err);
/* rio_index_read() sending a URL's GET with `remote` (NULL: the
 * defaults). */
RIO_API int rio_index_read_opts(const char *path, const rio_remote_opts *remote, rio_index *idx,
                                rio_error *err);
/* Writes `idx` to `path` atomically (temporary name, then rename); a `path`
 * that exists and is not a regular file is refused (rio_output_check()). */
RIO_API int rio_index_write(const char *path, const rio_index *idx, rio_error *err);
/* Builds the index of a shard by reading it (compressed or not); damage is
 * an error reported in `err`. */
RIO_API int rio_index_build(const char *shard_path, rio_index *idx, rio_error *err);
/* rio_index_build() reading the shard with `opts` (NULL: the defaults; a
 * URL's requests with opts->remote). */
RIO_API int rio_index_build_opts(const char *shard_path, const rio_reader_opts *opts,
                                 rio_index *idx, rio_error *err);
/* rio_index_write() sending a URL's PUT with `remote` (NULL: the
 * defaults). */
RIO_API int rio_index_write_opts(const char *path, const rio_index *idx,
                                 const rio_remote_opts *remote, rio_error *err);
/* 1 when there is a file at `path`, or an object at a URL (one HEAD, with
 * `remote`: NULL the defaults); 0 when there is none; else a negative
 * error with its one line in `err`. */
RIO_API int rio_path_exists(const char *path, const rio_remote_opts *remote, rio_error *err);
/* rio_path_exists() that also gives the size in bytes of what is there:
 * the file's (stat) or the object's (the HEAD's Content-Length;
 * UINT64_MAX when the server sent none). size may be NULL. */
RIO_API int rio_path_size(const char *path, const rio_remote_opts *remote, uint64_t *size,
                          rio_error *err);
/* Appends one entry (grows the arrays). The arrays must be the library's:
 * from a zeroed index, rio_index_read(), rio_index_build() or earlier
 * appends (their capacity follows from count; arrays the caller allocated
 * would be overrun). */
RIO_API int rio_index_append(rio_index *idx, uint64_t offset, uint64_t framed_size);
/* The sidecar path of a shard: shard_path + ".idx" (malloc'd; NULL on ENOMEM). */
RIO_API char *rio_index_path(const char *shard_path);
/* Frees the arrays and zeroes `idx`; safe on a zeroed index. */
RIO_API void rio_index_free(rio_index *idx);

/* Reads record `i` of an uncompressed shard through its index: positions `r`
 * with rio_reader_seek() and reads it into `*rec`. Returns 1, or
 * RIO_ERANGE, RIO_EUNSUPPORTED (compressed), RIO_EBADINDEX (the frame found
 * at that offset is not the size the index says), or a read error. A
 * damaged record i is its error under every policy, never the record after
 * it: under SKIP and REPORT it is counted and skipped as REPORT does. */
RIO_API int rio_reader_read_at(rio_reader *r, const rio_index *idx, uint64_t i, rio_record *rec);

/* ------------------------------------------------------------------------ */
/* Shard sets and shard names                                                */
/* ------------------------------------------------------------------------ */

/* A set PREFIX-SSSSS-of-NNNNN... being replaced has the journal
 * PREFIX + RIO_SET_JOURNAL_SUFFIX, whose first line is RIO_SET_JOURNAL_MAGIC
 * (doc/recordio-format.md, "Replacing a set: the commit journal"). */
#define RIO_SET_JOURNAL_SUFFIX ".commit"
#define RIO_SET_JOURNAL_MAGIC "recordio-set-commit 1"

typedef struct rio_shardset {
	size_t count;
	char **paths; /* sorted; count entries, each malloc'd */
} rio_shardset;

/* Expands a shard specification into the ordered list of files:
 *   - a comma-separated list "a.tfrecord,b.tfrecord" (each item may itself
 *     be a glob, a directory or a PREFIX), in the given order;
 *   - a glob pattern "data/train-*.tfrecord", sorted;
 *   - an existing file;
 *   - a directory ("DIR" or "DIR/"): the files in it, sorted by name, without
 *     subdirectories, index sidecars (.idx), commit journals
 *     (RIO_SET_JOURNAL_SUFFIX) and hidden names (TFX writes its splits as
 *     directories of data_tfrecord-SSSSS-of-NNNNN.gz). A directory with no
 *     such file is RIO_ENOSHARDS naming it. A name that is both a directory
 *     and the PREFIX of shards beside it is ambiguous: -EINVAL, unless it is
 *     written with a trailing '/' (the directory) or as a glob;
 *   - a PREFIX: the files PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4].
 * Index sidecars (.idx), journals and hidden temporary files are never
 * included by a glob, a directory or a PREFIX.
 * When the files are named -SSSSS-of-NNNNN, the set must be complete as
 * far as the specification asks for it: a shard that a PREFIX or a
 * directory would list, or whose name a glob matches, and that is not
 * there gives RIO_EMISSINGSHARD naming it; mixed NNNNN gives
 * RIO_EBADSHARDNAME. A set whose PREFIX.commit journal exists (a
 * recordio-pack that replaced it was interrupted: it may hold old and new
 * shards) gives RIO_EINCOMPLETESET naming the set and how to finish it,
 * whichever way its files were named. Nothing matching (or an empty list
 * such as ",") gives RIO_ENOSHARDS; a NULL or empty spec -EINVAL. A subset
 * of a set is asked for by naming its files one by one in a list, or by a
 * glob whose pattern leaves the others out ("train-0000[0-2]-of-00004*"):
 * the shards it cannot match are not looked for. Returns 0; `err` may be
 * NULL.
 */
RIO_API int rio_shardset_expand(const char *spec, rio_shardset *set, rio_error *err);
/* As rio_shardset_expand(), listing S3 URLs with `remote`'s attempts and
 * stall limit (NULL: the defaults). */
RIO_API int rio_shardset_expand_remote(const char *spec, rio_shardset *set,
                                       const rio_remote_opts *remote, rio_error *err);
RIO_API void rio_shardset_free(rio_shardset *set);

/* Parses a shard file name (a path; only the last component is looked at)
 * of the form PREFIX-SSSSS-of-NNNNN[.suffix]: returns 1 and fills index and
 * count when it matches, 0 when it does not. */
RIO_API int rio_shard_name_parse(const char *path, uint32_t *index, uint32_t *count);

/* Formats "PREFIX-SSSSS-of-NNNNN" + rio_compression_suffix(c) into buf.
 * Returns the length, -ENAMETOOLONG if it does not fit, or -EINVAL for a
 * NULL buf or prefix or index >= count. */
RIO_API int rio_shard_name_format(char *buf, size_t size, const char *prefix, uint32_t index,
                                  uint32_t count, rio_compression c);

/* ------------------------------------------------------------------------ */
/* tf.train.Example: decoding                                                */
/* ------------------------------------------------------------------------ */

typedef enum rio_feature_kind {
	RIO_FEATURE_NONE = 0, /* a Feature with no list set (occurs in real data) */
	RIO_FEATURE_BYTES = 1,
	RIO_FEATURE_FLOAT = 2,
	RIO_FEATURE_INT64 = 3,
} rio_feature_kind;

/* "none", "bytes", "float", "int64". */
RIO_API const char *rio_feature_kind_name(rio_feature_kind k);

/* One feature: a view into the serialized Example. */
typedef struct rio_feature {
	const char *name; /* not NUL-terminated: name_len bytes */
	size_t name_len;
	rio_feature_kind kind;
	size_t count;          /* number of values in the list              */
	const uint8_t *list;   /* the serialized BytesList/FloatList/Int64List */
	size_t list_size;
} rio_feature;

/* Finds the feature called `name` (NUL-terminated) in a serialized Example.
 * Returns 0 and fills `*f`, RIO_ENOFEATURE when absent, RIO_EBADEXAMPLE when
 * the bytes are not a valid Example. When a name occurs more than once, the
 * last occurrence wins (protobuf map semantics). Never reads outside
 * [data, data + size). */
RIO_API int rio_example_find(const void *data, size_t size, const char *name, rio_feature *f);

/* Iterates over all features in order of appearance:
 *   rio_example_iter it; rio_example_iter_init(&it, data, size);
 *   while ((rc = rio_example_iter_next(&it, &f)) == 1) ...
 * next returns 1 with a feature, 0 at the end, RIO_EBADEXAMPLE on damage. */
typedef struct rio_example_iter {
	const uint8_t *p, *end;         /* position in the Example            */
	const uint8_t *fp, *fend;       /* position in the current Features   */
} rio_example_iter;
RIO_API void rio_example_iter_init(rio_example_iter *it, const void *data, size_t size);
RIO_API int rio_example_iter_next(rio_example_iter *it, rio_feature *f);

/* Validates a whole Example (every feature and list well formed). Returns 0
 * or RIO_EBADEXAMPLE. */
RIO_API int rio_example_validate(const void *data, size_t size);

/* Typed access. Each copies up to `max` values into `out` (NULL when max is
 * 0, to ask for the count only), returns the number of values in the list
 * (which may exceed `max`: call again with a bigger buffer),
 * RIO_EFEATUREKIND if the feature is of another kind, or RIO_EBADEXAMPLE.
 * Packed and unpacked encodings are both accepted. A feature with no kind
 * set has no values: the numeric accessors return 0 and
 * rio_feature_bytes_next() returns 0 at once. NULL arguments give -EINVAL
 * (so can rio_example_find() and rio_example_validate()). */
RIO_API int64_t rio_feature_floats(const rio_feature *f, float *out, size_t max);
RIO_API int64_t rio_feature_int64s(const rio_feature *f, int64_t *out, size_t max);
/* int64 and float lists converted to float (bytes: RIO_EFEATUREKIND). */
RIO_API int64_t rio_feature_as_floats(const rio_feature *f, float *out, size_t max);

/* Bytes values are iterated: `*cursor` starts at 0; each call returns 1 and
 * sets *value and *len to the next value (a view), 0 after the last, or a
 * negative error (RIO_ERANGE for a cursor past the list). */
RIO_API int rio_feature_bytes_next(const rio_feature *f, size_t *cursor, const uint8_t **value,
                                   size_t *len);

/* ------------------------------------------------------------------------ */
/* tf.train.SequenceExample: decoding                                        */
/* ------------------------------------------------------------------------ */

/*
 *   SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
 *   FeatureLists    { map<string, FeatureList> feature_list = 1; }
 *   FeatureList     { repeated Feature feature = 1; }
 *
 * The context is read with the Example API above, on the SequenceExample's
 * own bytes: its field 1 is a Features message, as an Example's is, and the
 * Example functions skip field 2. So rio_example_find(data, size, "length",
 * &f) finds a context feature and rio_example_iter walks the context. (The
 * converse holds too: a SequenceExample with no feature lists is
 * byte-for-byte an Example with the same features.)
 *
 * The feature lists are views into the caller's bytes, in the same style:
 *   rio_feature_lists_iter it; rio_feature_list fl; rio_feature_list_iter li;
 *   rio_feature_lists_iter_init(&it, data, size);
 *   while ((rc = rio_feature_lists_iter_next(&it, &fl)) == 1) {
 *       rio_feature_list_iter_init(&li, &fl);
 *       while ((rc = rio_feature_list_iter_next(&li, &f)) == 1)
 *           ... f is one time step: rio_feature_floats(&f, ...) etc.
 *   }
 * Every next returns 1 with an item, 0 at the end, RIO_EBADEXAMPLE on
 * damage (and keeps returning it). Protobuf semantics as for Examples:
 * unknown fields are skipped; feature_lists given several times merge;
 * find returns the last entry of a name (iteration yields each); a
 * FeatureList given twice in one entry is the concatenation of both. */
typedef struct rio_feature_list {
	const char *name; /* not NUL-terminated: name_len bytes */
	size_t name_len;
	size_t count;         /* number of Features (time steps) in the list */
	const uint8_t *entry; /* the serialized map entry (key and
	                       * FeatureList), for rio_feature_list_iter   */
	size_t entry_size;
} rio_feature_list;

/* Finds the feature list called `name` (NUL-terminated). Returns 0 and
 * fills `*fl`, RIO_ENOFEATURE when absent, RIO_EBADEXAMPLE when the bytes
 * are not a valid SequenceExample (as far as the search walks them),
 * -EINVAL for NULL arguments. Never reads outside [data, data + size). */
RIO_API int rio_sequence_example_find_list(const void *data, size_t size, const char *name,
                                           rio_feature_list *fl);

/* Iterates over all feature lists in order of appearance. */
typedef struct rio_feature_lists_iter {
	const uint8_t *p, *end;   /* position in the SequenceExample         */
	const uint8_t *lp, *lend; /* position in the current FeatureLists    */
} rio_feature_lists_iter;
RIO_API void rio_feature_lists_iter_init(rio_feature_lists_iter *it, const void *data,
                                         size_t size);
RIO_API int rio_feature_lists_iter_next(rio_feature_lists_iter *it, rio_feature_list *fl);

/* Iterates over the Features (time steps) of one list; each feature gets
 * the list's name, and is read with the typed accessors above. */
typedef struct rio_feature_list_iter {
	const uint8_t *p, *end;   /* position in the map entry               */
	const uint8_t *fp, *fend; /* position in the current FeatureList     */
	const char *name;
	size_t name_len;
} rio_feature_list_iter;
RIO_API void rio_feature_list_iter_init(rio_feature_list_iter *it, const rio_feature_list *fl);
RIO_API int rio_feature_list_iter_next(rio_feature_list_iter *it, rio_feature *f);

/* Validates a whole SequenceExample: the context as rio_example_validate()
 * does, and every feature list, Feature and value. Returns 0 or
 * RIO_EBADEXAMPLE (-EINVAL for NULL data with a size). An Example is a
 * valid SequenceExample (with no feature lists). */
RIO_API int rio_sequence_example_validate(const void *data, size_t size);

/* ------------------------------------------------------------------------ */
/* What a payload is                                                         */
/* ------------------------------------------------------------------------ */

typedef enum rio_payload_kind {
	RIO_PAYLOAD_RAW = 0,              /* not a message decoded here        */
	RIO_PAYLOAD_EXAMPLE = 1,          /* a tf.train.Example                */
	RIO_PAYLOAD_SEQUENCE_EXAMPLE = 2, /* a tf.train.SequenceExample        */
} rio_payload_kind;

typedef struct rio_payload_info {
	rio_payload_kind kind;
	size_t features;      /* Example: features; SequenceExample: context
	                       * features (map entries, repeats included)   */
	size_t feature_lists; /* SequenceExample: feature lists             */
	size_t steps;         /* SequenceExample: Features in all lists     */
	size_t unrepresented; /* parts the decoded view (the iterators above)
	                       * does not show: unknown fields, known fields
	                       * of another wire type, a map key, value,
	                       * list or Feature kind that a later one
	                       * overrides. 0: iterating shows the whole
	                       * record, so a tool may print it decoded
	                       * without losing anything.                  */
} rio_payload_info;

/* Says what a payload is, the way the tools decide how to show it:
 *   - 0 bytes: an Example with no features;
 *   - a valid SequenceExample with a feature_lists field (field 2) and at
 *     least one context feature or feature list: SEQUENCE_EXAMPLE;
 *   - else a valid Example with at least one feature: EXAMPLE (a
 *     non-empty payload with no features is almost always text or another
 *     message whose fields skip as unknown ones);
 *   - else RAW (unrepresented is then 0: the raw bytes are the view).
 * Returns 0 (never fails on any bytes), or -EINVAL for NULL arguments. */
RIO_API int rio_payload_inspect(const void *data, size_t size, rio_payload_info *info);
RIO_API const char *rio_payload_kind_name(rio_payload_kind k); /* "raw", "example",
                                                                * "sequence_example" */

/* ------------------------------------------------------------------------ */
/* TensorBoard event files                                                   */
/* ------------------------------------------------------------------------ */

/*
 * An event file (events.out.tfevents.*) is a plain TFRecord file, read with
 * rio_reader like any shard, whose records are tensorflow.Event messages:
 *   Event   { double wall_time = 1; int64 step = 2; oneof what {
 *             string file_version = 3; bytes graph_def = 4;
 *             Summary summary = 5; ... 6-9; } SourceMetadata = 10; }
 *   Summary { repeated Value value = 1; }
 *   Value   { string node_name = 7; string tag = 1; SummaryMetadata
 *             metadata = 9; oneof value { float simple_value = 2; ...
 *             TensorProto tensor = 8; } }
 * The first record of a file is a header event whose file_version is
 * "brain.Event:N". TensorFlow 1 wrote scalars as simple_value; TensorFlow
 * 2's tf.summary.scalar writes a scalar tensor. Everything here is a view
 * into the caller's bytes; malformed input gives -EBADMSG.
 */
typedef struct rio_event {
	double wall_time;         /* 0 when absent                          */
	int64_t step;             /* 0 when absent                          */
	const char *file_version; /* not NUL-terminated; NULL when absent   */
	size_t file_version_len;
	const uint8_t *summary;   /* the serialized Summary; NULL when none */
	size_t summary_size;
	size_t other_fields;      /* fields not decoded here (graph_def,
	                           * log_message, session_log, run metadata,
	                           * source_metadata, unknown ones), and
	                           * earlier occurrences a later one overrides */
} rio_event;

/* Parses one Event. Returns 0, -EBADMSG when the bytes are not a valid
 * Event message (every field's framing is checked; a wall_time or step of
 * another wire type is malformed), -EINVAL for NULL arguments. A Summary
 * given twice is merged by protobuf: here the last one is kept and the
 * earlier counted in other_fields. */
RIO_API int rio_event_parse(const void *data, size_t size, rio_event *ev);

/* 1 when the payload is an Event whose file_version starts with
 * "brain.Event:" (the first record of every event file), else 0. */
RIO_API int rio_event_is_file_header(const void *data, size_t size);

/* One Summary.Value. */
typedef struct rio_summary_value {
	const char *tag;      /* not NUL-terminated; "" when absent           */
	size_t tag_len;
	const uint8_t *value; /* the serialized Value, for
	                       * rio_summary_value_scalar()                   */
	size_t value_size;
	size_t other_fields;  /* fields besides one tag and one simple_value
	                       * (node_name, metadata, a tensor, an image, a
	                       * histogram, unknown ones, repeats): 0 when
	                       * the tag and the scalar are the whole Value */
} rio_summary_value;

/* Iterates over the values of an event's summary (none when it has no
 * summary): next returns 1 with a value, 0 at the end, -EBADMSG on damage
 * (and keeps returning it). */
typedef struct rio_summary_iter {
	const uint8_t *p, *end;
} rio_summary_iter;
RIO_API void rio_summary_iter_init(rio_summary_iter *it, const rio_event *ev);
RIO_API int rio_summary_iter_next(rio_summary_iter *it, rio_summary_value *v);

/* The scalar a value holds: its simple_value, or a tensor of one element
 * (shape [] or all dimensions 1) of dtype float, double, int32 or int64,
 * in tensor_content or in the typed value field. Returns 1 and sets *out,
 * 0 when the value holds something else (an image, a histogram, a string
 * or bigger tensor), -EBADMSG when it is malformed. */
RIO_API int rio_summary_value_scalar(const rio_summary_value *v, double *out);

/* One scalar to write: a tag ("test/accuracy") and its value. */
typedef struct rio_scalar {
	const char *tag;
	float value;
} rio_scalar;

/* Encodes one Event: wall_time (seconds since the epoch), step (left out
 * when 0, as protobuf does), and either file_version (the header event:
 * "brain.Event:2") or a Summary of n scalars, each a Value { tag,
 * simple_value } — the bytes TensorBoard's EventFileWriter writes for them.
 * Writes at most `cap` bytes at buf and returns the Event's size, like
 * snprintf: a size above cap means it did not fit (call again with a
 * buffer that large; buf may be NULL with cap 0 to ask). Returns 0 for bad
 * arguments (a NULL tag, file_version together with values). */
RIO_API size_t rio_event_encode(void *buf, size_t cap, double wall_time, int64_t step,
                                const char *file_version, const rio_scalar *values, size_t n);

/* ------------------------------------------------------------------------ */
/* tf.train.Example: encoding                                                */
/* ------------------------------------------------------------------------ */

/* Builds one serialized Example, features in the order they were added,
 * numbers packed as TensorFlow writes them (byte-identical to TensorFlow's
 * serialization of the same features in the same order). An Example with no
 * features encodes as "0a 00"; a NULL name is "". Reuse it with _reset(). */
typedef struct rio_example_builder {
	uint8_t *buf; /* the Features body built so far */
	size_t size, cap;
	uint8_t *out; /* the finished Example */
	size_t out_cap;
	int failed; /* sticky -ENOMEM */
} rio_example_builder;

RIO_API void rio_example_builder_init(rio_example_builder *b);
RIO_API void rio_example_builder_reset(rio_example_builder *b);
RIO_API void rio_example_builder_free(rio_example_builder *b);

/* Each add returns 0 or -ENOMEM (also remembered: _finish fails then). */
RIO_API int rio_example_add_bytes(rio_example_builder *b, const char *name, const void *value,
                                  size_t len);
RIO_API int rio_example_add_bytes_list(rio_example_builder *b, const char *name,
                                       const void *const *values, const size_t *lens, size_t n);
RIO_API int rio_example_add_floats(rio_example_builder *b, const char *name, const float *v,
                                   size_t n);
RIO_API int rio_example_add_int64s(rio_example_builder *b, const char *name, const int64_t *v,
                                   size_t n);
/* A Feature with no kind set. */
RIO_API int rio_example_add_empty(rio_example_builder *b, const char *name);

/* Finishes the Example: *data and *size view the serialized bytes, owned by the
 * builder, valid until the next call on it. Returns 0 or -ENOMEM. */
RIO_API int rio_example_finish(rio_example_builder *b, const uint8_t **data, size_t *size);

/* ------------------------------------------------------------------------ */
/* Sizes                                                                     */
/* ------------------------------------------------------------------------ */

/* Parses a byte size as every option of the project takes one (the tools'
 * SIZE, recordio-train's, the Python package's size arguments):
 *   "4096", "4096B"           bytes
 *   "256K", "64M", "1G", "2T" and "256KiB" ... "2TiB": powers of 1024
 *   "100KB", "64MB", "1GB", "2TB": powers of 1000
 *   "1.5G", "0.25M"           a fraction, with a unit larger than a byte;
 *                             the bytes are rounded down
 * Decimal digits, the units spelled exactly so; nothing else: no blanks, no
 * sign, no hex, no exponent, no "inf" or "nan". Returns 0 and sets *bytes,
 * or -EINVAL (not a size) or -ERANGE (more than `max` bytes, or than
 * 2^64-1) with a one-line message quoting the text in `err` (may be NULL).
 * "0" is 0 bytes: what it means is the option's to say. */
RIO_API int rio_size_parse(const char *text, uint64_t max, uint64_t *bytes, rio_error *err);

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/* The library version, "MAJOR.MINOR.PATCH". */
RIO_API const char *rio_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RECORDIO_H */

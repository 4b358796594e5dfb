/*
 * manifest.h — the manifest of a shard set written to S3 by recordio-pack
 * (doc/recordio-format.md, "Sets in S3"): which generation of the set is
 * in force and its objects. Text, one item a line:
 *
 *   recordio-set 1
 *   generation 7
 *   shard train.g000007/train-00000-of-00002.tfrecord 1038894 "9b2c...e1"
 *   shard train.g000007/train-00001-of-00002.tfrecord 1050001 "77aa...03"
 *
 * Each shard's name is relative to the manifest's own "directory" (the key
 * up to its last '/'): no '/' at its start, no "." or ".." component, no
 * blank or control character; then its size in bytes and its ETag as S3
 * gave it ("-" for none). The shards are the set's, in order. An .idx
 * sidecar is found by name, beside its shard, as anywhere else.
 */
#ifndef RIO_REMOTE_MANIFEST_H
#define RIO_REMOTE_MANIFEST_H

#include "text.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rio__manifest_shard {
	char *name;
	uint64_t size;
	char *etag;
} rio__manifest_shard;

typedef struct rio__manifest {
	uint64_t generation;
	rio__manifest_shard *shards;
	size_t n, cap;
} rio__manifest;

/* Parses text[0, len) into *m (zeroed first). 0; -EBADMSG with the line
 * and what is wrong in why[cap] for anything else than the format above
 * (a first line other than the magic, no or two generation lines, a shard
 * name that is not relative, a size that is not a number, an unknown
 * line, no shard); -ENOMEM. Free with rio__manifest_free (also after a
 * failure). */
int rio__manifest_parse(const char *text, size_t len, rio__manifest *m, char *why, size_t cap);
/* Appends a shard (copies of name and etag: NULL or "" for none).
 * -EINVAL for a name the parser would refuse, -ENOMEM. */
int rio__manifest_add(rio__manifest *m, const char *name, uint64_t size, const char *etag);
/* The manifest's text, appended to out. */
int rio__manifest_format(const rio__manifest *m, rio__text *out);
void rio__manifest_free(rio__manifest *m);

/* 1 when `name` may be a manifest's shard name (see above). */
int rio__manifest_name_ok(const char *name, size_t len);

#endif /* RIO_REMOTE_MANIFEST_H */

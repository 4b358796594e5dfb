/*
 * shard_out.h — a sharded output that appears all at once or not at all.
 *
 * recordio-pack writes PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4] and a
 * SHARD.idx beside each shard. With --shard-size the shard count NNNNN is
 * known only after the last record, so no shard can get its final name
 * while writing. shard_out therefore writes every shard (through rio_writer,
 * which itself writes to a temporary name) to a hidden staging name in the
 * output directory, ".BASE.pack-PID-SSSSS.tfrecord[...]", with its index
 * beside it, and only shard_out_finish(), once every shard and index is
 * complete, commits them all to their final names through the commit
 * journal PREFIX.commit (set_commit.h), which replaces an existing set as
 * a whole. An error, an interrupt, shard_out_close() without a finish
 * before the journal is in place remove every staged file, so a failed run
 * leaves nothing behind; a failure after it leaves the journal and the
 * staged files, for the next run on the prefix to finish the commit.
 *
 * Placement of records:
 *   - shards = N: record i goes to the shard k with
 *     k*total/N <= i < (k+1)*total/N (contiguous ranges whose sizes differ by
 *     at most one); `total` must be given. Records past `total` go to the
 *     last shard. Shards left without records are written empty.
 *   - shard_size = S: a new shard starts when the next record's frame would
 *     take the current shard's uncompressed bytes over S; every shard holds
 *     at least one record (an empty input gives one empty shard); a run
 *     that would need more than SHARD_OUT_MAX shards is an error.
 *
 * Existing files: shard_out_open() refuses (unless `force`) when any
 * PREFIX-DIGITS-of-DIGITS.tfrecord* file or its .idx exists, and (even with
 * `force`) when one of them is not a regular file. With `force`
 * shards of the same name are replaced, and the others of that PREFIX
 * (another NNNNN or compression) removed, in the same commit.
 *
 * Errors are reported on stderr through tool_error() (shard_out is part of
 * the tool, not the library); the functions then return -1.
 */
#ifndef RIO_TOOLS_SHARD_OUT_H
#define RIO_TOOLS_SHARD_OUT_H

#include <stdint.h>

#include "recordio.h"

typedef struct shard_out shard_out;

/* The most shards of one set: SSSSS and NNNNN have five digits (a sixth
 * would sort shard 100000 before shard 99999 in a glob). */
#define SHARD_OUT_MAX 99999u

typedef struct shard_out_opts {
	const char *prefix;          /* PREFIX of the shard names              */
	uint32_t shards;             /* N fixed shards, or 0 with shard_size   */
	uint64_t shard_size;         /* bytes per shard, or 0 with shards      */
	uint64_t total;              /* with shards: the records to split
	                              * (or later: shard_out_set_total())     */
	rio_compression compression; /* of every shard                         */
	int level;                   /* compression level, 0 = default         */
	int fsync;                   /* fsync the shards and the directory     */
	int force;                   /* replace existing shards of PREFIX      */
} shard_out_opts;

/* Checks the output directory and existing shards; writes nothing yet.
 * Returns 0 and the object, or -1 after reporting. */
int shard_out_open(shard_out **out, const shard_out_opts *opts);

/* Sets the record count that --shards N splits, when it was not known at
 * open; call before the first write. */
void shard_out_set_total(shard_out *s, uint64_t total);

/* Appends one record to the shard it belongs to. 0, or -1 after reporting
 * (the caller then closes, which removes everything). */
int shard_out_write(shard_out *s, const void *data, size_t size);

/* Completes the last shards, writes every index and commits all files to
 * their final names. 0, or -1 after reporting: with nothing left behind,
 * or (a failure once the journal is in place) with the set refused by
 * readers until the next recordio-pack on the prefix finishes it. */
int shard_out_finish(shard_out *s);

/* Frees the object; before a successful finish it removes every staged
 * file first. NULL is a no-op. */
void shard_out_close(shard_out *s);

/* Totals: records, bytes of the uncompressed streams, bytes of the files
 * (exact after finish), and shards opened so far (the count after finish). */
uint64_t shard_out_records(const shard_out *s);
uint64_t shard_out_bytes(const shard_out *s);
uint64_t shard_out_file_bytes(const shard_out *s);
uint32_t shard_out_count(const shard_out *s);

#endif /* RIO_TOOLS_SHARD_OUT_H */

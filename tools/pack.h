/*
 * pack.h — what recordio-pack's parts share: the parsed command line and
 * the "record source" each --from mode implements.
 *
 * A source hands out one record at a time (a view it owns, valid until its
 * next call), knows its record count up front when it can (idx, dir, csv),
 * and otherwise can rewind to the start (pack.c counts a streaming source
 * before splitting it into --shards N contiguous ranges). pack.c drives a source
 * into a shard_out (shard_out.h), directly or through the in-memory shuffle.
 * Sources report their own errors (one line naming the file and the offset
 * or line) and then return -1; pack.c only picks the exit code.
 *
 * What a source needs besides pack.c (pack_source_new() and the record-size
 * check) lives in pack_source.c, so that a program without pack.c's main()
 * (a fuzz target) can link a source: pack_source.c, pack_csv.c and
 * pack_lines.c with libtoolcommon and librecordio, then pack_csv_open_fd()
 * or pack_lines_open_fd() on a file descriptor.
 */
#ifndef RIO_TOOLS_PACK_H
#define RIO_TOOLS_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recordio.h"

/* The command line, as pack.c parsed it. */
typedef struct pack_args {
	const char *from;         /* idx, tfrecord, csv, dir, lines          */
	const char *output;       /* PREFIX                                  */
	const char *images;       /* idx: --images                           */
	const char *labels;       /* idx: --labels                           */
	const char *label_column; /* csv: --label (NULL: no label column)    */
	char **inputs;            /* positional arguments                    */
	int ninputs;
	uint64_t max_record_size; /* --max-record-size: the largest record,
	                           * line or CSV field (PACK_MAX_RECORD)     */
} pack_args;

/* --max-record-size's default and largest value: librecordio's readers
 * (these tools' and the loader) refuse longer records by default, so pack
 * never writes one. Memory while packing a line or CSV row stays within
 * about twice the limit. */
#define PACK_MAX_RECORD ((uint64_t)RIO_DEFAULT_MAX_RECORD)

/* The record count of a source that does not know it yet. */
#define PACK_UNKNOWN UINT64_MAX

typedef struct pack_source pack_source;
struct pack_source {
	/* Records the source will produce, or PACK_UNKNOWN. */
	uint64_t total;
	/* An input that can be read only once (a pipe, a FIFO, a terminal:
	 * see pack_read_once()), or NULL; such a source is never counted. */
	const char *once;
	/* The largest record (or line, or CSV field) the source may hand out:
	 * --max-record-size. pack_source_new() sets PACK_MAX_RECORD. */
	uint64_t max_record_size;
	/* Next record: 1 and a view in *data and *size (valid until the next call),
	 * 0 at the end, -1 on an error already reported. */
	int (*next)(pack_source *s, const uint8_t **data, size_t *size);
	/* Back to the first record: 0, or -1 on an error already reported.
	 * NULL for a source that knows its total when it opens: only a
	 * source of PACK_UNKNOWN records is ever counted and rewound. */
	int (*rewind)(pack_source *s);
	/* Lines for the summary after "packed ..." (one per line, each ending
	 * in a newline), or NULL: e.g. csv's NaN and infinity counts. Valid
	 * once every record was handed out. */
	void (*summary)(const pack_source *s, FILE *out);
	/* Frees the source; NULL-safe through pack_source_close(). */
	void (*close)(pack_source *s);
};

static inline void pack_source_close(pack_source *s)
{
	if (s)
		s->close(s);
}

/* A zeroed source object of `size` bytes (a struct whose first member is
 * its pack_source) with these methods, total PACK_UNKNOWN and
 * max_record_size PACK_MAX_RECORD; NULL after reporting that memory ran
 * out. */
void *pack_source_new(size_t size, int (*next)(pack_source *, const uint8_t **, size_t *),
                      int (*rewind)(pack_source *), void (*close)(pack_source *));

/* 1 when a record of `size` bytes is within s->max_record_size, else 0
 * after reporting "WHERE: a record of N bytes, over --max-record-size (L
 * bytes)" (WHERE formatted from fmt). */
int pack_record_fits(const pack_source *s, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first of `n` paths that can be read only once ("-", a pipe, a FIFO, a
 * character device or a socket), or NULL when every one can be read again. */
const char *pack_read_once(char *const *paths, size_t n);

/* The --from modes: each returns 0 and a source, or -1 after reporting. */
int pack_idx_open(pack_source **out, const pack_args *a);
int pack_tfrecord_open(pack_source **out, const pack_args *a);
int pack_csv_open(pack_source **out, const pack_args *a);
int pack_dir_open(pack_source **out, const pack_args *a);
int pack_lines_open(pack_source **out, const pack_args *a);

/* The csv and lines parsers over an open file descriptor (not closed by
 * the source), `name` naming it in errors; records are checked against
 * max_record_size. csv reads `fd` twice, so it must be seekable (a regular
 * file, a memfd); lines reads it once, to its end (a pipe will do: the
 * source is marked `once`). 0 and a source, or -1 after reporting. */
int pack_csv_open_fd(pack_source **out, int fd, const char *name, const char *label_column,
                     uint64_t max_record_size);
int pack_lines_open_fd(pack_source **out, int fd, const char *name, uint64_t max_record_size);

/* --output s3://BUCKET/PREFIX (pack_s3.c). pack_s3_begin: checks that the
 * set can be written there (credentials, no set there unless `replace`)
 * and makes the local staging directory: the local prefix to pack into in
 * *stage_prefix (malloc'd). pack_s3_publish: uploads the packed set as a
 * new generation and its manifest, printing what it published unless
 * `quiet`. pack_s3_cleanup: removes the staging directory and frees the
 * prefix (NULL: nothing). 0, or -1 after reporting. */
int pack_s3_begin(const char *url, int replace, const rio_remote_opts *remote,
                  char **stage_prefix);
int pack_s3_publish(const char *url, const char *stage_prefix, int replace,
                    const rio_remote_opts *remote, int quiet);
void pack_s3_cleanup(char *stage_prefix);

#endif /* RIO_TOOLS_PACK_H */

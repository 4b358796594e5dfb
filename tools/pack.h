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
 */
#ifndef RIO_TOOLS_PACK_H
#define RIO_TOOLS_PACK_H

#include <stddef.h>
#include <stdint.h>

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
} pack_args;

/* The record count of a source that does not know it yet. */
#define PACK_UNKNOWN UINT64_MAX

typedef struct pack_source pack_source;
struct pack_source {
	/* Records the source will produce, or PACK_UNKNOWN. */
	uint64_t total;
	/* An input that can be read only once (a pipe, a FIFO, a terminal:
	 * see pack_read_once()), or NULL; such a source is never counted. */
	const char *once;
	/* Next record: 1 and a view in *data and *size (valid until the next call),
	 * 0 at the end, -1 on an error already reported. */
	int (*next)(pack_source *s, const uint8_t **data, size_t *size);
	/* Back to the first record: 0, or -1 on an error already reported.
	 * NULL for a source that knows its total when it opens: only a
	 * source of PACK_UNKNOWN records is ever counted and rewound. */
	int (*rewind)(pack_source *s);
	/* Frees the source; NULL-safe through pack_source_close(). */
	void (*close)(pack_source *s);
};

static inline void pack_source_close(pack_source *s)
{
	if (s)
		s->close(s);
}

/* A zeroed source object of `size` bytes (a struct whose first member is
 * its pack_source) with these methods and total PACK_UNKNOWN; NULL after
 * reporting that memory ran out. */
void *pack_source_new(size_t size, int (*next)(pack_source *, const uint8_t **, size_t *),
                      int (*rewind)(pack_source *), void (*close)(pack_source *));

/* 1 when a record of `size` bytes can be packed, else 0 after reporting
 * "WHERE: ..." (WHERE formatted from fmt): librecordio's readers, these
 * tools' included, refuse records over RIO_DEFAULT_MAX_RECORD by default,
 * so pack does not write one. */
int pack_record_fits(size_t size, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first of `n` paths that can be read only once (a pipe, a FIFO, a
 * character device or a socket), or NULL when every one can be read again. */
const char *pack_read_once(char *const *paths, size_t n);

/* The --from modes: each returns 0 and a source, or -1 after reporting. */
int pack_idx_open(pack_source **out, const pack_args *a);
int pack_tfrecord_open(pack_source **out, const pack_args *a);
int pack_csv_open(pack_source **out, const pack_args *a);
int pack_dir_open(pack_source **out, const pack_args *a);
int pack_lines_open(pack_source **out, const pack_args *a);

#endif /* RIO_TOOLS_PACK_H */

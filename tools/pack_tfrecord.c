/*
 * pack_tfrecord.c — recordio-pack --from tfrecord: existing TFRecord files,
 * in any compression the reader detects, re-sharded and re-compressed with
 * their payloads copied verbatim.
 *
 * The INPUTs (each a file, a glob, a comma-separated list, a directory or a
 * shard PREFIX) are expanded into one list with tool_expand_all() when the
 * source opens, so a missing input fails before anything is written; the
 * files are then read one after the other, every CRC verified. "-" is
 * standard input, and a pipe or FIFO is read as any file (its compression
 * detected from its first bytes); such an input is read once, so --shards N
 * cannot count it.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <stdlib.h>

typedef struct tfrecord_source {
	pack_source base;
	rio_shardset files; /* every INPUT expanded, in argument order */
	size_t cur;         /* the file being read */
	rio_reader *r;      /* open on files.paths[cur], or NULL */
} tfrecord_source;

static int tfr_next(pack_source *base, const uint8_t **data, size_t *size)
{
	tfrecord_source *s = (tfrecord_source *)base;
	for (;;) {
		if (!s->r) {
			if (s->cur == s->files.count)
				return 0;
			const char *path = s->files.paths[s->cur];
			rio_reader_opts ro;
			rio_reader_opts_init(&ro);
			ro.max_record_size = s->base.max_record_size;
			rio_error err;
			int rc = tool_reader_open(&s->r, path, &ro, &err);
			if (rc < 0) {
				s->r = NULL;
				tool_error("%s", err.message);
				return -1;
			}
		}
		rio_record rec;
		int rc = rio_reader_next(s->r, &rec);
		if (rc == 1) {
			*data = rec.data;
			*size = rec.size;
			return 1;
		}
		if (rc < 0) {
			tool_error("%s", rio_reader_error(s->r)->message);
			return -1;
		}
		rio_reader_close(s->r);
		s->r = NULL;
		s->cur++;
	}
}

static int tfr_rewind(pack_source *base)
{
	tfrecord_source *s = (tfrecord_source *)base;
	rio_reader_close(s->r);
	s->r = NULL;
	s->cur = 0;
	return 0;
}

static void tfr_close(pack_source *base)
{
	tfrecord_source *s = (tfrecord_source *)base;
	rio_reader_close(s->r);
	rio_shardset_free(&s->files);
	free(s);
}

int pack_tfrecord_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	tfrecord_source *s = pack_source_new(sizeof *s, tfr_next, tfr_rewind, tfr_close);
	if (!s)
		return -1;
	s->base.max_record_size = a->max_record_size;
	if (tool_expand_all(a->inputs, a->ninputs, &s->files, NULL) < 0) {
		tfr_close(&s->base);
		return -1;
	}
	s->base.once = pack_read_once(s->files.paths, s->files.count);
	*out = &s->base;
	return 0;
}

/*
 * pack_tfrecord.c — recordio-pack --from tfrecord: existing TFRecord files,
 * in any compression the reader detects, re-sharded and re-compressed with
 * their payloads copied verbatim.
 *
 * Each INPUT (a file, a glob, a comma-separated list or a shard PREFIX) is
 * expanded with tool_expand_shards() when the source opens, so a missing
 * input fails before anything is written; the files are then read one
 * after the other, every CRC verified.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <stdlib.h>
#include <string.h>

typedef struct tfrecord_source {
	pack_source base;
	char **paths;
	size_t npaths, cap;
	size_t cur;     /* the file being read */
	rio_reader *r;  /* open on paths[cur], or NULL */
} tfrecord_source;

static int tfr_next(pack_source *base, const uint8_t **data, size_t *size)
{
	tfrecord_source *s = (tfrecord_source *)base;
	for (;;) {
		if (!s->r) {
			if (s->cur == s->npaths)
				return 0;
			int rc = rio_reader_open(&s->r, s->paths[s->cur], NULL);
			if (rc < 0) {
				s->r = NULL;
				tool_error("%s: %s", s->paths[s->cur], rio_strerror(rc));
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
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s);
}

/* Moves the paths of `set` to the end of s->paths. */
static int take_paths(tfrecord_source *s, rio_shardset *set)
{
	if (s->npaths + set->count > s->cap) {
		size_t cap = s->cap ? s->cap : 16;
		while (cap < s->npaths + set->count)
			cap *= 2;
		char **p = realloc(s->paths, cap * sizeof *p);
		if (!p)
			return -1;
		s->paths = p;
		s->cap = cap;
	}
	for (size_t i = 0; i < set->count; i++) {
		s->paths[s->npaths++] = set->paths[i];
		set->paths[i] = NULL;
	}
	return 0;
}

int pack_tfrecord_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	tfrecord_source *s = calloc(1, sizeof *s);
	if (!s) {
		tool_error("out of memory");
		return -1;
	}
	s->base.total = PACK_UNKNOWN;
	s->base.next = tfr_next;
	s->base.rewind = tfr_rewind;
	s->base.close = tfr_close;
	for (int i = 0; i < a->ninputs; i++) {
		rio_shardset set;
		memset(&set, 0, sizeof set);
		if (tool_expand_shards(a->inputs[i], &set) < 0) {
			tfr_close(&s->base);
			return -1;
		}
		int rc = take_paths(s, &set);
		rio_shardset_free(&set);
		if (rc < 0) {
			tool_error("out of memory");
			tfr_close(&s->base);
			return -1;
		}
	}
	s->base.once = pack_read_once(s->paths, s->npaths);
	*out = &s->base;
	return 0;
}

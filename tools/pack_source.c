/*
 * pack_source.c — what recordio-pack's record sources share (pack.h): the
 * source constructor, the record-size check and the read-once test. Kept
 * out of pack.c so that a program without pack.c's main() (a fuzz target)
 * can link the csv and lines sources.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *pack_source_new(size_t size, int (*next)(pack_source *, const uint8_t **, size_t *),
                      int (*rewind)(pack_source *), void (*close)(pack_source *))
{
	pack_source *s = calloc(1, size);
	if (!s) {
		tool_error("out of memory");
		return NULL;
	}
	s->total = PACK_UNKNOWN;
	s->max_record_size = PACK_MAX_RECORD;
	s->next = next;
	s->rewind = rewind;
	s->close = close;
	return s;
}

int pack_record_fits(const pack_source *s, size_t size, const char *fmt, ...)
{
	if (size <= s->max_record_size)
		return 1;
	char where[PATH_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(where, sizeof where, fmt, ap);
	va_end(ap);
	tool_error("%s: a record of %zu bytes, over --max-record-size (%llu bytes)", where, size,
	           (unsigned long long)s->max_record_size);
	return 0;
}

const char *pack_read_once(char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tool_is_stream(paths[i]))
			return tool_input_name(paths[i]);
	return NULL;
}

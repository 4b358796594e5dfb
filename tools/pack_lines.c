/*
 * pack_lines.c — recordio-pack --from lines: one raw record per line of
 * each FILE, the payload being the line without its "\n" (a "\r" before it
 * is kept: the bytes are the user's). A last line without a newline is a
 * record too. Every file is opened once up front so that a missing one
 * fails before anything is written; getline() reuses one buffer.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef struct lines_source {
	pack_source base;
	char **files;
	int nfiles;
	int cur;
	FILE *f;
	char *line;
	size_t cap;
	uint64_t lineno;
} lines_source;

static FILE *open_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		tool_error("%s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static int lines_next(pack_source *base, const uint8_t **data, size_t *size)
{
	lines_source *s = (lines_source *)base;
	for (;;) {
		if (!s->f) {
			if (s->cur == s->nfiles)
				return 0;
			if (!(s->f = open_file(s->files[s->cur])))
				return -1;
			s->lineno = 0;
		}
		errno = 0;
		ssize_t n = getline(&s->line, &s->cap, s->f);
		if (n >= 0) {
			s->lineno++;
			if (n > 0 && s->line[n - 1] == '\n')
				n--;
			if (!pack_record_fits((size_t)n, "%s: line %llu", s->files[s->cur],
			                      (unsigned long long)s->lineno))
				return -1;
			*data = (const uint8_t *)s->line;
			*size = (size_t)n;
			return 1;
		}
		if (ferror(s->f)) {
			tool_error("%s: line %llu: %s", s->files[s->cur],
			           (unsigned long long)s->lineno + 1, strerror(errno ? errno : EIO));
			return -1;
		}
		fclose(s->f);
		s->f = NULL;
		s->cur++;
	}
}

static int lines_rewind(pack_source *base)
{
	lines_source *s = (lines_source *)base;
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	s->cur = 0;
	return 0;
}

static void lines_close(pack_source *base)
{
	lines_source *s = (lines_source *)base;
	if (s->f)
		fclose(s->f);
	free(s->line);
	free(s);
}

int pack_lines_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	for (int i = 0; i < a->ninputs; i++) {
		FILE *f = open_file(a->inputs[i]);
		if (!f)
			return -1;
		fclose(f);
	}
	lines_source *s = pack_source_new(sizeof *s, lines_next, lines_rewind, lines_close);
	if (!s)
		return -1;
	s->files = a->inputs;
	s->nfiles = a->ninputs;
	s->base.once = pack_read_once(a->inputs, (size_t)a->ninputs);
	*out = &s->base;
	return 0;
}

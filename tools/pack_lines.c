/*
 * pack_lines.c — recordio-pack --from lines: one raw record per line of
 * each FILE, the payload being the line without its "\n" (a "\r" before it
 * is kept: the bytes are the user's). A last line without a newline is a
 * record too. "-" is standard input.
 *
 * Lines are found with read() into one buffer and memchr(), never with
 * getline(): a line is handed out as a view into the buffer, and the buffer
 * grows only while one line does not fit, to at most --max-record-size + 1
 * bytes. So memory stays bounded by the limit whatever the input (a line
 * of /dev/zero fails as soon as it is longer than the limit), and a failed
 * allocation is an error naming the line, never taken for the end of the
 * input. Every file is opened once up front so that a missing one fails
 * before anything is written.
 */
#include "config.h"
#include "common.h"
#include "grow.h"
#include "pack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer's first size: one read of this many bytes at a time. */
#define LINES_READ_SIZE ((size_t)1 << 20)

typedef struct lines_source {
	pack_source base;
	char **files;      /* NULL for a source over a caller's fd */
	int nfiles;
	int cur;           /* the file being read */
	int fd;            /* open on files[cur] (or the caller's), or -1 */
	int own_fd;        /* close fd when its input ends */
	const char *name;  /* of the input being read, for errors */
	uint8_t *buf;
	size_t cap;
	size_t pos, end;   /* unconsumed bytes: buf[pos, end) */
	size_t scanned;    /* buf[pos, pos + scanned) holds no newline */
	int eof;           /* the input has no more bytes */
	uint64_t lineno;   /* of the last line handed out */
} lines_source;

static int open_input(const char *path)
{
	if (tool_is_stdin(path))
		return STDIN_FILENO;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		tool_error("%s: %s", path, strerror(errno));
	return fd;
}

/* Starts reading input s->cur from its first line. */
static int start_input(lines_source *s)
{
	if (s->files) {
		if ((s->fd = open_input(s->files[s->cur])) < 0)
			return -1;
		s->own_fd = s->fd != STDIN_FILENO;
		s->name = tool_input_name(s->files[s->cur]);
	}
	s->pos = s->end = s->scanned = 0;
	s->eof = 0;
	s->lineno = 0;
	return 0;
}

static void end_input(lines_source *s)
{
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->own_fd = 0;
}

/* Reads more bytes after buf[end]: first moving the unconsumed ones to the
 * front, then growing the buffer when one line fills it. 0, or -1 after
 * reporting. */
static int fill(lines_source *s)
{
	size_t have = s->end - s->pos;
	if (s->pos) {
		memmove(s->buf, s->buf + s->pos, have);
		s->pos = 0;
		s->end = have;
	}
	if (s->end == s->cap) {
		/* the line so far fills the buffer; it is at most the limit
		 * (the caller checked), and one more byte tells it is longer */
		size_t most = (size_t)s->base.max_record_size + 1;
		size_t cap = rio__grow_cap(s->cap, s->cap + 1, LINES_READ_SIZE);
		if (s->cap && cap > most)
			cap = most; /* more than s->cap: the line is at most the limit */
		if (rio__resize(&s->buf, cap, 1)) {
			tool_error("%s:%llu: out of memory for a line of more than %zu bytes", s->name,
			           (unsigned long long)s->lineno + 1, have);
			return -1;
		}
		s->cap = cap;
	}
	for (;;) {
		ssize_t n = read(s->fd, s->buf + s->end, s->cap - s->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_error("%s:%llu: %s", s->name, (unsigned long long)s->lineno + 1,
			           strerror(errno));
			return -1;
		}
		if (n == 0)
			s->eof = 1;
		s->end += (size_t)n;
		return 0;
	}
}

static int lines_next(pack_source *base, const uint8_t **data, size_t *size)
{
	lines_source *s = (lines_source *)base;
	for (;;) {
		if (s->fd < 0) {
			if (!s->files || s->cur == s->nfiles)
				return 0;
			if (start_input(s) < 0)
				return -1;
		}
		/* (no buffer yet before the first read: no pointer into it) */
		size_t avail = s->end - s->pos;
		uint8_t *line = avail ? s->buf + s->pos : NULL;
		uint8_t *nl = s->scanned < avail
		                  ? memchr(line + s->scanned, '\n', avail - s->scanned)
		                  : NULL;
		size_t len = nl ? (size_t)(nl - line) : avail;
		if (len > s->base.max_record_size) {
			tool_error("%s:%llu: line longer than --max-record-size (%llu bytes)", s->name,
			           (unsigned long long)s->lineno + 1,
			           (unsigned long long)s->base.max_record_size);
			return -1;
		}
		if (nl || (s->eof && len)) {
			/* a line, or the last one without a newline */
			s->pos += len + (nl != NULL);
			s->scanned = 0;
			s->lineno++;
			*data = line;
			*size = len;
			return 1;
		}
		if (s->eof) {
			end_input(s);
			if (!s->files)
				return 0;
			s->cur++;
			continue;
		}
		s->scanned = len;
		if (fill(s) < 0)
			return -1;
	}
}

static int lines_rewind(pack_source *base)
{
	lines_source *s = (lines_source *)base;
	end_input(s);
	s->cur = 0;
	return 0;
}

static void lines_close(pack_source *base)
{
	lines_source *s = (lines_source *)base;
	end_input(s);
	free(s->buf);
	free(s);
}

static lines_source *lines_new(uint64_t max_record_size)
{
	lines_source *s = pack_source_new(sizeof *s, lines_next, lines_rewind, lines_close);
	if (s) {
		s->fd = -1;
		s->base.max_record_size = max_record_size;
	}
	return s;
}

int pack_lines_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	for (int i = 0; i < a->ninputs; i++) {
		if (tool_is_stdin(a->inputs[i]))
			continue;
		int fd = open_input(a->inputs[i]);
		if (fd < 0)
			return -1;
		close(fd);
	}
	lines_source *s = lines_new(a->max_record_size);
	if (!s)
		return -1;
	s->files = a->inputs;
	s->nfiles = a->ninputs;
	s->base.once = pack_read_once(a->inputs, (size_t)a->ninputs);
	*out = &s->base;
	return 0;
}

int pack_lines_open_fd(pack_source **out, int fd, const char *name, uint64_t max_record_size)
{
	*out = NULL;
	lines_source *s = lines_new(max_record_size);
	if (!s)
		return -1;
	s->fd = fd;
	s->name = name;
	s->base.once = name; /* read to its end once: never counted, never rewound */
	*out = &s->base;
	return 0;
}

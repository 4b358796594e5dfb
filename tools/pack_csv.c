/*
 * pack_csv.c — recordio-pack --from csv: one tf.train.Example per row of a
 * CSV file with a header row.
 *
 * Parsing follows RFC 4180 as spreadsheets write it: fields separated by
 * ",", a field in double quotes may hold commas, newlines and "" (one
 * quote); rows end in LF or CRLF; a UTF-8 byte-order mark and blank lines
 * are skipped. Leniently, text after a closing quote is kept as part of the
 * field.
 *
 * The file is read twice. The first pass (when the source opens) checks
 * every row has as many fields as the header, that every label is an
 * integer, and decides each column's type: a column whose non-empty values
 * all read as numbers (decimal, or nan, inf and infinity with an optional
 * sign, in any case, as strtod reads them) becomes a float feature (an
 * empty cell gives NaN), any other a bytes feature; the label column
 * (--label) is an int64. The NaN and infinite values written are counted
 * per column, for the summary (pack_source.summary).
 * So any error is reported, as FILE:LINE, before a record is written, and
 * the record count is known. The second pass builds the Examples, features
 * in header order.
 *
 * A field, or a row's fields together, longer than --max-record-size is an
 * error naming the row's line, found as the row is read: the row buffer
 * never grows past about twice the limit, and an allocation that fails is
 * an error naming the line, never the end of the file.
 */
#include "config.h"
#include "common.h"
#include "grow.h"
#include "pack.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <unistd.h>

/* ---- the CSV reader ------------------------------------------------------ */

typedef struct csv_reader {
	FILE *f;
	const char *path;  /* the name errors give the file */
	uint64_t limit;    /* --max-record-size: of a field and of a row */
	uint64_t line;     /* line of the next character, from 1      */
	uint64_t rec_line; /* line where the current row starts       */
	char *buf;         /* the row's fields, each NUL-terminated   */
	size_t len, cap;
	size_t *start;     /* field i is buf + start[i], flen[i] bytes */
	size_t *flen;
	size_t nf, fcap;
} csv_reader;

/* The current field (field nf, from buf + start[nf] to buf + len) or the
 * row so far (its fields without their NULs) over the limit: 1 after
 * reporting it, else 0. */
static int too_long(csv_reader *r)
{
	if (r->len - r->start[r->nf] > r->limit) {
		tool_error("%s:%llu: field %zu longer than --max-record-size (%llu bytes)", r->path,
		           (unsigned long long)r->rec_line, r->nf + 1, (unsigned long long)r->limit);
		return 1;
	}
	if (r->len - r->nf > r->limit) {
		tool_error("%s:%llu: row longer than --max-record-size (%llu bytes)", r->path,
		           (unsigned long long)r->rec_line, (unsigned long long)r->limit);
		return 1;
	}
	return 0;
}

static void out_of_memory(csv_reader *r)
{
	tool_error("%s:%llu: out of memory (a row of %zu bytes so far)", r->path,
	           (unsigned long long)r->rec_line, r->len);
}

/* Appends a byte to the current field: 0, or -1 after reporting. Only a
 * full buffer is checked against the limit (end_field() checks each field
 * exactly), which keeps the buffer under about twice the limit. */
static int put(csv_reader *r, int c)
{
	if (r->len == r->cap) {
		if (r->cap && too_long(r))
			return -1;
		if (rio__grow(&r->buf, &r->cap, r->len + 1, 1, 4096)) {
			out_of_memory(r);
			return -1;
		}
	}
	r->buf[r->len++] = (char)c;
	return 0;
}

/* Makes room for field nf and the start of the one after it: 0, or -1
 * after reporting. */
static int reserve_fields(csv_reader *r)
{
	if (r->nf + 1 < r->fcap)
		return 0;
	size_t cap = rio__grow_cap(r->fcap, r->nf + 2, 64);
	if (rio__resize(&r->start, cap, sizeof *r->start) ||
	    rio__resize(&r->flen, cap, sizeof *r->flen)) {
		out_of_memory(r);
		return -1;
	}
	r->fcap = cap;
	return 0;
}

/* Ends the current field (which started at buf + start[nf]): 0, or -1
 * after reporting. */
static int end_field(csv_reader *r)
{
	if (too_long(r) || reserve_fields(r) < 0)
		return -1;
	r->flen[r->nf] = r->len - r->start[r->nf];
	if (put(r, '\0') < 0)
		return -1;
	r->nf++;
	r->start[r->nf] = r->len;
	return 0;
}

/* To the start of the file, past a UTF-8 byte-order mark. A file that
 * cannot seek (a pipe) fails here, before the first pass reads it. */
static int csv_rewind(csv_reader *r)
{
	FILE *f = r->f;
	if (fseek(f, 0, SEEK_SET) < 0) {
		tool_error("%s: cannot rewind: %s (the csv mode reads its file twice)", r->path,
		           strerror(errno));
		return -1;
	}
	r->line = 1;
	unsigned char bom[3];
	if (fread(bom, 1, 3, f) != 3 || bom[0] != 0xef || bom[1] != 0xbb || bom[2] != 0xbf)
		rewind(f);
	return 0;
}

/* Reads `f` (closed by csv_close()), named `path` in errors. */
static int csv_open(csv_reader *r, FILE *f, const char *path, uint64_t limit)
{
	memset(r, 0, sizeof *r);
	r->path = path;
	r->limit = limit;
	r->f = f;
	setvbuf(r->f, NULL, _IOFBF, 1 << 20);
	return csv_rewind(r);
}

static void csv_close(csv_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	free(r->start);
	free(r->flen);
}

/* Reads the next non-blank row into r's fields: 1, 0 at the end of the
 * file, -1 after reporting (an unterminated quote, a read error). */
static int csv_next(csv_reader *r)
{
	FILE *f = r->f;
	int c;
	if (!r->start && reserve_fields(r) < 0) /* the first row: allocate the arrays */
		return -1;
next_row:
	r->len = 0;
	r->nf = 0;
	r->start[0] = 0;
	r->rec_line = r->line;
	size_t raw = 0; /* characters in the row, for blank-line detection */
	int cr = 0;     /* the row so far ends in an unquoted '\r'          */
	for (;;) {
		c = getc_unlocked(f);
		if (c == '"') {
			raw++;
			for (;;) {
				c = getc_unlocked(f);
				if (c == EOF) {
					if (ferror(f))
						goto ioerr;
					tool_error("%s:%llu: unterminated quoted field", r->path,
					           (unsigned long long)r->rec_line);
					return -1;
				}
				if (c == '"') {
					c = getc_unlocked(f);
					if (c != '"')
						break;
				} else if (c == '\n') {
					r->line++;
				}
				if (put(r, c) < 0)
					return -1;
				cr = 0;
			}
		}
		/* unquoted text, or what follows a closing quote */
		while (c != ',' && c != '\n' && c != EOF) {
			raw++;
			if (put(r, c) < 0)
				return -1;
			cr = c == '\r';
			c = getc_unlocked(f);
		}
		if (c == EOF && ferror(f))
			goto ioerr;
		if (c == ',') {
			raw++;
			cr = 0;
			if (end_field(r) < 0)
				return -1;
			continue;
		}
		/* end of the row: a '\r' before the '\n' is the CRLF's */
		if (c == '\n') {
			r->line++;
			if (cr) {
				r->len--;
				raw--;
			}
		}
		if (raw == 0) {
			if (c == EOF)
				return 0;
			goto next_row; /* a blank line */
		}
		if (end_field(r) < 0)
			return -1;
		return 1;
	}
ioerr:
	tool_error("%s:%llu: %s", r->path, (unsigned long long)r->line, strerror(errno ? errno : EIO));
	return -1;
}

/* ---- values ------------------------------------------------------------ */

static const char *trim(const char *s, size_t *len)
{
	while (*len && (*s == ' ' || *s == '\t')) {
		s++;
		(*len)--;
	}
	while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
		(*len)--;
	return s;
}

/* A number: [+-] (digits [. digits] | . digits) [e [+-] digits], or
 * [+-] (nan | inf | infinity) in any case. */
static int is_number(const char *s, size_t len)
{
	s = trim(s, &len);
	const char *p = s, *end = s + len;
	int digits = 0;
	if (p < end && (*p == '+' || *p == '-'))
		p++;
	size_t word = (size_t)(end - p);
	if ((word == 3 && (!strncasecmp(p, "nan", 3) || !strncasecmp(p, "inf", 3))) ||
	    (word == 8 && !strncasecmp(p, "infinity", 8)))
		return 1;
	while (p < end && *p >= '0' && *p <= '9')
		p++, digits++;
	if (p < end && *p == '.') {
		p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits)
		return 0;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p == end || *p < '0' || *p > '9')
			return 0;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p == end;
}

/* An int64: [+-] digits, in range. */
static int parse_int64(const char *s, size_t len, int64_t *out)
{
	s = trim(s, &len);
	char tmp[32];
	if (len == 0 || len >= sizeof tmp)
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	const char *p = tmp + (tmp[0] == '+' || tmp[0] == '-');
	if (!*p)
		return -1;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	char *end;
	errno = 0;
	long long v = strtoll(tmp, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* ---- the source ------------------------------------------------------- */

enum { COL_BYTES, COL_FLOAT, COL_LABEL };

/* What a float column holds besides finite numbers, as written. */
typedef struct col_specials {
	uint64_t nan, inf, neg_inf, empty; /* empty: NaN too */
	uint64_t overflow; /* decimals beyond float's range: written as +-inf */
} col_specials;

typedef struct csv_source {
	pack_source base;
	csv_reader r;
	size_t ncols;
	char **names; /* header names, NUL-terminated */
	int *type;    /* COL_* per column */
	col_specials *specials; /* per column */
	rio_example_builder b;
} csv_source;

/* The label of the current row, or -1 after reporting. */
static int row_label(csv_source *s, size_t col, int64_t *label)
{
	const char *v = s->r.buf + s->r.start[col];
	if (parse_int64(v, s->r.flen[col], label) < 0) {
		tool_error("%s:%llu: label '%.*s' in column '%s' is not an integer", s->r.path,
		           (unsigned long long)s->r.rec_line, (int)(s->r.flen[col] > 64 ? 64 : s->r.flen[col]),
		           v, s->names[col]);
		return -1;
	}
	return 0;
}

/* Reads the header; finds the label column. */
static int read_header(csv_source *s, const char *label_column)
{
	int rc = csv_next(&s->r);
	if (rc <= 0) {
		if (rc == 0)
			tool_error("%s: empty file (expected a header row)", s->r.path);
		return -1;
	}
	s->ncols = s->r.nf;
	s->names = calloc(s->ncols, sizeof *s->names);
	s->type = calloc(s->ncols, sizeof *s->type);
	s->specials = calloc(s->ncols, sizeof *s->specials);
	if (!s->names || !s->type || !s->specials) {
		tool_error("out of memory");
		return -1;
	}
	int found = 0;
	for (size_t i = 0; i < s->ncols; i++) {
		size_t len = s->r.flen[i];
		const char *name = trim(s->r.buf + s->r.start[i], &len);
		if (len == 0 || memchr(name, '\0', len)) {
			tool_error("%s:%llu: column %zu has no name", s->r.path,
			           (unsigned long long)s->r.rec_line, i + 1);
			return -1;
		}
		if (!(s->names[i] = strndup(name, len))) {
			tool_error("out of memory");
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(s->names[j], s->names[i])) {
				tool_error("%s:%llu: column name '%s' appears twice", s->r.path,
				           (unsigned long long)s->r.rec_line, s->names[i]);
				return -1;
			}
		}
		if (label_column && !strcmp(s->names[i], label_column)) {
			s->type[i] = COL_LABEL;
			found = 1;
		} else {
			s->type[i] = COL_FLOAT; /* until a value says otherwise */
		}
	}
	if (label_column && !found) {
		tool_error("%s:%llu: no column '%s' in the header (for --label)", s->r.path,
		           (unsigned long long)s->r.rec_line, label_column);
		return -1;
	}
	return 0;
}

/* The first pass: checks rows and labels, infers types, counts. */
static int survey(csv_source *s)
{
	uint8_t *seen = calloc(s->ncols, 1); /* a non-empty value was seen */
	if (!seen) {
		tool_error("out of memory");
		return -1;
	}
	uint64_t rows = 0;
	int rc;
	while ((rc = csv_next(&s->r)) == 1) {
		if (tool_interrupted) {
			rc = -1;
			break;
		}
		if (s->r.nf != s->ncols) {
			tool_error("%s:%llu: expected %zu fields as in the header, found %zu", s->r.path,
			           (unsigned long long)s->r.rec_line, s->ncols, s->r.nf);
			rc = -1;
			break;
		}
		for (size_t i = 0; i < s->ncols; i++) {
			int64_t label;
			size_t len = s->r.flen[i];
			const char *v = s->r.buf + s->r.start[i];
			if (s->type[i] == COL_LABEL) {
				if (row_label(s, i, &label) < 0) {
					rc = -1;
					break;
				}
				continue;
			}
			trim(v, &len);
			if (len == 0)
				continue;
			seen[i] = 1;
			if (s->type[i] == COL_FLOAT && !is_number(v, s->r.flen[i]))
				s->type[i] = COL_BYTES;
		}
		if (rc < 0)
			break;
		rows++;
	}
	for (size_t i = 0; i < s->ncols; i++)
		if (s->type[i] == COL_FLOAT && !seen[i])
			s->type[i] = COL_BYTES; /* an empty column: no evidence of numbers */
	free(seen);
	if (rc < 0)
		return -1;
	s->base.total = rows;
	return 0;
}

static int csv_src_next(pack_source *base, const uint8_t **data, size_t *size)
{
	csv_source *s = (csv_source *)base;
	int rc = csv_next(&s->r);
	if (rc <= 0)
		return rc;
	if (s->r.nf != s->ncols) { /* the file changed since the first pass */
		tool_error("%s:%llu: expected %zu fields as in the header, found %zu", s->r.path,
		           (unsigned long long)s->r.rec_line, s->ncols, s->r.nf);
		return -1;
	}
	rio_example_builder_reset(&s->b);
	for (size_t i = 0; i < s->ncols; i++) {
		const char *v = s->r.buf + s->r.start[i];
		size_t len = s->r.flen[i];
		if (s->type[i] == COL_LABEL) {
			int64_t label;
			if (row_label(s, i, &label) < 0)
				return -1;
			rio_example_add_int64s(&s->b, s->names[i], &label, 1);
		} else if (s->type[i] == COL_FLOAT) {
			size_t tlen = len;
			float x = NAN;
			const char *t = trim(v, &tlen);
			if (tlen)
				x = strtof(v, NULL);
			col_specials *sp = &s->specials[i];
			char c0 = tlen ? t[t[0] == '+' || t[0] == '-'] : 0; /* NUL-terminated */
			int word = c0 == 'n' || c0 == 'N' || c0 == 'i' || c0 == 'I'; /* nan, inf */
			if (!tlen)
				sp->empty++;
			else if (isnan(x))
				sp->nan++;
			else if (isinf(x) && !word)
				sp->overflow++;
			else if (isinf(x))
				*(x > 0 ? &sp->inf : &sp->neg_inf) += 1;
			rio_example_add_floats(&s->b, s->names[i], &x, 1);
		} else {
			rio_example_add_bytes(&s->b, s->names[i], v, len);
		}
	}
	if (rio_example_finish(&s->b, data, size) < 0) {
		tool_error("out of memory");
		return -1;
	}
	if (!pack_record_fits(&s->base, *size, "%s:%llu", s->r.path, (unsigned long long)s->r.rec_line))
		return -1;
	return 1;
}

/* One line per float column that holds NaN or infinities, e.g.
 * "column 'x': float, 3 nan, 1 inf, 2 empty (NaN)". */
static void csv_src_summary(const pack_source *base, FILE *out)
{
	const csv_source *s = (const csv_source *)base;
	for (size_t i = 0; i < s->ncols; i++) {
		const col_specials *sp = &s->specials[i];
		if (s->type[i] != COL_FLOAT ||
		    !(sp->nan | sp->inf | sp->neg_inf | sp->empty | sp->overflow))
			continue;
		fprintf(out, "column '%s': float", s->names[i]);
		if (sp->nan)
			fprintf(out, ", %llu nan", (unsigned long long)sp->nan);
		if (sp->inf)
			fprintf(out, ", %llu inf", (unsigned long long)sp->inf);
		if (sp->neg_inf)
			fprintf(out, ", %llu -inf", (unsigned long long)sp->neg_inf);
		if (sp->empty)
			fprintf(out, ", %llu empty (NaN)", (unsigned long long)sp->empty);
		if (sp->overflow)
			fprintf(out, ", %llu beyond float range (+-inf)", (unsigned long long)sp->overflow);
		fputc('\n', out);
	}
}

/* Back to the first row after the header (after the first pass). */
static int csv_src_rewind(csv_source *s)
{
	if (csv_rewind(&s->r) < 0)
		return -1;
	return csv_next(&s->r) == 1 ? 0 : -1;
}

static void csv_src_close(pack_source *base)
{
	csv_source *s = (csv_source *)base;
	csv_close(&s->r);
	for (size_t i = 0; s->names && i < s->ncols; i++)
		free(s->names[i]);
	free(s->names);
	free(s->type);
	free(s->specials);
	rio_example_builder_free(&s->b);
	free(s);
}

/* The source over `f` (which it closes, also on failure). */
static int open_stream(pack_source **out, FILE *f, const char *name, const char *label_column,
                       uint64_t max_record_size)
{
	*out = NULL;
	csv_source *s = pack_source_new(sizeof *s, csv_src_next, NULL, csv_src_close);
	if (!s) {
		fclose(f);
		return -1;
	}
	s->base.max_record_size = max_record_size;
	s->base.summary = csv_src_summary;
	rio_example_builder_init(&s->b);
	if (csv_open(&s->r, f, name, max_record_size) < 0 || read_header(s, label_column) < 0 ||
	    survey(s) < 0 || csv_src_rewind(s) < 0) {
		csv_src_close(&s->base);
		return -1;
	}
	*out = &s->base;
	return 0;
}

int pack_csv_open_fd(pack_source **out, int fd, const char *name, const char *label_column,
                     uint64_t max_record_size)
{
	*out = NULL;
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	FILE *f = own < 0 ? NULL : fdopen(own, "rb");
	if (!f) {
		tool_error("%s: %s", name, strerror(errno));
		if (own >= 0)
			close(own);
		return -1;
	}
	return open_stream(out, f, name, label_column, max_record_size);
}

int pack_csv_open(pack_source **out, const pack_args *a)
{
	const char *path = a->inputs[0];
	if (tool_is_stdin(path))
		return pack_csv_open_fd(out, STDIN_FILENO, tool_input_name(path), a->label_column,
		                        a->max_record_size);
	*out = NULL;
	FILE *f = fopen(path, "rbe");
	if (!f) {
		tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	return open_stream(out, f, path, a->label_column, a->max_record_size);
}

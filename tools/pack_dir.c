/*
 * pack_dir.c — recordio-pack --from dir: the ImageNet folder layout
 * DIR/CLASS/FILE, one tf.train.Example per regular file:
 *   data  (bytes)  the file's content
 *   label (int64)  the index of CLASS among DIR's sub-directories, sorted
 *   name  (bytes)  "CLASS/FILE"
 * Classes and files are in byte order (strcmp), so labels do not depend on
 * the locale; an empty class still takes its label. Names starting with
 * "." and files directly in DIR are skipped; symbolic links are followed.
 * The whole tree is listed when the source opens (so the count is known);
 * the names live in one string buffer and each file is read into one
 * reused buffer.
 */
#include "config.h"
#include "common.h"
#include "grow.h"
#include "pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct dir_source {
	pack_source base;
	const char *root;
	char *names; /* "CLASS/FILE\0" one after the other */
	size_t names_len, names_cap;
	size_t *name_at; /* per file: its offset in names */
	int64_t *label;  /* per file */
	uint64_t n, next_i;
	size_t cap;
	uint8_t *buf;    /* the current file's content */
	size_t buf_cap;
	rio_example_builder b;
} dir_source;

static int visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int add_file(dir_source *s, const char *cls, const char *file, int64_t label)
{
	size_t len = strlen(cls) + 1 + strlen(file) + 1;
	if (rio__grow(&s->names, &s->names_cap, s->names_len + len, 1, 1 << 16))
		return -1;
	if (s->n == s->cap) {
		size_t cap = rio__grow_cap(s->cap, (size_t)s->n + 1, 1024);
		if (rio__resize(&s->name_at, cap, sizeof *s->name_at) ||
		    rio__resize(&s->label, cap, sizeof *s->label))
			return -1;
		s->cap = cap;
	}
	s->name_at[s->n] = s->names_len;
	s->label[s->n] = label;
	s->n++;
	s->names_len += (size_t)sprintf(s->names + s->names_len, "%s/%s", cls, file) + 1;
	return 0;
}

/* "a/b" into buf[PATH_MAX]; -1 after reporting a name too long. */
static int join(char *buf, const char *a, const char *b)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", a, b);
	if (n < 0 || n >= PATH_MAX) {
		tool_error("%s/%s: %s", a, b, strerror(ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* Lists DIR/CLASS/FILE into the source. */
static int scan(dir_source *s)
{
	struct dirent **classes = NULL;
	int nc = scandir(s->root, &classes, visible, alphasort);
	if (nc < 0) {
		tool_error("%s: %s", s->root, strerror(errno));
		return -1;
	}
	int rc = 0;
	int64_t label = 0;
	for (int c = 0; c < nc; c++) {
		char path[PATH_MAX];
		struct stat st;
		const char *cls = classes[c]->d_name;
		if (rc)
			continue;
		if (tool_interrupted || join(path, s->root, cls) < 0) {
			rc = -1;
			continue;
		}
		if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		struct dirent **files = NULL;
		int nf = scandir(path, &files, visible, alphasort);
		if (nf < 0) {
			tool_error("%s: %s", path, strerror(errno));
			rc = -1;
			continue;
		}
		for (int f = 0; f < nf; f++) {
			char fpath[PATH_MAX];
			if (!rc && join(fpath, path, files[f]->d_name) < 0)
				rc = -1;
			if (!rc && stat(fpath, &st) == 0 && S_ISREG(st.st_mode) &&
			    add_file(s, cls, files[f]->d_name, label) < 0) {
				tool_error("out of memory");
				rc = -1;
			}
			free(files[f]);
		}
		free(files);
		label++;
	}
	for (int c = 0; c < nc; c++)
		free(classes[c]);
	free(classes);
	if (rc == 0 && label == 0) {
		tool_error("%s: no class sub-directories (expected DIR/CLASS/FILE)", s->root);
		rc = -1;
	} else if (rc == 0 && s->n == 0) {
		tool_error("%s: no files in its %lld class sub-directories", s->root, (long long)label);
		rc = -1;
	}
	return rc;
}

/* Reads the whole file at `path` into s->buf; its size in *size. */
static int read_file(dir_source *s, const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* a file over the limit fails before it is read, and one that grows
	 * meanwhile as soon as it passes the limit */
	uint64_t limit = s->base.max_record_size;
	if ((uint64_t)st.st_size > limit) {
		tool_error("%s: a file of %llu bytes, over --max-record-size (%llu bytes)", path,
		           (unsigned long long)st.st_size, (unsigned long long)limit);
		close(fd);
		return -1;
	}
	size_t len = 0, want = (size_t)st.st_size + 1; /* +1: see the end in one read */
	for (;;) {
		if (len > limit) {
			tool_error("%s: over --max-record-size (%llu bytes) as it is read", path,
			           (unsigned long long)limit);
			close(fd);
			return -1;
		}
		if (rio__grow(&s->buf, &s->buf_cap, want > len + 1 ? want : len + 1, 1, 1 << 16)) {
			tool_error("%s: out of memory", path);
			close(fd);
			return -1;
		}
		ssize_t n = read(fd, s->buf + len, s->buf_cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_error("%s: offset %zu: %s", path, len, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		want = len + 1;
	}
	close(fd);
	*size = len;
	return 0;
}

static int dir_next(pack_source *base, const uint8_t **data, size_t *size)
{
	dir_source *s = (dir_source *)base;
	if (s->next_i == s->n)
		return 0;
	const char *name = s->names + s->name_at[s->next_i];
	char path[PATH_MAX];
	size_t len;
	if (join(path, s->root, name) < 0 || read_file(s, path, &len) < 0)
		return -1;
	rio_example_builder_reset(&s->b);
	rio_example_add_bytes(&s->b, "data", s->buf, len);
	rio_example_add_int64s(&s->b, "label", &s->label[s->next_i], 1);
	rio_example_add_bytes(&s->b, "name", name, strlen(name));
	if (rio_example_finish(&s->b, data, size) < 0) {
		tool_error("out of memory");
		return -1;
	}
	if (!pack_record_fits(&s->base, *size, "%s", path))
		return -1;
	s->next_i++;
	return 1;
}

static void dir_close(pack_source *base)
{
	dir_source *s = (dir_source *)base;
	free(s->names);
	free(s->name_at);
	free(s->label);
	free(s->buf);
	rio_example_builder_free(&s->b);
	free(s);
}

int pack_dir_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	dir_source *s = pack_source_new(sizeof *s, dir_next, NULL, dir_close);
	if (!s)
		return -1;
	s->root = a->inputs[0];
	s->base.max_record_size = a->max_record_size;
	rio_example_builder_init(&s->b);
	if (scan(s) < 0) {
		dir_close(&s->base);
		return -1;
	}
	s->base.total = s->n;
	*out = &s->base;
	return 0;
}

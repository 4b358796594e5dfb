/*
 * shardset.c — shard names, and from a user's shard specification to the
 * ordered list of files.
 *
 * A shard is named PREFIX-SSSSS-of-NNNNN[.suffix]: shard SSSSS of a set of
 * NNNNN, both zero-padded so that name order is shard order.
 *
 * A specification is one item, or a comma-separated list of items (when the
 * whole string is not itself an existing file or directory): the items'
 * files are concatenated in the given order, empty items ("a,,b", a
 * trailing comma) are skipped. Each item is, tried in this order:
 *
 *   - an existing file (anything but a directory): that file alone, even
 *     when its name holds glob characters;
 *   - a directory: its regular files (symbolic links followed), sorted by
 *     strcmp, without subdirectories, index sidecars ("*.idx"), commit
 *     journals ("*.commit") and hidden names (the writer's temporaries and
 *     recordio-pack's staging files); TFX writes a split as a directory of
 *     data_tfrecord-SSSSS-of-NNNNN.gz. None left is RIO_ENOSHARDS naming
 *     the directory. "DIR/" is always the directory; "DIR" that is also the
 *     PREFIX of shards beside it ("DIR-00000-of-00001.tfrecord") is
 *     ambiguous, -EINVAL: which one was meant cannot be guessed;
 *   - a glob (it holds '*', '?' or '['): glob(3), sorted by strcmp (not by
 *     the locale), regular files only, without index sidecars ("*.idx") and
 *     hidden files (basename starting with '.': the writer's temporaries
 *     are ".NAME.XXXXXX.tmp") and commit journals; no file left is
 *     RIO_ENOSHARDS;
 *   - a PREFIX: the directory entries PREFIX-<digits>-of-<digits> followed
 *     by one of "", ".tfrecord", ".tfrecords" and then one of "", ".gz",
 *     ".zz", ".lz4" (so no .idx and no temporaries), regular files only,
 *     sorted by shard index. Finding none is RIO_ENOSHARDS for a lone item,
 *     and for an item of a list -ENOENT naming it (-EISDIR for a directory):
 *     a list is expected to name files. Accepting prefixes in a list
 *     ("data/train,data/extra") extends the header's contract; it can only
 *     turn an error into a result.
 *
 * Consistency. The files of the result whose basenames parse as shard names
 * are grouped by everything before "-SSSSS-of-NNNNN" (directory included,
 * as spelled). A group whose PREFIX.commit journal exists is being
 * replaced by recordio-pack, or was when it was interrupted: it may hold
 * old and new shards under names that agree, so it is RIO_EINCOMPLETESET
 * however its files were named (so is a lone PREFIX with no shards yet but
 * a journal). Every group must agree on NNNNN (else RIO_EBADSHARDNAME
 * naming two files that disagree) and hold each index once (a .tfrecord and
 * a .tfrecord.gz of the same shard: RIO_EBADSHARDNAME naming both).
 * Completeness: a shard of a group that is not in the result is
 * RIO_EMISSINGSHARD, naming the file that should be there (spelled like
 * its siblings: same prefix, digit widths and suffix), when an item that
 * listed some of the group would have listed it too: a PREFIX or a
 * directory lists every shard of its set, a glob those whose names it
 * matches. So "d/t-*" with shard 3 absent is refused (no silent loss),
 * while "d/t-0000[0-2]-of-00004" reads shards 0 to 2: the shards a pattern
 * leaves out are the user's choice, as are those of files named one by one
 * (a list is the other way to pick a subset for a quick run). Past
 * ABSENT_CHECK_MAX absent shards a glob cannot be checked name by name and
 * is refused. Files that are not shard names are taken as given. Groups are
 * checked over the whole result, not item by item:
 * "d/t-0000*-of-00020,d/t-0001*-of-00020" is one complete set.
 *
 * URLs. An item that is an s3:// or http(s):// URL is expanded by
 * remote/shardset_url.c by the same rules, ListObjectsV2 standing in for
 * the directory: an object, a "directory" (s3://B/PATH/), a glob of keys,
 * a PREFIX, or the set a manifest (PREFIX.manifest, recordio-pack's S3
 * sets) names; http(s):// URLs are single files. Journals are local only
 * (S3 sets commit by their manifest). Set manifests are never shards.
 *
 * Nothing here keeps state; every function is safe to call from any thread.
 */
#include "config.h"
#include "internal.h"
#include "grow.h"
#include "remote/remote.h"
#include "remote/url.h"
#include "shardset.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define UNK RIO__UNKNOWN /* no offset, no record: shard sets have neither */

/* ---- shard names ---------------------------------------------------------- */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses n >= 1 decimal digits into *out; 0 when they overflow 32 bits. */
static int parse_u32(const char *p, size_t n, uint32_t *out)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (uint64_t)(p[i] - '0');
		if (v > UINT32_MAX)
			return 0;
	}
	*out = (uint32_t)v;
	return 1;
}

/* The last path component must match .*-(\d+)-of-(\d+)(\..*)?$ with index <
 * count. As the regex's greedy .* would, the rightmost "-of-" that fits the
 * pattern is the one parsed: "a-1-of-2.x-3-of-4" is shard 3 of 4. */
int rio__shard_name_parse(const char *path, struct rio__shard_name *sn)
{
	if (!path)
		return 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	if (len < 7) /* "-0-of-1" */
		return 0;
	for (size_t pos = len - 4;; pos--) {
		if (!memcmp(base + pos, "-of-", 4)) {
			size_t r = 0, l = 0;
			while (is_digit(base[pos + 4 + r]))
				r++;
			while (l < pos && is_digit(base[pos - 1 - l]))
				l++;
			char after = base[pos + 4 + r];
			if (r && l && l < pos && base[pos - 1 - l] == '-' && (!after || after == '.')) {
				const char *idx = base + pos - l;
				if (!parse_u32(idx, l, &sn->index) ||
				    !parse_u32(base + pos + 4, r, &sn->count) || sn->index >= sn->count)
					return 0;
				sn->prefix_len = (size_t)(idx - 1 - path);
				sn->index_width = (int)l;
				sn->count_digits = base + pos + 4;
				sn->count_width = (int)r;
				sn->suffix = base + pos + 4 + r;
				return 1;
			}
		}
		if (pos == 0)
			return 0;
	}
}

RIO_API int rio_shard_name_parse(const char *path, uint32_t *index, uint32_t *count)
{
	struct rio__shard_name sn;
	if (!rio__shard_name_parse(path, &sn))
		return 0;
	if (index)
		*index = sn.index;
	if (count)
		*count = sn.count;
	return 1;
}

/* Also -EINVAL for a NULL buf/prefix or index >= count: such a name would
 * not parse back. On failure buf holds "" when it has room for it. */
RIO_API int rio_shard_name_format(char *buf, size_t size, const char *prefix, uint32_t index,
                                  uint32_t count, rio_compression c)
{
	if (buf && size)
		buf[0] = '\0';
	if (!buf || !prefix || index >= count)
		return -EINVAL;
	int n = snprintf(buf, size, "%s-%05u-of-%05u%s", prefix, (unsigned)index, (unsigned)count,
	                 rio_compression_suffix(c));
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return n;
}

/* ---- the growing result ----------------------------------------------------- */


void rio__setvec_free(struct rio__setvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->paths[i]);
	free(v->paths);
	free(v->source);
	for (size_t k = 0; k < v->nsources; k++)
		free(v->sources[k].text);
	free(v->sources);
	if (!v->remote_borrowed)
		rio__remote_close(v->remote);
	memset(v, 0, sizeof *v);
}

/* Records a source "text" + "tail"; returns its number for rio__setvec_push (>= 1)
 * or -ENOMEM. */
long rio__setvec_add_source(struct rio__setvec *v, enum rio__set_source_kind kind, const char *text,
                           const char *tail)
{
	struct rio__set_source *s = realloc(v->sources, (v->nsources + 1) * sizeof *s);
	if (!s)
		return -ENOMEM;
	v->sources = s;
	size_t len = strlen(text) + strlen(tail) + 1;
	char *copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	snprintf(copy, len, "%s%s", text, tail);
	s[v->nsources].kind = kind;
	s[v->nsources].text = copy;
	return (long)++v->nsources;
}

/* Appends a copy of `path`, listed by source number `source` (0: named). */
int rio__setvec_push(struct rio__setvec *v, const char *path, size_t source)
{
	if (v->n == v->cap) {
		size_t cap = rio__grow_cap(v->cap, v->n + 1, 16);
		if (rio__resize(&v->paths, cap, sizeof *v->paths) ||
		    rio__resize(&v->source, cap, sizeof *v->source))
			return -ENOMEM;
		v->cap = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	v->paths[v->n] = copy;
	v->source[v->n] = source;
	v->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *rio__set_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int rio__set_ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !memcmp(s + n - t, tail, t);
}

/* ---- the forms of a specification ------------------------------------------- */

int rio__set_has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int rio__set_listed_name(const char *name)
{
	return name[0] != '.' && !rio__set_ends_with(name, ".idx") &&
	       !rio__set_ends_with(name, RIO_SET_JOURNAL_SUFFIX) &&
	       !rio__set_ends_with(name, RIO__MANIFEST_SUFFIX);
}

/* A glob: sorted matches that are regular files, not .idx, not hidden, not
 * journals. */
static int expand_glob(struct rio__setvec *v, const char *pattern, rio_error *err)
{
	glob_t g;
	memset(&g, 0, sizeof g);
	int grc = glob(pattern, GLOB_NOSORT, NULL, &g);
	if (grc == GLOB_NOSPACE) {
		globfree(&g);
		return rio__error_set(err, -ENOMEM, pattern, UNK, UNK, NULL);
	}
	if (grc != 0 && grc != GLOB_NOMATCH) {
		globfree(&g);
		return rio__error_set(err, -EIO, pattern, UNK, UNK, "glob failed");
	}
	if (grc == 0)
		qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_str);
	size_t added = 0;
	long src = rio__setvec_add_source(v, RIO__SET_GLOB, pattern, "");
	int rc = src < 0 ? (int)src : 0;
	for (size_t i = 0; rc == 0 && grc == 0 && i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];
		struct stat st;
		if (!rio__set_listed_name(rio__set_basename(p)) || stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if ((rc = rio__setvec_push(v, p, (size_t)src)) < 0)
			break;
		added++;
	}
	globfree(&g);
	if (rc < 0)
		return rio__error_set(err, rc, pattern, UNK, UNK, NULL);
	if (!added)
		return rio__error_set(err, RIO_ENOSHARDS, pattern, UNK, UNK, NULL);
	return 0;
}

/* The suffixes a PREFIX form accepts after -SSSSS-of-NNNNN. */
int rio__set_suffix_ok(const char *s)
{
	static const char *const ext[] = {"", ".tfrecord", ".tfrecords"};
	static const char *const comp[] = {"", ".gz", ".zz", ".lz4"};
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t n = strlen(ext[i]);
		if (strncmp(s, ext[i], n))
			continue;
		for (size_t j = 0; j < sizeof comp / sizeof comp[0]; j++)
			if (!strcmp(s + n, comp[j]))
				return 1;
	}
	return 0;
}

int rio__set_prefix_member(const char *name, const char *base, uint32_t *index)
{
	size_t base_len = strlen(base);
	struct rio__shard_name sn;
	if (strncmp(name, base, base_len) || !rio__shard_name_parse(name, &sn) ||
	    sn.prefix_len != base_len || !rio__set_suffix_ok(sn.suffix))
		return 0;
	*index = sn.index;
	return 1;
}

int rio__set_found_add(struct rio__set_found *fl, const char *path, uint32_t index)
{
	if (rio__grow(&fl->f, &fl->cap, fl->n + 1, sizeof *fl->f, 16))
		return -ENOMEM;
	if (!(fl->f[fl->n].path = strdup(path)))
		return -ENOMEM;
	fl->f[fl->n].index = index;
	fl->n++;
	return 0;
}

static int cmp_found(const void *a, const void *b)
{
	const struct {
		char *path;
		uint32_t index;
	} *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return strcmp(x->path, y->path);
}

int rio__set_found_push(struct rio__set_found *fl, struct rio__setvec *v, const char *prefix,
                        rio_error *err)
{
	long src = 0;
	int rc = 0;
	if (fl->n) {
		qsort(fl->f, fl->n, sizeof *fl->f, cmp_found);
		src = rio__setvec_add_source(v, RIO__SET_PREFIX, prefix, "");
		if (src < 0)
			rc = (int)src;
	}
	for (size_t i = 0; i < fl->n; i++) {
		if (!rc)
			rc = rio__setvec_push(v, fl->f[i].path, (size_t)src);
		free(fl->f[i].path);
	}
	free(fl->f);
	memset(fl, 0, sizeof *fl);
	if (rc < 0)
		return rio__error_set(err, rc, prefix, UNK, UNK, NULL);
	return 0;
}

/* A PREFIX: appends its shards sorted by index; finding none is not an
 * error here (the caller knows which error to give). */
static int expand_prefix(struct rio__setvec *v, const char *prefix, rio_error *err)
{
	const char *base = rio__set_basename(prefix);
	size_t dir_len = (size_t)(base - prefix);
	char *dir = strndup(prefix, dir_len ? dir_len : 1);
	if (!dir)
		return rio__error_set(err, -ENOMEM, prefix, UNK, UNK, NULL);
	if (!dir_len)
		dir[0] = '.';
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		int rc = 0;
		if (e != ENOENT && e != ENOTDIR)
			rc = rio__error_set(err, -e, dir, UNK, UNK, NULL);
		free(dir);
		return rc;
	}
	free(dir);

	struct rio__set_found fl = {0};
	int rc = 0;
	struct dirent *de;
	/* readdir() tells its error only through errno: clear it before each
	 * call (a stat() below may have set it) */
	while ((errno = 0, de = readdir(d))) {
		const char *name = de->d_name;
		uint32_t index;
		if (!rio__set_prefix_member(name, base, &index))
			continue;
		size_t plen = dir_len + strlen(name) + 1;
		char *path = malloc(plen);
		if (!path) {
			rc = -ENOMEM;
			break;
		}
		snprintf(path, plen, "%.*s%s", (int)dir_len, prefix, name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = rio__set_found_add(&fl, path, index);
		free(path);
		if (rc)
			break;
	}
	if (!rc && errno)
		rc = -errno;
	closedir(d);
	if (rc < 0) {
		for (size_t i = 0; i < fl.n; i++)
			free(fl.f[i].path);
		free(fl.f);
		return rio__error_set(err, rc, prefix, UNK, UNK, NULL);
	}
	return rio__set_found_push(&fl, v, prefix, err);
}

/* RIO_EINCOMPLETESET when the journal of the set whose prefix is the first
 * prefix_len bytes of `path` exists; else 0. */
static int check_journal(const char *path, size_t prefix_len, rio_error *err)
{
	if (rio__url_is_remote(path))
		return 0; /* S3 sets are committed by their manifest, read at expansion */
	size_t len = prefix_len + sizeof RIO_SET_JOURNAL_SUFFIX;
	char *journal = malloc(len);
	if (!journal)
		return rio__error_set(err, -ENOMEM, path, UNK, UNK, NULL);
	snprintf(journal, len, "%.*s%s", (int)prefix_len, path, RIO_SET_JOURNAL_SUFFIX);
	struct stat st;
	int rc = 0;
	if (lstat(journal, &st) == 0) {
		journal[prefix_len] = '\0'; /* the set's prefix, for a moment */
		rc = rio__error_set(err, RIO_EINCOMPLETESET, journal, UNK, UNK,
		                    "%s%s remains; run 'recordio-pack --recover --output %s' to "
		                    "finish the commit",
		                    journal, RIO_SET_JOURNAL_SUFFIX, journal);
	}
	free(journal);
	return rc;
}

static int cmp_dirent(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* A directory: its regular files, sorted, but for hidden names, .idx files
 * and journals. */
static int expand_dir(struct rio__setvec *v, const char *dir, rio_error *err)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, NULL, cmp_dirent);
	if (n < 0)
		return rio__error_set(err, -errno, dir, UNK, UNK, NULL);
	size_t dlen = strlen(dir), added = 0, skipped = 0;
	int sep = dlen && dir[dlen - 1] != '/';
	long src = rio__setvec_add_source(v, RIO__SET_DIR, dir, sep ? "/" : "");
	int rc = src < 0 ? (int)src : 0;
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		if (!rc && strcmp(name, ".") && strcmp(name, "..")) {
			size_t plen = dlen + (size_t)sep + strlen(name) + 1;
			char *path = malloc(plen);
			struct stat st;
			if (!path) {
				rc = -ENOMEM;
			} else {
				snprintf(path, plen, "%s%s%s", dir, sep ? "/" : "", name);
				if (!rio__set_listed_name(name) || stat(path, &st) || !S_ISREG(st.st_mode))
					skipped++;
				else if ((rc = rio__setvec_push(v, path, (size_t)src)) == 0)
					added++;
				free(path);
			}
		}
		free(list[i]);
	}
	free(list);
	if (rc < 0)
		return rio__error_set(err, rc, dir, UNK, UNK, NULL);
	if (!added)
		return rio__error_set(err, RIO_ENOSHARDS, dir, UNK, UNK,
		                      skipped ? "a directory with no shard files (hidden, .idx and "
		                                ".commit files and subdirectories are not shards)"
		                              : "an empty directory");
	return 0;
}

/* One item: an existing file, a directory, a glob, or a PREFIX (see the top
 * of the file). */
static int expand_item(struct rio__setvec *v, const char *item, int in_list, rio_error *err)
{
	if (rio__url_is_remote(item))
		return rio__set_expand_url(v, item, in_list, err);
	struct stat st;
	int missing = ENOENT;
	size_t len = strlen(item);
	if (stat(item, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			int rc = rio__setvec_push(v, item, 0);
			return rc < 0 ? rio__error_set(err, rc, item, UNK, UNK, NULL) : 0;
		}
		if (item[len - 1] == '/')
			return expand_dir(v, item, err);
		/* "DIR" that is also a PREFIX of shards: say so, do not guess */
		size_t before = v->n;
		int rc = expand_prefix(v, item, err);
		if (rc < 0)
			return rc;
		if (v->n == before)
			return expand_dir(v, item, err);
		return rio__error_set(err, -EINVAL, item, UNK, UNK,
		                      "both a directory and the PREFIX of shards (%s); write '%s/' "
		                      "for the directory's files or '%s-*' for the shards",
		                      v->paths[before], item, item);
	}
	if (item[len - 1] == '/')
		return rio__error_set(err, -errno, item, UNK, UNK, NULL);
	if (errno != ENOTDIR)
		missing = errno;
	if (rio__set_has_glob(item))
		return expand_glob(v, item, err);
	size_t before = v->n;
	int rc = expand_prefix(v, item, err);
	if (rc < 0)
		return rc;
	if (v->n > before)
		return 0;
	/* a first set whose commit was interrupted before any shard got its
	 * name: the journal is all there is */
	if ((rc = check_journal(item, len, err)) < 0)
		return rc;
	if (in_list)
		return rio__error_set(err, -missing, item, UNK, UNK, NULL);
	return rio__error_set(err, RIO_ENOSHARDS, item, UNK, UNK,
	                      "neither a file nor the PREFIX of PREFIX-SSSSS-of-NNNNN shards");
}

static int expand_list(struct rio__setvec *v, const char *spec, rio_error *err)
{
	char *copy = strdup(spec);
	if (!copy)
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	int rc = 0;
	char *item = copy;
	while (item && rc >= 0) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		if (*item)
			rc = expand_item(v, item, 1, err);
		item = comma ? comma + 1 : NULL;
	}
	free(copy);
	if (rc >= 0 && v->n == 0)
		rc = rio__error_set(err, RIO_ENOSHARDS, spec, UNK, UNK, "an empty list");
	return rc;
}

/* ---- consistency of the shard groups ---------------------------------------- */

/* The most absent shards of one group checked against a glob (a glob
 * must be matched against each one's name): past it, the set is refused. */
#define ABSENT_CHECK_MAX (1u << 20)

struct member {
	const char *path;
	size_t pos; /* in the result */
	struct rio__shard_name sn;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->sn.prefix_len < y->sn.prefix_len ? x->sn.prefix_len : y->sn.prefix_len;
	int c = memcmp(x->path, y->path, n);
	if (c)
		return c;
	if (x->sn.prefix_len != y->sn.prefix_len)
		return x->sn.prefix_len < y->sn.prefix_len ? -1 : 1;
	if (x->sn.index != y->sn.index)
		return x->sn.index < y->sn.index ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int same_group(const struct member *x, const struct member *y)
{
	return x->sn.prefix_len == y->sn.prefix_len && !memcmp(x->path, y->path, x->sn.prefix_len);
}

/* The name of member m's sibling number `index`, spelled like m (prefix,
 * digit widths, suffix); malloc'd, NULL when out of memory. */
static char *sibling_name(const struct member *m, uint32_t index)
{
	size_t len = m->sn.prefix_len + 1 + (size_t)m->sn.index_width + 16 +
	             (size_t)m->sn.count_width + strlen(m->sn.suffix);
	char *name = malloc(len);
	if (name)
		snprintf(name, len, "%.*s-%0*u-of-%.*s%s", (int)m->sn.prefix_len, m->path,
		         m->sn.index_width, (unsigned)index, m->sn.count_width, m->sn.count_digits,
		         m->sn.suffix);
	return name;
}

/* Whether source s lists `name` when that is a regular file: the filters
 * of expand_glob(), expand_prefix() and expand_dir(), all but existence. */
static int would_list(const struct rio__set_source *s, const char *name)
{
	size_t n = strlen(s->text);
	struct rio__shard_name sn;
	switch (s->kind) {
	case RIO__SET_GLOB:
		return rio__set_listed_name(rio__set_basename(name)) &&
		       fnmatch(s->text, name, FNM_PATHNAME | FNM_PERIOD) == 0;
	case RIO__SET_DIR:
		return !strncmp(name, s->text, n) && !strchr(name + n, '/') &&
		       rio__set_listed_name(name + n);
	case RIO__SET_PREFIX:
		return rio__shard_name_parse(name, &sn) && sn.prefix_len == n && !strncmp(name, s->text, n) &&
		       rio__set_suffix_ok(sn.suffix);
	}
	return 0;
}

/* RIO_EMISSINGSHARD naming `name`, which a source would have listed. */
static int missing_shard(const char *name, size_t present, uint32_t count, rio_error *err)
{
	struct stat st;
	/* there, but a directory, a FIFO, a dangling link...: say so */
	int there = !rio__url_is_remote(name) && lstat(name, &st) == 0;
	return rio__error_set(err, RIO_EMISSINGSHARD, name, UNK, UNK, "%s%zu of %u found",
	                      there ? "not a regular file; " : "", present, (unsigned)count);
}

/* A group's first absent shard that one of the items that listed some of
 * its members would have listed too, as RIO_EMISSINGSHARD; 0 when there is
 * none. A PREFIX or a directory lists every shard of the set; a glob those
 * it matches, so that the shards its pattern leaves out are the user's
 * choice, as are those of a group named file by file. Each source's
 * sibling names are spelled like a member it listed. m[0..n) is sorted by
 * index, indexes distinct and below the count. */
static int check_absent(const struct rio__setvec *v, const struct member *m, size_t n, rio_error *err)
{
	uint32_t count = m[0].sn.count;
	size_t absent = count - n, nsrc = 0;
	const char *pattern = NULL; /* a glob among them */
	const struct member **rep = malloc(n * sizeof *rep); /* a member per source */
	if (!rep)
		return rio__error_set(err, -ENOMEM, m[0].path, UNK, UNK, NULL);
	for (size_t i = 0; i < n; i++) {
		size_t s = v->source[m[i].pos], k = 0;
		while (k < nsrc && v->source[rep[k]->pos] != s)
			k++;
		if (s && k == nsrc) {
			rep[nsrc++] = &m[i];
			if (v->sources[s - 1].kind == RIO__SET_GLOB)
				pattern = v->sources[s - 1].text;
		}
	}
	int rc = 0;
	size_t checked = 0, j = 0;
	for (uint32_t index = 0; nsrc && absent && index < count && !rc; index++) {
		if (j < n && m[j].sn.index == index) {
			j++;
			continue;
		}
		if (++checked > ABSENT_CHECK_MAX && pattern) {
			rc = rio__error_set(err, RIO_EMISSINGSHARD, pattern, UNK, UNK,
			                    "it matched %zu of the %u shards of %.*s, too many absent to "
			                    "check each against it: list the shards to read",
			                    n, (unsigned)count, (int)m[0].sn.prefix_len, m[0].path);
			break;
		}
		for (size_t k = 0; k < nsrc && !rc; k++) {
			char *name = sibling_name(rep[k], index);
			if (!name)
				rc = rio__error_set(err, -ENOMEM, m[0].path, UNK, UNK, NULL);
			else if (would_list(&v->sources[v->source[rep[k]->pos] - 1], name))
				rc = missing_shard(name, n, count, err);
			free(name);
		}
	}
	free(rep);
	return rc;
}

/* Checks one group m[0..n), sorted by index. */
static int check_group(const struct rio__setvec *v, const struct member *m, size_t n, rio_error *err)
{
	for (size_t i = 1; i < n; i++)
		if (m[i].sn.count != m[0].sn.count)
			return rio__error_set(err, RIO_EBADSHARDNAME, m[0].path, UNK, UNK,
			                      "%u shards, but %s says %u", (unsigned)m[0].sn.count,
			                      m[i].path, (unsigned)m[i].sn.count);
	for (size_t i = 1; i < n; i++)
		if (m[i].sn.index == m[i - 1].sn.index)
			return rio__error_set(err, RIO_EBADSHARDNAME, m[i - 1].path, UNK, UNK,
			                      "the same shard as %s", m[i].path);
	return check_absent(v, m, n, err);
}

static int check_groups(const struct rio__setvec *v, rio_error *err)
{
	if (v->n == 0)
		return 0;
	struct member *m = malloc(v->n * sizeof *m);
	if (!m)
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	size_t k = 0;
	for (size_t i = 0; i < v->n; i++)
		if (rio__shard_name_parse(v->paths[i], &m[k].sn)) {
			m[k].path = v->paths[i];
			m[k].pos = i;
			k++;
		}
	qsort(m, k, sizeof *m, cmp_member);
	int rc = 0;
	/* journals first: an incomplete set's names may disagree, but what
	 * the user must hear is that its commit was interrupted */
	for (size_t a = 0, b; a < k && rc >= 0; a = b) {
		for (b = a; b < k && same_group(&m[a], &m[b]); b++)
			;
		rc = check_journal(m[a].path, m[a].sn.prefix_len, err);
	}
	for (size_t a = 0, b; a < k && rc >= 0; a = b) {
		for (b = a; b < k && same_group(&m[a], &m[b]); b++)
			;
		rc = check_group(v, m + a, b - a, err);
	}
	free(m);
	return rc;
}

/* ---- the public entry points ------------------------------------------------ */

/* Returns 0 on success (err cleared), with set->paths owned by the caller
 * (rio_shardset_free). Also -EINVAL for a NULL or empty spec or NULL set. */
RIO_API int rio_shardset_expand(const char *spec, rio_shardset *set, rio_error *err)
{
	return rio_shardset_expand_remote(spec, set, NULL, err);
}

static int expand(const char *spec, rio_shardset *set, const rio_remote_opts *remote,
                  struct rio__remote *client, rio_error *err)
{
	if (!set)
		return rio__error_set(err, -EINVAL, NULL, UNK, UNK, "no shard set given");
	set->count = 0;
	set->paths = NULL;
	if (!spec || !*spec)
		return rio__error_set(err, -EINVAL, NULL, UNK, UNK, "empty shard specification");

	struct rio__setvec v;
	memset(&v, 0, sizeof v);
	v.remote_opts = remote;
	v.remote = client;
	v.remote_borrowed = client != NULL;
	struct stat st;
	int rc;
	if (strchr(spec, ',') && stat(spec, &st) != 0)
		rc = expand_list(&v, spec, err);
	else
		rc = expand_item(&v, spec, 0, err);
	if (rc >= 0)
		rc = check_groups(&v, err);
	if (rc < 0) {
		rio__setvec_free(&v);
		return rc;
	}
	set->count = v.n;
	set->paths = v.paths;
	v.paths = NULL;
	v.n = 0;
	rio__setvec_free(&v);
	rio__error_clear(err);
	return 0;
}

RIO_API int rio_shardset_expand_remote(const char *spec, rio_shardset *set,
                                       const rio_remote_opts *remote, rio_error *err)
{
	return expand(spec, set, remote, NULL, err);
}

int rio__shardset_expand_with(const char *spec, rio_shardset *set, struct rio__remote *r,
                              rio_error *err)
{
	return expand(spec, set, NULL, r, err);
}

RIO_API void rio_shardset_free(rio_shardset *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->count; i++)
		free(set->paths[i]);
	free(set->paths);
	set->count = 0;
	set->paths = NULL;
}

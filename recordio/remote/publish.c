/*
 * publish.c — a shard set written to S3 as a whole (rio_set_publish,
 * doc/recordio-format.md, "Sets in S3").
 *
 * S3 has no rename, so a set cannot be written under temporary names and
 * renamed into place. Instead every publication of s3://B/PREFIX is a new
 * generation G: its shards (and their .idx) are uploaded under the new
 * "directory" PREFIX.gGGGGGG/, which no reader looks at yet, and only then
 * the manifest PREFIX.manifest, one PUT naming G and its shards, is
 * written. A PUT replaces an object atomically, so a reader that opens
 * the manifest sees the old generation or the new one, whole. No key that
 * a reader of the previous generation may be reading is overwritten: the
 * generation that was in force is left in place, and only the generations
 * before it are deleted, once the new manifest is in place. A failure before the
 * manifest deletes what this generation uploaded (a multipart upload that
 * fails is aborted) and leaves the set as it was.
 */
#include "config.h"

#include "manifest.h"
#include "remote.h"
#include "url.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNK RIO__UNKNOWN
#define MANIFEST_MAX (64u << 20)
#define GEN_DIGITS 6
#define GEN_MAX 999999u

/* What publishing needs of s3://B/PREFIX. */
typedef struct target {
	const char *url;
	rio__url u;
	rio__remote *r;
	int have_manifest;
	uint64_t current;  /* the generation the manifest names (0: none) */
	uint64_t *listed;  /* the generations PREFIX.gN/ listed          */
	size_t nlisted;
	size_t dirlen;     /* of the key's "directory" (up to its last '/') */
} target;

static int check_url(target *t, rio_error *err)
{
	int rc = rio__url_parse(t->url, &t->u, err);
	if (rc < 0)
		return rc;
	if (t->u.kind != RIO__URL_S3)
		return rio__error_set(err, RIO_EUNSUPPORTED, t->url, UNK, UNK,
		                      "a set can be written to s3:// only");
	size_t n = strlen(t->u.key);
	const char *base = strrchr(t->u.key, '/');
	base = base ? base + 1 : t->u.key;
	t->dirlen = (size_t)(base - t->u.key);
	if (!n || t->u.key[n - 1] == '/' || !*base || base[0] == '.' ||
	    strcspn(t->u.key, "*?[") != n)
		return rio__error_set(err, -EINVAL, t->url, UNK, UNK,
		                      "expected s3://BUCKET/PREFIX: a key prefix with a last "
		                      "component that is not empty, hidden or a glob");
	return 0;
}

/* A malloc'd "s3://B/KEY" for a key of t's bucket. */
static char *key_url(const target *t, const char *key)
{
	size_t n = strlen(t->u.bucket) + strlen(key) + 8;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "s3://%s/%s", t->u.bucket, key);
	return s;
}

/* The generation of a listed "PREFIX.gNNNNNN/", 0 for another name. */
static uint64_t listed_generation(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(key, prefix, n) || strncmp(key + n, ".g", 2))
		return 0;
	const char *p = key + n + 2;
	uint64_t g = 0;
	size_t digits = 0;
	for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
		g = g * 10 + (uint64_t)(*p - '0');
	return digits == GEN_DIGITS && !strcmp(p, "/") ? g : 0;
}

/* Reads the manifest and lists the generations. */
static int survey(target *t, rio_error *err)
{
	size_t n = strlen(t->u.key) + sizeof RIO__MANIFEST_SUFFIX + 2;
	char *mkey = malloc(n), *murl = NULL, *text = NULL;
	if (!mkey)
		return rio__error_set(err, -ENOMEM, t->url, UNK, UNK, NULL);
	snprintf(mkey, n, "%s%s", t->u.key, RIO__MANIFEST_SUFFIX);
	murl = key_url(t, mkey);
	size_t len = 0;
	int rc = murl ? rio__remote_get_all(t->r, murl, MANIFEST_MAX, 1, &text, &len, err)
	              : rio__error_set(err, -ENOMEM, t->url, UNK, UNK, NULL);
	if (rc == 0) {
		rio__manifest m;
		char why[200] = "";
		t->have_manifest = 1;
		/* a damaged manifest: its generation is taken from the listing */
		if (rio__manifest_parse(text, len, &m, why, sizeof why) == 0)
			t->current = m.generation;
		rio__manifest_free(&m);
	} else if (rc == -ENOENT) {
		rc = 0;
	}
	free(text);
	free(murl);
	snprintf(mkey, n, "%s.g", t->u.key);
	rio__listing l = {0};
	if (rc == 0)
		rc = rio__remote_list(t->r, t->u.bucket, mkey, "/", t->url, &l, err);
	if (rc == 0 && l.n && !(t->listed = malloc(l.n * sizeof *t->listed)))
		rc = rio__error_set(err, -ENOMEM, t->url, UNK, UNK, NULL);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		uint64_t g = l.items[i].is_prefix ? listed_generation(l.items[i].key, t->u.key) : 0;
		if (g)
			t->listed[t->nlisted++] = g;
	}
	rio__listing_free(&l);
	free(mkey);
	return rc;
}

/* One past the highest generation named or listed. */
static uint64_t next_generation(const target *t)
{
	uint64_t g = t->current;
	for (size_t i = 0; i < t->nlisted; i++)
		if (t->listed[i] > g)
			g = t->listed[i];
	return g + 1;
}

static int target_open(target *t, const char *url, int replace, const rio_remote_opts *opts,
                       rio_error *err)
{
	memset(t, 0, sizeof *t);
	t->url = url;
	int rc = check_url(t, err);
	if (rc == 0)
		rc = rio__remote_open(&t->r, opts, err);
	if (rc == 0)
		rc = survey(t, err);
	if (rc == 0 && t->have_manifest && !replace)
		rc = rio__error_set(err, -EEXIST, url, UNK, UNK,
		                    "a set is already there (%s%s, generation %" PRIu64
		                    "); replace it to write another",
		                    t->u.key, RIO__MANIFEST_SUFFIX, t->current);
	if (rc == 0 && next_generation(t) > GEN_MAX)
		rc = rio__error_set(err, -EOVERFLOW, url, UNK, UNK, "generation %u reached", GEN_MAX);
	return rc;
}

static void target_close(target *t)
{
	rio__remote_close(t->r);
	rio__url_free(&t->u);
	free(t->listed);
}

RIO_API int rio_set_publish_check(const char *url, int replace, const rio_remote_opts *opts,
                                  rio_error *err)
{
	rio__error_clear(err);
	target t;
	int rc = target_open(&t, url, replace, opts, err);
	target_close(&t);
	return rc;
}

/* Deletes every object under the key prefix `dir` ("PREFIX.gNNNNNN/"):
 * 0 or the first error. */
static int delete_under(target *t, const char *dir, rio_error *err)
{
	rio__listing l = {0};
	int rc = rio__remote_list(t->r, t->u.bucket, dir, NULL, t->url, &l, err);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		char *u = key_url(t, l.items[i].key);
		rc = u ? rio__remote_delete(t->r, u, err) : -ENOMEM;
		free(u);
	}
	rio__listing_free(&l);
	return rc;
}

/* Uploads the local file `path` (when `optional`, one that is not there is
 * skipped: *size is UINT64_MAX then) to `url`. */
static int upload(target *t, const char *path, const char *url, int optional, uint64_t *size,
                  rio_error *err)
{
	*size = UINT64_MAX;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return optional && errno == ENOENT ? 0
		                                   : rio__error_set(err, -errno, path, UNK, UNK, NULL);
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? rio__error_set(err, -errno, path, UNK, UNK, NULL) : 0;
	if (rc == 0 && (rc = rio__remote_put_file(t->r, url, fd, (uint64_t)st.st_size, err)) == 0)
		*size = (uint64_t)st.st_size;
	close(fd);
	return rc;
}

/* Uploads the shard at `path` and its .idx (when there is one) under
 * `gen` ("DIR/BASE.gNNNNNN/"), adding the shard to the manifest by its name
 * relative to the manifest's "directory" DIR/. */
static int upload_shard(target *t, const char *gen, const char *path, rio__manifest *m,
                        rio_error *err)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(gen) + strlen(base) + 1;
	char *key = malloc(n), *url = NULL, *idx = NULL, *idx_path = malloc(strlen(path) + 5);
	if (key) {
		snprintf(key, n, "%s%s", gen, base);
		url = key_url(t, key);
		idx = url ? malloc(strlen(url) + 5) : NULL;
	}
	int rc = 0;
	if (!key || !url || !idx || !idx_path) {
		rc = rio__error_set(err, -ENOMEM, t->url, UNK, UNK, NULL);
	} else {
		uint64_t size, isize;
		sprintf(idx, "%s.idx", url);
		sprintf(idx_path, "%s.idx", path);
		rc = upload(t, path, url, 0, &size, err);
		if (rc == 0)
			rc = upload(t, idx_path, idx, 1, &isize, err);
		if (rc == 0 && (rc = rio__manifest_add(m, key + t->dirlen, size, NULL)) < 0)
			rc = rio__error_set(err, rc, url, UNK, UNK,
			                    rc == -EINVAL ? "not a name a manifest takes" : NULL);
	}
	free(key);
	free(url);
	free(idx);
	free(idx_path);
	return rc;
}

/* The new generation's shards, then the manifest. */
static int publish(target *t, const char *gen, const char *const *shards, size_t n,
                   uint64_t g, rio_error *err)
{
	rio__manifest m = {.generation = g};
	rio__text text = {0};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = upload_shard(t, gen, shards[i], &m, err);
	if (rc == 0 && (rc = rio__manifest_format(&m, &text)) < 0)
		rc = rio__error_set(err, rc, t->url, UNK, UNK, NULL);
	if (rc == 0) {
		size_t klen = strlen(t->u.key) + sizeof RIO__MANIFEST_SUFFIX;
		char *mkey = malloc(klen), *murl = NULL;
		if (mkey) {
			snprintf(mkey, klen, "%s%s", t->u.key, RIO__MANIFEST_SUFFIX);
			murl = key_url(t, mkey);
		}
		rc = murl ? rio__remote_put(t->r, murl, rio__text_str(&text), text.n, err)
		          : rio__error_set(err, -ENOMEM, t->url, UNK, UNK, NULL);
		free(mkey);
		free(murl);
	}
	rio__text_free(&text);
	rio__manifest_free(&m);
	return rc;
}

RIO_API int rio_set_publish(const char *url, const char *const *paths, size_t n, int replace,
                            const rio_remote_opts *opts, uint64_t *generation, rio_error *err)
{
	rio__error_clear(err);
	if (generation)
		*generation = 0;
	if (!n)
		return rio__error_set(err, -EINVAL, url, UNK, UNK, "no shards to write");
	target t;
	int rc = target_open(&t, url, replace, opts, err);
	uint64_t g = next_generation(&t);
	size_t glen = strlen(url) + GEN_DIGITS + 8;
	char *gen = rc == 0 ? malloc(glen) : NULL;
	if (rc == 0 && !gen)
		rc = rio__error_set(err, -ENOMEM, url, UNK, UNK, NULL);
	if (rc == 0) {
		snprintf(gen, glen, "%s.g%0*" PRIu64 "/", t.u.key, GEN_DIGITS, g);
		rc = publish(&t, gen, paths, n, g, err);
		if (rc < 0)
			delete_under(&t, gen, NULL); /* best effort: the message is rc's */
	}
	/* the generations before the one that was in force: no reader that
	 * opened the manifest since it was published reads them (best effort:
	 * a leftover takes space, nothing else) */
	for (size_t i = 0; rc == 0 && i < t.nlisted; i++) {
		if (t.listed[i] >= t.current)
			continue;
		snprintf(gen, glen, "%s.g%0*" PRIu64 "/", t.u.key, GEN_DIGITS, t.listed[i]);
		delete_under(&t, gen, NULL);
	}
	if (rc == 0 && generation)
		*generation = g;
	free(gen);
	target_close(&t);
	return rc;
}

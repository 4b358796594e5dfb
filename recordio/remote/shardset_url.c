/*
 * shardset_url.c — the URL items of a shard specification (shardset.h),
 * expanded by the rules of local paths (shardset.c's top comment), with
 * S3's ListObjectsV2 in place of the directory:
 *
 *   - http(s)://...      that one file (a web server lists nothing);
 *   - s3://B/ or s3://B/PATH/   a "directory": the objects directly under
 *     it (listed with the delimiter '/'), by key, without index sidecars,
 *     journals, manifests and hidden names; each set manifest among them
 *     (X.manifest) stands for its set's shards, in its place;
 *   - s3://B/PATTERN with '*', '?' or '[': the keys the glob matches (one
 *     '*' does not cross a '/', a leading '.' is matched only by a '.',
 *     as glob(3) does), listed from the pattern's literal beginning;
 *   - s3://B/KEY: tried in this order, from one listing of KEY with the
 *     delimiter '/': the object KEY itself (the set it names when KEY is a
 *     manifest, X.manifest); the set whose manifest is
 *     KEY.manifest (recordio-pack's S3 sets: doc/recordio-format.md);
 *     the "directory" KEY/ (ambiguous, -EINVAL, when shards
 *     KEY-SSSSS-of-NNNNN lie beside it too, as locally); the PREFIX
 *     KEY-SSSSS-of-NNNNN[.tfrecord[s]][.gz|.zz|.lz4], by shard index.
 *     Nothing: RIO_ENOSHARDS for a lone item, -ENOENT naming it in a list.
 * A set read through its manifest is exactly the manifest's shards, in its
 * order: objects of other generations under the same prefix are never
 * mixed in. The completeness of a PREFIX, directory or glob is checked by
 * shardset.c as for files.
 */
#include "config.h"

#include "manifest.h"
#include "remote.h"
#include "shardset.h"
#include "url.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN
#define MANIFEST_MAX (64u << 20)

static int client(struct rio__setvec *v, rio_error *err)
{
	return v->remote ? 0 : rio__remote_open(&v->remote, v->remote_opts, err);
}

/* "s3://BUCKET/" + key into a malloc'd string. */
static char *object_url(const rio__url *u, const char *key, size_t keylen)
{
	size_t n = 5 + strlen(u->bucket) + 1 + keylen + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "s3://%s/%.*s", u->bucket, (int)keylen, key);
	return s;
}

static int push_key(struct rio__setvec *v, const rio__url *u, const char *key, size_t source,
                    const char *item, rio_error *err)
{
	char *url = object_url(u, key, strlen(key));
	int rc = url ? rio__setvec_push(v, url, source) : -ENOMEM;
	free(url);
	return rc < 0 ? rio__error_set(err, rc, item, UNK, UNK, NULL) : 0;
}

/* For a client that keeps listed objects (remote.h): one listing of the
 * folder that holds the manifest m's shards (its generation, PREFIX.gNNNNNN/)
 * gives every shard's size and ETag, and which .idx sidecars are there,
 * where opening each shard would take a request of its own. A listing
 * that fails is no error here: the shards are then opened one by one,
 * which says what is wrong. */
static void list_generation(struct rio__setvec *v, const rio__url *u, const char *key,
                            size_t dir, const rio__manifest *m)
{
	size_t common = strlen(m->shards[0].name);
	for (size_t i = 1; i < m->n; i++) {
		size_t k = 0;
		while (k < common && m->shards[i].name[k] == m->shards[0].name[k])
			k++;
		common = k;
	}
	while (common && m->shards[0].name[common - 1] != '/')
		common--;
	char *prefix = malloc(dir + common + 1);
	if (!prefix)
		return;
	snprintf(prefix, dir + common + 1, "%.*s%.*s", (int)dir, key, (int)common,
	         m->shards[0].name);
	rio__listing l = {0};
	rio_error e;
	(void)rio__remote_list(v->remote, u->bucket, prefix, "/", key, &l, &e);
	rio__listing_free(&l);
	free(prefix);
}

/* The shards of the set whose manifest is the object `key`. */
static int expand_manifest(struct rio__setvec *v, const rio__url *u, const char *key,
                           rio_error *err)
{
	char *murl = object_url(u, key, strlen(key)), *text = NULL;
	size_t len = 0;
	if (!murl)
		return rio__error_set(err, -ENOMEM, key, UNK, UNK, NULL);
	int rc = rio__remote_get_all(v->remote, murl, MANIFEST_MAX, 0, &text, &len, err);
	rio__manifest m;
	char why[200];
	if (rc == 0 && (rc = rio__manifest_parse(text, len, &m, why, sizeof why)) < 0)
		rc = rio__error_set(err, rc == -ENOMEM ? rc : RIO_EBADSHARDNAME, murl, UNK, UNK, "%s",
		                    rc == -ENOMEM ? "" : why);
	const char *slash = strrchr(key, '/');
	size_t dir = slash ? (size_t)(slash - key) + 1 : 0;
	if (rc == 0 && m.n > 1 && rio__remote_keeps_listed(v->remote))
		list_generation(v, u, key, dir, &m);
	for (size_t i = 0; rc == 0 && i < m.n; i++) {
		size_t klen = dir + strlen(m.shards[i].name);
		char *k = malloc(klen + 1);
		if (!k) {
			rc = rio__error_set(err, -ENOMEM, murl, UNK, UNK, NULL);
			break;
		}
		snprintf(k, klen + 1, "%.*s%s", (int)dir, key, m.shards[i].name);
		rc = push_key(v, u, k, 0, murl, err);
		free(k);
	}
	if (text)
		rio__manifest_free(&m);
	free(text);
	free(murl);
	return rc;
}

/* A "directory": u->key is "" or ends with '/'. */
static int expand_dir(struct rio__setvec *v, const rio__url *u, const char *item,
                      rio_error *err)
{
	rio__listing l = {0};
	int rc = rio__remote_list(v->remote, u->bucket, u->key, "/", item, &l, err);
	size_t added = 0, skipped = 0;
	long src = 0;
	if (rc == 0) {
		char *text = object_url(u, u->key, strlen(u->key));
		src = text ? rio__setvec_add_source(v, RIO__SET_DIR, text, "") : -ENOMEM;
		free(text);
		if (src < 0)
			rc = rio__error_set(err, (int)src, item, UNK, UNK, NULL);
	}
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const char *key = l.items[i].key, *base = rio__set_basename(key);
		if (l.items[i].is_prefix || strncmp(key, u->key, strlen(u->key))) {
			skipped++;
		} else if (rio__set_ends_with(key, RIO__MANIFEST_SUFFIX) && base[0] != '.') {
			size_t before = v->n;
			rc = expand_manifest(v, u, key, err);
			added += v->n - before;
		} else if (!rio__set_listed_name(base)) {
			skipped++;
		} else if ((rc = push_key(v, u, key, (size_t)src, item, err)) == 0) {
			added++;
		}
	}
	rio__listing_free(&l);
	if (rc == 0 && !added)
		rc = rio__error_set(err, RIO_ENOSHARDS, item, UNK, UNK,
		                    skipped ? "no shard objects under it (hidden, .idx, .commit and "
		                              "deeper keys are not shards)"
		                            : "nothing under it");
	return rc;
}

/* A glob of keys. */
static int expand_glob(struct rio__setvec *v, const rio__url *u, const char *item,
                       rio_error *err)
{
	size_t lit = strcspn(u->key, "*?[");
	char *prefix = strndup(u->key, lit);
	if (!prefix)
		return rio__error_set(err, -ENOMEM, item, UNK, UNK, NULL);
	rio__listing l = {0};
	int rc = rio__remote_list(v->remote, u->bucket, prefix, NULL, item, &l, err);
	free(prefix);
	long src = rc == 0 ? rio__setvec_add_source(v, RIO__SET_GLOB, item, "") : 0;
	if (src < 0)
		rc = rio__error_set(err, (int)src, item, UNK, UNK, NULL);
	size_t added = 0;
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const char *key = l.items[i].key;
		if (l.items[i].is_prefix || !rio__set_listed_name(rio__set_basename(key)) ||
		    fnmatch(u->key, key, FNM_PATHNAME | FNM_PERIOD) != 0)
			continue;
		if ((rc = push_key(v, u, key, (size_t)src, item, err)) == 0)
			added++;
	}
	rio__listing_free(&l);
	if (rc == 0 && !added)
		rc = rio__error_set(err, RIO_ENOSHARDS, item, UNK, UNK, NULL);
	return rc;
}

/* What one listing of KEY (delimiter '/') found. */
struct probe {
	int object, manifest, dir;
	struct rio__set_found shards;
};

static int probe_key(struct rio__setvec *v, const rio__url *u, const char *item,
                     struct probe *p, rio_error *err)
{
	rio__listing l = {0};
	memset(p, 0, sizeof *p);
	int rc = rio__remote_list(v->remote, u->bucket, u->key, "/", item, &l, err);
	size_t klen = strlen(u->key);
	const char *base = rio__set_basename(u->key);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const char *key = l.items[i].key, *rest = key + klen;
		uint32_t index;
		if (strncmp(key, u->key, klen))
			continue;
		if (l.items[i].is_prefix)
			p->dir |= !strcmp(rest, "/");
		else if (!*rest)
			p->object = 1;
		else if (!strcmp(rest, RIO__MANIFEST_SUFFIX))
			p->manifest = 1;
		else if (!strchr(rest, '/') && rio__set_prefix_member(rio__set_basename(key), base, &index)) {
			char *url = object_url(u, key, strlen(key));
			rc = url ? rio__set_found_add(&p->shards, url, index) : -ENOMEM;
			free(url);
			if (rc < 0)
				rc = rio__error_set(err, rc, item, UNK, UNK, NULL);
		}
	}
	rio__listing_free(&l);
	return rc;
}

static void probe_free(struct probe *p)
{
	for (size_t i = 0; i < p->shards.n; i++)
		free(p->shards.f[i].path);
	free(p->shards.f);
}

/* A plain KEY: the object, a manifest's set, a directory or a PREFIX. */
static int expand_key(struct rio__setvec *v, const rio__url *u, const char *item, int in_list,
                      rio_error *err)
{
	struct probe p;
	int rc = probe_key(v, u, item, &p, err);
	if (rc < 0) {
		probe_free(&p);
		return rc;
	}
	if (p.object) {
		probe_free(&p);
		/* a set's manifest named itself stands for its set, as in a
		 * directory: it is never a shard */
		if (rio__set_ends_with(u->key, RIO__MANIFEST_SUFFIX) &&
		    rio__set_basename(u->key)[0] != '.')
			return expand_manifest(v, u, u->key, err);
		return push_key(v, u, u->key, 0, item, err);
	}
	if (p.manifest) {
		probe_free(&p);
		size_t n = strlen(u->key) + sizeof RIO__MANIFEST_SUFFIX;
		char *mkey = malloc(n);
		if (!mkey)
			return rio__error_set(err, -ENOMEM, item, UNK, UNK, NULL);
		snprintf(mkey, n, "%s%s", u->key, RIO__MANIFEST_SUFFIX);
		rc = expand_manifest(v, u, mkey, err);
		free(mkey);
		return rc;
	}
	if (p.dir && p.shards.n) {
		rc = rio__error_set(err, -EINVAL, item, UNK, UNK,
		                    "both a \"directory\" and the PREFIX of shards (%s); write '%s/' "
		                    "for the objects under it or '%s-*' for the shards",
		                    p.shards.f[0].path, item, item);
		probe_free(&p);
		return rc;
	}
	if (p.dir) {
		probe_free(&p);
		rio__url d = *u;
		size_t n = strlen(u->key) + 2;
		char *key = malloc(n), *text = malloc(strlen(item) + 2);
		if (!key || !text) {
			free(key);
			free(text);
			return rio__error_set(err, -ENOMEM, item, UNK, UNK, NULL);
		}
		snprintf(key, n, "%s/", u->key);
		snprintf(text, strlen(item) + 2, "%s/", item);
		d.key = key;
		rc = expand_dir(v, &d, text, err);
		free(key);
		free(text);
		return rc;
	}
	if (p.shards.n)
		return rio__set_found_push(&p.shards, v, item, err);
	probe_free(&p);
	if (in_list)
		return rio__error_set(err, -ENOENT, item, UNK, UNK, "no such object");
	return rio__error_set(err, RIO_ENOSHARDS, item, UNK, UNK,
	                      "neither an object, a set's manifest, a \"directory\" nor the "
	                      "PREFIX of PREFIX-SSSSS-of-NNNNN shards");
}

int rio__set_expand_url(struct rio__setvec *v, const char *item, int in_list, rio_error *err)
{
	rio__url u;
	int rc = rio__url_parse(item, &u, err);
	if (rc == 0 && u.kind == RIO__URL_HTTP) {
		rc = rio__setvec_push(v, item, 0);
		if (rc < 0)
			rio__error_set(err, rc, item, UNK, UNK, NULL);
	} else if (rc == 0 && (rc = client(v, err)) == 0) {
		size_t n = strlen(u.key);
		if (n == 0 || u.key[n - 1] == '/')
			rc = expand_dir(v, &u, item, err);
		else if (rio__set_has_glob(u.key))
			rc = expand_glob(v, &u, item, err);
		else
			rc = expand_key(v, &u, item, in_list, err);
	}
	rio__url_free(&u);
	return rc;
}

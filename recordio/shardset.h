/*
 * shardset.h — the parts of the shard set expansion (shardset.c) that the
 * expansion of URLs (remote/shardset_url.c) shares: shard names taken
 * apart, the growing result with the sources that listed each path (for
 * the completeness check), and the filters every listing applies. The
 * rules themselves are in shardset.c's top comment.
 */
#ifndef RIO_SHARDSET_H
#define RIO_SHARDSET_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* A parsed shard name; the pointers and lengths refer to the parsed path. */
struct rio__shard_name {
	size_t prefix_len;   /* bytes of the path before "-SSSSS-of-NNNNN"    */
	uint32_t index, count;
	int index_width;     /* digits of SSSSS as written                    */
	const char *count_digits;
	int count_width;
	const char *suffix;  /* what follows NNNNN: "" or ".something"        */
};

/* The last path component must match .*-(\d+)-of-(\d+)(\..*)?$ with
 * index < count: 1 with *sn filled, else 0. */
int rio__shard_name_parse(const char *path, struct rio__shard_name *sn);

/* An item that lists files (a glob, a PREFIX or a directory), kept so that
 * the completeness check can ask whether it would have listed an absent
 * shard. */
enum rio__set_source_kind { RIO__SET_GLOB, RIO__SET_PREFIX, RIO__SET_DIR };

struct rio__set_source {
	enum rio__set_source_kind kind;
	char *text; /* the pattern; the PREFIX; the directory with its '/' */
};

struct rio__setvec {
	char **paths;
	size_t *source;          /* per path: 0, named one by one; else k+1,
	                          * listed by sources[k]                  */
	size_t n, cap;
	struct rio__set_source *sources;
	size_t nsources;
	struct rio__remote *remote; /* the client URL items list with (made
	                          * at the first), or NULL                */
	int remote_borrowed;     /* remote is the caller's: not closed     */
	const rio_remote_opts *remote_opts; /* its options (NULL: defaults) */
};

void rio__setvec_free(struct rio__setvec *v);

/* rio_shardset_expand_remote, listing through the client r (the caller's,
 * left open), so that r keeps what the listings gave when it keeps
 * listed objects (remote/remote.h: rio__remote_keep_listed). */
int rio__shardset_expand_with(const char *spec, rio_shardset *set, struct rio__remote *r,
                              rio_error *err);
/* Records a source "text" + "tail"; returns its number for
 * rio__setvec_push (>= 1) or -ENOMEM. */
long rio__setvec_add_source(struct rio__setvec *v, enum rio__set_source_kind kind,
                            const char *text, const char *tail);
/* Appends a copy of `path`, listed by source number `source` (0: named). */
int rio__setvec_push(struct rio__setvec *v, const char *path, size_t source);

/* The shards a PREFIX lists, gathered then pushed in index order. */
struct rio__set_found {
	struct {
		char *path;
		uint32_t index;
	} *f;
	size_t n, cap;
};
/* When `name` (a last path component) is base-SSSSS-of-NNNNN with a
 * suffix a PREFIX takes (rio__set_suffix_ok): 1 with *index, else 0. */
int rio__set_prefix_member(const char *name, const char *base, uint32_t *index);
/* Adds a copy of `path`, shard `index`: 0 or -ENOMEM. */
int rio__set_found_add(struct rio__set_found *fl, const char *path, uint32_t index);
/* Pushes what was found sorted by index, listed by the PREFIX `prefix`
 * (nothing found: nothing pushed), and frees fl. 0, or an error named
 * after the prefix. */
int rio__set_found_push(struct rio__set_found *fl, struct rio__setvec *v, const char *prefix,
                        rio_error *err);

/* The last component of a path ("" after a final '/'). */
const char *rio__set_basename(const char *path);
int rio__set_ends_with(const char *s, const char *tail);
/* A glob: '*', '?' or '['. */
int rio__set_has_glob(const char *s);
/* Names a glob, a directory or a listing never lists: hidden ones
 * (temporaries, staging files), index sidecars, commit journals and set
 * manifests. */
int rio__set_listed_name(const char *name);
/* The suffixes a PREFIX form accepts after -SSSSS-of-NNNNN. */
int rio__set_suffix_ok(const char *suffix);

/* remote/shardset_url.c: a URL item (s3:// or http(s)://) of a
 * specification, expanded as a local one is (shardset.c's top comment). */
int rio__set_expand_url(struct rio__setvec *v, const char *item, int in_list, rio_error *err);

#endif /* RIO_SHARDSET_H */

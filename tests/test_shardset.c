/*
 * test_shardset.c — shard names and shard set expansion.
 *
 * Known answers for rio_shard_name_parse/format, then every form of a shard
 * specification (glob, list, existing file, directory, PREFIX) and every
 * error path (missing shard, mixed counts, duplicates, nothing matching, a
 * missing list item, an empty or ambiguous directory, an interrupted
 * commit's journal) on small trees of empty files built in the scratch
 * directory. Each
 * test works in its own subdirectory so that globs see only its files.
 */
#include "recordio.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* A fresh subdirectory of the scratch directory; returns its path. */
static const char *mkdir_sub(const char *name)
{
	const char *dir = tu_path(name);
	if (mkdir(dir, 0755)) {
		perror(dir);
		exit(99);
	}
	return dir;
}

/* dir + "/" + name in a rotating static buffer. */
static const char *in(const char *dir, const char *name)
{
	static char bufs[8][600];
	static int slot;
	char *b = bufs[slot++ & 7];
	snprintf(b, 600, "%s/%s", dir, name);
	return b;
}

static void touch(const char *dir, const char *name)
{
	tu_write_file(in(dir, name), "x", 1);
}

/* Expands and checks the error code; on success the set is left for the
 * caller to inspect and free. */
static int expand(const char *spec, rio_shardset *set, rio_error *err)
{
	memset(err, 0x55, sizeof *err); /* garbage: expand must fill it */
	set->count = 7;                 /* garbage: expand must zero it on error */
	set->paths = (char **)err;
	return rio_shardset_expand(spec, set, err);
}

static void assert_failed(const rio_shardset *set, const rio_error *err, int code)
{
	CU_ASSERT_EQUAL(err->code, code);
	CU_ASSERT_EQUAL(set->count, 0);
	CU_ASSERT_PTR_NULL(set->paths);
}

/* ---- names ------------------------------------------------------------------ */

static void test_parse_known(void)
{
	uint32_t i = 99, n = 99;
	CU_ASSERT_EQUAL(rio_shard_name_parse("train-00000-of-00008.tfrecord", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 0);
	CU_ASSERT_EQUAL(n, 8);
	CU_ASSERT_EQUAL(rio_shard_name_parse("a/b/train-00007-of-00008.tfrecord.gz", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 7);
	CU_ASSERT_EQUAL(n, 8);
	/* TensorFlow's own ImageNet shards have no suffix at all. */
	CU_ASSERT_EQUAL(rio_shard_name_parse("/data/imagenet/train-01023-of-01024", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 1023);
	CU_ASSERT_EQUAL(n, 1024);
	/* Any width of at least one digit. */
	CU_ASSERT_EQUAL(rio_shard_name_parse("x-3-of-10", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 3);
	CU_ASSERT_EQUAL(n, 10);
	CU_ASSERT_EQUAL(rio_shard_name_parse("x-0000012-of-100000.lz4", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 12);
	CU_ASSERT_EQUAL(n, 100000);
	/* Prefix holding dashes and "-of-" itself: the last match counts. */
	CU_ASSERT_EQUAL(rio_shard_name_parse("my-data-of-2020-00004-of-00005.tfrecord", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 4);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_EQUAL(rio_shard_name_parse("a-1-of-2.x-3-of-4", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 3);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(rio_shard_name_parse("a-1-of-2.x-3-of-4y", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 1);
	CU_ASSERT_EQUAL(n, 2);
	/* Only the basename counts: the directory's "-of-" is not a shard name. */
	CU_ASSERT_EQUAL(rio_shard_name_parse("run-00001-of-00002/x-00000-of-00001", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 0);
	CU_ASSERT_EQUAL(n, 1);
	/* NULL outputs are allowed. */
	CU_ASSERT_EQUAL(rio_shard_name_parse("t-00001-of-00002.tfrecord", NULL, NULL), 1);
}

static void test_parse_not_shards(void)
{
	static const char *const bad[] = {
		"train.tfrecord",
		"train-00000.tfrecord",
		"train-00008-of-00008.tfrecord", /* index == count */
		"train-00009-of-00008.tfrecord", /* index > count */
		"train-00000-of-00000",
		"train-00000-of-00008_final.tfrecord",
		"train-00000-of-00008x",
		"train-0000a-of-00008.tfrecord",
		"train--of-00008",
		"train-00001-of-",
		"00001-of-00002", /* no '-' before the index */
		"x-1-of-99999999999",      /* count overflows 32 bits */
		"x-4294967296-of-4294967297",
		"run-00001-of-00002/train.tfrecord",
		"run-00001-of-00002/",
		"",
		NULL,
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		uint32_t i = 77, n = 77;
		CU_ASSERT_EQUAL(rio_shard_name_parse(bad[k], &i, &n), 0);
		if (bad[k] && rio_shard_name_parse(bad[k], &i, &n))
			fprintf(stderr, "wrongly parsed: %s\n", bad[k]);
	}
	uint32_t i, n;
	CU_ASSERT_EQUAL(rio_shard_name_parse("x-4294967294-of-4294967295", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 4294967294u);
	CU_ASSERT_EQUAL(n, 4294967295u);
	/* The shortest: an empty prefix. */
	i = n = 77;
	CU_ASSERT_EQUAL(rio_shard_name_parse("-0-of-1", &i, &n), 1);
	CU_ASSERT_EQUAL(i, 0);
	CU_ASSERT_EQUAL(n, 1);
}

static void test_format_known(void)
{
	char buf[128];
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, sizeof buf, "data/train", 3, 8,
	                                      RIO_COMPRESSION_NONE),
	                34);
	CU_ASSERT_STRING_EQUAL(buf, "data/train-00003-of-00008.tfrecord");
	CU_ASSERT(rio_shard_name_format(buf, sizeof buf, "t", 0, 1, RIO_COMPRESSION_GZIP) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "t-00000-of-00001.tfrecord.gz");
	CU_ASSERT(rio_shard_name_format(buf, sizeof buf, "t", 9, 10, RIO_COMPRESSION_ZLIB) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "t-00009-of-00010.tfrecord.zz");
	CU_ASSERT(rio_shard_name_format(buf, sizeof buf, "t", 5, 100000, RIO_COMPRESSION_LZ4) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "t-00005-of-100000.tfrecord.lz4");

	/* Round trip. */
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t i, n;
		CU_ASSERT(rio_shard_name_format(buf, sizeof buf, "a-of-b/x", k, 4,
		                                (rio_compression)k) > 0);
		CU_ASSERT_EQUAL(rio_shard_name_parse(buf, &i, &n), 1);
		CU_ASSERT_EQUAL(i, k);
		CU_ASSERT_EQUAL(n, 4);
	}

	/* Exactly fitting, one byte short, no room at all. */
	const char *want = "p-00001-of-00002.tfrecord";
	size_t len = strlen(want);
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, len + 1, "p", 1, 2, RIO_COMPRESSION_NONE),
	                (int)len);
	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, len, "p", 1, 2, RIO_COMPRESSION_NONE),
	                -ENAMETOOLONG);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, 0, "p", 1, 2, RIO_COMPRESSION_NONE),
	                -ENAMETOOLONG);
	/* A name that could not parse back. */
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, sizeof buf, "p", 2, 2, RIO_COMPRESSION_NONE),
	                -EINVAL);
	CU_ASSERT_EQUAL(rio_shard_name_format(buf, sizeof buf, NULL, 0, 2, RIO_COMPRESSION_NONE),
	                -EINVAL);
}

/* ---- forms ------------------------------------------------------------------ */

static void test_glob_sorted(void)
{
	const char *d = mkdir_sub("glob");
	touch(d, "c.tfrecord");
	touch(d, "a.tfrecord");
	touch(d, "b.tfrecord");
	touch(d, "B.tfrecord"); /* strcmp order: uppercase first, whatever the locale */
	touch(d, "a.txt");
	CU_ASSERT_EQUAL(mkdir(in(d, "dir.tfrecord"), 0755), 0); /* not a regular file */
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "*.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL(err.code, 0);
	CU_ASSERT_STRING_EQUAL(err.message, "");
	CU_ASSERT_EQUAL_FATAL(set.count, 4);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "B.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "a.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "b.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[3], in(d, "c.tfrecord"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL(set.count, 0);
	CU_ASSERT_PTR_NULL(set.paths);

	/* '?' and '[' are globs too. */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "[ab].tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 2);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "a.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "b.tfrecord"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "?.t*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 5);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "B.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "a.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "a.txt"));
	CU_ASSERT_STRING_EQUAL(set.paths[3], in(d, "b.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[4], in(d, "c.tfrecord"));
	rio_shardset_free(&set);
}

static void test_glob_shards_sorted(void)
{
	const char *d = mkdir_sub("globshards");
	char name[64];
	/* Created out of order; the index fills 3 digits on purpose so that
	 * "train-10-of-12" would sort before "train-2-of-12" without padding. */
	static const int order[] = {7, 2, 11, 0, 5, 9, 1, 10, 3, 6, 8, 4};
	for (size_t k = 0; k < 12; k++) {
		snprintf(name, sizeof name, "train-%05d-of-00012.tfrecord", order[k]);
		touch(d, name);
	}
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 12);
	for (uint32_t k = 0; k < 12; k++) {
		uint32_t i, n;
		CU_ASSERT_EQUAL(rio_shard_name_parse(set.paths[k], &i, &n), 1);
		CU_ASSERT_EQUAL(i, k);
		CU_ASSERT_EQUAL(n, 12);
	}
	rio_shardset_free(&set);
}

static void test_list_order(void)
{
	const char *d = mkdir_sub("list");
	touch(d, "a.tfrecord");
	touch(d, "b.tfrecord");
	touch(d, "c.tfrecord");
	rio_shardset set;
	rio_error err;
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s,%s", in(d, "c.tfrecord"), in(d, "a.tfrecord"),
	         in(d, "b.tfrecord"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "c.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "a.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "b.tfrecord"));
	rio_shardset_free(&set);

	/* A glob item expands sorted in its place; empty items are skipped. */
	snprintf(spec, sizeof spec, "%s,,%s,", in(d, "c.tfrecord"), in(d, "[ba].tfrecord"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "c.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "a.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "b.tfrecord"));
	rio_shardset_free(&set);

	/* A list of nothing. */
	CU_ASSERT_EQUAL(expand(",,", &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
}

static void test_list_of_prefixes(void)
{
	const char *d = mkdir_sub("listprefix");
	touch(d, "train-00000-of-00002.tfrecord");
	touch(d, "train-00001-of-00002.tfrecord");
	touch(d, "extra-00000-of-00001.tfrecord.gz");
	rio_shardset set;
	rio_error err;
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "extra"), in(d, "train"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "extra-00000-of-00001.tfrecord.gz"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "train-00000-of-00002.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00001-of-00002.tfrecord"));
	rio_shardset_free(&set);
}

static void test_prefix_suffixes(void)
{
	const char *d = mkdir_sub("prefix");
	touch(d, "train-00003-of-00004.tfrecord.lz4");
	touch(d, "train-00001-of-00004.tfrecord.gz");
	touch(d, "train-00000-of-00004.tfrecord");
	touch(d, "train-00002-of-00004.tfrecord.zz");
	/* Never part of the set: */
	touch(d, "train-00000-of-00004.tfrecord.idx");
	touch(d, "train-00001-of-00004.tfrecord.gz.idx");
	touch(d, ".train-00002-of-00004.tfrecord.Ab12Cd.tmp");
	touch(d, "train-00003-of-00004.tfrecord.bak");
	touch(d, "trainx-00000-of-00001.tfrecord"); /* another prefix */
	touch(d, "train.tfrecord");
	touch(d, "other-train-00000-of-00004.tfrecord");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 4);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "train-00000-of-00004.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "train-00001-of-00004.tfrecord.gz"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00002-of-00004.tfrecord.zz"));
	CU_ASSERT_STRING_EQUAL(set.paths[3], in(d, "train-00003-of-00004.tfrecord.lz4"));
	rio_shardset_free(&set);
}

/* A dangling symlink in the directory is not a read error of the listing
 * (a failed stat once left errno set and failed the whole PREFIX). */
static void test_prefix_with_dangling_symlink(void)
{
	const char *d = mkdir_sub("dangling");
	touch(d, "set-00000-of-00002.tfrecord");
	touch(d, "set-00001-of-00002.tfrecord");
	CU_ASSERT_EQUAL_FATAL(symlink(in(d, "nowhere"), in(d, "aaa-dangling")), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(in(d, "nowhere"), in(d, "set-zzz")), 0);
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "set"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 2);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "set-00000-of-00002.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "set-00001-of-00002.tfrecord"));
	rio_shardset_free(&set);
}

static void test_prefix_plain_names(void)
{
	/* TensorFlow's ImageNet layout: no suffix; also ".tfrecords". */
	const char *d = mkdir_sub("plain");
	touch(d, "train-00001-of-00003");
	touch(d, "train-00000-of-00003");
	touch(d, "train-00002-of-00003");
	touch(d, "train-00002-of-00003.idx");
	touch(d, "val-00000-of-00002.tfrecords");
	touch(d, "val-00001-of-00002.tfrecords.gz");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "train-00000-of-00003"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00002-of-00003"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "val"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 2);
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "val-00001-of-00002.tfrecords.gz"));
	rio_shardset_free(&set);
}

static void test_glob_excludes_idx_and_tmp(void)
{
	const char *d = mkdir_sub("exclude");
	touch(d, "s-00000-of-00002.tfrecord");
	touch(d, "s-00000-of-00002.tfrecord.idx");
	touch(d, "s-00001-of-00002.tfrecord");
	touch(d, "s-00001-of-00002.tfrecord.idx");
	touch(d, ".s-00001-of-00002.tfrecord.XyZ123.tmp");
	touch(d, ".hidden");
	rio_shardset set;
	rio_error err;
	/* ".*" matches hidden files explicitly; they are still left out. */
	char spec[1024];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "*"), in(d, ".*"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, ".*")));

	CU_ASSERT_EQUAL_FATAL(expand(in(d, "*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 2);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "s-00000-of-00002.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "s-00001-of-00002.tfrecord"));
	rio_shardset_free(&set);

	/* A glob that finds only sidecars finds nothing. */
	CU_ASSERT_EQUAL(expand(in(d, "*.idx"), &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
}

static void test_single_file(void)
{
	const char *d = mkdir_sub("single");
	touch(d, "a.tfrecord");
	touch(d, "train-00002-of-00008.tfrecord");
	touch(d, "odd,name*.tfrecord");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "a.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "a.tfrecord"));
	rio_shardset_free(&set);
	/* One shard of eight, named explicitly: taken as given. */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-00002-of-00008.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "train-00002-of-00008.tfrecord"));
	rio_shardset_free(&set);
	/* An existing file wins over list and glob syntax. */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "odd,name*.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "odd,name*.tfrecord"));
	rio_shardset_free(&set);
}

static void test_explicit_subset(void)
{
	/* An explicit list may pick some shards of a set ... */
	const char *d = mkdir_sub("subset");
	touch(d, "t-00001-of-00008.tfrecord");
	touch(d, "t-00005-of-00008.tfrecord");
	touch(d, "t-00002-of-00004.tfrecord");
	rio_shardset set;
	rio_error err;
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "t-00005-of-00008.tfrecord"),
	         in(d, "t-00001-of-00008.tfrecord"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 2);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "t-00005-of-00008.tfrecord"));
	rio_shardset_free(&set);
	/* ... but not mix two sets, nor name one shard twice. */
	snprintf(spec, sizeof spec, "%s,%s", in(d, "t-00005-of-00008.tfrecord"),
	         in(d, "t-00002-of-00004.tfrecord"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
	snprintf(spec, sizeof spec, "%s,%s", in(d, "t-00005-of-00008.tfrecord"),
	         in(d, "t-00005-of-00008.tfrecord"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
}

static void test_groups_across_items(void)
{
	/* Two globs make one complete set of 20; two prefixes in one glob are
	 * two groups, each checked on its own. */
	const char *d = mkdir_sub("groups");
	char name[64];
	for (int k = 0; k < 20; k++) {
		snprintf(name, sizeof name, "t-%05d-of-00020.tfrecord", k);
		touch(d, name);
	}
	touch(d, "v-00000-of-00001.tfrecord");
	rio_shardset set;
	rio_error err;
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "t-0001*"), in(d, "t-0000*"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 20);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "t-00010-of-00020.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[10], in(d, "t-00000-of-00020.tfrecord"));
	rio_shardset_free(&set);
	/* One glob alone reads what it matches: its pattern leaves out
	 * shards 0 to 9, which exist (no error may call them missing). */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "t-0001*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 10);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "t-00010-of-00020.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[9], in(d, "t-00019-of-00020.tfrecord"));
	rio_shardset_free(&set);

	CU_ASSERT_EQUAL_FATAL(expand(in(d, "*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 21);
	CU_ASSERT_STRING_EQUAL(set.paths[20], in(d, "v-00000-of-00001.tfrecord"));
	rio_shardset_free(&set);
	touch(d, "v-00000-of-00002.tfrecord"); /* v now mixes counts */
	CU_ASSERT_EQUAL(expand(in(d, "*"), &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
}

/* The shards named train-0000K-of-00004.tfrecord for K in `which` ("0123"). */
static const char *four_shards(const char *sub, const char *which)
{
	const char *d = mkdir_sub(sub);
	char name[64];
	for (const char *k = which; *k; k++) {
		snprintf(name, sizeof name, "train-0000%c-of-00004.tfrecord", *k);
		touch(d, name);
	}
	return d;
}

static void test_glob_subset(void)
{
	/* A glob whose pattern leaves shards out reads just what it matches,
	 * in shard order (doc/embeddings.md trains on shards 0-4 of 6). */
	const char *d = four_shards("globsubset", "0123");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-0000[0-2]-of-00004.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "train-00000-of-00004.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00002-of-00004.tfrecord"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-0000[!1]-of-00004.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "train-00002-of-00004.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00003-of-00004.tfrecord"));
	rio_shardset_free(&set);
	/* A glob and a file named one by one: the glob cannot match shard 2,
	 * which is left out, and shard 3 is named. */
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "train-0000[01]-of-00004.tfrecord"),
	         in(d, "train-00003-of-00004.tfrecord"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "train-00003-of-00004.tfrecord"));
	rio_shardset_free(&set);
}

static void test_glob_subset_missing(void)
{
	/* Shard 1 is absent: every glob that would match its name is refused,
	 * naming it, and no message names shard 3, which exists. */
	const char *d = four_shards("globsubsetmissing", "023");
	static const char *const patterns[] = {"train-0000[0-2]-of-00004.tfrecord", "train-*",
	                                       "*.tfrecord", "train-0000?-of-*"};
	rio_shardset set;
	rio_error err;
	char want[700];
	snprintf(want, sizeof want, "%s: missing shard: ", in(d, "train-00001-of-00004.tfrecord"));
	for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
		CU_ASSERT_EQUAL(expand(in(d, patterns[k]), &set, &err), RIO_EMISSINGSHARD);
		assert_failed(&set, &err, RIO_EMISSINGSHARD);
		CU_ASSERT_EQUAL(strncmp(err.message, want, strlen(want)), 0);
		CU_ASSERT_PTR_NULL(strstr(err.message, "train-00003"));
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "3 of 4 found"));
	/* The count is what the specification found, not what is there. */
	CU_ASSERT_EQUAL(expand(in(d, patterns[0]), &set, &err), RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "2 of 4 found"));
	/* A pattern that leaves shard 1 out is the user's choice. */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-0000[023]-of-00004.tfrecord"), &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 3);
	rio_shardset_free(&set);
	/* A directory under shard 1's name is there, but is no shard. */
	CU_ASSERT_EQUAL_FATAL(mkdir(in(d, "train-00001-of-00004.tfrecord"), 0755), 0);
	CU_ASSERT_EQUAL(expand(in(d, "train-*"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_EQUAL(strncmp(err.message, want, strlen(want)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not a regular file"));
}

static void test_absent_only_where_listed(void)
{
	/* A glob would never list an .idx, a hidden file or a name it does not
	 * match: a set whose shard 1 is only an .idx and a temporary is
	 * incomplete under "train-*" (naming the shard, not its sidecar) ... */
	const char *d = four_shards("listed", "023");
	touch(d, "train-00001-of-00004.tfrecord.idx");
	touch(d, ".train-00001-of-00004.tfrecord.Ab12Cd.tmp");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "train-*"), &set, &err), RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "train-00001-of-00004.tfrecord: missing")));
	/* ... and so it is for a PREFIX and a directory, which list all. */
	CU_ASSERT_EQUAL(expand(in(d, "train"), &set, &err), RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "train-00001-of-00004.tfrecord: missing")));
	char dir[700];
	snprintf(dir, sizeof dir, "%s/", d);
	CU_ASSERT_EQUAL(expand(dir, &set, &err), RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "train-00001-of-00004.tfrecord: missing"));
	/* A glob that found nothing of a set does not judge it: the named
	 * shards 0 and 2 with "v-*" (another set) beside them. */
	touch(d, "v-00000-of-00001.tfrecord");
	char spec[2048];
	snprintf(spec, sizeof spec, "%s,%s,%s", in(d, "train-00000-of-00004.tfrecord"),
	         in(d, "train-00002-of-00004.tfrecord"), in(d, "v-*"));
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 3);
	rio_shardset_free(&set);
}

static void test_absent_huge_count(void)
{
	/* One shard of a set of 4e9: a PREFIX names the next one at once; a
	 * glob that leaves the others out cannot be checked name by name and
	 * is refused naming the pattern; the file named alone is read. */
	const char *d = mkdir_sub("huge");
	touch(d, "x-0-of-4000000000");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "x"), &set, &err), RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "x-1-of-4000000000: missing shard")));
	CU_ASSERT_EQUAL(expand(in(d, "x-[0]-of-4000000000"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "x-[0]-of-4000000000: missing shard")));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "1 of the 4000000000 shards"));
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "x-0-of-4000000000"), &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 1);
	rio_shardset_free(&set);
}

/* ---- errors ----------------------------------------------------------------- */

static void test_missing_shard(void)
{
	const char *d = mkdir_sub("missing");
	char name[64];
	for (int k = 0; k < 8; k++)
		if (k != 3) {
			snprintf(name, sizeof name, "train-%05d-of-00008.tfrecord", k);
			touch(d, name);
		}
	rio_shardset set;
	rio_error err;
	char want[700];
	snprintf(want, sizeof want, "%s: missing shard", in(d, "train-00003-of-00008.tfrecord"));
	CU_ASSERT_EQUAL(expand(in(d, "train"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_EQUAL(strncmp(err.message, want, strlen(want)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "7 of 8"));

	CU_ASSERT_EQUAL(expand(in(d, "train-*.tfrecord"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_EQUAL(strncmp(err.message, want, strlen(want)), 0);

	/* The same with err NULL; the set starts as garbage (the failed calls
	 * above zeroed it already) and must still come back zeroed. */
	set.count = 7;
	set.paths = (char **)&set;
	CU_ASSERT_EQUAL(rio_shardset_expand(in(d, "train"), &set, NULL), RIO_EMISSINGSHARD);
	CU_ASSERT_EQUAL(set.count, 0);
	CU_ASSERT_PTR_NULL(set.paths);
}

static void test_missing_last_and_first(void)
{
	/* The name of a missing shard follows its siblings: suffix, widths. */
	const char *d = mkdir_sub("missing2");
	touch(d, "a-0-of-3.tfrecord.gz");
	touch(d, "a-1-of-3.tfrecord.gz");
	touch(d, "b-00001-of-00002.tfrecord.zz");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "a"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "a-2-of-3.tfrecord.gz: missing shard")));
	CU_ASSERT_EQUAL(expand(in(d, "b*"), &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(err.message, in(d, "b-00000-of-00002.tfrecord.zz: missing shard")));
}

static void test_mixed_counts(void)
{
	/* Leftovers of an earlier run with another shard count. */
	const char *d = mkdir_sub("mixed");
	touch(d, "train-00000-of-00002.tfrecord");
	touch(d, "train-00001-of-00002.tfrecord");
	touch(d, "train-00002-of-00004.tfrecord");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "train"), &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "-of-00002.tfrecord"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "train-00002-of-00004.tfrecord")));
	CU_ASSERT_EQUAL(expand(in(d, "*"), &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
}

static void test_duplicate_index(void)
{
	const char *d = mkdir_sub("dup");
	touch(d, "t-00000-of-00004.tfrecord");
	touch(d, "t-00001-of-00004.tfrecord");
	touch(d, "t-00002-of-00004.tfrecord");
	touch(d, "t-00003-of-00004.tfrecord");
	touch(d, "t-00003-of-00004.tfrecord.gz");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "t"), &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "t-00003-of-00004.tfrecord:")));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "t-00003-of-00004.tfrecord.gz")));
	CU_ASSERT_EQUAL(expand(in(d, "t-*"), &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
}

static void test_nothing_matches(void)
{
	const char *d = mkdir_sub("nothing");
	touch(d, "a.tfrecord");
	CU_ASSERT_EQUAL(mkdir(in(d, "sub"), 0755), 0);
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "train-*.tfrecord"), &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_EQUAL(strncmp(err.message, in(d, "train-*.tfrecord: no shards match"),
	                        strlen(in(d, "train-*.tfrecord: no shards match"))),
	                0);
	/* A prefix with no shards. */
	CU_ASSERT_EQUAL(expand(in(d, "train"), &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "train: no shards match")));
	/* A prefix in a directory that does not exist. */
	CU_ASSERT_EQUAL(expand(in(d, "none/train"), &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	/* An empty directory has no shards. */
	CU_ASSERT_EQUAL(expand(in(d, "sub"), &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	/* err may be NULL. */
	set.count = 7;
	set.paths = (char **)&set;
	CU_ASSERT_EQUAL(rio_shardset_expand(in(d, "zzz*"), &set, NULL), RIO_ENOSHARDS);
	CU_ASSERT_EQUAL(set.count, 0);
	CU_ASSERT_PTR_NULL(set.paths);
}

static void test_list_item_missing(void)
{
	const char *d = mkdir_sub("listmissing");
	touch(d, "a.tfrecord");
	rio_shardset set;
	rio_error err;
	char spec[2048], want[1024];
	snprintf(spec, sizeof spec, "%s,%s", in(d, "a.tfrecord"), in(d, "b.tfrecord"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), -ENOENT);
	assert_failed(&set, &err, -ENOENT);
	snprintf(want, sizeof want, "%s: %s", in(d, "b.tfrecord"), strerror(ENOENT));
	CU_ASSERT_STRING_EQUAL(err.message, want);
	CU_ASSERT_EQUAL(err.offset, UINT64_MAX);
	CU_ASSERT_EQUAL(err.record, UINT64_MAX);

	/* An empty directory in a list is named. */
	CU_ASSERT_EQUAL(mkdir(in(d, "sub"), 0755), 0);
	snprintf(spec, sizeof spec, "%s,%s", in(d, "sub"), in(d, "a.tfrecord"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "sub")));
	/* A trailing '/' on something that is not a directory. */
	snprintf(spec, sizeof spec, "%s/", in(d, "a.tfrecord"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), -ENOTDIR);
	assert_failed(&set, &err, -ENOTDIR);
	snprintf(spec, sizeof spec, "%s/", in(d, "none"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), -ENOENT);
	assert_failed(&set, &err, -ENOENT);

	/* A glob item finding nothing names the pattern. */
	snprintf(spec, sizeof spec, "%s,%s", in(d, "a.tfrecord"), in(d, "q*"));
	CU_ASSERT_EQUAL(expand(spec, &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "q*")));
}

static void test_bad_arguments(void)
{
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(NULL, &set, &err), -EINVAL);
	assert_failed(&set, &err, -EINVAL);
	CU_ASSERT_EQUAL(expand("", &set, &err), -EINVAL);
	assert_failed(&set, &err, -EINVAL);
	CU_ASSERT_EQUAL(rio_shardset_expand("x", NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(rio_shardset_expand("x", NULL, NULL), -EINVAL);
}

static void test_free(void)
{
	rio_shardset set;
	memset(&set, 0, sizeof set);
	rio_shardset_free(&set);
	rio_shardset_free(NULL);
	const char *d = mkdir_sub("free");
	touch(d, "a.tfrecord");
	CU_ASSERT_EQUAL_FATAL(rio_shardset_expand(in(d, "a.tfrecord"), &set, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "a.tfrecord"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL(set.count, 0);
	CU_ASSERT_PTR_NULL(set.paths);
	rio_shardset_free(&set); /* twice: the set was zeroed */
}

static void test_thousand_shards(void)
{
	const char *d = mkdir_sub("thousand");
	char name[64], prefix[600];
	/* Created in a scrambled order (37 is coprime to 1000). */
	for (uint32_t k = 0; k < 1000; k++) {
		int n = rio_shard_name_format(name, sizeof name, "big", (k * 37) % 1000, 1000,
		                              k % 2 ? RIO_COMPRESSION_GZIP : RIO_COMPRESSION_NONE);
		CU_ASSERT_FATAL(n > 0);
		touch(d, name);
		snprintf(name + n, sizeof name - (size_t)n, ".idx");
		touch(d, name);
	}
	snprintf(prefix, sizeof prefix, "%s", in(d, "big"));
	static const char *const patterns[] = {NULL, "big-*-of-01000.tfrecord*", "*"};
	for (size_t p = 0; p < 3; p++) {
		rio_shardset set;
		rio_error err;
		CU_ASSERT_EQUAL_FATAL(expand(p ? in(d, patterns[p]) : prefix, &set, &err), 0);
		CU_ASSERT_EQUAL_FATAL(set.count, 1000);
		for (uint32_t k = 0; k < 1000; k++) {
			uint32_t i = 0, n = 0;
			CU_ASSERT_EQUAL(rio_shard_name_parse(set.paths[k], &i, &n), 1);
			CU_ASSERT_EQUAL(i, k);
			CU_ASSERT_EQUAL(n, 1000);
			CU_ASSERT_EQUAL(strncmp(set.paths[k], prefix, strlen(prefix)), 0);
		}
		rio_shardset_free(&set);
	}
	/* Remove one in the middle: named in the error. */
	char gone[700];
	snprintf(gone, sizeof gone, "%s-00500-of-01000.tfrecord", prefix);
	int k500 = 0;
	for (uint32_t k = 0; k < 1000; k++)
		if ((k * 37) % 1000 == 500)
			k500 = (int)(k % 2);
	if (k500)
		strcat(gone, ".gz");
	CU_ASSERT_EQUAL_FATAL(remove(gone), 0);
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(prefix, &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "big-00500-of-01000.tfrecord"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "999 of 1000"));
}


/* ---- directories -------------------------------------------------------------- */

/* A directory is its regular files, sorted by strcmp, without .idx,
 * journals, hidden names and subdirectories; with or without its '/'. */
static void test_directory(void)
{
	const char *d = mkdir_sub("dir");
	touch(d, "b.tfrecord");
	touch(d, "a.tfrecord");
	touch(d, "a.tfrecord.idx");
	touch(d, "B.tfrecord.gz");
	touch(d, ".a.tfrecord.XXXXXX.tmp");
	touch(d, ".x.pack-1-00000.tfrecord");
	touch(d, "old.commit");
	CU_ASSERT_EQUAL(mkdir(in(d, "sub"), 0755), 0);
	touch(in(d, "sub"), "c.tfrecord");
	const char *specs[2] = {d, in(d, "")};
	for (int i = 0; i < 2; i++) {
		rio_shardset set;
		rio_error err;
		CU_ASSERT_EQUAL_FATAL(expand(specs[i], &set, &err), 0);
		CU_ASSERT_EQUAL_FATAL(set.count, 3);
		CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "B.tfrecord.gz"));
		CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "a.tfrecord"));
		CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "b.tfrecord"));
		rio_shardset_free(&set);
	}
}

/* TFX's layout: a split is a directory of data_tfrecord-SSSSS-of-NNNNN.gz,
 * checked for completeness as a PREFIX would be. */
static void test_directory_tfx(void)
{
	const char *d = mkdir_sub("tfx");
	touch(d, "data_tfrecord-00002-of-00003.gz");
	touch(d, "data_tfrecord-00000-of-00003.gz");
	touch(d, "data_tfrecord-00001-of-00003.gz");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(d, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "data_tfrecord-00000-of-00003.gz"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d, "data_tfrecord-00002-of-00003.gz"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(remove(in(d, "data_tfrecord-00001-of-00003.gz")), 0);
	CU_ASSERT_EQUAL(expand(d, &set, &err), RIO_EMISSINGSHARD);
	assert_failed(&set, &err, RIO_EMISSINGSHARD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, in(d, "data_tfrecord-00001-of-00003.gz")));
	/* the old set's shards beside the new one's disagree on the count */
	touch(d, "data_tfrecord-00001-of-00003.gz");
	touch(d, "data_tfrecord-00000-of-00002.gz");
	CU_ASSERT_EQUAL(expand(d, &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
}

/* Directories in a list, each expanded in place. */
static void test_directory_in_list(void)
{
	const char *d = mkdir_sub("dirlist");
	const char *d1 = mkdir_sub("dirlist/one"), *d2 = mkdir_sub("dirlist/two");
	touch(d1, "x.tfrecord");
	touch(d2, "y.tfrecord");
	touch(d, "z.tfrecord");
	char spec[2048];
	snprintf(spec, sizeof spec, "%s/,%s,%s", d2, in(d, "z.tfrecord"), d1);
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(spec, &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 3);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d2, "y.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[1], in(d, "z.tfrecord"));
	CU_ASSERT_STRING_EQUAL(set.paths[2], in(d1, "x.tfrecord"));
	rio_shardset_free(&set);
}

/* A name that is both a directory and a PREFIX of shards beside it. */
static void test_directory_ambiguous(void)
{
	const char *d = mkdir_sub("ambiguous");
	const char *sub = mkdir_sub("ambiguous/train");
	touch(sub, "inside.tfrecord");
	touch(d, "train-00000-of-00001.tfrecord");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(sub, &set, &err), -EINVAL);
	assert_failed(&set, &err, -EINVAL);
	CU_ASSERT_EQUAL(strncmp(err.message, sub, strlen(sub)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "both a directory and the PREFIX"));
	/* a trailing '/' says the directory, a glob the shards */
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train/"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(sub, "inside.tfrecord"));
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "train-*"), &set, &err), 0);
	CU_ASSERT_EQUAL_FATAL(set.count, 1);
	CU_ASSERT_STRING_EQUAL(set.paths[0], in(d, "train-00000-of-00001.tfrecord"));
	rio_shardset_free(&set);
}

/* Empty directories, and ones holding only what is never a shard. */
static void test_directory_empty(void)
{
	const char *d = mkdir_sub("emptydir");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(d, &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	char want[700];
	snprintf(want, sizeof want, "%s: %s: an empty directory", d, rio_strerror(RIO_ENOSHARDS));
	CU_ASSERT_STRING_EQUAL(err.message, want);
	touch(d, "a.tfrecord.idx");
	touch(d, ".hidden");
	CU_ASSERT_EQUAL(mkdir(in(d, "sub"), 0755), 0);
	CU_ASSERT_EQUAL(expand(d, &set, &err), RIO_ENOSHARDS);
	assert_failed(&set, &err, RIO_ENOSHARDS);
	CU_ASSERT_EQUAL(strncmp(err.message, d, strlen(d)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no shard files"));
}

/* ---- an interrupted commit: the journal PREFIX.commit ------------------------- */

/* While PREFIX.commit exists the set is refused however it is named: a
 * PREFIX, a glob, its files one by one, its directory. */
static void test_journal_refuses_set(void)
{
	const char *d = mkdir_sub("journal");
	touch(d, "t-00000-of-00002.tfrecord");
	touch(d, "t-00001-of-00002.tfrecord");
	touch(d, "u-00000-of-00001.tfrecord");
	touch(d, "t.commit");
	char list[2048], prefix[700], want[2048];
	snprintf(prefix, sizeof prefix, "%s", in(d, "t"));
	snprintf(list, sizeof list, "%s,%s", in(d, "u-00000-of-00001.tfrecord"),
	         in(d, "t-00001-of-00002.tfrecord"));
	snprintf(want, sizeof want,
	         "%s: %s: %s.commit remains; run 'recordio-pack --recover --output %s' to finish "
	         "the commit",
	         prefix, rio_strerror(RIO_EINCOMPLETESET), prefix, prefix);
	const char *specs[] = {prefix, in(d, "t-*"), list, d};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		rio_shardset set;
		rio_error err;
		CU_ASSERT_EQUAL(expand(specs[i], &set, &err), RIO_EINCOMPLETESET);
		assert_failed(&set, &err, RIO_EINCOMPLETESET);
		CU_ASSERT_STRING_EQUAL(err.message, want);
	}
	/* another set in the same directory is not affected */
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "u"), &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 1);
	rio_shardset_free(&set);
	/* the mixed counts an interrupted commit leaves are named as such too */
	touch(d, "t-00000-of-00004.tfrecord");
	CU_ASSERT_EQUAL(expand(prefix, &set, &err), RIO_EINCOMPLETESET);
	assert_failed(&set, &err, RIO_EINCOMPLETESET);
	/* without the journal they are still refused, as inconsistent names */
	CU_ASSERT_EQUAL_FATAL(remove(in(d, "t.commit")), 0);
	CU_ASSERT_EQUAL(expand(prefix, &set, &err), RIO_EBADSHARDNAME);
	assert_failed(&set, &err, RIO_EBADSHARDNAME);
	CU_ASSERT_EQUAL_FATAL(remove(in(d, "t-00000-of-00004.tfrecord")), 0);
	CU_ASSERT_EQUAL_FATAL(expand(prefix, &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 2);
	rio_shardset_free(&set);
}

/* A first commit interrupted before any shard got its name: only the
 * journal names the set. */
static void test_journal_without_shards(void)
{
	const char *d = mkdir_sub("journalonly");
	touch(d, "t.commit");
	touch(d, ".t.pack-1-00000.tfrecord");
	rio_shardset set;
	rio_error err;
	CU_ASSERT_EQUAL(expand(in(d, "t"), &set, &err), RIO_EINCOMPLETESET);
	assert_failed(&set, &err, RIO_EINCOMPLETESET);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "--recover --output"));
	/* a glob or a directory never lists the journal itself */
	touch(d, "a.tfrecord");
	CU_ASSERT_EQUAL_FATAL(expand(in(d, "*"), &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 1);
	rio_shardset_free(&set);
	CU_ASSERT_EQUAL_FATAL(expand(d, &set, &err), 0);
	CU_ASSERT_EQUAL(set.count, 1);
	rio_shardset_free(&set);
}

static const tu_test name_tests[] = {
	{"parse known answers", test_parse_known},
	{"parse rejects non-shard names", test_parse_not_shards},
	{"format known answers and limits", test_format_known},
	{NULL, NULL},
};

static const tu_test form_tests[] = {
	{"PREFIX beside a dangling symlink", test_prefix_with_dangling_symlink},
	{"glob is sorted by strcmp", test_glob_sorted},
	{"glob of shards is in shard order", test_glob_shards_sorted},
	{"list keeps its order", test_list_order},
	{"list of prefixes", test_list_of_prefixes},
	{"prefix across suffixes", test_prefix_suffixes},
	{"prefix of suffix-less and .tfrecords shards", test_prefix_plain_names},
	{"glob leaves out .idx and hidden files", test_glob_excludes_idx_and_tmp},
	{"a single existing file", test_single_file},
	{"explicit subset of a set", test_explicit_subset},
	{"groups checked over the whole set", test_groups_across_items},
	{"a glob's pattern picks a subset", test_glob_subset},
	{"a glob's pattern picks a subset, one shard absent", test_glob_subset_missing},
	{"absent only where an item would list it", test_absent_only_where_listed},
	{"a set too large to check against a glob", test_absent_huge_count},
	{"1000 shards", test_thousand_shards},
	{"free", test_free},
	{"directory", test_directory},
	{"TFX split directory", test_directory_tfx},
	{"directories in a list", test_directory_in_list},
	{NULL, NULL},
};

static const tu_test error_tests[] = {
	{"missing shard named", test_missing_shard},
	{"missing first and last shard names", test_missing_last_and_first},
	{"mixed shard counts", test_mixed_counts},
	{"duplicate shard index", test_duplicate_index},
	{"nothing matches", test_nothing_matches},
	{"missing list item", test_list_item_missing},
	{"bad arguments", test_bad_arguments},
	{"directory and PREFIX: ambiguous", test_directory_ambiguous},
	{"empty directory", test_directory_empty},
	{"journal refuses the set", test_journal_refuses_set},
	{"journal without shards", test_journal_without_shards},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"shard names", name_tests},
	{"shard set forms", form_tests},
	{"shard set errors", error_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

/*
 * pack_s3.c — recordio-pack --output s3://BUCKET/PREFIX: the set is packed
 * as a local one (shard_out, its staging and commit) into a private
 * directory under $TMPDIR, then published to S3 as a whole by
 * rio_set_publish() (a new generation, then the manifest that names it:
 * doc/recordio-format.md, "Sets in S3"), and the local copy removed.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pack_s3_begin(const char *url, int replace, const rio_remote_opts *remote,
                  char **stage_prefix)
{
	*stage_prefix = NULL;
	rio_error err;
	if (rio_set_publish_check(url, replace, remote, &err) < 0) {
		if (err.code == -EEXIST)
			tool_error("%s (use --force to replace it)", err.message);
		else
			tool_error("%s", err.message);
		return -1;
	}
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	const char *base = strrchr(url, '/') + 1; /* checked: s3://B/.../BASE */
	size_t n = strlen(tmp) + strlen(base) + 40;
	char *dir = malloc(n);
	if (!dir) {
		tool_error("out of memory");
		return -1;
	}
	snprintf(dir, n, "%s/recordio-pack-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		tool_error("%s: cannot make the staging directory: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	size_t len = strlen(dir);
	snprintf(dir + len, n - len, "/%s", base);
	*stage_prefix = dir;
	return 0;
}

void pack_s3_cleanup(char *stage_prefix)
{
	if (!stage_prefix)
		return;
	char *slash = strrchr(stage_prefix, '/');
	*slash = '\0'; /* the directory mkdtemp made */
	DIR *d = opendir(stage_prefix);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) < 0)
			tool_error("%s/%s: cannot remove: %s", stage_prefix, e->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
	if (rmdir(stage_prefix) < 0 && errno != ENOENT)
		tool_error("%s: cannot remove: %s", stage_prefix, strerror(errno));
	free(stage_prefix);
}

int pack_s3_publish(const char *url, const char *stage_prefix, int replace,
                    const rio_remote_opts *remote, int quiet)
{
	rio_shardset set;
	rio_error err;
	if (rio_shardset_expand(stage_prefix, &set, &err) < 0) {
		tool_error("%s", err.message);
		return -1;
	}
	uint64_t generation;
	int rc = rio_set_publish(url, (const char *const *)set.paths, set.count, replace, remote,
	                         &generation, &err);
	if (rc < 0)
		tool_error("%s", err.message);
	else if (!quiet)
		printf("published %s: generation %" PRIu64 ", %zu shard%s under %s.g%06" PRIu64 "/\n",
		       url, generation, set.count, set.count == 1 ? "" : "s", url, generation);
	rio_shardset_free(&set);
	return rc < 0 ? -1 : 0;
}

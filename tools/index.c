/*
 * index.c — recordio-index: write the .idx sidecar of shards.
 *
 * For each shard, rio_index_build() reads every record (checking both CRCs,
 * decompressing .gz/.zz/.lz4 as a stream) and rio_index_write() writes
 * SHARD.idx atomically: one "<offset> <framed size>" line per record, the
 * format of DALI's tfrecord2idx and of the Python `tfrecord` package, with
 * offsets in the uncompressed stream. A damaged shard gets no sidecar: an
 * index that stops early would silently hide the records after the damage.
 * An existing sidecar is kept unless --force is given. Shards in S3 (and
 * at http(s):// URLs, read only) are read, and their sidecars written
 * next to them, with the --remote-* options.
 */
#include "config.h"
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [OPTION]... FILE...\n"
	        "Write SHARD.idx for each TFRecord shard (plain, .gz, .zz or .lz4): one line\n"
	        "\"<offset> <framed size>\" per record, offsets in the uncompressed stream\n"
	        "(the format of DALI's tfrecord2idx). Every CRC is checked on the way; a\n"
	        "damaged shard gets no index.\n"
	        "Each FILE may be a shard, a glob, a comma-separated list, a directory or a\n"
	        "PREFIX; a pipe, a FIFO or '-' is refused: an index sits beside a shard file.\n"
	        TOOL_SHARDS_SUBSET_HELP
	        "\n"
	        "  -f, --force   replace an existing .idx\n"
	        "  -q, --quiet   print only errors\n"
	        "  -h, --help    show this help and exit\n"
	        "\n"
	        TOOL_REMOTE_HELP
	        "\n"
	        "Exit status: 0 every index written, 1 a shard damaged or unreadable, an\n"
	        "index existing (without --force) or not writable, 2 usage error.\n",
	        tool_name);
}

/* Indexes one shard, a URL's with `remote`; returns EXIT_OK or EXIT_DATA. */
static int index_one(const char *path, int force, int quiet, const rio_remote_opts *remote)
{
	if (tool_is_stream(path)) {
		/* the index sits beside its shard and lists offsets into it:
		 * only a file that stays can have one */
		tool_error("%s: not a regular file (a pipe, FIFO or device): an index lists "
		           "offsets into a shard file beside it; save the stream to a file first",
		           tool_input_name(path));
		return EXIT_DATA;
	}
	char *ipath = rio_index_path(path);
	if (!ipath) {
		tool_error("%s: %s", path, rio_strerror(-ENOMEM));
		return EXIT_DATA;
	}
	rio_error err;
	memset(&err, 0, sizeof err);
	int rc = force ? 0 : rio_path_exists(ipath, remote, &err);
	if (rc != 0) {
		if (rc > 0)
			tool_error("%s: already exists (use --force to replace it)", ipath);
		else
			tool_error("%s", err.message[0] ? err.message : rio_strerror(rc));
		free(ipath);
		return EXIT_DATA;
	}
	rio_index idx = {0};
	rio_reader_opts ro;
	rio_reader_opts_init(&ro);
	ro.remote = *remote;
	rc = rio_index_build_opts(path, &ro, &idx, &err);
	if (rc < 0) {
		if (err.message[0] && strstr(err.message, path))
			tool_error("%s", err.message);
		else
			tool_error("%s: %s", path, err.message[0] ? err.message : rio_strerror(rc));
		rio_index_free(&idx);
		free(ipath);
		return EXIT_DATA;
	}
	memset(&err, 0, sizeof err);
	rc = rio_index_write_opts(ipath, &idx, remote, &err);
	if (rc < 0) {
		if (err.message[0])
			tool_error("%s", err.message);
		else
			tool_error("%s: %s", ipath, rio_strerror(rc));
	} else if (!quiet) {
		printf("wrote %s: %llu records\n", ipath, (unsigned long long)idx.count);
	}
	rio_index_free(&idx);
	free(ipath);
	return rc < 0 ? EXIT_DATA : EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		TOOL_REMOTE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	int force = 0, quiet = 0, opt;
	rio_remote_opts remote;
	rio_remote_opts_init(&remote);

	tool_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "fqh", longopts, NULL)) != -1) {
		if (tool_remote_option(opt, optarg, &remote))
			continue;
		switch (opt) {
		case 'f': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			tool_try_help(); /* getopt named the bad option */
		}
	}
	if (optind >= argc)
		tool_usage_error("no FILE given");

	/* Each shard on its own: one damaged shard does not stop the others. */
	int status = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		rio_shardset set;
		if (tool_expand_shards(argv[i], &set, &remote) < 0) {
			status = EXIT_DATA;
			continue;
		}
		for (size_t k = 0; k < set.count; k++) {
			if (index_one(set.paths[k], force, quiet, &remote) != EXIT_OK)
				status = EXIT_DATA;
			fflush(stdout);
		}
		rio_shardset_free(&set);
	}
	if (tool_flush_stdout() < 0)
		status = EXIT_DATA;
	return status;
}

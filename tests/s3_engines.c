/*
 * s3_engines.c — tests/s3_coalesce.sh's helper: opens one loader on the
 * shards named by argv[1] (globally shuffled, batches of argv[2] records,
 * 2 workers), reads one epoch, and prints the records read and how many
 * remote clients' engine threads the process has then (threads named
 * "rio-remote", recordio/remote/engine.h, in /proc/self/task):
 * "records N engines M". A loader's shards share one client (loader/
 * source.h's context), so M is 1 however many remote shards it reads.
 * Exits 1 with the loader's message when it fails.
 */
#include "config.h"
#include "loader.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The threads of this process named `name`. */
static int threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], comm[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		n += strcmp(comm, name) == 0;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: s3_engines SHARDS BATCH\n");
		return 2;
	}
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.seed = 5;
	o.batch_size = (size_t)strtoul(argv[2], NULL, 10);
	o.workers = 2;
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, argv[1], &o);
	uint64_t records = 0;
	rio_batch *b;
	while (rc >= 0 && (rc = rio_loader_next(l, &b)) == 1) {
		records += b->count;
		rio_loader_release(l, b);
	}
	if (rc < 0) {
		fprintf(stderr, "s3_engines: %s\n", l ? rio_loader_error(l)->message : "out of memory");
		rio_loader_close(l);
		return 1;
	}
	printf("records %llu engines %d\n", (unsigned long long)records, threads_named("rio-remote"));
	rio_loader_close(l);
	return 0;
}

/*
 * s3_resume.c — tests/s3_coalesce.sh's helper: reads the shards named by
 * argv[1] in shard order (batches of argv[2] records, 2 workers, parts of
 * 64 KiB: remote shards are then read ahead in many parts, loader/parts.c),
 * argv[3] batches of the first epoch, saves the loader's state and closes
 * it mid-epoch (its parts still in flight), then opens a new loader,
 * restores the state (its parts from the batch resumed at on) and reads
 * the rest of the epoch. Prints "<shard> <index> <first bytes>" for every
 * record delivered, so that the run from S3 can be compared with the one
 * from the local copy. Exits 1 with the loader's message when it fails.
 */
#include "config.h"
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>

static int open_loader(rio_loader **l, const char *shards, size_t batch)
{
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	o.shuffle = RIO_SHUFFLE_NONE;
	o.batch_size = batch;
	o.workers = 2;
	o.remote.part_size = 64 * 1024;
	return rio_loader_open(l, shards, &o);
}

/* Prints up to `most` batches of l's epoch: 1 after `most`, 0 at the
 * epoch's end, or a negative error. */
static int print_batches(rio_loader *l, long most)
{
	rio_batch *b;
	int rc = 0;
	for (long n = 0; n < most && (rc = rio_loader_next(l, &b)) == 1; n++) {
		for (size_t i = 0; i < b->count; i++) {
			const rio_batch_record *r = &b->records[i];
			printf("%u %llu %.*s\n", (unsigned)r->shard, (unsigned long long)r->index,
			       (int)(r->size < 13 ? r->size : 13), (const char *)r->data);
		}
		rio_loader_release(l, b);
	}
	return rc;
}

static int failed(rio_loader *l, int rc)
{
	fprintf(stderr, "s3_resume: %s (%d)\n", l ? rio_loader_error(l)->message : "no loader", rc);
	rio_loader_close(l);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: s3_resume SHARDS BATCH AFTER\n");
		return 2;
	}
	size_t batch = (size_t)strtoul(argv[2], NULL, 10);
	long after = strtol(argv[3], NULL, 10);
	rio_loader *l = NULL;
	int rc = open_loader(&l, argv[1], batch);
	if (rc == 0)
		rc = print_batches(l, after);
	if (rc < 0)
		return failed(l, rc);
	unsigned char state[4096];
	int n = rio_loader_state_save(l, state, sizeof state);
	if (n < 0 || (size_t)n > sizeof state)
		return failed(l, n < 0 ? n : -1);
	rio_loader_close(l); /* mid-epoch: what it read ahead is dropped */
	l = NULL;
	if ((rc = open_loader(&l, argv[1], batch)) == 0 &&
	    (rc = rio_loader_state_restore(l, state, (size_t)n)) == 0)
		rc = print_batches(l, 1L << 40);
	if (rc < 0)
		return failed(l, rc);
	rio_loader_close(l);
	return 0;
}

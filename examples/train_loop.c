/*
 * train_loop.c — the skeleton of a training loop fed by the recordio loader.
 *
 * What: opens a loader over TFRecord shards, runs a number of epochs of
 * batches, and, where a trainer would run a step, adds each batch into a
 * checksum: the sum of the last --decode column's values when that column is
 * an int64 one (conventionally the label), else the sum of the CRC-32C of
 * each row (or, for raw records, of each payload). Sums do not depend on the
 * order, so every epoch of the same data prints the same checksum whatever
 * the shuffle. After the first epoch it saves the loader's position to a
 * file; started again with --resume FILE it carries on from there.
 *
 * Why: it is the part a user copies into a trainer: options, the spec of
 * the dense columns, the epoch loop with next/release, error handling, a
 * checkpoint of the data position, and the stats. It uses only the
 * installed headers and library:
 *
 *   cc -o train_loop train_loop.c $(pkg-config --cflags --libs recordio)
 *
 * Usage: train_loop [OPTION]... SHARDS
 *   SHARDS             a glob, a comma-separated list or a shard PREFIX
 *   --decode SPEC      dense columns "name:type:length[:scale],...", e.g.
 *                      image:u8:784,label:i64:1 (default: raw records)
 *   --batch N          records per batch (default 32)
 *   --epochs N         epochs to run (default 2)
 *   --shuffle MODE     none, buffer or global (default none)
 *   --seed N           shuffle seed (default 0)
 *   --state FILE       where to save the position after the first epoch
 *                      (default train_loop.state)
 *   --resume FILE      start from a position saved by --state
 * Exits 0, 1 on a data error (message on stderr), 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loader.h> /* the loader; it includes recordio.h */

static const char *prog = "train_loop";

static void usage_error(const char *what)
{
	fprintf(stderr,
	        "%s: %s\n"
	        "Usage: %s [--decode SPEC] [--batch N] [--epochs N] [--shuffle none|buffer|global]\n"
	        "       [--seed N] [--state FILE] [--resume FILE] SHARDS\n",
	        prog, what, prog);
	exit(2);
}

/* A whole decimal number, or a usage error naming the option. */
static uint64_t parse_count(const char *text, const char *option)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-') {
		fprintf(stderr, "%s: %s: not a number: '%s'\n", prog, option, text);
		exit(2);
	}
	return v;
}

/* Reports an error and exits 1. The loader's own message is complete: it
 * names the shard, the offset and the record when it knows them; `what`
 * says what was being done only when there is no such message. */
static void die(rio_loader *l, int rc, const char *what)
{
	const rio_error *e = l ? rio_loader_error(l) : NULL;
	if (e && e->message[0])
		fprintf(stderr, "%s: %s\n", prog, e->message);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, rio_strerror(rc));
	rio_loader_close(l);
	exit(1);
}

/* What a training step would consume; here, folded into the checksum. */
static uint64_t batch_checksum(const rio_batch *b)
{
	uint64_t sum = 0;
	if (b->ncolumns == 0) { /* raw records: views into the batch's memory */
		for (size_t i = 0; i < b->count; i++)
			sum += rio_crc32c(0, b->records[i].data, b->records[i].size);
		return sum;
	}
	/* decoded: b->count rows of `length` values each, row-major; hand
	 * col->host (or col->device with opts.device_copy) to the model */
	const rio_batch_column *col = &b->columns[b->ncolumns - 1];
	if (col->type == RIO_DTYPE_I64) {
		const int64_t *v = col->host;
		for (size_t i = 0; i < b->count * col->length; i++)
			sum += (uint64_t)v[i];
	} else {
		size_t row = col->length * rio_dtype_size(col->type);
		for (size_t i = 0; i < b->count; i++)
			sum += rio_crc32c(0, (const uint8_t *)col->host + i * row, row);
	}
	return sum;
}

/* Writes the loader's position (a small blob) to `path`. A trainer stores
 * it in its checkpoint, next to the model's weights. */
static void save_state(rio_loader *l, const char *path)
{
	int size = rio_loader_state_save(l, NULL, 0); /* size 0: how big? */
	if (size < 0)
		die(l, size, "saving the loader state");
	unsigned char *buf = malloc((size_t)size);
	if (!buf)
		die(l, -ENOMEM, "saving the loader state");
	int rc = rio_loader_state_save(l, buf, (size_t)size);
	if (rc < 0)
		die(l, rc, "saving the loader state");
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, (size_t)size, f) != (size_t)size || fclose(f) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		exit(1);
	}
	free(buf);
	printf("state saved to %s (%d bytes): next epoch %" PRIu64 "\n", path, size,
	       rio_loader_epoch(l));
}

/* Restores a position saved by save_state(). The loader refuses a state
 * saved over other data or with other options (RIO_ESTATE). */
static void resume_state(rio_loader *l, const char *path)
{
	unsigned char buf[4096];
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		rio_loader_close(l);
		exit(1);
	}
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	int rc = rio_loader_state_restore(l, buf, n);
	if (rc < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, rio_loader_error(l)->message);
		rio_loader_close(l);
		exit(1);
	}
	printf("resumed from %s: epoch %" PRIu64 "\n", path, rio_loader_epoch(l));
}

int main(int argc, char **argv)
{
	const char *decode = NULL, *state_path = "train_loop.state", *resume_path = NULL;
	uint64_t epochs = 2;

	/* Options start from the defaults; set only what you need. rank and
	 * world stay -1: taken from the environment of an MPI or Slurm job
	 * (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, ...), else 0 of 1. */
	rio_loader_opts o;
	rio_loader_opts_init(&o);

	static const struct option longopts[] = {
		{"decode", required_argument, NULL, 'd'}, {"batch", required_argument, NULL, 'b'},
		{"epochs", required_argument, NULL, 'e'}, {"shuffle", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},   {"state", required_argument, NULL, 'o'},
		{"resume", required_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': decode = optarg; break;
		case 'b': o.batch_size = parse_count(optarg, "--batch"); break;
		case 'e': epochs = parse_count(optarg, "--epochs"); break;
		case 'S': o.seed = parse_count(optarg, "--seed"); break;
		case 'o': state_path = optarg; break;
		case 'r': resume_path = optarg; break;
		case 's':
			if (strcmp(optarg, "none") == 0)
				o.shuffle = RIO_SHUFFLE_NONE;
			else if (strcmp(optarg, "buffer") == 0)
				o.shuffle = RIO_SHUFFLE_BUFFER; /* tf.data's scheme */
			else if (strcmp(optarg, "global") == 0)
				o.shuffle = RIO_SHUFFLE_GLOBAL; /* a full permutation */
			else
				usage_error("--shuffle: none, buffer or global");
			break;
		case 'h':
			printf("Usage: %s [--decode SPEC] [--batch N] [--epochs N]\n"
			       "       [--shuffle none|buffer|global] [--seed N] [--state FILE]\n"
			       "       [--resume FILE] SHARDS\n",
			       prog);
			return 0;
		default: usage_error("unknown option");
		}
	}
	if (optind != argc - 1)
		usage_error("one SHARDS argument expected");
	if (o.batch_size == 0)
		usage_error("--batch: at least 1");
	const char *shards = argv[optind];

	/* The columns to decode Examples into; without them batches hold the
	 * raw records. The specs must outlive the loader. */
	rio_column_spec *specs = NULL;
	size_t nspecs = 0;
	if (decode) {
		rio_error err;
		if (rio_column_spec_parse(decode, &specs, &nspecs, &err) < 0) {
			fprintf(stderr, "%s: --decode: %s\n", prog, err.message);
			return 2;
		}
		o.columns = specs;
		o.ncolumns = nspecs;
	}

	/* Open: finds the shards, reads their .idx sidecars (or scans them)
	 * and plans this rank's part. On failure l is still set, so its error
	 * can be read; die() closes it. */
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, shards, &o);
	if (rc < 0)
		die(l, rc, shards);
	if (resume_path)
		resume_state(l, resume_path);

	/* full_batches is what every rank of a world can deliver: a trainer
	 * with several ranks runs that many steps per epoch (so no collective
	 * waits on a rank that ran out) and then calls rio_loader_set_epoch().
	 * This example reads whole epochs, the short last batch included. */
	printf("rank %d of %d: %zu shards, %" PRIu64 " records per epoch, %" PRIu64
	       " full batches of %zu (%" PRIu64 " batches)\n",
	       rio_loader_rank(l), rio_loader_world(l), rio_loader_shards(l)->count,
	       rio_loader_records(l), rio_loader_full_batches(l), o.batch_size,
	       rio_loader_batches(l));

	/* The epoch loop. rio_loader_epoch() is where the loader stands: 0 on
	 * a fresh start, the saved epoch after --resume. */
	for (uint64_t epoch = rio_loader_epoch(l); epoch < epochs; epoch++) {
		uint64_t records = 0, batches = 0, sum = 0;
		rio_batch *b;
		/* 1: a batch; 0: the epoch ended; < 0: an error (a damaged
		 * record, an I/O error), after the batches before it. */
		while ((rc = rio_loader_next(l, &b)) == 1) {
			sum += batch_checksum(b); /* the training step goes here */
			records += b->count;
			batches++;
			/* Give the memory back as soon as the step is done with
			 * it: the loader fills batches ahead in a bounded pool. */
			rio_loader_release(l, b);
		}
		if (rc < 0)
			die(l, rc, "reading");
		printf("epoch %" PRIu64 ": %" PRIu64 " records, %" PRIu64 " batches, checksum %" PRIu64
		       "\n",
		       epoch, records, batches, sum);

		/* A checkpoint: after the first epoch the next batch is the
		 * first of epoch 1; a run started with --resume goes on from
		 * there with the same batches an uninterrupted one would get. */
		if (epoch == 0)
			save_state(l, state_path);
	}

	rio_loader_stats st;
	rio_loader_stats_get(l, &st);
	printf("stats: %" PRIu64 " records, %" PRIu64 " batches, %" PRIu64 " payload bytes, %" PRIu64
	       " skipped, %" PRIu64 " file bytes, %.3f s waiting, %s\n",
	       st.records, st.batches, st.bytes, st.skipped, st.file_bytes, st.wait_seconds,
	       st.io_uring ? "io_uring" : "pread");

	rio_loader_close(l);
	free(specs);
	return 0;
}

/*
 * fuzz_loader.c — libFuzzer target for the loader over a small set of
 * damaged shards, under --skip-damaged.
 *
 * The input picks the codec, the state of the .idx sidecars (none, true,
 * stale: another set's, cut short, empty), the number of records and a few
 * damages (a bit flipped anywhere in a file, a byte flipped in a record's
 * payload, the file cut short). Two shards are written, damaged, and read
 * by a loader in every shuffle mode, and by two ranks splitting the records.
 * Checks: every record delivered is one that was written, whole, at most
 * once; every mode gives the same counts (delivered, skipped, and whether
 * the epoch ended in an error), and two ranks together the counts of one;
 * nothing is lost without a count: undamaged shards deliver everything
 * (whatever their sidecars say; a compressed shard's records that its .idx
 * leaves out are counted as skipped, with a warning), and where the damage
 * leaves the frames countable (a true index, or one damage that is not a
 * cut), delivered + skipped is the number of records written.
 */
#include "fuzz_util.h"
#include "loader.h"
#include "recordio.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SHARDS 2
#define MAX_RECORDS 24

enum { IDX_NONE, IDX_TRUE, IDX_STALE, IDX_SHORT, IDX_EMPTY, IDX_STATES };
enum { DAMAGE_FLIP, DAMAGE_PAYLOAD, DAMAGE_CUT, DAMAGE_KINDS };

static const char *const idx_names[] = {"none", "true", "stale", "short", "empty"};
static const char *const damage_names[] = {"flip", "payload", "cut"};

static int verbose;

/* Record `id`'s payload: its id, then bytes that depend on it. */
static size_t payload(uint32_t id, uint8_t *buf)
{
	size_t n = 8 + id * 5 % 40;
	memcpy(buf, &id, 4);
	for (size_t i = 4; i < n; i++)
		buf[i] = (uint8_t)(id * 31 + i);
	return n;
}

static int genuine(const uint8_t *data, size_t size, uint32_t *id)
{
	uint8_t buf[64];
	if (size < 4)
		return 0;
	memcpy(id, data, 4);
	if (*id >= SHARDS * MAX_RECORDS)
		return 0;
	return payload(*id, buf) == size && !memcmp(buf, data, size);
}

static char prefix[512];
static char files[SHARDS][600];
static uint64_t frame_offset[SHARDS][MAX_RECORDS];
static size_t frame_size[SHARDS][MAX_RECORDS];

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	CHECK(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static void spit(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(data, 1, size, f) == size);
	fclose(f);
}

/* Writes shard s with `records` records (ids from s * MAX_RECORDS). */
static void write_shard(int s, rio_compression c, int records)
{
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.compression = c;
	rio_writer *w;
	CHECK(rio_writer_open(&w, files[s], &o) == 0);
	uint8_t buf[64];
	for (int i = 0; i < records; i++) {
		size_t n = payload((uint32_t)(s * MAX_RECORDS + i), buf);
		CHECK(rio_writer_write(w, buf, n, &frame_offset[s][i]) == 0);
		frame_size[s][i] = n;
	}
	CHECK(rio_writer_close(w) == 0);
}

typedef struct outcome {
	int open_rc, rc;
	uint64_t delivered, skipped, mismatches;
} outcome;

static uint8_t seen[SHARDS * MAX_RECORDS];

/* One loader over the set: rank `rank` of `world`, records sharding when
 * world > 1. `seen` counts the ids delivered (the caller clears it). */
static outcome run_rank(rio_shuffle mode, int rank, int world)
{
	outcome out = {0};
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	o.rank = rank;
	o.world = world;
	if (world > 1)
		o.sharding = RIO_SHARD_RECORDS;
	o.batch_size = 4;
	o.shuffle = mode;
	o.seed = 7;
	o.shuffle_buffer = 8;
	o.interleave = 2;
	o.workers = 1;
	o.io = RIO_IO_PREAD;
	o.on_damage = RIO_DAMAGE_SKIP;
	rio_loader *l = NULL;
	out.open_rc = rio_loader_open(&l, prefix, &o);
	if (out.open_rc < 0) {
		rio_loader_close(l);
		return out;
	}
	rio_batch *b;
	int rc;
	while ((rc = rio_loader_next(l, &b)) == 1) {
		for (size_t i = 0; i < b->count; i++) {
			uint32_t id;
			CHECK(genuine(b->records[i].data, b->records[i].size, &id));
			CHECK(!seen[id]++);
		}
		out.delivered += b->count;
		rio_loader_release(l, b);
	}
	out.rc = rc < 0 ? rc : 0;
	rio_loader_stats st;
	rio_loader_stats_get(l, &st);
	CHECK(st.records == out.delivered);
	out.skipped = st.skipped;
	out.mismatches = st.index_mismatches;
	if (verbose)
		fprintf(stderr, "  mode %d rank %d/%d: open %d, rc %d, delivered %llu, skipped %llu%s%s\n",
		        (int)mode, rank, world, out.open_rc, out.rc, (unsigned long long)out.delivered,
		        (unsigned long long)out.skipped, out.rc ? ": " : "",
		        out.rc ? rio_loader_error(l)->message : "");
	rio_loader_close(l);
	return out;
}

static outcome run(rio_shuffle mode)
{
	memset(seen, 0, sizeof seen);
	return run_rank(mode, 0, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_input in = {data, data + size};
	if (!prefix[0]) {
		verbose = getenv("FUZZ_VERBOSE") != NULL;
		snprintf(prefix, sizeof prefix, "%s/set", fuzz_dir());
	}
	static const rio_compression codecs[] = {RIO_COMPRESSION_NONE, RIO_COMPRESSION_GZIP,
	                                         RIO_COMPRESSION_ZLIB, RIO_COMPRESSION_LZ4};
	uint8_t b0 = fuzz_u8(&in);
	rio_compression codec = codecs[b0 % 4];
	int idx_state = (b0 >> 2) % IDX_STATES;
	int records[SHARDS];
	for (int s = 0; s < SHARDS; s++)
		records[s] = fuzz_u8(&in) % MAX_RECORDS + 1;

	uint64_t written = 0;
	for (int s = 0; s < SHARDS; s++) {
		char name[64];
		rio_shard_name_format(name, sizeof name, "set", (uint32_t)s, SHARDS, codec);
		snprintf(files[s], sizeof files[s], "%s/%s", fuzz_dir(), name);
	}
	/* remove a previous input's set (its codec may have been another) */
	for (int c = 0; c < 4; c++)
		for (int s = 0; s < SHARDS; s++) {
			char name[64], idx[80];
			rio_shard_name_format(name, sizeof name, "set", (uint32_t)s, SHARDS,
			                      codecs[c]);
			snprintf(idx, sizeof idx, "%s.idx", name);
			fuzz_remove_file(name);
			fuzz_remove_file(idx);
		}
	for (int s = 0; s < SHARDS; s++) {
		write_shard(s, codec, records[s]);
		written += (uint64_t)records[s];
	}

	/* the sidecars, of the undamaged shards */
	if (idx_state != IDX_NONE) {
		for (int s = 0; s < SHARDS; s++) {
			rio_index idx = {0};
			for (int i = 0; i < records[s]; i++) {
				uint64_t framed = frame_size[s][i] + RIO_FRAME_OVERHEAD;
				if (idx_state == IDX_STALE) /* another set's: other sizes */
					framed += 3;
				CHECK(rio_index_append(&idx, idx.count ? idx.offset[idx.count - 1] +
				                                             idx.framed_size[idx.count - 1]
				                                       : 0,
				                       framed) == 0);
			}
			if (idx_state == IDX_SHORT)
				idx.count /= 2;
			if (idx_state == IDX_EMPTY)
				idx.count = 0;
			char path[700];
			snprintf(path, sizeof path, "%s.idx", files[s]);
			rio_error err;
			CHECK(rio_index_write(path, &idx, &err) == 0);
			rio_index_free(&idx);
		}
	}

	/* the damage */
	int damages = fuzz_u8(&in) % 4, damaged = 0, cut = 0;
	for (int d = 0; d < damages; d++) {
		uint8_t kind = fuzz_u8(&in);
		int s = kind >> 7;
		uint32_t at = fuzz_u32(&in);
		size_t n;
		uint8_t *file = slurp(files[s], &n);
		switch (kind % DAMAGE_KINDS) {
		case DAMAGE_FLIP:
			if (n) {
				file[at % n] ^= (uint8_t)(1u << (at >> 29));
				damaged++;
			}
			break;
		case DAMAGE_PAYLOAD:
			/* uncompressed shards only: a byte of record i's payload */
			if (codec == RIO_COMPRESSION_NONE) {
				int i = (int)(at % (uint32_t)records[s]);
				size_t k = frame_size[s][i]
				               ? frame_offset[s][i] + 12 + (at >> 8) % frame_size[s][i]
				               : n;
				if (k < n) { /* (an earlier cut may have taken it) */
					file[k] ^= 0x5a;
					damaged++;
				}
			}
			break;
		case DAMAGE_CUT:
			if (n) {
				n = at % n;
				damaged++;
				cut = 1;
			}
			break;
		}
		spit(files[s], file, n);
		free(file);
		if (verbose)
			fprintf(stderr, "damage: %s shard %d at %u\n", damage_names[kind % DAMAGE_KINDS],
			        s, at);
	}
	if (verbose)
		fprintf(stderr, "codec %d, idx %s, records %d+%d\n", (int)codec, idx_names[idx_state],
		        records[0], records[1]);

	outcome none = run(RIO_SHUFFLE_NONE);
	outcome buffer = run(RIO_SHUFFLE_BUFFER);
	outcome global = run(RIO_SHUFFLE_GLOBAL);
	CHECK((none.open_rc < 0) == (buffer.open_rc < 0));
	if (none.open_rc < 0)
		return 0;
	CHECK(none.delivered <= written);
	CHECK((none.rc < 0) == (buffer.rc < 0));
	CHECK(none.delivered == buffer.delivered && none.skipped == buffer.skipped);
	if (global.open_rc == 0) {
		CHECK((none.rc < 0) == (global.rc < 0));
		CHECK(none.delivered == global.delivered && none.skipped == global.skipped);
	} else {
		/* global shuffle needs uncompressed shards */
		CHECK(codec != RIO_COMPRESSION_NONE);
	}
	/* two ranks splitting the records between them: each record once, and
	 * between them what one rank alone delivers and skips */
	if (none.rc == 0) {
		memset(seen, 0, sizeof seen);
		outcome r0 = run_rank(RIO_SHUFFLE_NONE, 0, 2);
		outcome r1 = run_rank(RIO_SHUFFLE_NONE, 1, 2); /* CHECKs each id once */
		if (r0.open_rc == 0 && r1.open_rc == 0 && r0.rc == 0 && r1.rc == 0) {
			CHECK(r0.delivered + r1.delivered == none.delivered);
			CHECK(r0.skipped + r1.skipped == none.skipped);
		}
	}
	/* an index that disagrees with its shard is rebuilt (uncompressed:
	 * nothing lost), or, compressed, what it leaves out is counted as
	 * skipped with a warning (finding it out means reading the stream) */
	if (!damaged) {
		CHECK(none.rc == 0 && none.delivered + none.skipped == written);
		if (codec == RIO_COMPRESSION_NONE)
			CHECK(none.skipped == 0);
		else
			CHECK(none.skipped == 0 || none.mismatches > 0);
	}
	/* countable: a true index says how many records there were; without
	 * one, a single damage other than a cut spoils exactly one record of
	 * an uncompressed shard (two may merge into one damaged region that no
	 * one can count; in a compressed stream, whatever follows a damage is
	 * lost, uncounted) */
	int countable = idx_state == IDX_TRUE ||
	                (damaged == 1 && !cut && codec == RIO_COMPRESSION_NONE);
	if (none.rc == 0 && countable)
		CHECK(none.delivered + none.skipped == written);
	return 0;
}

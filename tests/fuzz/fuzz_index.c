/*
 * fuzz_index.c — libFuzzer target for the .idx parser and for reads through
 * an index that may lie.
 *
 * The input is an .idx file. Checks: what rio_index_read accepts is a run
 * of contiguous entries from offset 0, each at least a frame header and
 * trailer long, and writes back (rio_index_write) to a file that reads to
 * the same entries; reading a fixed, valid shard through the accepted
 * index never crashes, returns the true record wherever the entry is true,
 * and an error (never another record) wherever it is not.
 */
#include "fuzz_util.h"
#include "recordio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define RECORDS 40

static const char *shard;
static rio_index truth;

static void make_shard(void)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/index-target.tfrecord", fuzz_dir());
	rio_writer *w;
	CHECK(rio_writer_open(&w, path, NULL) == 0);
	uint8_t buf[64];
	for (int i = 0; i < RECORDS; i++) {
		size_t n = (size_t)(i * 7 % 50);
		memset(buf, 'a' + i % 26, n);
		CHECK(rio_writer_write(w, buf, n, NULL) == 0);
	}
	CHECK(rio_writer_close(w) == 0);
	rio_error err;
	CHECK(rio_index_build(path, &truth, &err) == 0 && truth.count == RECORDS);
	shard = path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!shard)
		make_shard();
	const char *path = fuzz_write_file(0, "in.idx", data, size);
	rio_index idx;
	rio_error err;
	int rc = rio_index_read(path, &idx, &err);
	if (rc != 0) {
		CHECK(rc == RIO_EBADINDEX || rc == -ENOMEM);
		CHECK(idx.count == 0 && idx.offset == NULL);
		return 0;
	}
	uint64_t expect = 0;
	for (uint64_t i = 0; i < idx.count; i++) {
		CHECK(idx.offset[i] == expect && idx.framed_size[i] >= RIO_FRAME_OVERHEAD);
		expect += idx.framed_size[i];
	}

	/* written back, it reads the same */
	char back[512];
	snprintf(back, sizeof back, "%s/back.idx", fuzz_dir());
	CHECK(rio_index_write(back, &idx, &err) == 0);
	rio_index again;
	CHECK(rio_index_read(back, &again, &err) == 0 && again.count == idx.count);
	CHECK(!idx.count || (!memcmp(again.offset, idx.offset, idx.count * 8) &&
	                     !memcmp(again.framed_size, idx.framed_size, idx.count * 8)));
	rio_index_free(&again);

	/* the valid shard read through it */
	rio_reader *r;
	CHECK(rio_reader_open(&r, shard, NULL) == 0);
	for (uint64_t i = 0; i < idx.count && i < 256; i++) {
		rio_record rec;
		rc = rio_reader_read_at(r, &idx, i, &rec);
		/* the entry is true when it names a real frame, whichever */
		uint64_t j = 0;
		while (j < truth.count && truth.offset[j] < idx.offset[i])
			j++;
		int true_entry = j < truth.count && idx.offset[i] == truth.offset[j] &&
		                 idx.framed_size[i] == truth.framed_size[j];
		if (true_entry) {
			CHECK(rc == 1 && rec.size + RIO_FRAME_OVERHEAD == idx.framed_size[i]);
			CHECK(rec.offset == truth.offset[j]);
			for (size_t k = 0; k < rec.size; k++)
				CHECK(rec.data[k] == 'a' + j % 26);
		} else {
			CHECK(rc < 0);
			/* a lying entry may have stopped the reader: start again */
			rio_reader_close(r);
			CHECK(rio_reader_open(&r, shard, NULL) == 0);
		}
	}
	rio_reader_close(r);
	rio_index_free(&idx);
	return 0;
}

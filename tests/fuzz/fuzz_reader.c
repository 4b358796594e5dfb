/*
 * fuzz_reader.c — libFuzzer target for the shard reader: frame parsing,
 * compression detection and decoding, and the damage policies.
 *
 * Input: byte 0 picks the policy (FAIL, SKIP, REPORT), CRC checking and
 * how the rest becomes a file: as is (so damaged compressed streams are
 * fuzzed too), or compressed with gzip, zlib or an LZ4 frame (so the
 * fuzzer's frames reach the reader through every codec); byte 1 picks the
 * read size. Checks: records lie inside the limits and are numbered in
 * order; a stopped reader stays stopped; no loop without progress; a file
 * read whole under FAIL reads the same under SKIP with nothing skipped, and
 * (uncompressed) its index has the same records, each read back by
 * rio_reader_read_at with the same bytes.
 */
#include "fuzz_util.h"
#include "recordio.h"

#include <string.h>

#define MAX_RECORD (1u << 20)
#define MAX_KEPT 4096

typedef struct pass {
	int rc;            /* the last return of rio_reader_next         */
	uint64_t records;  /* records read                               */
	uint64_t skipped;  /* rio_reader_skipped at the end              */
	rio_compression compression; /* detected                        */
	uint64_t offset[MAX_KEPT];
	uint32_t crc[MAX_KEPT];
	size_t size[MAX_KEPT];
} pass;

static pass first, second;

/* Reads `path` to its end (or its stop) under `policy`. */
static void read_all(const char *path, rio_damage_policy policy, int verify, size_t buffer,
                     pass *p)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = policy;
	o.verify_crc = verify;
	o.max_record_size = MAX_RECORD;
	o.buffer_size = buffer;
	rio_reader *r;
	p->records = 0;
	p->skipped = 0;
	p->rc = rio_reader_open(&r, path, &o);
	if (p->rc < 0)
		return;
	rio_record rec;
	uint64_t calls = 0, last_bytes = 0;
	for (;;) {
		int rc = rio_reader_next(r, &rec);
		p->rc = rc;
		CHECK(++calls < 10000000);
		if (rc == 1) {
			CHECK(rec.size <= MAX_RECORD);
			CHECK(rec.size == 0 || rec.data != NULL);
			CHECK(rec.index == p->records);
			if (p->records < MAX_KEPT) {
				p->offset[p->records] = rec.offset;
				p->size[p->records] = rec.size;
				p->crc[p->records] = rio_crc32c(0, rec.data, rec.size);
			}
			p->records++;
			continue;
		}
		if (rc == 0)
			break;
		CHECK(rc < 0);
		if (policy == RIO_DAMAGE_REPORT && !rio_reader_stopped(r)) {
			/* a damage reported once, after it was skipped: progress */
			CHECK(rio_reader_bytes(r) > last_bytes || rio_reader_skipped(r) > 0);
			last_bytes = rio_reader_bytes(r);
			continue;
		}
		CHECK(rio_reader_stopped(r));
		CHECK(rio_reader_next(r, &rec) == rc); /* the stop is sticky */
		CHECK(rio_reader_error(r)->code == rc);
		break;
	}
	p->skipped = rio_reader_skipped(r);
	p->compression = rio_reader_compression(r);
	if (policy == RIO_DAMAGE_FAIL)
		CHECK(p->skipped == 0);
	rio_reader_close(r);
}

/* Every record of an uncompressed file read whole: the index agrees. */
static void check_index(const char *path, int verify, size_t buffer)
{
	rio_index idx = {0};
	rio_error err;
	int rc = rio_index_build(path, &idx, &err);
	if (verify) {
		CHECK(rc == 0);
	} else if (rc != 0) {
		return; /* the index checks payload CRCs; this pass did not */
	}
	CHECK(idx.count == first.records);
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.verify_crc = verify;
	o.max_record_size = MAX_RECORD;
	o.buffer_size = buffer;
	rio_reader *r;
	CHECK(rio_reader_open(&r, path, &o) == 0);
	for (uint64_t i = idx.count; i-- > 0 && i < MAX_KEPT;) { /* backwards: seeks */
		rio_record rec;
		CHECK(idx.offset[i] == first.offset[i]);
		CHECK(idx.framed_size[i] == first.size[i] + 16);
		CHECK(rio_reader_read_at(r, &idx, i, &rec) == 1);
		CHECK(rec.size == first.size[i] && rio_crc32c(0, rec.data, rec.size) == first.crc[i]);
	}
	rio_reader_close(r);
	rio_index_free(&idx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t mode = data[0];
	size_t buffer = (size_t)(data[1] % 4 + 1) * 4096;
	data += 2;
	size -= 2;
	rio_damage_policy policy = (rio_damage_policy)(mode % 3);
	int verify = !(mode & 4);
	int wrap = (mode >> 3) & 3;
	static const char *names[] = {"in.tfrecord", "in.tfrecord.gz", "in.tfrecord.zz",
	                              "in.tfrecord.lz4"};
	const uint8_t *file = data;
	size_t file_size = size;
	if (wrap) /* 1 gzip, 2 zlib, 3 lz4 */
		file = fuzz_compress((rio_compression)wrap, data, size, &file_size);
	const char *path = fuzz_write_file(0, names[wrap], file, file_size);

	read_all(path, policy, verify, buffer, &first);
	if (policy == RIO_DAMAGE_FAIL && first.rc == 0) {
		/* whole and clean: SKIP reads the same and skips nothing */
		read_all(path, RIO_DAMAGE_SKIP, verify, buffer, &second);
		CHECK(second.rc == 0 && second.records == first.records && second.skipped == 0);
		for (uint64_t i = 0; i < first.records && i < MAX_KEPT; i++)
			CHECK(second.size[i] == first.size[i] && second.crc[i] == first.crc[i]);
		if (first.compression == RIO_COMPRESSION_NONE)
			check_index(path, verify, buffer);
	}
	return 0;
}

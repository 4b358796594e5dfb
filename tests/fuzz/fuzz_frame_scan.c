/*
 * fuzz_frame_scan.c — libFuzzer target for the frame scanner
 * (recordio/frame_scan.h) under every damage policy and codec.
 *
 * Byte 0 picks the policy (FAIL, SKIP, REPORT), CRC checking, the codec
 * (none, gzip, zlib, LZ4: the target compresses the bytes itself) and a
 * small or the default record limit; the rest is a stream of frames.
 * Checks, at every offset of the input: rio__frame_check and
 * rio__frame_head agree with a plain decoding of the frame written here
 * from the format's definition (length, masked CRC-32C of the length, the
 * limit, truncation, the data CRC), and "more bytes" is asked for exactly
 * when the input has not ended; rio__frame_resync finds the first valid
 * header. Then the whole stream is scanned here with the scanner's policy
 * functions and read by rio_reader (through the codec): both give the same
 * records, the same skipped count and the same end.
 */
#include "fuzz_util.h"
#include "frame_scan.h"

#include <stdio.h>
#include <string.h>

#define MAX_SEEN 4096

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The format's definition, checked the slow way. */
static int reference(const uint8_t *p, size_t avail, int at_end, uint64_t max, int verify,
                     uint64_t *len)
{
	if (avail < 12)
		return at_end ? RIO_ETRUNCATED : RIO__FRAME_MORE;
	*len = le64(p);
	if (rio_crc_mask(rio_crc32c(0, p, 8)) != le32(p + 8))
		return RIO_ECORRUPT_LENGTH;
	if (*len > max || *len > RIO__FRAME_MAX)
		return RIO_ETOOLARGE;
	if (avail - 12 < *len + 4)
		return at_end ? RIO_ETRUNCATED : RIO__FRAME_MORE;
	if (verify && rio_crc_mask(rio_crc32c(0, p + 12, (size_t)*len)) != le32(p + 12 + *len))
		return RIO_ECORRUPT_DATA;
	return RIO__FRAME_OK;
}

typedef struct scan {
	int rc; /* 0: a clean end, else the error that stopped it */
	uint64_t records, skipped;
	uint64_t offset[MAX_SEEN], size[MAX_SEEN];
} scan;

static scan model, read_back;

/* The stream scanned as rio_reader does, from the scanner's functions. */
static void scan_model(const uint8_t *buf, size_t n, rio_damage_policy policy, int verify,
                       uint64_t max, int compressed)
{
	rio__damage dmg;
	rio__damage_init(&dmg, policy);
	memset(&model, 0, offsetof(scan, offset));
	size_t pos = 0;
	while (pos < n) {
		uint64_t len = 0;
		int d = rio__frame_check(buf + pos, n - pos, 1, max, verify, &len);
		CHECK(d != RIO__FRAME_MORE);
		if (d == RIO__FRAME_OK) {
			if (model.records < MAX_SEEN) {
				model.offset[model.records] = pos;
				model.size[model.records] = len;
			}
			model.records++;
			pos += rio__frame_size(len);
			continue;
		}
		rio__recover act = rio__damage_action(policy, d, compressed);
		if (act == RIO__RECOVER_STOP) {
			model.rc = d;
			break;
		}
		dmg.records++;
		if (act == RIO__RECOVER_END)
			break;
		if (act == RIO__RECOVER_NEXT) {
			pos += rio__frame_size(len);
			continue;
		}
		size_t q = rio__frame_resync(buf, pos + 1, n, max);
		if (q + 12 > n)
			break;
		pos = q;
	}
	model.skipped = dmg.records;
	CHECK(policy != RIO_DAMAGE_FAIL || dmg.records == 0);
}

static void scan_reader(const char *path, int codec, rio_damage_policy policy, int verify,
                        uint64_t max)
{
	memset(&read_back, 0, offsetof(scan, offset));
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.on_damage = policy;
	o.verify_crc = verify;
	o.max_record_size = max;
	o.buffer_size = 4096;
	/* the codec it was written with (detection is fuzz_reader's: frames
	 * may start with bytes that are also a zlib header) */
	o.compression = (rio_compression)codec;
	rio_reader *r;
	CHECK(rio_reader_open(&r, path, &o) == 0);
	rio_record rec;
	for (;;) {
		int rc = rio_reader_next(r, &rec);
		if (rc == 1) {
			if (read_back.records < MAX_SEEN) {
				read_back.offset[read_back.records] = rec.offset;
				read_back.size[read_back.records] = rec.size;
			}
			read_back.records++;
			continue;
		}
		if (rc < 0 && policy == RIO_DAMAGE_REPORT && !rio_reader_stopped(r))
			continue; /* reported, skipped: go on */
		read_back.rc = rc;
		break;
	}
	read_back.skipped = rio_reader_skipped(r);
	rio_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	rio_damage_policy policy = (rio_damage_policy)(mode % 3);
	int verify = !(mode & 4);
	int codec = (mode >> 3) & 3;
	uint64_t max = mode & 0x20 ? 40 : RIO_DEFAULT_MAX_RECORD;
	uint8_t *buf = malloc(size); /* exact size: overreads are caught */
	CHECK(buf);
	size_t n = size - 1;
	memcpy(buf, data + 1, n);

	/* every offset: the scanner against the definition */
	size_t first_valid = n;
	for (size_t at = 0; at <= n; at++) {
		uint64_t l1 = 0, l2 = 0, l3 = 0;
		int ref = reference(buf + at, n - at, 1, max, verify, &l1);
		CHECK(rio__frame_check(buf + at, n - at, 1, max, verify, &l2) == ref);
		if (ref != RIO_ETRUNCATED || n - at >= 12)
			CHECK(l1 == l2);
		int open_ref = reference(buf + at, n - at, 0, max, verify, &l1);
		CHECK(rio__frame_check(buf + at, n - at, 0, max, verify, &l3) == open_ref);
		CHECK(open_ref != RIO_ETRUNCATED); /* never while more may come */
		int head = rio__frame_head(buf + at, n - at, 1, max, &l3);
		CHECK(head == RIO__FRAME_OK
		          ? (ref == RIO__FRAME_OK || ref == RIO_ETRUNCATED || ref == RIO_ECORRUPT_DATA)
		          : head == ref);
		if (head == RIO__FRAME_OK && at < first_valid)
			first_valid = at;
	}
	size_t q = rio__frame_resync(buf, 0, n, max);
	if (first_valid < n)
		CHECK(q == first_valid);
	else
		CHECK(q + 12 > n || n < 12);

	/* the whole stream: the model against the reader, through the codec */
	static const char *names[] = {"s.tfrecord", "s.tfrecord.gz", "s.tfrecord.zz",
	                              "s.tfrecord.lz4"};
	const char *path;
	if (codec) {
		size_t packed_size;
		const uint8_t *packed = fuzz_compress((rio_compression)codec, buf, n, &packed_size);
		path = fuzz_write_file(0, names[codec], packed, packed_size);
	} else {
		path = fuzz_write_file(0, names[0], buf, n);
	}
	scan_model(buf, n, policy, verify, max, codec != 0);
	scan_reader(path, codec, policy, verify, max);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "policy %d verify %d codec %d max %llu: model %d/%llu/%llu, reader %d/%llu/%llu\n",
		        (int)policy, verify, codec, (unsigned long long)max, model.rc,
		        (unsigned long long)model.records, (unsigned long long)model.skipped,
		        read_back.rc, (unsigned long long)read_back.records,
		        (unsigned long long)read_back.skipped);
	CHECK(model.records == read_back.records);
	CHECK(model.skipped == read_back.skipped);
	CHECK(model.rc == read_back.rc);
	for (uint64_t i = 0; i < model.records && i < MAX_SEEN; i++)
		CHECK(model.offset[i] == read_back.offset[i] && model.size[i] == read_back.size[i]);
	free(buf);
	return 0;
}

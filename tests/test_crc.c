/*
 * test_crc.c — CRC-32C known answers, every implementation, and the mask.
 *
 * Known answers come from RFC 3720 (iSCSI) appendix B.4 and the TFRecord
 * spec; the empty-record frame is the one DESIGN.md gives byte for byte.
 */
#include "crc32c.h"
#include "recordio.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void check_known_answers(crc_fn f)
{
	uint8_t buf[48];
	CU_ASSERT_EQUAL(f(0, "123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(f(0, "", 0), 0u);
	memset(buf, 0, 32);
	CU_ASSERT_EQUAL(f(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32);
	CU_ASSERT_EQUAL(f(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(f(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	CU_ASSERT_EQUAL(f(0, buf, 32), 0x113FDB5Cu);
	/* RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU, 48 bytes */
	static const uint8_t iscsi_read[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	memcpy(buf, iscsi_read, 48);
	CU_ASSERT_EQUAL(f(0, buf, 48), 0xD9963A56u);
	/* the 8 zero bytes of an empty record's length field */
	memset(buf, 0, 8);
	CU_ASSERT_EQUAL(f(0, buf, 8), 0x8C28B28Au);
	/* continuing a CRC over pieces equals the CRC of the whole */
	CU_ASSERT_EQUAL(f(f(0, "1234", 4), "56789", 5), 0xE3069283u);
}

static void test_portable(void)
{
	check_known_answers(rio__crc32c_portable);
}

static void test_sse42(void)
{
	if (!rio__crc32c_have_sse42()) {
		printf("(no SSE4.2 on this CPU) ");
		CU_PASS("skipped");
		return;
	}
	check_known_answers(rio__crc32c_sse42);
}

static void test_isal(void)
{
	/* without ISA-L this is the portable code: still must be right */
	check_known_answers(rio__crc32c_isal);
}

static void test_public_and_dispatch(void)
{
	check_known_answers(rio__crc32c);
	CU_ASSERT_EQUAL(rio_crc32c(0, "123456789", 9), 0xE3069283u);
}

/* Every implementation agrees on every length and alignment. */
static void test_implementations_agree(void)
{
	size_t n = 70000;
	uint8_t *buf = malloc(n + 16);
	tu_fill_random(buf, n + 16, 7);
	for (size_t align = 0; align < 8; align++) {
		for (size_t len = 0; len < 300; len++) {
			uint32_t want = rio__crc32c_portable(0, buf + align, len);
			CU_ASSERT_EQUAL_FATAL(rio__crc32c(0, buf + align, len), want);
			CU_ASSERT_EQUAL_FATAL(rio__crc32c_isal(0, buf + align, len), want);
			if (rio__crc32c_have_sse42())
				CU_ASSERT_EQUAL_FATAL(rio__crc32c_sse42(0, buf + align, len), want);
		}
	}
	uint32_t want = rio__crc32c_portable(0, buf, n);
	CU_ASSERT_EQUAL(rio__crc32c(0, buf, n), want);
	CU_ASSERT_EQUAL(rio__crc32c(rio__crc32c(0, buf, 12345), buf + 12345, n - 12345), want);
	free(buf);
}

/* rio__crc32c_zeros: as the zero bytes themselves, from any start. */
static void test_zeros(void)
{
	static uint8_t zeros[70000];
	const uint64_t lens[] = {0, 1, 3, 8, 255, 4096, 65537, 70000};
	const uint32_t starts[] = {0, 0xE3069283u, 0xFFFFFFFFu, 0x12345678u};
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
		for (size_t j = 0; j < sizeof starts / sizeof starts[0]; j++)
			CU_ASSERT_EQUAL_FATAL(rio__crc32c_zeros(starts[j], lens[i]),
			                      rio__crc32c_portable(starts[j], zeros, lens[i]));
}

static void test_mask(void)
{
	/* mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 */
	CU_ASSERT_EQUAL(rio_crc_mask(0), 0xa282ead8u);
	CU_ASSERT_EQUAL(rio_crc_mask(0xE3069283u), ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
	/* known answers, worked out by hand from the formula (not by the code
	 * under test): the rotation and the wrap-around of the addition */
	CU_ASSERT_EQUAL(rio_crc_mask(0xE3069283u), 0xC78AB0E5u);
	CU_ASSERT_EQUAL(rio_crc_mask(1), 0xa284ead8u);
	CU_ASSERT_EQUAL(rio_crc_mask(0x80000000u), 0xa283ead8u);
	CU_ASSERT_EQUAL(rio_crc_mask(0xffffffffu), 0xa282ead7u);
	CU_ASSERT_EQUAL(rio_crc_mask(0x12345678u), 0x4f730f40u);
	/* the empty record's length CRC: 29 03 98 07 on disk */
	CU_ASSERT_EQUAL(rio_crc_mask(0x8C28B28Au), 0x07980329u);
	CU_ASSERT_EQUAL(rio_crc_unmask(0x07980329u), 0x8C28B28Au);
	CU_ASSERT_EQUAL(rio_crc_unmask(0xa282ead8u), 0);
	CU_ASSERT_EQUAL(rio_crc_unmask(0xC78AB0E5u), 0xE3069283u);
	int n = 0;
	for (uint32_t c = 1; c < 0xF0000000u; c += 0x01234567u, n++) {
		CU_ASSERT_EQUAL_FATAL(rio_crc_unmask(rio_crc_mask(c)), c);
		CU_ASSERT_NOT_EQUAL(rio_crc_mask(c), c);
	}
	CU_ASSERT_EQUAL(n, 211); /* the loop ran */
}

/* The empty record: 00*8 29 03 98 07 d8 ea 82 a2 (DESIGN.md). */
static void test_empty_record_frame(void)
{
	static const uint8_t want_header[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07};
	static const uint8_t want_footer[4] = {0xd8, 0xea, 0x82, 0xa2};
	uint8_t h[12], f[4];
	rio_frame_header(h, 0);
	rio_frame_footer(f, "", 0);
	CU_ASSERT_EQUAL(memcmp(h, want_header, 12), 0);
	CU_ASSERT_EQUAL(memcmp(f, want_footer, 4), 0);
}

/* Every frame of TensorFlow's small plain files, checked against our header
 * and footer: TensorFlow's CRCs are ours. */
static void frames_match_tensorflow(const char *name, int want_frames)
{
	const char *path = tu_testdata(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	size_t size;
	uint8_t *file = tu_read_file(path, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	size_t off = 0, len, at = 0;
	const uint8_t *data;
	int frames = 0, rc;
	while ((rc = tu_next_frame(file, size, &off, &data, &len)) == 1) {
		uint8_t h[12], f[4];
		rio_frame_header(h, len);
		rio_frame_footer(f, data, len);
		CU_ASSERT_EQUAL(memcmp(h, file + at, 12), 0);
		CU_ASSERT_EQUAL(memcmp(f, data + len, 4), 0);
		at = off;
		frames++;
	}
	CU_ASSERT_EQUAL(rc, 0); /* ends on a frame boundary */
	CU_ASSERT_EQUAL(off, size);
	CU_ASSERT_EQUAL(frames, want_frames);
	free(file);
}

static void test_frame_matches_tensorflow(void)
{
	frames_match_tensorflow("tf-singles.tfrecord", 3);
	frames_match_tensorflow("tf-mixed-types.tfrecord", 1);
}

static const tu_test crc_tests[] = {
	{"portable known answers", test_portable},
	{"SSE4.2 known answers", test_sse42},
	{"ISA-L known answers", test_isal},
	{"dispatcher and public API", test_public_and_dispatch},
	{"implementations agree on all lengths/alignments", test_implementations_agree},
	{"zeros without the bytes", test_zeros},
	{NULL, NULL},
};

static const tu_test frame_tests[] = {
	{"mask and unmask", test_mask},
	{"empty record frame bytes", test_empty_record_frame},
	{"frames equal TensorFlow's", test_frame_matches_tensorflow},
	{NULL, NULL},
};

static const tu_suite suites[] = {
	{"crc32c", crc_tests},
	{"frame", frame_tests},
	{NULL, NULL},
};

RIO_TEST_MAIN(suites)

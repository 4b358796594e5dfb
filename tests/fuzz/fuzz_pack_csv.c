/*
 * fuzz_pack_csv.c — libFuzzer target for recordio-pack --from csv.
 * fuzz-sources: tools/pack_source.c tools/pack_csv.c tools/common.c
 *
 * Byte 0 picks --max-record-size (16 to 1 KiB, or the default) and whether
 * a column "label" is the label; the rest is the CSV file. Checks: a source
 * that opens hands out as many records as it announced, each a valid
 * tf.train.Example with the same number of features, unless it stops
 * with an error; its summary can be printed.
 */
#define _GNU_SOURCE
#include "fuzz_util.h"
#include "pack.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t b0 = data[0];
	uint64_t limit = (b0 & 0x7f) < 96 ? (uint64_t)(b0 & 0x7f) * 10 + 16 : PACK_MAX_RECORD;
	const char *label = b0 & 0x80 ? "label" : NULL;
	data++;
	size--;
	int fd = memfd_create("csv", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);

	pack_source *s;
	if (pack_csv_open_fd(&s, fd, "fuzz-input", label, limit) != 0) {
		close(fd);
		return 0;
	}
	CHECK(s->total != PACK_UNKNOWN);
	const uint8_t *rec;
	size_t rec_size, columns = 0;
	uint64_t n = 0;
	int rc;
	while ((rc = s->next(s, &rec, &rec_size)) == 1) {
		CHECK(rio_example_validate(rec, rec_size) == 0);
		rio_example_iter it;
		rio_feature f;
		size_t k = 0;
		rio_example_iter_init(&it, rec, rec_size);
		while (rio_example_iter_next(&it, &f) == 1)
			k++;
		CHECK(n == 0 || k == columns);
		columns = k;
		n++;
	}
	CHECK(rc == 0 || rc == -1);
	if (rc == 0) {
		CHECK(n == s->total);
		FILE *out = fopen("/dev/null", "w");
		if (out && s->summary)
			s->summary(s, out);
		if (out)
			fclose(out);
	}
	pack_source_close(s);
	close(fd);
	return 0;
}

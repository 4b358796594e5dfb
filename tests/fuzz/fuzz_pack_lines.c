/*
 * fuzz_pack_lines.c — libFuzzer target for recordio-pack --from lines.
 * fuzz-sources: tools/pack_source.c tools/pack_lines.c tools/common.c
 *
 * Byte 0 picks --max-record-size (1 to 64 bytes, or the default); the rest
 * is the input. Checks: the records are the input's lines, in order,
 * without their "\n" (a last line without one included); a line over the
 * limit ends the source with an error, after exactly the lines before it;
 * nothing is lost with a clean end.
 */
#define _GNU_SOURCE
#include "fuzz_util.h"
#include "pack.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint64_t limit = data[0] < 192 ? (uint64_t)(data[0] % 64 + 1) : PACK_MAX_RECORD;
	data++;
	size--;
	int fd = memfd_create("lines", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);

	pack_source *s;
	CHECK(pack_lines_open_fd(&s, fd, "fuzz-input", limit) == 0);
	const uint8_t *p = data, *end = data + size, *rec;
	size_t rec_size;
	int rc;
	while ((rc = s->next(s, &rec, &rec_size)) == 1) {
		/* the next line of the input */
		CHECK(p < end);
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		CHECK(rec_size == len && (len == 0 || !memcmp(rec, p, len)));
		CHECK(rec_size <= limit);
		p += len + (nl != NULL);
	}
	if (rc == 0) {
		CHECK(p == end); /* every line handed out */
	} else {
		CHECK(rc == -1);
		/* the line that stopped it is over the limit */
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		CHECK((uint64_t)((nl ? nl : end) - p) > limit);
	}
	pack_source_close(s);
	close(fd);
	return 0;
}

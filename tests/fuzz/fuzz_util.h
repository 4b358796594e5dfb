/*
 * fuzz_util.h — what the libFuzzer targets of tests/fuzz/ share: CHECK (an
 * invariant that aborts, so libFuzzer reports it as a crash with the input
 * that broke it), scratch files in memory-backed storage for the
 * targets whose code under test opens paths (reader, index, loader), and
 * compression of an input into a gzip, zlib or LZ4 file.
 */
#ifndef RIO_FUZZ_UTIL_H
#define RIO_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "recordio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fuzz_check_failed(#c, __FILE__, __LINE__);                                 \
		}                                                                                  \
	} while (0)

/* Prints the failed condition and aborts. */
void fuzz_check_failed(const char *cond, const char *file, int line) __attribute__((noreturn));

/* The scratch directory of this process (made on first use, under /dev/shm
 * when it exists, else $TMPDIR or /tmp; removed at exit). */
const char *fuzz_dir(void);

/* Writes `size` bytes to fuzz_dir()/name (replacing it) and returns the
 * path (static storage, valid until the next call with the same slot:
 * slot 0..7 picks one of eight buffers). */
const char *fuzz_write_file(int slot, const char *name, const void *data, size_t size);

/* Removes fuzz_dir()/name if it exists. */
void fuzz_remove_file(const char *name);

/* Compresses in[0..n) as `codec` (RIO_COMPRESSION_GZIP, _ZLIB or _LZ4: a
 * whole gzip or zlib stream, deflate level 1, or an LZ4 frame) and returns
 * the bytes, *size of them, in a buffer fuzz_util.c owns: valid until the
 * next call. Aborts on any failure. */
const uint8_t *fuzz_compress(rio_compression codec, const uint8_t *in, size_t n, size_t *size);

/* A byte reader over the fuzz input, for targets that take their choices
 * (modes, offsets) from the input's first bytes: reads past the end give
 * zeros, so every input is usable. */
typedef struct fuzz_input {
	const uint8_t *p, *end;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static inline uint32_t fuzz_u32(fuzz_input *in)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v = v << 8 | fuzz_u8(in);
	return v;
}

#endif

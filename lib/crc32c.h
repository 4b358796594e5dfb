/*
 * crc32c.h — CRC-32C (Castagnoli), the checksum of every TFRecord frame.
 *
 * rio__crc32c() picks, once, the fastest implementation this machine has:
 * ISA-L's crc32_iscsi when built with ISA-L, else SSE4.2's crc32 instruction
 * (one 8-byte step at a time), else a portable slicing-by-8 table. All
 * give the same result; the tests hold each one to the known answers.
 */
#ifndef RIO_CRC32C_H
#define RIO_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of `size` bytes continuing from `crc` (0 to start): the usual
 * init/final xor 0xFFFFFFFF convention, crc32c("123456789") = 0xE3069283. */
uint32_t rio__crc32c(uint32_t crc, const void *data, size_t size);

/* rio__crc32c(crc, n zero bytes) in O(log n) steps, without the bytes (a
 * file's CRC from parts written apart: each part's CRC with zeros around
 * it, and crc(a ^ b) = crc(a) ^ crc(b) ^ crc(zeros) for equal lengths). */
uint32_t rio__crc32c_zeros(uint32_t crc, uint64_t n);

/* The individual implementations, exposed for tests and benchmarks. The
 * hardware ones may only be called where rio__crc32c_have_*() returns 1. */
uint32_t rio__crc32c_portable(uint32_t crc, const void *data, size_t size);
uint32_t rio__crc32c_sse42(uint32_t crc, const void *data, size_t size);
uint32_t rio__crc32c_isal(uint32_t crc, const void *data, size_t size);
int rio__crc32c_have_sse42(void);
int rio__crc32c_have_isal(void);

/* The masked form TFRecord stores. */
static inline uint32_t rio__crc_mask(uint32_t c)
{
	return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static inline uint32_t rio__crc_unmask(uint32_t m)
{
	uint32_t r = m - 0xa282ead8u;
	return (r >> 17) | (r << 15);
}

#endif /* RIO_CRC32C_H */

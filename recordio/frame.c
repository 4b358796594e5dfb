/*
 * frame.c — the TFRecord frame: length, masked CRCs, and the public CRC-32C.
 *
 * A frame is u64 length (LE) | u32 masked crc32c(length bytes) | data |
 * u32 masked crc32c(data). The mask exists because TensorFlow stores CRCs of
 * data that may itself contain CRCs; we reproduce it exactly. This file
 * writes frames; frame_scan.[ch] is the one reader and checker of them.
 */
#include "config.h"
#include "internal.h"

#include "crc32c.h"
#include "endian.h"

RIO_API uint32_t rio_crc32c(uint32_t crc, const void *data, size_t size)
{
	return rio__crc32c(crc, data, size);
}

RIO_API uint32_t rio_crc_mask(uint32_t crc)
{
	return rio__crc_mask(crc);
}

RIO_API uint32_t rio_crc_unmask(uint32_t masked)
{
	return rio__crc_unmask(masked);
}

RIO_API void rio_frame_header(uint8_t out[RIO_HEADER_SIZE], uint64_t size)
{
	rio__store_le64(out, size);
	rio__store_le32(out + 8, rio__crc_mask(rio__crc32c(0, out, 8)));
}

RIO_API void rio_frame_footer(uint8_t out[RIO_FOOTER_SIZE], const void *data, size_t size)
{
	rio__store_le32(out, rio__crc_mask(rio__crc32c(0, data, size)));
}

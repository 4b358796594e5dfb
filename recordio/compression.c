/*
 * compression.c — names, suffixes and detection of shard compression.
 *
 * Detection reads the first bytes, never trusts the extension alone: a
 * valid TFRecord header (its length CRC matches) means an uncompressed
 * shard; otherwise the gzip (1f 8b), LZ4 frame (04 22 4d 18) and zlib
 * (CMF/FLG check) magics are tried in that order.
 */
#include "config.h"
#include "frame_scan.h"
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

RIO_API const char *rio_compression_name(rio_compression c)
{
	switch (c) {
	case RIO_COMPRESSION_AUTO: return "auto";
	case RIO_COMPRESSION_NONE: return "none";
	case RIO_COMPRESSION_GZIP: return "gzip";
	case RIO_COMPRESSION_ZLIB: return "zlib";
	case RIO_COMPRESSION_LZ4: return "lz4";
	}
	return "unknown";
}

RIO_API int rio_compression_parse(const char *name, rio_compression *out)
{
	static const struct {
		const char *name;
		rio_compression c;
	} names[] = {
		{"none", RIO_COMPRESSION_NONE}, {"", RIO_COMPRESSION_NONE},
		{"gzip", RIO_COMPRESSION_GZIP}, {"gz", RIO_COMPRESSION_GZIP},
		{"zlib", RIO_COMPRESSION_ZLIB}, {"zz", RIO_COMPRESSION_ZLIB},
		{"lz4", RIO_COMPRESSION_LZ4},   {"auto", RIO_COMPRESSION_AUTO},
	};
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(name, names[i].name)) {
			*out = names[i].c;
			return 0;
		}
	return -EINVAL;
}

RIO_API const char *rio_compression_suffix(rio_compression c)
{
	switch (c) {
	case RIO_COMPRESSION_GZIP: return ".tfrecord.gz";
	case RIO_COMPRESSION_ZLIB: return ".tfrecord.zz";
	case RIO_COMPRESSION_LZ4: return ".tfrecord.lz4";
	default: return ".tfrecord";
	}
}

RIO_API rio_compression rio_compression_detect(const void *head, size_t size)
{
	const uint8_t *p = head;
	uint64_t len;
	/* any length the header's CRC vouches for: the limit is the reader's */
	int h = rio__frame_head(p, size, 1, UINT64_MAX, &len);
	if (h == RIO__FRAME_OK || h == RIO_ETOOLARGE)
		return RIO_COMPRESSION_NONE;
	if (size >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return RIO_COMPRESSION_GZIP;
	if (size >= 4 && p[0] == 0x04 && p[1] == 0x22 && p[2] == 0x4d && p[3] == 0x18)
		return RIO_COMPRESSION_LZ4;
	if (size >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((p[0] << 8) | p[1]) % 31 == 0)
		return RIO_COMPRESSION_ZLIB;
	return RIO_COMPRESSION_NONE;
}

/*
 * frame_scan.c — the out-of-line part of the frame scanner (frame_scan.h
 * says what it checks and why it is the only decoder of frame headers):
 * the byte-by-byte search for the next valid header after damage, and the
 * one wording of each damage in an error message.
 */
#include "config.h"
#include "frame_scan.h"
#include "internal.h"

size_t rio__frame_resync(const uint8_t *buf, size_t from, size_t avail, uint64_t max)
{
	size_t p = from;
	for (; avail >= RIO_HEADER_SIZE && p <= avail - RIO_HEADER_SIZE; p++) {
		uint64_t len;
		if (rio__frame_head(buf + p, avail - p, 0, max, &len) == RIO__FRAME_OK)
			return p;
	}
	return p > from ? p : from;
}

int rio__frame_error(rio_error *e, int code, const char *path, uint64_t offset, uint64_t record,
                     size_t have, uint64_t len, uint64_t max)
{
	switch (code) {
	case RIO_ETRUNCATED:
		if (have < RIO_HEADER_SIZE)
			return rio__error_set(e, code, path, offset, record,
			                      "the file ends %zu bytes into a record header of %u", have,
			                      RIO_HEADER_SIZE);
		return rio__error_set(e, code, path, offset, record,
		                      "the file ends %zu bytes into a record of %llu", have,
		                      (unsigned long long)(len + RIO_FRAME_OVERHEAD));
	case RIO_ETOOLARGE:
		return rio__error_set(e, code, path, offset, record, "length %llu, limit %llu",
		                      (unsigned long long)len,
		                      (unsigned long long)(max < RIO__FRAME_MAX ? max : RIO__FRAME_MAX));
	case RIO_ECORRUPT_DATA:
		return rio__error_set(e, code, path, offset, record, "length %llu",
		                      (unsigned long long)len);
	case RIO_EBADINDEX: /* rio__frame_check_entry() */
		return rio__error_set(e, code, path, offset, record,
		                      "the frame there is not the size the index gives");
	default:
		return rio__error_set(e, code, path, offset, record, NULL);
	}
}

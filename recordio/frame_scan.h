/*
 * frame_scan.h — the one place that decodes and checks a TFRecord frame,
 * and the one place that decides what damage does. Internal to librecordio
 * (the loader is part of it); not installed.
 *
 * A frame is u64 length (LE) | u32 masked crc32c(length bytes) | data |
 * u32 masked crc32c(data). Every reader of frames — recordio/reader.c (the
 * rio_reader stream, resync, read_at), recordio/compression.c (detection),
 * loader/worker.c (ranges and global reads), loader/piece_stream.c
 * (compressed pieces), loader/placed.c (the placed path) and
 * loader/plan.c (a shard's tail) — goes through these functions; no other
 * code decodes a frame header (`grep -n rio__load_le64 recordio loader`
 * finds only this file). frame.c writes frames.
 *
 * What is checked, always, whatever verify_crc says:
 *   - the length CRC (a flipped length bit must never make us allocate,
 *     read or skip gigabytes);
 *   - the length against the limit (max_record_size, and never more than
 *     RIO__FRAME_MAX, so that length + 16 cannot overflow);
 *   - truncation: the frame's bytes must all be there when the input ends.
 * Only the data CRC is optional (verify_crc = 0, `--no-crc`).
 *
 * Results: RIO__FRAME_OK (1), RIO__FRAME_MORE (0: not enough bytes yet,
 * only while the input has not ended), or the damage, a negative code with
 * its precise reason: RIO_ECORRUPT_LENGTH (length CRC mismatch),
 * RIO_ETOOLARGE (length over the limit), RIO_ETRUNCATED (the input ends
 * inside the frame), RIO_ECORRUPT_DATA (data CRC mismatch); and, for a
 * frame read at an index entry, RIO_EBADINDEX (not the entry's size).
 *
 * The damage policy (rio__damage_action): FAIL stops at the first damage; SKIP
 * (and REPORT) counts it and goes on: past the frame after a bad data CRC
 * (its length is trusted), to the next offset where a valid header starts
 * after a bad length (resync), to the end after a truncation. Inside a
 * compressed stream only a cut tail can be skipped: the decoded bytes after
 * any other damage cannot be trusted. rio__damage_action() says which.
 *
 * The checks are static inline: they run once per record in the hot loops
 * of the reader and the loader's workers.
 */
#ifndef RIO_FRAME_SCAN_H
#define RIO_FRAME_SCAN_H

#include "recordio.h"

#include "crc32c.h"
#include "endian.h"

#include <stddef.h>
#include <stdint.h>

/* The longest data length any caller accepts, whatever its limit says: a
 * frame of it can be buffered, and length + 16 does not overflow. */
#define RIO__FRAME_MAX ((uint64_t)SIZE_MAX / 4)

enum {
	RIO__FRAME_OK = 1,   /* a whole valid frame                          */
	RIO__FRAME_MORE = 0, /* read more bytes (never once the input ended) */
};

/* Checks the 12-byte header at p (avail bytes there; at_end: no more will
 * come). Sets *len when the 12 bytes are there (even when they are
 * damaged). Returns OK, MORE, RIO_ETRUNCATED (fewer than 12 bytes at the
 * end), RIO_ECORRUPT_LENGTH or RIO_ETOOLARGE (over `max` or
 * RIO__FRAME_MAX). */
static inline int rio__frame_head(const uint8_t *p, size_t avail, int at_end, uint64_t max,
                                  uint64_t *len)
{
	if (avail < RIO_HEADER_SIZE)
		return at_end ? RIO_ETRUNCATED : RIO__FRAME_MORE;
	uint64_t n = rio__load_le64(p);
	*len = n;
	if (rio__crc_mask(rio__crc32c(0, p, 8)) != rio__load_le32(p + 8))
		return RIO_ECORRUPT_LENGTH;
	if (n > max || n > RIO__FRAME_MAX)
		return RIO_ETOOLARGE;
	return RIO__FRAME_OK;
}

/* The whole frame's size for a data length a header check accepted. */
static inline size_t rio__frame_size(uint64_t len)
{
	return (size_t)len + RIO_FRAME_OVERHEAD;
}

/* 1 when the data CRC of the whole frame at p (data of len bytes, all
 * there) holds. */
static inline int rio__frame_data_ok(const uint8_t *p, uint64_t len)
{
	const uint8_t *data = p + RIO_HEADER_SIZE;
	return rio__crc_mask(rio__crc32c(0, data, (size_t)len)) ==
	       rio__load_le32(data + (size_t)len);
}

/* Checks the whole frame at p: the header as rio__frame_head(), that all
 * of it is there (MORE, or RIO_ETRUNCATED at the end), and with `verify`
 * its data CRC (RIO_ECORRUPT_DATA). */
static inline int rio__frame_check(const uint8_t *p, size_t avail, int at_end, uint64_t max,
                                   int verify, uint64_t *len)
{
	int rc = rio__frame_head(p, avail, at_end, max, len);
	if (rc != RIO__FRAME_OK)
		return rc;
	if (avail - RIO_HEADER_SIZE < *len + RIO_FOOTER_SIZE)
		return at_end ? RIO_ETRUNCATED : RIO__FRAME_MORE;
	if (verify && !rio__frame_data_ok(p, *len))
		return RIO_ECORRUPT_DATA;
	return RIO__FRAME_OK;
}

/* Checks the frame read at an index entry of `framed` bytes (avail bytes
 * of it there, the read ending there): as rio__frame_check(), and
 * RIO_EBADINDEX when a whole valid frame is not the size the entry gives. */
static inline int rio__frame_check_entry(const uint8_t *p, size_t avail, uint64_t framed,
                                         uint64_t max, int verify, uint64_t *len)
{
	int rc = rio__frame_check(p, avail, 1, max, verify, len);
	if (rc == RIO__FRAME_OK && rio__frame_size(*len) != framed)
		return RIO_EBADINDEX;
	return rc;
}

/* Resync after a bad header: the first offset q in [from, avail) where a
 * valid header starts (length CRC matches, length within `max`). Returns q
 * when found (q + 12 <= avail); else the first offset from which fewer
 * than 12 bytes are left (everything before it holds no header start):
 * read more and search again from there, or, at the end of the input,
 * the damage runs to the end. */
size_t rio__frame_resync(const uint8_t *buf, size_t from, size_t avail, uint64_t max);

/* Fills `e` with damage `code` at `offset` (record `record`) in `path`,
 * worded the same by every caller: `have` bytes were there, `len` is the
 * length the header gave (when it was read), `max` the limit. Returns code. */
int rio__frame_error(rio_error *e, int code, const char *path, uint64_t offset, uint64_t record,
                     size_t have, uint64_t len, uint64_t max);

/* ---- the damage policy ------------------------------------------------- */

/* What to do after a damage. */
typedef enum rio__recover {
	RIO__RECOVER_STOP = 0, /* return the error; the input stops          */
	RIO__RECOVER_NEXT,     /* skip this frame (its length is sound)      */
	RIO__RECOVER_RESYNC,   /* the length is unsound: find the next header */
	RIO__RECOVER_END,      /* the input ends here (a cut tail)           */
} rio__recover;

/* A reader's policy and what it skipped. (The loader counts its skipped
 * records otherwise: as those planned and not delivered, batcher.c.) */
typedef struct rio__damage {
	rio_damage_policy policy;
	uint64_t records;      /* damaged regions skipped (one record each)  */
	uint64_t bytes;        /* bytes they spanned                         */
} rio__damage;

static inline void rio__damage_init(rio__damage *d, rio_damage_policy policy)
{
	d->policy = policy;
	d->records = d->bytes = 0;
}

/* How reading can go on after damage `code` (a RIO_E* frame code, or a
 * compressed stream's RIO_ECOMPRESSED) in a `compressed` input, whatever
 * the policy: a reader that must pass over damage that is not its own
 * (before the records it reads) recovers so. */
static inline rio__recover rio__frame_recovery(int code, int compressed)
{
	if (code == RIO_ETRUNCATED)
		return RIO__RECOVER_END;
	if (compressed)
		return RIO__RECOVER_STOP;
	if (code == RIO_ECORRUPT_DATA)
		return RIO__RECOVER_NEXT;
	if (code == RIO_ECORRUPT_LENGTH || code == RIO_ETOOLARGE)
		return RIO__RECOVER_RESYNC;
	return RIO__RECOVER_STOP;
}

/* What `policy` does with damage `code` in a `compressed` input: STOP
 * under FAIL, else the recovery above. */
static inline rio__recover rio__damage_action(rio_damage_policy policy, int code, int compressed)
{
	return policy == RIO_DAMAGE_FAIL ? RIO__RECOVER_STOP : rio__frame_recovery(code, compressed);
}

#endif /* RIO_FRAME_SCAN_H */

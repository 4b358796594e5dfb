/*
 * size.h — byte sizes as people write them ("64M", "1.5G", "4096"): the
 * one parser every option that takes a size goes through (the tools, the
 * trainer, and the Python package by way of rio_size_parse() in
 * recordio.h), so "MB" means the same everywhere; and the inverse, for
 * messages and tables ("1.5 GiB").
 *
 * The grammar (RIO__SIZE_HELP says it in a --help):
 *   SIZE   = DIGITS [ "." DIGITS UNIT ] | DIGITS UNIT
 *   UNIT   = "K" | "M" | "G" | "T"  or  "KiB" | "MiB" | "GiB" | "TiB"
 *            (powers of 1024)
 *          | "KB" | "MB" | "GB" | "TB"  (powers of 1000)
 *          | "B"  (bytes, as no unit)
 * Decimal digits only, the units spelled exactly so (case matters: "b"
 * would be bits to some); a fraction needs a unit larger than a byte, and
 * the bytes it gives are rounded down ("1.5K" is 1536, "0.3K" 307).
 * Refused: an empty text, blanks anywhere, a sign, hex ("0x10"),
 * exponents ("1e8"), "inf", "nan", any other unit or trailing text ("1Q",
 * "1MBB", "1Mi"), and a size past the caller's maximum or past 2^64-1.
 * "0" parses as 0 bytes: what 0 means is each option's to say.
 */
#ifndef RIO_SIZE_H
#define RIO_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* The grammar in --help lines (each ends in a newline). */
#define RIO__SIZE_HELP                                                                           \
	"A SIZE is a whole number of bytes, or a number with a unit: K, M, G, T (or\n"             \
	"KiB, MiB, GiB, TiB) are powers of 1024, KB, MB, GB, TB powers of 1000, B is\n"             \
	"bytes; a fraction needs a unit (1.5G), e.g. 4096, 256K, 64MB.\n"

/* Parses `text` as a size of at most `max` bytes (the caller's type's or
 * option's limit; UINT64_MAX for none). Returns 0 and sets *bytes, or
 * -EINVAL (not a size) or -ERANGE (more than `max`) with a one-line
 * message in msg (msglen bytes, cut to fit; msg may be NULL when msglen
 * is 0) that quotes the text, e.g. "expected a size such as 64M or 1.5G,
 * got '1Q': unknown unit 'Q'". Never prints; *bytes is left alone on
 * failure. */
int rio__size_parse(const char *text, uint64_t max, uint64_t *bytes, char *msg, size_t msglen);

/* `bytes` for people, in buf (size bytes): "512 B", "1.5 KiB" ... "2.0
 * TiB" (one decimal, powers of 1024). Returns buf. */
const char *rio__format_bytes(char *buf, size_t size, uint64_t bytes);

#endif /* RIO_SIZE_H */

/*
 * endian.h — little-endian loads and stores of fixed-width integers.
 *
 * TFRecord frames are little-endian. memcpy keeps these free of alignment
 * traps and compiles to a single move on x86-64.
 */
#ifndef RIO_ENDIAN_H
#define RIO_ENDIAN_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rio__load_le32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t rio__load_le64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void rio__store_le32(void *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

static inline void rio__store_le64(void *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

#endif /* RIO_ENDIAN_H */

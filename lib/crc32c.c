/*
 * crc32c.c — CRC-32C implementations and the dispatcher.
 *
 * Why three: ISA-L is the well-kept fast one (PCLMUL folding over several
 * streams) and is used when the build has it; SSE4.2's crc32 instruction is
 * the fallback on x86-64 without ISA-L; the portable slicing-by-8 table keeps
 * the library correct everywhere else. The choice is made once, on first
 * use, by pthread_once: no mutable global state is shared after that.
 */
#include "config.h"
#include "crc32c.h"

#include <limits.h>
#include <pthread.h>

#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

/* ---- portable: slicing-by-8 ----------------------------------------------- */

static uint32_t slice_table[8][256];
static pthread_once_t slice_once = PTHREAD_ONCE_INIT;

static void slice_table_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		slice_table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			slice_table[k][n] = (slice_table[k - 1][n] >> 8) ^
			                    slice_table[0][slice_table[k - 1][n] & 0xff];
}

uint32_t rio__crc32c_portable(uint32_t crc, const void *data, size_t size)
{
	const uint8_t *p = data;
	pthread_once(&slice_once, slice_table_init);
	crc = ~crc;
	while (size && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ slice_table[0][(crc ^ *p++) & 0xff];
		size--;
	}
	while (size >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
		              (uint32_t)p[7] << 24;
		crc = slice_table[7][lo & 0xff] ^ slice_table[6][(lo >> 8) & 0xff] ^
		      slice_table[5][(lo >> 16) & 0xff] ^ slice_table[4][lo >> 24] ^
		      slice_table[3][hi & 0xff] ^ slice_table[2][(hi >> 8) & 0xff] ^
		      slice_table[1][(hi >> 16) & 0xff] ^ slice_table[0][hi >> 24];
		p += 8;
		size -= 8;
	}
	while (size--)
		crc = (crc >> 8) ^ slice_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

/* ---- SSE4.2 ----------------------------------------------------------------- */

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <string.h>

__attribute__((target("sse4.2"))) uint32_t rio__crc32c_sse42(uint32_t crc, const void *data,
                                                             size_t size)
{
	const uint8_t *p = data;
	uint64_t c = ~crc;
	while (size && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		size--;
	}
	while (size >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		size -= 8;
	}
	while (size--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

int rio__crc32c_have_sse42(void)
{
	return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t rio__crc32c_sse42(uint32_t crc, const void *data, size_t size)
{
	return rio__crc32c_portable(crc, data, size);
}

int rio__crc32c_have_sse42(void)
{
	return 0;
}
#endif

/* ---- ISA-L -------------------------------------------------------------------- */

#ifdef HAVE_ISAL
/* crc32_iscsi() takes an int length and no pre/post inversion of its own
 * beyond the seed: feed it ~crc and invert the result. */
uint32_t rio__crc32c_isal(uint32_t crc, const void *data, size_t size)
{
	unsigned char *p = (unsigned char *)data;
	uint32_t c = ~crc;
	while (size > 0) {
		int n = size > (size_t)INT_MAX ? INT_MAX & ~63 : (int)size;
		c = crc32_iscsi(p, n, c);
		p += n;
		size -= (size_t)n;
	}
	return ~c;
}

int rio__crc32c_have_isal(void)
{
	return 1;
}
#else
uint32_t rio__crc32c_isal(uint32_t crc, const void *data, size_t size)
{
	return rio__crc32c_portable(crc, data, size);
}

int rio__crc32c_have_isal(void)
{
	return 0;
}
#endif

/* ---- dispatcher --------------------------------------------------------------- */

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static crc_fn best_crc;
static pthread_once_t best_once = PTHREAD_ONCE_INIT;

static void choose_crc(void)
{
	if (rio__crc32c_have_isal())
		best_crc = rio__crc32c_isal;
	else if (rio__crc32c_have_sse42())
		best_crc = rio__crc32c_sse42;
	else
		best_crc = rio__crc32c_portable;
}

uint32_t rio__crc32c(uint32_t crc, const void *data, size_t size)
{
	pthread_once(&best_once, choose_crc);
	return best_crc(crc, data, size);
}

/* ---- zeros: the register times x^(8n) modulo the polynomial --------------- */

/* a(x) b(x) modulo the polynomial, reflected (bit 31 is x^0): zlib's
 * multmodp. */
static uint32_t mult_mod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;
	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

uint32_t rio__crc32c_zeros(uint32_t crc, uint64_t n)
{
	/* x^(8n) by squaring: power holds x^(8 x 2^k) as n's bits go */
	uint32_t power = 1u << 23, reg = ~crc; /* x^8 */
	for (; n; n >>= 1) {
		if (n & 1)
			reg = mult_mod(power, reg);
		power = mult_mod(power, power);
	}
	return ~reg;
}

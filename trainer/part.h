/*
 * part.h — the k-th of `parts` balanced contiguous parts of n items, each
 * starting at a multiple of `align` items (a cache line of floats for
 * sums and slices that ranks write side by side): the one rule by which
 * the reducer cuts a bucket into slices, the parameter servers cut the
 * parameters, and they cut an embedding table's rows.
 */
#ifndef RIO_TRAINER_PART_H
#define RIO_TRAINER_PART_H

#include <stdint.h>

static inline void tr_part(uint64_t n, int parts, int k, uint64_t align, uint64_t *lo,
                           uint64_t *hi)
{
	uint64_t per = (n + (uint64_t)parts - 1) / (uint64_t)parts;
	per = (per + align - 1) / align * align;
	uint64_t a = (uint64_t)k * per, b = a + per;
	*lo = a < n ? a : n;
	*hi = b < n ? b : n;
}

#endif /* RIO_TRAINER_PART_H */

/*
 * decimal.h — an unsigned integer's decimal digits written by hand, for the
 * text outputs that write one line per record (the .idx sidecar, the
 * bench's --dump-order file), where fprintf would cost more than the work
 * being recorded. Header-only and inline.
 */
#ifndef RIO_DECIMAL_H
#define RIO_DECIMAL_H

#include <stdint.h>

/* Writes v's decimal digits at p (at most 20, no NUL); returns the new end. */
static inline char *rio__put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

#endif

/*
 * grow.c — see grow.h. The array's pointer is read and written through
 * memcpy, so that one function serves every T ** without a cast at the
 * call or an alias of T * as void *.
 */
#include "config.h"
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t rio__grow_cap(size_t cap, size_t need, size_t first)
{
	if (need <= cap)
		return cap;
	size_t c = cap ? cap : first ? first : 1;
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : 2 * c;
	return c;
}

int rio__resize(void *items, size_t n, size_t item_size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, item_size, &bytes))
		return -ENOMEM;
	void *old;
	memcpy(&old, items, sizeof old);
	void *p = realloc(old, bytes ? bytes : 1);
	if (!p)
		return -ENOMEM;
	memcpy(items, &p, sizeof p);
	return 0;
}

int rio__grow(void *items, size_t *cap, size_t need, size_t item_size, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = rio__grow_cap(*cap, need, first);
	if (item_size && c > SIZE_MAX / item_size)
		c = need; /* the doubling overshot; need itself may still fit */
	int rc = rio__resize(items, c, item_size);
	if (rc == 0)
		*cap = c;
	return rc;
}

int rio__grow_zeroed(void *items, size_t *cap, size_t need, size_t item_size, size_t first)
{
	size_t had = *cap;
	int rc = rio__grow(items, cap, need, item_size, first);
	if (rc == 0 && *cap > had) {
		char *p;
		memcpy(&p, items, sizeof p);
		memset(p + had * item_size, 0, (*cap - had) * item_size);
	}
	return rc;
}

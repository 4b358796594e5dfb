/*
 * grow.h — growing an array by doubling, written once: "if it is full,
 * double its capacity (or start at a first one), realloc, check the size
 * for overflow and the result for NULL, and keep the old array on
 * failure". Used by librecordio, the loader, the trainer and the tools
 * wherever an array or byte buffer grows as items come.
 *
 * An array is a pointer and a capacity in items; callers pass the address
 * of the pointer (a T **, as void *: no cast) and sizeof(T). On failure
 * the pointer, its items and the capacity are left exactly as they were,
 * and the error is -ENOMEM, as a size that does not fit in size_t is
 * memory that cannot be had. No message, no print: callers say what ran
 * out (their messages are unchanged by using these).
 *
 * Two arrays that share one capacity (parallel arrays) take the capacity
 * once from rio__grow_cap and call rio__resize on each:
 *
 *	if (v->n == v->cap) {
 *		size_t cap = rio__grow_cap(v->cap, v->n + 1, 16);
 *		if (rio__resize(&v->a, cap, sizeof *v->a) ||
 *		    rio__resize(&v->b, cap, sizeof *v->b))
 *			return -ENOMEM;
 *		v->cap = cap;
 *	}
 *
 * (a first that succeeds when the second fails leaves a larger array than
 * v->cap says, which is harmless: the next grow reallocs it again).
 */
#ifndef RIO_GROW_H
#define RIO_GROW_H

#include <stddef.h>

/* The capacity that holds `need` items: `cap` itself when it does, else
 * `cap` (or `first` when cap is 0; first 0 counts as 1) doubled until it
 * holds them; where doubling would pass SIZE_MAX, `need`. Pure. */
size_t rio__grow_cap(size_t cap, size_t need, size_t first);

/* Reallocates the array at *items (items is the address of the array's
 * pointer) to exactly `n` items of `item_size` bytes (one byte when that
 * is 0, so that the result is never the NULL realloc may give for 0).
 * Returns 0, or -ENOMEM when n * item_size passes SIZE_MAX or realloc
 * fails; *items is then untouched (and still owned by the caller). */
int rio__resize(void *items, size_t n, size_t item_size);

/* Makes the array at *items (of *cap items of item_size bytes) hold at
 * least `need` items: nothing when it does already, else grows it to
 * rio__grow_cap(*cap, need, first) items, or to `need` exactly where that
 * many bytes would pass SIZE_MAX. Returns 0 (and sets *cap), or -ENOMEM
 * with *items and *cap untouched. New items are not initialised. */
int rio__grow(void *items, size_t *cap, size_t need, size_t item_size, size_t first);

/* rio__grow, the new items (from the old capacity to the new) zeroed:
 * for arrays whose unused items must read as empty. */
int rio__grow_zeroed(void *items, size_t *cap, size_t need, size_t item_size, size_t first);

#endif /* RIO_GROW_H */

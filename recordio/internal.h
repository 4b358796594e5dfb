/*
 * internal.h — helpers shared inside librecordio; not installed.
 *
 * Error context: every object that can fail keeps a rio_error, filled by
 * rio__error_set() with a one-line message that names the file, the byte
 * offset and the record when they are known.
 */
#ifndef RIO_INTERNAL_H
#define RIO_INTERNAL_H

#include "atomic_file.h"
#include "recordio.h"

#include <stdarg.h>

#define RIO__UNKNOWN UINT64_MAX

/* Fills `e` (NULL allowed: then nothing happens) and returns `code`, so a
 * failing path reads `return rio__error_set(...)`. The message is
 * "PATH: offset O (record R): TEXT[: DETAIL]" with the parts that are known;
 * DETAIL is printf-formatted from `fmt` (may be NULL). */
int rio__error_set(rio_error *e, int code, const char *path, uint64_t offset, uint64_t record,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* rio_feature_as_floats() into bf16 (half.h): each value (an int64 cast
 * to float) times `scale`, rounded to nearest even. Same returns. */
int64_t rio__feature_as_bf16(const rio_feature *f, uint16_t *out, size_t max, float scale);

/* Clears `e` to "no error". */
void rio__error_clear(rio_error *e);

/* What e's message says after its code's text: the DETAIL of
 * "PATH: offset O: TEXT: DETAIL" (the whole message when it has no
 * TEXT: part; "" for no error), to be quoted inside another message. */
const char *rio__error_detail(const rio_error *e);

/* What a file of mode `mode` (a stat's st_mode) is, for a message: "a
 * directory", "a FIFO", "a character device"... */
const char *rio__file_kind(unsigned mode);

/* rio_output_check() without a message, as the rio__replace_check of
 * rio__tmpfile_commit() (atomic_file.h): only a regular file is replaced. */
int rio__output_replaceable(const char *path);

/* Allocates `size` bytes aligned to `align` (a power of two >= 8); NULL on
 * ENOMEM. Free with free(). */
void *rio__aligned_alloc(size_t align, size_t size);

/* A buffer that is filled whole, again and again (a read-ahead's): of
 * RIO__HUGE_PAGE bytes and up, aligned to them and asked (madvise) to be
 * backed by transparent huge pages, so that filling it the first time
 * takes a fault per 2 MiB, not one per 4 KiB page (each zeroing a page
 * and charging it to the memory cgroup); smaller, aligned to `align`.
 * Not for buffers filled in part: a huge page is resident whole. NULL on
 * ENOMEM. Free with free(). */
#define RIO__HUGE_PAGE (2u << 20)
void *rio__huge_alloc(size_t align, size_t size);

#endif /* RIO_INTERNAL_H */

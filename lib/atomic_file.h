/*
 * atomic_file.h — writing files so that a crash never leaves anything that
 * looks whole: the bytes go to a hidden temporary name beside the target,
 * which is given its final mode, fsync'd, closed and renamed over the
 * target; then the directory is fsync'd, so that the rename itself
 * survives a crash. Also the write loops (at the file's offset, and at a
 * given one), the positional read loop, and the directory fsync alone.
 *
 * Every step's failure is returned as a negative errno, none ignored: a
 * failed directory fsync too (the file is then in place but its name may
 * not survive a power cut, so a caller must not call it saved). No
 * message, no print: callers name the file (rio__write_file_atomic says
 * which step failed). Used by librecordio's writers (shards, .idx), the
 * tools (recordio-pack's commit journal) and the trainer's checkpoints.
 */
#ifndef RIO_ATOMIC_FILE_H
#define RIO_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes all `n` bytes to fd, retrying short writes and EINTR: 0, or a
 * negative errno (-EIO for a write that wrote nothing). */
int rio__write_all(int fd, const void *data, size_t n);

/* rio__write_all at offset `at` (pwrite: the file offset unchanged), as
 * several writers fill one file: 0, or a negative errno (-EIO for a
 * write that wrote nothing). */
int rio__pwrite_all(int fd, const void *data, size_t n, uint64_t at);

/* Reads up to `n` bytes at offset `at`, retrying short reads and EINTR:
 * the count (short only where the file ends), or a negative errno. */
ssize_t rio__pread_full(int fd, void *buf, size_t n, uint64_t at);

/* fsync(2) of the directory `dir`: 0 or a negative errno (its open's or
 * its fsync's). */
int rio__fsync_dir(const char *dir);
/* fsync(2) of the directory that holds `path` ("." for a bare name, "/"
 * for "/name"): 0 or a negative errno. */
int rio__fsync_dir_of(const char *path);

/* Creates a hidden temporary file next to `path` (".NAME.XXXXXX.tmp" in the
 * same directory, mode 0600 until committed), returns its fd and its
 * malloc'd name in *tmp_path, or a negative errno. */
int rio__tmpfile_open(const char *path, char **tmp_path);

/* Called on `path` just before a replacing rename: 0 to go on, or a
 * negative code that aborts the commit with that code (librecordio refuses
 * to replace anything but a regular file: rio_output_check()). */
typedef int (*rio__replace_check)(const char *path);

/* Finishes a temporary file from rio__tmpfile_open(): gives it the mode
 * open(2) would (0666 less the umask), fsyncs it when `do_fsync`, closes
 * it and renames it to `path`, then with `do_fsync` fsyncs the directory.
 * With `replace`, an existing `path` is replaced (after `check`, unless
 * NULL, allowed it); without, an existing `path` (even one created since
 * the temporary was opened) is left alone: -EEXIST. Closes fd in every
 * case; on a failure before the rename, unlinks tmp_path. Returns 0 or a
 * negative errno: when only the directory fsync failed, `path` holds the
 * new file. */
int rio__tmpfile_commit(int fd, const char *tmp_path, const char *path, int do_fsync,
                        int replace, rio__replace_check check);

/* `path` made of data[0, n) in one step, durably: a temporary file beside
 * it, written, fsync'd, renamed over whatever `path` was, the directory
 * fsync'd (the trainer's checkpoint and clock files). 0, or a negative
 * errno with *step (when step is not NULL) naming what failed: "create",
 * "write", "chmod", "fsync", "close", "rename" or "directory fsync". After a crash, or any failure but the directory fsync, `path`
 * is its old self (or absent); a crash can leave a ".NAME.XXXXXX.tmp". */
int rio__write_file_atomic(const char *path, const void *data, size_t n, const char **step);

#endif /* RIO_ATOMIC_FILE_H */

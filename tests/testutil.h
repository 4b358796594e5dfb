/*
 * testutil.h — helpers shared by the CUnit test programs.
 *
 * A fresh temporary directory per program (removed at exit when every test
 * passed), file helpers, access to the TensorFlow-written golden files, and
 * shards of known records, and the CUnit main loop: RIO_TEST_MAIN(suites) runs every suite verbosely,
 * prints CUnit's summary and exits non-zero on any failure.
 */
#ifndef RIO_TESTUTIL_H
#define RIO_TESTUTIL_H

#include "recordio.h"

#include <CUnit/Basic.h>
#include <stddef.h>
#include <stdint.h>

/* The test's scratch directory (created on first use). */
const char *tu_tmpdir(void);
/* tu_tmpdir() + "/" + name, in a static rotating buffer (8 slots). */
const char *tu_path(const char *name);
/* Writes / reads a whole file; read returns a malloc'd buffer (free it),
 * or NULL with *size = 0 when the file cannot be read. */
void tu_write_file(const char *path, const void *data, size_t size);
uint8_t *tu_read_file(const char *path, size_t *size);
int tu_file_exists(const char *path);
/* Entries of directory `dir`, hidden ones too ("." and ".." not counted);
 * -1 when it cannot be opened. */
int tu_count_entries(const char *dir);
/* The golden file `name` in $RIO_TESTDATA, or NULL when the directory is
 * missing (the caller then fails: the golden files are required). */
const char *tu_testdata(const char *name);
/* The next frame of a plain TFRecord image in memory, from *off: returns 1
 * with *data and *len set to its payload and *off moved past it, 0 at the
 * end, -1 when the bytes left do not hold a whole frame. CRCs are not
 * checked (the reader's tests do that); it reads the format by hand, without
 * the library. */
int tu_next_frame(const uint8_t *buf, size_t size, size_t *off, const uint8_t **data,
                  size_t *len);
/* Deterministic pseudo-random bytes. */
void tu_fill_random(void *buf, size_t size, uint64_t seed);

/* A shard written with rio_writer whose records are known: record i has
 * sizes[i] bytes from tu_fill_random(seed * 1000003 + i), or with `text`
 * mostly a few letters with random stretches (so that deflate uses Huffman
 * blocks and matches). Keeps each record, the offset rio_writer_write gave
 * it, the size of the uncompressed stream and the file's bytes as written.
 * Fails the test (fatally) when the shard cannot be written. */
typedef struct tu_shard {
	size_t n;
	uint8_t **data;
	size_t *size;
	uint64_t *off;    /* each record's offset, as rio_writer_write gave it */
	uint64_t end;     /* size of the uncompressed stream                   */
	uint8_t *file;    /* the shard's bytes as written                      */
	size_t file_size;
} tu_shard;

void tu_shard_make(tu_shard *s, const char *path, rio_compression comp, const size_t *sizes,
                   size_t n, uint64_t seed, int text);
void tu_shard_free(tu_shard *s);
/* Does rec hold record i of s (offset, size, bytes), numbered `index`? */
int tu_record_is(const rio_record *rec, const tu_shard *s, size_t i, uint64_t index);

typedef struct tu_test {
	const char *name;
	void (*fn)(void);
} tu_test;

typedef struct tu_suite {
	const char *name;
	const tu_test *tests; /* terminated by {NULL, NULL} */
} tu_suite;

/* Runs the suites (terminated by {NULL, NULL}); returns the exit code. */
int tu_run(const char *program, const tu_suite *suites);
/* `PROGRAM [WORD]`: all the suites, or with WORD only the tests whose name
 * holds it. */
int tu_main(int argc, char **argv, const tu_suite *suites);

#define RIO_TEST_MAIN(suites)                                                                      \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		return tu_main(argc, argv, suites);                                                \
	}

#endif /* RIO_TESTUTIL_H */

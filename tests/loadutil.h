/*
 * loadutil.h — helpers shared by the loader's test programs (test_loader,
 * test_loader_uring, test_loader_compressed).
 *
 * A dataset is a set of shards PREFIX-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4]
 * written with rio_writer in its own directory, whose records are known from
 * their place alone: record `index` of shard `shard` is
 *   - raw: u32 shard, u32 index, u32 tag (little-endian), then 0..99 bytes
 *     of tu_fill_random() from a hash of the three (lu_raw_payload());
 *   - example: a tf.train.Example with "image" bytes[784], "x" float[3] and
 *     "label" int64[1] (lu_example_values()), so decoded columns can be
 *     checked row by row; one record may be made bad on purpose.
 * Each shard can have its .idx sidecar (written from the offsets
 * rio_writer_write gave) or not, so the loader's scan path is exercised.
 *
 * A sequence (lu_seq) is what a loader delivered: every batch's epoch,
 * number and count, every record's (shard, index), with the raw payloads
 * checked against the dataset on the way.
 */
#ifndef RIO_LOADUTIL_H
#define RIO_LOADUTIL_H

#include "loader.h"
#include "recordio.h"
#include "testutil.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define LU_MAXSHARDS 8

/* Asserts `cond` and, when it fails, says why (printf-style). */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int ok_ = !!(cond);                                                                \
		CU_assertImplementation(ok_, __LINE__, #cond, __FILE__, "", CU_FALSE);             \
		if (!ok_) {                                                                        \
			printf("\n    line %d: ", __LINE__);                                       \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* What is wrong with the bad record of an example dataset. */
enum lu_bad {
	LU_BAD_NONE = 0,
	LU_BAD_NO_LABEL,    /* "label" missing                      */
	LU_BAD_SHORT_IMAGE, /* "image" of 783 bytes                 */
	LU_BAD_LONG_LABEL,  /* "label" with two values              */
	LU_BAD_FLOAT_LABEL, /* "label" a float list, not int64      */
	LU_BAD_NOT_EXAMPLE, /* the payload is not an Example at all  */
};

typedef struct lu_spec {
	const char *name;     /* directory under tu_tmpdir()          */
	uint32_t tag;         /* part of every raw payload            */
	const size_t *counts; /* records per shard                    */
	size_t nshards;
	rio_compression comp;
	unsigned idx_mask; /* bit s: write shard s's .idx          */
	int example;       /* 1: Examples, 0: raw payloads         */
	int bad;           /* enum lu_bad, for example datasets    */
	uint32_t bad_shard;
	uint64_t bad_index;
} lu_spec;

typedef struct lu_dataset lu_dataset;
/* Checks the raw payloads of a batch of a dataset written by other means
 * than lu_dataset_make; returns the records whose bytes are wrong. */
typedef size_t lu_payload_check(const rio_batch *b, const lu_dataset *d);

struct lu_dataset {
	lu_spec sp;
	lu_payload_check *check; /* NULL: lu_raw_payload's bytes       */
	char dir[512];
	char prefix[600]; /* DIR/data: a PREFIX spec      */
	char paths[LU_MAXSHARDS][640];
	size_t nshards;
	size_t count[LU_MAXSHARDS];
	uint64_t *off[LU_MAXSHARDS];     /* record offsets in each shard */
	uint64_t base[LU_MAXSHARDS + 1]; /* global ordinal of record 0   */
	uint64_t total;
};

/* Writes the dataset (fails the test fatally when it cannot). */
void lu_dataset_make(lu_dataset *d, const lu_spec *sp);
void lu_dataset_free(lu_dataset *d);
/* The global ordinal of (shard, index): its place in shard order. */
uint64_t lu_ordinal(const lu_dataset *d, uint32_t shard, uint64_t index);

#define LU_PAYLOAD_MAX 112
/* The raw payload of (shard, index) into buf (LU_PAYLOAD_MAX bytes);
 * returns its size. */
size_t lu_raw_payload(uint32_t tag, uint32_t shard, uint64_t index, uint8_t *buf);

typedef struct lu_values {
	uint8_t image[784];
	int64_t label;
	float x[3];
} lu_values;
void lu_example_values(uint32_t tag, uint32_t shard, uint64_t index, lu_values *v);

/* The column specs the tests use: LU_COLS_NATIVE is
 * "image:u8:784,label:i64:1,x:f32:3", LU_COLS_FLOAT is
 * "image:f32:784:0.5,label:f32:1,x:f32:3". */
#define LU_COLS_NATIVE "image:u8:784,label:i64:1,x:f32:3"
#define LU_COLS_FLOAT "image:f32:784:0.5,label:f32:1,x:f32:3"
/* Wrong values in a decoded batch of an example dataset, for one of those
 * specs (float_cols: the second); also checks names, types, lengths and
 * the page alignment of the columns. */
size_t lu_check_columns(const rio_batch *b, const lu_dataset *d, int float_cols);

typedef struct lu_id {
	uint32_t shard;
	uint64_t index;
} lu_id;

typedef struct lu_binfo {
	uint64_t epoch, number;
	size_t count;
	size_t first; /* index of its first record in rec[] */
} lu_binfo;

typedef struct lu_seq {
	lu_id *rec;
	size_t n, cap;
	lu_binfo *b;
	size_t nb, bcap;
	uint64_t bytes;     /* payload bytes of raw records             */
	size_t bad_payload; /* raw records whose bytes are wrong         */
	size_t bad_columns; /* decoded values that are wrong             */
	size_t bad_meta;    /* batches numbered out of order in an epoch */
	int float_cols;     /* which column spec (lu_check_columns)      */
} lu_seq;

void lu_seq_init(lu_seq *s);
void lu_seq_free(lu_seq *s);
/* Appends a batch (and checks its payloads or columns against d, which may
 * be NULL to check nothing; raw payloads with d->check when it is set). */
void lu_seq_add(lu_seq *s, const rio_batch *b, const lu_dataset *d);
/* Takes batches until rio_loader_next() returns <= 0 and returns that. */
int lu_drain_epoch(rio_loader *l, lu_seq *s, const lu_dataset *d);
/* Takes k batches (going on into the next epoch when one ends); returns 0,
 * or the error that stopped it. */
int lu_take(rio_loader *l, lu_seq *s, const lu_dataset *d, size_t k);
/* Views into a sequence (sharing its memory: never freed): batches
 * [from, from + nb), or records [from, from + n) with no batches; and the
 * index of the first batch of epoch e or later. */
lu_seq lu_seq_view(const lu_seq *s, size_t from, size_t nb);
lu_seq lu_seq_recview(const lu_seq *s, size_t from, size_t n);
size_t lu_epoch_start(const lu_seq *s, uint64_t e);

/* Takes batches until the end of epoch `last` (a 0 before that is passed
 * over: a loader resumed at the end of an epoch may end it first); returns
 * 0, the error that stopped it, or -EPROTO past epoch `last`. */
int lu_drain_through(rio_loader *l, lu_seq *s, const lu_dataset *d, uint64_t last);
/* Are batches [afrom, a->nb) of a the same as [bfrom, b->nb) of b (epoch,
 * number, count and records)? */
int lu_seq_equal(const lu_seq *a, size_t afrom, const lu_seq *b, size_t bfrom);
/* Describes the first difference between batches [afrom..] of a and
 * [bfrom..] of b into buf (for failure messages); returns buf. */
const char *lu_seq_diff(const lu_seq *a, size_t afrom, const lu_seq *b, size_t bfrom, char *buf,
                        size_t size);
/* Do s and s2 hold the same records, each as many times (in any order)? */
int lu_same_set(const lu_dataset *d, const lu_seq *s, const lu_seq *s2);
/* Checks that the batches of s from batch `from` on form one whole epoch:
 * numbered 0.., of epoch `epoch`, `records` records in full batches of
 * `bs` and a short last one unless `drop`. Returns the problems found. */
int lu_epoch_shape(const lu_seq *s, size_t from, size_t bs, uint64_t epoch, uint64_t records,
                   int drop);
/* hits[ordinal]++ for every record of s (hits has d->total entries); returns
 * the records outside the dataset. */
size_t lu_count_hits(const lu_dataset *d, const lu_seq *s, unsigned *hits);
/* Records of d delivered other than exactly once by the sequences s[0..n). */
size_t lu_not_once(const lu_dataset *d, const lu_seq *s, size_t n);

/* Options for the tests: rank 0 of 1, RECORDS sharding, batches of 16,
 * 4 KiB chunks (several tasks per shard), a 64-record shuffle buffer, 2
 * pieces interleaved, the default I/O. */
void lu_base_opts(rio_loader_opts *o);
/* Opens a loader over d (asserts success; NULL on failure). */
rio_loader *lu_open(const lu_dataset *d, const rio_loader_opts *o);
/* Opens, takes `epochs` whole epochs into s, closes; asserts that each
 * epoch ended with 0. Returns 0 when all went well. */
int lu_run(const lu_dataset *d, const rio_loader_opts *o, int epochs, lu_seq *s);

/* Ends the program with a message if the test is still running after
 * `seconds` (a hang is a failure); 0 disarms it. */
void lu_watchdog(const char *what, unsigned seconds);

/* The bytes compressed as `c` (GZIP, ZLIB: zlib's deflate at level 6; LZ4:
 * a frame of 64 KiB blocks with a content checksum), malloc'd; *out_n gets
 * their size. For tests that damage or compare compressed streams. */
uint8_t *lu_compress(rio_compression c, const uint8_t *in, size_t n, size_t *out_n);

#endif /* RIO_LOADUTIL_H */

/*
 * checkpoint_format.h — the checkpoint file's layout, shared by its writer
 * (checkpoint_write.c) and its reader (checkpoint_read.c); checkpoint.h is
 * the manual of what it holds.
 *
 * Layout: "RIOCKPT1" | u32 version | u32 world | (version 2: u32
 * global_batch | f32 lr_scale) | u64 seed | u32 optimizer |
 * u32 nlayers | i32 sizes[nlayers + 1] | u64 epoch, step_in_epoch,
 * global_step, skipped_steps, optimizer_t | f64 epoch_loss, epoch_correct,
 * epoch_count | u64 nparams | f32 params[n] | f32 state1[n] | f32 state2[n]
 * (Adam only) | u32 nblobs | (u32 size, bytes)[nblobs] | (version 3:
 * u32 strategy | strategy ps: u32 servers | u64 server_version | (u64
 * step_in_epoch, u64 global_step)[nblobs] | u32 ntables | (i64 vocab | u32
 * dim | f32 params[vocab x dim] | f32 state1[...] | f32 state2[...] (Adam
 * only))[ntables]) | (version 4: u32 sharding | u32 nshards | u64
 * shard_records[nshards] | u32 ncolumns | (u32 role | u64 length | u32
 * name length | name bytes)[ncolumns] | f64 total_samples | u64
 * total_gradients | u64 epoch_skipped | strategy ps: (u64 updates,
 * gradients, dropped, skipped, staleness_max | f64 staleness_sum, samples
 * | u64 total_updates, total_gradients | f64 total_samples)[servers]) |
 * (version 5: u32 D, P, T: the layout that wrote it) | (version 6: u64
 * epoch_overflows) | u32 crc32c.
 *
 * DIR/clock: "RIOCLOCK" | u32 version 1 | u32 the checkpoint's crc32c |
 * f64 seconds | u32 crc32c.
 */
#ifndef RIO_TRAINER_CHECKPOINT_FORMAT_H
#define RIO_TRAINER_CHECKPOINT_FORMAT_H

#include "checkpoint.h"

#include <stddef.h>
#include <stdint.h>

#define TR_CKPT_MAGIC "RIOCKPT1"
#define TR_CLOCK_MAGIC "RIOCLOCK"
enum { TR_CKPT_VERSION = 6 }; /* 1 to 5 are read too */
/* DIR/clock's bytes; a server's counts in version 4 */
enum { TR_CLOCK_SIZE = 28, TR_CKPT_SERVER_BYTES = 80 };

/* DIR/NAME (malloc'd), or NULL. */
char *tr_ckpt_file(const char *dir, const char *name);

/* The checkpoint's bytes but its tensors and CRC, as tr_ckpt_write writes
 * them: the header (to nparams, *head bytes), then what follows the
 * tensors (*tail bytes), in one malloc'd buffer; NULL: out of memory. */
uint8_t *tr_ckpt_encode_ends(const tr_ckpt *c, size_t *head, size_t *tail);

/* DIR made if it is not there: 0, or a negative errno with a message. */
int tr_ckpt_mkdir(const char *dir, char *err, size_t errlen);

/* DIR/clock written atomically: `seconds`, tied to the checkpoint whose
 * CRC is `crc`. 0, or a negative errno with a message. */
int tr_ckpt_write_clock(const char *dir, uint32_t crc, double seconds, char *err,
                        size_t errlen);

/* DIR/checkpoint opened for reading, checked to be the file `c` was read
 * from (tr_ckpt_read_meta's file_id): the fd, or a negative errno with a
 * message. */
int tr_ckpt_open(const char *dir, const tr_ckpt *c, char *err, size_t errlen);

/* n floats at byte `at` of a checkpoint's fd: 0, -EBADMSG when the file
 * ends before them, or a negative errno. */
int tr_ckpt_read_floats(int fd, uint64_t at, float *dst, size_t n);

#endif /* RIO_TRAINER_CHECKPOINT_FORMAT_H */

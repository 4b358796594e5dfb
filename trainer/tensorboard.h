/*
 * tensorboard.h — rank 0's TensorBoard event file (--tensorboard DIR): a
 * TFRecord file of Event protos, written with librecordio's live rio_writer
 * and rio_event_encode, no TensorFlow needed.
 *
 * The file is written under its final name from the start and every event
 * is handed to the kernel as soon as it is written, because TensorBoard
 * reads event files while they grow: a running job shows in TensorBoard at
 * once (an atomic rename at the end would hide it until the job ends). A
 * crash leaves every event written before it, and at worst a cut last
 * record, which TensorBoard's reader treats as not yet written.
 */
#ifndef RIO_TRAINER_TENSORBOARD_H
#define RIO_TRAINER_TENSORBOARD_H

#include "recordio.h"
#include "report.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tr_tboard {
	rio_writer *w;
	char *path;     /* DIR/events.out.tfevents.<seconds>.<host>[.<pid>] */
	uint8_t *buf;   /* one encoded Event                                */
	size_t cap;
	int failed;     /* a write failed: err holds why                    */
	char err[512];
} tr_tboard;

/* Creates DIR if needed (its parent must exist) and starts a new event file
 * in it with the "brain.Event:2" header event; an existing name is never
 * replaced (".<pid>" is added). 0, or a negative errno with a one-line
 * message naming the path in err. */
int tr_tb_open(tr_tboard *tb, const char *dir, char *err, size_t errlen);

/* Appends one Event of n scalars at `step` and hands it to the file. A
 * failure is kept (tb->failed, tb->err) and later calls do nothing: the
 * caller reports it once, where all ranks can agree on it. */
int tr_tb_scalars(tr_tboard *tb, int64_t step, const rio_scalar *v, size_t n);

/* The epoch's scalars at `step`: train/loss, train/accuracy, test/loss and
 * test/accuracy (with a test set), train/learning_rate,
 * perf/samples_per_s, perf/data_wait_fraction. As tr_tb_scalars. */
int tr_tb_epoch(tr_tboard *tb, int64_t step, const tr_epoch_report *e);

/* Closes the file; 0, or -1 with the message in tb->err. NULL-safe when
 * never opened (tb->w NULL). */
int tr_tb_close(tr_tboard *tb);

#endif /* RIO_TRAINER_TENSORBOARD_H */

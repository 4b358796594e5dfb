/*
 * cursor.h — where a run is: the epoch, the step, the epoch's running sums
 * and the counters since the start — what a checkpoint records of the run
 * besides its tensors and loader positions (checkpoint.h) — with what this
 * process did of the epoch in progress (its rates count only that). Owned
 * by main.c; the strategy's steps advance it, the run loop (train.c) moves
 * it from epoch to epoch, a resume sets it from the checkpoint.
 */
#ifndef RIO_TRAINER_CURSOR_H
#define RIO_TRAINER_CURSOR_H

#include <stdint.h>

typedef struct tr_cursor {
	uint64_t epoch;           /* in progress, from 0                        */
	uint64_t step_in_epoch;   /* its steps done (ps: this worker's)         */
	uint64_t epoch_steps;     /* its steps in all: the steps per epoch, or
	                           * after a resume those done plus what the
	                           * rest of the epoch gives                  */
	uint64_t global_step;     /* steps taken, skipped ones included         */
	uint64_t skipped_steps;   /* steps skipped for non-finite values        */
	double ep_loss, ep_correct, ep_count; /* the epoch so far (allreduce:
	                           * every rank's; ps: this worker's)         */
	uint64_t ep_skipped;      /* the epoch's steps skipped so far           */
	uint64_t ep_overflows;    /* ... of them, for an infinity in a 16-bit
	                           * message (--grad-compression: grad_overflows) */
	double total_samples;     /* allreduce: records trained on since the
	                           * start (all ranks)                        */
	uint64_t total_gradients; /* allreduce: each step's ranks, summed       */
	double train_seconds;     /* training seconds since the run began, to
	                           * the epoch in progress (a resumed run's
	                           * from DIR/clock)                          */
	/* this process's part of the epoch in progress */
	double t_epoch0;          /* when it began (0: between epochs)          */
	double ep_count0;         /* the epoch's records before it              */
	uint64_t step0;           /* ... and steps                              */
} tr_cursor;

/* The next epoch, of `steps` steps: the epoch's sums start again. */
static inline void tr_cursor_next_epoch(tr_cursor *c, uint64_t steps)
{
	c->epoch++;
	c->step_in_epoch = 0;
	c->epoch_steps = steps;
	c->ep_loss = c->ep_correct = c->ep_count = 0;
	c->ep_skipped = c->ep_overflows = 0;
}

#endif /* RIO_TRAINER_CURSOR_H */

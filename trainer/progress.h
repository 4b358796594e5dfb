/*
 * progress.h — the line rank 0 keeps up to date on a terminal during an
 * epoch: "epoch 3/20  step 120/234  51% 45210 samples/s  ETA 0:03",
 * rewritten in place with \r at most 4 times a second and erased before
 * the epoch's own line. Off with --quiet and when the output is not a
 * terminal.
 *
 * "A terminal": stdout is one, and under Open MPI, which hands every rank
 * a pseudo-terminal as stdout even when mpirun's own output goes to a file
 * or a pipe, mpirun's (the parent's) stdout is one too; a rank started by
 * a remote daemon or under another launcher whose parent's stdout is not a
 * terminal shows nothing.
 */
#ifndef RIO_TRAINER_PROGRESS_H
#define RIO_TRAINER_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct tr_progress {
	FILE *f;          /* NULL: off                                  */
	double t0, last;  /* the epoch's start, the last refresh        */
	uint64_t step0;   /* the epoch's first step (resumed: not 0)    */
	int shown;        /* a line is on the screen                    */
	double interval;  /* seconds between redraws: 0.25, or the
	                   * environment's RIO_PROGRESS_INTERVAL (tests) */
} tr_progress;

/* On when `want` and the output is a terminal (see above). */
void tr_progress_init(tr_progress *p, int want);
/* At the start of an epoch's steps (step: the step in the epoch). */
void tr_progress_begin(tr_progress *p, uint64_t step);
/* After a step: redraws when 0.25 s have passed since the last time. */
void tr_progress_update(tr_progress *p, uint64_t epoch, uint64_t epochs, uint64_t step,
                        uint64_t steps, uint64_t samples_per_step);
/* Erases the line (before the epoch's report, or any other output). */
void tr_progress_clear(tr_progress *p);

#endif /* RIO_TRAINER_PROGRESS_H */

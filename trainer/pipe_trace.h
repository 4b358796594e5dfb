/*
 * pipe_trace.h — a pipeline stage's timeline, for finding where its idle
 * time goes (RIO_PIPE_TRACE=PREFIX in the environment; off otherwise, and
 * then free: a NULL trace records nothing).
 *
 * Each rank writes PREFIX.<world rank>.tsv: a first line "# rank R, pid
 * P" (the process, for matching the kernel's scheduler events to the
 * rank: bench/pipe_sched.py), a header line, then one line an event:
 *   step kind m start end
 * with the step's index in this process, the event's kind (below), the
 * microbatch's index in the step (-1: none) and the monotonic clock's
 * seconds (clock.h: the same clock on every rank of a host, so the ranks'
 * files line up). Kinds:
 *   F, B        a microbatch's forward, backward (their compute: the
 *               backward's loss or output gradient, GEMMs, the gradient's
 *               sum into the step's);
 *   wA, wG, wL  a wait for a receive: the activations, the output's
 *               gradient, the labels;
 *   sA, sG, sL  a wait for the slot's previous send to be through (the
 *               activations, the input's gradient; the labels: the
 *               batch before's) before it is reused;
 *   iA, iG      a send posted (instant: start = end): MPI_Isend of the
 *               activations, of the input's gradient;
 *   rA, rG      a receive posted (instant);
 *   D           the step's end: every message waited for (the drain);
 *   S           the step's whole schedule (tr_stage_step), from its start
 *               to the drain's end: the bubble metric's waits (its idle
 *               time) are the w*, s* and D within it;
 *   X           the exchange after the schedule (the data allreduce and
 *               the step's head over the world);
 *   O           the optimizer's update.
 * Events are kept in memory during a step and written after it (outside
 * the schedule's time). Diagnostics only: not a stable format.
 */
#ifndef RIO_TRAINER_PIPE_TRACE_H
#define RIO_TRAINER_PIPE_TRACE_H

#include <stdio.h>

typedef struct tr_pipe_trace tr_pipe_trace;

/* The trace RIO_PIPE_TRACE asks for (world rank `rank`'s file), or NULL
 * when it is unset or the file cannot be opened (then *err says so: one
 * line, errlen bytes; empty when unset). */
tr_pipe_trace *tr_pipe_trace_open(int rank, char *err, size_t errlen);
/* Writes what is kept and closes; NULL allowed. */
void tr_pipe_trace_close(tr_pipe_trace *t);

/* An event of `kind` (a string of at most 2 letters) for microbatch m from
 * start to end (seconds, rio__now()); NULL t: nothing. */
void tr_pipe_trace_add(tr_pipe_trace *t, const char *kind, int m, double start, double end);
/* The step's events written; the next events are the next step's. */
void tr_pipe_trace_step(tr_pipe_trace *t);

#endif /* RIO_TRAINER_PIPE_TRACE_H */

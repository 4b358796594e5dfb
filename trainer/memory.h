/*
 * memory.h — how much memory this process may use: the smallest of its
 * cgroup's limits (cgroup v2 memory.max, cgroup v1 memory.limit_in_bytes,
 * of its own cgroup and of each one above it) and the machine's memory
 * (MemTotal). What a run's buffers are measured against before they are
 * allocated (main.c: the model and the --embed tables), so that a run that
 * cannot fit says so at once, with the numbers, rather than allocating
 * until the kernel kills it; and what a plan of where a model's parts go
 * measures a rank's share against.
 *
 * Plain file reading, no MPI: the ranks of one host share its limit, and
 * the caller sums what they hold.
 */
#ifndef RIO_TRAINER_MEMORY_H
#define RIO_TRAINER_MEMORY_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_memory_limit {
	uint64_t bytes;   /* UINT64_MAX: no limit could be read             */
	char source[1200]; /* where the limit comes from, for messages: the
	                   * cgroup file ("/sys/fs/cgroup/job/memory.max"),
	                   * or "MemTotal in /proc/meminfo"                */
} tr_memory_limit;

/* The limit of this process. `root`: "" for this system, or a directory
 * that stands for "/" (tests): its proc/self/mountinfo (where the cgroup
 * hierarchies are mounted), proc/self/cgroup (this process's cgroup in
 * each), proc/meminfo and the cgroup files those name are read under it.
 * A cgroup limit of "max", or v1's "no limit" (a value of 2^62 or more),
 * does not limit; what cannot be read does not either. Never fails. */
void tr_memory_limit_get(const char *root, tr_memory_limit *m);

/* This process's peak resident memory so far (VmHWM in /proc/self/status),
 * in bytes; 0 when it cannot be read. */
uint64_t tr_memory_peak(void);

#endif /* RIO_TRAINER_MEMORY_H */

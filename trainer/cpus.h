/*
 * cpus.h — where a rank's loader threads run (--loader-cpus).
 */
#ifndef RIO_TRAINER_CPUS_H
#define RIO_TRAINER_CPUS_H

#include <mpi.h>

/* Collective over `comm`: the CPUs for this rank's loader threads under
 * --loader-cpus spare: the node's online CPUs that no rank of the node is
 * bound to and this process may use, in cpus[] (at most max of them).
 * Returns their count, or 0 when there are none (every CPU is some rank's,
 * or the ranks are not bound): the loader threads then inherit the rank's
 * CPUs. */
int tr_loader_cpus(MPI_Comm comm, int *cpus, int max);

#endif /* RIO_TRAINER_CPUS_H */

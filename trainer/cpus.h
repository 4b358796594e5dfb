/*
 * cpus.h — where a rank's loader threads run (--loader-cpus), how many
 * CPUs the rank itself may use (the default of --threads), and which
 * OpenBLAS kernels its CPU can run.
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

/* How many CPUs this process may run on (its affinity mask: one where
 * the launcher bound the rank to a core), or 0 when that is not known. */
int tr_own_cpus(void);

/* OpenBLAS picks its kernels from the CPU's model; virtual machines that
 * hide it get a slow fallback. When the user has not chosen
 * (OPENBLAS_CORETYPE), restarts the program once (execv, before MPI_Init)
 * with the kernels the CPU's flags allow; returns when there is nothing
 * to do or the restart failed. */
void tr_choose_blas_kernels(char **argv);

#endif /* RIO_TRAINER_CPUS_H */

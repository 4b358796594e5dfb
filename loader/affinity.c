/*
 * affinity.c — where the loader's threads run (opts.cpus): the set is
 * checked and copied at open, and every thread of an epoch is started on
 * it. Without the option, threads inherit the CPUs of the thread that
 * starts them; for an MPI rank bound to one core (mpirun's default for a
 * few ranks) that is the rank's own core, and the loader's decoding then
 * preempts the rank's computation while other cores sit idle.
 */
#include "config.h"
#include "loader_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

int rio__cpus_init(rio_loader *l)
{
	const int *cpus = l->o.cpus;
	size_t n = l->o.ncpus;
	l->o.cpus = NULL; /* the caller's array is not kept */
	if (!n)
		return 0;
	if (!cpus)
		return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "invalid loader option: ncpus is set but cpus is NULL");
#ifdef CPU_SETSIZE
	cpu_set_t *set = calloc(1, sizeof *set);
	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE) {
			free(set);
			return rio__error_set(&l->err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "invalid loader option: cpus[%zu] is CPU %d, outside "
			                      "0 to %d", i, cpus[i], CPU_SETSIZE - 1);
		}
		CPU_SET(cpus[i], set);
	}
	l->cpuset = set;
	return 0;
#else
	return rio__error_set(&l->err, -ENOTSUP, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
	                      "invalid loader option: cpus (thread placement) is not "
	                      "supported on this system");
#endif
}

void rio__cpus_free(rio_loader *l)
{
	free(l->cpuset);
	l->cpuset = NULL;
}

int rio__thread_start(rio_loader *l, pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr, *a = NULL;
#ifdef CPU_SETSIZE
	if (l->cpuset) {
		if (pthread_attr_init(&attr))
			return -ENOMEM;
		a = &attr;
		int rc = pthread_attr_setaffinity_np(a, sizeof(cpu_set_t), l->cpuset);
		if (rc) {
			pthread_attr_destroy(a);
			return -rc;
		}
	}
#endif
	int rc = pthread_create(t, a, fn, arg);
	if (a)
		pthread_attr_destroy(a);
	return -rc;
}

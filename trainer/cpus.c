/*
 * cpus.c — the CPUs a rank's loader threads run on (cpus.h).
 *
 * mpirun binds each rank to a core by default when there are few ranks;
 * threads inherit their creator's binding, so a rank's loader (reading,
 * decompressing, decoding, filling batches) would run on the rank's own
 * core and preempt its GEMMs, at every batch it hands over, while the
 * node's other cores sit idle (at one rank on two cores, that cost a
 * fifth of the speed: doc/performance.md). Where the node has CPUs that no
 * rank is bound to, the loaders run there, off the ranks' cores; where
 * every CPU is some rank's (or the ranks are not bound), nothing
 * changes.
 */
#include "config.h"
#include "cpus.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The online CPUs ("0-3,6" in /sys), into set; 0, or -1 when unknown. */
static int online_cpus(cpu_set_t *set)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f)
		return -1;
	char line[4096];
	int ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	CPU_ZERO(set);
	for (char *p = line; ok && *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -1;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < CPU_SETSIZE; c++)
			if (c >= 0)
				CPU_SET((int)c, set);
		p = *end == ',' ? end + 1 : end;
	}
	return ok && CPU_COUNT(set) > 0 ? 0 : -1;
}

int tr_loader_cpus(MPI_Comm comm, int *cpus, int max)
{
	cpu_set_t own, online;
	int known = sched_getaffinity(0, sizeof own, &own) == 0 && online_cpus(&online) == 0;
	/* every rank of the node takes part, whatever it knows */
	MPI_Comm node;
	MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	int n;
	MPI_Comm_size(node, &n);
	cpu_set_t *all = malloc((size_t)n * sizeof *all);
	int ok = known && all != NULL, all_ok;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
	if (all_ok)
		MPI_Allgather(&own, sizeof own, MPI_BYTE, all, sizeof own, MPI_BYTE, node);
	MPI_Comm_free(&node);
	int count = 0;
	if (all_ok) {
		cpu_set_t use = online, bound;
		CPU_ZERO(&bound);
		for (int r = 0; r < n; r++)
			CPU_OR(&bound, &bound, &all[r]);
		CPU_XOR(&use, &use, &bound); /* online and nobody's */
		CPU_AND(&use, &use, &online);
		/* which of them this process may use (its cgroup's): the kernel
		 * says, when the rank's main thread is moved there for a moment */
		if (CPU_COUNT(&use) > 0 && sched_setaffinity(0, sizeof use, &use) == 0) {
			if (sched_getaffinity(0, sizeof use, &use) < 0)
				CPU_ZERO(&use);
			sched_setaffinity(0, sizeof own, &own);
			for (int c = 0; c < CPU_SETSIZE && count < max; c++)
				if (CPU_ISSET(c, &use))
					cpus[count++] = c;
		}
	}
	free(all);
	return count;
}

int tr_own_cpus(void)
{
	cpu_set_t own;
	return sched_getaffinity(0, sizeof own, &own) == 0 ? CPU_COUNT(&own) : 0;
}

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

#include <cblas.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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

/* OpenBLAS picks its kernels from the CPU's model; virtual machines that
 * hide it ("Intel(R) Xeon(R) Processor") get the Prescott (SSE3) fallback,
 * 4 to 5 times slower than the AVX-512 or AVX2 kernels the CPU can run.
 * When the user has not chosen (OPENBLAS_CORETYPE), restart once with the
 * kernels the CPU's flags allow. OpenBLAS reads the variable when it is
 * loaded, hence the exec, before MPI_Init. */
void tr_choose_blas_kernels(char **argv)
{
	if (getenv("OPENBLAS_CORETYPE"))
		return;
	const char *core = openblas_get_corename();
	if (!core || (strcasecmp(core, "prescott") && strcasecmp(core, "core2") &&
	              strcasecmp(core, "nehalem") && strcasecmp(core, "katmai")))
		return;
	const char *better = NULL;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl"))
		better = "SkylakeX";
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		better = "Haswell";
	if (!better)
		return;
	setenv("OPENBLAS_CORETYPE", better, 1);
	/* by the program's own path, not /proc/self/exe: the process would
	 * be named "exe" (ps, top, /proc/PID/comm) */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		execv(self, argv);
	}
	execv("/proc/self/exe", argv);
	/* could not restart: carry on with the slow kernels */
}

/*
 * allreduce.c — the MPI_Allreduce sweep of bench/scaling.sh: a float sum
 * of every size from MIN to MAX bytes (times 4 each step), out of place,
 * timed over enough iterations to fill SECONDS, reported as nccl-tests
 * reports it: the time of the slowest rank, the algorithm bandwidth
 * (bytes / time) and the bus bandwidth (algbw x 2(n-1)/n, what each link
 * carries in a ring, comparable across rank counts). One JSON line per size
 * on rank 0; the sum is checked once per size (exit 1 if wrong).
 *
 * -i times what recordio-train's reducer calls instead: MPI_Iallreduce in
 * place, then MPI_Wait (Open MPI's libnbc, whose default for an in-place
 * sum is a binomial tree: a reduce to rank 0 and a broadcast back).
 *
 * Usage: mpirun -np N allreduce [-i] [MIN [MAX [SECONDS]]]
 *        (bytes, default 4096 67108864; seconds per size, default 0.3)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one allreduce of count floats: out of place, or in place non-blocking
 * (from send's values when fresh, else on what recv holds: the timed
 * calls sum sums, finite or infinite, at the same speed) */
static void reduce(int inplace, int fresh, float *send, float *recv, int count)
{
	if (inplace) {
		MPI_Request req;
		if (fresh)
			memcpy(recv, send, (size_t)count * sizeof *recv);
		MPI_Iallreduce(MPI_IN_PLACE, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	}
}

static double arg(int argc, char **argv, int i, const char *name, double def, double lo,
                  double hi, int rank)
{
	if (argc <= i)
		return def;
	char *end;
	double v = strtod(argv[i], &end);
	if (*end || end == argv[i] || !(v >= lo && v <= hi)) {
		if (rank == 0)
			fprintf(stderr, "allreduce: %s: '%s' is not a number from %.10g to %.10g\n", name,
			        argv[i], lo, hi);
		MPI_Finalize();
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	int inplace = argc > 1 && !strcmp(argv[1], "-i");
	if (inplace) {
		argv++;
		argc--;
	}
	size_t min = (size_t)arg(argc, argv, 1, "MIN (bytes)", 4096, 4, 1 << 30, rank);
	size_t max = (size_t)arg(argc, argv, 2, "MAX (bytes)", 64 << 20, (double)min, 1 << 30, rank);
	double target = arg(argc, argv, 3, "SECONDS (per size)", 0.3, 0, 60, rank);
	size_t cap = max / sizeof(float);
	float *send = malloc(cap * sizeof *send), *recv = malloc(cap * sizeof *recv);
	if (!send || !recv) {
		fprintf(stderr, "allreduce: rank %d: cannot allocate 2 x %zu bytes\n", rank, max);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < cap; i++)
		send[i] = (float)(rank + 1);
	const float want = (float)n * (float)(n + 1) / 2;
	int status = 0;

	for (size_t bytes = min; bytes <= max; bytes *= 4) {
		int count = (int)(bytes / sizeof(float));
		/* one warm-up call, checked; its slowest time sizes the loop so
		 * that every rank runs the same number of iterations */
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		reduce(inplace, 1, send, recv, count);
		double warm = MPI_Wtime() - t0, slowest;
		MPI_Allreduce(&warm, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		int bad = recv[0] != want || recv[count - 1] != want, anybad;
		MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
		if (anybad) {
			if (rank == 0)
				fprintf(stderr, "allreduce: %zu bytes: the sum is %g, not %g\n", bytes,
				        (double)recv[0], (double)want);
			status = 1;
			break;
		}
		int iters = slowest > 0 ? (int)(target / slowest) : 1000;
		iters = iters < 2 ? 2 : iters > 1000 ? 1000 : iters;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			reduce(inplace, 0, send, recv, count);
		double t = (MPI_Wtime() - t0) / iters, tmax;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			double algbw = (double)bytes / tmax / 1e9;
			printf("{\"ranks\": %d, \"call\": \"%s\", \"bytes\": %zu, \"iters\": %d, "
			       "\"seconds\": %.9g, \"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g}\n",
			       n, inplace ? "iallreduce_inplace" : "allreduce", bytes, iters, tmax, algbw,
			       algbw * 2.0 * (n - 1) / n);
			fflush(stdout);
		}
	}
	free(send);
	free(recv);
	MPI_Finalize();
	return status;
}

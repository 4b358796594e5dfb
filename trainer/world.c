/*
 * world.c — the MPI calls of world.h. Errors are agreed on with one
 * MPI_Allreduce so that exactly one rank reports and every rank finalizes
 * and exits with the same code (no MPI_Abort); an error only one rank can
 * see, in the middle of a collective, ends the job with MPI_Abort, never a
 * hang.
 */
#include "config.h"
#include "exit_status.h"
#include "world.h"

#include "recordio.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

int tr_world_init(tr_world *w, int *argc, char ***argv)
{
	/* Under LeakSanitizer, what this thread allocates in MPI_Init is not
	 * checked: it is Open MPI's, PMIx's and hwloc's (MPI_Init calls none of
	 * our code), and some of it is never freed, some through glibc
	 * (asprintf), whose frames the fast unwinder cannot walk past to name
	 * the library (tests/lsan.supp). Without this the tests unwound every
	 * malloc of every run the slow way, most of a short run's CPU time. */
#if defined(__SANITIZE_ADDRESS__)
	__lsan_disable();
#endif
	int rc = MPI_Init(argc, argv);
#if defined(__SANITIZE_ADDRESS__)
	__lsan_enable();
#endif
	if (rc != MPI_SUCCESS)
		return -1;
	w->comm = MPI_COMM_WORLD;
	MPI_Comm_rank(w->comm, &w->rank);
	MPI_Comm_size(w->comm, &w->size);
	MPI_Comm node;
	MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &w->local_rank);
	MPI_Comm_size(node, &w->local_size);
	MPI_Comm_free(&node);
	return 0;
}

void tr_world_finish(const tr_world *w) { MPI_Finalize(); }

int tr_world_launched_rank(void)
{
	static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return 0;
}

int tr_world_launched_size(void)
{
	static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = getenv(names[i]);
		if (v && atoi(v) > 0)
			return atoi(v);
	}
	return 0;
}

/* SIGTERM from the launcher ending the job: the usage error's exit. */
static void end_refused(int sig)
{
	(void)sig;
	_exit(EXIT_USAGE);
}

void tr_world_refuse_unstarted(const char *message)
{
	int rank = tr_world_launched_rank();
	if (rank == 0) {
		fprintf(stderr, "recordio-train: %s\n", message);
		exit(EXIT_USAGE);
	}
	struct sigaction sa = {.sa_handler = end_refused};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	struct timespec left = {10, 0};
	while (nanosleep(&left, &left) < 0) /* a signal that did not end us */
		;
	fprintf(stderr, "recordio-train: rank %d: %s\n", rank, message);
	exit(EXIT_USAGE);
}

int tr_world_first_failure(const tr_world *w, int failed)
{
	int mine = failed ? w->rank : w->size, first = w->size;
	MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, w->comm);
	return first < w->size ? first : -1;
}

/* Every rank of the job comes here together: a clean end, no MPI_Abort
 * (whose banner would bury the one line that matters). */
static void __attribute__((noreturn)) leave(int code)
{
	fflush(stdout);
	fflush(stderr);
	MPI_Finalize();
	exit(code);
}

void tr_world_agree(const tr_world *w, int failed, const char *message, int code)
{
	int first = tr_world_first_failure(w, failed);
	if (first < 0)
		return;
	if (w->rank == first && message && *message)
		fprintf(stderr, "recordio-train: %s\n", message);
	leave(code);
}

void tr_world_abort(const tr_world *w, const char *message, int code)
{
	if (w->size > 1)
		fprintf(stderr, "recordio-train: rank %d: %s\n", w->rank, message);
	else
		fprintf(stderr, "recordio-train: %s\n", message);
	fflush(stdout);
	fflush(stderr);
	if (w->size > 1)
		MPI_Abort(w->comm, code);
	leave(code);
}

uint64_t tr_world_node_sum_u64(const tr_world *w, uint64_t v)
{
	uint64_t out = v;
	MPI_Comm node;
	MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
	MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, node);
	MPI_Comm_free(&node);
	return out;
}

uint64_t tr_world_min_u64(const tr_world *w, uint64_t v)
{
	uint64_t out = v;
	MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MIN, w->comm);
	return out;
}

uint64_t tr_world_max_u64(const tr_world *w, uint64_t v)
{
	uint64_t out = v;
	MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MAX, w->comm);
	return out;
}

void tr_world_bcast(const tr_world *w, void *buf, size_t bytes)
{
	/* in pieces: MPI counts are int */
	uint8_t *p = buf;
	while (bytes) {
		int n = bytes > (1u << 30) ? 1 << 30 : (int)bytes;
		MPI_Bcast(p, n, MPI_BYTE, 0, w->comm);
		p += n;
		bytes -= (size_t)n;
	}
}

int tr_world_bcast_checked(const tr_world *w, float *host, size_t n)
{
	tr_world_bcast(w, host, n * sizeof *host);
	uint32_t crc = rio_crc32c(0, host, n * sizeof *host);
	uint32_t lo = crc, hi = crc;
	MPI_Allreduce(&crc, &lo, 1, MPI_UINT32_T, MPI_MIN, w->comm);
	MPI_Allreduce(&crc, &hi, 1, MPI_UINT32_T, MPI_MAX, w->comm);
	return lo == hi ? 0 : -1;
}

void tr_world_sum_to_root(const tr_world *w, double *v, int n)
{
	if (w->size == 1)
		return;
	if (w->rank == 0)
		MPI_Reduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, 0, w->comm);
	else
		MPI_Reduce(v, NULL, n, MPI_DOUBLE, MPI_SUM, 0, w->comm);
}

int tr_world_gather_blobs(const tr_world *w, const void *blob, uint32_t size, uint32_t **sizes,
                          uint8_t ***blobs)
{
	*sizes = NULL;
	*blobs = NULL;
	uint32_t *all = NULL;
	int *counts = NULL, *displs = NULL;
	uint8_t *flat = NULL;
	int ok = 1;
	if (w->rank == 0) {
		all = calloc((size_t)w->size, sizeof *all);
		counts = calloc((size_t)w->size, sizeof *counts);
		displs = calloc((size_t)w->size, sizeof *displs);
		ok = all && counts && displs;
	}
	/* every rank takes part even when rank 0 is out of memory */
	MPI_Gather(&size, 1, MPI_UINT32_T, all, 1, MPI_UINT32_T, 0, w->comm);
	size_t total = 0;
	if (w->rank == 0 && ok) {
		for (int r = 0; r < w->size; r++) {
			counts[r] = (int)all[r];
			displs[r] = (int)total;
			total += all[r];
		}
		ok = (flat = malloc(total ? total : 1)) != NULL;
	}
	MPI_Gatherv(blob, (int)size, MPI_BYTE, flat, counts, displs, MPI_BYTE, 0, w->comm);
	if (w->rank == 0 && ok) {
		uint8_t **out = calloc((size_t)w->size, sizeof *out);
		ok = out != NULL;
		for (int r = 0; ok && r < w->size; r++) {
			ok = (out[r] = malloc(all[r] ? all[r] : 1)) != NULL;
			if (ok)
				memcpy(out[r], flat + displs[r], all[r]);
		}
		if (ok) {
			*sizes = all;
			*blobs = out;
			all = NULL;
		} else if (out) {
			for (int r = 0; r < w->size; r++)
				free(out[r]);
			free(out);
		}
	}
	free(all);
	free(counts);
	free(displs);
	free(flat);
	return ok ? 0 : -1;
}

uint8_t *tr_world_scatter_blobs(const tr_world *w, uint32_t *const sizes, uint8_t *const *blobs,
                                uint32_t *size)
{
	uint32_t mine = 0;
	MPI_Scatter(sizes, 1, MPI_UINT32_T, &mine, 1, MPI_UINT32_T, 0, w->comm);
	int *counts = NULL, *displs = NULL;
	uint8_t *flat = NULL;
	if (w->rank == 0) {
		counts = calloc((size_t)w->size, sizeof *counts);
		displs = calloc((size_t)w->size, sizeof *displs);
		size_t total = 0;
		for (int r = 0; r < w->size; r++)
			total += sizes[r];
		flat = malloc(total ? total : 1);
		if (!counts || !displs || !flat)
			tr_world_abort(w, "out of memory scattering loader positions", 1);
		total = 0;
		for (int r = 0; r < w->size; r++) {
			counts[r] = (int)sizes[r];
			displs[r] = (int)total;
			if (sizes[r]) /* a rank with no position (a server) has none */
				memcpy(flat + total, blobs[r], sizes[r]);
			total += sizes[r];
		}
	}
	uint8_t *out = malloc(mine ? mine : 1);
	if (!out)
		tr_world_abort(w, "out of memory receiving a loader position", 1);
	MPI_Scatterv(flat, counts, displs, MPI_BYTE, out, (int)mine, MPI_BYTE, 0, w->comm);
	free(counts);
	free(displs);
	free(flat);
	*size = mine;
	return out;
}

void tr_world_gather_doubles(const tr_world *w, const double *mine, int n, double *all)
{
	MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, w->comm);
}

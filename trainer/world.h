/*
 * world.h — the MPI world as the trainer uses it: rank, size, the rank's
 * place on its node (for choosing a GPU and dividing cores), agreement on
 * errors so that every rank exits and none hangs, and the small
 * collectives around training (broadcasting the initial parameters and
 * checking them, agreeing on steps, reducing evaluation sums, gathering
 * loader positions for checkpoints).
 */
#ifndef RIO_TRAINER_WORLD_H
#define RIO_TRAINER_WORLD_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tr_world {
	MPI_Comm comm;
	int rank, size;
	int local_rank, local_size; /* among the ranks of this node */
} tr_world;

int tr_world_init(tr_world *w, int *argc, char ***argv);

/* Before MPI_Init: this process's rank as its launcher put it in the
 * environment (Open MPI's OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, MPICH's
 * PMI_RANK); 0 without one (one process, no launcher). */
int tr_world_launched_rank(void);

/* Before MPI_Init: the world's size as the launcher put it in the
 * environment (Open MPI's OMPI_COMM_WORLD_SIZE, MPICH's PMI_SIZE); 0 when
 * none says it (one process started alone, or a launcher that does not). */
int tr_world_launched_size(void);

/* Before MPI_Init, on every rank, for a usage error that every rank finds
 * alike (the command line): rank 0 prints "recordio-train: MESSAGE" and
 * exits 2. The others print nothing and wait for the launcher to end them
 * (mpirun sends SIGTERM once rank 0 exits non-zero), then exit 2 too: a
 * rank that exited first would have had mpirun kill rank 0, perhaps before
 * its line was out. Should nothing end a rank within 10 s (a launcher
 * that lets the job go on, or a rank 0 that did not fail alike), it says
 * "recordio-train: rank R: MESSAGE" itself and exits 2. */
void tr_world_refuse_unstarted(const char *message) __attribute__((noreturn));
void tr_world_finish(const tr_world *w);

/* Collective: the lowest rank that passes failed != 0, or -1 when none
 * does. */
int tr_world_first_failure(const tr_world *w, int failed);

/* Collective: when any rank passes failed != 0, the lowest such rank prints
 * "recordio-train: MESSAGE" (one line) and every rank calls MPI_Finalize
 * and exits with `code` (the same on every rank): no MPI_Abort, so no
 * Open MPI abort banner; else returns. */
void tr_world_agree(const tr_world *w, int failed, const char *message, int code);

/* Not collective: this rank hit an error the others cannot know of, in
 * the middle of a collective (out of memory while gathering, a failed
 * write of the metrics); prints it and takes the whole job down with
 * MPI_Abort. */
void tr_world_abort(const tr_world *w, const char *message, int code)
	__attribute__((noreturn));

/* The minimum, and the maximum, over the ranks. */
uint64_t tr_world_min_u64(const tr_world *w, uint64_t v);
uint64_t tr_world_max_u64(const tr_world *w, uint64_t v);
/* The sum over the ranks of this rank's node (collective over all). */
uint64_t tr_world_node_sum_u64(const tr_world *w, uint64_t v);

/* Rank 0's n floats to every rank, then a CRC-32C of each rank's copy
 * compared across the ranks: 0 when all agree, -1 when not. */
int tr_world_bcast_checked(const tr_world *w, float *host, size_t n);

void tr_world_bcast(const tr_world *w, void *buf, size_t bytes);

/* Each rank's n doubles into rank 0's all (size x n, rank by rank; NULL
 * elsewhere). */
void tr_world_gather_doubles(const tr_world *w, const double *mine, int n, double *all);

/* Sums n doubles onto rank 0. */
void tr_world_sum_to_root(const tr_world *w, double *v, int n);

/* Gathers each rank's blob (size bytes) on rank 0: sizes[] and blobs[]
 * (malloc'd there; NULL elsewhere). 0 or -ENOMEM (on rank 0). */
int tr_world_gather_blobs(const tr_world *w, const void *blob, uint32_t size, uint32_t **sizes,
                          uint8_t ***blobs);

/* Rank 0's blobs[r] (sizes[r] bytes) to rank r: returns a malloc'd copy and
 * its size. */
uint8_t *tr_world_scatter_blobs(const tr_world *w, uint32_t *const sizes, uint8_t *const *blobs,
                                uint32_t *size);

#endif /* RIO_TRAINER_WORLD_H */

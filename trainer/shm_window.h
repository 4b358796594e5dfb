/*
 * shm_window.h — one MPI-3 shared-memory window over the ranks of a host:
 * each rank's part (the same size on every rank, written by its rank and
 * read by the others: a rank's gradients, its reducer counters) and one
 * more part for the host as a whole (after rank 0's: the summed
 * gradients, or the one copy of the parameters and optimizer state that
 * the host's ranks update slice by slice). The parameter store (store.h)
 * opens it and lays its regions out in it; the reducer's shared-memory way
 * (reducer_shm.c) reads the other ranks' parts through it.
 *
 * The window is locked for its whole life (MPI_Win_lock_all): what one
 * rank writes, another reads after tr_shm_window_sync() on both sides
 * around a flag (C11 atomics), or after tr_shm_window_fence().
 */
#ifndef RIO_TRAINER_SHM_WINDOW_H
#define RIO_TRAINER_SHM_WINDOW_H

#include <mpi.h>
#include <stddef.h>

typedef struct tr_shm_window {
	MPI_Comm node;     /* the host's ranks (a duplicate); MPI_COMM_NULL: closed */
	MPI_Win win;
	int k, me;         /* the host's ranks, this one                        */
	char **part;       /* each rank's part (page-aligned), rank_bytes each  */
	char *host_part;   /* the host's part (page-aligned), host_bytes        */
	size_t rank_bytes, host_bytes;
	int locked;        /* MPI_Win_lock_all done                             */
} tr_shm_window;

/* Collective over `node` (every rank of it on this host): a window with
 * rank_bytes for each rank and host_bytes for the host, all zeroed and
 * seen zeroed by every rank. 0, or -ENOMEM (on every rank). */
int tr_shm_window_open(tr_shm_window *w, MPI_Comm node, size_t rank_bytes, size_t host_bytes);
void tr_shm_window_close(tr_shm_window *w);

/* MPI's memory barrier for the window (MPI_Win_sync). */
void tr_shm_window_sync(const tr_shm_window *w);
/* Collective: everything written into the window by any rank before it
 * is seen by every rank after it. */
void tr_shm_window_fence(const tr_shm_window *w);

/* The page size the parts and their regions are aligned to. */
enum { TR_SHM_PAGE = 4096 };

#endif /* RIO_TRAINER_SHM_WINDOW_H */

/*
 * shm_window.c — the host's shared-memory window (shm_window.h):
 * MPI_Win_allocate_shared, each rank's part found with
 * MPI_Win_shared_query.
 */
#include "config.h"
#include "shm_window.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* p rounded up to the next page. */
static char *page_up(char *p)
{
	return p + ((TR_SHM_PAGE - ((uintptr_t)p & (TR_SHM_PAGE - 1))) & (TR_SHM_PAGE - 1));
}

int tr_shm_window_open(tr_shm_window *w, MPI_Comm node, size_t rank_bytes, size_t host_bytes)
{
	memset(w, 0, sizeof *w);
	w->win = MPI_WIN_NULL;
	MPI_Comm_dup(node, &w->node);
	MPI_Comm_size(w->node, &w->k);
	MPI_Comm_rank(w->node, &w->me);
	w->rank_bytes = rank_bytes;
	w->host_bytes = host_bytes;
	w->part = calloc((size_t)w->k, sizeof *w->part);
	/* + a page: Open MPI's segments start after a header, not on a page
	 * (at the same offset within a page in every process: one mapping) */
	size_t bytes = TR_SHM_PAGE + rank_bytes + (w->me == 0 ? host_bytes : 0);
	MPI_Info info;
	MPI_Info_create(&info);
	MPI_Info_set(info, "alloc_shared_noncontig", "true");
	char *mine = NULL;
	int rc = !w->part ? MPI_ERR_NO_MEM
	                  : MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, w->node, &mine, &w->win);
	MPI_Info_free(&info);
	int ok = rc == MPI_SUCCESS, all;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, w->node);
	if (!all) {
		tr_shm_window_close(w);
		return -ENOMEM;
	}
	memset(mine, 0, bytes);
	for (int q = 0; q < w->k; q++) {
		MPI_Aint size;
		int unit;
		char *base;
		MPI_Win_shared_query(w->win, q, &size, &unit, &base);
		w->part[q] = page_up(base);
		if (q == 0)
			w->host_part = w->part[0] + rank_bytes;
	}
	MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win);
	w->locked = 1;
	/* every part zeroed before any is read */
	tr_shm_window_fence(w);
	return 0;
}

void tr_shm_window_close(tr_shm_window *w)
{
	if (w->locked)
		MPI_Win_unlock_all(w->win);
	if (w->win != MPI_WIN_NULL)
		MPI_Win_free(&w->win);
	if (w->node != MPI_COMM_NULL)
		MPI_Comm_free(&w->node);
	free(w->part);
	memset(w, 0, sizeof *w);
	w->node = MPI_COMM_NULL;
	w->win = MPI_WIN_NULL;
}

void tr_shm_window_sync(const tr_shm_window *w) { MPI_Win_sync(w->win); }

void tr_shm_window_fence(const tr_shm_window *w)
{
	MPI_Win_sync(w->win);
	MPI_Barrier(w->node);
	MPI_Win_sync(w->win);
}

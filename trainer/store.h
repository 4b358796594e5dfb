/*
 * store.h — the parameter store: the one owner of a rank's parameters,
 * gradients, optimizer state and their host staging copies. Each part
 * that needs such memory asks for a region (a name, a count of elements of
 * a size, a place) before anything is allocated; the store then allocates
 * every region once, in its place, and lends pointers: the MLP, the
 * optimizer, the embedding tables and the reducer compute in them and free
 * none of them. A region's place:
 *   backend      the math backend's memory (the GPU's under --device cuda);
 *   host         host memory for copies to and from the backend (pinned on
 *                a GPU);
 *   rank-shared  this rank's part of the host's shared-memory window
 *                (shm_window.h): written by this rank, read by the host's
 *                other ranks (the gradients the shm reducer sums);
 *   host-shared  one copy for the host, in the window: every rank of the
 *                host reads and writes it (the sums; with
 *                --shard-optimizer the parameters and optimizer state).
 * Everything is zeroed. Regions have names so that a later layout
 * (per-stage blocks, 16-bit copies beside fp32 masters) is more regions,
 * not another allocator.
 */
#ifndef RIO_TRAINER_STORE_H
#define RIO_TRAINER_STORE_H

#include "backend.h"
#include "shm_window.h"

#include <mpi.h>
#include <stddef.h>

typedef enum tr_place {
	TR_PLACE_BACKEND = 0,
	TR_PLACE_HOST = 1,
	TR_PLACE_RANK_SHARED = 2,
	TR_PLACE_HOST_SHARED = 3,
} tr_place;

enum { TR_STORE_MAX_REGIONS = 24 };

typedef struct tr_region {
	const char *name;  /* a literal, for messages                       */
	size_t bytes;
	tr_place place;
	void *ptr;         /* once the store is open                         */
	size_t offset;     /* shared: from the start of its part             */
} tr_region;

typedef struct tr_store {
	tr_math *math;
	tr_region region[TR_STORE_MAX_REGIONS];
	int n;
	int open;
	tr_shm_window win; /* the shared regions' (win.k 0: none)             */
} tr_store;

/* An empty store whose backend and host regions come from `math`. */
void tr_store_init(tr_store *s, tr_math *math);

/* Asks for a region of n elements of elem bytes in `place`: its id (0 and
 * up), for tr_store_get once the store is open. Before tr_store_open only;
 * -1 when the store holds TR_STORE_MAX_REGIONS already (a program error,
 * which tr_store_open then reports). */
int tr_store_add(tr_store *s, const char *name, size_t n, size_t elem, tr_place place);

/* Allocates every region asked for, zeroed: the shared ones in one window
 * over `node` (the host's ranks that share them; collective over it, and
 * MPI_COMM_NULL when no region is shared), then the others. 0, or -ENOMEM
 * with a one-line message naming the region in err. */
int tr_store_open(tr_store *s, MPI_Comm node, char *err, size_t errlen);

/* Region `id`'s memory (NULL for id -1). */
void *tr_store_get(const tr_store *s, int id);
static inline float *tr_store_floats(const tr_store *s, int id)
{
	return (float *)tr_store_get(s, id);
}
/* A shared region's offset in its part (its place as every rank has it). */
size_t tr_store_offset(const tr_store *s, int id);
/* The host's window (NULL when no region is shared). */
const tr_shm_window *tr_store_window(const tr_store *s);

/* Collective over the window's ranks: what one rank wrote into a shared
 * region is seen by all (nothing without a window). */
void tr_store_fence(const tr_store *s);

void tr_store_close(tr_store *s);

#endif /* RIO_TRAINER_STORE_H */

/*
 * store.c — the parameter store (store.h): regions asked for, then
 * allocated once, each in its place; the shared ones laid out page by page
 * in the host's window.
 */
#include "config.h"
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static size_t page_round(size_t v) { return (v + TR_SHM_PAGE - 1) / TR_SHM_PAGE * TR_SHM_PAGE; }

void tr_store_init(tr_store *s, tr_math *math)
{
	memset(s, 0, sizeof *s);
	s->math = math;
	s->win.node = MPI_COMM_NULL;
	s->win.win = MPI_WIN_NULL;
}

int tr_store_add(tr_store *s, const char *name, size_t n, size_t elem, tr_place place)
{
	if (s->open)
		return -1;
	if (s->n >= TR_STORE_MAX_REGIONS) {
		s->n = TR_STORE_MAX_REGIONS + 1; /* told by tr_store_open */
		return -1;
	}
	s->region[s->n] = (tr_region){.name = name, .bytes = n * elem, .place = place};
	return s->n++;
}

/* The shared regions laid out in their parts, page by page: the bytes of
 * a rank's part and of the host's. */
static void lay_out(tr_store *s, size_t *rank_bytes, size_t *host_bytes)
{
	*rank_bytes = *host_bytes = 0;
	for (int i = 0; i < s->n; i++) {
		tr_region *g = &s->region[i];
		size_t *at = g->place == TR_PLACE_RANK_SHARED   ? rank_bytes
		             : g->place == TR_PLACE_HOST_SHARED ? host_bytes
		                                                : NULL;
		if (at) {
			g->offset = *at;
			*at += page_round(g->bytes ? g->bytes : 1);
		}
	}
}

int tr_store_open(tr_store *s, MPI_Comm node, char *err, size_t errlen)
{
	if (s->n > TR_STORE_MAX_REGIONS) {
		snprintf(err, errlen, "the parameter store: more than %d regions asked for",
		         TR_STORE_MAX_REGIONS);
		return -EINVAL;
	}
	size_t rank_bytes, host_bytes;
	lay_out(s, &rank_bytes, &host_bytes);
	if (node != MPI_COMM_NULL &&
	    tr_shm_window_open(&s->win, node, rank_bytes, host_bytes) < 0) {
		snprintf(err, errlen, "out of memory for the host's shared window (%zu bytes a rank)",
		         rank_bytes);
		return -ENOMEM;
	}
	s->open = 1;
	for (int i = 0; i < s->n; i++) {
		tr_region *g = &s->region[i];
		switch (g->place) {
		case TR_PLACE_BACKEND:
			g->ptr = tr_math_alloc_bytes(s->math, g->bytes);
			break;
		case TR_PLACE_HOST: /* whole floats: the backends' host copies are of floats */
			g->ptr = tr_math_host_alloc(s->math, (g->bytes + sizeof(float) - 1) / sizeof(float));
			break;
		case TR_PLACE_RANK_SHARED:
			g->ptr = s->win.part ? s->win.part[s->win.me] + g->offset : NULL;
			break;
		case TR_PLACE_HOST_SHARED:
			g->ptr = s->win.part ? s->win.host_part + g->offset : NULL;
			break;
		}
		if (!g->ptr) {
			snprintf(err, errlen, "out of memory for %s (%zu bytes)", g->name, g->bytes);
			return -ENOMEM;
		}
	}
	return 0;
}

void *tr_store_get(const tr_store *s, int id) { return id < 0 ? NULL : s->region[id].ptr; }

size_t tr_store_offset(const tr_store *s, int id) { return s->region[id].offset; }

const tr_shm_window *tr_store_window(const tr_store *s) { return s->win.part ? &s->win : NULL; }

void tr_store_fence(const tr_store *s)
{
	if (s->win.part)
		tr_shm_window_fence(&s->win);
}

void tr_store_close(tr_store *s)
{
	for (int i = 0; i < s->n && i < TR_STORE_MAX_REGIONS; i++) {
		tr_region *g = &s->region[i];
		if (g->place == TR_PLACE_BACKEND && g->ptr)
			tr_math_free(s->math, g->ptr);
		else if (g->place == TR_PLACE_HOST && g->ptr)
			tr_math_host_free(s->math, g->ptr);
		g->ptr = NULL;
	}
	if (s->win.part)
		tr_shm_window_close(&s->win);
	s->n = 0;
	s->open = 0;
}

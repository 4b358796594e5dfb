/*
 * pool_memory.c — the batch pool's memory (pool.h): allocation once at
 * open, the raw arenas, and the host-to-device copy of a finished batch.
 * Where the slots are, and the memory passed between threads, is pool.c's.
 */
#include "config.h"
#include "grow.h"
#include "internal.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

static int column_alloc(rio__pool *p, void **out, size_t size)
{
	if (p->pinned)
		return rio__cuda_host_alloc(out, size);
	*out = rio__aligned_alloc(page_size(), size);
	return *out ? 0 : -ENOMEM;
}

static int pool_alloc(rio__pool *p, size_t nslots, size_t batch_size, const rio__colplan *cp,
                      const rio_loader_opts *o, rio_error *err, int *caller_device);

/* An empty pool (nothing to free but its lock): the state pool.c moves. */
static void pool_clear(rio__pool *p, size_t batch_size, size_t prefetch)
{
	memset(p, 0, sizeof *p);
	p->batch_size = batch_size;
	p->prefetch = prefetch;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->slot_cv, NULL);
	pthread_cond_init(&p->ready_cv, NULL);
}

/* With CUDA, the loader's device is current while the pool is allocated,
 * and the caller's own current device is given back afterwards: a library
 * does not move its caller to another GPU. */
int rio__pool_init(rio__pool *p, size_t nslots, size_t batch_size, size_t prefetch,
                   const rio__colplan *cp, const rio_loader_opts *o, rio_error *err)
{
	int caller_device = -1;
	pool_clear(p, batch_size, prefetch);
	int rc = pool_alloc(p, nslots, batch_size, cp, o, err, &caller_device);
	rio__cuda_set_device(caller_device);
	return rc;
}

static int pool_alloc(rio__pool *p, size_t nslots, size_t batch_size, const rio__colplan *cp,
                      const rio_loader_opts *o, rio_error *err, int *caller_device)
{
	/* pinned memory and device copies apply to columns; raw batches stay in
	 * pageable arenas, but the options are still checked */
	p->device_copy = o->device_copy && cp->ncols > 0;
	p->pinned = (o->pinned || o->device_copy) && cp->ncols > 0;
	if (o->pinned || o->device_copy) {
		int rc = rio__cuda_init(o->device, &p->stream, caller_device);
		if (rc < 0)
			return rio__error_set(err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      rc == -ENOTSUP ? "pinned memory and device copies need a "
			                                       "build with CUDA (--with-cuda)"
			                                     : "no usable CUDA device %d", o->device);
	}
	p->slots = calloc(nslots, sizeof *p->slots);
	p->ready = calloc(nslots, sizeof *p->ready);
	if (!p->slots || !p->ready)
		return -ENOMEM;
	p->nslots = nslots;
	for (size_t i = 0; i < nslots; i++) {
		rio__slot *s = &p->slots[i];
		s->recs = calloc(batch_size, sizeof *s->recs);
		s->owned = calloc(batch_size, sizeof *s->owned);
		if (!s->recs || !s->owned)
			return -ENOMEM;
		s->batch.records = s->recs;
		if (cp->ncols) {
			s->cols = calloc(cp->ncols, sizeof *s->cols);
			if (!s->cols)
				return -ENOMEM;
			for (size_t c = 0; c < cp->ncols; c++) {
				s->cols[c].name = cp->spec[c].name;
				s->cols[c].type = cp->spec[c].type;
				s->cols[c].length = cp->spec[c].length;
				int rc = column_alloc(p, &s->cols[c].host, batch_size * cp->col_bytes[c]);
				if (rc < 0)
					return rio__error_set(err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
					                      "allocating the batch pool");
				if (p->device_copy &&
				    (rc = rio__cuda_device_alloc(&s->cols[c].device,
				                                 batch_size * cp->col_bytes[c])) < 0)
					return rio__error_set(err, rc, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
					                      "allocating device memory for the batch pool");
			}
			if (p->device_copy && rio__cuda_event_create(&s->event) < 0)
				return rio__error_set(err, -ENOMEM, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
				                      "creating a CUDA event");
			s->batch.columns = s->cols;
			s->batch.ncolumns = cp->ncols;
		}
		s->next = p->free_list; /* every slot starts free */
		p->free_list = s;
	}
	return 0;
}

void rio__pool_free(rio__pool *p, const rio__colplan *cp)
{
	for (size_t i = 0; i < p->nslots; i++) {
		rio__slot *s = &p->slots[i];
		for (size_t c = 0; s->cols && c < cp->ncols; c++) {
			if (p->pinned)
				rio__cuda_host_free(s->cols[c].host);
			else
				free(s->cols[c].host);
			if (s->cols[c].device)
				rio__cuda_device_free(s->cols[c].device);
		}
		if (s->event)
			rio__cuda_event_destroy(s->event);
		free(s->cols);
		free(s->recs);
		free(s->arena);
		for (size_t k = 0; k < s->nowned; k++)
			free(s->owned[k].data);
		free(s->owned);
	}
	for (size_t k = 0; k < p->nspare; k++)
		free(p->spare[k].data);
	free(p->spare);
	for (size_t k = 0; k < p->nrow_blocks; k++)
		free(p->row_blocks[k]);
	free(p->row_blocks);
	free(p->free_rows);
	if (p->stream)
		rio__cuda_fini(p->stream);
	free(p->slots);
	free(p->ready);
	if (p->batch_size) { /* initialised (pool_clear) */
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->slot_cv);
		pthread_cond_destroy(&p->ready_cv);
	}
	memset(p, 0, sizeof *p);
}

int rio__slot_reserve(rio__slot *s, size_t need)
{
	return rio__grow(&s->arena, &s->arena_cap, s->arena_used + need, 1, 64 * 1024);
}

int rio__pool_to_device(rio__pool *p, rio__slot *s, size_t count, const rio__colplan *cp)
{
	if (!p->device_copy)
		return 0;
	for (size_t c = 0; c < cp->ncols; c++) {
		int rc = rio__cuda_copy_async(s->cols[c].device, s->cols[c].host,
		                              count * cp->col_bytes[c], p->stream);
		if (rc < 0)
			return rc;
	}
	return rio__cuda_record_and_wait(s->event, p->stream);
}

#ifndef HAVE_CUDA
int rio__cuda_init(int device, void **stream, int *caller_device)
{
	(void)device;
	*stream = NULL;
	*caller_device = -1;
	return -ENOTSUP;
}
void rio__cuda_fini(void *stream) { (void)stream; }
int rio__cuda_set_device(int device)
{
	return device < 0 ? 0 : -ENOTSUP;
}
int rio__cuda_host_alloc(void **p, size_t size)
{
	(void)size;
	*p = NULL;
	return -ENOTSUP;
}
void rio__cuda_host_free(void *p) { (void)p; }
int rio__cuda_device_alloc(void **p, size_t size)
{
	(void)size;
	*p = NULL;
	return -ENOTSUP;
}
void rio__cuda_device_free(void *p) { (void)p; }
int rio__cuda_event_create(void **ev)
{
	*ev = NULL;
	return -ENOTSUP;
}
void rio__cuda_event_destroy(void *ev) { (void)ev; }
int rio__cuda_copy_async(void *dst, const void *src, size_t size, void *stream)
{
	(void)dst, (void)src, (void)size, (void)stream;
	return -ENOTSUP;
}
int rio__cuda_record_and_wait(void *ev, void *stream)
{
	(void)ev, (void)stream;
	return -ENOTSUP;
}
#endif

/*
 * parts.c — an epoch's bytes read ahead in aligned parts (parts.h).
 *
 * The parts lie in epoch order; each shard's in one stretch of them, in
 * offset order, so that a read finds its first part by a binary search in
 * its shard's stretch. A part goes: not asked for, asked (its read_start
 * done: the GET queued or in flight), waited for (one reader in its
 * read_finish, the others on the condition variable), in. Parts are asked
 * for in order while fewer than `window` are asked for and not used up;
 * the reader that releases a part's last bytes gives its buffer to the
 * next part and asks for it. A part whose bytes its source holds already
 * (source.h's take_held: a remote shard's first part, taken at open) is in
 * at once, in the source's buffer, which then goes round with the others
 * (one over the window's count is freed). A get points into the part that holds its
 * bytes, or copies them (lock released: the parts stay until the bytes
 * are released, which this caller has still to do) when two hold them.
 */
#include "config.h"
#include "parts.h"
#include "grow.h"
#include "internal.h"
#include "io.h"
#include "source.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { NOT_ASKED = 0, ASKED, WAITED, IN };

typedef struct part {
	uint32_t shard;
	uint64_t from;      /* the object's bytes [from, from + len) */
	size_t len;
	size_t used;        /* bytes released */
	int state;
	rio__io_req req;    /* the read, into req.buf; its result once IN */
	void *pending;      /* read_start's, until read_finish */
	rio_error err;      /* the read's error line, once IN */
} part;

struct rio__parts {
	pthread_mutex_t mu;
	pthread_cond_t cv;  /* a part came in, or was freed */
	part *p;
	size_t n, cap;
	size_t part, window;
	size_t next;        /* the next part to ask for */
	size_t out;         /* asked for and not used up */
	size_t *first, *count; /* shard s's parts: p[first[s], first[s] + count[s]) */
	size_t nshards;
	void **spare;       /* buffers of `part` bytes of parts used up, for
	                     * the next ones (faulted in once, not per part) */
	size_t nspare;
	int stop;
};

int rio__parts_new(rio__parts **out, size_t part_size, size_t nshards)
{
	*out = NULL;
	rio__parts *ps = calloc(1, sizeof *ps);
	if (!ps)
		return -ENOMEM;
	ps->part = part_size ? part_size : 1;
	ps->first = calloc(nshards ? nshards : 1, sizeof *ps->first);
	ps->count = calloc(nshards ? nshards : 1, sizeof *ps->count);
	if (!ps->first || !ps->count) {
		free(ps->first);
		free(ps->count);
		free(ps);
		return -ENOMEM;
	}
	pthread_mutex_init(&ps->mu, NULL);
	pthread_cond_init(&ps->cv, NULL);
	ps->nshards = nshards;
	*out = ps;
	return 0;
}

int rio__parts_add(rio__parts *ps, uint32_t shard, const rio__source *src, uint64_t from,
                   uint64_t to)
{
	if (shard >= ps->nshards)
		return -EINVAL;
	if (ps->count[shard]) { /* only where the shard's bytes so far end */
		const part *last = &ps->p[ps->n - 1];
		if (last->shard != shard || last->from + last->len != from)
			return -EINVAL;
	}
	while (from < to) {
		uint64_t end = (from / ps->part + 1) * ps->part;
		end = end < to ? end : to;
		part *last = ps->n ? &ps->p[ps->n - 1] : NULL;
		if (last && last->shard == shard && last->from + last->len == from &&
		    last->from / ps->part == from / ps->part) { /* the same part goes on */
			last->len += (size_t)(end - from);
			from = end;
			continue;
		}
		if (rio__grow(&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p, 64))
			return -ENOMEM;
		if (!ps->count[shard])
			ps->first[shard] = ps->n;
		ps->count[shard]++;
		ps->p[ps->n++] = (part){.shard = shard, .from = from, .len = (size_t)(end - from),
		                        .req = {-1, from, (size_t)(end - from), NULL, 0, src}};
		from = end;
	}
	return 0;
}

/* Asks for parts in order while fewer than `window` are out (under mu). A
 * part that cannot be asked for (no memory) is in at once, failed. */
static void ask(rio__parts *ps)
{
	while (ps->out < ps->window && ps->next < ps->n) {
		part *p = &ps->p[ps->next++];
		ps->out++;
		ssize_t got;
		const rio__source *src = p->req.src;
		void *held = src->ops->take_held
		                     ? src->ops->take_held(src, p->from, p->len, ps->part, &got)
		                     : NULL;
		if (held) { /* the source had its bytes: in at once, no copy */
			p->req.buf = held;
			p->req.result = got;
			p->state = IN;
			continue;
		}
		p->req.buf = ps->nspare ? ps->spare[--ps->nspare] : rio__huge_alloc(RIO__IO_ALIGN, ps->part);
		if (!p->req.buf) {
			p->req.result = -ENOMEM;
			rio__error_set(&p->err, -ENOMEM, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
			p->state = IN;
			continue;
		}
		p->req.src->ops->read_start(&p->req, 1, &p->pending, &p->err);
		p->state = p->pending ? ASKED : IN; /* no pending: its result is set */
	}
}

int rio__parts_start(rio__parts *ps, size_t window)
{
	ps->window = window ? window : 1;
	if (!(ps->spare = calloc(ps->window, sizeof *ps->spare)))
		return -ENOMEM;
	pthread_mutex_lock(&ps->mu);
	ask(ps);
	pthread_mutex_unlock(&ps->mu);
	return 0;
}

/* Waits until part p is in (under mu, which it may drop): 0, or
 * -ECANCELED on a stop while it was not asked for. */
static int wait_in(rio__parts *ps, part *p)
{
	while (p->state != IN) {
		if (p->state == ASKED) { /* this reader waits for the read */
			p->state = WAITED;
			pthread_mutex_unlock(&ps->mu);
			rio_error e = {0};
			p->req.src->ops->read_finish(p->pending, &e);
			pthread_mutex_lock(&ps->mu);
			p->pending = NULL;
			p->err = e;
			p->state = IN;
			pthread_cond_broadcast(&ps->cv);
		} else if (p->state == NOT_ASKED && ps->stop) {
			return -ECANCELED;
		} else {
			pthread_cond_wait(&ps->cv, &ps->mu);
		}
	}
	return 0;
}

/* The first part of `shard` that holds `offset`, or NULL (under mu). */
static part *find(rio__parts *ps, uint32_t shard, uint64_t offset)
{
	if (shard >= ps->nshards || !ps->count[shard])
		return NULL;
	size_t lo = ps->first[shard], hi = lo + ps->count[shard];
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->p[mid].from <= offset)
			lo = mid;
		else
			hi = mid;
	}
	part *p = &ps->p[lo];
	return offset >= p->from && offset < p->from + p->len ? p : NULL;
}

ssize_t rio__parts_get(rio__parts *ps, uint32_t shard, uint64_t offset, size_t len,
                       void *scratch, const void **at, rio_error *err)
{
	size_t got = 0;
	int rc = 0;
	*at = scratch;
	pthread_mutex_lock(&ps->mu);
	part *p = len ? find(ps, shard, offset) : NULL;
	if (len && !p)
		rc = -EINVAL;
	while (rc == 0 && got < len) {
		if (got && (p == ps->p + ps->n || p->shard != shard || p->from != offset + got)) {
			rc = -EINVAL; /* the rest in no part */
			break;
		}
		if ((rc = wait_in(ps, p)) < 0)
			break;
		if (p->req.result < 0) {
			rc = (int)p->req.result;
			if (err)
				*err = p->err;
			break;
		}
		size_t into = (size_t)(offset + got - p->from);
		size_t have = (size_t)p->req.result; /* short only at the object's end */
		size_t n = len - got < p->len - into ? len - got : p->len - into;
		if (into + n > have) {
			n = into < have ? have - into : 0;
			len = got + n; /* the object ended: a short read */
		}
		const uint8_t *src = (const uint8_t *)p->req.buf + into;
		if (got == 0 && n == len) { /* one part holds them all */
			*at = src;
		} else { /* the part stays until released: copied unlocked */
			pthread_mutex_unlock(&ps->mu);
			memcpy((uint8_t *)scratch + got, src, n);
			pthread_mutex_lock(&ps->mu);
		}
		got += n;
		p++;
	}
	pthread_mutex_unlock(&ps->mu);
	if (rc == -EINVAL && err)
		rio__error_set(err, rc, NULL, offset, RIO__UNKNOWN,
		                "bytes the read-ahead does not hold (shard %u)", (unsigned)shard);
	return rc < 0 ? rc : (ssize_t)got;
}

void rio__parts_release(rio__parts *ps, uint32_t shard, uint64_t offset, size_t len)
{
	pthread_mutex_lock(&ps->mu);
	part *p = len ? find(ps, shard, offset) : NULL;
	for (size_t done = 0; p && done < len && p < ps->p + ps->n && p->shard == shard; p++) {
		size_t into = (size_t)(offset + done - p->from);
		size_t n = len - done < p->len - into ? len - done : p->len - into;
		done += n;
		p->used += n;
		if (p->used >= p->len && p->req.buf) { /* its buffer to the next part */
			if (ps->nspare < ps->window) /* a source's buffer may be one more */
				ps->spare[ps->nspare++] = p->req.buf;
			else
				free(p->req.buf);
			p->req.buf = NULL;
			ps->out--;
			ask(ps);
			pthread_cond_broadcast(&ps->cv);
		}
	}
	pthread_mutex_unlock(&ps->mu);
}

void rio__parts_stop(rio__parts *ps)
{
	if (!ps)
		return;
	pthread_mutex_lock(&ps->mu);
	ps->stop = 1;
	pthread_cond_broadcast(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
}

void rio__parts_free(rio__parts *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		part *p = &ps->p[i];
		if (p->pending) /* no read may outlive its buffer */
			p->req.src->ops->read_finish(p->pending, NULL);
		free(p->req.buf);
	}
	while (ps->nspare)
		free(ps->spare[--ps->nspare]);
	free(ps->spare);
	free(ps->p);
	free(ps->first);
	free(ps->count);
	pthread_cond_destroy(&ps->cv);
	pthread_mutex_destroy(&ps->mu);
	free(ps);
}

/*
 * source_remote.c — shards at s3:// and http(s):// URLs (source.h), through
 * librecordio's remote client (recordio/remote/remote.h).
 *
 * open takes the object's size and ETag with one request; every later read
 * sends If-Match with that ETag, so an object replaced while the loader
 * reads it fails the read (RIO_ECHANGED), never returns other bytes. There
 * is no descriptor (fd -1): the loader reads at offsets through read_at
 * (ranged GETs, split into parts run in parallel), on the pread backend. A
 * stream (a compressed shard, read whole in order) is one end of a
 * socketpair that a feeder thread fills from the object with read-ahead
 * (rio__rstream); the source joins its feeders when it closes. No mapping,
 * no O_DIRECT, no page cache to ask about.
 *
 * With a shard cache (src->ctx->cache, shard_cache.h), open takes the shard's
 * local copy (downloaded then when missing) and holds it until close:
 * src->fd is the copy, read at offsets as a local file (io_uring too), a
 * stream is the copy opened again. A shard the cache cannot take is read
 * from the network as above.
 *
 * map fetches the shard whole into a private spill and maps it, or maps
 * the shard cache's copy (remote_whole.h): a globally shuffled epoch's
 * records are then views, not a GET each (route.c decides when). resident
 * asks the page cache about the copy, as for a local file.
 *
 * The sources of a loader share its client (src->ctx->remote: the AWS
 * settings read once, one engine thread, one `inflight` for all its
 * shards), so that read_many fetches a batch's records of every shard
 * together; a source opened without one opens its own.
 */
#include "config.h"
#include "source.h"
#include "internal.h"
#include "../recordio/remote/remote.h"
#include "shard_cache.h"
#include "remote_whole.h"
#include "io.h"

#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FEED_CHUNK (1u << 20)

typedef struct feeder {
	pthread_t thread;
	int fd;             /* the source's end of the socketpair */
	rio__rstream *s;
	struct feeder *next;
} feeder;

typedef struct remote_src {
	rio__remote *r;     /* the context's client, or its own (own_r) */
	int own_r;
	rio__robj *o;
	char *copy;         /* the shard cache's copy (src->fd is it), or NULL */
	pthread_mutex_t mu;
	feeder *feeders;
} remote_src;

static int remote_open(rio__source *src, rio_error *err)
{
	remote_src *p = calloc(1, sizeof *p);
	if (!p)
		return rio__error_set(err, -ENOMEM, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	pthread_mutex_init(&p->mu, NULL);
	src->priv = p;
	int rc = 0;
	if (src->ctx && src->ctx->remote)
		p->r = src->ctx->remote;
	else if ((rc = rio__remote_open(&p->r, NULL, err)) == 0)
		p->own_r = 1;
	/* with a shard cache, a shard its listing gave opens with no request:
	 * its copy, named by the size and ETag, has the bytes */
	if (rc == 0)
		rc = src->ctx && src->ctx->cache ? rio__robj_open_listed(&p->o, p->r, src->path, err)
		                                 : rio__robj_open(&p->o, p->r, src->path, err);
	if (rc == 0)
		src->size = rio__robj_size(p->o);
	/* with a shard cache: read from its copy, held while open */
	if (rc == 0 && src->ctx && src->ctx->cache &&
	    (rc = rio__shard_cache_get(src->ctx->cache, p->o, 1, &src->fd, &p->copy, err)) ==
	        RIO__SHARD_CACHE_STREAM)
		rc = 0;
	return rc;
}

/* A read that the object's first bytes, taken at open, hold whole (the
 * dataset's compression check, the first header of its .idx check; with
 * the client's first parts, rio__remote_first_parts, the epoch's first
 * part of the shard): the count copied, with no request; or -1 when they
 * do not hold it. */
static ssize_t head_read(const rio__source *src, void *buf, size_t len, uint64_t offset)
{
	const remote_src *p = src->priv;
	size_t have;
	const uint8_t *head = rio__robj_head(p->o, &have);
	if (offset > have || (len > have - offset && have != src->size))
		return rio__robj_take_first(p->o, buf, len, offset);
	size_t n = len < have - offset ? len : have - (size_t)offset;
	memcpy(buf, head + offset, n);
	return (ssize_t)n;
}

static ssize_t remote_read_at(const rio__source *src, void *buf, size_t len, uint64_t offset)
{
	const remote_src *p = src->priv;
	if (src->fd >= 0)
		return rio__source_file.read_at(src, buf, len, offset); /* the copy */
	ssize_t n = head_read(src, buf, len, offset);
	if (n >= 0)
		return n;
	rio_error e;
	return rio__robj_read(p->o, buf, len, offset, &e);
}

/* Requests of remote sources in flight (remote_read_start): each client's
 * through rio__remote_read_start, which fetches the nearby ranges of one
 * object together (within RIO__REMOTE_COALESCE_GAP) and runs the
 * requests in parallel. One group a client: the requests of sources that
 * share one (source.h's context) go together. A request that the first
 * bytes taken at open hold (the first header of the dataset's .idx check)
 * is served from them, with no request. A request whose source reads its
 * shard cache's copy (an fd) never comes here (io.c reads it with
 * pread). */
typedef struct remote_reads {
	rio__io_req *reqs;
	rio__range *rg;             /* the requests' ranges, by client     */
	size_t *which;              /* the request of each range           */
	rio__remote_reads **group;  /* each client's reads, or NULL: failed
	                             * to start (its results set)         */
	size_t *group_end;          /* group g's ranges end there in rg    */
	size_t ngroups;
	int rc;                     /* the first start's error, or 0      */
	rio_error err;
} remote_reads;

static void reads_free(remote_reads *p)
{
	if (!p)
		return;
	free(p->rg);
	free(p->which);
	free(p->group);
	free(p->group_end);
	free(p);
}

static int remote_read_start(rio__io_req *reqs, size_t n, void **pending, rio_error *err)
{
	*pending = NULL;
	size_t cap = n ? n : 1;
	remote_reads *p = calloc(1, sizeof *p);
	unsigned char *taken = calloc(cap, 1);
	if (p) {
		p->rg = malloc(cap * sizeof *p->rg);
		p->which = malloc(cap * sizeof *p->which);
		p->group = calloc(cap, sizeof *p->group);
		p->group_end = malloc(cap * sizeof *p->group_end);
	}
	if (!p || !taken || !p->rg || !p->which || !p->group || !p->group_end) {
		reads_free(p);
		free(taken);
		for (size_t i = 0; i < n; i++)
			reqs[i].result = -ENOMEM;
		return rio__error_set(err, -ENOMEM, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	p->reqs = reqs;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		rio__remote *r = ((const remote_src *)reqs[i].src->priv)->r;
		size_t m0 = m;
		for (size_t j = i; j < n; j++) {
			const remote_src *q = reqs[j].src->priv;
			if (taken[j] || q->r != r)
				continue;
			taken[j] = 1;
			ssize_t got = head_read(reqs[j].src, reqs[j].buf, reqs[j].len, reqs[j].offset);
			if (got >= 0) { /* in the bytes taken at open: no request */
				reqs[j].result = got;
				continue;
			}
			p->rg[m] = (rio__range){q->o, reqs[j].offset, reqs[j].len, reqs[j].buf, 0};
			p->which[m++] = j;
		}
		rio_error e = {0};
		int rc = m == m0 ? 0 /* all of them in the first bytes */
		                 : rio__remote_read_start(r, p->rg + m0, m - m0,
		                                          &p->group[p->ngroups], &e);
		for (size_t k = m0; rc < 0 && k < m; k++)
			reqs[p->which[k]].result = rc;
		if (rc < 0 && p->rc == 0) {
			p->rc = rc;
			p->err = e;
		}
		p->group_end[p->ngroups++] = m;
	}
	free(taken);
	*pending = p;
	return p->rc;
}

static int remote_read_finish(void *pending, rio_error *err)
{
	remote_reads *p = pending;
	if (!p)
		return 0;
	int rc = p->rc;
	if (rc < 0 && err)
		*err = p->err;
	for (size_t g = 0, m0 = 0; g < p->ngroups; m0 = p->group_end[g++]) {
		if (!p->group[g])
			continue;
		rio_error e = {0};
		int grc = rio__remote_read_wait(p->group[g], &e);
		for (size_t k = m0; k < p->group_end[g]; k++)
			p->reqs[p->which[k]].result = grc < 0 ? grc : p->rg[k].result;
		if (grc < 0 && rc == 0) {
			rc = grc;
			if (err)
				*err = e;
		}
	}
	reads_free(p);
	return rc;
}

static int remote_read_many(rio__io_req *reqs, size_t n, rio_error *err)
{
	void *pending;
	int rc = remote_read_start(reqs, n, &pending, err);
	return pending ? remote_read_finish(pending, err) : rc;
}

/* The feeder: the object, in order, into the socket, until its end, an
 * error (the reader then sees the stream end early: a truncated shard) or
 * the reader going away. */
static void *feed(void *arg)
{
	feeder *f = arg;
	uint8_t *buf = malloc(FEED_CHUNK);
	ssize_t n;
	while (buf && (n = rio__rstream_read(f->s, buf, FEED_CHUNK)) > 0) {
		size_t off = 0;
		while (off < (size_t)n) {
			ssize_t w = send(f->fd, buf + off, (size_t)n - off, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				goto out;
			off += (size_t)w;
		}
	}
out:
	free(buf);
	shutdown(f->fd, SHUT_WR);
	return NULL;
}

static void feeder_free(feeder *f)
{
	shutdown(f->fd, SHUT_RDWR); /* a send that waits on the reader returns */
	pthread_join(f->thread, NULL);
	close(f->fd);
	rio__rstream_close(f->s);
	free(f);
}

static int remote_stream(const rio__source *src, rio_error *err)
{
	remote_src *p = src->priv;
	rio__robj_drop_first(p->o); /* a stream makes its own GETs */
	if (p->copy) {
		int fd = open(p->copy, O_RDONLY | O_CLOEXEC); /* held: not deleted */
		return fd >= 0 ? fd : rio__error_set(err, -errno, p->copy, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return rio__error_set(err, -errno, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	feeder *f = calloc(1, sizeof *f);
	int rc = f ? rio__rstream_open(&f->s, p->o, 0) : -ENOMEM;
	if (rc == 0) {
		f->fd = sv[1];
		rc = -pthread_create(&f->thread, NULL, feed, f);
	}
	if (rc < 0) {
		if (f)
			rio__rstream_close(f->s);
		free(f);
		close(sv[0]);
		close(sv[1]);
		return rio__error_set(err, rc, src->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	}
	pthread_mutex_lock(&p->mu);
	f->next = p->feeders;
	p->feeders = f;
	pthread_mutex_unlock(&p->mu);
	return sv[0];
}

static int remote_map(rio__source *src, rio_error *err)
{
	const remote_src *p = src->priv;
	return rio__remote_whole_map(src, src->fd >= 0 ? NULL : p->o, err);
}

static void remote_unmap(rio__source *src)
{
	rio__source_file.unmap(src); /* a mapping, of the spill or the copy */
}

static double remote_resident(const rio__source *src)
{
	return src->fd >= 0 ? rio__source_file.resident(src) : 0; /* the copy */
}

static void remote_close(rio__source *src)
{
	remote_src *p = src->priv;
	remote_unmap(src);
	if (p) {
		for (feeder *f = p->feeders, *next; f; f = next) {
			next = f->next;
			feeder_free(f);
		}
		rio__robj_close(p->o);
		if (p->own_r)
			rio__remote_close(p->r);
		free(p->copy);
		if (src->fd >= 0)
			close(src->fd); /* the copy's hold goes with it */
		pthread_mutex_destroy(&p->mu);
		free(p);
	}
	src->priv = NULL;
	src->fd = src->fd_direct = -1;
}

int rio__source_remote_exists(const char *url, const rio__source_ctx *ctx)
{
	if (ctx && ctx->remote)
		return rio__remote_exists(ctx->remote, url, NULL, NULL) == 1;
	rio__remote *r = NULL;
	int rc = rio__remote_open(&r, NULL, NULL);
	if (rc == 0)
		rc = rio__remote_exists(r, url, NULL, NULL);
	rio__remote_close(r);
	return rc == 1;
}

/* The first part the open took (rio__remote_first_parts), handed over. */
static void *remote_take_held(const rio__source *src, uint64_t offset, size_t len, size_t cap,
                              ssize_t *got)
{
	const remote_src *p = src->priv;
	return src->fd >= 0 ? NULL : rio__robj_give_first(p->o, offset, len, cap, got);
}

const rio__source_ops rio__source_remote = {
	"remote", remote_open, remote_read_at, remote_stream, NULL, remote_map,
	remote_unmap, remote_resident, remote_close,
	remote_read_many, remote_read_start, remote_read_finish, remote_take_held,
};

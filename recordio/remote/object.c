/*
 * object.c — a remote object opened for reading (rio__robj), read at
 * offsets, many ranges at once (coalesced), or as a stream with read-ahead
 * (rio__rstream). remote.h says what each promises.
 *
 * Open is one GET of the first 16 bytes: its Content-Range gives the size,
 * its ETag the identity, its body the bytes compression is detected from
 * (an empty object answers 416; a HEAD then gives its size). Where the
 * client has room for first parts (rio__remote_first_parts), that GET
 * asks for the object's first part_size bytes instead and keeps them for
 * the first read of them (rio__robj_take_first): a store that reads a
 * whole chunk for a few bytes then reads the first chunk once, not for
 * the open and again for the epoch's first part, and the first parts come
 * in while the loader opens. A probe broken off is resumed from where it
 * broke with If-Match on the ETag it gave (rio__http_run). Or, through
 * rio__robj_open_listed for an object the client's listings gave
 * (listed.c), no request: the listing's size and ETag. Every read
 * after it carries If-Match with a strong ETag and checks the size the
 * answer gives, so a replaced object is RIO_ECHANGED, never a mixed read.
 */
#include "config.h"

#include "client.h"
#include "grow.h"
#include "engine.h"
#include "http.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN
#define HEAD_BYTES 16

struct rio__robj {
	rio__remote *r;
	char *name;
	rio__text url;
	int s3;
	uint64_t size;
	char etag[192];
	int strong; /* the ETag can be sent with If-Match (not W/"...") */
	uint8_t head[HEAD_BYTES];
	size_t head_len;
	pthread_mutex_t first_mu; /* guards first (taken by one read)      */
	uint8_t *first;     /* the first part taken at open, or NULL        */
	size_t first_len;   /* its bytes that came                          */
	size_t first_cap;   /* the client's first-part room it holds        */
};

/* Gives o's first part and its room back to the client (under first_mu,
 * or with o private). */
static void first_free(rio__robj *o)
{
	if (!o->first_cap)
		return;
	free(o->first);
	o->first = NULL;
	o->first_len = 0;
	pthread_mutex_lock(&o->r->mu);
	o->r->first_room += o->first_cap;
	pthread_mutex_unlock(&o->r->mu);
	o->first_cap = 0;
}

/* A GET of o's bytes [offset, offset + len) into dst. */
static void get_init(rio__get *g, const rio__robj *o, uint64_t offset, size_t len, void *dst)
{
	memset(g, 0, sizeof *g);
	rio__http_init(&g->http, "GET", rio__text_str(&o->url), o->name, o->s3);
	g->http.range_from = offset;
	g->http.range_len = len;
	g->http.dst = dst;
	g->http.dst_cap = len;
	g->http.if_match = o->strong ? o->etag : NULL;
	g->http.expect_total = o->size;
}

static int robj_open(rio__robj **out, rio__remote *r, const char *url, int listed,
                     rio_error *err)
{
	*out = NULL;
	rio__robj *o = calloc(1, sizeof *o);
	if (!o || !(o->name = strdup(url))) {
		free(o);
		return rio__error_set(err, -ENOMEM, url, UNK, UNK, NULL);
	}
	o->r = r;
	pthread_mutex_init(&o->first_mu, NULL);
	int rc = rio__client_url(r, url, &o->url, &o->s3, err);
	if (rc == 0 && listed && o->s3 &&
	    rio__client_listed(r, url, &o->size, o->etag, sizeof o->etag)) {
		o->strong = 1; /* listed.c keeps strong ETags only */
		*out = o;
		return 0;
	}
	rio__http q;
	if (rc == 0) {
		/* the first part, where the client has room for it */
		size_t part = (size_t)r->opts.part_size;
		pthread_mutex_lock(&r->mu);
		if (r->first_room >= part && part > HEAD_BYTES) {
			r->first_room -= part;
			o->first_cap = part;
		}
		pthread_mutex_unlock(&r->mu);
		if (o->first_cap && !(o->first = rio__huge_alloc(4096, o->first_cap)))
			first_free(o); /* no memory: the 16 bytes will do */
		rio__http_init(&q, "GET", rio__text_str(&o->url), o->name, o->s3);
		q.range_len = o->first ? part : HEAD_BYTES;
		q.probe = 1;
		q.dst = o->first ? o->first : o->head;
		q.dst_cap = (size_t)q.range_len;
		rc = rio__http_run(r, &q, err);
		if (rc == RIO_EREMOTE && q.status == 416) { /* empty: no byte 0 to ask for */
			rio__http_release(&q);
			rio__http_init(&q, "HEAD", rio__text_str(&o->url), o->name, o->s3);
			rc = rio__http_run(r, &q, err);
		}
		rio__http_release(&q);
	}
	if (rc == 0 && q.total == UINT64_MAX)
		rc = rio__error_set(err, RIO_EREMOTE, url, UNK, UNK,
		                    "HTTP %ld without the object's size (no Content-Range or "
		                    "Content-Length)", q.status);
	if (rc < 0) {
		rio__robj_close(o);
		return rc;
	}
	o->size = q.total;
	/* the bytes that came, over every try (rio__http_advance moved dst) */
	size_t got = q.dst ? (size_t)(q.dst - (o->first ? o->first : o->head)) + q.got : 0;
	got = got < o->size ? got : (size_t)o->size;
	if (o->first) {
		o->first_len = got;
		memcpy(o->head, o->first, got < HEAD_BYTES ? got : HEAD_BYTES);
		if (!got)
			first_free(o);
	}
	o->head_len = got < HEAD_BYTES ? got : HEAD_BYTES;
	snprintf(o->etag, sizeof o->etag, "%s", q.etag);
	o->strong = o->etag[0] && strncmp(o->etag, "W/", 2) != 0;
	*out = o;
	return 0;
}

int rio__robj_open(rio__robj **out, rio__remote *r, const char *url, rio_error *err)
{
	return robj_open(out, r, url, 0, err);
}

int rio__robj_open_listed(rio__robj **out, rio__remote *r, const char *url, rio_error *err)
{
	return robj_open(out, r, url, 1, err);
}

void rio__robj_close(rio__robj *o)
{
	if (!o)
		return;
	first_free(o);
	pthread_mutex_destroy(&o->first_mu);
	free(o->name);
	rio__text_free(&o->url);
	free(o);
}

const char *rio__robj_name(const rio__robj *o)
{
	return o->name;
}

uint64_t rio__robj_size(const rio__robj *o)
{
	return o->size;
}

const char *rio__robj_etag(const rio__robj *o)
{
	return o->etag;
}

const uint8_t *rio__robj_head(const rio__robj *o, size_t *len)
{
	*len = o->head_len;
	return o->head;
}

void rio__remote_first_parts(rio__remote *r, size_t bytes)
{
	pthread_mutex_lock(&r->mu);
	r->first_room = bytes;
	pthread_mutex_unlock(&r->mu);
}

ssize_t rio__robj_take_first(rio__robj *o, void *buf, size_t len, uint64_t offset)
{
	ssize_t n = -1;
	pthread_mutex_lock(&o->first_mu);
	/* held bytes, or the object's end within them */
	if (o->first && offset <= o->first_len &&
	    (len <= o->first_len - offset || o->first_len == o->size)) {
		n = (ssize_t)(len < o->first_len - offset ? len : o->first_len - (size_t)offset);
		memcpy(buf, o->first + offset, (size_t)n);
		if (offset == 0 && (size_t)n == o->first_len) /* the whole part: its one use */
			first_free(o);
	}
	pthread_mutex_unlock(&o->first_mu);
	return n;
}

void *rio__robj_give_first(rio__robj *o, uint64_t offset, size_t len, size_t cap, ssize_t *got)
{
	void *buf = NULL;
	pthread_mutex_lock(&o->first_mu);
	if (o->first && offset == 0 && o->first_cap >= cap &&
	    (len <= o->first_len || o->first_len == o->size)) {
		*got = (ssize_t)(len < o->first_len ? len : o->first_len);
		buf = o->first;
		o->first = NULL; /* the caller's now: only the room goes back */
		first_free(o);
	}
	pthread_mutex_unlock(&o->first_mu);
	return buf;
}

void rio__robj_drop_first(rio__robj *o)
{
	pthread_mutex_lock(&o->first_mu);
	first_free(o);
	pthread_mutex_unlock(&o->first_mu);
}

/* ---- many reads at once ------------------------------------------------------ */

/* One request of a read_many: a run of ranges of one object fetched
 * together into `stage` (or straight into the one range's buffer). */
struct fetch {
	rio__get g;
	rio__robj *obj;
	uint64_t from;  /* the request's bytes: [from, from + len) */
	size_t len;
	uint8_t *stage; /* malloc'd, or NULL when it reads into a range's buffer */
	size_t first, count; /* its ranges: order[first, first + count) */
	int direct;     /* its ranges lie back to back in memory as in the
	                 * object: read straight into them, no stage      */
};

struct order_ctx {
	const rio__range *ranges;
};

static int cmp_range(const void *a, const void *b, void *arg)
{
	const rio__range *r = ((struct order_ctx *)arg)->ranges;
	const rio__range *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
	if (x->obj != y->obj)
		return (uintptr_t)x->obj < (uintptr_t)y->obj ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/* The end of range i clipped to its object's size. */
static uint64_t clipped_end(const rio__range *rg)
{
	uint64_t size = rg->obj->size;
	if (rg->offset >= size)
		return rg->offset;
	return rg->len > size - rg->offset ? size : rg->offset + rg->len;
}

/* Plans the requests: runs of sorted ranges of one object whose gaps are
 * at most RIO__REMOTE_COALESCE_GAP, up to part_size. A run whose ranges
 * follow each other without a gap, in the object and in memory alike (a
 * single range, or the pieces of one large read), is read straight into
 * them, however long, in parts of part_size (a request costs the server
 * far more than its bytes: on SeaweedFS, 16 GETs at once moved 8 MiB
 * ranges at 2x the rate of 4 MiB ones and 6x that of 1 MiB ones).
 * Returns the count, or -ENOMEM. */
static long plan_fetches(const rio__range *ranges, const size_t *order, size_t n, uint64_t part,
                         struct fetch **out)
{
	size_t cap = n + 16, m = 0;
	struct fetch *f = calloc(cap, sizeof *f);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		const rio__range *a = &ranges[order[i]];
		uint64_t from = a->offset, end = clipped_end(a);
		const uint8_t *next_buf = (const uint8_t *)a->buf + (end - from);
		int direct = 1;
		size_t j = i + 1;
		while (j < n) {
			const rio__range *b = &ranges[order[j]];
			uint64_t bend = clipped_end(b);
			int follows = direct && b->obj == a->obj && b->offset == end && b->buf == next_buf;
			if (b->obj != a->obj || b->offset > end + RIO__REMOTE_COALESCE_GAP ||
			    (!follows && (bend > end ? bend : end) - from > part))
				break;
			direct = follows;
			if (bend > end)
				end = bend;
			next_buf = (const uint8_t *)b->buf + (bend - b->offset);
			j++;
		}
		/* read straight into the ranges: in parts of part_size */
		uint64_t pieces = direct && end - from > part ? (end - from + part - 1) / part : 1;
		for (uint64_t k = 0; k < pieces; k++) {
			if (m == cap) {
				if (rio__grow_zeroed(&f, &cap, m + 1, sizeof *f, 0)) {
					free(f);
					return -ENOMEM;
				}
			}
			uint64_t pf = from + k * part, pe = pieces > 1 && pf + part < end ? pf + part : end;
			f[m] = (struct fetch){.obj = a->obj, .from = pf, .len = (size_t)(pe - pf),
			                      .first = i, .count = j - i, .direct = direct};
			m++;
		}
		i = j;
	}
	*out = f;
	return (long)m;
}

struct rio__remote_reads {
	rio__engine *e;
	rio__range *ranges;
	size_t n;
	size_t *order;
	struct fetch *f;
	long m;
	rio__get **gets;
	size_t sent;
};

/* Frees rd's own memory (the stages included). */
static void reads_free(rio__remote_reads *rd)
{
	for (long k = 0; rd->f && k < rd->m; k++)
		free(rd->f[k].stage);
	free(rd->f);
	free(rd->gets);
	free(rd->order);
	free(rd);
}

int rio__remote_read_start(rio__remote *r, rio__range *ranges, size_t n, rio__remote_reads **out,
                           rio_error *err)
{
	*out = NULL;
	rio__engine *e = n ? rio__client_engine(r, err) : NULL;
	if (n && !e)
		return err && err->code ? err->code : -ENOMEM;
	rio__remote_reads *rd = calloc(1, sizeof *rd);
	if (!rd || !(rd->order = malloc((n ? n : 1) * sizeof *rd->order))) {
		free(rd);
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	}
	rd->e = e;
	rd->ranges = ranges;
	rd->n = n;
	for (size_t i = 0; i < n; i++)
		rd->order[i] = i;
	struct order_ctx ctx = {ranges};
	qsort_r(rd->order, n, sizeof *rd->order, cmp_range, &ctx);
	rd->m = n ? plan_fetches(ranges, rd->order, n, r->opts.part_size, &rd->f) : 0;
	rd->gets = rd->m > 0 ? malloc((size_t)rd->m * sizeof *rd->gets) : NULL;
	int rc = rd->m < 0 || (rd->m > 0 && !rd->gets) ? -ENOMEM : 0;
	if (rd->m < 0)
		rd->m = 0;
	struct fetch *f = rd->f;
	for (long k = 0; rc == 0 && k < rd->m; k++) {
		uint8_t *dst;
		const rio__range *rg = &ranges[rd->order[f[k].first]];
		if (f[k].direct) /* straight into the ranges' buffers */
			dst = (uint8_t *)rg->buf + (f[k].from - rg->offset);
		else if (!(dst = f[k].stage = malloc(f[k].len ? f[k].len : 1)))
			rc = -ENOMEM;
		get_init(&f[k].g, f[k].obj, f[k].from, f[k].len, dst);
		rd->gets[k] = &f[k].g;
	}
	if (rc < 0) {
		reads_free(rd);
		return rio__error_set(err, rc, NULL, UNK, UNK, NULL);
	}
	/* empty requests (ranges past the end) are not sent */
	for (long k = 0; k < rd->m; k++)
		if (f[k].len)
			rd->gets[rd->sent++] = &f[k].g;
	if (rd->sent)
		rio__engine_submit(e, rd->gets, rd->sent);
	*out = rd;
	return 0;
}

int rio__remote_read_wait(rio__remote_reads *rd, rio_error *err)
{
	if (!rd)
		return 0;
	int rc = 0;
	for (size_t k = 0; k < rd->sent; k++)
		if (rio__engine_wait(rd->e, rd->gets[k]) < 0 && rc == 0) {
			rc = rd->gets[k]->rc;
			if (err)
				*err = rd->gets[k]->err;
		}
	for (long k = 0; k < rd->m; k++) {
		const struct fetch *f = &rd->f[k];
		for (size_t i = f->first; rc == 0 && f->stage && i < f->first + f->count; i++) {
			rio__range *rg = &rd->ranges[rd->order[i]];
			uint64_t end = clipped_end(rg);
			memcpy(rg->buf, f->stage + (rg->offset - f->from), (size_t)(end - rg->offset));
		}
	}
	for (size_t i = 0; rc == 0 && i < rd->n; i++)
		rd->ranges[i].result = (ssize_t)(clipped_end(&rd->ranges[i]) - rd->ranges[i].offset);
	reads_free(rd);
	return rc;
}

int rio__remote_read_many(rio__remote *r, rio__range *ranges, size_t n, rio_error *err)
{
	rio__remote_reads *rd;
	int rc = rio__remote_read_start(r, ranges, n, &rd, err);
	return rc < 0 ? rc : rio__remote_read_wait(rd, err);
}

ssize_t rio__robj_read(rio__robj *o, void *buf, size_t len, uint64_t offset, rio_error *err)
{
	rio__range rg = {o, offset, len, buf, 0};
	int rc = rio__remote_read_many(o->r, &rg, 1, err);
	return rc < 0 ? rc : rg.result;
}

/* ---- the stream ----------------------------------------------------------------- */

/* Read-ahead starts with a part of this size and one request, and doubles
 * both at each part read through, up to part_size and inflight. */
#define FIRST_PART (256u * 1024u)

struct part {
	rio__get g;
	uint8_t *buf;
	size_t cap;
	uint64_t off;
	size_t len;
};

struct rio__rstream {
	rio__robj *o;
	rio__engine *e;
	uint64_t pos;       /* the next byte handed out                        */
	struct part *parts; /* a ring of `max` parts; [head, head + count) in
	                     * flight or read, in order                    */
	unsigned max, head, count;
	uint64_t ahead;     /* where the next part to ask for starts           */
	size_t next_len;    /* its size                                        */
	unsigned window;    /* how many parts may be asked for at once now     */
	size_t whole;       /* rio__rstream_whole's part size, or 0: a ramp    */
	int failed;
	rio_error err;
};

int rio__rstream_open(rio__rstream **out, rio__robj *o, uint64_t offset)
{
	*out = NULL;
	rio__rstream *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->o = o;
	s->max = o->r->opts.inflight;
	s->parts = calloc(s->max, sizeof *s->parts);
	if (!s->parts) {
		free(s);
		return -ENOMEM;
	}
	rio__error_clear(&s->err);
	s->e = rio__client_engine(o->r, &s->err);
	if (!s->e) {
		int rc = s->err.code ? s->err.code : -ENOMEM;
		rio__rstream_close(s);
		return rc;
	}
	s->pos = s->ahead = offset;
	s->next_len = FIRST_PART < o->r->opts.part_size ? FIRST_PART : (size_t)o->r->opts.part_size;
	s->window = 1;
	*out = s;
	return 0;
}

void rio__rstream_whole(rio__rstream *s, size_t part, unsigned window)
{
	s->whole = part && part < s->o->r->opts.part_size ? part : (size_t)s->o->r->opts.part_size;
	s->next_len = s->whole;
	s->window = window && window < s->max ? window : s->max;
}

/* Asks for parts until `window` are out or the object ends. */
static int top_up(rio__rstream *s)
{
	while (s->count < s->window && s->ahead < s->o->size) {
		struct part *p = &s->parts[(s->head + s->count) % s->max];
		uint64_t left = s->o->size - s->ahead;
		size_t len = left < s->next_len ? (size_t)left : s->next_len;
		if (p->cap < len) {
			rio__client_buf_give(s->o->r, p->buf, p->cap);
			p->cap = 0;
			if (!(p->buf = rio__client_buf_take(s->o->r, len, &p->cap)))
				return -ENOMEM;
		}
		p->off = s->ahead;
		p->len = len;
		get_init(&p->g, s->o, p->off, len, p->buf);
		rio__get *g = &p->g;
		rio__engine_submit(s->e, &g, 1);
		s->ahead += len;
		s->count++;
	}
	return 0;
}

static void drop_all(rio__rstream *s)
{
	for (unsigned i = 0; i < s->count; i++)
		rio__engine_cancel(s->e, &s->parts[(s->head + i) % s->max].g);
	s->count = 0;
}

ssize_t rio__rstream_read(rio__rstream *s, void *dst, size_t n)
{
	if (s->failed)
		return s->err.code;
	size_t done = 0;
	while (done < n && s->pos < s->o->size) {
		int rc = top_up(s);
		if (rc < 0) {
			s->failed = 1;
			return rio__error_set(&s->err, rc, s->o->name, s->pos, UNK, NULL);
		}
		struct part *p = &s->parts[s->head];
		if ((rc = rio__engine_wait(s->e, &p->g)) < 0) {
			s->err = p->g.err;
			s->failed = 1;
			drop_all(s);
			return done ? (ssize_t)done : rc;
		}
		size_t at = (size_t)(s->pos - p->off), k = p->len - at;
		if (k > n - done)
			k = n - done;
		memcpy((uint8_t *)dst + done, p->buf + at, k);
		done += k;
		s->pos += k;
		if (s->pos == p->off + p->len) { /* read through: ramp up */
			s->head = (s->head + 1) % s->max;
			s->count--;
			if (s->whole) /* rio__rstream_whole: at full speed already */
				continue;
			if (s->window < s->max)
				s->window *= 2;
			if (s->window > s->max)
				s->window = s->max;
			if (s->next_len < s->o->r->opts.part_size)
				s->next_len *= 2;
			if (s->next_len > s->o->r->opts.part_size)
				s->next_len = (size_t)s->o->r->opts.part_size;
		}
	}
	if (top_up(s) < 0 && done == 0) {
		s->failed = 1;
		return rio__error_set(&s->err, -ENOMEM, s->o->name, s->pos, UNK, NULL);
	}
	return (ssize_t)done;
}

int rio__rstream_seek(rio__rstream *s, uint64_t offset)
{
	if (s->count && offset >= s->parts[s->head].off &&
	    offset < s->parts[s->head].off + s->parts[s->head].len) {
		s->pos = offset; /* within the part at hand */
		return 0;
	}
	drop_all(s);
	s->head = 0;
	s->pos = s->ahead = offset;
	s->whole = 0;
	s->window = 1;
	s->next_len = FIRST_PART < s->o->r->opts.part_size ? FIRST_PART
	                                                     : (size_t)s->o->r->opts.part_size;
	s->failed = 0;
	rio__error_clear(&s->err);
	return 0;
}

uint64_t rio__rstream_offset(const rio__rstream *s)
{
	return s->pos;
}

const rio_error *rio__rstream_error(const rio__rstream *s)
{
	return &s->err;
}

void rio__rstream_close(rio__rstream *s)
{
	if (!s)
		return;
	if (s->e)
		drop_all(s);
	for (unsigned i = 0; i < s->max; i++)
		rio__client_buf_give(s->o->r, s->parts[i].buf, s->parts[i].cap);
	free(s->parts);
	free(s);
}

static ssize_t source_read(void *arg, void *buf, size_t n)
{
	return rio__rstream_read(arg, buf, n);
}

static int source_seek(void *arg, uint64_t offset)
{
	return rio__rstream_seek(arg, offset);
}

static const char *source_detail(void *arg)
{
	return rio__error_detail(rio__rstream_error(arg));
}

void rio__rstream_source(rio__rstream *s, rio__byte_source *out)
{
	*out = (rio__byte_source){source_read, source_seek, source_detail, s};
}

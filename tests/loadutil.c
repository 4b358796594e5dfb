/*
 * loadutil.c — see loadutil.h.
 */
#include "loadutil.h"

#include <errno.h>
#include <lz4frame.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- records known from their place ------------------------------------- */

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t x = a * 0x9E3779B97F4A7C15ull;
	x ^= (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
	x ^= (c + 1) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	x *= 0xD6E8FEB86659FD93ull;
	x ^= x >> 32;
	return x;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

size_t lu_raw_payload(uint32_t tag, uint32_t shard, uint64_t index, uint8_t *buf)
{
	uint64_t h = mix3(tag, shard, index);
	size_t n = 12 + (size_t)(h % 100);
	put_le32(buf, shard);
	put_le32(buf + 4, (uint32_t)index);
	put_le32(buf + 8, tag);
	tu_fill_random(buf + 12, n - 12, h);
	return n;
}

void lu_example_values(uint32_t tag, uint32_t shard, uint64_t index, lu_values *v)
{
	uint64_t h = mix3(tag, shard, index);
	tu_fill_random(v->image, sizeof v->image, h);
	v->label = (int64_t)shard * 1000 + (int64_t)index - 50; /* some negative */
	v->x[0] = (float)shard + (float)index * 0.25f;
	v->x[1] = -(float)index;
	v->x[2] = (float)(h % 1000) / 8.0f;
}

static void example_encode(rio_example_builder *eb, const lu_values *v, int bad,
                           const uint8_t **data, size_t *size)
{
	static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02};
	if (bad == LU_BAD_NOT_EXAMPLE) {
		*data = junk;
		*size = sizeof junk;
		return;
	}
	rio_example_builder_reset(eb);
	CU_ASSERT_EQUAL_FATAL(
	    rio_example_add_bytes(eb, "image", v->image, bad == LU_BAD_SHORT_IMAGE ? 783 : 784), 0);
	CU_ASSERT_EQUAL_FATAL(rio_example_add_floats(eb, "x", v->x, 3), 0);
	if (bad == LU_BAD_FLOAT_LABEL) {
		float f = (float)v->label;
		CU_ASSERT_EQUAL_FATAL(rio_example_add_floats(eb, "label", &f, 1), 0);
	} else if (bad == LU_BAD_LONG_LABEL) {
		int64_t two[2] = {v->label, v->label};
		CU_ASSERT_EQUAL_FATAL(rio_example_add_int64s(eb, "label", two, 2), 0);
	} else if (bad != LU_BAD_NO_LABEL) {
		CU_ASSERT_EQUAL_FATAL(rio_example_add_int64s(eb, "label", &v->label, 1), 0);
	}
	CU_ASSERT_EQUAL_FATAL(rio_example_finish(eb, data, size), 0);
}

/* ---- datasets ------------------------------------------------------------ */

void lu_dataset_make(lu_dataset *d, const lu_spec *sp)
{
	memset(d, 0, sizeof *d);
	d->sp = *sp;
	CU_ASSERT_FATAL(sp->nshards >= 1 && sp->nshards <= LU_MAXSHARDS);
	snprintf(d->dir, sizeof d->dir, "%s", tu_path(sp->name));
	CU_ASSERT_EQUAL_FATAL(mkdir(d->dir, 0755), 0);
	snprintf(d->prefix, sizeof d->prefix, "%s/data", d->dir);
	d->nshards = sp->nshards;

	rio_example_builder eb;
	rio_example_builder_init(&eb);
	uint8_t raw[LU_PAYLOAD_MAX];
	for (size_t s = 0; s < sp->nshards; s++) {
		d->count[s] = sp->counts[s];
		d->base[s] = d->total;
		d->total += sp->counts[s];
		d->off[s] = calloc(sp->counts[s] + 1, sizeof *d->off[s]);
		CU_ASSERT_FATAL(d->off[s] != NULL);
		CU_ASSERT_FATAL(rio_shard_name_format(d->paths[s], sizeof d->paths[s], d->prefix,
		                                      (uint32_t)s, (uint32_t)sp->nshards,
		                                      sp->comp) > 0);
		rio_writer_opts wo;
		rio_writer_opts_init(&wo);
		wo.compression = sp->comp;
		rio_writer *w;
		CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, d->paths[s], &wo), 0);
		rio_index idx;
		memset(&idx, 0, sizeof idx);
		for (uint64_t i = 0; i < sp->counts[s]; i++) {
			const uint8_t *data;
			size_t size;
			if (sp->example) {
				lu_values v;
				lu_example_values(sp->tag, (uint32_t)s, i, &v);
				int bad = sp->bad != LU_BAD_NONE && s == sp->bad_shard &&
				                  i == sp->bad_index
				              ? sp->bad
				              : LU_BAD_NONE;
				example_encode(&eb, &v, bad, &data, &size);
			} else {
				size = lu_raw_payload(sp->tag, (uint32_t)s, i, raw);
				data = raw;
			}
			CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, data, size, &d->off[s][i]), 0);
			CU_ASSERT_EQUAL_FATAL(rio_index_append(&idx, d->off[s][i], size + 16), 0);
		}
		d->off[s][sp->counts[s]] = rio_writer_bytes(w);
		CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
		if (sp->idx_mask & (1u << s)) {
			char *ip = rio_index_path(d->paths[s]);
			CU_ASSERT_FATAL(ip != NULL);
			CU_ASSERT_EQUAL_FATAL(rio_index_write(ip, &idx, NULL), 0);
			free(ip);
		}
		rio_index_free(&idx);
	}
	d->base[sp->nshards] = d->total;
	rio_example_builder_free(&eb);
}

void lu_dataset_free(lu_dataset *d)
{
	for (size_t s = 0; s < d->nshards; s++)
		free(d->off[s]);
	memset(d, 0, sizeof *d);
}

uint64_t lu_ordinal(const lu_dataset *d, uint32_t shard, uint64_t index)
{
	return d->base[shard] + index;
}

/* ---- decoded columns ----------------------------------------------------- */

size_t lu_check_columns(const rio_batch *b, const lu_dataset *d, int float_cols)
{
	size_t bad = 0;
	long page = sysconf(_SC_PAGESIZE);
	if (b->ncolumns != 3 || !b->columns)
		return 1000000;
	const rio_batch_column *c = b->columns;
	static const char *names[3] = {"image", "label", "x"};
	static const size_t lens[3] = {784, 1, 3};
	rio_dtype types[3] = {RIO_DTYPE_U8, RIO_DTYPE_I64, RIO_DTYPE_F32};
	if (float_cols)
		types[0] = types[1] = RIO_DTYPE_F32;
	for (int k = 0; k < 3; k++) {
		if (!c[k].name || strcmp(c[k].name, names[k]) || c[k].type != types[k] ||
		    c[k].length != lens[k] || !c[k].host)
			return 100000;
		if (page > 0 && (uintptr_t)c[k].host % (uintptr_t)page)
			bad += 10000;
		if (c[k].device)
			bad += 10000;
	}
	for (size_t i = 0; i < b->count; i++) {
		const rio_batch_record *r = &b->records[i];
		if (r->shard >= d->nshards || r->index >= d->count[r->shard]) {
			bad++;
			continue;
		}
		lu_values v;
		lu_example_values(d->sp.tag, r->shard, r->index, &v);
		if (float_cols) {
			const float *img = (const float *)c[0].host + i * 784;
			for (size_t j = 0; j < 784; j++)
				if (img[j] != (float)v.image[j] * 0.5f)
					bad++;
			if (((const float *)c[1].host)[i] != (float)v.label)
				bad++;
		} else {
			if (memcmp((const uint8_t *)c[0].host + i * 784, v.image, 784))
				bad++;
			if (((const int64_t *)c[1].host)[i] != v.label)
				bad++;
		}
		const float *x = (const float *)c[2].host + i * 3;
		for (size_t j = 0; j < 3; j++)
			if (x[j] != v.x[j])
				bad++;
	}
	return bad;
}

/* ---- sequences ----------------------------------------------------------- */

void lu_seq_init(lu_seq *s)
{
	memset(s, 0, sizeof *s);
}

void lu_seq_free(lu_seq *s)
{
	free(s->rec);
	free(s->b);
	memset(s, 0, sizeof *s);
}

void lu_seq_add(lu_seq *s, const rio_batch *b, const lu_dataset *d)
{
	if (s->nb == s->bcap) {
		s->bcap = s->bcap ? 2 * s->bcap : 64;
		s->b = realloc(s->b, s->bcap * sizeof *s->b);
		CU_ASSERT_FATAL(s->b != NULL);
	}
	if (s->n + b->count > s->cap) {
		while (s->n + b->count > s->cap)
			s->cap = s->cap ? 2 * s->cap : 1024;
		s->rec = realloc(s->rec, s->cap * sizeof *s->rec);
		CU_ASSERT_FATAL(s->rec != NULL);
	}
	lu_binfo *bi = &s->b[s->nb++];
	bi->epoch = b->epoch;
	bi->number = b->number;
	bi->count = b->count;
	bi->first = s->n;
	uint8_t want[LU_PAYLOAD_MAX];
	for (size_t i = 0; i < b->count; i++) {
		const rio_batch_record *r = &b->records[i];
		s->rec[s->n].shard = r->shard;
		s->rec[s->n].index = r->index;
		s->n++;
		if (b->ncolumns)
			continue;
		s->bytes += r->size;
		if (!d || d->sp.example || d->check)
			continue;
		size_t n = lu_raw_payload(d->sp.tag, r->shard, r->index, want);
		if (!r->data || r->size != n || memcmp(r->data, want, n))
			s->bad_payload++;
	}
	if (b->ncolumns && d)
		s->bad_columns += lu_check_columns(b, d, s->float_cols);
	else if (d && d->check)
		s->bad_payload += d->check(b, d);
}

lu_seq lu_seq_view(const lu_seq *s, size_t from, size_t nb)
{
	lu_seq v = *s;
	v.b = s->b + from;
	v.nb = from + nb <= s->nb ? nb : 0;
	return v;
}

lu_seq lu_seq_recview(const lu_seq *s, size_t from, size_t n)
{
	lu_seq v = *s;
	v.rec = s->rec + from;
	v.n = from + n <= s->n ? n : 0;
	v.b = NULL;
	v.nb = 0;
	return v;
}

size_t lu_epoch_start(const lu_seq *s, uint64_t e)
{
	size_t i = 0;
	while (i < s->nb && s->b[i].epoch < e)
		i++;
	return i;
}

int lu_drain_epoch(rio_loader *l, lu_seq *s, const lu_dataset *d)
{
	rio_batch *b;
	int rc, first = 1;
	uint64_t epoch = 0, number = 0;
	while ((rc = rio_loader_next(l, &b)) == 1) {
		if (!first && (b->epoch != epoch || b->number != number))
			s->bad_meta++;
		first = 0;
		epoch = b->epoch;
		number = b->number + 1;
		lu_seq_add(s, b, d);
		rio_loader_release(l, b);
	}
	return rc;
}

int lu_take(rio_loader *l, lu_seq *s, const lu_dataset *d, size_t k)
{
	size_t taken = 0, zeros = 0;
	while (taken < k) {
		rio_batch *b;
		int rc = rio_loader_next(l, &b);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if (++zeros > 2 && taken == 0)
				return -EPROTO; /* nothing comes: the rank has no data */
			continue;
		}
		lu_seq_add(s, b, d);
		rio_loader_release(l, b);
		taken++;
	}
	return 0;
}

int lu_drain_through(rio_loader *l, lu_seq *s, const lu_dataset *d, uint64_t last)
{
	int zeros = 0;
	for (;;) {
		rio_batch *b;
		int rc = rio_loader_next(l, &b);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if ((s->nb && s->b[s->nb - 1].epoch >= last) || ++zeros > 2)
				return 0;
			continue;
		}
		lu_seq_add(s, b, d);
		rio_loader_release(l, b);
		if (s->b[s->nb - 1].epoch > last)
			return -EPROTO;
	}
}

int lu_seq_equal(const lu_seq *a, size_t afrom, const lu_seq *b, size_t bfrom)
{
	if (afrom > a->nb || bfrom > b->nb || a->nb - afrom != b->nb - bfrom)
		return 0;
	for (size_t i = 0; i < a->nb - afrom; i++) {
		const lu_binfo *x = &a->b[afrom + i], *y = &b->b[bfrom + i];
		if (x->epoch != y->epoch || x->number != y->number || x->count != y->count)
			return 0;
		for (size_t j = 0; j < x->count; j++) {
			const lu_id *p = &a->rec[x->first + j], *q = &b->rec[y->first + j];
			if (p->shard != q->shard || p->index != q->index)
				return 0;
		}
	}
	return 1;
}

const char *lu_seq_diff(const lu_seq *a, size_t afrom, const lu_seq *b, size_t bfrom, char *buf,
                        size_t size)
{
	size_t na = a->nb > afrom ? a->nb - afrom : 0, nb = b->nb > bfrom ? b->nb - bfrom : 0;
	for (size_t i = 0; i < na && i < nb; i++) {
		const lu_binfo *x = &a->b[afrom + i], *y = &b->b[bfrom + i];
		size_t j = 0;
		while (j < x->count && j < y->count &&
		       a->rec[x->first + j].shard == b->rec[y->first + j].shard &&
		       a->rec[x->first + j].index == b->rec[y->first + j].index)
			j++;
		if (x->epoch != y->epoch || x->number != y->number || x->count != y->count ||
		    j < x->count) {
			snprintf(
			    buf, size,
			    "batch %zu: epoch %llu number %llu count %zu vs epoch %llu number %llu "
			    "count %zu; records differ from %zu on (%u,%llu) vs (%u,%llu)",
			    i, (unsigned long long)x->epoch, (unsigned long long)x->number,
			    x->count, (unsigned long long)y->epoch, (unsigned long long)y->number,
			    y->count, j, j < x->count ? a->rec[x->first + j].shard : 0,
			    j < x->count ? (unsigned long long)a->rec[x->first + j].index : 0ull,
			    j < y->count ? b->rec[y->first + j].shard : 0,
			    j < y->count ? (unsigned long long)b->rec[y->first + j].index : 0ull);
			return buf;
		}
	}
	if (na != nb)
		snprintf(buf, size, "%zu batches vs %zu (the common ones agree)", na, nb);
	else
		snprintf(buf, size, "no difference");
	return buf;
}

size_t lu_count_hits(const lu_dataset *d, const lu_seq *s, unsigned *hits)
{
	size_t out = 0;
	for (size_t i = 0; i < s->n; i++) {
		const lu_id *r = &s->rec[i];
		if (r->shard >= d->nshards || r->index >= d->count[r->shard])
			out++;
		else
			hits[lu_ordinal(d, r->shard, r->index)]++;
	}
	return out;
}

size_t lu_not_once(const lu_dataset *d, const lu_seq *s, size_t n)
{
	unsigned *hits = calloc(d->total + 1, sizeof *hits);
	CU_ASSERT_FATAL(hits != NULL);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += lu_count_hits(d, &s[i], hits);
	for (uint64_t i = 0; i < d->total; i++)
		if (hits[i] != 1)
			bad++;
	free(hits);
	return bad;
}

int lu_same_set(const lu_dataset *d, const lu_seq *s, const lu_seq *s2)
{
	unsigned *h1 = calloc(d->total + 1, sizeof *h1), *h2 = calloc(d->total + 1, sizeof *h2);
	CU_ASSERT_FATAL(h1 && h2);
	int same = lu_count_hits(d, s, h1) == 0 && lu_count_hits(d, s2, h2) == 0 &&
	           memcmp(h1, h2, d->total * sizeof *h1) == 0;
	free(h1);
	free(h2);
	return same;
}

int lu_epoch_shape(const lu_seq *s, size_t from, size_t bs, uint64_t epoch, uint64_t records,
                   int drop)
{
	uint64_t full = records / bs, rem = records % bs;
	uint64_t want = full + (rem && !drop);
	if (s->nb < from || s->nb - from != want)
		return 1000;
	int bad = 0;
	for (uint64_t j = 0; j < want; j++) {
		const lu_binfo *b = &s->b[from + j];
		if (b->epoch != epoch || b->number != j || b->count != (j < full ? bs : rem))
			bad++;
	}
	return bad;
}

/* ---- loaders ------------------------------------------------------------- */

void lu_base_opts(rio_loader_opts *o)
{
	rio_loader_opts_init(o);
	o->rank = 0;
	o->world = 1;
	o->sharding = RIO_SHARD_RECORDS;
	o->batch_size = 16;
	o->seed = 1;
	o->chunk_bytes = 4096;
	o->shuffle_buffer = 64;
	o->interleave = 2;
}

rio_loader *lu_open(const lu_dataset *d, const rio_loader_opts *o)
{
	rio_loader *l = NULL;
	int rc = rio_loader_open(&l, d->prefix, o);
	if (rc < 0)
		printf("\n    rio_loader_open(%s): %d (%s): %s\n", d->prefix, rc, rio_strerror(rc),
		       l ? rio_loader_error(l)->message : "(no loader)");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL(l);
	if (rc < 0) {
		rio_loader_close(l);
		return NULL;
	}
	return l;
}

int lu_run(const lu_dataset *d, const rio_loader_opts *o, int epochs, lu_seq *s)
{
	rio_loader *l = lu_open(d, o);
	if (!l)
		return -1;
	int bad = 0;
	for (int e = 0; e < epochs; e++) {
		int rc = lu_drain_epoch(l, s, d);
		if (rc != 0)
			printf("\n    epoch %d ended with %d (%s): %s\n", e, rc, rio_strerror(rc),
			       rio_loader_error(l)->message);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc)
			bad = -1;
	}
	rio_loader_close(l);
	return bad;
}

/* ---- watchdog ------------------------------------------------------------ */

static const char *wd_what;

static void wd_fire(int sig)
{
	(void)sig;
	static const char m[] = "\n*** watchdog: still running after its time limit: ";
	if (write(2, m, sizeof m - 1) < 0 || write(2, wd_what, strlen(wd_what)) < 0 ||
	    write(2, "\n", 1) < 0) {
	}
	_exit(1);
}

void lu_watchdog(const char *what, unsigned seconds)
{
	wd_what = what ? what : "?";
	signal(SIGALRM, wd_fire);
	alarm(seconds);
}

/* The bytes compressed with zlib's deflate (gzip or zlib wrapper) or
 * liblz4's frame API (64 KiB blocks, content checksum); malloc'd. */
uint8_t *lu_compress(rio_compression c, const uint8_t *in, size_t n, size_t *out_n)
{
	if (c == RIO_COMPRESSION_LZ4) {
		LZ4F_preferences_t prefs;
		memset(&prefs, 0, sizeof prefs);
		prefs.frameInfo.blockSizeID = LZ4F_max64KB;
		prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
		size_t cap = LZ4F_compressFrameBound(n, &prefs);
		uint8_t *out = malloc(cap);
		CU_ASSERT_FATAL(out != NULL);
		size_t r = LZ4F_compressFrame(out, cap, in, n, &prefs);
		CU_ASSERT_FATAL(!LZ4F_isError(r));
		*out_n = r;
		return out;
	}
	z_stream z;
	memset(&z, 0, sizeof z);
	CU_ASSERT_FATAL(deflateInit2(&z, 6, Z_DEFLATED,
	                             c == RIO_COMPRESSION_GZIP ? 16 + MAX_WBITS : MAX_WBITS, 8,
	                             Z_DEFAULT_STRATEGY) == Z_OK);
	size_t cap = deflateBound(&z, (uLong)n) + 64;
	uint8_t *out = malloc(cap);
	CU_ASSERT_FATAL(out != NULL);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	CU_ASSERT_FATAL(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*out_n = z.total_out;
	deflateEnd(&z);
	return out;
}

/*
 * cache.c — opts.cache: the rank's compressed shards, decompressed whole
 * into memory once, at open (with columns, its uncompressed ones read in
 * too, and every record decoded once), and served from there every epoch.
 *
 * Reading a compressed shard costs its decompression every epoch, and the
 * pipeline (worker.c, batcher.c) with its hand-offs between threads. When
 * the shards the rank reads fit opts.cache bytes decompressed, each is
 * decompressed once (the shards in parallel, one thread per worker) into
 * a buffer of its own, and the shard then looks like an uncompressed shard
 * mapped with opts.map: rio__shard.map points at the buffer, and the
 * placed path (placed.c: fill_mapped; BUFFER shuffling as the permutation
 * plan.c replays) serves every epoch with no system call, no decompression,
 * no copy and no CRC (checked once, as the copy is made). The order and the
 * bytes are those of the pipeline for the same seed: the plan does not
 * depend on how a shard is read.
 *
 * Decoded rows: when the loader decodes (opts.columns), its uncompressed
 * shards are read into memory the same way, and when the rows fit
 * opts.cache too, each shard's records are decoded once more, into packed
 * rows (decode.h: an image's pixels stay bytes), and its copy freed: every
 * epoch then only gathers rows, widens them and copies them into batches
 * (placed.c: gather_rows, rio__rowpack_to_columns), rather than parsing
 * every Example again (half of a Fashion-MNIST batch's time). The values
 * are those decoding gives every epoch. A shard with a record that does
 * not decode keeps its copy (or its mapping), and the placed path reports
 * the error with the batch that holds it, as without the cache.
 *
 * All or nothing: when the shards do not fit, or one cannot be decompressed
 * whole, or its records are not where its index says (a stale .idx, a torn
 * tail), or one's data CRC is wrong, nothing is cached and the pipeline
 * reads the files, as without the option, and reports the damage where it
 * would, after the same batches. Only under
 * RIO_DAMAGE_FAIL, in NONE and BUFFER order (plan.c decides when to try).
 */
#include "config.h"
#include "decode.h"
#include "frame_scan.h"
#include "internal.h"
#include "plan.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* 1 when shard `s` is one of the rank's shards to cache: the compressed
 * ones, and with columns (`decoding`) the uncompressed ones too, whose
 * rows spare every epoch its parsing. */
static int to_cache(const rio__dataset *ds, size_t s, int decoding)
{
	if (ds->shards[s].comp == RIO_COMPRESSION_NONE && !decoding)
		return 0;
	for (size_t i = 0; i < ds->npieces; i++)
		if (ds->pieces[i].shard == s)
			return 1;
	return 0;
}

/* Decompresses shard `s` whole into a new buffer of s->data_end bytes and
 * checks that its records are where the index says, one after another up
 * to the end of the stream, and (opts.verify_crc) their data CRCs: once,
 * here, rather than every epoch, as nothing writes to the copy after (a
 * mapped file may change under the loader; this memory does not). 0, or a
 * negative code (nothing kept). */
static int load_shard(const rio__shard *s, const rio_loader_opts *o, uint64_t *file_bytes,
                      uint8_t **out)
{
	size_t n = (size_t)s->data_end;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	rio_error e;
	int fd = s->src.ops->stream(&s->src, &e);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	rio__istream *in = NULL;
	int rc = rio__istream_open(&in, fd, s->comp);
	size_t got = 0;
	while (rc == 0) {
		uint8_t extra;
		ssize_t r = got < n ? rio__istream_read(in, buf + got, n - got)
		                    : rio__istream_read(in, &extra, 1);
		if (r < 0)
			rc = (int)r;
		else if (r == 0)
			break;
		else if (got >= n)
			rc = RIO_EBADINDEX; /* more bytes than its records hold */
		else
			got += (size_t)r;
	}
	if (in)
		*file_bytes = rio__istream_file_bytes(in);
	rio__istream_close(in);
	close(fd);
	if (rc == 0 && got != n)
		rc = RIO_ETRUNCATED;
	uint64_t at = 0;
	for (uint64_t i = 0; i < s->count && rc == 0; i++) {
		uint64_t len;
		if (s->offset[i] != at ||
		    rio__frame_head(buf + at, n - (size_t)at, 1, o->max_record_size, &len) !=
		        RIO__FRAME_OK ||
		    rio__frame_size(len) != s->framed[i] || s->framed[i] > n - at)
			rc = RIO_EBADINDEX;
		else if (o->verify_crc && !rio__frame_data_ok(buf + at, len))
			rc = RIO_ECORRUPT_DATA;
		at += s->framed[i];
	}
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}

/* The records of shard `s`'s decompressed copy (checked by load_shard),
 * decoded and packed into rows: a malloc'd rowpack, or NULL when one does
 * not decode (the epoch that reaches it reports it), the rows' flags
 * differ, or there is no memory. */
static rio__rowpack *decode_rows(const rio__shard *s, const uint8_t *buf, const rio__colplan *cp)
{
	rio__rowpack *pk = NULL;
	uint8_t *row = malloc(cp->row_stride);
	int ok = row != NULL;
	for (uint64_t i = 0; ok && i < s->count; i++) {
		char detail[300];
		size_t len = s->framed[i] - rio__frame_size(0);
		ok = rio__decode_row(cp, buf + s->offset[i] + RIO_HEADER_SIZE, len, row, detail,
		                     sizeof detail) == 0;
		if (ok && !pk) /* the first row says the layout */
			ok = (pk = rio__rowpack_new(cp, row, s->count)) != NULL;
		ok = ok && rio__rowpack_put(pk, cp, row, pk->data + (size_t)i * pk->stride) == 0;
	}
	free(row);
	if (!ok) {
		rio__rowpack_free(pk);
		pk = NULL;
	}
	return pk;
}

typedef struct load_job {
	rio__dataset *ds;
	const rio_loader_opts *o;
	const rio__colplan *cols; /* decode into rows, or NULL */
	uint64_t held;          /* the bytes kept once all are loaded, the
	                         * shards decoded so far as rows       */
	pthread_mutex_t mu;
	uint64_t file_bytes;
} load_job;

static int load_one(void *arg, size_t s, rio_error *e)
{
	(void)e; /* all or nothing: a failure only says not to cache */
	load_job *j = arg;
	if (!to_cache(j->ds, s, j->cols != NULL))
		return 0;
	uint64_t fb = 0;
	rio__shard *sh = &j->ds->shards[s];
	uint8_t *buf = NULL;
	int rc = load_shard(sh, j->o, &fb, &buf);
	rio__rowpack *pk = rc == 0 && j->cols ? decode_rows(sh, buf, j->cols) : NULL;
	int keep = 0;
	pthread_mutex_lock(&j->mu);
	j->file_bytes += fb;
	if (pk) { /* the rows replace the copy when the total still fits */
		uint64_t rows = sh->count * pk->stride;
		keep = j->held - sh->data_end + rows <= j->o->cache;
		if (keep)
			j->held = j->held - sh->data_end + rows;
	}
	pthread_mutex_unlock(&j->mu);
	if (!keep) {
		rio__rowpack_free(pk);
		pk = NULL;
	}
	if (rc < 0)
		return rc;
	if (pk || sh->map) {
		/* rows; or a plain shard mapped (opts.map) whose records did not
		 * all decode: its mapping serves it, as without the cache */
		free(buf);
		if (pk)
			rio__shard_unmap(sh);
		sh->rows = pk;
	} else {
		sh->cache = buf;
		sh->map = buf;
		sh->map_len = (size_t)sh->data_end;
	}
	return 0;
}

/* Frees the decompressed copies (after a failure: all or nothing). */
static void cache_free(rio__dataset *ds)
{
	for (size_t s = 0; s < ds->nshards; s++) {
		rio__shard *sh = &ds->shards[s];
		if (!rio__shard_cached(sh))
			continue;
		free(sh->cache);
		rio__rowpack_free(sh->rows);
		sh->cache = NULL;
		sh->rows = NULL;
		sh->map = NULL;
		sh->map_len = 0;
	}
	ds->cache_bytes = 0;
}

uint64_t rio__cache_need(const rio__dataset *ds, int decoding)
{
	uint64_t need = 0;
	for (size_t s = 0; s < ds->nshards; s++)
		if (to_cache(ds, s, decoding))
			need += ds->shards[s].data_end;
	return need;
}

int rio__cache_load(rio__dataset *ds, const rio_loader_opts *o, const rio__colplan *cols,
                    uint64_t *file_bytes)
{
	*file_bytes = 0;
	uint64_t need = 0;
	size_t nload = 0;
	for (size_t s = 0; s < ds->nshards; s++)
		if (to_cache(ds, s, cols->ncols > 0)) {
			need += ds->shards[s].data_end;
			nload++;
			if (!ds->shards[s].offset)
				return 0; /* counted without every record's place */
		}
	if (nload == 0 || need > o->cache || need > SIZE_MAX / 2)
		return 0;
	load_job j = {.ds = ds, .o = o, .cols = cols->ncols ? cols : NULL, .held = need};
	pthread_mutex_init(&j.mu, NULL);
	/* on threads of their own, never the caller's: with the CRCs checked
	 * on the calling thread, the workers it starts later decoded at half
	 * speed (u8 -> f32 two-thirds of their time, recordio-bench on
	 * Fashion-MNIST, a 2-core AMD EPYC with AVX-512): most likely the
	 * vector registers' upper halves left in use by the CRC code (ISA-L),
	 * a state a new thread inherits and in which SSE code stalls */
	int threads = o->workers < (int)nload ? o->workers : (int)nload;
	int rc = rio__shards_run(ds->nshards, threads, 0, load_one, &j, NULL);
	pthread_mutex_destroy(&j.mu);
	*file_bytes = j.file_bytes;
	if (rc < 0) {
		cache_free(ds);
		return 0;
	}
	ds->cache_bytes = 0;
	for (size_t s = 0; s < ds->nshards; s++) {
		const rio__shard *sh = &ds->shards[s];
		ds->cache_bytes += sh->rows ? sh->count * sh->rows->stride : sh->cache ? sh->data_end : 0;
	}
	return 1;
}

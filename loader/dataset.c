/*
 * dataset.c — the rank's share of the data, fixed when the loader opens.
 *
 * Every shard the rank may read is opened once and counted through its
 * .idx sidecar, or scanned with a reader when it has none (with the
 * loader's damage policy, so the counts match what workers will deliver).
 * Then `files` sharding gives rank r the shards r, r + W, ...; `records`
 * sharding cuts the concatenation of all records into W contiguous ranges
 * whose sizes differ by at most one and maps each onto shard pieces.
 */
#include "config.h"
#include "dataset.h"
#include "decode.h"
#include "frame_scan.h"
#include "internal.h"
#include "io.h"
#include "route.h"
#include "shard_cache.h"
#include "remote_whole.h"
#include "../recordio/remote/remote.h"
#include "../recordio/shardset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- rank and world --------------------------------------------------- */

static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < 0 || x > 1 << 24)
		return -EINVAL;
	*out = (int)x;
	return 1;
}

int rio__rank_from_env(int *rank, int *world)
{
	static const char *const pairs[][2] = {
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"SLURM_PROCID", "SLURM_NTASKS"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		int r, w;
		int a = env_int(pairs[i][0], &r), b = env_int(pairs[i][1], &w);
		if (a < 0 || b < 0)
			return -EINVAL;
		if (a == 1 && b == 1) {
			*rank = r;
			*world = w;
			return 1;
		}
	}
	return 0;
}

/* ---- counting a shard ------------------------------------------------- */

static int ckpt_alloc(rio__shard *s)
{
	size_t n = (size_t)((s->count + RIO__CKPT - 1) / RIO__CKPT);
	s->ckpt = malloc((n ? n : 1) * sizeof *s->ckpt);
	return s->ckpt ? 0 : -ENOMEM;
}

static int full_alloc(rio__shard *s)
{
	size_t n = s->count ? (size_t)s->count : 1;
	s->offset = malloc(n * sizeof *s->offset);
	s->framed = malloc(n * sizeof *s->framed);
	return s->offset && s->framed ? 0 : -ENOMEM;
}

/* Keeps what the loader needs of a shard's index (s->count entries): the
 * sparse index, and every record's place when `full`. Frees `idx`. */
static int adopt_index(rio__shard *s, rio_index *idx, int full, rio_error *err)
{
	int rc = ckpt_alloc(s);
	if (rc == 0 && full)
		rc = full_alloc(s);
	for (uint64_t i = 0; i < s->count && rc == 0; i++) {
		if (i % RIO__CKPT == 0)
			s->ckpt[i / RIO__CKPT] = idx->offset[i];
		if (!full)
			continue;
		if (idx->framed_size[i] > UINT32_MAX)
			rc = rio__error_set(err, RIO_ETOOLARGE, s->path, idx->offset[i], i,
			                    "a record over 4 GiB cannot be read by its index");
		s->offset[i] = idx->offset[i];
		s->framed[i] = (uint32_t)idx->framed_size[i];
	}
	rio_index_free(idx);
	return rc;
}

/* The shard's records as a scan finds them, one entry each: a whole frame,
 * or a damaged region skipped under SKIP (framed size 0, at the offset
 * where the damage starts; a torn tail and the damage that stops a
 * compressed stream are one too). Data CRCs are checked only to fail
 * early under FAIL: under SKIP a frame whose data is damaged is a record
 * the workers skip when they read it. */
static int scan_entries(rio__shard *s, const rio_loader_opts *o, rio_index *idx, rio_error *err)
{
	rio_reader_opts ro;
	rio_reader_opts_init(&ro);
	ro.verify_crc = o->verify_crc && o->on_damage == RIO_DAMAGE_FAIL;
	ro.on_damage = o->on_damage == RIO_DAMAGE_FAIL ? RIO_DAMAGE_FAIL : RIO_DAMAGE_SKIP;
	ro.max_record_size = o->max_record_size;
	memset(idx, 0, sizeof *idx);
	rio_reader *r;
	int rc = rio_reader_open(&r, s->path, &ro);
	if (rc < 0)
		return rio__error_set(err, rc, s->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	rio_record rec;
	uint64_t damaged = 0;
	int added = 0;
	for (;;) {
		rc = rio_reader_next(r, &rec);
		/* each damaged region skipped before this record (or before the
		 * end) stands for one frame, as the workers number them */
		for (; damaged < rio_reader_skipped(r) && added == 0; damaged++)
			added = rio_index_append(idx, rio_reader_error(r)->offset, 0);
		if (rc != 1 || (rc = added) < 0 ||
		    (rc = rio_index_append(idx, rec.offset, rec.size + RIO_FRAME_OVERHEAD)) < 0)
			break;
	}
	if (rc < 0 && s->comp != RIO_COMPRESSION_NONE && o->on_damage != RIO_DAMAGE_FAIL &&
	    rio_reader_stopped(r) && (rc <= RIO_ECORRUPT_LENGTH && rc >= RIO_ECOMPRESSED)) {
		/* SKIP: damage stops a compressed stream; the records before it
		 * are the shard's, and the damage one more (the worker that reads
		 * on to the end of the stream meets it) */
		rc = rio_index_append(idx, rio_reader_error(r)->offset, 0);
	}
	if (rc < 0) {
		if (rio_reader_error(r)->code == rc)
			*err = *rio_reader_error(r);
		else
			rio__error_set(err, rc, s->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
		rio_index_free(idx);
	}
	rio_reader_close(r);
	return rc < 0 ? rc : 0;
}

/* The entries index_plausible checks: the first, the last and about 64
 * between; of a remote shard, the first (in the bytes taken at open) and
 * the last: each one far from the others is a request, and 64 of them
 * cost a large shard's open far more than its .idx (8 shards of 32 MiB on
 * a busy SeaweedFS: open 4.7-7.3 s with 64, 0.6-1.5 s with 8, 0.16-0.5 s
 * with 3). The middle one went too: a store that keeps objects in chunks
 * reads a whole chunk for a few bytes (SeaweedFS: 16 GETs of 16 bytes in
 * the middle of 8 MiB chunks took 0.07-0.14 s, 16 of 8 MiB 0.10-0.18 s,
 * curl on loopback), so it cost a quarter of a 256 MiB set's reading; the
 * last header sits in the object's last chunk, which the end == size check
 * pins down too, and every record's header and CRC is checked as read */
#define PLAUSIBLE_MAX 68
#define PLAUSIBLE_STEPS 64
#define PLAUSIBLE_STEPS_REMOTE 1

/* 1 when what can be checked of an uncompressed shard without reading it
 * agrees with its index: its records end where the file ends, and the
 * header of the first, the last and about 64 entries between (none for
 * a remote shard) is valid and gives the entry's size. The headers are read
 * together where the source reads many at once (a remote shard: nearby
 * ones in one request, the requests in parallel, not a round trip each;
 * the first from the bytes taken at open). */
static int index_plausible(const rio__shard *s, const rio_index *idx, const rio_loader_opts *o)
{
	uint64_t n = idx->count;
	uint64_t end = n ? idx->offset[n - 1] + idx->framed_size[n - 1] : 0;
	if (end != s->src.size)
		return 0;
	int many = s->src.fd < 0 && s->src.ops->read_many;
	uint64_t step = n / (many ? PLAUSIBLE_STEPS_REMOTE : PLAUSIBLE_STEPS) + 1, at[PLAUSIBLE_MAX];
	size_t k = 0;
	for (uint64_t i = 0; i < n && k < PLAUSIBLE_MAX;
	     i = (i + step < n || i == n - 1) ? i + step : n - 1)
		at[k++] = i;
	uint8_t hdr[PLAUSIBLE_MAX][RIO_HEADER_SIZE];
	rio__io_req req[PLAUSIBLE_MAX];
	for (size_t j = 0; j < k; j++)
		req[j] = (rio__io_req){s->src.fd, idx->offset[at[j]], RIO_HEADER_SIZE, hdr[j], 0,
		                       &s->src};
	rio_error e;
	if (many) {
		if (s->src.ops->read_many(req, k, &e) < 0)
			return 0;
	} else {
		for (size_t j = 0; j < k; j++)
			req[j].result = s->src.ops->read_at(&s->src, hdr[j], RIO_HEADER_SIZE,
			                                    req[j].offset);
	}
	for (size_t j = 0; j < k; j++) {
		uint64_t len;
		if (req[j].result < 0 ||
		    rio__frame_head(hdr[j], (size_t)req[j].result, 1, o->max_record_size, &len) !=
		            RIO__FRAME_OK ||
		    rio__frame_size(len) != idx->framed_size[at[j]])
			return 0;
	}
	return 1;
}

/* Maps an uncompressed shard read-only where its source can; nothing for
 * the others. */
static int shard_map(rio__shard *s, rio_error *err)
{
	if (s->map || s->comp != RIO_COMPRESSION_NONE || s->src.size == 0 || !s->src.ops->map)
		return 0;
	int rc = s->src.ops->map(&s->src, err);
	if (rc < 0)
		return rc;
	s->map = s->src.map;
	s->map_len = (size_t)s->src.size;
	return 0;
}

/* 1 when a scan found the records the index lists: the same entries, a
 * damaged region standing where the index has a record (the shard was
 * damaged after its index was written). */
static int index_matches_scan(const rio_index *idx, const rio_index *scan)
{
	if (idx->count != scan->count)
		return 0;
	for (uint64_t i = 0; i < idx->count; i++)
		if (idx->offset[i] != scan->offset[i] ||
		    (scan->framed_size[i] && idx->framed_size[i] != scan->framed_size[i]))
			return 0;
	return 1;
}

static int shard_open(rio__shard *s, const rio__source_ctx *ctx, const rio_loader_opts *o,
                      rio_error *err)
{
	if (s->opened) /* while its .idx was read (sidecar_one) */
		return 0;
	int rc = rio__source_open(&s->src, s->path, ctx, err);
	if (rc < 0)
		return rc;
	uint8_t head[16];
	ssize_t n = s->src.ops->read_at(&s->src, head, sizeof head, 0);
	if (n < 0)
		return rio__error_set(err, (int)n, s->path, 0, RIO__UNKNOWN, NULL);
	s->comp = rio_compression_detect(head, (size_t)n);
	s->opened = s->comp != RIO_COMPRESSION_NONE;
	if (s->opened)
		return 0;
	/* what the epochs' routes may read uncompressed shards with (route.h):
	 * mappings for shuffled records (no read per record, and on the
	 * placed path no copy either: placed.c; MADV_NORMAL's fault-around
	 * maps the cached pages near each fault, ~16 at a time, far cheaper
	 * than MAP_POPULATE's whole files at open or MADV_RANDOM's fault per
	 * page: bench/loader.sh, doc/loader.md), unmapped again where nothing
	 * reads from them; O_DIRECT descriptors for reads in shard order */
	if (rio__route_maps(o) && (rc = shard_map(s, err)) < 0)
		return rc;
	int direct = rio__route_wants_direct(o);
	if (direct && s->src.ops->direct && (rc = s->src.ops->direct(&s->src, direct == 2, err)) < 0)
		return rc;
	s->opened = 1;
	return 0;
}

/* Counts a shard: through its .idx sidecar when it has one that agrees
 * with the shard, else by a scan. An .idx that cannot be read or disagrees
 * (a shard cut short or grown, a stale, partial or empty .idx) is never
 * used silently: under FAIL it is an error naming it; under SKIP the scan
 * replaces it, s->index_warning says why, and the records it lists beyond
 * what the shard holds are s->missing (counted as skipped every epoch:
 * delivered + skipped = the records by the file or by the index, whichever
 * is more). Compressed shards' indexes are checked as their streams are
 * read (piece_stream.c). */
static int shard_count(rio__shard *s, int full, const rio_loader_opts *o,
                       struct rio__remote *remote, rio_error *err)
{
	char *ipath = rio_index_path(s->path);
	if (!ipath)
		return -ENOMEM;
	rio_index idx = {0}, scan = {0};
	rio_error ierr;
	rio__error_clear(&ierr);
	int have_idx, idx_ok = 0, rc = 0;
	if (s->sidecar_read) { /* read already (sidecar_read) */
		have_idx = s->sidecar_read > 0;
		idx = s->sidecar;
		memset(&s->sidecar, 0, sizeof s->sidecar);
		s->sidecar_read = 0;
	} else if (rio_is_url(s->path)) {
		/* one GET through the loader's client says whether it is there */
		rc = rio__index_read_remote(remote, ipath, 1, &idx, &ierr);
		have_idx = rc != -ENOENT;
		if (!have_idx)
			rc = 0;
	} else if ((have_idx = rio__source_exists(ipath, NULL))) {
		rc = rio_index_read(ipath, &idx, &ierr);
	}
	if (have_idx) {
		if (rc < 0 && (o->on_damage == RIO_DAMAGE_FAIL || rc == -ENOMEM)) {
			*err = ierr;
			free(ipath);
			return rc;
		}
		/* a compressed shard's index is checked as its stream is read
		 * (piece_stream.c), but an empty one would give it no task */
		idx_ok = rc == 0 && (s->comp != RIO_COMPRESSION_NONE ? idx.count > 0 || s->src.size == 0
		                     : s->plausible           ? s->plausible > 0
		                                              : index_plausible(s, &idx, o));
	}
	if (!idx_ok) {
		rc = scan_entries(s, o, &scan, err);
		if (rc == 0 && have_idx && ierr.code == 0 && index_matches_scan(&idx, &scan)) {
			idx_ok = 1; /* damage in the shard, not in its index */
		} else if (rc == 0 && have_idx) {
			uint64_t n = idx.count, m = scan.count;
			if (ierr.code)
				snprintf(s->index_warning, sizeof s->index_warning,
				         "%s: rebuilt from the shard", ierr.message);
			else
				snprintf(s->index_warning, sizeof s->index_warning,
				         "%s: disagrees with its shard (%llu entries, the shard holds "
				         "%llu records): rebuilt from the shard",
				         ipath, (unsigned long long)n, (unsigned long long)m);
			if (o->on_damage == RIO_DAMAGE_FAIL)
				rc = rio__error_set(err, RIO_EBADINDEX, ipath, RIO__UNKNOWN, RIO__UNKNOWN,
				                    "disagrees with its shard (%llu entries, the shard "
				                    "holds %llu records): rebuild it with recordio-index",
				                    (unsigned long long)n, (unsigned long long)m);
			s->missing = n > m ? n - m : 0;
		}
	}
	free(ipath);
	if (rc < 0) {
		rio_index_free(&idx);
		rio_index_free(&scan);
		return rc;
	}
	rio_index *use = idx_ok ? &idx : &scan;
	rio_index_free(idx_ok ? &scan : &idx);
	s->count = use->count;
	s->data_end = s->comp == RIO_COMPRESSION_NONE ? s->src.size
	              : use->count ? use->offset[use->count - 1] + use->framed_size[use->count - 1]
	                           : 0;
	return adopt_index(s, use, full, err);
}

/* Opening the shards: where shards are remote (each open is a few round
 * trips), on as many threads as requests may be in flight, or with a
 * shard cache (an open may download the shard whole, RIO__SHARD_CACHE_PARTS
 * parts in flight) on as many as keep `inflight` parts in flight, at
 * least `workers`; else on the calling thread alone (local opens are
 * quick). */
typedef struct open_job {
	rio__dataset *ds;
	const rio_loader_opts *o;
} open_job;

static int open_threads(const rio__dataset *ds, const rio_loader_opts *o)
{
	if (!ds->sources.remote)
		return 1;
	if (!ds->sources.cache)
		return (int)o->remote.inflight;
	int downloads = (int)(o->remote.inflight / RIO__SHARD_CACHE_PARTS);
	return downloads > o->workers ? downloads : o->workers;
}

/* Counting every needed shard, on `workers` threads (reading thousands of
 * sidecars, or scanning shards that have none, is the slow part of open),
 * or on open_threads when every one is remote with its .idx read already,
 * this one among them. The error reported is that of the first failing
 * shard in order. */
typedef struct count_job {
	rio__dataset *ds;
	const rio_loader_opts *o;
	int full;
} count_job;

static int count_one(void *arg, size_t s, rio_error *e)
{
	count_job *j = arg;
	rio__shard *sh = &j->ds->shards[s];
	if (!sh->needed || sh->counted)
		return 0;
	int rc = shard_count(sh, j->full, j->o, j->ds->sources.remote, e);
	sh->counted = rc == 0;
	return rc;
}

static int count_all(rio__dataset *ds, int full, const rio_loader_opts *o, rio_error *err)
{
	count_job j = {ds, o, full};
	/* remote shards whose .idx is read already cost a request or two
	 * each (the check): on as many threads as they may be in flight; a
	 * shard to scan, on the workers */
	int threads = open_threads(ds, o) > o->workers ? open_threads(ds, o) : o->workers;
	for (size_t s = 0; s < ds->nshards && threads > o->workers; s++)
		if (ds->shards[s].needed && ds->shards[s].sidecar_read != 1)
			threads = o->workers;
	return rio__shards_run(ds->nshards, threads, 1, count_one, &j, err);
}

/* The .idx at `ipath` from the shard cache's copy of it, downloaded then
 * when missing, where the set's listing gave it (a run on a filled cache
 * then reads every .idx with no request): 0, or RIO__SHARD_CACHE_STREAM
 * where the network is to be asked (not listed, no cache, no room, or a
 * copy that did not parse: the GET then says what is wrong). */
static int sidecar_cached(const rio__dataset *ds, const char *ipath, rio_index *idx)
{
	rio__robj *o = NULL;
	rio_error e;
	int fd = -1;
	char *copy = NULL;
	if (!ds->sources.cache || !rio__remote_is_listed(ds->sources.remote, ipath) ||
	    rio__robj_open_listed(&o, ds->sources.remote, ipath, &e) < 0)
		return RIO__SHARD_CACHE_STREAM;
	int rc = rio__shard_cache_get(ds->sources.cache, o, 0, &fd, &copy, &e);
	if (rc == 0 && rio_index_read(copy, idx, &e) < 0) /* idx left empty */
		rc = RIO__SHARD_CACHE_STREAM;
	if (fd >= 0)
		close(fd);
	free(copy);
	rio__robj_close(o);
	return rc == 0 ? 0 : RIO__SHARD_CACHE_STREAM;
}

/* A remote shard's .idx, read (one GET, which says whether it is there)
 * for auto sharding's choice and kept for shard_count; where it is there,
 * the shard opened and the .idx checked against it (index_plausible) in
 * the same job, a round trip after the other, rather than in two more
 * rounds over every shard (open_one, count_one). Unless the shard may
 * turn out another rank's under files sharding and its open would
 * download it into the shard cache: then open_one opens it. An open that
 * fails here is left to open_one, which tells it if the shard is
 * needed. */
static int sidecar_one(void *arg, size_t s, rio_error *e)
{
	(void)e;
	open_job *j = arg;
	rio__shard *sh = &j->ds->shards[s];
	if (!rio_is_url(sh->path))
		return 0;
	char *ipath = rio_index_path(sh->path);
	if (!ipath)
		return rio__error_set(e, -ENOMEM, sh->path, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	rio_error ie;
	int got = sidecar_cached(j->ds, ipath, &sh->sidecar);
	if (got == RIO__SHARD_CACHE_STREAM)
		got = rio__index_read_remote(j->ds->sources.remote, ipath, 1, &sh->sidecar, &ie);
	free(ipath);
	/* another error: taken as there, shard_count reads it again and
	 * tells it */
	sh->sidecar_read = got == 0 ? 1 : got == -ENOENT ? -1 : 0;
	if (sh->sidecar_read != 1 || (j->ds->sources.cache && j->ds->world > 1))
		return 0;
	rio_error oe;
	if (shard_open(sh, &j->ds->sources, j->o, &oe) < 0) {
		rio__source_close(&sh->src);
		sh->src.fd = sh->src.fd_direct = -1;
		sh->opened = 0;
		return 0;
	}
	if (sh->comp == RIO_COMPRESSION_NONE)
		sh->plausible = index_plausible(sh, &sh->sidecar, j->o) ? 1 : -1;
	return 0;
}

static int open_one(void *arg, size_t s, rio_error *e)
{
	open_job *j = arg;
	rio__shard *sh = &j->ds->shards[s];
	return sh->needed ? shard_open(sh, &j->ds->sources, j->o, e) : 0;
}

/* ---- the rank's pieces ------------------------------------------------ */

static int add_piece(rio__piece **pieces, size_t *n, uint64_t *records, uint32_t shard,
                     uint64_t first, uint64_t count)
{
	rio__piece *p = realloc(*pieces, (*n + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	*pieces = p;
	p[(*n)++] = (rio__piece){shard, first, count, *records, 0, 0};
	*records += count;
	return 0;
}

int rio__pieces_for(const rio__dataset *ds, int rank, int world, rio__piece **pieces,
                    size_t *npieces, uint64_t *records)
{
	*pieces = NULL;
	*npieces = 0;
	*records = 0;
	int rc = 0;
	if (ds->sharding == RIO_SHARD_FILES) {
		for (size_t s = (size_t)rank; s < ds->nshards && rc == 0; s += (size_t)world)
			if (ds->shards[s].count)
				rc = add_piece(pieces, npieces, records, (uint32_t)s, 0,
				               ds->shards[s].count);
		return rc;
	}
	uint64_t n = 0, w = (uint64_t)world, r = (uint64_t)rank;
	for (size_t s = 0; s < ds->nshards; s++)
		n += ds->shards[s].count;
	uint64_t base = n / w, extra = n % w;
	uint64_t lo = r * base + (r < extra ? r : extra);
	uint64_t hi = lo + base + (r < extra ? 1 : 0);
	uint64_t start = 0;
	for (size_t s = 0; s < ds->nshards && rc == 0; s++) {
		uint64_t end = start + ds->shards[s].count;
		uint64_t a = lo > start ? lo : start, b = hi < end ? hi : end;
		if (a < b)
			rc = add_piece(pieces, npieces, records, (uint32_t)s, a - start, b - a);
		start = end;
	}
	return rc;
}

uint64_t rio__dataset_ident(const rio__dataset *ds, int rank, int world)
{
	uint64_t ident = 0;
	for (size_t s = 0; s < ds->nshards; s++)
		if (ds->sharding == RIO_SHARD_RECORDS || s % (size_t)world == (size_t)rank)
			ident = (ident ^ (ds->shards[s].count + 0x9e3779b97f4a7c15ull * (s + 1))) *
			        0x100000001b3ull;
	return ident;
}

/* opts.cache, once the rank's compressed shards are known to fit: the
 * shards of its pieces (those the placed path reads) counted again, with
 * every record's place. The first count kept only the sparse index, so
 * that a cache too small costs no index of every record of every shard
 * (records sharding counts them all). A count that changed since is an
 * error (the shard changed while the loader opened it). */
static int count_pieces_full(rio__dataset *ds, const rio_loader_opts *o, rio_error *err)
{
	uint64_t *was = calloc(ds->nshards ? ds->nshards : 1, sizeof *was);
	if (!was)
		return -ENOMEM;
	for (size_t i = 0; i < ds->npieces; i++) {
		rio__shard *sh = &ds->shards[ds->pieces[i].shard];
		if (!sh->counted)
			continue; /* a shard of two pieces */
		was[ds->pieces[i].shard] = sh->count;
		free(sh->ckpt);
		sh->ckpt = NULL;
		sh->counted = 0;
	}
	int rc = count_all(ds, 1, o, err);
	for (size_t s = 0; s < ds->nshards && rc == 0; s++)
		if (was[s] && ds->shards[s].count != was[s])
			rc = rio__error_set(err, RIO_EBADINDEX, ds->shards[s].path, RIO__UNKNOWN,
			                    RIO__UNKNOWN,
			                    "the shard changed while the loader opened it (%llu records, "
			                    "then %llu)",
			                    (unsigned long long)was[s],
			                    (unsigned long long)ds->shards[s].count);
	free(was);
	return rc;
}

/* Frees every record's place (kept for a cache that did not fit). */
static void drop_places(rio__dataset *ds)
{
	for (size_t s = 0; s < ds->nshards; s++) {
		free(ds->shards[s].offset);
		free(ds->shards[s].framed);
		ds->shards[s].offset = NULL;
		ds->shards[s].framed = NULL;
	}
}

/* Drops the shards' mappings (opts.map where nothing reads from them). A
 * decompressed copy (opts.cache) stays until close: an elastic resume
 * counts more shards while the epoch's threads may still read it. */
static void unmap_all(rio__dataset *ds)
{
	for (size_t s = 0; s < ds->nshards; s++)
		rio__shard_unmap(&ds->shards[s]);
}

int rio__dataset_open(rio__dataset *ds, const char *spec, const rio_loader_opts *o,
                      const struct rio__colplan *cols, rio_error *err)
{
	memset(ds, 0, sizeof *ds);
	/* S3 shards through a shard cache: the one client of every remote
	 * shard (source.h's context) lists the set and keeps each object's
	 * size and ETag, so that a shard whose copy is there opens with no
	 * request of its own (remote.h) */
	int rc = 0;
	if (o->shard_cache && strstr(spec, "s3://")) {
		if ((rc = rio__remote_open(&ds->sources.remote, &o->remote, err)) < 0)
			return rc;
		rio__remote_keep_listed(ds->sources.remote);
		rc = rio__shardset_expand_with(spec, &ds->set, ds->sources.remote, err);
	} else {
		rc = rio_shardset_expand_remote(spec, &ds->set, &o->remote, err);
	}
	if (rc < 0)
		return rc;
	ds->rank = o->rank;
	ds->world = o->world;
	if (ds->rank < 0 || ds->world < 0) {
		int r = 0, w = 1;
		rc = rio__rank_from_env(&r, &w);
		if (rc < 0)
			return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
			                      "the rank or world size in the environment is not a number");
		if (ds->rank < 0)
			ds->rank = r;
		if (ds->world < 0)
			ds->world = w;
	}
	if (ds->world < 1 || ds->rank >= ds->world)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "rank %d is not in a world of %d", ds->rank, ds->world);

	if ((rc = rio__remote_whole_mode(&ds->whole_mode, err)) < 0)
		return rc;
	ds->nshards = ds->set.count;
	ds->shards = calloc(ds->nshards, sizeof *ds->shards);
	if (!ds->shards)
		return -ENOMEM;
	if (o->shard_cache &&
	    (rc = rio__shard_cache_open(&ds->sources.cache, o->shard_cache, o->shard_cache_limit,
	                                err)) < 0)
		return rc;
	/* one client for every remote shard (source.h's context) */
	for (size_t s = 0; s < ds->nshards && !ds->sources.remote; s++)
		if (rio_is_url(ds->set.paths[s]) &&
		    (rc = rio__remote_open(&ds->sources.remote, &o->remote, err)) < 0)
			return rc;
	/* a lone rank in shard order reads each shard from its start: the
	 * shards' opens take their first parts (`inflight` of them at most),
	 * which the epoch's first parts are then served from (remote.h) */
	if (ds->sources.remote && !ds->sources.cache && ds->world == 1 &&
	    o->shuffle == RIO_SHUFFLE_NONE) {
		const rio_remote_opts *ro = rio__remote_opts(ds->sources.remote);
		rio__remote_first_parts(ds->sources.remote, (size_t)ro->part_size * ro->inflight);
	}
	/* auto sharding takes records when every shard has an .idx: a local
	 * one's asked until one has none; a URL's is read whole, with one GET
	 * that says whether it is there, and kept for shard_count (one
	 * request where a probe and a read were two) */
	int all_indexed = o->sharding == RIO_SHARD_AUTO;
	for (size_t s = 0; s < ds->nshards; s++) {
		rio__shard *sh = &ds->shards[s];
		sh->path = ds->set.paths[s];
		sh->src.fd = sh->src.fd_direct = -1;
	}
	/* the remote ones' all at once (a round trip each) */
	open_job j = {ds, o};
	if (all_indexed && ds->sources.remote &&
	    (rc = rio__shards_run(ds->nshards, open_threads(ds, o), 1, sidecar_one, &j, err)) < 0)
		return rc;
	for (size_t s = 0; s < ds->nshards && all_indexed; s++) {
		rio__shard *sh = &ds->shards[s];
		if (rio_is_url(sh->path)) {
			all_indexed = sh->sidecar_read != -1;
			continue;
		}
		char *ipath = rio_index_path(sh->path);
		if (!ipath)
			return -ENOMEM;
		all_indexed = rio__source_exists(ipath, &ds->sources);
		free(ipath);
	}
	ds->sharding = o->sharding;
	if (ds->sharding == RIO_SHARD_AUTO)
		ds->sharding = all_indexed || ds->nshards < (size_t)ds->world ? RIO_SHARD_RECORDS
		                                                               : RIO_SHARD_FILES;
	if (ds->sharding == RIO_SHARD_FILES && ds->nshards < (size_t)ds->world)
		return rio__error_set(err, -EINVAL, NULL, RIO__UNKNOWN, RIO__UNKNOWN,
		                      "files sharding gives each rank whole shards, and %zu shards "
		                      "cannot serve %d ranks: use records sharding",
		                      ds->nshards, ds->world);

	/* open and count what this rank needs: its own shards (files), or all
	 * of them (records: the split needs every count). Every record's place
	 * is kept for global shuffling, and for the placed path when all the
	 * shards are uncompressed. */
	int all_plain = 1, plain_shards = 0;
	for (size_t s = 0; s < ds->nshards; s++)
		ds->shards[s].needed = ds->sharding == RIO_SHARD_RECORDS ||
		                       s % (size_t)ds->world == (size_t)ds->rank;
	if ((rc = rio__shards_run(ds->nshards, open_threads(ds, o), 1, open_one, &j, err)) < 0)
		return rc;
	for (size_t s = 0; s < ds->nshards; s++) {
		const rio__shard *sh = &ds->shards[s];
		if (!sh->needed)
			continue;
		all_plain &= sh->comp == RIO_COMPRESSION_NONE;
		plain_shards |= sh->comp == RIO_COMPRESSION_NONE && sh->src.size > 0;
	}
	/* opts.cache is tried first where it may serve (route.h); else every
	 * record's place is kept where an epoch's route may need it */
	int cache = rio__route_tries_cache(o, all_plain, plain_shards, o->ncolumns > 0);
	ds->placed = !cache && all_plain && rio__route_keeps_places(o, 1);
	/* in shard order the files are mapped only for the cache, which
	 * serves plain shards and decompressed copies alike from memory */
	if (cache && rio__route_asked(o) == RIO_READ_MAP && o->shuffle == RIO_SHUFFLE_NONE)
		for (size_t s = 0; s < ds->nshards; s++)
			if (ds->shards[s].needed && (rc = shard_map(&ds->shards[s], err)) < 0)
				return rc;
	if (!ds->placed && !cache && o->shuffle != RIO_SHUFFLE_GLOBAL)
		unmap_all(ds); /* the pipeline reads in order, with reads */
	int full = o->shuffle == RIO_SHUFFLE_GLOBAL || ds->placed;
	for (size_t s = 0; s < ds->nshards; s++) {
		rio__shard *sh = &ds->shards[s];
		if (sh->needed && o->shuffle == RIO_SHUFFLE_GLOBAL && sh->comp != RIO_COMPRESSION_NONE)
			return rio__error_set(err, RIO_EUNSUPPORTED, sh->path, RIO__UNKNOWN,
			                      RIO__UNKNOWN,
			                      "global shuffling needs uncompressed shards (this one is %s); "
			                      "use buffer shuffling",
			                      rio_compression_name(sh->comp));
	}
	if ((rc = count_all(ds, full, o, err)) < 0)
		return rc;
	for (size_t s = 0; s < ds->nshards; s++)
		if (ds->shards[s].needed)
			ds->total_records += ds->shards[s].count;
	ds->ident = rio__dataset_ident(ds, ds->rank, ds->world);
	if ((rc = rio__pieces_for(ds, ds->rank, ds->world, &ds->pieces, &ds->npieces,
	                          &ds->rank_records)) < 0)
		return rc;
	if (cache) {
		/* the decompressed shards, as if mapped: the placed path serves
		 * them; else everything as without opts.cache */
		uint64_t need = rio__cache_need(ds, o->ncolumns > 0);
		if (need > 0 && need <= o->cache && (rc = count_pieces_full(ds, o, err)) < 0)
			return rc;
		ds->placed = need > 0 && need <= o->cache &&
		             rio__cache_load(ds, o, cols, &ds->cache_file_bytes);
		if (!ds->placed) {
			unmap_all(ds);
			drop_places(ds);
		}
	}
	return 0;
}

int rio__dataset_count_every_shard(rio__dataset *ds, const rio_loader_opts *o, rio_error *err)
{
	int all_plain = 1, more = 0, rc;
	for (size_t s = 0; s < ds->nshards; s++) {
		rio__shard *sh = &ds->shards[s];
		if (!sh->needed) {
			if ((rc = shard_open(sh, &ds->sources, o, err)) < 0)
				return rc;
			if (o->shuffle == RIO_SHUFFLE_GLOBAL && sh->comp != RIO_COMPRESSION_NONE)
				return rio__error_set(err, RIO_EUNSUPPORTED, sh->path, RIO__UNKNOWN,
				                      RIO__UNKNOWN,
				                      "global shuffling needs uncompressed shards (this one "
				                      "is %s); use buffer shuffling",
				                      rio_compression_name(sh->comp));
			sh->needed = more = 1;
		}
		/* a decompressed copy (opts.cache) is read as a mapped shard is;
		 * with one, a shard that joins unmapped is read by the pipeline */
		all_plain &= sh->comp == RIO_COMPRESSION_NONE || rio__shard_cached(sh);
		if (ds->cache_bytes && sh->comp == RIO_COMPRESSION_NONE && !sh->map &&
		    !rio__shard_cached(sh) && sh->src.size)
			all_plain = 0;
	}
	if (!more)
		return 0;
	/* the placed path needs every record's place in every shard it reads;
	 * a compressed shard that joins leaves it to the pipeline */
	int full = o->shuffle == RIO_SHUFFLE_GLOBAL || (ds->placed && all_plain);
	if (!all_plain)
		ds->placed = 0;
	if (!ds->placed && o->shuffle != RIO_SHUFFLE_GLOBAL)
		unmap_all(ds);
	return count_all(ds, full, o, err);
}

void rio__dataset_close(rio__dataset *ds)
{
	for (size_t s = 0; s < ds->nshards; s++) {
		rio__shard *sh = &ds->shards[s];
		rio__source_close(&sh->src);
		free(sh->cache);
		rio__rowpack_free(sh->rows);
		free(sh->ckpt);
		free(sh->offset);
		free(sh->framed);
		rio_index_free(&sh->sidecar);
	}
	free(ds->shards);
	free(ds->pieces);
	rio_shardset_free(&ds->set);
	rio__shard_cache_close(ds->sources.cache);
	rio__remote_close(ds->sources.remote); /* after every source using it */
	memset(ds, 0, sizeof *ds);
}

/* A remote shard with no local copy (the shard cache's): its bytes come
 * over the network. */
static int remote_uncached(const rio__shard *sh)
{
	return sh->src.ops == &rio__source_remote && sh->src.fd < 0;
}

/* A shard read this epoch is resident when this share of it is in the
 * page cache: then reading it costs no device time worth waiting for. */
#define RIO__RESIDENT 0.9

void rio__dataset_case(const rio__dataset *ds, int look, rio__case *c)
{
	c->plain = ds->placed;
	c->cached = ds->cache_bytes > 0;
	c->mappable = c->direct = c->resident = 1;
	c->remote_shards = c->remote_bytes = c->remote_records = c->records = 0;
	c->whole_mode = ds->whole_mode;
	uint32_t last = UINT32_MAX;
	for (size_t i = 0; i < ds->npieces; i++) {
		const rio__shard *sh = &ds->shards[ds->pieces[i].shard];
		int remote = remote_uncached(sh);
		c->records += ds->pieces[i].count;
		c->remote_records += remote ? ds->pieces[i].count : 0;
		if (ds->pieces[i].shard == last || sh->comp != RIO_COMPRESSION_NONE)
			continue;
		last = ds->pieces[i].shard;
		c->remote_shards += remote;
		c->remote_bytes += remote ? sh->src.size : 0;
		c->mappable &= sh->map != NULL || sh->src.size == 0 || sh->src.ops->map != NULL;
		c->direct &= sh->src.fd_direct >= 0;
		if (look && c->resident)
			c->resident = sh->src.ops->resident &&
			              sh->src.ops->resident(&sh->src) >= RIO__RESIDENT;
	}
	c->resident &= look;
}

typedef struct map_job {
	rio__dataset *ds;
	const unsigned char *want; /* the shards of the rank's pieces */
} map_job;

static int map_one(void *arg, size_t s, rio_error *e)
{
	map_job *j = arg;
	return j->want[s] ? shard_map(&j->ds->shards[s], e) : 0;
}

/* Remote shards are fetched whole to be mapped (remote_whole.h): on as
 * many threads as requests may be in flight, so that small shards keep
 * the client's `inflight` busy too. A failure unmaps them again: the
 * epoch reads another way (epoch.c), and their spills go. */
int rio__dataset_map(rio__dataset *ds, rio_error *err)
{
	unsigned char *want = calloc(ds->nshards ? ds->nshards : 1, 1);
	if (!want)
		return rio__error_set(err, -ENOMEM, NULL, RIO__UNKNOWN, RIO__UNKNOWN, NULL);
	uint64_t fetch = 0; /* the bytes of the remote shards to fetch whole */
	for (size_t i = 0; i < ds->npieces; i++) {
		const rio__shard *sh = &ds->shards[ds->pieces[i].shard];
		if (!want[ds->pieces[i].shard] && remote_uncached(sh) && !sh->map)
			fetch += sh->src.size;
		want[ds->pieces[i].shard] = 1;
	}
	map_job j = {ds, want};
	int threads = ds->sources.remote ? (int)rio__remote_opts(ds->sources.remote)->inflight : 1;
	int rc = fetch ? rio__remote_whole_room(fetch, NULL, err) : 0; /* none, rather than some */
	if (rc == 0)
		rc = rio__shards_run(ds->nshards, threads, 1, map_one, &j, err);
	for (size_t s = 0; s < ds->nshards && rc < 0; s++)
		if (want[s] && ds->shards[s].src.ops == &rio__source_remote)
			rio__shard_unmap(&ds->shards[s]);
	free(want);
	return rc;
}

void rio__dataset_locate(const rio__dataset *ds, uint64_t ordinal, uint32_t *piece,
                         uint32_t *shard, uint64_t *record)
{
	size_t lo = 0, hi = ds->npieces; /* the last piece with rank_start <= ordinal */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (ds->pieces[mid].rank_start <= ordinal)
			lo = mid;
		else
			hi = mid;
	}
	const rio__piece *p = &ds->pieces[lo];
	*piece = (uint32_t)lo;
	*shard = p->shard;
	*record = p->first + (ordinal - p->rank_start);
}

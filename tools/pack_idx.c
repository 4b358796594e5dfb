/*
 * pack_idx.c — recordio-pack --from idx: IDX image and label files (MNIST,
 * Fashion-MNIST) to tf.train.Example records {image: bytes, label: int64}.
 *
 * IDX is big-endian: two zero bytes, a type byte (0x08 = unsigned byte), a
 * dimension count, then one u32 per dimension and the data. Images are
 * 0x00000803 (count, rows, cols); any u8 file of 2 or more dimensions is
 * taken, an image being the product of all but the first. Labels are
 * 0x00000801 (count). zlib's gzread reads gzip and plain files alike; the
 * labels (one byte each) are read whole, the images one at a time.
 */
#include "config.h"
#include "common.h"
#include "pack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct idx_source {
	pack_source base;
	const char *images_path, *labels_path;
	gzFile images;
	uint64_t count, item; /* images, bytes per image */
	uint64_t header;      /* bytes before the first image */
	uint64_t next_i;
	uint8_t *labels;      /* count bytes */
	uint8_t *pixels;      /* one image */
	rio_example_builder b;
} idx_source;

/* Reads exactly `size` bytes; 0, or -1 after reporting a short read (at
 * `offset` of the uncompressed stream, reading `what`; when `what` is NULL
 * the caller reports it, gzeof() telling it apart) or a gzip error. */
static int read_full(gzFile f, const char *path, void *buf, uint64_t size, uint64_t offset,
                     const char *what)
{
	uint8_t *p = buf;
	while (size > 0) {
		unsigned chunk = size > (1u << 30) ? 1u << 30 : (unsigned)size;
		int n = gzread(f, p, chunk);
		if (n < 0) {
			int zerr;
			const char *msg = gzerror(f, &zerr);
			tool_error("%s: offset %llu: %s", path, (unsigned long long)offset,
			           zerr == Z_ERRNO ? strerror(errno) : msg);
			return -1;
		}
		if (n == 0) {
			if (!what)
				return -1;
			tool_error("%s: offset %llu: truncated file (reading %s)", path,
			           (unsigned long long)offset, what);
			return -1;
		}
		p += n;
		size -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

static gzFile open_gz(const char *path)
{
	errno = 0;
	gzFile f = gzopen(path, "rb");
	if (!f) {
		tool_error("%s: %s", path, errno ? strerror(errno) : "cannot open");
		return NULL;
	}
	gzbuffer(f, 1 << 18);
	return f;
}

/* Reads an IDX header of unsigned bytes with `min_dims` to 4 dimensions:
 * the first dimension in *count, the product of the others in *item. */
static int read_header(gzFile f, const char *path, int min_dims, int max_dims, uint32_t want_magic,
                       uint64_t *count, uint64_t *item, uint64_t *header)
{
	uint8_t h[4], d[4 * 4];
	if (read_full(f, path, h, 4, 0, "the IDX header") < 0)
		return -1;
	uint32_t magic = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	if (h[0] || h[1] || h[2] != 0x08 || h[3] < min_dims || h[3] > max_dims) {
		tool_error("%s: offset 0: not an IDX file of unsigned bytes with %s (magic 0x%08x, "
		           "expected 0x%08x)",
		           path, min_dims == 1 ? "one dimension" : "images", magic, want_magic);
		return -1;
	}
	int nd = h[3];
	if (read_full(f, path, d, 4 * (uint64_t)nd, 4, "the IDX dimensions") < 0)
		return -1;
	*item = 1;
	for (int i = 0; i < nd; i++) {
		uint64_t v = (uint64_t)d[4 * i] << 24 | (uint64_t)d[4 * i + 1] << 16 |
		             (uint64_t)d[4 * i + 2] << 8 | d[4 * i + 3];
		if (i == 0)
			*count = v;
		else
			*item *= v;
	}
	if (nd > 1 && (*item == 0 || *item > RIO_DEFAULT_MAX_RECORD / 2)) {
		tool_error("%s: offset 4: unusable image size of %llu bytes", path,
		           (unsigned long long)*item);
		return -1;
	}
	*header = 4 + 4 * (uint64_t)nd;
	return 0;
}

static int idx_next(pack_source *base, const uint8_t **data, size_t *size)
{
	idx_source *s = (idx_source *)base;
	if (s->next_i == s->count)
		return 0;
	uint64_t i = s->next_i;
	if (read_full(s->images, s->images_path, s->pixels, s->item, s->header + i * s->item,
	              NULL) < 0) {
		if (!gzeof(s->images))
			return -1;
		tool_error("%s: offset %llu: truncated file (image %llu of %llu)", s->images_path,
		           (unsigned long long)(s->header + i * s->item), (unsigned long long)i + 1,
		           (unsigned long long)s->count);
		return -1;
	}
	int64_t label = s->labels[i];
	rio_example_builder_reset(&s->b);
	rio_example_add_bytes(&s->b, "image", s->pixels, s->item);
	rio_example_add_int64s(&s->b, "label", &label, 1);
	if (rio_example_finish(&s->b, data, size) < 0) {
		tool_error("out of memory");
		return -1;
	}
	if (!pack_record_fits(&s->base, *size, "%s: image %llu", s->images_path,
	                      (unsigned long long)i + 1))
		return -1;
	s->next_i++;
	return 1;
}

static void idx_close(pack_source *base)
{
	idx_source *s = (idx_source *)base;
	if (s->images)
		gzclose(s->images);
	free(s->labels);
	free(s->pixels);
	rio_example_builder_free(&s->b);
	free(s);
}

int pack_idx_open(pack_source **out, const pack_args *a)
{
	*out = NULL;
	idx_source *s = pack_source_new(sizeof *s, idx_next, NULL, idx_close);
	if (!s)
		return -1;
	s->images_path = a->images;
	s->labels_path = a->labels;
	s->base.max_record_size = a->max_record_size;
	rio_example_builder_init(&s->b);

	uint64_t nlabels = 0, one = 0, lheader = 0;
	gzFile lf = open_gz(a->labels);
	if (!lf)
		goto fail;
	if (read_header(lf, a->labels, 1, 1, 0x00000801, &nlabels, &one, &lheader) < 0) {
		gzclose(lf);
		goto fail;
	}
	if (!(s->images = open_gz(a->images)) ||
	    read_header(s->images, a->images, 2, 4, 0x00000803, &s->count, &s->item, &s->header) < 0) {
		gzclose(lf);
		goto fail;
	}
	if (s->count != nlabels) {
		tool_error("%s has %llu images but %s has %llu labels", a->images,
		           (unsigned long long)s->count, a->labels, (unsigned long long)nlabels);
		gzclose(lf);
		goto fail;
	}
	s->labels = malloc(nlabels ? nlabels : 1);
	s->pixels = malloc(s->item);
	if (!s->labels || !s->pixels) {
		tool_error("out of memory");
		gzclose(lf);
		goto fail;
	}
	int rc = read_full(lf, a->labels, s->labels, nlabels, lheader, "the labels");
	gzclose(lf);
	if (rc < 0)
		goto fail;
	s->base.total = s->count;
	*out = &s->base;
	return 0;
fail:
	idx_close(&s->base);
	return -1;
}

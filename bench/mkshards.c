/*
 * mkshards.c — benchmark data: COUNT records of SIZE bytes each, their bytes
 * taken in turn from a source file (e.g. Fashion-MNIST pixels, for realistic
 * compressibility), written as NSHARDS uncompressed shards PREFIX-i.tfrecord.
 * A bench-only helper (not installed): pack's own modes cannot cut a binary
 * file into fixed-size records.
 *
 * Usage: mkshards SOURCE SIZE COUNT NSHARDS PREFIX
 */
#include "recordio.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: mkshards SOURCE SIZE COUNT NSHARDS PREFIX\n");
		return 2;
	}
	size_t size = strtoull(argv[2], NULL, 10);
	unsigned long long count = strtoull(argv[3], NULL, 10);
	unsigned shards = (unsigned)strtoul(argv[4], NULL, 10);
	gzFile in = gzopen(argv[1], "rb"); /* reads plain files too */
	if (!in || !size || !shards) {
		fprintf(stderr, "mkshards: cannot read %s\n", argv[1]);
		return 1;
	}
	size_t cap = 64u << 20, have = 0;
	unsigned char *src = malloc(cap), *rec = malloc(size);
	int n;
	while (have < cap && (n = gzread(in, src + have, (unsigned)(cap - have))) > 0)
		have += (size_t)n;
	gzclose(in);
	if (have < size) {
		fprintf(stderr, "mkshards: %s is smaller than one record\n", argv[1]);
		return 1;
	}
	size_t pos = 0;
	for (unsigned s = 0; s < shards; s++) {
		char path[4096];
		snprintf(path, sizeof path, "%s-%05u-of-%05u.tfrecord", argv[5], s, shards);
		rio_writer *w;
		if (rio_writer_open(&w, path, NULL)) {
			fprintf(stderr, "mkshards: cannot write %s\n", path);
			return 1;
		}
		unsigned long long mine = count / shards + (s < count % shards);
		for (unsigned long long i = 0; i < mine; i++) {
			for (size_t k = 0; k < size; k++) {
				rec[k] = src[pos++];
				if (pos == have)
					pos = 0;
			}
			if (rio_writer_write(w, rec, size, NULL)) {
				fprintf(stderr, "mkshards: %s\n", rio_writer_error(w)->message);
				return 1;
			}
		}
		if (rio_writer_close(w)) {
			fprintf(stderr, "mkshards: cannot finish %s\n", path);
			return 1;
		}
	}
	free(src);
	free(rec);
	return 0;
}

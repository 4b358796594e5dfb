/*
 * testutil.c — see testutil.h.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

const char *tu_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof tmpdir, "%s/rio-test-XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(99);
		}
	}
	return tmpdir;
}

const char *tu_path(const char *name)
{
	static char bufs[8][512];
	static int slot;
	char *b = bufs[slot++ & 7];
	snprintf(b, 512, "%s/%s", tu_tmpdir(), name);
	return b;
}

void tu_write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(99);
	}
}

uint8_t *tu_read_file(const char *path, size_t *size)
{
	*size = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = n < 0 ? NULL : malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

int tu_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int tu_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

const char *tu_testdata(const char *name)
{
	static char bufs[4][1024];
	static int slot;
	const char *dir = getenv("RIO_TESTDATA");
	struct stat st;
	if (!dir || stat(dir, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	char *b = bufs[slot++ & 3];
	snprintf(b, 1024, "%s/%s", dir, name);
	return b;
}

int tu_next_frame(const uint8_t *buf, size_t size, size_t *off, const uint8_t **data,
                  size_t *len)
{
	if (*off == size)
		return 0;
	if (size - *off < RIO_FRAME_OVERHEAD)
		return -1;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | buf[*off + (size_t)i];
	if (n > size - *off - RIO_FRAME_OVERHEAD)
		return -1;
	*data = buf + *off + RIO_HEADER_SIZE;
	*len = (size_t)n;
	*off += (size_t)n + RIO_FRAME_OVERHEAD;
	return 1;
}

void tu_fill_random(void *buf, size_t size, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < size; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* Record contents: random bytes, or (text) a compressible mix of few letters
 * with random stretches. */
static void fill_record(uint8_t *p, size_t size, uint64_t seed, int text)
{
	tu_fill_random(p, size, seed);
	if (!text)
		return;
	for (size_t i = 0; i < size; i++)
		if ((i / 64) % 4 != 3)
			p[i] = (uint8_t)("abcdefgh \n"[p[i] % 10]);
}

void tu_shard_make(tu_shard *s, const char *path, rio_compression comp, const size_t *sizes,
                   size_t n, uint64_t seed, int text)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	s->data = calloc(n ? n : 1, sizeof *s->data);
	s->size = calloc(n ? n : 1, sizeof *s->size);
	s->off = calloc(n ? n : 1, sizeof *s->off);
	CU_ASSERT_FATAL(s->data && s->size && s->off);
	rio_writer_opts wo;
	rio_writer_opts_init(&wo);
	wo.compression = comp;
	rio_writer *w;
	CU_ASSERT_EQUAL_FATAL(rio_writer_open(&w, path, &wo), 0);
	for (size_t i = 0; i < n; i++) {
		s->size[i] = sizes[i];
		s->data[i] = malloc(sizes[i] + 1);
		CU_ASSERT_FATAL(s->data[i] != NULL);
		fill_record(s->data[i], sizes[i], seed * 1000003u + i, text);
		CU_ASSERT_EQUAL_FATAL(rio_writer_write(w, s->data[i], sizes[i], &s->off[i]), 0);
	}
	s->end = rio_writer_bytes(w);
	CU_ASSERT_EQUAL_FATAL(rio_writer_records(w), n);
	CU_ASSERT_EQUAL_FATAL(rio_writer_close(w), 0);
	s->file = tu_read_file(path, &s->file_size);
	CU_ASSERT_FATAL(s->file != NULL);
}

void tu_shard_free(tu_shard *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->data[i]);
	free(s->data);
	free(s->size);
	free(s->off);
	free(s->file);
	memset(s, 0, sizeof *s);
}

int tu_record_is(const rio_record *rec, const tu_shard *s, size_t i, uint64_t index)
{
	return i < s->n && rec->index == index && rec->offset == s->off[i] &&
	       rec->size == s->size[i] && memcmp(rec->data, s->data[i], s->size[i]) == 0;
}

static void remove_tree(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

int tu_run(const char *program, const tu_suite *suites)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	for (const tu_suite *s = suites; s->name; s++) {
		CU_pSuite suite = CU_add_suite(s->name, NULL, NULL);
		if (!suite)
			return 99;
		for (const tu_test *t = s->tests; t->name; t++)
			if (!CU_add_test(suite, t->name, t->fn))
				return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	unsigned ran = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	printf("\n%s: %u tests run, %s\n", program, ran, failed ? "FAILED" : "all passed");
	if (!failed && tmpdir[0])
		remove_tree(tmpdir);
	else if (tmpdir[0])
		printf("scratch files kept in %s\n", tmpdir);
	return failed || ran == 0 ? 1 : 0;
}

int tu_main(int argc, char **argv, const tu_suite *suites)
{
	if (argc < 2)
		return tu_run(argv[0], suites);
	static tu_test picked[256][2];
	static tu_suite some[257];
	size_t n = 0;
	for (const tu_suite *su = suites; su->name; su++)
		for (const tu_test *t = su->tests; t->name; t++)
			if (strstr(t->name, argv[1]) && n < 256) {
				picked[n][0] = *t;
				some[n] = (tu_suite){su->name, picked[n]};
				n++;
			}
	return tu_run(argv[0], some);
}

/*
 * test_loader_cuda.c — the loader's GPU path: pinned batch memory and the
 * asynchronous copy of each batch's columns to the device.
 *
 * Built only with --with-cuda; exits 77 (skip) when no CUDA device can be
 * used. With a device it checks that column memory is pinned (the driver
 * says so), that every batch's device columns hold exactly the host values
 * the moment the batch is handed out, and that raw batches and bad device
 * numbers are handled.
 */
#include "loader.h"
#include "testutil.h"

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_RECORDS 1000
#define IMAGE 784

/* A shard of Examples: image bytes[784] (pixel = (i * 7 + j) & 255) and
 * label int64 i % 10. */
static const char *make_shard(void)
{
	static char path[4096];
	if (path[0])
		return path;
	snprintf(path, sizeof path, "%s", tu_path("cuda.tfrecord"));
	rio_writer *w;
	CU_ASSERT_FATAL(rio_writer_open(&w, path, NULL) == 0);
	rio_index idx = {0};
	rio_example_builder b;
	rio_example_builder_init(&b);
	uint8_t image[IMAGE];
	for (int i = 0; i < N_RECORDS; i++) {
		for (int j = 0; j < IMAGE; j++)
			image[j] = (uint8_t)((i * 7 + j) & 255);
		int64_t label = i % 10;
		rio_example_builder_reset(&b);
		rio_example_add_bytes(&b, "image", image, IMAGE);
		rio_example_add_int64s(&b, "label", &label, 1);
		const uint8_t *data;
		size_t size;
		CU_ASSERT_FATAL(rio_example_finish(&b, &data, &size) == 0);
		uint64_t off;
		CU_ASSERT_FATAL(rio_writer_write(w, data, size, &off) == 0);
		CU_ASSERT_FATAL(rio_index_append(&idx, off, size + RIO_FRAME_OVERHEAD) == 0);
	}
	rio_example_builder_free(&b);
	CU_ASSERT_FATAL(rio_writer_close(w) == 0);
	char *ipath = rio_index_path(path);
	CU_ASSERT_FATAL(rio_index_write(ipath, &idx, NULL) == 0);
	free(ipath);
	rio_index_free(&idx);
	return path;
}

static void test_device_columns_match_host(void)
{
	rio_column_spec *spec;
	size_t ncols;
	CU_ASSERT_FATAL(rio_column_spec_parse("image:f32:784:0.00392157,label:i64:1", &spec, &ncols,
	                                      NULL) == 0);
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	o.rank = 0;
	o.world = 1;
	o.batch_size = 64;
	o.shuffle = RIO_SHUFFLE_GLOBAL;
	o.seed = 7;
	o.columns = spec;
	o.ncolumns = ncols;
	o.device_copy = 1;
	rio_loader *l;
	int rc = rio_loader_open(&l, make_shard(), &o);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	float *img = malloc(64 * IMAGE * sizeof *img);
	int64_t lab[64];
	rio_batch *bt;
	uint64_t seen = 0;
	int pinned_checked = 0;
	while ((rc = rio_loader_next(l, &bt)) == 1) {
		const rio_batch_column *ci = &bt->columns[0], *cl = &bt->columns[1];
		CU_ASSERT_PTR_NOT_NULL_FATAL(ci->device);
		if (!pinned_checked) {
			struct cudaPointerAttributes a;
			CU_ASSERT_EQUAL(cudaPointerGetAttributes(&a, ci->host), cudaSuccess);
			CU_ASSERT_EQUAL(a.type, cudaMemoryTypeHost);
			CU_ASSERT_EQUAL(cudaPointerGetAttributes(&a, ci->device), cudaSuccess);
			CU_ASSERT_EQUAL(a.type, cudaMemoryTypeDevice);
			pinned_checked = 1;
		}
		/* a plain copy on the legacy stream, no synchronisation with the
		 * loader's stream: the data must already be there */
		CU_ASSERT_EQUAL(cudaMemcpy(img, ci->device, bt->count * IMAGE * sizeof(float),
		                           cudaMemcpyDeviceToHost),
		                cudaSuccess);
		CU_ASSERT_EQUAL(cudaMemcpy(lab, cl->device, bt->count * sizeof(int64_t),
		                           cudaMemcpyDeviceToHost),
		                cudaSuccess);
		for (size_t r = 0; r < bt->count; r++) {
			uint64_t i = bt->records[r].index;
			CU_ASSERT_EQUAL(lab[r], (int64_t)(i % 10));
			for (int j = 0; j < IMAGE; j += 97)
				CU_ASSERT_DOUBLE_EQUAL(img[r * IMAGE + j], ((i * 7 + j) & 255) * 0.00392157f,
				                       1e-6);
			CU_ASSERT_EQUAL(memcmp(&img[r * IMAGE], (float *)ci->host + r * IMAGE,
			                       IMAGE * sizeof(float)),
			                0);
		}
		seen += bt->count;
		rio_loader_release(l, bt);
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(seen, N_RECORDS);
	free(img);
	rio_loader_close(l);
	free(spec);
}

/* Options for a loader of the label column alone (free *spec after). */
static void label_opts(rio_loader_opts *o, rio_column_spec **spec)
{
	size_t ncols;
	CU_ASSERT_FATAL(rio_column_spec_parse("label:i64:1", spec, &ncols, NULL) == 0);
	rio_loader_opts_init(o);
	o->rank = 0;
	o->world = 1;
	o->columns = *spec;
	o->ncolumns = ncols;
}

static void test_pinned_only_and_bad_device(void)
{
	rio_column_spec *spec;
	rio_loader_opts o;
	label_opts(&o, &spec);
	o.pinned = 1;
	rio_loader *l;
	CU_ASSERT_EQUAL_FATAL(rio_loader_open(&l, make_shard(), &o), 0);
	rio_batch *bt;
	CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &bt), 1);
	CU_ASSERT_PTR_NULL(bt->columns[0].device);
	struct cudaPointerAttributes a;
	CU_ASSERT_EQUAL(cudaPointerGetAttributes(&a, bt->columns[0].host), cudaSuccess);
	CU_ASSERT_EQUAL(a.type, cudaMemoryTypeHost);
	rio_loader_release(l, bt);
	rio_loader_close(l);

	o.device_copy = 1;
	o.device = 9999;
	CU_ASSERT_EQUAL(rio_loader_open(&l, make_shard(), &o), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(rio_loader_error(l)->message, "9999"));
	rio_loader_close(l);
	free(spec);
}

/* The loader's device is its own: opening a loader on device 0 leaves the
 * caller's current device as it was (checked where there are two). */
static void test_caller_device_kept(void)
{
	int n = 0;
	CU_ASSERT_EQUAL_FATAL(cudaGetDeviceCount(&n), cudaSuccess);
	int mine = n > 1 ? 1 : 0;
	CU_ASSERT_EQUAL_FATAL(cudaSetDevice(mine), cudaSuccess);
	rio_column_spec *spec;
	rio_loader_opts o;
	label_opts(&o, &spec);
	o.device_copy = 1;
	o.device = 0;
	rio_loader *l;
	CU_ASSERT_EQUAL_FATAL(rio_loader_open(&l, make_shard(), &o), 0);
	int now = -1;
	CU_ASSERT_EQUAL(cudaGetDevice(&now), cudaSuccess);
	CU_ASSERT_EQUAL(now, mine);
	rio_batch *bt;
	CU_ASSERT_EQUAL_FATAL(rio_loader_next(l, &bt), 1);
	struct cudaPointerAttributes a;
	CU_ASSERT_EQUAL(cudaPointerGetAttributes(&a, bt->columns[0].device), cudaSuccess);
	CU_ASSERT_EQUAL(a.device, 0);
	CU_ASSERT_EQUAL(cudaGetDevice(&now), cudaSuccess);
	CU_ASSERT_EQUAL(now, mine);
	rio_loader_release(l, bt);
	rio_loader_close(l);
	free(spec);
	cudaSetDevice(0);
}

static const tu_test cuda_tests[] = {
	{"the caller's current device is left as it was", test_caller_device_kept},
	{"device columns equal host columns when handed out", test_device_columns_match_host},
	{"pinned only; a bad device number", test_pinned_only_and_bad_device},
	{NULL, NULL},
};
static const tu_suite suites[] = {{"loader on CUDA", cuda_tests}, {NULL, NULL}};

int main(int argc, char **argv)
{
	(void)argc;
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("%s: no CUDA device: skipped\n", argv[0]);
		return 77;
	}
	return tu_run(argv[0], suites);
}

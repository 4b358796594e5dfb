/*
 * cuda.c — the CUDA runtime calls the batch pool uses (pinned host memory,
 * device buffers, one stream, events). Built only with --with-cuda; errors
 * come back as negative codes, never printed.
 */
#include "config.h"
#include "pool.h"

#include <cuda_runtime.h>
#include <errno.h>

static int check(cudaError_t e)
{
	if (e == cudaSuccess)
		return 0;
	return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

int rio__cuda_init(int device, void **stream, int *caller_device)
{
	*stream = NULL;
	*caller_device = -1;
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		return -ENODEV;
	if (device < 0 || device >= n)
		return -ENODEV;
	if (cudaGetDevice(caller_device) != cudaSuccess)
		*caller_device = -1;
	int rc = check(cudaSetDevice(device));
	if (rc < 0)
		return rc;
	cudaStream_t s;
	rc = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (rc == 0)
		*stream = s;
	return rc;
}

int rio__cuda_set_device(int device)
{
	return device < 0 ? 0 : check(cudaSetDevice(device));
}

void rio__cuda_fini(void *stream)
{
	if (stream)
		cudaStreamDestroy((cudaStream_t)stream);
}

int rio__cuda_host_alloc(void **p, size_t size)
{
	return check(cudaHostAlloc(p, size ? size : 1, cudaHostAllocPortable));
}

void rio__cuda_host_free(void *p)
{
	if (p)
		cudaFreeHost(p);
}

int rio__cuda_device_alloc(void **p, size_t size)
{
	return check(cudaMalloc(p, size ? size : 1));
}

void rio__cuda_device_free(void *p)
{
	if (p)
		cudaFree(p);
}

int rio__cuda_event_create(void **ev)
{
	cudaEvent_t e;
	int rc = check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	*ev = rc == 0 ? (void *)e : NULL;
	return rc;
}

void rio__cuda_event_destroy(void *ev)
{
	if (ev)
		cudaEventDestroy((cudaEvent_t)ev);
}

int rio__cuda_copy_async(void *dst, const void *src, size_t size, void *stream)
{
	return check(cudaMemcpyAsync(dst, src, size, cudaMemcpyHostToDevice, (cudaStream_t)stream));
}

int rio__cuda_record_and_wait(void *ev, void *stream)
{
	int rc = check(cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream));
	return rc < 0 ? rc : check(cudaEventSynchronize((cudaEvent_t)ev));
}

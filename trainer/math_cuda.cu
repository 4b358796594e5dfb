/*
 * math_cuda.cu — the CUDA backend of backend.h: cuBLAS SGEMM and a few small
 * kernels, all queued on one non-blocking stream so that the model's step
 * runs in order without the host waiting. Full FP32 throughout (no TF32),
 * so results match the CPU backend within float rounding; --precision bf16's
 * GEMMs are cublasGemmEx with bf16 operands and fp32 accumulation. GEMM time is
 * measured with a ring of event pairs around each call, read back once the
 * events have completed, so timing never stalls the stream.
 */
#include "math_cuda.h"
#include "../lib/half.h"
#include "cublas_dl.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cerrno>
#include <climits>
#include <cmath> /* not <math.h>: with -I trainer that names our backend.h */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define RING 64          /* GEMM event pairs in flight before the oldest is waited for */
#define THREADS 256      /* threads per block of the elementwise kernels */
#define WARPS (THREADS / 32)

struct tr_cuda {
	int gpu;
	int sms; /* multiprocessors: caps the grid of grid-stride kernels */
	cudaStream_t stream;
	tr_cublas cb; /* cuBLAS's functions (cublas_dl.h) */
	cublasHandle_t blas;
	cudaEvent_t ev[RING][2]; /* start, end of each timed GEMM */
	int head, pending;       /* pairs in flight: ev[head .. head + pending) */
	double gemm_seconds;
	cudaError_t failed; /* first failure of a queued operation since the last sync */
	unsigned char *flags;      /* tr_cuda_nonfinite's answers on the device, */
	unsigned char *flags_host; /* their pinned host copy,                    */
	size_t flags_cap;          /* and how many each holds                    */
};

/* Notes a failure of something queued, for the next tr_cuda_sync. */
static void note(tr_cuda *c, cudaError_t e)
{
	if (e != cudaSuccess && e != cudaErrorNotReady && c->failed == cudaSuccess)
		c->failed = e;
}

/* After a kernel launch: a bad configuration shows up here, not at sync. */
static void launched(tr_cuda *c) { note(c, cudaGetLastError()); }

static unsigned grid_for(const tr_cuda *c, size_t n, unsigned per_block)
{
	size_t blocks = (n + per_block - 1) / per_block, cap = (size_t)c->sms * 16;
	return (unsigned)(blocks < cap ? blocks : cap);
}

/* ---- timing ---- */

static void pop_pair(tr_cuda *c, int wait)
{
	cudaEvent_t *p = c->ev[c->head];
	if (wait)
		note(c, cudaEventSynchronize(p[1]));
	float ms = 0.0f;
	if (cudaEventElapsedTime(&ms, p[0], p[1]) == cudaSuccess)
		c->gemm_seconds += (double)ms * 1e-3;
	else
		(void)cudaGetLastError(); /* a pair that cannot be timed is dropped */
	c->head = (c->head + 1) % RING;
	c->pending--;
}

/* Accounts the pairs that have completed, oldest first (the stream runs
 * them in order, so the first not ready ends the scan). */
static void poll_pairs(tr_cuda *c)
{
	while (c->pending > 0) {
		cudaError_t e = cudaEventQuery(c->ev[c->head][1]);
		if (e == cudaErrorNotReady) {
			if (cudaPeekAtLastError() == cudaErrorNotReady)
				(void)cudaGetLastError(); /* not ready is no failure */
			break;
		}
		if (e != cudaSuccess)
			note(c, e);
		pop_pair(c, 0);
	}
}

/* ---- kernels ---- */

/* Rounded to nearest, ties to even (NaN stays NaN): the CPU's rounding. */
static __global__ void k_to_bf16(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = rio__bf16_from_f32(src[i]); /* not __float2bfloat16_rn: its NaN loses the sign */
}

static __global__ void k_bias_act(float *Z, const float *bias, int rows, int cols, int relu)
{
	for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += gridDim.y * blockDim.y)
		for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols;
		     c += gridDim.x * blockDim.x) {
			float *z = Z + (size_t)r * cols + c;
			float v = *z + bias[c];
			*z = relu ? (v > 0.0f ? v : 0.0f) : v;
		}
}

/* Blocks of 32 columns x 8 row lanes: each lane sums every 8th row of its
 * column (coalesced across the warp), then the 8 partial sums are added.
 * With A, the ReLU's backward in the same pass: each element is masked
 * (0 where A <= 0) as it is read, written back, and summed masked. */
static __global__ void k_col_sum(float *dZ, const float *A, int rows, int cols, float *db)
{
	__shared__ float part[8][33];
	const int tx = threadIdx.x, ty = threadIdx.y;
	for (int c0 = blockIdx.x * 32; c0 < cols; c0 += gridDim.x * 32) {
		int c = c0 + tx;
		float s = 0.0f;
		if (c < cols)
			for (int r = ty; r < rows; r += 8) {
				size_t i = (size_t)r * cols + c;
				if (A && !(A[i] > 0.0f))
					dZ[i] = 0.0f;
				s += dZ[i];
			}
		part[ty][tx] = s;
		__syncthreads();
		if (ty == 0 && c < cols) {
			for (int i = 1; i < 8; i++)
				s += part[i][tx];
			db[c] = s;
		}
		__syncthreads();
	}
}

/* One warp per row: the first largest logit (ties to the lower index, as
 * the CPU's scan), the log-sum-exp, the gradient; each block adds its rows'
 * loss and correct count to stats with one atomicAdd each. */
static __global__ void k_softmax_xent(const float *logits, const int64_t *labels, int rows,
                                      int K, float *dlogits, float *stats)
{
	__shared__ float s_loss[WARPS], s_correct[WARPS];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	float loss = 0.0f, correct = 0.0f;
	for (int r = blockIdx.x * WARPS + warp; r < rows; r += gridDim.x * WARPS) {
		const float *z = logits + (size_t)r * K;
		float bv = -INFINITY;
		int bi = INT_MAX;
		for (int k = lane; k < K; k += 32)
			if (bi == INT_MAX || z[k] > bv) {
				bv = z[k];
				bi = k;
			}
		for (int off = 16; off > 0; off >>= 1) {
			float ov = __shfl_xor_sync(0xffffffffu, bv, off);
			int oi = __shfl_xor_sync(0xffffffffu, bi, off);
			if (ov > bv || (ov == bv && oi < bi)) {
				bv = ov;
				bi = oi;
			}
		}
		const int64_t y64 = labels[r];
		const int y = y64 >= 0 && y64 < K ? (int)y64 : -1; /* the caller checks labels */
		const float mx = bv, zy = y >= 0 ? z[y] : NAN;
		float sum = 0.0f;
		for (int k = lane; k < K; k += 32)
			sum += expf(z[k] - mx);
		for (int off = 16; off > 0; off >>= 1)
			sum += __shfl_xor_sync(0xffffffffu, sum, off);
		if (lane == 0) {
			loss += logf(sum) + mx - zy;
			correct += bi == y ? 1.0f : 0.0f;
		}
		if (dlogits) {
			__syncwarp(); /* the row is read before it is written, when in place */
			float *d = dlogits + (size_t)r * K;
			const float inv = 1.0f / sum;
			for (int k = lane; k < K; k += 32) {
				float v = expf(z[k] - mx) * inv;
				d[k] = k == y ? v - 1.0f : v;
			}
		}
	}
	if (lane == 0) {
		s_loss[warp] = loss;
		s_correct[warp] = correct;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < WARPS; w++) {
			loss += s_loss[w];
			correct += s_correct[w];
		}
		atomicAdd(&stats[0], loss);
		atomicAdd(&stats[1], correct);
	}
}

static __global__ void k_sgd(float *param, const float *grad, float *velocity, size_t n,
                             float lr, float mu, float wd, float s)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float p = param[i];
		float g = grad[i] * s + wd * p;
		float v = mu * velocity[i] + g;
		velocity[i] = v;
		param[i] = p - lr * v;
	}
}

static __global__ void k_adam(float *param, const float *grad, float *m1, float *m2, size_t n,
                              float b1, float b2, float eps, float wd, float s, float c1,
                              float c2)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float p = param[i];
		float g = grad[i] * s + wd * p;
		float u = b1 * m1[i] + (1.0f - b1) * g;
		float v = b2 * m2[i] + (1.0f - b2) * g * g;
		m1[i] = u;
		m2[i] = v;
		param[i] = p - c1 * u / (sqrtf(v) * c2 + eps);
	}
}

/* ---- cuBLAS, loaded at open (cublas_dl.h) ---- */

int tr_cublas_load(tr_cublas *b, char *err, size_t errlen)
{
	/* the one type not taken from the header (cublas_dl.h), checked here;
	 * in sizeof, unevaluated: no reference to the symbol, which a build
	 * without optimisation would otherwise ask the linker for */
	static_assert(sizeof(static_cast<tr_cublasGemmEx_fn>(&::cublasGemmEx)) != 0,
	              "cublasGemmEx's C type");
	memset(b, 0, sizeof *b);
	b->lib = dlopen(TR_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!b->lib) {
		if (err && errlen)
			snprintf(err, errlen, "cuBLAS: %s", dlerror());
		return -ENOENT;
	}
#define TR_CUBLAS_FIND(f, type)                                                                  \
	if (!(b->f = (decltype(b->f))dlsym(b->lib, #f))) {                                       \
		if (err && errlen)                                                               \
			snprintf(err, errlen, "cuBLAS: no %s in %s", #f, TR_CUBLAS_SONAME);      \
		tr_cublas_unload(b);                                                             \
		return -ENOENT;                                                                  \
	}
	TR_CUBLAS_FUNCS(TR_CUBLAS_FIND)
#undef TR_CUBLAS_FIND
	return 0;
}

void tr_cublas_unload(tr_cublas *b)
{
	if (b->lib)
		dlclose(b->lib);
	memset(b, 0, sizeof *b);
}

int tr_cuda_blas_probe(char *err, size_t errlen)
{
	tr_cublas b;
	int rc = tr_cublas_load(&b, err, errlen);
	tr_cublas_unload(&b);
	return rc;
}

/* ---- the interface ---- */

static int fail(char *err, size_t errlen, int rc, const char *what, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, why);
	return rc;
}

void tr_cuda_close(tr_cuda *c)
{
	if (!c)
		return;
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	for (int i = 0; i < RING; i++)
		for (int j = 0; j < 2; j++)
			if (c->ev[i][j])
				cudaEventDestroy(c->ev[i][j]);
	if (c->blas)
		c->cb.cublasDestroy(c->blas);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	if (c->flags)
		cudaFree(c->flags);
	if (c->flags_host)
		cudaFreeHost(c->flags_host);
	(void)cudaGetLastError();
	tr_cublas_unload(&c->cb);
	free(c);
}

int tr_cuda_open(tr_cuda **out, int gpu, char *err, size_t errlen)
{
	*out = NULL;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count <= 0) {
		(void)cudaGetLastError();
		if (err && errlen)
			snprintf(err, errlen, "no CUDA device");
		return -ENODEV;
	}
	if (gpu < 0 || gpu >= count) {
		if (err && errlen)
			snprintf(err, errlen, "CUDA device %d out of range (%d device%s)", gpu,
			         count, count == 1 ? "" : "s");
		return -ENODEV;
	}
	tr_cuda *c = (tr_cuda *)calloc(1, sizeof *c);
	if (!c)
		return fail(err, errlen, -ENOMEM, "CUDA backend", "out of memory");
	c->gpu = gpu;
	if ((e = cudaSetDevice(gpu)) != cudaSuccess ||
	    (e = cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, gpu)) !=
	        cudaSuccess) {
		(void)cudaGetLastError();
		free(c);
		return fail(err, errlen, -EIO, "CUDA device setup", cudaGetErrorString(e));
	}
	if (c->sms < 1)
		c->sms = 1;
	if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		(void)cudaGetLastError();
		c->stream = NULL;
		tr_cuda_close(c);
		return fail(err, errlen, e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO,
		            "cudaStreamCreate", cudaGetErrorString(e));
	}
	int rc = tr_cublas_load(&c->cb, err, errlen);
	if (rc < 0) {
		tr_cuda_close(c);
		return rc;
	}
	cublasStatus_t s = c->cb.cublasCreate(&c->blas);
	if (s != CUBLAS_STATUS_SUCCESS) {
		c->blas = NULL;
		const char *why = c->cb.cublasGetStatusString(s);
		rc = s == CUBLAS_STATUS_ALLOC_FAILED ? -ENOMEM : -EIO;
		tr_cuda_close(c);
		return fail(err, errlen, rc, "cublasCreate", why);
	}
	/* CUBLAS_DEFAULT_MATH: plain FP32, no TF32 tensor-op rounding */
	if ((s = c->cb.cublasSetStream(c->blas, c->stream)) != CUBLAS_STATUS_SUCCESS ||
	    (s = c->cb.cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
		const char *why = c->cb.cublasGetStatusString(s);
		tr_cuda_close(c);
		return fail(err, errlen, -EIO, "cuBLAS setup", why);
	}
	for (int i = 0; i < RING; i++)
		for (int j = 0; j < 2; j++)
			if ((e = cudaEventCreate(&c->ev[i][j])) != cudaSuccess) {
				(void)cudaGetLastError();
				c->ev[i][j] = NULL;
				tr_cuda_close(c);
				rc = e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
				return fail(err, errlen, rc, "cudaEventCreate",
				            cudaGetErrorString(e));
			}
	*out = c;
	return 0;
}

void *tr_cuda_alloc_bytes(tr_cuda *c, size_t bytes)
{
	void *p = NULL;
	if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
		(void)cudaGetLastError(); /* out of memory is no failure of the stream */
		return NULL;
	}
	if (cudaMemsetAsync(p, 0, bytes, c->stream) != cudaSuccess ||
	    cudaStreamSynchronize(c->stream) != cudaSuccess) {
		(void)cudaGetLastError();
		cudaFree(p);
		return NULL;
	}
	return p;
}

void tr_cuda_free(tr_cuda *c, void *p)
{
	(void)c;
	if (p)
		cudaFree(p);
}

float *tr_cuda_host_alloc(tr_cuda *c, size_t n)
{
	(void)c;
	void *p = NULL;
	size_t bytes = (n ? n : 1) * sizeof(float);
	if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	memset(p, 0, bytes);
	return (float *)p;
}

void tr_cuda_host_free(tr_cuda *c, float *p)
{
	(void)c;
	if (p)
		cudaFreeHost(p);
}

/* A copy on the stream, waited for: 0 or -EIO. */
static int copy_and_wait(tr_cuda *c, float *dst, const float *src, size_t n, cudaMemcpyKind kind)
{
	cudaError_t e = cudaSuccess;
	if (n)
		e = cudaMemcpyAsync(dst, src, n * sizeof(float), kind, c->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(c->stream);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return -EIO;
	}
	return 0;
}

int tr_cuda_to_host(tr_cuda *c, float *dst_host, const float *src, size_t n)
{
	return copy_and_wait(c, dst_host, src, n, cudaMemcpyDeviceToHost);
}

int tr_cuda_from_host(tr_cuda *c, float *dst, const float *src_host, size_t n)
{
	return copy_and_wait(c, dst, src_host, n, cudaMemcpyHostToDevice);
}

void tr_cuda_zero(tr_cuda *c, float *p, size_t n)
{
	if (n)
		note(c, cudaMemsetAsync(p, 0, n * sizeof(float), c->stream));
}

int tr_cuda_sync(tr_cuda *c)
{
	note(c, cudaStreamSynchronize(c->stream));
	while (c->pending > 0)
		pop_pair(c, 1);
	note(c, cudaGetLastError());
	cudaError_t e = c->failed;
	c->failed = cudaSuccess;
	return e == cudaSuccess ? 0 : -EIO;
}

/* The event pair that times the GEMM about to be queued, its start
 * recorded; gemm_timed_end records its end. */
static cudaEvent_t *gemm_timed_begin(tr_cuda *c)
{
	poll_pairs(c);
	if (c->pending == RING)
		pop_pair(c, 1);
	cudaEvent_t *p = c->ev[(c->head + c->pending) % RING];
	note(c, cudaEventRecord(p[0], c->stream));
	return p;
}

static void gemm_timed_end(tr_cuda *c, cudaEvent_t *p, cublasStatus_t s)
{
	if (s != CUBLAS_STATUS_SUCCESS)
		note(c, cudaErrorLaunchFailure);
	note(c, cudaEventRecord(p[1], c->stream));
	c->pending++;
}

void tr_cuda_gemm(tr_cuda *c, int trans_a, int trans_b, int M, int N, int K, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta, float *C,
                  int ldc)
{
	if (M <= 0 || N <= 0)
		return;
	cudaEvent_t *p = gemm_timed_begin(c);
	/* Row-major C is column-major C^T = op(B)^T op(A)^T: swap the operands
	 * and the M/N roles, keep each operand's own transpose flag and ld. */
	cublasStatus_t s = c->cb.cublasSgemm(c->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
	                               trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B,
	                               ldb, A, lda, &beta, C, ldc);
	gemm_timed_end(c, p, s);
}

/* --precision bf16: bf16 operands, fp32 accumulation (CUBLAS_COMPUTE_32F)
 * and an fp32 C; the operands swapped as in tr_cuda_gemm. */
void tr_cuda_gemm_bf16(tr_cuda *c, int trans_a, int trans_b, int M, int N, int K,
                       const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                       float *C, int ldc)
{
	if (M <= 0 || N <= 0)
		return;
	const float alpha = 1.0f;
	cudaEvent_t *p = gemm_timed_begin(c);
	cublasStatus_t s = c->cb.cublasGemmEx(c->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
	                                trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B,
	                                CUDA_R_16BF, ldb, A, CUDA_R_16BF, lda, &beta, C,
	                                CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	gemm_timed_end(c, p, s);
}

void tr_cuda_to_bf16(tr_cuda *c, uint16_t *dst, const float *src, size_t n)
{
	if (!n)
		return;
	k_to_bf16<<<grid_for(c, n, THREADS), THREADS, 0, c->stream>>>(dst, src, n);
	launched(c);
}

void tr_cuda_bias_act(tr_cuda *c, float *Z, const float *bias, int rows, int cols, int relu)
{
	if (rows <= 0 || cols <= 0)
		return;
	dim3 block(32, 8);
	unsigned gx = (unsigned)((cols + 31) / 32), gy = (unsigned)((rows + 7) / 8);
	dim3 grid(gx < 1024 ? gx : 1024, gy < 65535 ? gy : 65535);
	k_bias_act<<<grid, block, 0, c->stream>>>(Z, bias, rows, cols, relu);
	launched(c);
}

static void col_sum(tr_cuda *c, float *dZ, const float *A, int rows, int cols, float *db)
{
	if (cols <= 0)
		return;
	unsigned gx = (unsigned)((cols + 31) / 32);
	k_col_sum<<<gx < 65535 ? gx : 65535, dim3(32, 8), 0, c->stream>>>(dZ, A, rows, cols, db);
	launched(c);
}

void tr_cuda_relu_bias_backward(tr_cuda *c, float *dZ, const float *A, int rows, int cols,
                                float *db)
{
	col_sum(c, dZ, A, rows, cols, db);
}

void tr_cuda_softmax_xent(tr_cuda *c, const float *logits, const int64_t *labels, int rows,
                          int K, float *dlogits, float *dbias, float *stats)
{
	if (rows <= 0 || K <= 0)
		return;
	k_softmax_xent<<<grid_for(c, (size_t)rows, WARPS), THREADS, 0, c->stream>>>(
	    logits, labels, rows, K, dlogits, stats);
	launched(c);
	if (dlogits && dbias)
		col_sum(c, dlogits, NULL, rows, K, dbias);
}

void tr_cuda_sgd_step(tr_cuda *c, float *param, const float *grad, float *velocity, size_t n,
                      const tr_sgd_args *a)
{
	if (!n)
		return;
	k_sgd<<<grid_for(c, n, THREADS), THREADS, 0, c->stream>>>(
	    param, grad, velocity, n, a->lr, a->momentum, a->weight_decay, a->grad_scale);
	launched(c);
}

void tr_cuda_adam_step(tr_cuda *c, float *param, const float *grad, float *m1, float *m2,
                       size_t n, const tr_adam_args *a)
{
	if (!n)
		return;
	const float c1 = a->lr / a->bias1, c2 = 1.0f / sqrtf(a->bias2);
	k_adam<<<grid_for(c, n, THREADS), THREADS, 0, c->stream>>>(
	    param, grad, m1, m2, n, a->beta1, a->beta2, a->eps, a->weight_decay, a->grad_scale, c1,
	    c2);
	launched(c);
}

/* bad[k] = 1 when piece k (per floats) of x holds a NaN or an infinity
 * (exponent all ones: the bits, as tr_nonfinite reads them on the host);
 * bad[] was zeroed, and only a bad element writes */
static __global__ void k_nonfinite(const float *x, size_t n, size_t per, unsigned char *bad)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		if ((__float_as_uint(x[i]) & 0x7f800000u) == 0x7f800000u)
			bad[i / per] = 1;
}

/* Room for k flags on the device and in pinned host memory. */
static cudaError_t flags_room(tr_cuda *c, size_t k)
{
	if (k <= c->flags_cap)
		return cudaSuccess;
	if (c->flags)
		cudaFree(c->flags);
	if (c->flags_host)
		cudaFreeHost(c->flags_host);
	c->flags = c->flags_host = NULL;
	c->flags_cap = 0;
	cudaError_t e = cudaMalloc((void **)&c->flags, k);
	if (e == cudaSuccess)
		e = cudaHostAlloc((void **)&c->flags_host, k, cudaHostAllocDefault);
	if (e == cudaSuccess)
		c->flags_cap = k;
	return e;
}

int tr_cuda_nonfinite(tr_cuda *c, const float *x, size_t n, size_t per, unsigned char *bad)
{
	if (!n)
		return 0;
	size_t k = (n + per - 1) / per;
	cudaError_t e = flags_room(c, k);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(c->flags, 0, k, c->stream);
	if (e == cudaSuccess) {
		k_nonfinite<<<grid_for(c, n, THREADS), THREADS, 0, c->stream>>>(x, n, per, c->flags);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(c->flags_host, c->flags, k, cudaMemcpyDeviceToHost, c->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(c->stream);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		note(c, e); /* the step's sync reports it too */
		return -EIO;
	}
	int count = 0;
	for (size_t i = 0; i < k; i++)
		count += (bad[i] = c->flags_host[i]) != 0;
	return count;
}

int tr_cuda_norm2(tr_cuda *c, const float *x, size_t n, float *out_host)
{
	/* cuBLAS in host pointer mode: waits for the stream, then the result */
	double sum = 0;
	while (n) {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		float piece = 0;
		cublasStatus_t s = c->cb.cublasSnrm2(c->blas, (int)k, x, 1, &piece);
		if (s != CUBLAS_STATUS_SUCCESS) {
			note(c, cudaErrorUnknown); /* the step's sync reports it */
			return -EIO;
		}
		sum += (double)piece * piece;
		x += k;
		n -= k;
	}
	*out_host = (float)sqrt(sum);
	return 0;
}

double tr_cuda_gemm_seconds(tr_cuda *c)
{
	poll_pairs(c);
	return c->gemm_seconds;
}

void *tr_cuda_stream(tr_cuda *c) { return (void *)c->stream; }

/*
 * cublas_dl.h — cuBLAS for the CUDA backend (math_cuda.cu), loaded when a
 * backend is opened on a GPU (dlopen), not when recordio-train starts.
 * cuBLAS and its cublasLt are over 500 MB of library: linked, every run
 * mapped and relocated them at start-up, `--device cpu` and `--help`
 * included (a fifth of a CPU second a process under ASan, each rank of
 * each test paying it). The CUDA runtime, small, stays linked (nvcc's
 * kernel launches need it).
 *
 * TR_CUBLAS_FUNCS lists every cuBLAS function the backend calls, with its
 * type; each is a member of tr_cublas with the type cublas_v2.h declares, so
 * the compiler checks every call against the header, and a cuBLAS without
 * one of them fails the open in one line naming it. tests/
 * test_train_math_cuda.c links the same list against -lcublas, so the
 * names are link-checked wherever the CUDA path is built. C++ only.
 */
#ifndef RIO_TRAINER_CUBLAS_DL_H
#define RIO_TRAINER_CUBLAS_DL_H

#include <cublas_v2.h>

#define TR_CUBLAS_FUNCS(X)                                                                       \
	X(cublasCreate_v2, decltype(&::cublasCreate_v2))                                         \
	X(cublasDestroy_v2, decltype(&::cublasDestroy_v2))                                       \
	X(cublasGemmEx, tr_cublasGemmEx_fn)                                                      \
	X(cublasGetStatusString, decltype(&::cublasGetStatusString))                             \
	X(cublasSetMathMode, decltype(&::cublasSetMathMode))                                     \
	X(cublasSetStream_v2, decltype(&::cublasSetStream_v2))                                   \
	X(cublasSgemm_v2, decltype(&::cublasSgemm_v2))                                           \
	X(cublasSnrm2_v2, decltype(&::cublasSnrm2_v2))

/* the library's name: libcublas.so.MAJOR of the headers compiled against */
#define TR_CUBLAS_STR_(x) #x
#define TR_CUBLAS_STR(x) TR_CUBLAS_STR_(x)
#define TR_CUBLAS_SONAME "libcublas.so." TR_CUBLAS_STR(CUBLAS_VER_MAJOR)

#ifdef __cplusplus
/* cublasGemmEx is overloaded in C++ (an inline wrapper taking the old
 * cudaDataType compute type): the C function's type, checked against the
 * header where math_cuda.cu converts &cublasGemmEx to it */
typedef cublasStatus_t (*tr_cublasGemmEx_fn)(cublasHandle_t, cublasOperation_t,
                                             cublasOperation_t, int, int, int, const void *,
                                             const void *, cudaDataType, int, const void *,
                                             cudaDataType, int, const void *, void *,
                                             cudaDataType, int, cublasComputeType_t,
                                             cublasGemmAlgo_t);

typedef struct tr_cublas {
	void *lib; /* dlopen's handle; NULL when not loaded */
#define TR_CUBLAS_MEMBER(f, type) type f;
	TR_CUBLAS_FUNCS(TR_CUBLAS_MEMBER)
#undef TR_CUBLAS_MEMBER
} tr_cublas;

/* Loads cuBLAS into *b; 0, or -ENOENT with "cuBLAS: why" in err (the
 * library not found, or a function missing from it). */
int tr_cublas_load(tr_cublas *b, char *err, size_t errlen);
/* Unloads what tr_cublas_load loaded (nothing when it failed). */
void tr_cublas_unload(tr_cublas *b);
#endif

#endif /* RIO_TRAINER_CUBLAS_DL_H */

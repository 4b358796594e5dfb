/*
 * cublas_linked.c — the link check of the cuBLAS functions the CUDA backend
 * loads at run time (trainer/cublas_dl.h's TR_CUBLAS_FUNCS): linked into
 * tests/test_train_math_cuda against -lcublas, so a name that is not
 * cuBLAS's fails the build wherever the CUDA path is built, device or not
 * (on a device, that test runs each of them through the backend).
 */
#include "../trainer/cublas_dl.h"

/* the address of each: external, so that no compiler drops the references */
extern const void *const tr_cublas_linked[];
#define TR_CUBLAS_ADDRESS(f, type) (const void *)&f,
const void *const tr_cublas_linked[] = {TR_CUBLAS_FUNCS(TR_CUBLAS_ADDRESS)};

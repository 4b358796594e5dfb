/*
 * mlp_shape.c — a model's parameter count from its layer sizes: the one
 * piece of the MLP the checkpoint's parser needs, kept apart from the math
 * so that the parser (and its fuzz target, tests/fuzz/fuzz_checkpoint.c)
 * builds without a BLAS.
 */
#include "config.h"
#include "mlp.h"

size_t tr_mlp_param_count(const int *sizes, int nlayers)
{
	size_t n = 0;
	for (int l = 0; l < nlayers; l++)
		n += (size_t)sizes[l + 1] * (size_t)sizes[l] + (size_t)sizes[l + 1];
	return n;
}

/*
 * ckpt_diff.c — compares the parameters of two recordio-train checkpoints,
 * for the shell tests: `ckpt_diff DIR_A DIR_B TOLERANCE` prints the largest
 * difference and exits 0 when every parameter agrees within TOLERANCE
 * (relative to 1 + |value|), 1 when not, 2 when a checkpoint cannot be read.
 * `ckpt_diff DIR_A DIR_B TOLERANCE l2` holds the L2 norm of the difference
 * to TOLERANCE times the L2 norm of A's parameters instead (the pipeline's
 * and tensor parallelism's equivalence with data-parallel training, whose
 * sums go in another order). The parameters must also be finite and not
 * all zero.
 */
#include "../trainer/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int l2 = argc == 5 && !strcmp(argv[4], "l2");
	if (argc != 4 && !l2) {
		fprintf(stderr, "usage: ckpt_diff DIR_A DIR_B TOLERANCE [l2]\n");
		return 2;
	}
	tr_ckpt a, b;
	char err[1024];
	if (tr_ckpt_read(argv[1], &a, err, sizeof err) < 0 ||
	    tr_ckpt_read(argv[2], &b, err, sizeof err) < 0) {
		fprintf(stderr, "ckpt_diff: %s\n", err);
		return 2;
	}
	double tol = atof(argv[3]), worst = 0, norm = 0, diff2 = 0, norm2 = 0;
	int finite = 1;
	if (a.nparams != b.nparams) {
		fprintf(stderr, "ckpt_diff: %llu against %llu parameters\n",
		        (unsigned long long)a.nparams, (unsigned long long)b.nparams);
		return 1;
	}
	for (uint64_t i = 0; i < a.nparams; i++) {
		double d = fabs((double)a.params[i] - b.params[i]) / (1.0 + fabs(a.params[i]));
		finite &= isfinite(a.params[i]) && isfinite(b.params[i]);
		if (d > worst)
			worst = d;
		norm += fabs(a.params[i]);
		diff2 += ((double)a.params[i] - b.params[i]) * ((double)a.params[i] - b.params[i]);
		norm2 += (double)a.params[i] * a.params[i];
	}
	double ratio = norm2 > 0 ? sqrt(diff2 / norm2) : INFINITY;
	printf("%llu parameters, largest relative difference %.3g (tolerance %.3g)\n",
	       (unsigned long long)a.nparams, worst, l2 ? NAN : tol);
	printf("L2 norm of the difference over the parameters' %.3g (tolerance %.3g)\n", ratio,
	       l2 ? tol : NAN);
	int ok = finite && norm > 0 && (l2 ? ratio <= tol : worst <= tol);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
	return ok ? 0 : 1;
}

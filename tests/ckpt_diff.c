/*
 * ckpt_diff.c — compares the parameters of two recordio-train checkpoints,
 * for the shell tests: `ckpt_diff DIR_A DIR_B TOLERANCE` prints the largest
 * difference and exits 0 when every parameter agrees within TOLERANCE
 * (relative to 1 + |value|), 1 when not, 2 when a checkpoint cannot be read.
 * The parameters must also be finite and not all zero.
 */
#include "../trainer/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ckpt_diff DIR_A DIR_B TOLERANCE\n");
		return 2;
	}
	tr_ckpt a, b;
	char err[1024];
	if (tr_ckpt_read(argv[1], &a, err, sizeof err) < 0 ||
	    tr_ckpt_read(argv[2], &b, err, sizeof err) < 0) {
		fprintf(stderr, "ckpt_diff: %s\n", err);
		return 2;
	}
	double tol = atof(argv[3]), worst = 0, norm = 0;
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
	}
	printf("%llu parameters, largest relative difference %.3g (tolerance %.3g)\n",
	       (unsigned long long)a.nparams, worst, tol);
	int ok = finite && norm > 0 && worst <= tol;
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
	return ok ? 0 : 1;
}

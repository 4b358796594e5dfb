/*
 * ckpt_diff.c — compares the parameters of two recordio-train checkpoints,
 * for the shell tests: `ckpt_diff DIR_A DIR_B TOLERANCE` prints the largest
 * difference and exits 0 when every parameter agrees within TOLERANCE
 * (relative to 1 + |value|), 1 when not, 2 when a checkpoint cannot be read.
 * `ckpt_diff DIR_A DIR_B TOLERANCE l2` holds the L2 norm of the difference
 * to TOLERANCE times the L2 norm of A's parameters instead (the pipeline's
 * and tensor parallelism's equivalence with data-parallel training, whose
 * sums go in another order). The parameters must also be finite and not
 * all zero. The --embed tables, where the checkpoints hold them, are held
 * to the same test on their own (their shapes must match): most of their
 * rows move little in a step, so their L2 norm is not pooled with the
 * dense layers'.
 */
#include "../trainer/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The figures of n values of a against b. */
typedef struct diff {
	double worst, norm, diff2, norm2;
	int finite;
} diff;

static void compare(diff *d, const float *a, const float *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		double e = (double)a[i] - b[i], r = fabs(e) / (1.0 + fabs(a[i]));
		d->finite &= isfinite(a[i]) && isfinite(b[i]);
		if (r > d->worst)
			d->worst = r;
		d->norm += fabs(a[i]);
		d->diff2 += e * e;
		d->norm2 += (double)a[i] * a[i];
	}
}

/* Prints what compare found; 1 when it is within tol. */
static int within(const diff *d, const char *what, uint64_t n, double tol, int l2)
{
	double ratio = d->norm2 > 0 ? sqrt(d->diff2 / d->norm2) : INFINITY;
	printf("%llu %s, largest relative difference %.3g (tolerance %.3g)\n",
	       (unsigned long long)n, what, d->worst, l2 ? NAN : tol);
	printf("L2 norm of the difference over the %s' %.3g (tolerance %.3g)\n", what, ratio,
	       l2 ? tol : NAN);
	return d->finite && d->norm > 0 && (l2 ? ratio <= tol : d->worst <= tol);
}

/* The --embed tables of a and b: 1 when none, or all within tol. */
static int tables_within(const tr_ckpt *a, const tr_ckpt *b, double tol, int l2)
{
	if (a->ntables != b->ntables) {
		fprintf(stderr, "ckpt_diff: %u against %u --embed tables\n", a->ntables, b->ntables);
		return 0;
	}
	diff d = {.finite = 1};
	uint64_t n = 0;
	for (uint32_t t = 0; t < a->ntables; t++) {
		if (a->table_vocab[t] != b->table_vocab[t] || a->table_dim[t] != b->table_dim[t]) {
			fprintf(stderr, "ckpt_diff: table %u's shapes differ\n", t);
			return 0;
		}
		uint64_t k = (uint64_t)a->table_vocab[t] * a->table_dim[t];
		compare(&d, a->table_params[t], b->table_params[t], k);
		n += k;
	}
	return a->ntables == 0 || within(&d, "table values", n, tol, l2);
}

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
	double tol = atof(argv[3]);
	if (a.nparams != b.nparams) {
		fprintf(stderr, "ckpt_diff: %llu against %llu parameters\n",
		        (unsigned long long)a.nparams, (unsigned long long)b.nparams);
		return 1;
	}
	diff d = {.finite = 1};
	compare(&d, a.params, b.params, a.nparams);
	int ok = within(&d, "parameters", a.nparams, tol, l2);
	ok &= tables_within(&a, &b, tol, l2);
	tr_ckpt_free(&a);
	tr_ckpt_free(&b);
	return ok ? 0 : 1;
}

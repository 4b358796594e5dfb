/*
 * check_report.h — the plain reporter of the test programs that do not use
 * CUnit (the trainer's math tests): "ok NAME" / "FAIL NAME: why" lines, a
 * count of each, the summary line, and a fixed-seed xorshift for their
 * random operands. Each program is one translation unit, so the counters
 * are its own.
 */
#ifndef RIO_CHECK_REPORT_H
#define RIO_CHECK_REPORT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int check_passed, check_failed;
static uint64_t check_rng = 0x9e3779b97f4a7c15ull;

static void check_ok(const char *name)
{
	printf("ok %s\n", name);
	check_passed++;
}

static void check_fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check_fail(const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	check_failed++;
}

/* Prints "N passed, M failed" and returns the program's exit status. */
static int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

static uint64_t check_xorshift(void)
{
	check_rng ^= check_rng << 13;
	check_rng ^= check_rng >> 7;
	check_rng ^= check_rng << 17;
	return check_rng;
}

/* Uniform in [lo, hi), 24 random bits. */
static float check_uniform(float lo, float hi)
{
	return lo + (hi - lo) * (float)((check_xorshift() >> 40) * (1.0 / 16777216.0));
}

static double check_abs(double x) { return x < 0 ? -x : x; }

#endif

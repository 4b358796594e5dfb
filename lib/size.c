/*
 * size.c — see size.h. Exact integer arithmetic throughout (no strtod: it
 * would take blanks, signs, hex, exponents, inf and nan, and round sizes
 * near 2^64).
 */
#include "config.h"
#include "size.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct unit {
	const char *name;
	uint64_t bytes;
} units[] = {
	{"B", 1},
	{"K", 1ull << 10},   {"M", 1ull << 20},      {"G", 1ull << 30},         {"T", 1ull << 40},
	{"KiB", 1ull << 10}, {"MiB", 1ull << 20},    {"GiB", 1ull << 30},       {"TiB", 1ull << 40},
	{"KB", 1000ull},     {"MB", 1000000ull},     {"GB", 1000000000ull},     {"TB", 1000000000000ull},
};

static int fail(int code, char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(int code, char *msg, size_t msglen, const char *fmt, ...)
{
	if (msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}

#define EXPECTED "expected a size such as 64M or 1.5G, got '%s'"

/* `text` for a one-line message: its first 64 bytes, control bytes as
 * \xNN (a newline in an argument must not break the line). */
static const char *quotable(const char *text, char *out, size_t size)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)text; *p && n + 8 < size; p++) {
		if (p - (const unsigned char *)text == 64) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		if (*p < 0x20 || *p == 0x7f)
			n += (size_t)snprintf(out + n, size - n, "\\x%02x", *p);
		else
			out[n++] = (char)*p;
	}
	out[n] = '\0';
	return out;
}

int rio__size_parse(const char *text, uint64_t max, uint64_t *bytes, char *msg, size_t msglen)
{
	const char *p = text ? text : "";
	char shown[96];
	quotable(p, shown, sizeof shown);
	size_t whole = strspn(p, "0123456789");
	if (whole == 0)
		return fail(-EINVAL, msg, msglen, EXPECTED, shown);
	const char *frac = NULL, *unit = p + whole;
	size_t nfrac = 0;
	if (*unit == '.') {
		frac = unit + 1;
		nfrac = strspn(frac, "0123456789");
		if (nfrac == 0)
			return fail(-EINVAL, msg, msglen, EXPECTED ": digits must follow the point",
			            shown);
		unit = frac + nfrac;
	}
	uint64_t mult = 0;
	if (!*unit) {
		mult = 1;
	} else {
		char unit_shown[96];
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
			if (!strcmp(unit, units[i].name))
				mult = units[i].bytes;
		if (!mult)
			return fail(-EINVAL, msg, msglen,
			            EXPECTED ": unknown unit '%s' (K, M, G, T, KiB to TiB: powers of "
			            "1024; KB to TB: powers of 1000; B: bytes)",
			            shown, quotable(unit, unit_shown, sizeof unit_shown));
	}
	if (frac && mult == 1)
		return fail(-EINVAL, msg, msglen,
		            EXPECTED ": a fraction needs a unit larger than a byte (e.g. 1.5K)", shown);

	/* whole * mult + floor(0.frac * mult), each step checked against 2^64 */
	int over = 0;
	uint64_t v = 0;
	for (size_t i = 0; i < whole && !over; i++) {
		unsigned d = (unsigned)(p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	if (!over && v > UINT64_MAX / mult)
		over = 1;
	v *= mult;
	/* floor(mult * 0.d1 d2 ... dn), exactly: from the last digit,
	 * x = floor((mult * d + x) / 10), which never exceeds mult */
	uint64_t x = 0;
	for (size_t i = nfrac; i-- > 0;)
		x = (mult * (uint64_t)(frac[i] - '0') + x) / 10;
	if (!over && v > UINT64_MAX - x)
		over = 1;
	v += x;
	if (over || v > max)
		return fail(-ERANGE, msg, msglen, "'%s' is too large: at most %llu bytes", shown,
		            (unsigned long long)max);
	*bytes = v;
	return 0;
}

const char *rio__format_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%.1f %s", v, names[u]);
	return buf;
}

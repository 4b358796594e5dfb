/*
 * options_value.c — the grammars of recordio-train's option values (see
 * options_value.h). Pure functions of the text: no message, no output; the
 * table's row in options.c words the refusal.
 */
#include "config.h"
#include "options_value.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!isdigit((unsigned char)*s)) /* strtoull would take " -1" as 2^64 - 1 */
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int tr_parse_real(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || errno || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Splits "a,b,c" into malloc'd names, after those of an earlier --x. */
int tr_parse_names(const char *s, tr_options *o)
{
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n >= 128 || o->nx == TR_MLP_MAX_INPUTS)
			return -1;
		if (!(o->x[o->nx] = strndup(p, n)))
			return -1;
		o->nx++;
		p += n + (comma ? 1 : 0);
		if (comma && !*p)
			return -1;
	}
	return o->nx ? 0 : -1;
}

/* "256,128", or none: no hidden layer (said so, never an empty word). */
int tr_parse_hidden(const char *s, tr_options *o)
{
	if (!*s)
		return -1;
	o->nhidden = 0;
	if (!strcmp(s, "none"))
		return 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > 1 << 16 || (*end && *end != ',') ||
		    o->nhidden == TR_MLP_MAX_LAYERS - 1)
			return -1;
		o->hidden[o->nhidden++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return 0;
}

/* "R:F[,R:F...]": ranks and slowdown factors (F >= 1). */
int tr_parse_stragglers(const char *s, tr_options *o)
{
	const char *p = s;
	o->nstraggler = 0;
	while (*p) {
		char *end;
		errno = 0;
		long rank = strtol(p, &end, 10);
		if (errno || end == p || rank < 0 || rank > 1 << 20 || *end != ':')
			return -1;
		p = end + 1;
		double f = strtod(p, &end);
		if (end == p || !isfinite(f) || f < 1 || f > 1000 || (*end && *end != ','))
			return -1;
		if (o->nstraggler == TR_MAX_STRAGGLERS)
			return -1;
		for (int i = 0; i < o->nstraggler; i++)
			if (o->straggler[i].rank == (int)rank)
				return -1; /* one factor per rank */
		o->straggler[o->nstraggler++] = (tr_straggler){(int)rank, f};
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return o->nstraggler ? 0 : -1;
}

/* "FEATURE:VOCAB:DIM[,...]", after the tables of an earlier --embed. */
int tr_parse_embed(const char *s, tr_options *o)
{
	const char *p = s;
	while (*p) {
		const char *colon = strchr(p, ':');
		if (!colon || colon == p || (size_t)(colon - p) >= sizeof o->embed[0].feature ||
		    o->nembed == TR_MAX_EMBED)
			return -1;
		tr_embed_option *e = &o->embed[o->nembed];
		snprintf(e->feature, sizeof e->feature, "%.*s", (int)(colon - p), p);
		char *end;
		errno = 0;
		long long v = strtoll(colon + 1, &end, 10);
		if (errno || end == colon + 1 || v < 1 || v > (1ll << 40) || *end != ':')
			return -1;
		const char *d = end + 1;
		long dim = strtol(d, &end, 10);
		if (errno || end == d || dim < 1 || dim > 4096 || (*end && *end != ','))
			return -1;
		e->vocab = v;
		e->dim = (int)dim;
		o->nembed++;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return o->nembed ? 0 : -1;
}

/* "P:F:SEED" */
int tr_parse_random_straggler(const char *s, tr_options *o)
{
	char *end;
	errno = 0;
	double p = strtod(s, &end);
	if (end == s || !isfinite(p) || p < 0 || p > 1 || *end != ':')
		return -1;
	s = end + 1;
	double f = strtod(s, &end);
	if (end == s || !isfinite(f) || f < 1 || f > 1000 || *end != ':')
		return -1;
	if (tr_parse_u64(end + 1, 0, UINT64_MAX, &o->straggler_seed) < 0)
		return -1;
	o->straggler_p = p;
	o->straggler_f = f;
	return 0;
}

/* --synthetic, or --synthetic=N inputs (1 to 2^24). */
int tr_parse_synthetic(const char *s, tr_options *o)
{
	uint64_t n;
	o->synthetic = 1;
	if (!s)
		return 0;
	if (tr_parse_u64(s, 1, 1 << 24, &n) < 0)
		return -1;
	o->synthetic_inputs = (int)n;
	return 0;
}

/* "A-B,C-D,...": contiguous ranges of layer indices from 0, each B >= A
 * (a single index "A" is A-A); the next range starts after the last one.
 * Whether they cover the model's layers is checked against --hidden. */
int tr_parse_stages(const char *s, tr_options *o)
{
	const char *p = s;
	int n = 0, next = 0;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b = a;
		if (errno || end == p || *p == '-' || *p == '+')
			return -1;
		if (*end == '-') {
			const char *q = end + 1;
			if (*q < '0' || *q > '9')
				return -1;
			b = strtol(q, &end, 10);
		}
		if (errno || a != next || b < a || b >= TR_MLP_MAX_LAYERS || n == TR_MLP_MAX_LAYERS ||
		    (*end && *end != ','))
			return -1;
		o->stage_first[n++] = (int)a;
		next = (int)b + 1;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	if (!n)
		return -1;
	o->stage_first[n] = next;
	o->nstages = n;
	return 0;
}

const char *tr_shuffle_name(int value)
{
	return rio_shuffle_name((rio_shuffle)value);
}

const char *tr_sharding_name(int value)
{
	return rio_sharding_name((rio_sharding)value);
}

const char *tr_pipe_schedule_name(int value)
{
	static const char *const names[] = {[TR_PIPE_1F1B] = "1f1b", [TR_PIPE_GPIPE] = "gpipe",
	                                    [TR_PIPE_SEQUENTIAL] = "sequential",
	                                    [TR_PIPE_ASYNC] = "async",
	                                    [TR_PIPE_EAGER_1F1B] = "eager-1f1b"};
	return value >= 0 && value < (int)(sizeof names / sizeof *names) ? names[value] : NULL;
}

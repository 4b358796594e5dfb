/*
 * ctr_gen.c — a synthetic click-through dataset for the embedding
 * benchmarks (doc/embeddings.md), after DLRM's synthetic generator:
 * tf.train.Example records with categorical int64 features whose ids
 * follow a Zipf law, dense float features, and a 0/1 label from a planted
 * model a network with embeddings can learn.
 *
 * Record i (all of it from the seed and i alone, so the data does not
 * depend on the shard count):
 *   catF   int64 x K  ids of feature F: Zipf ranks over [0, VOCAB), each
 *                     rank mapped through a fixed permutation of the vocab
 *                     (per feature) so popular ids are spread, not 0, 1, 2
 *   dense  float x D  uniform in [0, 1)
 *   label  int64 x 1  1 when the planted logit > 0
 * Planted logit: sum over F of w_F . mean over its K ids of e(F, id), scaled
 * to unit variance, plus 0.5 * v . (dense centred and scaled), plus
 * NOISE * N(0, 1), minus a bias (the median logit of a pilot sample, so
 * that about half the labels are 1); e(F, id) is PLANT_DIM floats from a
 * hash of (seed, F, id), so no vocab-sized table exists even at 10^7 ids,
 * and w_F, v are random vectors of the seed.
 *
 * Shards PREFIX-SSSSS-of-NNNNN.tfrecord, each written by rio_writer (under a
 * temporary name, renamed when complete), record i in shard s when
 * s * n / S <= i < (s + 1) * n / S. A summary line on stdout.
 */
#include "config.h"
#include "common.h"
#include "rng.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PLANT_DIM = 8, PILOT = 4095, MAX_FEATURES = 1000, MAX_IDS = 1024, MAX_DENSE = 100000 };

typedef struct config {
	uint64_t records, shards, features, vocab, ids, dense, seed;
	double zipf, noise;
	const char *prefix;
} config;

/* ---- Zipf ranks: rejection-inversion (Hörmann and Derflinger 1996, as in
 * Apache Commons' RejectionInversionZipfSampler): O(1) a draw, no table,
 * any exponent > 0. Ranks 1..n with P(k) proportional to k^-s. */
typedef struct zipf {
	double n, s, h_x1, h_n, shift;
} zipf;

static double helper1(double x) /* log1p(x) / x */
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x) /* expm1(x) / x */
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

static double zipf_h(const zipf *z, double x) { return exp(-z->s * log(x)); }

static double zipf_hint(const zipf *z, double x) /* the integral of h */
{
	double lx = log(x);
	return helper2((1 - z->s) * lx) * lx;
}

static double zipf_hint_inv(const zipf *z, double x)
{
	double t = x * (1 - z->s);
	if (t < -1)
		t = -1;
	return exp(helper1(t) * x);
}

static void zipf_init(zipf *z, double n, double s)
{
	z->n = n;
	z->s = s;
	z->h_x1 = zipf_hint(z, 1.5) - 1;
	z->h_n = zipf_hint(z, n + 0.5);
	z->shift = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
}

/* A rank in [0, n): 0 the most frequent. */
static uint64_t zipf_draw(const zipf *z, rio__rng *r)
{
	if (z->s == 0)
		return rio__rng_below(r, (uint64_t)z->n);
	for (;;) {
		double u01 = (double)(rio__rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
		double u = z->h_n + u01 * (z->h_x1 - z->h_n);
		double x = zipf_hint_inv(z, u), k = floor(x + 0.5);
		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->shift || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k - 1;
	}
}

/* ---- a keyed permutation of [0, vocab): rounds of multiply by an odd
 * number, xor-shift and add over the smallest power of two >= vocab (each a
 * bijection there), cycle-walked back into [0, vocab). */
typedef struct perm {
	uint64_t vocab, mask, mul[3], add[3];
	int shift;
} perm;

static void perm_init(perm *p, uint64_t vocab, uint64_t seed, uint64_t feature)
{
	int bits = 0;
	while (bits < 63 && (1ull << bits) < vocab)
		bits++;
	p->vocab = vocab;
	p->mask = bits ? (~0ull >> (64 - bits)) : 0;
	p->shift = bits / 2 + 1;
	rio__rng r;
	rio__rng_seed(&r, seed, feature, 0x7065726d /* "perm" */, 0);
	for (int i = 0; i < 3; i++) {
		p->mul[i] = rio__rng_next(&r) | 1;
		p->add[i] = rio__rng_next(&r);
	}
}

static uint64_t perm_apply(const perm *p, uint64_t x)
{
	do {
		for (int i = 0; i < 3; i++) {
			x = (x * p->mul[i]) & p->mask;
			x ^= x >> p->shift;
			x = (x + p->add[i]) & p->mask;
		}
	} while (x >= p->vocab);
	return x;
}

/* ---- the planted model -------------------------------------------------- */

/* Uniform with unit variance: (2u - 1) * sqrt(3). */
static float unit_var(rio__rng *r) { return (2.0f * rio__rng_float(r) - 1.0f) * 1.7320508f; }

/* e(feature, id): PLANT_DIM floats from a hash of (seed, feature, id). */
static void planted_embedding(uint64_t seed, uint64_t feature, int64_t id, float *e)
{
	rio__rng r;
	rio__rng_seed(&r, seed, feature, (uint64_t)id, 0x656d62 /* "emb" */);
	for (int j = 0; j < PLANT_DIM; j++)
		e[j] = unit_var(&r);
}

static double gaussian(rio__rng *r) /* Box-Muller, one of the pair */
{
	double u1 = ((double)(rio__rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
	double u2 = (double)(rio__rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

typedef struct gen {
	config c;
	zipf z;
	perm *perm;    /* per feature                   */
	float *w;      /* features x PLANT_DIM          */
	float *v;      /* dense                         */
	int64_t *ids;  /* features x ids: one record's  */
	float *x;      /* dense: one record's           */
	char (*name)[16];
	double bias;   /* the planted model's: labels near half 1s */
	rio_example_builder b;
} gen;

/* One record's ids (g->ids) and dense values (g->x) from r; returns its
 * planted logit before the bias. */
static double draw_record(gen *g, rio__rng *r)
{
	const config *c = &g->c;
	double cat = 0, dense = 0;
	float e[PLANT_DIM];
	for (uint64_t f = 0; f < c->features; f++) {
		int64_t *ids = g->ids + f * c->ids;
		float pooled[PLANT_DIM] = {0};
		for (uint64_t k = 0; k < c->ids; k++) {
			ids[k] = (int64_t)perm_apply(&g->perm[f], zipf_draw(&g->z, r));
			planted_embedding(c->seed, f, ids[k], e);
			for (int j = 0; j < PLANT_DIM; j++)
				pooled[j] += e[j];
		}
		for (int j = 0; j < PLANT_DIM; j++)
			cat += (double)g->w[f * PLANT_DIM + j] * pooled[j] / (double)c->ids;
	}
	for (uint64_t j = 0; j < c->dense; j++) {
		g->x[j] = rio__rng_float(r);
		dense += (double)g->v[j] * (g->x[j] - 0.5) * 3.4641016; /* sqrt(12) */
	}
	return cat / sqrt((double)c->features * PLANT_DIM) +
	       (c->dense ? 0.5 * dense / sqrt((double)c->dense) : 0.0) + c->noise * gaussian(r);
}

/* Record i into g->b: returns its label, or -1 out of memory. */
static int make_record(gen *g, uint64_t i)
{
	const config *c = &g->c;
	rio__rng r;
	rio__rng_seed(&r, c->seed, i, 0x637472 /* "ctr" */, 0);
	double logit = draw_record(g, &r) - g->bias;
	int64_t label = logit > 0;
	rio_example_builder_reset(&g->b);
	int rc = 0;
	for (uint64_t f = 0; f < c->features && rc == 0; f++)
		rc = rio_example_add_int64s(&g->b, g->name[f], g->ids + f * c->ids, c->ids);
	if (rc == 0 && c->dense)
		rc = rio_example_add_floats(&g->b, "dense", g->x, c->dense);
	if (rc == 0)
		rc = rio_example_add_int64s(&g->b, "label", &label, 1);
	return rc ? -1 : (int)label;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int gen_init(gen *g, const config *c)
{
	memset(g, 0, sizeof *g);
	g->c = *c;
	zipf_init(&g->z, (double)c->vocab, c->zipf);
	g->perm = calloc(c->features, sizeof *g->perm);
	g->w = calloc(c->features * PLANT_DIM, sizeof *g->w);
	g->v = calloc(c->dense + 1, sizeof *g->v);
	g->ids = calloc(c->features * c->ids, sizeof *g->ids);
	g->x = calloc(c->dense + 1, sizeof *g->x);
	g->name = calloc(c->features, sizeof *g->name);
	rio_example_builder_init(&g->b);
	if (!g->perm || !g->w || !g->v || !g->ids || !g->x || !g->name)
		return -1;
	rio__rng r;
	rio__rng_seed(&r, c->seed, 0, 0x706c616e /* "plan" */, 0);
	for (uint64_t f = 0; f < c->features; f++) {
		perm_init(&g->perm[f], c->vocab, c->seed, f);
		snprintf(g->name[f], sizeof g->name[f], "cat%u", (unsigned)f);
		for (int j = 0; j < PLANT_DIM; j++)
			g->w[f * PLANT_DIM + j] = unit_var(&r);
	}
	for (uint64_t j = 0; j < c->dense; j++)
		g->v[j] = unit_var(&r);
	/* the bias: the median logit of PILOT records of their own stream (the
	 * popular ids' fixed embeddings give the logits a mean far from 0) */
	double pilot[PILOT];
	rio__rng_seed(&r, c->seed, 0, 0x70696c6f74 /* "pilot" */, 0);
	for (int i = 0; i < PILOT; i++)
		pilot[i] = draw_record(g, &r);
	qsort(pilot, PILOT, sizeof *pilot, cmp_double);
	g->bias = pilot[PILOT / 2];
	return 0;
}

static void gen_free(gen *g)
{
	free(g->perm);
	free(g->w);
	free(g->v);
	free(g->ids);
	free(g->x);
	free(g->name);
	rio_example_builder_free(&g->b);
}

/* ---- the command -------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: ctr_gen -o PREFIX [OPTION]...\n"
	        "Write a synthetic click-through dataset: tf.train.Example records with\n"
	        "categorical features cat0..catN-1 (int64, Zipf-distributed ids), a float\n"
	        "list 'dense' and an int64 'label' from a planted model, as shards\n"
	        "PREFIX-SSSSS-of-NNNNN.tfrecord (existing regular files of that name\n"
	        "replaced; anything else there is refused before a shard is written, and\n"
	        "a shard that fails removes the ones written before it).\n"
	        "\n"
	        "  -o, --output PREFIX   output prefix (required)\n"
	        "  -n, --records N       records in all (default 100000)\n"
	        "  -s, --shards N        shards, 1 to 99999 (default 1)\n"
	        "  -f, --features N      categorical features, 1 to %d (default 8)\n"
	        "  -V, --vocab N         ids per feature, 1 to 10^12 (default 100000)\n"
	        "  -k, --ids N           ids per record and feature, 1 to %d (default 1)\n"
	        "  -z, --zipf S          Zipf exponent, 0 (uniform) to 10 (default 1.05)\n"
	        "  -d, --dense N         dense features, 0 to %d (default 13)\n"
	        "      --noise X         label noise: the planted logit's N(0, X^2) term,\n"
	        "                        0 to 100 (default 0.3)\n"
	        "      --seed N          seed (default 1): the same seed, the same bytes\n"
	        "  -h, --help            show this help and exit\n"
	        "\n"
	        "Exit status: 0 success, 1 a shard could not be written, 2 usage error.\n",
	        MAX_FEATURES, MAX_IDS, MAX_DENSE);
}

static uint64_t parse_range(const char *option, const char *value, uint64_t lo, uint64_t hi)
{
	uint64_t v = tool_parse_u64(option, value);
	if (v < lo || v > hi)
		tool_usage_error("%s: %s is out of range (%llu to %llu)", option, value,
		                 (unsigned long long)lo, (unsigned long long)hi);
	return v;
}

static double parse_real(const char *option, const char *value, double lo, double hi)
{
	char *end;
	double v = strtod(value, &end);
	if (end == value || *end || !isfinite(v))
		tool_usage_error("%s: expected a number, got '%s'", option, value);
	if (v < lo || v > hi)
		tool_usage_error("%s: %s is out of range (%g to %g)", option, value, lo, hi);
	return v;
}

/* Shard s's name in path[4096]; -1 (said) when it is too long. */
static int shard_path(const config *c, uint64_t s, char *path)
{
	if ((size_t)snprintf(path, 4096, "%s-%05u-of-%05u.tfrecord", c->prefix, (unsigned)s,
	                     (unsigned)c->shards) >= 4096) {
		tool_error("%s: output name too long", c->prefix);
		return -1;
	}
	return 0;
}

/* Shard s, written atomically (rio_writer). -1 with why[] saying what
 * failed (after the path). */
static int write_shard(gen *g, uint64_t s, const char *path, uint64_t *positives, char *why,
                       size_t n)
{
	const config *c = &g->c;
	rio_writer *w;
	int rc = rio_writer_open(&w, path, NULL);
	if (rc) {
		snprintf(why, n, "%s", rio_strerror(rc));
		return -1;
	}
	uint64_t first = s * c->records / c->shards, end = (s + 1) * c->records / c->shards;
	for (uint64_t i = first; i < end && !tool_interrupted; i++) {
		int label = make_record(g, i);
		const uint8_t *data;
		size_t size;
		if (label < 0 || rio_example_finish(&g->b, &data, &size)) {
			snprintf(why, n, "record %llu: out of memory", (unsigned long long)i);
			rio_writer_abort(w);
			return -1;
		}
		if (rio_writer_write(w, data, size, NULL)) {
			snprintf(why, n, "record %llu: %s", (unsigned long long)i,
			         rio_writer_error(w)->message);
			rio_writer_abort(w);
			return -1;
		}
		*positives += (uint64_t)label;
	}
	if (tool_interrupted) {
		snprintf(why, n, "interrupted");
		rio_writer_abort(w);
		return -1;
	}
	if ((rc = rio_writer_close(w)) != 0) {
		snprintf(why, n, "cannot finish the shard: %s", rio_strerror(rc));
		return -1;
	}
	return 0;
}

/* Every shard, one after the other. What is under a shard's name and is
 * not a regular file is refused before anything is written; and when a
 * shard fails, the ones this run wrote before it are removed (and said):
 * beside an earlier run's shards they would make a set that looks whole
 * and mixes two datasets. */
static int write_shards(gen *g, uint64_t *positives)
{
	const config *c = &g->c;
	char path[4096], why[1024];
	for (uint64_t s = 0; s < c->shards; s++) {
		rio_error e;
		if (shard_path(c, s, path) < 0)
			return -1;
		if (rio_output_check(path, &e) < 0) {
			tool_error("%s", e.message);
			return -1;
		}
	}
	for (uint64_t s = 0; s < c->shards; s++) {
		if (shard_path(c, s, path) < 0)
			return -1;
		if (write_shard(g, s, path, positives, why, sizeof why) == 0)
			continue;
		char done[128] = "";
		if (s)
			snprintf(done, sizeof done, "; the %llu shard%s before it removed (no set "
			         "mixes two runs)", (unsigned long long)s, s > 1 ? "s" : "");
		tool_error("%s: %s%s", path, why, done);
		for (uint64_t k = 0; k < s; k++)
			if (shard_path(c, k, path) == 0)
				unlink(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'}, {"records", required_argument, NULL, 'n'},
		{"shards", required_argument, NULL, 's'}, {"features", required_argument, NULL, 'f'},
		{"vocab", required_argument, NULL, 'V'},  {"ids", required_argument, NULL, 'k'},
		{"zipf", required_argument, NULL, 'z'},   {"dense", required_argument, NULL, 'd'},
		{"noise", required_argument, NULL, 'N'},  {"seed", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	config c = {.records = 100000, .shards = 1, .features = 8, .vocab = 100000, .ids = 1,
	            .dense = 13, .seed = 1, .zipf = 1.05, .noise = 0.3};
	int opt;
	tool_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "o:n:s:f:V:k:z:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': c.prefix = optarg; break;
		case 'n': c.records = parse_range("--records", optarg, 0, UINT64_MAX / 100000); break;
		case 's': c.shards = parse_range("--shards", optarg, 1, 99999); break;
		case 'f': c.features = parse_range("--features", optarg, 1, MAX_FEATURES); break;
		case 'V': c.vocab = parse_range("--vocab", optarg, 1, 1000000000000ull); break;
		case 'k': c.ids = parse_range("--ids", optarg, 1, MAX_IDS); break;
		case 'z': c.zipf = parse_real("--zipf", optarg, 0, 10); break;
		case 'd': c.dense = parse_range("--dense", optarg, 0, MAX_DENSE); break;
		case 'N': c.noise = parse_real("--noise", optarg, 0, 100); break;
		case 'S': c.seed = tool_parse_u64("--seed", optarg); break;
		case 'h': usage(stdout); return EXIT_OK;
		default: tool_try_help();
		}
	}
	if (optind < argc)
		tool_usage_error("unexpected argument '%s'", argv[optind]);
	if (!c.prefix || !*c.prefix)
		tool_usage_error("--output: an output prefix is required");
	tool_check_output_prefix("--output", c.prefix);
	tool_refuse_output_dir("--output", c.prefix);
	tool_catch_signals();
	gen g;
	uint64_t positives = 0;
	int rc = gen_init(&g, &c);
	if (rc)
		tool_error("out of memory");
	else
		rc = write_shards(&g, &positives);
	gen_free(&g);
	if (rc)
		return EXIT_DATA;
	printf("%llu records in %llu shards %s-*-of-%05u.tfrecord: %llu labels 1 (%.1f%%), "
	       "%llu features x %llu ids over %llu, zipf %g, %llu dense, seed %llu\n",
	       (unsigned long long)c.records, (unsigned long long)c.shards, c.prefix,
	       (unsigned)c.shards, (unsigned long long)positives,
	       c.records ? 100.0 * (double)positives / (double)c.records : 0.0,
	       (unsigned long long)c.features, (unsigned long long)c.ids,
	       (unsigned long long)c.vocab, c.zipf, (unsigned long long)c.dense,
	       (unsigned long long)c.seed);
	return tool_flush_stdout() ? EXIT_DATA : EXIT_OK;
}

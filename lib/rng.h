/*
 * rng.h — a small, seedable, fast pseudo-random generator (xoshiro256**,
 * seeded through splitmix64), for shuffling. Header-only and stateless
 * apart from the rio__rng value the caller owns, so two loaders never share
 * a stream. Not for cryptography.
 */
#ifndef RIO_RNG_H
#define RIO_RNG_H

#include <stdint.h>

typedef struct rio__rng {
	uint64_t s[4];
} rio__rng;

static inline uint64_t rio__splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seeds from several words (seed, epoch, rank, purpose...): each word is
 * mixed in, so streams for different tuples are unrelated. */
static inline void rio__rng_seed(rio__rng *r, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t x = a;
	x = rio__splitmix64(&x) ^ b;
	x = rio__splitmix64(&x) ^ c;
	x = rio__splitmix64(&x) ^ d;
	for (int i = 0; i < 4; i++)
		r->s[i] = rio__splitmix64(&x);
}

static inline uint64_t rio__rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rio__rng_next(rio__rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rio__rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rio__rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n), n > 0 (Lemire's multiply-and-reject: no modulo bias). */
static inline uint64_t rio__rng_below(rio__rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rio__rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = -n % n;
		while (low < threshold) {
			m = (unsigned __int128)rio__rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Uniform in [0, 1): 24 random bits, so every float of the grid k / 2^24 is
 * equally likely (the trainer's initialisations and synthetic data). */
static inline float rio__rng_float(rio__rng *r)
{
	return (float)(rio__rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

#endif /* RIO_RNG_H */

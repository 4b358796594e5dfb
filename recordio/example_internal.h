/*
 * example_internal.h — the pieces of the Example decoder that the
 * SequenceExample decoder and the payload inspection reuse (a FeatureList
 * holds the same Feature messages an Example's map does); not installed.
 */
#ifndef RIO_EXAMPLE_INTERNAL_H
#define RIO_EXAMPLE_INTERNAL_H

#include "recordio.h"

/* Parses a Feature message body [p, end) into f's kind, count and list (the
 * last list set wins; f->name is left alone). With `deep`, checks every
 * value of every list in it, not only of the one that wins. Returns 0 or
 * RIO_EBADEXAMPLE. */
int rio__feature_parse(const uint8_t *p, const uint8_t *end, int deep, rio_feature *f);

/* The key of a map entry body (key = 1; the last one given; NULL and 0 when none)
 * without parsing its value. Returns 0 or RIO_EBADEXAMPLE. */
int rio__entry_key(const uint8_t *p, const uint8_t *end, const uint8_t **key, size_t *key_len);

#endif /* RIO_EXAMPLE_INTERNAL_H */

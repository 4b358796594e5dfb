/*
 * listed.c — the objects a client's listings gave, kept by URL with their
 * size and ETag (rio__remote_keep_listed in remote.h), so that opening a
 * listed object needs no request of its own: the loader lists a set once
 * and opens its shards from the listing (with a shard cache, the copies
 * are read with no round trip per shard at all).
 */
#include "config.h"

#include "client.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rio__known {
	char *url;
	uint64_t size;
	char *etag;
	size_t seq; /* later listings win over earlier ones of the same URL */
};

static int by_url_then_seq(const void *a, const void *b)
{
	const struct rio__known *x = a, *y = b;
	int c = strcmp(x->url, y->url);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int by_url(const void *key, const void *e)
{
	return strcmp(key, ((const struct rio__known *)e)->url);
}

void rio__remote_keep_listed(rio__remote *r)
{
	pthread_mutex_lock(&r->mu);
	r->keep_listed = 1;
	pthread_mutex_unlock(&r->mu);
}

int rio__remote_keeps_listed(rio__remote *r)
{
	pthread_mutex_lock(&r->mu);
	int keep = r->keep_listed;
	pthread_mutex_unlock(&r->mu);
	return keep;
}

/* Sorted by URL, one entry a URL (the latest listed): under r->mu. */
static void settle(rio__remote *r)
{
	if (r->known_sorted)
		return;
	qsort(r->known, r->nknown, sizeof *r->known, by_url_then_seq);
	size_t n = 0;
	for (size_t i = 0; i < r->nknown; i++) {
		if (n && !strcmp(r->known[n - 1].url, r->known[i].url)) {
			free(r->known[n - 1].url);
			free(r->known[n - 1].etag);
			n--;
		}
		r->known[n++] = r->known[i];
	}
	r->nknown = n;
	r->known_sorted = 1;
}

int rio__client_note_listed(rio__remote *r, const char *bucket, const rio__listing *l,
                            size_t from)
{
	pthread_mutex_lock(&r->mu);
	int rc = 0;
	for (size_t i = from; r->keep_listed && rc == 0 && i < l->n; i++) {
		const rio__listed *it = &l->items[i];
		/* a weak ETag cannot be sent with If-Match: such an object is
		 * opened with a request, as unlisted */
		if (it->is_prefix || !it->etag || !strncmp(it->etag, "W/", 2))
			continue;
		if (rio__grow(&r->known, &r->capknown, r->nknown + 1, sizeof *r->known, 64)) {
			rc = -ENOMEM;
			break;
		}
		size_t n = 5 + strlen(bucket) + 1 + strlen(it->key) + 1;
		char *url = malloc(n), *etag = strdup(it->etag);
		if (!url || !etag) {
			free(url);
			free(etag);
			rc = -ENOMEM;
			break;
		}
		snprintf(url, n, "s3://%s/%s", bucket, it->key);
		r->known[r->nknown++] = (struct rio__known){url, it->size, etag, r->known_seq++};
		r->known_sorted = 0;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

int rio__client_listed(rio__remote *r, const char *url, uint64_t *size, char *etag,
                       size_t cap)
{
	pthread_mutex_lock(&r->mu);
	settle(r);
	const struct rio__known *k =
	    r->nknown ? bsearch(url, r->known, r->nknown, sizeof *r->known, by_url) : NULL;
	int found = k && strlen(k->etag) < cap;
	if (found) {
		*size = k->size;
		memcpy(etag, k->etag, strlen(k->etag) + 1);
	}
	pthread_mutex_unlock(&r->mu);
	return found;
}

void rio__client_listed_free(rio__remote *r)
{
	for (size_t i = 0; i < r->nknown; i++) {
		free(r->known[i].url);
		free(r->known[i].etag);
	}
	free(r->known);
	r->known = NULL;
	r->nknown = r->capknown = 0;
}

int rio__remote_is_listed(rio__remote *r, const char *url)
{
	uint64_t size;
	char etag[192];
	return rio__client_listed(r, url, &size, etag, sizeof etag);
}

/*
 * client.c — a rio__remote: the options, the AWS settings read once, the
 * request URLs, the curl handles it lends and shares connections between,
 * and the pause before a retry (client.h, remote.h).
 */
#include "config.h"
#include "client.h"

#include "engine.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN
#define BACKOFF_BASE 0.1 /* seconds: the first retry waits up to this */
#define BACKOFF_CAP 20.0

/* ---- the client ------------------------------------------------------------- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
	rio__remote *r = arg;
	pthread_mutex_lock(&r->share_mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
	rio__remote *r = arg;
	pthread_mutex_unlock(&r->share_mu[data]);
}

int rio__remote_open(rio__remote **out, const rio_remote_opts *opts, rio_error *err)
{
	*out = NULL;
	rio_remote_opts defaults;
	if (!opts) {
		rio_remote_opts_init(&defaults);
		opts = &defaults;
	}
	int rc = rio_remote_opts_check(opts, err);
	if (rc < 0)
		return rc;
	/* curl's process-wide setup: counted, so each client's open and close
	 * pair up (thread-safe from curl 7.84 on) */
	CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (cc != CURLE_OK)
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, "libcurl: %s",
		                      curl_easy_strerror(cc));
	rio__remote *r = calloc(1, sizeof *r);
	if (!r) {
		curl_global_cleanup();
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	}
	r->opts = *opts;
	pthread_mutex_init(&r->mu, NULL);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&r->share_mu[i], NULL);
	uint64_t seed = (uint64_t)(rio__now() * 1e9);
	rio__rng_seed(&r->rng, seed, (uint64_t)(uintptr_t)r, 0, 0);
	r->share = curl_share_init();
	if (!r->share || curl_share_setopt(r->share, CURLSHOPT_LOCKFUNC, share_lock) ||
	    curl_share_setopt(r->share, CURLSHOPT_UNLOCKFUNC, share_unlock) ||
	    curl_share_setopt(r->share, CURLSHOPT_USERDATA, r) ||
	    curl_share_setopt(r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) ||
	    curl_share_setopt(r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) ||
	    curl_share_setopt(r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT)) {
		rio__remote_close(r);
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, "cannot set up curl's sharing");
	}
	*out = r;
	return 0;
}

void rio__remote_close(rio__remote *r)
{
	if (!r)
		return;
	rio__engine_close(r->engine);
	for (size_t i = 0; i < r->nidle; i++)
		curl_easy_cleanup(r->idle[i]);
	for (size_t i = 0; i < r->nbufs; i++)
		free(r->bufs[i].buf);
	if (r->share)
		curl_share_cleanup(r->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&r->share_mu[i]);
	rio__client_listed_free(r);
	pthread_mutex_destroy(&r->mu);
	free(r);
	curl_global_cleanup();
}

const rio_remote_opts *rio__remote_opts(const rio__remote *r)
{
	return &r->opts;
}

int rio__client_aws(rio__remote *r, const rio__aws_config **cfg, rio_error *err)
{
	pthread_mutex_lock(&r->mu);
	if (!r->aws_loaded) {
		rio__error_clear(&r->aws_err);
		r->aws_rc = rio__aws_config_load(&r->aws, &r->aws_err);
		const char *e = r->aws.endpoint;
		if (r->aws_rc == 0 && e[0] && (!rio__url_is_remote(e) || rio__url_is_s3(e)))
			r->aws_rc = rio__error_set(&r->aws_err, -EINVAL, e, UNK, UNK,
			                           "the S3 endpoint (AWS_ENDPOINT_URL_S3, "
			                           "AWS_ENDPOINT_URL or endpoint_url) must be an "
			                           "http:// or https:// URL");
		r->aws_loaded = 1;
	}
	int rc = r->aws_rc;
	if (rc < 0 && err)
		*err = r->aws_err;
	pthread_mutex_unlock(&r->mu);
	*cfg = &r->aws;
	return rc;
}

int rio__client_s3_url(rio__remote *r, const char *bucket, const char *key, const char *query,
                       rio__text *out, rio_error *err)
{
	const rio__aws_config *aws;
	int rc = rio__client_aws(r, &aws, err);
	if (rc < 0)
		return rc;
	rio__text_clear(out);
	if (aws->endpoint[0])
		rio__text_printf(out, "%s/%s/", aws->endpoint, bucket);
	else if (strchr(bucket, '.'))
		rio__text_printf(out, "https://s3.%s.amazonaws.com/%s/", aws->region, bucket);
	else
		rio__text_printf(out, "https://%s.s3.%s.amazonaws.com/", bucket, aws->region);
	rio__text_uri_encode(out, key, strlen(key), 1);
	if (query && *query)
		rio__text_printf(out, "?%s", query);
	if (out->failed)
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	return 0;
}

int rio__client_url(rio__remote *r, const char *url, rio__text *out, int *s3, rio_error *err)
{
	rio__url u;
	int rc = rio__url_parse(url, &u, err);
	*s3 = rc == 0 && u.kind == RIO__URL_S3;
	if (rc == 0 && *s3)
		rc = rio__client_s3_url(r, u.bucket, u.key, NULL, out, err);
	else if (rc == 0) {
		rio__text_clear(out);
		if (rio__text_puts(out, u.url))
			rc = rio__error_set(err, -ENOMEM, url, UNK, UNK, NULL);
	}
	rio__url_free(&u);
	return rc;
}

CURL *rio__client_easy_new(rio__remote *r)
{
	return curl_easy_init();
}

CURL *rio__client_easy_take(rio__remote *r)
{
	CURL *h = NULL;
	pthread_mutex_lock(&r->mu);
	if (r->nidle)
		h = r->idle[--r->nidle];
	pthread_mutex_unlock(&r->mu);
	return h ? h : rio__client_easy_new(r);
}

void rio__client_easy_give(rio__remote *r, CURL *h)
{
	pthread_mutex_lock(&r->mu);
	if (r->nidle < RIO__EASY_POOL) {
		r->idle[r->nidle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	if (h)
		curl_easy_cleanup(h);
}

void *rio__client_buf_take(rio__remote *r, size_t len, size_t *cap)
{
	void *b = NULL;
	pthread_mutex_lock(&r->mu);
	size_t best = r->nbufs;
	for (size_t i = 0; i < r->nbufs; i++) /* the smallest that holds len */
		if (r->bufs[i].cap >= len && (best == r->nbufs || r->bufs[i].cap < r->bufs[best].cap))
			best = i;
	if (best < r->nbufs) {
		b = r->bufs[best].buf;
		*cap = r->bufs[best].cap;
		r->bufs[best] = r->bufs[--r->nbufs];
	}
	pthread_mutex_unlock(&r->mu);
	if (!b && (b = rio__huge_alloc(64, len)))
		*cap = len;
	return b;
}

void rio__client_buf_give(rio__remote *r, void *buf, size_t cap)
{
	if (!buf)
		return;
	pthread_mutex_lock(&r->mu);
	if (r->nbufs < RIO__BUF_POOL) {
		r->bufs[r->nbufs++] = (rio__part_buf){buf, cap};
		buf = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	free(buf);
}

double rio__client_backoff(rio__remote *r, unsigned attempt)
{
	double ceiling = BACKOFF_BASE;
	for (unsigned i = 1; i < attempt && ceiling < BACKOFF_CAP; i++)
		ceiling *= 2;
	if (ceiling > BACKOFF_CAP)
		ceiling = BACKOFF_CAP;
	pthread_mutex_lock(&r->mu);
	uint64_t x = rio__rng_next(&r->rng) >> 11;
	pthread_mutex_unlock(&r->mu);
	return ceiling * ((double)x / 9007199254740992.0);
}

void rio__remote_gets_time(rio__remote *r, double *busy, double *gets)
{
	*busy = *gets = 0;
	pthread_mutex_lock(&r->mu);
	if (r->engine)
		rio__engine_time(r->engine, busy, gets);
	pthread_mutex_unlock(&r->mu);
}

struct rio__engine *rio__client_engine(rio__remote *r, rio_error *err)
{
	pthread_mutex_lock(&r->mu);
	int rc = 0;
	if (!r->engine)
		rc = rio__engine_open(&r->engine, r, err);
	struct rio__engine *e = r->engine;
	pthread_mutex_unlock(&r->mu);
	return rc < 0 ? NULL : e;
}

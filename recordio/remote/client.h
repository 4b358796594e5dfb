/*
 * client.h — the inside of a rio__remote (remote.h), shared by the remote
 * client's files: its options, the AWS settings read once, the curl
 * handles it lends, the engine, and how long to wait before a retry.
 */
#ifndef RIO_REMOTE_CLIENT_H
#define RIO_REMOTE_CLIENT_H

#include "aws_config.h"
#include "remote.h"
#include "rng.h"
#include "text.h"
#include "url.h"

#include <curl/curl.h>
#include <pthread.h>

struct rio__engine;

#define RIO__EASY_POOL 8 /* idle handles kept for one-off requests */
#define RIO__BUF_POOL 16 /* streams' part buffers kept between streams */

typedef struct rio__part_buf {
	void *buf;
	size_t cap;
} rio__part_buf;

struct rio__remote {
	rio_remote_opts opts;
	pthread_mutex_t mu;          /* guards everything below             */
	int aws_loaded;              /* aws (or aws_rc) is set               */
	int aws_rc;
	rio_error aws_err;
	rio__aws_config aws;
	CURL *idle[RIO__EASY_POOL];  /* handles for rio__http_run, with
	                              * their connections                    */
	size_t nidle;
	CURLSH *share;               /* DNS, TLS sessions and connections
	                              * shared by every handle of the client */
	pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
	struct rio__engine *engine;  /* started at the first ranged read     */
	rio__part_buf bufs[RIO__BUF_POOL]; /* part buffers given back        */
	size_t nbufs;
	rio__rng rng;                /* the retries' jitter                  */
	int keep_listed;             /* listed.c: listings' objects kept     */
	size_t first_room;           /* bytes opens may still take as first
	                              * parts (rio__remote_first_parts)     */
	struct rio__known *known;    /* ... by URL (sorted when known_sorted) */
	size_t nknown, capknown, known_seq;
	int known_sorted;
};

/* listed.c (rio__remote_keep_listed): notes the objects of l from item
 * `from` on, listed from `bucket`, when r keeps them (0 or -ENOMEM); 1
 * with the size and ETag of the object at `url` (an s3:// URL) when a
 * listing gave it, else 0; frees them. */
int rio__client_note_listed(rio__remote *r, const char *bucket, const rio__listing *l,
                            size_t from);
int rio__client_listed(rio__remote *r, const char *url, uint64_t *size, char *etag,
                       size_t cap);
void rio__client_listed_free(rio__remote *r);

/* The AWS settings, read at the first call (under r->mu). 0, or the error
 * reading them gave (the same every call). */
int rio__client_aws(rio__remote *r, const rio__aws_config **cfg, rio_error *err);

/* The request URL of S3 object `key` of `bucket` (key "" and a query
 * such as "list-type=2&prefix=x": the bucket itself): path-style under a
 * configured endpoint, else AWS's virtual-hosted
 * https://BUCKET.s3.REGION.amazonaws.com/KEY (path-style there too for a
 * bucket with dots, which TLS names cannot hold). The key is URI-encoded
 * ('/' kept); `query` is taken as given: its parameters sorted by name and
 * encoded (curl 7.88's signing does not sort them). */
int rio__client_s3_url(rio__remote *r, const char *bucket, const char *key, const char *query,
                       rio__text *out, rio_error *err);

/* The request URL for a user's URL: for s3:// the above, for http(s)://
 * itself. *s3 says which. */
int rio__client_url(rio__remote *r, const char *url, rio__text *out, int *s3, rio_error *err);

/* A curl handle for one request on the calling thread (from the pool, or
 * new), and its return. NULL when curl cannot make one. */
CURL *rio__client_easy_take(rio__remote *r);
void rio__client_easy_give(rio__remote *r, CURL *h);
/* A new handle that shares r's connections (the engine's own). */
CURL *rio__client_easy_new(rio__remote *r);

/* A stream's part buffer of `len` bytes or more (*cap: its size): one
 * given back by a stream before, else a new one (rio__huge_alloc); NULL
 * on ENOMEM. Given back when the stream closes, it is kept for the next
 * stream (RIO__BUF_POOL of them at most, freed with the client), so that
 * the shard cache's downloads, one stream a shard, do not fault and zero
 * fresh memory for each. */
void *rio__client_buf_take(rio__remote *r, size_t len, size_t *cap);
void rio__client_buf_give(rio__remote *r, void *buf, size_t cap);

/* The pause before try number `attempt` + 1 (attempt >= 1): a uniform
 * random fraction of min(20 s, 0.1 s * 2^(attempt - 1)) ("full jitter",
 * as the AWS SDKs wait). */
double rio__client_backoff(rio__remote *r, unsigned attempt);

/* The engine: ranged GETs run `inflight` at a time on its own thread. */
struct rio__engine *rio__client_engine(rio__remote *r, rio_error *err);

#endif /* RIO_REMOTE_CLIENT_H */

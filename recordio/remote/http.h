/*
 * http.h — one HTTP request to S3 or a web server on a curl easy handle,
 * and what came back.
 *
 * The caller fills a rio__http with the request (method, URL, Range,
 * If-Match, a body from memory or from a file, where the answer's body
 * goes), rio__http_prepare() sets a handle up for it (SigV4 signing through
 * CURLOPT_AWS_SIGV4 with x-amz-content-sha256 and the session token, the
 * stall limits, the callbacks), curl runs it (the engine, with many at
 * once, or rio__http_run() here, alone), and rio__http_verdict() says what
 * it came to: done, worth another try, or failed for good, with the error
 * code; rio__http_error() puts the one-line message together (the URL, the
 * HTTP status, S3's error code and message, or curl's error).
 *
 * A ranged GET into a buffer that breaks off is resumed where it broke:
 * rio__http_advance() moves the range past the bytes that arrived.
 */
#ifndef RIO_REMOTE_HTTP_H
#define RIO_REMOTE_HTTP_H

#include "remote.h"
#include "text.h"

#include <curl/curl.h>

/* The most bytes of an error document kept. */
#define RIO__HTTP_ERRBODY_MAX (64u * 1024u)

typedef struct rio__http {
	/* ---- the request (the caller's) ---- */
	const char *method;   /* "GET" (NULL too), "HEAD", "PUT", "POST", "DELETE" */
	const char *url;      /* the request URL                             */
	const char *name;     /* the URL the user gave, for messages         */
	int s3;               /* an S3 request: signed unless anonymous      */
	uint64_t range_from;  /* with range_len > 0: Range: bytes=from-(from+len-1) */
	uint64_t range_len;
	int probe;            /* the open's GET of the first bytes: a shorter
	                       * body is fine, and a 200 with the whole object
	                       * is cut off once dst is full              */
	const char *if_match; /* an ETag, or NULL                            */
	uint64_t expect_total; /* the object's size at open (UINT64_MAX: not
	                        * known): an answer that says another is
	                        * RIO_ECHANGED                              */
	const void *body;     /* PUT/POST body from memory (body_fd < 0)     */
	size_t body_len;
	int body_fd;          /* or from this file (>= 0), body_size bytes
	                       * from body_off                              */
	uint64_t body_off, body_size;
	uint8_t *dst;         /* a 2xx answer's body goes here (dst_cap
	                       * bytes at most), or                          */
	size_t dst_cap;
	rio__text *sink;      /* here (sink_max bytes at most), or nowhere   */
	size_t sink_max;

	/* ---- the response (rio__http_prepare clears it) ---- */
	long status;          /* 0 when none came                            */
	uint64_t total;       /* the object's size: Content-Range's, or a
	                       * whole 200's Content-Length; UINT64_MAX      */
	uint64_t first;       /* Content-Range's first byte                  */
	int ranged;           /* a Content-Range came                        */
	char etag[192];       /* the ETag header ("" when none)              */
	char region[64];      /* x-amz-bucket-region ("" when none)          */
	size_t got;           /* body bytes taken into dst or sink           */
	int too_long;         /* more body than dst or sink_max allowed      */
	int elsewhere;        /* bytes of another range than the one asked   */
	rio__text errbody;    /* a non-2xx answer's body (the error document) */
	CURLcode cc;
	char curl_msg[CURL_ERROR_SIZE];

	/* ---- private ---- */
	struct curl_slist *headers;
	uint64_t body_pos;
	int checked;          /* the first body bytes' range was checked     */
} rio__http;

/* What a finished request came to. */
typedef enum rio__verdict {
	RIO__HTTP_DONE = 0,
	RIO__HTTP_RETRY = 1, /* a connection error, a stall, 429, 5xx, SlowDown */
	RIO__HTTP_FAIL = 2,  /* permanent: the code says what               */
} rio__verdict;

/* A request with no range, no body, no If-Match: the caller sets what it
 * needs. */
void rio__http_init(rio__http *q, const char *method, const char *url, const char *name, int s3);

/* Resets `h` and sets it up for q (q's response cleared). -ENOMEM, or the
 * AWS settings' error (the first S3 request reads them). */
int rio__http_prepare(rio__http *q, CURL *h, rio__remote *r, rio_error *err);
/* Records how the transfer ended (cc), once curl is done with it. */
void rio__http_finish(rio__http *q, CURLcode cc);
/* The verdict, with the error code in *code (0 for DONE). */
rio__verdict rio__http_verdict(const rio__http *q, int *code);
/* The message of a failed request: "NAME: [offset O: ]TEXT: DETAIL", with
 * "(after N attempts)" when attempts > 1. Returns code. */
int rio__http_error(const rio__http *q, int code, unsigned attempts, rio_error *err);
/* After a broken ranged GET into dst: the range, dst and cap moved past
 * the bytes that came, so the next try asks for the rest. */
void rio__http_advance(rio__http *q);
/* Frees what prepare allocated (headers, the error document). */
void rio__http_release(rio__http *q);

/* Runs q on the calling thread with its retries (r's attempts, the
 * backoff between them), resuming a ranged GET into dst, starting a GET
 * into a sink over. 0, or the error (message in err). */
int rio__http_run(rio__remote *r, rio__http *q, rio_error *err);

#endif /* RIO_REMOTE_HTTP_H */

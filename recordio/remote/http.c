/*
 * http.c — one request and its answer (http.h).
 *
 * Signing: CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3" with the keys as user and
 * password; the payload hash is given as x-amz-content-sha256:
 * UNSIGNED-PAYLOAD (S3 accepts it for every request; the bodies are
 * shards and .idx files whose records carry their own CRCs) and the
 * session token as x-amz-security-token, both signed. Anonymous requests
 * (no credentials) are not signed.
 *
 * What is retried, as the AWS SDKs and Mountpoint do: connection errors,
 * stalls and timeouts, a body cut short, HTTP 429, 500, 502, 503, 504 and
 * S3's SlowDown, InternalError, RequestTimeout and ServiceUnavailable
 * codes. Everything else fails at once.
 */
#include "config.h"
#include "http.h"

#include "client.h"
#include "xml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define UNK RIO__UNKNOWN

void rio__http_init(rio__http *q, const char *method, const char *url, const char *name, int s3)
{
	memset(q, 0, sizeof *q);
	q->method = method;
	q->url = url;
	q->name = name;
	q->s3 = s3;
	q->expect_total = UINT64_MAX;
	q->body_fd = -1;
	q->total = UINT64_MAX;
}

/* ---- callbacks ----------------------------------------------------------- */

/* 1 when header line h[0, n) is `name:`; *v is then its value, trimmed. */
static int header_is(const char *h, size_t n, const char *name, char *v, size_t cap)
{
	size_t k = strlen(name);
	if (n <= k || strncasecmp(h, name, k) || h[k] != ':')
		return 0;
	const char *b = h + k + 1, *e = h + n;
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	while (e > b && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	size_t len = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
	memcpy(v, b, len);
	v[len] = '\0';
	return 1;
}

static size_t on_header(char *h, size_t size, size_t nmemb, void *arg)
{
	rio__http *q = arg;
	size_t n = size * nmemb;
	char v[256];
	if (n >= 5 && !strncmp(h, "HTTP/", 5)) {
		/* a new answer (after a 100 Continue or a redirect): forget the last */
		const char *sp = memchr(h, ' ', n);
		q->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		q->ranged = 0;
		q->total = UINT64_MAX;
		q->etag[0] = q->region[0] = '\0';
	} else if (header_is(h, n, "content-range", v, sizeof v)) {
		unsigned long long a, b, t;
		if (sscanf(v, "bytes %llu-%llu/%llu", &a, &b, &t) == 3) {
			q->ranged = 1;
			q->first = a;
			q->total = t;
		} else if (sscanf(v, "bytes */%llu", &t) == 1) {
			q->total = t;
		}
	} else if (header_is(h, n, "content-length", v, sizeof v)) {
		/* a whole object's (a HEAD's, or a 200 that ignored a Range) */
		if (!q->ranged && q->status == 200 && !q->body && q->body_fd < 0)
			q->total = strtoull(v, NULL, 10);
	} else if (header_is(h, n, "etag", q->etag, sizeof q->etag)) {
	} else if (header_is(h, n, "x-amz-bucket-region", q->region, sizeof q->region)) {
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	rio__http *q = arg;
	size_t n = size * nmemb;
	if (q->status < 200 || q->status >= 300) {
		size_t room = RIO__HTTP_ERRBODY_MAX - q->errbody.n;
		rio__text_append(&q->errbody, p, n < room ? n : room);
		return n;
	}
	if (!q->checked && q->range_len) {
		/* the bytes asked for, or (from byte 0) the whole object */
		if (q->ranged ? q->first != q->range_from : q->range_from != 0) {
			q->elsewhere = 1;
			return 0;
		}
		q->checked = 1;
	}
	if (q->dst) {
		size_t room = q->dst_cap - q->got;
		size_t take = n < room ? n : room;
		memcpy(q->dst + q->got, p, take);
		q->got += take;
		if (take < n) {
			q->too_long = 1;
			return 0;
		}
		return n;
	}
	if (q->sink) {
		if (q->sink->n + n > q->sink_max) {
			q->too_long = 1;
			return 0;
		}
		if (rio__text_append(q->sink, p, n))
			return 0;
		q->got += n;
	}
	return n;
}

static size_t on_upload(char *buf, size_t size, size_t nmemb, void *arg)
{
	rio__http *q = arg;
	size_t n = size * nmemb;
	uint64_t total = q->body_fd >= 0 ? q->body_size : q->body_len;
	uint64_t left = total - q->body_pos;
	if (n > left)
		n = (size_t)left;
	if (n == 0)
		return 0;
	if (q->body_fd < 0) {
		memcpy(buf, (const uint8_t *)q->body + q->body_pos, n);
	} else {
		ssize_t r;
		do
			r = pread(q->body_fd, buf, n, (off_t)(q->body_off + q->body_pos));
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			return CURL_READFUNC_ABORT;
		n = (size_t)r;
	}
	q->body_pos += n;
	return n;
}

/* ---- setting a handle up ---------------------------------------------------- */

/* A header "Name:value", with no blank after the colon: curl 7.88's
 * signing takes the value as written, and S3 trims it. */
static int add_header(rio__http *q, const char *fmt, const char *value)
{
	char line[9000];
	snprintf(line, sizeof line, fmt, value);
	struct curl_slist *l = curl_slist_append(q->headers, line);
	if (!l)
		return -ENOMEM;
	q->headers = l;
	return 0;
}

static int set_signing(rio__http *q, CURL *h, rio__remote *r, rio_error *err)
{
	const rio__aws_config *aws;
	int rc = rio__client_aws(r, &aws, err);
	if (rc < 0)
		return rc;
	/* S3 wants the payload's hash named even when it is not given */
	if ((rc = add_header(q, "x-amz-content-sha256:%s", "UNSIGNED-PAYLOAD")) < 0)
		return rc;
	if (aws->anonymous)
		return 0;
	if (aws->session_token[0] &&
	    (rc = add_header(q, "x-amz-security-token:%s", aws->session_token)) < 0)
		return rc;
	char sig[128];
	snprintf(sig, sizeof sig, "aws:amz:%s:s3", aws->region);
	if (curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sig) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_USERNAME, aws->access_key) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PASSWORD, aws->secret_key) != CURLE_OK)
		return -ENOMEM;
	return 0;
}

static void set_method(rio__http *q, CURL *h)
{
	const char *m = q->method ? q->method : "GET";
	uint64_t size = q->body_fd >= 0 ? q->body_size : q->body_len;
	if (!strcmp(m, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(m, "PUT") || !strcmp(m, "POST")) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_upload);
		curl_easy_setopt(h, CURLOPT_READDATA, q);
		if (strcmp(m, "PUT"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
	} else if (strcmp(m, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
	}
}

int rio__http_prepare(rio__http *q, CURL *h, rio__remote *r, rio_error *err)
{
	rio__http_release(q);
	q->status = 0;
	q->total = UINT64_MAX;
	q->first = 0;
	q->ranged = q->too_long = q->elsewhere = q->checked = 0;
	q->etag[0] = q->region[0] = '\0';
	q->got = 0;
	q->cc = CURLE_OK;
	q->curl_msg[0] = '\0';
	q->body_pos = 0;
	if (q->sink)
		rio__text_clear(q->sink);

	curl_easy_reset(h);
	const rio_remote_opts *o = &r->opts;
	int rc = 0;
	if (q->s3)
		rc = set_signing(q, h, r, err);
	if (rc == 0 && q->if_match && q->if_match[0])
		rc = add_header(q, "If-Match:%s", q->if_match);
	if (rc < 0)
		return rc == -ENOMEM ? rio__error_set(err, rc, q->name, UNK, UNK, NULL) : rc;
	curl_easy_setopt(h, CURLOPT_URL, q->url);
	curl_easy_setopt(h, CURLOPT_SHARE, r->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, q->headers);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, q);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, q->curl_msg);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "recordio/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)o->stall_seconds);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)o->stall_seconds);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (!q->s3) { /* web servers move files around; S3 answers where it is */
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
		curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	}
	if (q->range_len) {
		char range[64];
		snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, q->range_from,
		         q->range_from + q->range_len - 1);
		curl_easy_setopt(h, CURLOPT_RANGE, range);
	}
	set_method(q, h);
	return 0;
}

void rio__http_finish(rio__http *q, CURLcode cc)
{
	q->cc = cc;
}

void rio__http_release(rio__http *q)
{
	curl_slist_free_all(q->headers);
	q->headers = NULL;
	rio__text_free(&q->errbody);
}

void rio__http_advance(rio__http *q)
{
	if (!q->dst || !q->range_len || q->got == 0)
		return;
	size_t got = q->got < q->range_len ? q->got : (size_t)q->range_len;
	q->range_from += got;
	q->range_len -= got;
	q->dst += got;
	q->dst_cap -= got;
	q->got = 0;
}

/* ---- what it came to ------------------------------------------------------ */

static int retryable_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_READ_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* S3's error code from the error document, into code[cap] ("" when none). */
static void s3_code(const rio__http *q, char *code, size_t cap)
{
	rio__text t = {0};
	code[0] = '\0';
	if (rio__xml_find(rio__text_str(&q->errbody), q->errbody.n, "Code", &t) == 1)
		snprintf(code, cap, "%s", rio__text_str(&t));
	rio__text_free(&t);
}

static int retryable_code(const char *code)
{
	static const char *const codes[] = {"SlowDown", "InternalError", "RequestTimeout",
	                                    "ServiceUnavailable", "RequestTimeTooSkewed"};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (!strcmp(code, codes[i]))
			return 1;
	return 0;
}

rio__verdict rio__http_verdict(const rio__http *q, int *code)
{
	*code = 0;
	if (q->cc == CURLE_WRITE_ERROR && q->too_long && q->probe && q->status == 200) {
		return RIO__HTTP_DONE; /* the whole object came: its first bytes will do */
	}
	if (q->cc != CURLE_OK) {
		*code = RIO_EREMOTE;
		return retryable_curl(q->cc) ? RIO__HTTP_RETRY : RIO__HTTP_FAIL;
	}
	long st = q->status;
	if (st >= 200 && st < 300) {
		if (q->expect_total != UINT64_MAX && q->total != UINT64_MAX &&
		    q->total != q->expect_total) {
			*code = RIO_ECHANGED;
			return RIO__HTTP_FAIL;
		}
		if (q->dst && q->range_len && !q->probe && q->got < q->range_len) {
			*code = RIO_EREMOTE; /* cut short, though the connection ended well */
			return RIO__HTTP_RETRY;
		}
		return RIO__HTTP_DONE;
	}
	char c[64];
	s3_code(q, c, sizeof c);
	if (st == 429 || st == 500 || st == 502 || st == 503 || st == 504 || retryable_code(c)) {
		*code = RIO_EREMOTE;
		return RIO__HTTP_RETRY;
	}
	*code = st == 404 ? -ENOENT
	        : st == 403 ? -EACCES
	        : st == 412 || (st == 416 && q->expect_total != UINT64_MAX) ? RIO_ECHANGED
	                                                                   : RIO_EREMOTE;
	return RIO__HTTP_FAIL;
}

/* A server's text made one line: control characters as blanks, cut to
 * `cap`. */
static void one_line(char *dst, size_t cap, const char *src)
{
	size_t n = 0;
	for (; *src && n + 1 < cap; src++)
		dst[n++] = (unsigned char)*src < 0x20 ? ' ' : *src;
	dst[n] = '\0';
}

/* What the answer says, beyond its status: "(Code): Message[; hint]". */
static void http_detail(const rio__http *q, char *out, size_t cap)
{
	char code[64], msg[240] = "", hint[200] = "";
	rio__text t = {0};
	s3_code(q, code, sizeof code);
	if (rio__xml_find(rio__text_str(&q->errbody), q->errbody.n, "Message", &t) == 1)
		one_line(msg, sizeof msg, rio__text_str(&t));
	char region[64] = "";
	if (rio__xml_find(rio__text_str(&q->errbody), q->errbody.n, "Region", &t) == 1)
		one_line(region, sizeof region, rio__text_str(&t));
	else
		snprintf(region, sizeof region, "%s", q->region);
	rio__text_free(&t);
	if (region[0] && (q->status == 301 || q->status == 400 || q->status == 403))
		snprintf(hint, sizeof hint, "; the bucket is in region %s (set AWS_REGION=%s)", region,
		         region);
	else if (q->status == 412)
		snprintf(hint, sizeof hint, "; its ETag is no longer %s: the object was replaced",
		         q->if_match ? q->if_match : "the one at open");
	snprintf(out, cap, "%s%s%s%s%s%s", code[0] ? " (" : "", code, code[0] ? ")" : "",
	         msg[0] ? ": " : "", msg, hint);
}

int rio__http_error(const rio__http *q, int code, unsigned attempts, rio_error *err)
{
	char what[600], tries[48] = "";
	uint64_t at = q->range_len && !q->probe ? q->range_from : UNK;
	if (attempts > 1)
		snprintf(tries, sizeof tries, " (gave up after %u attempts)", attempts);
	if (q->elsewhere) {
		snprintf(what, sizeof what, "the server answered HTTP %ld with bytes from %" PRIu64
		         " for a range from %" PRIu64 " (does it honour Range requests?)",
		         q->status, q->ranged ? q->first : 0, q->range_from);
	} else if (q->cc == CURLE_WRITE_ERROR && q->too_long) {
		snprintf(what, sizeof what, "the server sent more bytes than asked for");
	} else if (q->cc != CURLE_OK) {
		snprintf(what, sizeof what, "%s%s%s", curl_easy_strerror(q->cc),
		         q->curl_msg[0] ? ": " : "", q->curl_msg);
	} else if (code == RIO_ECHANGED && q->status >= 200 && q->status < 300) {
		snprintf(what, sizeof what, "HTTP %ld: its size is now %" PRIu64 " bytes, %" PRIu64
		         " when it was opened", q->status, q->total, q->expect_total);
	} else if (q->status >= 200 && q->status < 300) {
		snprintf(what, sizeof what, "HTTP %ld: the body ended after %zu of %" PRIu64 " bytes",
		         q->status, q->got, q->range_len);
	} else {
		char detail[560];
		http_detail(q, detail, sizeof detail);
		snprintf(what, sizeof what, "HTTP %ld%s", q->status, detail);
	}
	return rio__error_set(err, code, q->name, at, UNK, "%s%s", what, tries);
}

/* ---- a request alone, with its retries ---------------------------------- */

static void pause_for(double seconds)
{
	struct timespec ts;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int rio__http_run(rio__remote *r, rio__http *q, rio_error *err)
{
	CURL *h = rio__client_easy_take(r);
	if (!h)
		return rio__error_set(err, -ENOMEM, q->name, UNK, UNK, "cannot make a curl handle");
	int rc = 0;
	char pinned[sizeof q->etag]; /* a probe's ETag once bytes came */
	for (unsigned attempt = 1;; attempt++) {
		if ((rc = rio__http_prepare(q, h, r, err)) < 0)
			break;
		rio__http_finish(q, curl_easy_perform(h));
		rio__verdict v = rio__http_verdict(q, &rc);
		if (v == RIO__HTTP_DONE)
			break;
		if (v == RIO__HTTP_FAIL || attempt >= r->opts.attempts) {
			rio__http_error(q, rc, attempt, err);
			break;
		}
		/* a probe resumed after some of its bytes came asks for the rest
		 * of the same object: If-Match, the same size */
		if (q->probe && q->got && !q->if_match) {
			if (q->etag[0] && strncmp(q->etag, "W/", 2)) {
				memcpy(pinned, q->etag, sizeof pinned);
				q->if_match = pinned;
				q->expect_total = q->total;
			} else {
				q->got = 0; /* nothing pins the object: from the start again */
			}
		}
		rio__http_advance(q);
		pause_for(rio__client_backoff(r, attempt));
	}
	rio__client_easy_give(r, h);
	return rc;
}

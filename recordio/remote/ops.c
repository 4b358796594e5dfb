/*
 * ops.c — the one-off requests (remote.h): a small object whole, whether
 * an object exists, writing one (a PUT, or a multipart upload that is
 * aborted when any step fails), deleting one.
 */
#include "config.h"

#include "client.h"
#include "http.h"
#include "xml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN
#define MAX_PARTS 10000u               /* S3's limit on a multipart upload */
#define MIN_PART_BYTES (5ull << 20)    /* S3's smallest part (but the last) */

/* The request URL of s3 `url` with `query` (NULL: none); RIO_EUNSUPPORTED
 * for anything but s3://. */
static int s3_target(rio__remote *r, const char *url, const char *query, rio__text *out,
                     rio_error *err)
{
	rio__url u;
	int rc = rio__url_parse(url, &u, err);
	if (rc == 0 && u.kind != RIO__URL_S3)
		rc = rio__error_set(err, RIO_EUNSUPPORTED, url, UNK, UNK,
		                    "only s3:// URLs can be written");
	else if (rc == 0 && !u.key[0])
		rc = rio__error_set(err, -EINVAL, url, UNK, UNK, "no key after the bucket");
	if (rc == 0)
		rc = rio__client_s3_url(r, u.bucket, u.key, query, out, err);
	rio__url_free(&u);
	return rc;
}

int rio__remote_get_all(rio__remote *r, const char *url, uint64_t max, int quiet_enoent,
                        char **out, size_t *len, rio_error *err)
{
	*out = NULL;
	*len = 0;
	rio__text target = {0}, body = {0};
	int s3, rc = rio__client_url(r, url, &target, &s3, err);
	if (rc == 0) {
		rio__http q;
		rio__http_init(&q, "GET", rio__text_str(&target), url, s3);
		q.sink = &body;
		q.sink_max = max;
		rio_error e;
		rio__error_clear(&e);
		rc = rio__http_run(r, &q, &e);
		if (rc == RIO_EREMOTE && q.too_long)
			rc = rio__error_set(&e, -EFBIG, url, UNK, UNK, "larger than %" PRIu64 " bytes",
			                    max);
		rio__http_release(&q);
		if (rc < 0 && err && !(rc == -ENOENT && quiet_enoent))
			*err = e;
	}
	if (rc == 0 && rio__text_append(&body, "", 0))
		rc = rio__error_set(err, -ENOMEM, url, UNK, UNK, NULL);
	rio__text_free(&target);
	if (rc < 0) {
		rio__text_free(&body);
		return rc;
	}
	*out = body.p;
	*len = body.n;
	return 0;
}

int rio__remote_exists(rio__remote *r, const char *url, uint64_t *size, rio_error *err)
{
	rio__text target = {0};
	int s3, rc = rio__client_url(r, url, &target, &s3, err);
	if (rc == 0) {
		rio__http q;
		rio__http_init(&q, "HEAD", rio__text_str(&target), url, s3);
		rio_error e;
		rc = rio__http_run(r, &q, &e);
		rio__http_release(&q);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc == 0) {
			rc = 1;
			if (size)
				*size = q.total;
		} else if (err)
			*err = e;
	}
	rio__text_free(&target);
	return rc;
}

/* One PUT or POST of a body from memory or from fd, to `url` + `query`;
 * the answer's ETag into etag (may be NULL), its body into `answer` (may
 * be NULL). */
static int send_body(rio__remote *r, const char *url, const char *method, const char *query,
                     const void *data, size_t n, int fd, uint64_t off, uint64_t size,
                     char *etag, size_t etag_cap, rio__text *answer, rio_error *err)
{
	rio__text target = {0};
	int rc = s3_target(r, url, query, &target, err);
	if (rc == 0) {
		rio__http q;
		rio__http_init(&q, method, rio__text_str(&target), url, 1);
		q.body = data;
		q.body_len = n;
		q.body_fd = fd;
		q.body_off = off;
		q.body_size = size;
		q.sink = answer;
		q.sink_max = 1u << 20;
		rc = rio__http_run(r, &q, err);
		if (rc == 0 && etag)
			snprintf(etag, etag_cap, "%s", q.etag);
		rio__http_release(&q);
	}
	rio__text_free(&target);
	return rc;
}

int rio__remote_put(rio__remote *r, const char *url, const void *data, size_t n, rio_error *err)
{
	return send_body(r, url, "PUT", NULL, data, n, -1, 0, 0, NULL, 0, NULL, err);
}

int rio__remote_delete(rio__remote *r, const char *url, rio_error *err)
{
	rio__text target = {0};
	int rc = s3_target(r, url, NULL, &target, err);
	if (rc == 0) {
		rio__http q;
		rio__http_init(&q, "DELETE", rio__text_str(&target), url, 1);
		rio_error e;
		rc = rio__http_run(r, &q, &e);
		rio__http_release(&q);
		if (rc == -ENOENT)
			rc = 0;
		else if (rc < 0 && err)
			*err = e;
	}
	rio__text_free(&target);
	return rc;
}

/* ---- multipart uploads -------------------------------------------------------- */

/* S3 may answer a completion "200 OK" with an error document: an error. */
static int answer_error(const rio__text *answer, const char *url, rio_error *err)
{
	rio__text code = {0};
	int rc = 0;
	if (rio__xml_find(rio__text_str(answer), answer->n, "Error", &code) == 1 &&
	    rio__xml_find(rio__text_str(answer), answer->n, "Code", &code) == 1)
		rc = rio__error_set(err, RIO_EREMOTE, url, UNK, UNK,
		                    "completing the multipart upload: %s", rio__text_str(&code));
	rio__text_free(&code);
	return rc;
}

static int upload_query(rio__text *q, const char *upload_id, unsigned part)
{
	rio__text_clear(q);
	if (part)
		rio__text_printf(q, "partNumber=%u&", part);
	rio__text_puts(q, "uploadId=");
	return rio__text_uri_encode(q, upload_id, strlen(upload_id), 0);
}

/* The parts, then the completion document listing them. */
static int upload_parts(rio__remote *r, const char *url, int fd, uint64_t size, uint64_t part,
                        const char *upload_id, rio_error *err)
{
	unsigned nparts = (unsigned)((size + part - 1) / part);
	rio__text done = {0}, query = {0}, answer = {0};
	int rc = rio__text_puts(&done, "<CompleteMultipartUpload>");
	for (unsigned i = 0; rc == 0 && i < nparts; i++) {
		uint64_t off = (uint64_t)i * part, len = size - off < part ? size - off : part;
		char etag[192];
		if ((rc = upload_query(&query, upload_id, i + 1)) < 0)
			break;
		rc = send_body(r, url, "PUT", rio__text_str(&query), NULL, 0, fd, off, len, etag,
		               sizeof etag, NULL, err);
		if (rc == 0 && !etag[0])
			rc = rio__error_set(err, RIO_EREMOTE, url, off, UNK,
			                    "part %u of a multipart upload: no ETag in the answer", i + 1);
		if (rc == 0)
			rc = rio__text_printf(&done, "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag>"
			                      "</Part>", i + 1, etag);
	}
	if (rc == 0)
		rc = rio__text_puts(&done, "</CompleteMultipartUpload>");
	if (rc == 0)
		rc = upload_query(&query, upload_id, 0);
	if (rc == -ENOMEM)
		rc = rio__error_set(err, rc, url, UNK, UNK, NULL);
	if (rc == 0)
		rc = send_body(r, url, "POST", rio__text_str(&query), done.p, done.n, -1, 0, 0, NULL,
		               0, &answer, err);
	if (rc == 0)
		rc = answer_error(&answer, url, err);
	rio__text_free(&done);
	rio__text_free(&query);
	rio__text_free(&answer);
	return rc;
}

int rio__remote_put_file(rio__remote *r, const char *url, int fd, uint64_t size, rio_error *err)
{
	uint64_t part = r->opts.part_size;
	if (part < MIN_PART_BYTES)
		part = MIN_PART_BYTES;
	if (size <= part)
		return send_body(r, url, "PUT", NULL, NULL, 0, fd, 0, size, NULL, 0, NULL, err);
	if ((size + part - 1) / part > MAX_PARTS)
		part = (size + MAX_PARTS - 1) / MAX_PARTS;
	rio__text answer = {0}, id = {0}, query = {0};
	int rc = send_body(r, url, "POST", "uploads=", "", 0, -1, 0, 0, NULL, 0, &answer, err);
	if (rc == 0 && rio__xml_find(rio__text_str(&answer), answer.n, "UploadId", &id) != 1)
		rc = rio__error_set(err, RIO_EREMOTE, url, UNK, UNK,
		                    "starting a multipart upload: no UploadId in the answer");
	if (rc == 0 && (rc = upload_parts(r, url, fd, size, part, rio__text_str(&id), err)) < 0) {
		/* abort, so that no part is left behind (and billed) */
		rio__text target = {0};
		if (upload_query(&query, rio__text_str(&id), 0) == 0 &&
		    s3_target(r, url, rio__text_str(&query), &target, NULL) == 0) {
			rio__http q;
			rio__http_init(&q, "DELETE", rio__text_str(&target), url, 1);
			rio__http_run(r, &q, NULL);
			rio__http_release(&q);
		}
		rio__text_free(&target);
	}
	rio__text_free(&answer);
	rio__text_free(&id);
	rio__text_free(&query);
	return rc;
}

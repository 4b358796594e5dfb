/*
 * no_curl.c — the remote client in a build without libcurl: every URL is
 * RIO_EUNSUPPORTED, with a message that names it and says how to get
 * it. A client "opens" (NULL: there is none) so that the first request,
 * which knows its URL, is what fails; the entry points that need an open
 * object cannot be reached and do nothing.
 */
#include "config.h"
#include "remote.h"

#include <errno.h>

#define UNK RIO__UNKNOWN

static int unsupported(const char *url, rio_error *err)
{
	return rio__error_set(err, RIO_EUNSUPPORTED, url, UNK, UNK,
	                      "this librecordio was built without libcurl (configure "
	                      "--with-curl; Debian: libcurl4-openssl-dev)");
}

int rio__remote_open(rio__remote **out, const rio_remote_opts *opts, rio_error *err)
{
	/* no client (NULL), and no error yet: the first request fails,
	 * naming its URL */
	*out = NULL;
	return opts ? rio_remote_opts_check(opts, err) : 0; /* NULL: the defaults */
}

void rio__remote_close(rio__remote *r)
{
}

const rio_remote_opts *rio__remote_opts(const rio__remote *r)
{
	return NULL;
}

int rio__robj_open(rio__robj **out, rio__remote *r, const char *url, rio_error *err)
{
	*out = NULL;
	return unsupported(url, err);
}

void rio__robj_close(rio__robj *o)
{
}

const char *rio__robj_name(const rio__robj *o)
{
	return "";
}

uint64_t rio__robj_size(const rio__robj *o)
{
	return 0;
}

const char *rio__robj_etag(const rio__robj *o)
{
	return "";
}

const uint8_t *rio__robj_head(const rio__robj *o, size_t *len)
{
	*len = 0;
	return NULL;
}

void rio__remote_first_parts(rio__remote *r, size_t bytes)
{
}

ssize_t rio__robj_take_first(rio__robj *o, void *buf, size_t len, uint64_t offset)
{
	return -1;
}

void *rio__robj_give_first(rio__robj *o, uint64_t offset, size_t len, size_t cap, ssize_t *got)
{
	return NULL;
}

void rio__robj_drop_first(rio__robj *o)
{
}

ssize_t rio__robj_read(rio__robj *o, void *buf, size_t len, uint64_t offset, rio_error *err)
{
	return unsupported(NULL, err);
}

int rio__remote_read_many(rio__remote *r, rio__range *ranges, size_t n, rio_error *err)
{
	return unsupported(NULL, err);
}

int rio__remote_read_start(rio__remote *r, rio__range *ranges, size_t n, rio__remote_reads **out,
                           rio_error *err)
{
	*out = NULL;
	return unsupported(NULL, err);
}

int rio__remote_read_wait(rio__remote_reads *rd, rio_error *err)
{
	return 0;
}

int rio__rstream_open(rio__rstream **out, rio__robj *o, uint64_t offset)
{
	*out = NULL;
	return RIO_EUNSUPPORTED;
}

void rio__rstream_whole(rio__rstream *s, size_t part, unsigned window)
{
}

ssize_t rio__rstream_read(rio__rstream *s, void *dst, size_t n)
{
	return RIO_EUNSUPPORTED;
}

int rio__rstream_seek(rio__rstream *s, uint64_t offset)
{
	return RIO_EUNSUPPORTED;
}

uint64_t rio__rstream_offset(const rio__rstream *s)
{
	return 0;
}

const rio_error *rio__rstream_error(const rio__rstream *s)
{
	return NULL;
}

void rio__rstream_close(rio__rstream *s)
{
}

void rio__rstream_source(rio__rstream *s, rio__byte_source *out)
{
}

int rio__remote_get_all(rio__remote *r, const char *url, uint64_t max, int quiet_enoent,
                        char **out, size_t *len, rio_error *err)
{
	*out = NULL;
	*len = 0;
	return unsupported(url, err);
}

int rio__remote_exists(rio__remote *r, const char *url, uint64_t *size, rio_error *err)
{
	return unsupported(url, err);
}

int rio__remote_put(rio__remote *r, const char *url, const void *data, size_t n, rio_error *err)
{
	return unsupported(url, err);
}

int rio__remote_put_file(rio__remote *r, const char *url, int fd, uint64_t size, rio_error *err)
{
	return unsupported(url, err);
}

int rio__remote_delete(rio__remote *r, const char *url, rio_error *err)
{
	return unsupported(url, err);
}

int rio__remote_list(rio__remote *r, const char *bucket, const char *prefix,
                     const char *delimiter, const char *name, rio__listing *out, rio_error *err)
{
	return unsupported(name, err);
}

void rio__remote_keep_listed(rio__remote *r)
{
	(void)r;
}

void rio__remote_gets_time(rio__remote *r, double *busy, double *gets)
{
	(void)r;
	*busy = *gets = 0;
}

int rio__remote_keeps_listed(rio__remote *r)
{
	(void)r;
	return 0;
}

int rio__remote_is_listed(rio__remote *r, const char *url)
{
	(void)r;
	(void)url;
	return 0;
}

int rio__robj_open_listed(rio__robj **out, rio__remote *r, const char *url, rio_error *err)
{
	return rio__robj_open(out, r, url, err);
}

/*
 * size.c — rio_size_parse() (recordio.h): lib/size.c's parser, exported,
 * for programs outside this build (the Python package linked against an
 * installed librecordio). Inside it, callers use rio__size_parse().
 */
#include "config.h"
#include "internal.h"
#include "size.h"

#include <string.h>

RIO_API int rio_size_parse(const char *text, uint64_t max, uint64_t *bytes, rio_error *err)
{
	rio__error_clear(err);
	char msg[sizeof err->message];
	int rc = rio__size_parse(text, max, bytes, msg, err ? sizeof msg : 0);
	if (rc < 0 && err) {
		err->code = rc;
		memcpy(err->message, msg, sizeof msg);
	}
	return rc;
}

/*
 * list.h — one page of a ListObjectsV2 answer, parsed (the listing itself,
 * every page, is rio__remote_list in remote.h). Separate so that the
 * parser can be fuzzed without a server.
 */
#ifndef RIO_REMOTE_LIST_H
#define RIO_REMOTE_LIST_H

#include "remote.h"
#include "text.h"

/* Appends the page's objects (Contents: Key, Size and ETag when there is
 * one) and CommonPrefixes
 * (Prefix, is_prefix set) to `out`, in the page's order; *truncated is
 * IsTruncated, and `token` gets NextContinuationToken (which a truncated
 * page must have). 0, -EBADMSG for a page that is not a ListBucketResult
 * or has an object without a decimal Size or a Key, or -ENOMEM. What was
 * appended before an error stays in `out` (rio__listing_free frees it). */
int rio__list_parse(const char *xml, size_t len, rio__listing *out, int *truncated,
                    rio__text *token);

#endif /* RIO_REMOTE_LIST_H */

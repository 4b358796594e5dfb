/*
 * xml.h — just enough XML for S3's answers: the elements of a
 * ListObjectsV2 page, an error document's Code and Message, a multipart
 * upload's UploadId. Elements are found by name at any depth, their text
 * with the five predefined entities and character references decoded.
 * No DTDs, namespaces or CDATA (S3 sends none). Never reads outside the
 * given bytes; the text need not be NUL-terminated.
 */
#ifndef RIO_REMOTE_XML_H
#define RIO_REMOTE_XML_H

#include "text.h"

#include <stddef.h>

/* Finds the next element <name> (or <name attr="...">, or the empty
 * <name/>) at or after *pos in xml[0, len) and its closing tag: returns 1
 * with its content in xml[*start, *end) and *pos just past the element,
 * or 0 when there is none (or it is not closed). */
int rio__xml_next(const char *xml, size_t len, const char *name, size_t *pos, size_t *start,
                  size_t *end);

/* Appends the text xml[start, end) to `out`, entities decoded (&amp; &lt;
 * &gt; &quot; &apos; &#N; &#xN;, a reference to a code point encoded as
 * UTF-8). 0, -EBADMSG for a malformed or unknown entity, a reference to 0,
 * to a surrogate or past U+10FFFF, or -ENOMEM. */
int rio__xml_text(const char *xml, size_t start, size_t end, rio__text *out);

/* rio__xml_next and rio__xml_text together for the first <name> of
 * xml[0, len): 1 with its text in `out` (cleared first), 0 when absent,
 * or the decoding's error. */
int rio__xml_find(const char *xml, size_t len, const char *name, rio__text *out);

#endif /* RIO_REMOTE_XML_H */

/* Pieces of HTML output: escaped text, data: URIs, relative URLs.
 *
 * The writers put bytes on a stdio stream and leave write errors on it, for the
 * ferror() check of slem_out_commit(); they cannot fail otherwise.
 */
#ifndef SLEM_HTML_H
#define SLEM_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Writes s with & < > " ' as character references: safe as element text (also inside
 * an inline <svg>) and inside a double- or single-quoted attribute value. A query id
 * "<script>" shows as those eight characters. */
void slem_html_text(FILE *fp, const char *s);

/* Writes n bytes of data in base64 (RFC 4648, padded, no line breaks). */
void slem_html_base64(FILE *fp, const unsigned char *data, size_t n);

/* Writes path as a URL path: bytes other than A-Z a-z 0-9 - . _ ~ / are percent-encoded,
 * so that the result needs no HTML escaping and '#', '?', '%' and spaces in file names
 * keep their meaning as characters. */
void slem_html_url(FILE *fp, const char *path);

/* The MIME type of an image file from its extension (case-insensitive): png, jpg, jpeg,
 * gif, webp, bmp, svg; NULL for another. Static storage. */
const char *slem_html_image_mime(const char *path);

/* Sets *rel to a new string (freed with free()): target as a path relative to the
 * directory dir, both taken after resolving symbolic links, "." and "..". Errors:
 * SLEM_EIO naming a path that cannot be resolved, SLEM_ENOMEM. */
int slem_html_relpath_new(char **rel, const char *target, const char *dir, SlemError *err);

#endif

/* Thumbnails of queries and database items for reports: where each id's picture is.
 *
 * Three sources, the first that applies:
 *   vectors   the vectors themselves are small images (image.h): the query and database
 *             vector files, rows named by ids files (else by 0-based row numbers), are
 *             rendered to PNG (pngenc.h) and embedded as data: URIs;
 *   a folder  DIR/ID.EXT for EXT among png jpg jpeg gif webp bmp svg (either case), or
 *             DIR/ID when the id already ends in one of them;
 *   paths     the id itself names an image file.
 * Files are linked by a URL relative to the report's folder, or embedded when asked.
 * An id with no picture is not an error: the report shows its name in a plain tile.
 */
#ifndef SLEM_THUMBS_H
#define SLEM_THUMBS_H

#include <stddef.h>

#include "error.h"
#include "image.h"

enum { SLEM_THUMB_QUERY = 0, SLEM_THUMB_DB = 1 };

typedef struct SlemThumbOpts {
  const char *images_dir;      /* NULL: no folder */
  int embed;                   /* files: embed as data: URIs rather than link */
  int ids_are_paths;           /* try each id as a path when nothing else applies */
  const SlemImageShape *shape; /* NULL: the vectors are not rendered */
  SlemPixelRange range;
  const char *vectors[2];      /* query and database vector files (with shape) */
  const char *ids[2];          /* their ids files, NULL: rows 0, 1, ... */
  size_t min_side;             /* rendered vectors are scaled up to at least this (64) */
  const char *base_dir;        /* the report's folder, for relative links */
} SlemThumbOpts;

/* The rules between the sources of opts, in slem-report's words: vectors to render with a
 * shape and the reverse; the shape or a folder of images, not both; --invert and
 * --pixel-range with a shape alone, embedding with files alone. Errors: SLEM_EINVAL. */
int slem_thumbs_check(const SlemThumbOpts *opts, SlemError *err);

/* No source at all (every id a tile), thumbnails of at least 64 pixels, links relative to
 * the current folder. */
void slem_thumbs_opts_init(SlemThumbOpts *opts);

typedef struct SlemThumbs SlemThumbs;

/* A new, empty set of thumbnails taking its sources from opts (copied; the strings are
 * borrowed and must outlive self). Errors: SLEM_EINVAL (a shape without vector files or
 * the reverse), SLEM_ENOMEM. */
int slem_thumbs_new(SlemThumbs **self, const SlemThumbOpts *opts, SlemError *err);
void slem_thumbs_free(SlemThumbs *self);

/* Finds the pictures of ids(n) on side SLEM_THUMB_QUERY or SLEM_THUMB_DB (ids already
 * looked up are skipped). With vectors, the side's file is read once, start to end,
 * keeping only the rows named (an id that names no row has no picture). Errors name
 * the file and record: SLEM_EIO, SLEM_EFORMAT (a dimension that is not the shape's size,
 * an id twice in the ids file, the vector file's own errors), SLEM_ENOMEM. */
int slem_thumbs_load(SlemThumbs *self, int side, const char *const *ids, size_t n,
                     SlemError *err);

/* The value for an <img src="..."> of id, safe inside a double-quoted attribute, or
 * NULL when id has no picture or was never loaded. Owned by self. */
const char *slem_thumbs_src(const SlemThumbs *self, int side, const char *id);

/* Size in CSS pixels of a rendered vector (its PNG), or 0 for other sources. */
size_t slem_thumbs_side(const SlemThumbs *self);

/* Ids loaded that have no picture, and the first of them (NULL when none; valid until
 * the next slem_thumbs_load()). */
size_t slem_thumbs_missing(const SlemThumbs *self, const char **first);

#endif

#define _POSIX_C_SOURCE 200809L
#include "thumbs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "html.h"
#include "ids.h"
#include "pngenc.h"
#include "strmap.h"
#include "vecs.h"

typedef struct Side {
  SlemStrMap *map;  /* ids looked up, in order */
  char **src;       /* src(count): NULL when no picture */
  size_t cap;
} Side;

struct SlemThumbs {
  SlemThumbOpts o;
  Side side[2];
  size_t missing;
  int first_side;  /* the first id with no picture (strmap strings move as it grows) */
  size_t first_entry;
};

void slem_thumbs_opts_init(SlemThumbOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->min_side = 64;
  opts->base_dir = ".";
}

int slem_thumbs_check(const SlemThumbOpts *o, SlemError *err) {
  int shape = o->shape != NULL;
  if (shape != (o->vectors[0] || o->vectors[1]))
    return slem_error(err, SLEM_EINVAL, shape ? "--image-shape needs --query-vectors or --db-vectors"
                                              : "--query-vectors and --db-vectors need --image-shape");
  if (shape && o->images_dir) return slem_error(err, SLEM_EINVAL, "--images or --image-shape, not both");
  if (o->range.invert && !shape)
    return slem_error(err, SLEM_EINVAL, "--invert goes with --image-shape");
  if (o->range.fixed && !shape)
    return slem_error(err, SLEM_EINVAL, "--pixel-range goes with --image-shape");
  if (o->embed && shape)
    return slem_error(err, SLEM_EINVAL, "--embed-images is for --images; rendered vectors are "
                      "always embedded");
  return SLEM_OK;
}

void slem_thumbs_free(SlemThumbs *self) {
  if (!self) return;
  for (int s = 0; s < 2; s++) {
    for (size_t i = 0; self->side[s].map && i < slem_strmap_count(self->side[s].map); i++)
      free(self->side[s].src[i]);
    free(self->side[s].src);
    slem_strmap_free(self->side[s].map);
  }
  free(self);
}

int slem_thumbs_new(SlemThumbs **self, const SlemThumbOpts *opts, SlemError *err) {
  SlemThumbs *t;
  *self = NULL;
  if (opts->shape && !opts->vectors[0] && !opts->vectors[1])
    return slem_error(err, SLEM_EINVAL, "an image shape needs query or database vectors");
  if (!opts->shape && (opts->vectors[0] || opts->vectors[1]))
    return slem_error(err, SLEM_EINVAL, "vectors to render need an image shape");
  t = calloc(1, sizeof *t);
  if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
  t->o = *opts;
  if (!t->o.base_dir) t->o.base_dir = ".";
  if (t->o.min_side == 0) t->o.min_side = 1;
  for (int s = 0; s < 2; s++)
    if (!(t->side[s].map = slem_strmap_new())) {
      slem_thumbs_free(t);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
  *self = t;
  return SLEM_OK;
}

/* A new string holding what write() put on a memory stream, or NULL (out of memory). */
typedef struct Mem {
  FILE *fp;
  char *buf;
  size_t len;
} Mem;

static int mem_open(Mem *m) {
  m->buf = NULL;
  m->len = 0;
  m->fp = open_memstream(&m->buf, &m->len);
  return m->fp != NULL;
}

static char *mem_close(Mem *m) {
  int bad = ferror(m->fp);
  if (fclose(m->fp) != 0) bad = 1;
  if (bad) {
    free(m->buf);
    return NULL;
  }
  return m->buf;
}

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The src of an image file: a relative URL, or its bytes as a data: URI. */
static int file_src(const SlemThumbs *t, const char *path, char **src, SlemError *err) {
  Mem m;
  int st = SLEM_OK;
  char *rel = NULL;
  unsigned char *data = NULL;
  *src = NULL;
  if (!t->o.embed) {
    if ((st = slem_html_relpath_new(&rel, path, t->o.base_dir, err)) != SLEM_OK) return st;
  } else {
    FILE *fp = fopen(path, "rb");
    size_t n = 0, cap = 0;
    if (!fp) return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
    for (;;) {
      size_t got;
      if (n == cap) {
        unsigned char *p = realloc(data, cap = cap ? 2 * cap : 65536);
        if (!p) {
          fclose(fp);
          st = slem_error(err, SLEM_ENOMEM, "out of memory");
          goto cleanup;
        }
        data = p;
      }
      got = fread(data + n, 1, cap - n, fp);
      n += got;
      if (got == 0) break;
    }
    if (ferror(fp)) {
      fclose(fp);
      st = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
      goto cleanup;
    }
    fclose(fp);
    if (!mem_open(&m)) goto nomem;
    fprintf(m.fp, "data:%s;base64,", slem_html_image_mime(path));
    slem_html_base64(m.fp, data, n);
    if (!(*src = mem_close(&m))) goto nomem;
    goto cleanup;
  }
  if (!mem_open(&m)) goto nomem;
  slem_html_url(m.fp, rel);
  if (!(*src = mem_close(&m))) goto nomem;
  goto cleanup;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
cleanup:
  free(rel);
  free(data);
  return st;
}

/* The picture file of id in the folder or as a path, or NULL. */
static char *find_file(const SlemThumbs *t, const char *id) {
  static const char *const ext[] = {"png", "jpg", "jpeg", "gif", "webp", "bmp", "svg",
                                    "PNG", "JPG", "JPEG", "GIF", "WEBP", "BMP", "SVG"};
  char *path;
  size_t len;
  if (!t->o.images_dir) {
    if (t->o.ids_are_paths && slem_html_image_mime(id) && is_file(id)) return strdup(id);
    return NULL;
  }
  len = strlen(t->o.images_dir) + strlen(id) + 8;
  if (!(path = malloc(len))) return NULL;
  if (slem_html_image_mime(id)) {
    snprintf(path, len, "%s/%s", t->o.images_dir, id);
    if (is_file(path)) return path;
  }
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    snprintf(path, len, "%s/%s.%s", t->o.images_dir, id, ext[i]);
    if (is_file(path)) return path;
  }
  free(path);
  return NULL;
}

typedef struct Want {
  uint64_t row;
  size_t entry;  /* index in the side's map */
} Want;

static int by_row(const void *a, const void *b) {
  const Want *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Renders the rows of the side's vector file that wants(nw) names into data: URIs. */
static int render_rows(SlemThumbs *t, int s, Want *wants, size_t nw, SlemError *err) {
  const SlemImageShape *shape = t->o.shape;
  const char *path = t->o.vectors[s];
  SlemVecReader *r = NULL;
  float *block = NULL;
  unsigned char *pix = NULL;
  SlemPng *png = NULL;
  size_t d, rows, scale = slem_image_scale(shape, t->o.min_side), w = 0;
  uint64_t row = 0;
  int st;

  qsort(wants, nw, sizeof *wants, by_row);
  if ((st = slem_vecreader_open(&r, path, SLEM_FMT_AUTO, err)) != SLEM_OK) goto cleanup;
  d = slem_vecreader_dim(r);
  if (d != slem_image_shape_size(shape)) {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: dimension %zu, but an image of %zux%zux%zu has %zu values", path, d,
                    shape->height, shape->width, shape->channels, slem_image_shape_size(shape));
    goto cleanup;
  }
  rows = slem_block_rows(d);
  block = malloc(rows * d * sizeof *block);
  pix = malloc(shape->height * scale * shape->width * scale * shape->channels);
  if (!block || !pix) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto cleanup;
  }
  while (w < nw) {
    size_t got;
    if ((st = slem_vecreader_read_f32(r, block, rows, &got, err)) != SLEM_OK) goto cleanup;
    if (got == 0) break;
    for (; w < nw && wants[w].row < row + got; w++) {
      Mem m;
      char **src = t->side[s].src + wants[w].entry;
      slem_image_render(pix, block + (wants[w].row - row) * d, shape, &t->o.range, scale);
      if ((st = slem_pngenc_new(&png, pix, shape->width * scale, shape->height * scale,
                             (int)shape->channels, err)) != SLEM_OK)
        goto cleanup;
      if (!mem_open(&m)) goto nomem;
      fputs("data:image/png;base64,", m.fp);
      slem_html_base64(m.fp, png->data, png->size);
      slem_pngenc_free(png);
      png = NULL;
      if (!(*src = mem_close(&m))) goto nomem;
    }
    row += got;
  }
  st = SLEM_OK;
  goto cleanup;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
cleanup:
  slem_pngenc_free(png);
  free(pix);
  free(block);
  slem_vecreader_free(r);
  return st;
}

/* Parses a decimal row number; 0 when s is not one. */
static int parse_row(const char *s, uint64_t *row) {
  char *end;
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  *row = strtoull(s, &end, 10);
  return !errno && *end == '\0';
}

static int load_vectors(SlemThumbs *t, int s, size_t from, SlemError *err) {
  Side *side = t->side + s;
  size_t n = slem_strmap_count(side->map), nw = 0;
  SlemIds *ids = NULL;
  SlemStrMap *rows = NULL;
  Want *wants = NULL;
  int st = SLEM_OK;

  if (t->o.ids[s]) {
    if ((st = slem_ids_read(&ids, t->o.ids[s], err)) != SLEM_OK) goto cleanup;
    if (!(rows = slem_strmap_new())) goto nomem;
    for (size_t i = 0; i < slem_ids_count(ids); i++) {
      const char *id = slem_ids_get(ids, i);
      long k = slem_strmap_intern(rows, id, strlen(id));
      if (k < 0) goto nomem;
      if ((size_t)k != i) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %zu: id '%s' appears twice", t->o.ids[s],
                        i + 1, id);
        goto cleanup;
      }
    }
  }
  if (!(wants = malloc((n - from) * sizeof *wants + 1))) goto nomem;
  for (size_t e = from; e < n; e++) {
    const char *id = slem_strmap_get(side->map, e);
    uint64_t row;
    if (rows) {
      long k = slem_strmap_find(rows, id, strlen(id));
      if (k < 0) continue;
      row = (uint64_t)k;
    } else if (!parse_row(id, &row)) {
      continue;
    }
    wants[nw].row = row;
    wants[nw].entry = e;
    nw++;
  }
  if (nw) st = render_rows(t, s, wants, nw, err);
  goto cleanup;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
cleanup:
  free(wants);
  slem_strmap_free(rows);
  slem_ids_free(ids);
  return st;
}

int slem_thumbs_load(SlemThumbs *self, int s, const char *const *ids, size_t n, SlemError *err) {
  Side *side = self->side + s;
  size_t from = slem_strmap_count(side->map), to;
  int st = SLEM_OK;
  for (size_t i = 0; i < n; i++) {
    long k = slem_strmap_intern(side->map, ids[i], strlen(ids[i]));
    if (k < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
    if ((size_t)k >= side->cap) {
      size_t cap = side->cap ? 2 * side->cap : 64;
      char **p = realloc(side->src, cap * sizeof *p);
      if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
      memset(p + side->cap, 0, (cap - side->cap) * sizeof *p);
      side->src = p;
      side->cap = cap;
    }
  }
  to = slem_strmap_count(side->map);
  if (to == from) return SLEM_OK;
  if (self->o.vectors[s]) {
    st = load_vectors(self, s, from, err);
  } else if (self->o.images_dir || self->o.ids_are_paths) {
    for (size_t e = from; e < to && st == SLEM_OK; e++) {
      char *path = find_file(self, slem_strmap_get(side->map, e));
      if (path) st = file_src(self, path, side->src + e, err);
      free(path);
    }
  }
  if (st != SLEM_OK) return st;
  for (size_t e = from; e < to; e++)
    if (!side->src[e]) {
      if (!self->missing) {
        self->first_side = s;
        self->first_entry = e;
      }
      self->missing++;
    }
  return SLEM_OK;
}

const char *slem_thumbs_src(const SlemThumbs *self, int s, const char *id) {
  long k = slem_strmap_find(self->side[s].map, id, strlen(id));
  return k < 0 ? NULL : self->side[s].src[k];
}

size_t slem_thumbs_side(const SlemThumbs *self) {
  if (!self->o.shape) return 0;
  return slem_image_scale(self->o.shape, self->o.min_side) *
         (self->o.shape->height > self->o.shape->width ? self->o.shape->height : self->o.shape->width);
}

size_t slem_thumbs_missing(const SlemThumbs *self, const char **first) {
  if (first)
    *first = self->missing ? slem_strmap_get(self->side[self->first_side].map, self->first_entry)
                           : NULL;
  return self->missing;
}

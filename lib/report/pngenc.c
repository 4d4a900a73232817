#include "pngenc.h"

#include <stdio.h>

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* What the callbacks share with slem_pngenc_new(): the growing output and the first error. */
typedef struct Sink {
  SlemPng *png;
  size_t cap;
  int nomem;
  char msg[256];
} Sink;

static void on_error(png_structp png, png_const_charp msg) {
  Sink *s = png_get_error_ptr(png);
  if (s && !s->msg[0]) snprintf(s->msg, sizeof s->msg, "%s", msg ? msg : "unknown error");
  png_longjmp(png, 1);
}

/* libpng's default prints warnings; the library never prints. */
static void on_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static void on_write(png_structp png, png_bytep data, size_t n) {
  Sink *s = png_get_io_ptr(png);
  if (n > s->cap - s->png->size) {
    size_t cap = s->cap ? s->cap : 1024;
    unsigned char *p;
    while (n > cap - s->png->size) {
      if (cap > ((size_t)-1) / 2) cap = (size_t)-1;
      else cap *= 2;
    }
    p = realloc(s->png->data, cap);
    if (!p) {
      s->nomem = 1;
      png_error(png, "out of memory");
    }
    s->png->data = p;
    s->cap = cap;
  }
  memcpy(s->png->data + s->png->size, data, n);
  s->png->size += n;
}

static void on_flush(png_structp png) { (void)png; }

void slem_pngenc_free(SlemPng *self) {
  if (!self) return;
  free(self->data);
  free(self);
}

int slem_pngenc_new(SlemPng **self, const unsigned char *pixels, size_t width, size_t height,
                 int channels, SlemError *err) {
  png_structp png = NULL;
  png_infop info = NULL;
  png_bytep *rows = NULL;
  Sink sink;
  int st = SLEM_OK;

  *self = NULL;
  if (width == 0 || height == 0 || width > SLEM_PNG_MAX_SIDE || height > SLEM_PNG_MAX_SIDE)
    return slem_error(err, SLEM_EINVAL, "png: image of %zu x %zu pixels (1 to %u a side)", width,
                      height, SLEM_PNG_MAX_SIDE);
  if (channels != 1 && channels != 3)
    return slem_error(err, SLEM_EINVAL, "png: %d channels (1 or 3)", channels);
  memset(&sink, 0, sizeof sink);
  sink.png = calloc(1, sizeof *sink.png);
  rows = malloc(height * sizeof *rows);
  if (!sink.png || !rows) {
    st = slem_error(err, SLEM_ENOMEM, "png: out of memory");
    goto cleanup;
  }
  for (size_t y = 0; y < height; y++)
    rows[y] = (png_bytep)(pixels + y * width * (size_t)channels);
  png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, on_error, on_warning);
  if (png) info = png_create_info_struct(png);
  if (!png || !info) {
    st = slem_error(err, SLEM_ENOMEM, "png: out of memory");
    goto cleanup;
  }
  /* Only sink (whose address does not change) and libpng's own state are touched
   * between here and a jump back, so no local needs to be volatile. */
  if (setjmp(png_jmpbuf(png))) {
    if (sink.nomem) st = slem_error(err, SLEM_ENOMEM, "png: out of memory");
    else st = slem_error(err, SLEM_EIO, "png: %s", sink.msg[0] ? sink.msg : "libpng failed");
    goto cleanup;
  }
  png_set_write_fn(png, &sink, on_write, on_flush);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
               channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 9);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, NULL);
  *self = sink.png;
  sink.png = NULL;

cleanup:
  if (png) png_destroy_write_struct(&png, info ? &info : NULL);
  slem_pngenc_free(sink.png);
  free(rows);
  return st;
}

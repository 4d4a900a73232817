#define _POSIX_C_SOURCE 200809L
#include "image.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIDE_MAX 4096

int slem_image_shape_parse(SlemImageShape *self, const char *text, SlemError *err) {
  unsigned long v[3];
  size_t n = 0;
  const char *p = text;
  for (;;) {
    char *end;
    if (n == 3 || *p < '0' || *p > '9') goto bad;
    errno = 0;
    v[n] = strtoul(p, &end, 10);
    if (errno || end == p || v[n] == 0 || v[n] > SIDE_MAX) goto bad;
    n++;
    p = end;
    if (*p == '\0') break;
    if (*p != 'x' && *p != 'X') goto bad;
    p++;
  }
  if (n < 2) goto bad;
  memset(self, 0, sizeof *self);
  if (n == 2) {
    self->height = v[0];
    self->width = v[1];
    self->channels = 1;
  } else if (v[2] == 1 || v[2] == 3) {
    self->height = v[0];
    self->width = v[1];
    self->channels = v[2];
  } else if (v[0] == 1 || v[0] == 3) {
    self->channels = v[0];
    self->height = v[1];
    self->width = v[2];
    self->planar = 1;
  } else {
    return slem_error(err, SLEM_EINVAL,
                      "image shape '%s': 1 or 3 channels, as HxWxC or CxHxW", text);
  }
  return SLEM_OK;
bad:
  return slem_error(err, SLEM_EINVAL,
                    "image shape '%s': expected HxW, HxWxC or CxHxW (sides 1 to %d), e.g. 8x8, "
                    "28x28, 32x32x3", text, SIDE_MAX);
}

size_t slem_image_shape_size(const SlemImageShape *self) {
  return self->height * self->width * self->channels;
}

int slem_image_pixel_range_parse(SlemPixelRange *self, const char *text, SlemError *err) {
  char *end;
  double lo, hi;
  const char *colon = strchr(text, ':');
  if (!colon) goto bad;
  errno = 0;
  lo = strtod(text, &end);
  if (errno || end != colon || end == text) goto bad;
  hi = strtod(colon + 1, &end);
  if (errno || *end || end == colon + 1) goto bad;
  if (!isfinite(lo) || !isfinite(hi) || !(lo < hi)) goto bad;
  self->fixed = 1;
  self->lo = lo;
  self->hi = hi;
  return SLEM_OK;
bad:
  return slem_error(err, SLEM_EINVAL, "pixel range '%s': expected LO:HI with LO < HI, e.g. 0:255",
                    text);
}

size_t slem_image_scale(const SlemImageShape *shape, size_t min_side) {
  size_t side = shape->height > shape->width ? shape->height : shape->width;
  if (side >= min_side) return 1;
  return (min_side + side - 1) / side;
}

void slem_image_render(unsigned char *pixels, const float *x, const SlemImageShape *shape,
                       const SlemPixelRange *range, size_t scale) {
  size_t h = shape->height, w = shape->width, c = shape->channels, n = h * w * c;
  size_t ow = w * scale;
  double lo = range->lo, hi = range->hi, span;
  if (!range->fixed) {
    lo = INFINITY;
    hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
      if (x[i] < lo) lo = x[i];
      if (x[i] > hi) hi = x[i];
    }
    if (!(lo <= hi)) lo = hi = 0; /* all NaN */
  }
  span = hi - lo;
  for (size_t y = 0; y < h; y++) {
    for (size_t xx = 0; xx < w; xx++) {
      for (size_t k = 0; k < c; k++) {
        size_t src = shape->planar ? (k * h + y) * w + xx : (y * w + xx) * c + k;
        double v = span > 0 ? ((double)x[src] - lo) / span : 0;
        unsigned char g;
        if (!(v > 0)) v = 0; /* NaN too */
        if (v > 1) v = 1;
        g = (unsigned char)lround(v * 255);
        if (range->invert) g = (unsigned char)(255 - g);
        for (size_t dy = 0; dy < scale; dy++)
          for (size_t dx = 0; dx < scale; dx++)
            pixels[((y * scale + dy) * ow + xx * scale + dx) * c + k] = g;
      }
    }
  }
}

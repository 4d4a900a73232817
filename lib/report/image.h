/* Vectors that are small images: their shape, and their rendering to 8-bit pixels.
 *
 * A shape is written HxW (grayscale), HxWxC (C channels interleaved per pixel, as numpy's
 * (H, W, C) and Fashion-MNIST-like or CIFAR arrays flattened in C order) or CxHxW
 * (planar: all of channel 0, then channel 1, ...). C is 1 or 3. When both readings
 * are possible (3x3x3) the interleaved one is taken.
 */
#ifndef SLEM_IMAGE_H
#define SLEM_IMAGE_H

#include <stddef.h>

#include "error.h"

typedef struct SlemImageShape {
  size_t height, width, channels;
  int planar;  /* 1: CxHxW */
} SlemImageShape;

/* Parses "8x8", "28x28", "32x32x3", "3x32x32". Errors: SLEM_EINVAL with a message
 * quoting text (not 2 or 3 positive numbers, a side above 4096, a channel count that is
 * not 1 or 3). */
int slem_image_shape_parse(SlemImageShape *self, const char *text, SlemError *err);

/* Values per vector: height * width * channels. */
size_t slem_image_shape_size(const SlemImageShape *self);

/* How values become gray levels. fixed = 0: each image's own minimum is black and its
 * maximum white (an image whose values are all equal is black); fixed = 1: lo is black
 * and hi white for every image, values outside clamped. invert swaps black and white
 * (dark ink on white paper). NaN is taken as the low end. */
typedef struct SlemPixelRange {
  int fixed;
  double lo, hi;
  int invert;
} SlemPixelRange;

/* Parses "LO:HI" with LO < HI, both finite: sets fixed, lo and hi (invert is left as it
 * is). Errors: SLEM_EINVAL. */
int slem_image_pixel_range_parse(SlemPixelRange *self, const char *text, SlemError *err);

/* The smallest whole factor that makes the longer side at least min_side pixels (1 when
 * it already is). */
size_t slem_image_scale(const SlemImageShape *shape, size_t min_side);

/* Renders x(slem_image_shape_size(shape)) into pixels(height * scale, width * scale,
 * channels), each value a scale x scale block (nearest neighbour). Cannot fail. */
void slem_image_render(unsigned char *pixels, const float *x, const SlemImageShape *shape,
                       const SlemPixelRange *range, size_t scale);

#endif

/* PNG images encoded in memory through libpng, for pictures embedded in reports.
 *
 * Pixels are 8-bit, row-major, rows top to bottom: 1 channel (grayscale) or 3 (RGB,
 * interleaved). libpng reports errors by longjmp; here every such jump lands inside
 * slem_pngenc_new(), which returns a status: nothing jumps past the library's API.
 */
#ifndef SLEM_PNGENC_H
#define SLEM_PNGENC_H

#include <stddef.h>

#include "error.h"

typedef struct SlemPng {
  unsigned char *data;  /* the PNG file's bytes */
  size_t size;
} SlemPng;

/* Largest width or height accepted, far above any thumbnail and below libpng's limit. */
#define SLEM_PNG_MAX_SIDE 16384u

/* Encodes pixels(height, width, channels) as a new PNG, freed by slem_pngenc_free().
 * channels is 1 or 3. Errors: SLEM_EINVAL (a side of 0 or above SLEM_PNG_MAX_SIDE,
 * another channel count), SLEM_ENOMEM, SLEM_EIO with libpng's own message for any
 * other failure inside libpng. */
int slem_pngenc_new(SlemPng **self, const unsigned char *pixels, size_t width, size_t height,
                 int channels, SlemError *err);
void slem_pngenc_free(SlemPng *self);

#endif

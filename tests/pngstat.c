/* pngstat: what a screenshot shows, for tests/browser.sh (no Python in make check).
 * Usage: pngstat FILE.png [#rrggbb...]
 * Prints "WIDTH HEIGHT COLOURS" (distinct RGB colours), then for each colour given the
 * number of pixels within 40 (sum of absolute channel differences) of it. Reads with
 * libpng's simplified API. Exit 1 when the file is not a readable PNG. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  png_image im;
  unsigned char *px;
  unsigned *rgb;
  size_t n, distinct = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: pngstat FILE.png [#rrggbb...]\n");
    return 2;
  }
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&im, argv[1])) {
    fprintf(stderr, "pngstat: %s: %s\n", argv[1], im.message);
    return 1;
  }
  im.format = PNG_FORMAT_RGB;
  n = (size_t)im.width * im.height;
  px = malloc(PNG_IMAGE_SIZE(im));
  rgb = malloc(n * sizeof *rgb + 1);
  if (!px || !rgb || !png_image_finish_read(&im, NULL, px, 0, NULL)) {
    fprintf(stderr, "pngstat: %s: %s\n", argv[1], px && rgb ? im.message : "out of memory");
    return 1;
  }
  for (size_t i = 0; i < n; i++) rgb[i] = (unsigned)px[3 * i] << 16 | (unsigned)px[3 * i + 1] << 8 | px[3 * i + 2];
  qsort(rgb, n, sizeof *rgb, cmp);
  for (size_t i = 0; i < n; i++) distinct += i == 0 || rgb[i] != rgb[i - 1];
  printf("%u %u %zu\n", im.width, im.height, distinct);
  for (int a = 2; a < argc; a++) {
    unsigned c = (unsigned)strtoul(argv[a] + (argv[a][0] == '#'), NULL, 16);
    int r = c >> 16 & 255, g = c >> 8 & 255, b = c & 255;
    size_t near = 0;
    for (size_t i = 0; i < n; i++)
      near += abs(px[3 * i] - r) + abs(px[3 * i + 1] - g) + abs(px[3 * i + 2] - b) <= 40;
    printf("%s %zu\n", argv[a], near);
  }
  free(px);
  free(rgb);
  return 0;
}

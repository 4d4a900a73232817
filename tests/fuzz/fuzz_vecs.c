/* Vector files: the first byte picks the format (SlemFormat: 0 auto, 1 fvecs, 2 bvecs,
 * 3 ivecs, 4 npy, 5 text, then the formats added after them), the rest is the file;
 * every block is read as double and again as float (a container of kernel projections
 * too: its rows are accepted). HDF5 files are left out: their parser is libhdf5's, not
 * slem's, and not made to be fed arbitrary bytes (fmt_hdf5.c reads the files it is given). */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>

#include "../../lib/formats/vecs.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  SlemVecReader *r = NULL;
  SlemError err;
  int fd;
  static const unsigned char hdf5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  SlemFormat fmt;
  if (size < 1) return 0;
  fmt = (SlemFormat)(data[0] % SLEM_FMT_END);
  if (fmt == SLEM_FMT_HDF5 || memmem(data + 1, size - 1, hdf5_magic, sizeof hdf5_magic)) return 0;
  fd = fuzz_file(path, data + 1, size - 1);
  if (fd < 0) return 0;
  if (slem_vecreader_open(&r, path, fmt, &err) == SLEM_OK) {
    size_t d = slem_vecreader_dim(r), got;
    if (slem_vecreader_projections(r, NULL, NULL, NULL)) slem_vecreader_accept_projections(r);
    double *x = malloc(7 * d * sizeof *x);
    float *f = malloc(7 * d * sizeof *f);
    while (x && slem_vecreader_read(r, x, 7, &got, &err) == SLEM_OK && got > 0) {
    }
    if (f && slem_vecreader_rewind(r, &err) == SLEM_OK)
      while (slem_vecreader_read_f32(r, f, 5, &got, &err) == SLEM_OK && got > 0) {
      }
    free(x);
    free(f);
    slem_vecreader_free(r);
  }
  close(fd);
  return 0;
}

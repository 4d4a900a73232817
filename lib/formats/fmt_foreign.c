/* Files of the field that slem does not read, recognised by their magic or extension so that
 * the refusal says what they are and what to do, instead of reading them as fvecs: an npz
 * archive (a zip of npy files) and a MATLAB .mat file (v7.3 ones are HDF5 behind a 512-byte
 * header). Not listed among the formats. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "vecfmt.h"

static int is_zip(const unsigned char *p, size_t n) {
  return n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0;
}

static int is_mat(const unsigned char *p, size_t n) {
  return n >= 10 && memcmp(p, "MATLAB ", 7) == 0;
}

static int sniff_foreign(const unsigned char *p, size_t n) {
  return is_zip(p, n) || is_mat(p, n) ? 100 : 0;
}

static int open_foreign(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  const unsigned char *p;
  size_t n = 0;
  int mat;
  int st = slem_in_peek(r->in, 16, &p, &n, err);
  if (st) return st;
  mat = is_mat(p, n) || (!is_zip(p, n) && r->fmt == SLEM_FMT_FOREIGN && strlen(name) > 4 &&
                         strcmp(name + strlen(name) - 4, ".mat") == 0);
  if (mat)
    return slem_error(err, SLEM_EFORMAT, "%s: a MATLAB .mat file: save the matrix as npy "
                      "(numpy.save(F, scipy.io.loadmat(...)['NAME'])), or with save -v7.3 and "
                      "give it as an HDF5 file, FILE:NAME", name);
  return slem_error(err, SLEM_EFORMAT, "%s: an npz archive: extract the array with "
                    "numpy.load(...)['NAME'] and numpy.save it as npy", name);
}

static int begin_foreign(SlemVecWriter *w, SlemError *err) {
  return slem_error(err, SLEM_EINVAL, "%s: slem does not write npz or .mat files; write npy",
                    slem_out_name(w->out));
}

const SlemVecFormatDef slem_vfmt_foreign = {
    .id = SLEM_FMT_FOREIGN, .names = {"npz", "mat", NULL}, .unlisted = 1,
    .sniff = sniff_foreign, .open = open_foreign, .begin = begin_foreign};

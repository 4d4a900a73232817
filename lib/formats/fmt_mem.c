/* array: rows x cols float32 or float64 values, row-major, in the caller's memory (the C
 * API's arrays, lib/api/). A member of the table of formats that no name, extension,
 * content or -f reaches: its readers are opened by slem_vecreader_open_array() only, over
 * the caller's memory, which is never copied whole (a read copies the rows it returns). Its
 * rows are numbered from 0 in messages, as the caller indexes them ("x: row 12, column 3:
 * NaN"); a non-finite value is refused or skipped as the files' readers do it. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "vecfmt.h"
#include "vecs.h"

typedef struct Mem {
  const unsigned char *data;
  size_t rows;
  uint64_t next; /* the row the next read starts at */
} Mem;

/* Only slem_vecreader_open_array() makes an array's reader: a format given by name (which
 * no option parses) finds nothing to read. */
static int open_refused(SlemVecReader *r, SlemError *err) {
  return slem_error(err, SLEM_EINVAL, "%s: the array format reads the caller's memory, not a "
                    "file", slem_in_name(r->in));
}

/* The first column of row i of the array (values at p) that is not finite, or that a
 * float32 result cannot hold (-1 for none). */
static long bad_column(const SlemVecReader *r, const unsigned char *p, int to_f32) {
  if (r->dtype == SLEM_DT_F4) {
    const float *v = (const float *)p;
    for (size_t j = 0; j < r->d; j++)
      if (!isfinite(v[j])) return (long)j;
  } else {
    const double *v = (const double *)p;
    for (size_t j = 0; j < r->d; j++)
      if (!isfinite(v[j]) || (to_f32 && !isfinite((float)v[j]))) return (long)j;
  }
  return -1;
}

static int read_mem(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                    SlemError *err) {
  Mem *m = r->priv;
  size_t out = 0;
  *got = 0;
  while (out < max && m->next < m->rows) {
    const unsigned char *p = m->data + m->next * r->rec;
    long bad = bad_column(r, p, xf != NULL);
    if (bad >= 0) {
      if (!r->skip_nonfinite) {
        double v = r->dtype == SLEM_DT_F4 ? ((const float *)p)[bad] : ((const double *)p)[bad];
        if (isfinite(v))
          return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %ld: %.17g is "
                            "beyond float32's range, in which the vectors are read",
                            slem_in_name(r->in), m->next, bad, v);
        return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %ld: %s",
                          slem_in_name(r->in), m->next, bad, isnan(v) ? "NaN" : "infinite");
      }
      r->skipped++;
    } else if (r->dtype == SLEM_DT_F4) {
      const float *v = (const float *)p;
      if (xf) memcpy(xf + out * r->d, v, r->rec);
      else
        for (size_t j = 0; j < r->d; j++) xd[out * r->d + j] = v[j];
      out++;
    } else {
      const double *v = (const double *)p;
      if (xd) memcpy(xd + out * r->d, v, r->rec);
      else
        for (size_t j = 0; j < r->d; j++) xf[out * r->d + j] = (float)v[j];
      out++;
    }
    m->next++;
    r->recs++;
  }
  r->done += out;
  *got = out;
  return SLEM_OK;
}

static int rewind_mem(SlemVecReader *r, SlemError *err) {
  (void)err;
  ((Mem *)r->priv)->next = 0;
  return SLEM_OK;
}

static int seek_mem(SlemVecReader *r, uint64_t row, SlemError *err) {
  (void)err;
  ((Mem *)r->priv)->next = row;
  return SLEM_OK;
}

const SlemVecFormatDef slem_vfmt_mem = {
    .id = SLEM_FMT_MEM, .names = {"array", NULL}, .unlisted = 1, .memory = 1,
    .open = open_refused, .read = read_mem, .rewind = rewind_mem, .seek = seek_mem};

int slem_vecreader_open_array(SlemVecReader **self, const char *name, const void *data,
                              int dtype, size_t rows, size_t cols, SlemError *err) {
  SlemVecReader *r = NULL;
  Mem *m = NULL;
  size_t esize = dtype == SLEM_DTYPE_F4 ? 4 : dtype == SLEM_DTYPE_F8 ? 8 : 0;
  int st;
  *self = NULL;
  if (!name) name = "array";
  if (!esize)
    return slem_error(err, SLEM_EINVAL, "%s: element type %d, not float32 or float64", name,
                      dtype);
  if (cols == 0 || cols > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EINVAL, "%s: %zu columns, not 1 to %u", name, cols,
                      SLEM_DIM_MAX);
  if (rows == 0) return slem_error(err, SLEM_EINVAL, "%s: no rows", name);
  if (!data) return slem_error(err, SLEM_EINVAL, "%s: no data (a null pointer)", name);
  if (rows > INT64_MAX / (esize * cols))
    return slem_error(err, SLEM_EINVAL, "%s: %zu rows of %zu columns are beyond memory", name,
                      rows, cols);
  if (!(r = calloc(1, sizeof *r)) || !(m = calloc(1, sizeof *m))) {
    free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  r->priv = m;
  m->data = data;
  m->rows = rows;
  r->def = &slem_vfmt_mem;
  r->fmt = SLEM_FMT_MEM;
  r->divisor = 1;
  r->d = cols;
  r->count = (int64_t)rows;
  r->dtype = esize == 4 ? SLEM_DT_F4 : SLEM_DT_F8;
  r->esize = esize;
  r->rec = esize * cols;
  if ((st = slem_in_new_detached(&r->in, name, (int64_t)(rows * r->rec), err)) != SLEM_OK) {
    slem_vecreader_free(r);
    return st;
  }
  *self = r;
  return SLEM_OK;
}

int slem_vecreader_array(const SlemVecReader *self, const void **data, size_t *size) {
  const Mem *m = self->def == &slem_vfmt_mem ? self->priv : NULL;
  if (!m) return 0;
  if (data) *data = m->data;
  if (size) *size = m->rows * self->rec;
  return 1;
}

const SlemVecReader *slem_vecarrays_find(const SlemVecArrays *arrays, const char *path) {
  for (size_t i = 0; arrays && path && i < arrays->n; i++)
    if (arrays->readers[i]->def == &slem_vfmt_mem && path == slem_vecreader_name(arrays->readers[i]))
      return arrays->readers[i];
  return NULL;
}

int slem_vecreader_open_input(SlemVecReader **self, const char *path, SlemFormat fmt,
                              const SlemVecArrays *arrays, SlemError *err) {
  const SlemVecReader *a = slem_vecarrays_find(arrays, path);
  const Mem *m;
  if (!a) return slem_vecreader_open(self, path, fmt, err);
  m = a->priv;
  return slem_vecreader_open_array(self, path, m->data,
                                   a->dtype == SLEM_DT_F4 ? SLEM_DTYPE_F4 : SLEM_DTYPE_F8,
                                   m->rows, a->d, err);
}

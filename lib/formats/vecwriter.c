/* The vector writer (vecs.h): writes through the hooks (vecfmt.h) of a format of the
 * table (vecs.c), atomically. */
#define _POSIX_C_SOURCE 200809L
#include "vecs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "vecfmt.h"

int slem_vecwriter_open(SlemVecWriter **self, const char *path, SlemFormat fmt, size_t d,
                        int64_t n_hint, SlemError *err) {
  SlemVecWriter *w = calloc(1, sizeof *w);
  int st;
  *self = NULL;
  if (!w) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (fmt == SLEM_FMT_AUTO && (st = slem_format_for_output(&fmt, path, err)) != SLEM_OK) {
    free(w);
    return st;
  }
  w->fmt = fmt;
  w->def = slem_vfmt_find(fmt);
  w->d = d;
  w->n_hint = n_hint;
  if (!w->def) {
    free(w);
    return slem_error(err, SLEM_EINVAL, "%s: unknown vector format %d", path, (int)fmt);
  }
  w->rec = malloc(4 + 4 * d); /* one record, for the formats that convert values */
  if (!w->rec) {
    free(w);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  w->dtype = SLEM_DTYPE_F4;
  /* binary vectors on a terminal are noise and can upset it: refuse, as gzip does */
  if ((!path || strcmp(path, "-") == 0) && fmt != SLEM_FMT_TEXT && isatty(STDOUT_FILENO)) {
    st = slem_error(err, SLEM_EINVAL, "refusing to write binary %s vectors to a terminal: give "
                    "-o FILE, redirect the output, or choose text", w->def->names[0]);
    goto fail;
  }
  st = slem_out_open(&w->out, path, err);
  if (st) goto fail;
  if (w->def->begin && (st = w->def->begin(w, err)) != SLEM_OK) goto fail;
  *self = w;
  return SLEM_OK;
fail:
  slem_vecwriter_abort(w);
  return st;
}

int slem_vecwriter_set_dtype(SlemVecWriter *self, SlemDtype dt, SlemError *err) {
  static const char *const names[] = {"f4", "f2", "i1", "f8"};
  if (self->started)
    return slem_error(err, SLEM_EINVAL, "%s: the element type is set before the first vector",
                      slem_out_name(self->out));
  if (dt != SLEM_DTYPE_F4 && !(self->def->out_dtypes & (1u << dt)))
    return slem_error(err, SLEM_EINVAL, "%s: %s output cannot store %s values (%s can)",
                      slem_out_name(self->out), self->def->names[0], names[dt],
                      dt == SLEM_DTYPE_F8 ? "a container of kernel projections" : "npy");
  self->dtype = dt;
  return SLEM_OK;
}

/* What the writer holds, the format's state included. */
static void writer_free(SlemVecWriter *self) {
  if (self->def && self->def->wclose) self->def->wclose(self);
  else free(self->priv);
  free(self->rec);
  free(self->meta_strs);
  free(self);
}

/* Writes the header before the first vector (or at the close of an empty file). */
static int start(SlemVecWriter *self, SlemError *err) {
  int st = SLEM_OK;
  if (!self->started && self->def->header) st = self->def->header(self, err);
  self->started = 1;
  return st;
}

int slem_vecwriter_write(SlemVecWriter *self, const float *x, size_t n, SlemError *err) {
  int st = start(self, err);
  if (st) return st;
  st = self->def->write(self, x, n, err);
  if (st) return st;
  self->n += n;
  return SLEM_OK;
}

int slem_vecwriter_write_f64(SlemVecWriter *self, const double *x, size_t n, SlemError *err) {
  int st;
  if (!self->def->write_f64 || self->dtype != SLEM_DTYPE_F8)
    return slem_error(err, SLEM_EINVAL, "%s: only a container of kernel projections stores "
                      "doubles", slem_out_name(self->out));
  if ((st = start(self, err)) != SLEM_OK || (st = self->def->write_f64(self, x, n, err)) != SLEM_OK)
    return st;
  self->n += n;
  return SLEM_OK;
}

int slem_vecwriter_close(SlemVecWriter *self, SlemError *err) {
  int st = start(self, err);
  if (!st && self->def->end) st = self->def->end(self, err);
  if (st) {
    slem_vecwriter_abort(self);
    return st;
  }
  st = slem_out_commit(self->out, err);
  writer_free(self);
  return st;
}

void slem_vecwriter_abort(SlemVecWriter *self) {
  if (!self) return;
  slem_out_abort(self->out);
  writer_free(self);
}

SlemFormat slem_vecwriter_format(const SlemVecWriter *self) { return self->fmt; }

int slem_vecwriter_set_meta(SlemVecWriter *self, const SlemDescMeta *meta, SlemError *err) {
  const char *src[5] = {meta->cache_fingerprint, meta->cache_path, meta->input,
                        meta->kind_of_rows, meta->encoding};
  const char **dst[5];
  size_t len = 0;
  char *p;
  for (int i = 0; i < 5; i++) len += src[i] ? strlen(src[i]) + 1 : 0;
  free(self->meta_strs);
  if (!(self->meta_strs = malloc(len + 1))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  self->meta = *meta;
  p = self->meta_strs;
  dst[0] = &self->meta.cache_fingerprint;
  dst[1] = &self->meta.cache_path;
  dst[2] = &self->meta.input;
  dst[3] = &self->meta.kind_of_rows;
  dst[4] = &self->meta.encoding;
  for (int i = 0; i < 5; i++) {
    if (!src[i]) continue;
    strcpy(p, src[i]);
    *dst[i] = p;
    p += strlen(src[i]) + 1;
  }
  return SLEM_OK;
}

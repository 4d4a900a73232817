/* What the public API's functions share (api_util.h), and slem_version(). */
#define _POSIX_C_SOURCE 200809L
#include "api_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "vectypes.h"

const char *slem_version(void) { return SLEM_VERSION; }

int slem_api_array_check(const SlemArray *x, const char *name, size_t cols_expected,
                         const char *what, SlemError *err) {
  if (!x) return slem_error(err, SLEM_EINVAL, "%s: no array (a null pointer)", name);
  if (x->dtype != SLEM_FLOAT32 && x->dtype != SLEM_FLOAT64)
    return slem_error(err, SLEM_EINVAL, "%s: dtype %d, not SLEM_FLOAT32 (%d) or SLEM_FLOAT64 "
                      "(%d)", name, x->dtype, SLEM_FLOAT32, SLEM_FLOAT64);
  if (x->rows == 0) return slem_error(err, SLEM_EINVAL, "%s: no rows", name);
  if (x->cols == 0 || x->cols > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EINVAL, "%s: %zu columns, not 1 to %u", name, x->cols,
                      SLEM_DIM_MAX);
  if (!x->data) return slem_error(err, SLEM_EINVAL, "%s: no data (a null pointer)", name);
  if (cols_expected > 0 && x->cols != cols_expected)
    return slem_error(err, SLEM_EINVAL, "%s: %zu columns, but %s is %zu", name, x->cols,
                      what ? what : "the dimension", cols_expected);
  return SLEM_OK;
}

int slem_api_array_reader(SlemVecReader **r, const SlemArray *x, const char *name,
                          SlemError *err) {
  int st = slem_api_array_check(x, name, 0, NULL, err);
  *r = NULL;
  if (st != SLEM_OK) return st;
  return slem_vecreader_open_array(r, name, x->data,
                                   x->dtype == SLEM_FLOAT32 ? SLEM_DTYPE_F4 : SLEM_DTYPE_F8,
                                   x->rows, x->cols, err);
}

int slem_api_threads_begin(SlemApiThreads *self, int threads, SlemError *err) {
  const char *env = getenv("SLEM_THREADS");
  self->saved = 0;
  if (threads < 0 || threads > 1024)
    return slem_error(err, SLEM_EINVAL, "threads: %d, not 0 (SLEM_THREADS, else all cores) "
                      "to 1024", threads);
  if (threads == 0 && env && *env) {
    char *end;
    long v;
    errno = 0;
    v = strtol(env, &end, 10);
    if (errno || *end || end == env || v < 1 || v > 1024)
      return slem_error(err, SLEM_EINVAL, "SLEM_THREADS: '%s' is not a whole number from 1 "
                        "to 1024", env);
    threads = (int)v;
  }
  slem_blas_gsl_init();
  if (threads > 0) {
    self->saved = slem_blas_threads();
    slem_blas_set_threads(threads);
  }
  return SLEM_OK;
}

void slem_api_threads_end(SlemApiThreads *self) {
  if (self->saved > 0) slem_blas_set_threads(self->saved);
  self->saved = 0;
}

int slem_api_error_prefix(SlemError *err, int status, const char *prefix) {
  char msg[SLEM_ERRMSG_MAX];
  if (!err) return status;
  snprintf(msg, sizeof msg, "%s", err->msg);
  return slem_error(err, status, "%s%s", prefix, msg);
}

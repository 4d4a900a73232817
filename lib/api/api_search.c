/* The search of the C API (slem.h): slem_search() and slem_search_kernel() are slem-match's
 * search (match.h: slem_match()) over readers of the caller's arrays, its hits written
 * into D and I in FAISS's layout by a sink, as slem-match -F npy writes them to its files.
 * Every argument and every value is checked before the search starts, so that a failure
 * writes nothing into D and I. */
#define _POSIX_C_SOURCE 200809L
#include "slem.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "blas.h"
#include "cache.h"
#include "error.h"
#include "kernel.h"
#include "kind_kernel.h"
#include "match.h"
#include "vecs.h"

/* TODO(h-capi): declared by lib/formats/fmt_mem.c's header once merged */
int slem_vecreader_open_array(SlemVecReader **r, const char *name, const void *data, int dtype,
                              size_t rows, size_t cols, SlemError *err);

/* Where slem_match()'s hits go: row query of D and I (k columns), its n hits then the
 * padding. */
typedef struct Fill {
  float *D;
  int64_t *I;
  size_t k;
} Fill;

/* A SlemHitsFn: the hits of query, best first (FAISS's order: by decreasing score, ties by
 * the lower row), then I = -1, D = -FLT_MAX to k (faiss.IndexFlatIP's padding). */
static int fill_hits(void *ctx, uint64_t query, const SlemHit *hits, size_t n, SlemError *err) {
  const Fill *f = ctx;
  float *d = f->D + query * f->k;
  int64_t *ix = f->I + query * f->k;
  (void)err;
  for (size_t j = 0; j < n; j++) {
    d[j] = hits[j].score;
    ix[j] = (int64_t)hits[j].row;
  }
  for (size_t j = n; j < f->k; j++) {
    d[j] = -FLT_MAX;
    ix[j] = -1;
  }
  return SLEM_OK;
}

/* The shape, dtype and values of a (named what in messages): SLEM_EINVAL for a NULL array,
 * a dtype other than float32 and float64, 0 columns, data NULL with rows; SLEM_EFORMAT for
 * a non-finite element, naming its row and column. */
#define CHECK_BLOCK 4096
static int check_array(const SlemArray *a, const char *what, SlemError *err) {
  size_t n;
  if (!a) return slem_error(err, SLEM_EINVAL, "%s: no array (NULL)", what);
  if (a->dtype != SLEM_FLOAT32 && a->dtype != SLEM_FLOAT64)
    return slem_error(err, SLEM_EINVAL, "%s: dtype %d: give SLEM_FLOAT32 or SLEM_FLOAT64", what,
                      a->dtype);
  if (a->cols == 0) return slem_error(err, SLEM_EINVAL, "%s: 0 columns", what);
  if (a->cols > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EINVAL, "%s: %zu columns, above the largest dimension %u", what,
                      a->cols, (unsigned)SLEM_DIM_MAX);
  if (a->rows > SIZE_MAX / 8 / a->cols)
    return slem_error(err, SLEM_EINVAL, "%s: %zu x %zu elements do not fit in memory", what,
                      a->rows, a->cols);
  if (a->rows > 0 && !a->data) return slem_error(err, SLEM_EINVAL, "%s: data is NULL", what);
  n = a->rows * a->cols;
  /* a pass at the speed of memory over blocks whose exponents are or-ed, the element
   * looked for only in a block that holds one */
  for (size_t lo = 0; lo < n; lo += CHECK_BLOCK) {
    size_t hi = n - lo < CHECK_BLOCK ? n : lo + CHECK_BLOCK, bad = 0;
    if (a->dtype == SLEM_FLOAT32) {
      const float *x = a->data;
      for (size_t i = lo; i < hi; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        bad |= (u & 0x7f800000u) == 0x7f800000u;
      }
    } else {
      const double *x = a->data;
      for (size_t i = lo; i < hi; i++) {
        uint64_t u;
        memcpy(&u, x + i, sizeof u);
        bad |= (u & 0x7ff0000000000000u) == 0x7ff0000000000000u;
      }
    }
    if (!bad) continue;
    for (size_t i = lo; i < hi; i++) {
      double v = a->dtype == SLEM_FLOAT32 ? ((const float *)a->data)[i] : ((const double *)a->data)[i];
      if (!isfinite(v))
        return slem_error(err, SLEM_EFORMAT, "%s: row %zu, column %zu: %s", what, i / a->cols,
                          i % a->cols, isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf");
    }
  }
  return SLEM_OK;
}

/* The values of a, checked finite, >= 0 for a kernel of histograms (named kernel), as
 * slem_kernel_prepare() would refuse them in the middle of the search. Errors: SLEM_EFORMAT
 * naming the row and column. */
static int check_histograms(const SlemArray *a, const char *what, const char *kernel,
                            SlemError *err) {
  for (size_t i = 0; i < a->rows * a->cols; i++) {
    double v = a->dtype == SLEM_FLOAT32 ? ((const float *)a->data)[i] : ((const double *)a->data)[i];
    if (v < 0)
      return slem_error(err, SLEM_EFORMAT, "%s: row %zu, column %zu: %g is negative; the %s "
                        "kernel needs histograms", what, i / a->cols, i % a->cols, v, kernel);
  }
  return SLEM_OK;
}

/* The search of both entry points: the arguments checked, the BLAS threads set for the call
 * and restored, slem_match() from readers over the arrays into D and I. kernel: a kernel
 * cache (slem-match -c), or NULL for the inner product. */
static int search(const SlemCache *kernel, const SlemArray *queries, const SlemArray *database,
                  size_t k, int flags, int threads, float *D, int64_t *I, SlemError *err) {
  SlemVecReader *qr = NULL, *dr = NULL;
  SlemMatchOpts opts;
  SlemMatchStats stats;
  Fill fill = {D, I, k};
  const SlemKernel *kern;
  int st, saved = slem_blas_threads();

  if ((st = check_array(queries, "queries", err)) != SLEM_OK ||
      (st = check_array(database, "database", err)) != SLEM_OK)
    return st;
  if (k == 0) return slem_error(err, SLEM_EINVAL, "k 0: ask for at least one result per query");
  if (queries->rows == 0) return slem_error(err, SLEM_EINVAL, "queries: no rows");
  if (flags & ~SLEM_SEARCH_NORMALIZE)
    return slem_error(err, SLEM_EINVAL, "flags %#x: unknown bits (SLEM_SEARCH_NORMALIZE is %#x)",
                      (unsigned)flags, (unsigned)SLEM_SEARCH_NORMALIZE);
  if (queries->cols != database->cols)
    return slem_error(err, SLEM_EINVAL, "queries have %zu columns, the database %zu: the "
                      "dimensions differ", queries->cols, database->cols);
  if (k > SIZE_MAX / sizeof *D / queries->rows)
    return slem_error(err, SLEM_EINVAL, "k %zu for %zu queries: D and I do not fit in memory", k,
                      queries->rows);
  if (!D || !I) return slem_error(err, SLEM_EINVAL, "%s is NULL", !D ? "D" : "I");
  if (kernel) {
    if (slem_cache_kernel_recursive(kernel))
      return slem_error(err, SLEM_EINVAL, "the cache is kernel SLEM of %zu stages (depth): the "
                        "exact similarity takes a kernel cache of depth 1; encode both sides "
                        "instead", slem_cache_kernel_recursive(kernel)->depth);
    if (!slem_cache_kernel(kernel))
      return slem_error(err, SLEM_EINVAL, "a cache of kind %s: the exact similarity takes a "
                        "kernel cache; for linear SLEM, encode both sides and search the "
                        "descriptors", kernel->kind);
    if (queries->cols != kernel->d)
      return slem_error(err, SLEM_EINVAL, "queries have %zu columns, the cache's dimension is %zu",
                        queries->cols, kernel->d);
    kern = &slem_cache_kernel(kernel)->kernel;
    if (slem_kernel_needs_histograms(kern) &&
        ((st = check_histograms(queries, "queries", slem_kernel_name(kern), err)) != SLEM_OK ||
         (st = check_histograms(database, "database", slem_kernel_name(kern), err)) != SLEM_OK))
      return st;
  }
  if (database->rows == 0) { /* faiss.IndexFlatIP with nothing added: padding alone */
    Fill none = {D, I, k};
    for (size_t q = 0; q < queries->rows; q++) fill_hits(&none, q, NULL, 0, NULL);
    return SLEM_OK;
  }
  slem_match_opts_init(&opts);
  /* at most the database's rows: each query keeps that many hits, the rest is padding */
  opts.k = k < database->rows ? k : database->rows;
  opts.normalize = (flags & SLEM_SEARCH_NORMALIZE) != 0;
  opts.kernel = kernel;
  /* no more heaps than queries; no copy of the database beyond the tile being scored */
  if (queries->rows < opts.qblock) opts.qblock = queries->rows;
  opts.memory = 0;
  if (threads > 0) slem_blas_set_threads(threads);
  if ((st = slem_vecreader_open_array(&qr, "queries", queries->data, queries->dtype, queries->rows,
                                      queries->cols, err)) != SLEM_OK ||
      (st = slem_vecreader_open_array(&dr, "database", database->data, database->dtype,
                                      database->rows, database->cols, err)) != SLEM_OK)
    goto done;
  st = slem_match(qr, dr, &opts, fill_hits, &fill, &stats, err);
done:
  slem_vecreader_free(qr);
  slem_vecreader_free(dr);
  if (threads > 0) slem_blas_set_threads(saved);
  return st;
}

int slem_search(const SlemArray *queries, const SlemArray *database, size_t k, int flags,
                int threads, float *D, int64_t *I, SlemError *err) {
  return search(NULL, queries, database, k, flags, threads, D, I, err);
}

int slem_search_kernel(const SlemCache *cache, const SlemArray *queries,
                       const SlemArray *database, size_t k, int flags, int threads, float *D,
                       int64_t *I, SlemError *err) {
  if (!cache) return slem_error(err, SLEM_EINVAL, "no cache (NULL)");
  return search(cache, queries, database, k, flags, threads, D, I, err);
}

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

#include "api_util.h"
#include "blas.h"
#include "cache.h"
#include "error.h"
#include "kernel.h"
#include "kind_kernel.h"
#include "match.h"
#include "vecs.h"

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

/* Whether one of the n floats x has the exponent field all ones (NaN, Inf): the field plus
 * one carries into the sign bit only then, or-ed over the block, in integers that the
 * compiler turns into vector instructions (a block of CHECK_BLOCK, a constant, most of all). */
static inline int flag_f32(const float *x, size_t n) {
  uint32_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u; /* the bits of the float (IEEE binary32), read without aliasing it */
    memcpy(&u, x + i, sizeof u);
    acc |= (u & 0x7f800000u) + 0x00800000u;
  }
  return (acc & 0x80000000u) != 0;
}

/* The same for n doubles, from the exponent all ones (NaN, Inf), or with to_f32 from 2^127
 * (which holds every double that rounds to Inf in float32). */
static inline int flag_f64(const double *x, size_t n, int to_f32) {
  const uint64_t add = 0x8000000000000000u - (to_f32 ? 0x47e0000000000000u : 0x7ff0000000000000u);
  uint64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, x + i, sizeof u);
    acc |= (u & 0x7ff0000000000000u) + add;
  }
  return (acc & 0x8000000000000000u) != 0;
}

/* The values of a (its shape checked: slem_api_array_check()) as the array reader
 * (slem_vecreader_open_array()) would refuse them in the middle of the search, read as float32
 * when to_f32: SLEM_EFORMAT for a non-finite element (or a float64 beyond float32's range,
 * to_f32), naming the array, the row and the column in the reader's words. */
#define CHECK_BLOCK 4096
static int check_values(const SlemArray *a, const char *what, int to_f32, SlemError *err) {
  size_t n;
  n = a->rows * a->cols;
  /* a pass at the speed of memory (flag_f32(), flag_f64()); the element is looked for only
   * in a block that holds one */
  for (size_t lo = 0; lo < n; lo += CHECK_BLOCK) {
    size_t hi = n - lo < CHECK_BLOCK ? n : lo + CHECK_BLOCK;
    int bad = a->dtype == SLEM_FLOAT32
                  ? (hi - lo == CHECK_BLOCK ? flag_f32((const float *)a->data + lo, CHECK_BLOCK)
                                            : flag_f32((const float *)a->data + lo, hi - lo))
                  : (hi - lo == CHECK_BLOCK
                         ? flag_f64((const double *)a->data + lo, CHECK_BLOCK, to_f32)
                         : flag_f64((const double *)a->data + lo, hi - lo, to_f32));
    if (!bad) continue;
    for (size_t i = lo; i < hi; i++) {
      double v = a->dtype == SLEM_FLOAT32 ? ((const float *)a->data)[i] : ((const double *)a->data)[i];
      if (!isfinite(v))
        return slem_error(err, SLEM_EFORMAT, "%s: row %zu, column %zu: %s", what, i / a->cols,
                          i % a->cols, isnan(v) ? "NaN" : "infinite");
      if (to_f32 && !isfinite((float)v))
        return slem_error(err, SLEM_EFORMAT, "%s: row %zu, column %zu: %.17g is beyond float32's "
                          "range, in which the vectors are read", what, i / a->cols, i % a->cols,
                          v);
    }
  }
  return SLEM_OK;
}

/* The values of a, >= 0 for a kernel of histograms (named kernel), as
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
  SlemApiThreads th = {0};
  Fill fill = {D, I, k};
  const SlemKernel *kern;
  int st;

  if ((st = slem_api_array_check(queries, "queries", kernel ? kernel->d : 0,
                                 "the cache's dimension", err)) != SLEM_OK)
    return st;
  if (!database) return slem_error(err, SLEM_EINVAL, "database: no array (a null pointer)");
  if (database->rows == 0 && database->cols != queries->cols) /* empty: its shape alone */
    return slem_error(err, SLEM_EINVAL, "database: %zu columns, but the queries' dimension is %zu",
                      database->cols, queries->cols);
  if (database->rows > 0 &&
      (st = slem_api_array_check(database, "database", queries->cols, "the queries' dimension",
                                 err)) != SLEM_OK)
    return st;
  if (k == 0) return slem_error(err, SLEM_EINVAL, "k 0: ask for at least one result per query");
  if (flags & ~SLEM_SEARCH_NORMALIZE)
    return slem_error(err, SLEM_EINVAL, "flags %#x: unknown bits (SLEM_SEARCH_NORMALIZE is %#x)",
                      (unsigned)flags, (unsigned)SLEM_SEARCH_NORMALIZE);
  if (k > SIZE_MAX / sizeof *I / queries->rows)
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
    if (flags & SLEM_SEARCH_NORMALIZE)
      return slem_error(err, SLEM_EINVAL, "SLEM_SEARCH_NORMALIZE does not go with a kernel cache: "
                        "its similarity is normalised");
  }
  /* the values that the reader of the queries would refuse after the first block of queries
   * was written (the inner product reads float32, the kernel double); the database's it
   * refuses itself in the first pass over the database, which ends before slem_match() hands
   * out any query's hits (a query's best k are known after the last tile), so that a bad
   * value writes nothing either way, without a pass over the database of its own */
  if ((st = check_values(queries, "queries", !kernel, err)) != SLEM_OK) return st;
  if (kernel) {
    kern = &slem_cache_kernel(kernel)->kernel;
    if (slem_kernel_needs_histograms(kern) &&
        ((st = check_histograms(queries, "queries", slem_kernel_name(kern), err)) != SLEM_OK ||
         (st = check_histograms(database, "database", slem_kernel_name(kern), err)) != SLEM_OK))
      return st;
  }
  if ((st = slem_api_threads_begin(&th, threads, err)) != SLEM_OK) goto done;
  if (database->rows == 0) { /* faiss.IndexFlatIP with nothing added: padding alone */
    for (size_t q = 0; q < queries->rows; q++) fill_hits(&fill, q, NULL, 0, NULL);
    goto done;
  }
  slem_match_opts_init(&opts);
  /* at most the database's rows: each query keeps that many hits, the rest is padding */
  opts.k = k < database->rows ? k : database->rows;
  opts.normalize = (flags & SLEM_SEARCH_NORMALIZE) != 0;
  opts.kernel = kernel;
  /* no more heaps than queries; no copy of the database beyond the tile being scored */
  if (queries->rows < opts.qblock) opts.qblock = queries->rows;
  opts.memory = 0;
  { /* a database smaller than the default tile in one tile of its size: the same scores (a
     * tile's size changes none), and a call on a small database allocates no more */
    size_t tile = kernel ? slem_block_rows(queries->cols)
                         : slem_match_tile_rows(queries->cols, slem_blas_threads());
    if (database->rows < tile) opts.dblock = database->rows;
  }
  if ((st = slem_api_array_reader(&qr, queries, "queries", err)) != SLEM_OK ||
      (st = slem_api_array_reader(&dr, database, "database", err)) != SLEM_OK)
    goto done;
  st = slem_match(qr, dr, &opts, fill_hits, &fill, &stats, err);
done:
  slem_vecreader_free(qr);
  slem_vecreader_free(dr);
  slem_api_threads_end(&th);
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

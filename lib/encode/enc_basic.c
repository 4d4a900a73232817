/* The authors' basic encoder (src/basic_encoder.m: no bias, uncentred) from a linear cache:
 * slem-encode --basic [--theta T]. For a positive x0,
 *   w = (S0 + lambda I + theta x0 x0^T)^-1 (theta x0 - mu),  normalised (d values),
 * S0 = (1/n) X X^T the negatives' uncentred second moment. slem's Sigma is divided by n
 * too, so S0 + lambda I = A + mu mu^T with the cache's A = Sigma + lambda I, and two
 * Sherman-Morrison updates of the cache's A^-1 give w exactly: with p = A^-1 mu,
 * c = 1 + mu.p (once), a = A^-1 x0 (one GEMM per block), t = p.x0 / c,
 * b = a - t p (= (A + mu mu^T)^-1 x0) and s = x0.b,
 *   w = theta (1 + t) / (1 + theta s) b - p / c.
 * Computed in double, in fixed chunks of 256 rows (one BLAS call each, on one thread), so
 * that the descriptors do not depend on the thread count or the block.
 *
 * It comes first in the encoders' table: --basic is its option whatever the cache, and it
 * refuses every cache but a full linear one (the others' accepts() never see --basic). */
#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdlib.h>

#include "blas.h"
#include "encoder.h"
#include "rowmul.h"
#include "kind_linear.h"
#include "variant.h"

typedef struct BasicEnc {
  const double *ainv;  /* the cache's A^-1(d, d), symmetric */
  double *p;           /* p(d) = A^-1 mu */
  double c;            /* 1 + mu.p */
  double theta;
  size_t d;
  double *a;           /* a(max_rows, d) */
  uint64_t zeros;
  size_t count_lo, count_hi;  /* the rows of a block whose zeros count (encoder.h) */
} BasicEnc;

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm || !o->basic) return SLEM_ENC_NOT_MINE; /* ESVM: enc_esvm.c */
  if (!slem_cache_linear(cache)) {
    slem_error(err, SLEM_EINVAL, "--basic needs a full linear cache (slem-negstats without "
               "--kernel, --depth, --pca or --partial): %s is not one", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (slem_cache_linear(cache)->mixed) {
    slem_error(err, SLEM_EINVAL, "--basic needs the negatives' own statistics: %s holds the "
               "mixed covariance of positives and negatives (slem-negstats --mixed)",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (o->alpha_set || o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "%s: --basic gives unit descriptors (basic_encoder.m): not "
               "with --%s", slem_cache_path(cache), o->alpha_set ? "alpha" : "classifier");
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static void free_(void *self) {
  BasicEnc *e = self;
  if (!e) return;
  free(e->p);
  free(e->a);
  free(e);
}

typedef struct PJob {
  BasicEnc *e;
  const double *mu;
} PJob;

/* p = A^-1 mu and c = 1 + mu.p */
static void p_once(void *ctx, size_t lo, size_t hi) {
  const PJob *j = ctx;
  BasicEnc *e = j->e;
  (void)lo;
  (void)hi;
  cblas_dsymv(CblasRowMajor, CblasUpper, (int)e->d, 1.0, e->ainv, (int)e->d, j->mu, 1, 0.0,
              e->p, 1);
  e->c = 1 + cblas_ddot((int)e->d, j->mu, 1, e->p, 1);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  const SlemCacheLinear *lin = slem_cache_linear(cache);
  size_t d = cache->d;
  BasicEnc *e = calloc(1, sizeof *e);
  *self = NULL;
  if (!e || !(e->p = malloc(d * sizeof *e->p)) ||
      !(e->a = malloc((max_rows ? max_rows : 1) * d * sizeof *e->a))) {
    free_(e);
    return slem_error(err, SLEM_ENOMEM, "out of memory for --basic (d = %zu)", d);
  }
  e->ainv = lin->ainv;
  e->theta = o->theta;
  e->count_hi = SIZE_MAX;
  e->d = d;
  {
    /* one unit: the BLAS on one thread, as in run_rows(), so that p and c (and so every
     * descriptor) do not depend on -t: OpenBLAS's threaded dsymv sums in another order.
     * Also the same p in both of encstream.c's lanes, the second made with the pool on. */
    PJob pj = {e, lin->mu};
    slem_blas_par_chunks(1, 1, p_once, &pj);
  }
  *self = e;
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return ((const BasicEnc *)self)->d;
}

typedef struct BasicJob {
  BasicEnc *e;
  float *y;
  const double *x;
} BasicJob;

static void run_rows(void *ctx, size_t lo, size_t hi) {
  const BasicJob *j = ctx;
  BasicEnc *e = j->e;
  size_t d = e->d;
  double *a = e->a + lo * d;
  slem_rowmul_f64(a, d, j->x + lo * d, d, hi - lo, e->ainv, d, d, d);
  for (size_t i = lo; i < hi; i++, a += d) {
    const double *x0 = j->x + i * d;
    double t = cblas_ddot((int)d, e->p, 1, x0, 1) / e->c, s, f, g, nrm;
    cblas_daxpy((int)d, -t, e->p, 1, a, 1); /* a is now b */
    s = cblas_ddot((int)d, x0, 1, a, 1);
    f = e->theta * (1 + t) / (1 + e->theta * s);
    /* a theta near DBL_MAX overflows theta (1 + t) or theta s (inf / inf: NaN, or f = 0);
     * the same f divided through by theta then (only then: other thetas keep their bits) */
    if (!isfinite(e->theta * (1 + t)) || !isfinite(e->theta * s))
      f = (1 + t) / (1 / e->theta + s);
    if (!isfinite(s) && isfinite(t)) {
      /* x of magnitude ~1e154 and beyond: s = x.b overflowed (Inf, or NaN from Inf - Inf).
       * Written in x / T, b / T and t / T for a power of two T near the largest |x_j|
       * (exact): f b = f T (b / T) with f T = theta (1/T + t/T) / (1/T^2 + theta s/T^2) */
      double m = 0, sp = 0, tp, th = e->theta;
      int ex;
      for (size_t k = 0; k < d; k++) m = fabs(x0[k]) > m ? fabs(x0[k]) : m;
      (void)frexp(m, &ex);
      m = ldexp(1, ex - 1); /* T */
      tp = t / m;
      for (size_t k = 0; k < d; k++) a[k] /= m;
      for (size_t k = 0; k < d; k++) sp += (x0[k] / m) * a[k];
      f = th * (1 / m + tp) / (1 / m / m + th * sp);
      if (!isfinite(th * (1 / m + tp)) || !isfinite(th * sp))
        f = (1 / m + tp) / (1 / th / m / m + sp);
    }
    g = -1 / e->c;
    cblas_dscal((int)d, f, a, 1);
    cblas_daxpy((int)d, g, e->p, 1, a, 1);
    nrm = cblas_dnrm2((int)d, a, 1);
    if (nrm == 0 && i >= e->count_lo && i < e->count_hi)
      __atomic_fetch_add(&e->zeros, 1, __ATOMIC_RELAXED);
    /* a NaN norm (x of magnitude ~1e160: x.b overflows) leaves the row NaN, which the stream
     * refuses naming the record (encstream.c), where it was written as zeros, status 0 */
    for (size_t k = 0; k < d; k++)
      j->y[i * d + k] = nrm > 0 ? (float)(a[k] / nrm) : nrm == 0 ? 0.0f : NAN;
  }
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  BasicJob j = {self, y, x};
  slem_blas_par_chunks(b, 256, run_rows, &j);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += ((const BasicEnc *)self)->zeros;
}

static void count_rows(void *self, size_t lo, size_t hi) {
  BasicEnc *e = self;
  e->count_lo = lo;
  e->count_hi = hi;
}

const SlemEncoderOps slem_enc_basic = {"basic", accepts, new_, out_dim, run, counts, NULL,
                                       free_,
    NULL, NULL, 1, count_rows};

#define O(f) SLEM_OPT_FIELD(SlemEncStreamOpts, f)
static const SlemOptSpec basic_encode_options[] = {
    {.name = "basic", .type = SLEM_OPT_FLAG, O(basic),
     .help = "the authors' basic_encoder.m: (S0 + lambda I + theta\n"
             "x x^T)^-1 (theta x - mu), normalised; S0 the\n"
             "negatives' uncentred second moment, no bias (a full\n"
             "linear cache)"},
    {0}};
#undef O

const SlemVariant slem_variant_basic = {
    "basic",
    "the authors' basic_encoder.m: unit descriptors, no bias, the negatives uncentred "
    "(slem-encode --basic)",
    NULL, NULL, &slem_enc_basic, NULL, basic_encode_options};

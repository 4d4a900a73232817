#include "whiten.h"

#include "blas.h"
#include "eigen.h"
#include "rowmul.h"
#include "stats.h"
#include "fit.h"
#include "phases.h"
#include "kind_linear.h"
#include "kind_pca.h"
#include "variant.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct SlemWhitener {
  const SlemCache *cache;
  const SlemCacheEigen *eig;  /* the cache's */
  size_t d, od, max_rows;
  double *p;      /* p(od, d): y = P delta */
  double *pt;     /* pt(d, od) = P^T, for the row-by-row products (rowmul.h) */
  double *delta;  /* delta(max_rows, d) */
  double *y;      /* y(max_rows, od) */
  uint64_t zeros;
  size_t count_lo, count_hi;  /* the rows of a block whose zeros count */
};

typedef struct PJob {
  const double *e, *fe;
  double *p;
  size_t d;
} PJob;

/* Rows [lo, hi) of P = E^T (diag(f) E), one BLAS call on this thread (so that P does not
 * depend on the thread count, as a multithreaded dgemm's bits do). */
static void p_rows(void *ctx, size_t lo, size_t hi) {
  const PJob *j = ctx;
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(hi - lo), (int)j->d, (int)j->d, 1.0,
              j->e + lo, (int)j->d, j->fe, (int)j->d, 0.0, j->p + lo * j->d, (int)j->d);
}

int slem_whiten_new(SlemWhitener **self, const SlemCache *cache, double alpha,
                      size_t max_rows, SlemError *err) {
  SlemWhitener *w;
  const SlemCacheEigen *eg = slem_cache_eigen(cache);
  size_t d = cache->d, od;
  double *f;
  *self = NULL;
  if (!eg)
    return slem_error(err, SLEM_EINVAL, "%s: the cache holds no eigendecomposition: make it "
                      "with slem-negstats --eigen (or --pca R)", slem_cache_path(cache));
  if (!isfinite(alpha)) return slem_error(err, SLEM_EINVAL, "alpha must be finite");
  od = slem_cache_pca(cache) ? eg->neig : d;
  w = calloc(1, sizeof *w);
  f = malloc(eg->neig * sizeof *f);
  if (!w || !f) goto oom;
  w->cache = cache;
  w->eig = eg;
  w->d = d;
  w->od = od;
  w->max_rows = max_rows;
  w->count_hi = SIZE_MAX;
  for (size_t k = 0; k < eg->neig; k++) {
    /* rounding can leave a zero eigenvalue slightly negative */
    double s = fmax(eg->evals[k], 0) + eg->lambda;
    if (alpha < 0 && !(s > 0)) {
      free(f);
      slem_whiten_free(w);
      return slem_error(err, SLEM_ENUMERIC, "%s: eigenvalue %zu of Sigma + lambda I is 0: "
                        "alpha %g needs lambda > 0", slem_cache_path(cache), k + 1, alpha);
    }
    f[k] = alpha == 0 ? 1.0 : pow(s, alpha);
  }
  w->p = malloc(od * d * sizeof *w->p);
  w->delta = malloc(max_rows * d * sizeof *w->delta);
  w->y = malloc(max_rows * od * sizeof *w->y);
  if (!w->p || !w->delta || !w->y) goto oom;
  if (slem_cache_pca(cache)) {
    for (size_t k = 0; k < od; k++)
      for (size_t j = 0; j < d; j++) w->p[k * d + j] = f[k] * eg->evecs[k * d + j];
  } else {
    /* P = E^T diag(f) E, E the eigenvectors by rows: scale the rows, one GEMM */
    double *fe = malloc(d * d * sizeof *fe);
    if (!fe) goto oom;
    for (size_t k = 0; k < d; k++)
      for (size_t j = 0; j < d; j++) fe[k * d + j] = f[k] * eg->evecs[k * d + j];
    {
      PJob pj = {eg->evecs, fe, w->p, d};
      slem_blas_par_chunks(d, 128, p_rows, &pj);
    }
    free(fe);
  }
  if (!(w->pt = malloc(d * od * sizeof *w->pt))) goto oom;
  for (size_t k = 0; k < od; k++)
    for (size_t j = 0; j < d; j++) w->pt[j * od + k] = w->p[k * d + j];
  free(f);
  *self = w;
  return SLEM_OK;
oom:
  free(f);
  slem_whiten_free(w);
  return slem_error(err, SLEM_ENOMEM, "out of memory for the whitening matrix (d = %zu)", d);
}

void slem_whiten_free(SlemWhitener *self) {
  if (!self) return;
  free(self->p);
  free(self->pt);
  free(self->delta);
  free(self->y);
  free(self);
}

size_t slem_whiten_out_dim(const SlemWhitener *self) { return self->od; }
uint64_t slem_whiten_zeros(const SlemWhitener *self) { return self->zeros; }

void slem_whiten_count_rows(SlemWhitener *self, size_t lo, size_t hi) {
  self->count_lo = lo;
  self->count_hi = hi;
}

typedef struct WhitenJob {
  SlemWhitener *self;
  float *outf;
  double *outd;
  const double *x;
} WhitenJob;

/* Rows [lo, hi) of the block, each row on its own (rowmul.h). */
static void run_rows(void *ctx, size_t lo, size_t hi) {
  const WhitenJob *j = ctx;
  SlemWhitener *self = j->self;
  size_t d = self->d, od = self->od, b = hi - lo;
  const double *mu = self->eig->mu, *x = j->x + lo * d;
  double *delta = self->delta + lo * d, *y = self->y + lo * od;
  for (size_t i = 0; i < b; i++)
    for (size_t k = 0; k < d; k++) delta[i * d + k] = x[i * d + k] - mu[k];
  slem_rowmul_f64(y, od, delta, d, b, self->pt, od, d, od);
  for (size_t i = 0; i < b; i++) {
    const double *yi = y + i * od;
    double nrm = cblas_dnrm2((int)od, yi, 1), s = nrm > 0 ? 1 / nrm : 0;
    size_t r = lo + i;
    if (nrm == 0 && r >= self->count_lo && r < self->count_hi)
      __atomic_fetch_add(&self->zeros, 1, __ATOMIC_RELAXED);
    for (size_t k = 0; k < od; k++) {
      if (j->outf) j->outf[r * od + k] = (float)(yi[k] * s);
      else j->outd[r * od + k] = yi[k] * s;
    }
  }
}

/* In fixed chunks of 256 rows on slem's threads, the BLAS on one thread each: a
 * multithreaded dgemm's bits depend on its thread count (stats.c), these do not. */
void slem_whiten_run(SlemWhitener *self, float *y, const double *x, size_t b) {
  WhitenJob j = {self, y, NULL, x};
  slem_blas_par_chunks(b, 256, run_rows, &j);
}

void slem_whiten_run_f64(SlemWhitener *self, double *y, const double *x, size_t b) {
  WhitenJob j = {self, NULL, y, x};
  slem_blas_par_chunks(b, 256, run_rows, &j);
}

int slem_whiten_write_cache(const char *path, struct SlemStats *stats, double lambda,
                            double lambda_rel, size_t rank, const struct SlemProvenance *prov,
                            SlemError *err) {
  size_t d = slem_stats_dim(stats);
  uint64_t n = slem_stats_count(stats);
  double *sigma = NULL, *evals = NULL, *evecs = NULL, *ainv = NULL, used;
  const double *scatter;
  int st;
  if (rank > d)
    return slem_error(err, SLEM_EINVAL, "--pca %zu: more than the dimension %zu", rank, d);
  if (n == 0) return slem_error(err, SLEM_EINVAL, "no negatives: nothing to decompose");
  sigma = malloc(d * d * sizeof *sigma);
  evals = malloc(d * sizeof *evals);
  evecs = malloc(d * d * sizeof *evecs);
  if (!sigma || !evals || !evecs) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", d, d);
    goto done;
  }
  scatter = slem_stats_scatter(stats);
  for (size_t i = 0; i < d * d; i++) sigma[i] = scatter[i] / (double)n;
  if ((st = slem_eigen_sym(sigma, d, evals, evecs, "Sigma", err)) != SLEM_OK) goto done;
  if (rank == 0) {
    ainv = malloc(d * d * sizeof *ainv);
    if (!ainv) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", d, d);
      goto done;
    }
    if ((st = slem_stats_inverse(stats, ainv, &used, lambda, lambda_rel, err)) != SLEM_OK)
      goto done;
    st = slem_cache_write_eigen(path, d, n, used, lambda >= 0 ? -1 : lambda_rel, slem_stats_trace(stats),
                                slem_stats_rcond(stats), 0, slem_stats_mean(stats), ainv, evals,
                                evecs, prov, err);
  } else {
    used = lambda >= 0 ? lambda : lambda_rel * slem_stats_trace(stats) / (double)d;
    if (!(fmax(evals[rank - 1], 0) + used > 0)) {
      st = slem_error(err, SLEM_ENUMERIC, "eigenvalue %zu of Sigma is 0 and lambda is 0: "
                      "Lambda_R + lambda I is singular; give --lambda > 0 or a smaller --pca",
                      rank);
      goto done;
    }
    st = slem_cache_write_pca(path, d, n, rank, used, lambda >= 0 ? -1 : lambda_rel,
                              slem_stats_trace(stats), slem_stats_mean(stats), evals, evecs,
                              prov, err);
  }
done:
  free(sigma);
  free(evals);
  free(evecs);
  free(ainv);
  return st;
}

int slem_whiten_write_mixed_cache(const char *path, struct SlemStats *stats,
                                  const double *mu_pos, double lambda, double lambda_rel,
                                  const struct SlemProvenance *prov, SlemError *err) {
  size_t d = slem_stats_dim(stats);
  uint64_t n = slem_stats_count(stats);
  double *sigma = NULL, *evals = NULL, *evecs = NULL, *fe = NULL, *ainv = NULL, used, trace = 0;
  double smin, smax;
  const double *scatter;
  int st = SLEM_OK;
  if (n < 2)
    return slem_error(err, SLEM_EINVAL, "the mixed covariance needs two vectors or more, not "
                      "%llu", (unsigned long long)n);
  sigma = malloc(d * d * sizeof *sigma);
  evals = malloc(d * sizeof *evals);
  evecs = malloc(d * d * sizeof *evecs);
  fe = malloc(d * d * sizeof *fe);
  ainv = malloc(d * d * sizeof *ainv);
  if (!sigma || !evals || !evecs || !fe || !ainv) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", d, d);
    goto done;
  }
  scatter = slem_stats_scatter(stats);
  /* MATLAB's cov: divided by N - 1 */
  for (size_t i = 0; i < d * d; i++) sigma[i] = scatter[i] / (double)(n - 1);
  for (size_t i = 0; i < d; i++) trace += sigma[i * d + i];
  if ((st = slem_eigen_sym(sigma, d, evals, evecs, "the mixed covariance", err)) != SLEM_OK)
    goto done;
  used = lambda >= 0 ? lambda : lambda_rel * trace / (double)d;
  smax = fmax(evals[0], 0) + used;
  smin = fmax(evals[d - 1], 0) + used;
  if (!(smin > 0)) {
    st = slem_error(err, SLEM_ENUMERIC, "the mixed covariance has a zero eigenvalue and lambda "
                    "is 0: Sigma + lambda I is singular; give --lambda > 0");
    goto done;
  }
  /* A^-1 = E^T diag(1 / (s + lambda)) E, rows in fixed chunks (one BLAS call each) */
  for (size_t k = 0; k < d; k++)
    for (size_t j = 0; j < d; j++) fe[k * d + j] = evecs[k * d + j] / (fmax(evals[k], 0) + used);
  {
    PJob pj = {evecs, fe, ainv, d};
    slem_blas_par_chunks(d, 128, p_rows, &pj);
  }
  st = slem_cache_write_eigen(path, d, n, used, lambda >= 0 ? -1 : lambda_rel, trace,
                              smin / smax, 1, mu_pos, ainv, evals, evecs, prov, err);
done:
  free(sigma);
  free(evals);
  free(evecs);
  free(fe);
  free(ainv);
  return st;
}

/* --eigen and --pca: the eigendecomposition of the stream's Sigma (a linear cache that
 * keeps it, or a pca cache of its top pairs). */
static int takes_whiten(const SlemNegstatsOpts *o) { return o->eigen || o->pca; }

static int finish_whiten(const SlemFitStream *s, const SlemNegstatsOpts *o,
                         SlemNegstatsResult *res, SlemError *err) {
  double t0;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  t0 = slem_now();
  st = slem_whiten_write_cache(s->output, s->stats, o->lambda,
                               o->lambda >= 0 ? -1 : o->lambda_rel, o->pca, s->prov, err);
  res->phases.factor += slem_now() - t0;
  return st;
}

const SlemFitOps slem_fit_whiten = {"whiten", takes_whiten, finish_whiten, NULL, NULL, NULL, NULL};

/* --mixed: SLEM_whitening.m's covariance of the positives and the negatives together (the
 * positives appended to the stream), and mu the positives' mean (read again alone). */
static int takes_mixed(const SlemNegstatsOpts *o) { return o->mixed != NULL; }

static const char *mixed_positives(const SlemNegstatsOpts *o) { return o->mixed; }

static int finish_mixed(const SlemFitStream *s, const SlemNegstatsOpts *o,
                        SlemNegstatsResult *res, SlemError *err) {
  SlemStats *pos = NULL;
  double t0;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  if ((st = s->read(s->read_ctx, o->mixed, &pos, err)) == SLEM_OK &&
      (st = slem_stats_finish(pos, err)) == SLEM_OK) {
    if (slem_stats_count(pos) == 0) {
      st = slem_error(err, SLEM_EINVAL, "%s: no positives for the mixed covariance", o->mixed);
    } else {
      t0 = slem_now();
      st = slem_whiten_write_mixed_cache(s->output, s->stats, slem_stats_mean(pos), o->lambda,
                                         o->lambda_rel, s->prov, err);
      res->phases.factor += slem_now() - t0;
    }
  }
  slem_stats_free(pos);
  return st;
}

const SlemFitOps slem_fit_mixed = {"mixed", takes_mixed, finish_mixed, mixed_positives,
                                   "the mixed covariance", NULL, NULL};

#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec mixed_fit_options[] = {
    {.name = "mixed", .metavar = "POSITIVES", .type = SLEM_OPT_TEXT, O(mixed),
     .help = "with --eigen: the authors' SLEM_whitening.m mixed\n"
             "covariance, of POSITIVES and the negatives together\n"
             "(divided by N - 1), and mu the positives' mean"},
    {0}};
#undef O

const SlemVariant slem_variant_mixed = {
    "mixed",
    "SLEM_whitening.m's mixed covariance of positives and negatives (slem-negstats --eigen "
    "--mixed POSITIVES)",
    NULL, &slem_fit_mixed, NULL, mixed_fit_options, NULL};

extern const SlemEncoderOps slem_enc_whiten;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec whitening_fit_options[] = {
    {.name = "eigen", .type = SLEM_OPT_FLAG, O(eigen),
     .help = "also store the eigendecomposition of Sigma, for\n"
             "slem-encode --alpha"},
    {0}};
#undef O
#define O(f) SLEM_OPT_FIELD(SlemEncStreamOpts, f)

/* --alpha A: any finite power; alpha_set says it was given. */
static int set_alpha(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  double a;
  int st = slem_optspec_real(s, value, &a, err);
  if (st == SLEM_OK) ((SlemEncStreamOpts *)opts)->alpha = a, ((SlemEncStreamOpts *)opts)->alpha_set = 1;
  return st;
}

static const SlemOptSpec whitening_encode_options[] = {
    {.name = "alpha", .metavar = "A", .type = SLEM_OPT_CUSTOM, O(alpha), .parse = set_alpha,
     .help = "the whitening family: (Sigma + lambda I)^A (x - mu),\n"
             "normalised, from a cache made with slem-negstats\n"
             "--eigen (-1: SLEM, -0.5: PCA whitening, 0:\n"
             "centring); with a PCA cache (--pca R) the power of\n"
             "Lambda_R + lambda I (default -1)"},
    {0}};
#undef O

const SlemVariant slem_variant_whitening = {
    "whitening",
    "the eigendecomposition of Sigma and (Sigma + lambda I)^alpha (slem-negstats --eigen, "
    "slem-encode --alpha)",
    NULL, &slem_fit_whiten, &slem_enc_whiten, whitening_fit_options, whitening_encode_options};

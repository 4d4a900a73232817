#include "stats.h"

#include "slem.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct SlemStats {
  size_t d;
  uint64_t n;
  double *mean;     /* mean(d) */
  double *scatter;  /* scatter(d, d), lower triangle accumulated */
  double *bmean;    /* work(d) */
  double rcond;     /* of A, from the last slem_stats_inverse() */
};

int slem_stats_new(SlemStats **self, size_t d, SlemError *err) {
  SlemStats *s = calloc(1, sizeof *s);
  *self = NULL;
  if (!s) return slem_error(err, SLEM_ENOMEM, "out of memory");
  s->d = d;
  s->mean = calloc(d, sizeof *s->mean);
  s->bmean = calloc(d, sizeof *s->bmean);
  s->scatter = calloc(d * d, sizeof *s->scatter);
  if (!s->mean || !s->bmean || !s->scatter) {
    slem_stats_free(s);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu scatter matrix", d, d);
  }
  *self = s;
  return SLEM_OK;
}

void slem_stats_free(SlemStats *self) {
  if (!self) return;
  free(self->mean);
  free(self->bmean);
  free(self->scatter);
  free(self);
}

size_t slem_stats_dim(const SlemStats *self) { return self->d; }
uint64_t slem_stats_count(const SlemStats *self) { return self->n; }
const double *slem_stats_mean(const SlemStats *self) { return self->mean; }
double slem_stats_rcond(const SlemStats *self) { return self->rcond; }

/* Pairwise update: the set of n vectors (mean, scatter) absorbs m vectors whose mean is
 * bmean and whose scatter has already been added; adds the between-means term. */
static void absorb_mean(SlemStats *s, uint64_t m) {
  size_t d = s->d;
  double nn = (double)s->n, mm = (double)m;
  if (s->n == 0) {
    memcpy(s->mean, s->bmean, d * sizeof *s->mean);
  } else {
    /* bmean := bmean - mean, then scatter += n m / (n + m) delta delta^T */
    for (size_t j = 0; j < d; j++) s->bmean[j] -= s->mean[j];
    cblas_dsyr(CblasRowMajor, CblasLower, (int)d, nn * mm / (nn + mm), s->bmean, 1, s->scatter,
               (int)d);
    for (size_t j = 0; j < d; j++) s->mean[j] += s->bmean[j] * (mm / (nn + mm));
  }
  s->n += m;
}

void slem_stats_add(SlemStats *self, double *x, size_t b) {
  size_t d = self->d;
  if (b == 0) return;
  memset(self->bmean, 0, d * sizeof *self->bmean);
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < d; j++) self->bmean[j] += x[i * d + j];
  for (size_t j = 0; j < d; j++) self->bmean[j] /= (double)b;
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < d; j++) x[i * d + j] -= self->bmean[j];
  /* scatter += x^T x, x being b x d row-major */
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)d, (int)b, 1.0, x, (int)d, 1.0,
              self->scatter, (int)d);
  absorb_mean(self, b);
}

void slem_stats_merge(SlemStats *self, uint64_t n, const double *mu, const double *scatter) {
  size_t d = self->d;
  if (n == 0) return;
  for (size_t i = 0; i < d; i++)
    for (size_t j = 0; j <= i; j++) self->scatter[i * d + j] += scatter[i * d + j];
  memcpy(self->bmean, mu, d * sizeof *self->bmean);
  absorb_mean(self, n);
}

const double *slem_stats_scatter(SlemStats *self) {
  size_t d = self->d;
  for (size_t i = 0; i < d; i++)
    for (size_t j = i + 1; j < d; j++) self->scatter[i * d + j] = self->scatter[j * d + i];
  return self->scatter;
}

double slem_stats_trace(const SlemStats *self) {
  double t = 0;
  if (self->n == 0) return 0;
  for (size_t i = 0; i < self->d; i++) t += self->scatter[i * self->d + i];
  return t / (double)self->n;
}

int slem_stats_inverse(SlemStats *self, double *ainv, double *lambda_used, double lambda,
                       double lambda_rel, SlemError *err) {
  size_t d = self->d;
  double tr = slem_stats_trace(self), rcond = 0, suggest;
  gsl_matrix_view a;
  gsl_vector *work = NULL;
  int status = SLEM_OK, gs;

  if (self->n == 0) return slem_error(err, SLEM_EINVAL, "no negatives were given");
  if (lambda < 0) lambda = lambda_rel * tr / (double)d;
  if (!isfinite(lambda) || lambda < 0)
    return slem_error(err, SLEM_EINVAL, "lambda %g is not a finite non-negative number", lambda);
  *lambda_used = lambda;
  suggest = tr > 0 ? 1e-3 * tr / (double)d : 1.0;

  slem_gsl_init();
  for (size_t i = 0; i < d; i++)
    for (size_t j = 0; j <= i; j++)
      ainv[i * d + j] = self->scatter[i * d + j] / (double)self->n + (i == j ? lambda : 0.0);
  a = gsl_matrix_view_array(ainv, d, d);
  gs = gsl_linalg_cholesky_decomp1(&a.matrix);
  if (gs == GSL_EDOM) {
    status = slem_error(err, SLEM_ENUMERIC,
                        "A = Sigma + lambda I is not positive definite (lambda = %g; %llu "
                        "negatives in dimension %zu; trace(Sigma)/d = %g): the negatives do not "
                        "span every direction; use a larger lambda, for example lambda_rel 1e-3 "
                        "(lambda = %g)", lambda, (unsigned long long)self->n, d, tr / (double)d,
                        suggest);
    goto done;
  }
  if (gs) {
    status = slem_error(err, SLEM_ENUMERIC, "Cholesky factorisation failed: %s", gsl_strerror(gs));
    goto done;
  }
  work = gsl_vector_alloc(3 * d);
  if (!work) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  gs = gsl_linalg_cholesky_rcond(&a.matrix, &rcond, work);
  self->rcond = gs ? 0 : rcond;
  if (gs || !(rcond >= 1e-12)) {
    status = slem_error(err, SLEM_ENUMERIC,
                        "A = Sigma + lambda I is too ill-conditioned to invert (reciprocal "
                        "condition number %.3g, lambda = %g; %llu negatives in dimension %zu): "
                        "use a larger lambda, for example lambda_rel 1e-3 (lambda = %g)",
                        rcond, lambda, (unsigned long long)self->n, d, suggest);
    goto done;
  }
  gs = gsl_linalg_cholesky_invert(&a.matrix);
  if (gs) {
    status = slem_error(err, SLEM_ENUMERIC, "inverting A failed: %s", gsl_strerror(gs));
    goto done;
  }
  for (size_t i = 0; i < d * d; i++)
    if (!isfinite(ainv[i])) {
      status = slem_error(err, SLEM_ENUMERIC, "the inverse of A is not finite; use a larger lambda");
      goto done;
    }
done:
  gsl_vector_free(work);
  return status;
}

#include "kslem.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void slem_kernel_stats_free(SlemKernelStats *self) {
  if (!self) return;
  free(self->pivots);
  free(self->lp);
  free(self->mu_b);
  free(self->ginv);
  free(self);
}

int slem_kernel_stats_new(SlemKernelStats **self, const SlemKernel *k, const double *x,
                          size_t n, size_t d, size_t rmax, double tol, double lambda,
                          double lambda_rel, SlemError *err) {
  SlemKernelStats *ks = calloc(1, sizeof *ks);
  SlemStats *st = NULL;
  double *b = NULL, *trace = NULL;
  size_t *piv = NULL, r;
  int status;
  *self = NULL;
  if (rmax > n) rmax = n;
  if (!ks) return slem_error(err, SLEM_ENOMEM, "out of memory");
  ks->kernel = *k;
  ks->d = d;
  ks->n = n;
  b = malloc(n * rmax * sizeof *b);
  trace = malloc((rmax + 1) * sizeof *trace);
  piv = malloc(rmax * sizeof *piv);
  if (!b || !trace || !piv) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the %zu x %zu factor", n, rmax);
    goto done;
  }
  status = slem_icl(&r, b, piv, trace, k, x, n, d, rmax, tol, err);
  if (status) goto done;
  if (r == 0) {
    status = slem_error(err, SLEM_ENUMERIC, "the kernel matrix of the negatives is zero");
    goto done;
  }
  ks->pivots = malloc(r * d * sizeof *ks->pivots);
  ks->lp = calloc(r * r, sizeof *ks->lp);
  ks->ginv = malloc(r * r * sizeof *ks->ginv);
  if (!ks->pivots || !ks->lp || !ks->ginv) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < r; i++) {
    memcpy(ks->pivots + i * d, x + piv[i] * d, d * sizeof *x);
    memcpy(ks->lp + i * r, b + piv[i] * rmax, (i + 1) * sizeof *b); /* lower triangle */
  }
  /* compact B to stride r, then its mean and covariance through the linear machinery */
  for (size_t i = 1; i < n && r < rmax; i++) memmove(b + i * r, b + i * rmax, r * sizeof *b);
  status = slem_stats_new(&st, r, err);
  if (status) goto done;
  slem_stats_add(st, b, n);
  ks->info.trace_sigma_b = slem_stats_trace(st);
  status = slem_stats_inverse(st, ks->ginv, &ks->info.lambda, lambda, lambda_rel, err);
  if (status) goto done;
  if (!(ks->info.lambda > 0)) {
    status = slem_error(err, SLEM_ENUMERIC, "kernel SLEM needs lambda > 0 (it divides by lambda^2)");
    goto done;
  }
  ks->mu_b = malloc(r * sizeof *ks->mu_b);
  if (!ks->mu_b) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  memcpy(ks->mu_b, slem_stats_mean(st), r * sizeof *ks->mu_b);
  ks->info.kernel = &ks->kernel;
  ks->info.r = r;
  ks->info.lambda_rel = lambda >= 0 ? -1 : lambda_rel;
  ks->info.trace_k = trace[0];
  ks->info.residual_trace = trace[r];
  ks->info.gamma_median = -1;
done:
  slem_stats_free(st);
  free(b);
  free(trace);
  free(piv);
  if (status) {
    slem_kernel_stats_free(ks);
    return status;
  }
  *self = ks;
  return SLEM_OK;
}

struct SlemKProj {
  const SlemCache *c;
  size_t max_rows, rows;
  double *xp;   /* xp(max_rows, d): prepared inputs */
  double *v;    /* v(max_rows, r) */
  double *z;    /* z(max_rows, r) */
  double *t;    /* t(max_rows, r): scratch */
  double *kxx;  /* k(x, x) */
  double *nrm;  /* N */
  uint64_t clamps;
};

int slem_kproj_new(SlemKProj **self, const SlemCache *cache, size_t max_rows, SlemError *err) {
  SlemKProj *p;
  size_t d = cache->d, r = cache->r;
  *self = NULL;
  if (cache->kind != SLEM_CACHE_KERNEL)
    return slem_error(err, SLEM_EINVAL, "%s is not a kernel cache", slem_cache_path(cache));
  p = calloc(1, sizeof *p);
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  p->c = cache;
  p->max_rows = max_rows;
  p->xp = malloc(max_rows * d * sizeof *p->xp);
  p->v = malloc(max_rows * r * sizeof *p->v);
  p->z = malloc(max_rows * r * sizeof *p->z);
  p->t = malloc(max_rows * r * sizeof *p->t);
  p->kxx = malloc(max_rows * sizeof *p->kxx);
  p->nrm = malloc(max_rows * sizeof *p->nrm);
  if (!p->xp || !p->v || !p->z || !p->t || !p->kxx || !p->nrm) {
    slem_kproj_free(p);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
  }
  *self = p;
  return SLEM_OK;
}

void slem_kproj_free(SlemKProj *self) {
  if (!self) return;
  free(self->xp);
  free(self->v);
  free(self->z);
  free(self->t);
  free(self->kxx);
  free(self->nrm);
  free(self);
}

uint64_t slem_kproj_clamps(const SlemKProj *self) { return self->clamps; }
size_t slem_kproj_rows(const SlemKProj *self) { return self->rows; }

int slem_kproj_run(SlemKProj *self, const double *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err) {
  const SlemCache *c = self->c;
  size_t d = c->d, r = c->r;
  double lam2 = c->lambda * c->lambda;
  int st;
  self->rows = b;
  if (b == 0) return SLEM_OK;
  memcpy(self->xp, x, b * d * sizeof *x);
  st = slem_kernel_prepare(&c->kernel, self->xp, b, d, name, first_record, err);
  if (st) return st;
  /* v = L_P^-1 k(x, pivots), row by row: V(b, r) = K(x, P) L_P^-T */
  slem_kernel_block(&c->kernel, self->v, self->xp, b, c->pivots, r, d);
  cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)b, (int)r, 1.0,
              c->lp, (int)r, self->v, (int)r);
  /* z = (v - mu_B) G^-1, G^-1 symmetric */
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < r; j++) self->t[i * r + j] = self->v[i * r + j] - c->mu[j];
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)b, (int)r, (int)r, 1.0, self->t,
              (int)r, c->ginv, (int)r, 0.0, self->z, (int)r);
  for (size_t i = 0; i < b; i++) {
    const double *xi = self->xp + i * d, *vi = self->v + i * r, *zi = self->z + i * r;
    double kxx = slem_kernel_eval(&c->kernel, xi, xi, d);
    double u2 = kxx - cblas_ddot((int)r, vi, 1, vi, 1);
    if (u2 < 0) {
      if (u2 < -1e-9 * (fabs(kxx) + 1e-300)) self->clamps++;
      u2 = 0;
    }
    self->kxx[i] = kxx;
    self->nrm[i] = sqrt(cblas_ddot((int)r, zi, 1, zi, 1) + u2 / lam2);
  }
  return SLEM_OK;
}

void slem_kproj_descriptors(const SlemKProj *self, float *y) {
  size_t r = self->c->r;
  for (size_t i = 0; i < self->rows; i++) {
    double s = self->nrm[i] > 0 ? 1 / self->nrm[i] : 0;
    for (size_t j = 0; j < r; j++) y[i * r + j] = (float)(self->z[i * r + j] * s);
  }
}

void slem_kproj_descriptors_f64(const SlemKProj *self, double *y) {
  size_t r = self->c->r;
  for (size_t i = 0; i < self->rows; i++) {
    double s = self->nrm[i] > 0 ? 1 / self->nrm[i] : 0;
    for (size_t j = 0; j < r; j++) y[i * r + j] = self->z[i * r + j] * s;
  }
}

void slem_kproj_similarity(double *s, const SlemKProj *q, const SlemKProj *db) {
  const SlemCache *c = q->c;
  size_t nq = q->rows, nd = db->rows, r = c->r;
  double lam2 = c->lambda * c->lambda;
  if (nq == 0 || nd == 0) return;
  /* s = K / lambda^2 + Z_q Z_d^T - V_q V_d^T / lambda^2, then / (N_q N_d) */
  slem_kernel_block(&c->kernel, s, q->xp, nq, db->xp, nd, c->d);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, 1.0, q->z, (int)r,
              db->z, (int)r, 1.0 / lam2, s, (int)nd);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, -1.0 / lam2, q->v,
              (int)r, db->v, (int)r, 1.0, s, (int)nd);
  for (size_t i = 0; i < nq; i++)
    for (size_t j = 0; j < nd; j++) {
      double den = q->nrm[i] * db->nrm[j];
      s[i * nd + j] = den > 0 ? s[i * nd + j] / den : 0;
    }
}

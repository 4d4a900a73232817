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
  {
    SlemIcl icl = {0, b, piv, trace};
    status = slem_icl(&icl, k, x, n, d, rmax, tol, err);
    r = icl.rank;
  }
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
  if ((status = slem_stats_new(&st, r, slem_block_rows(r), 0, err)) != SLEM_OK ||
      (status = slem_stats_add(st, b, n, err)) != SLEM_OK ||
      (status = slem_stats_finish(st, err)) != SLEM_OK)
    goto done;
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

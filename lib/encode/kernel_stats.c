#include "kernel_stats.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "blas.h"
#include "eigen.h"
#include "stats.h"
#include "vecs.h"
#include "fit.h"
#include "io.h"
#include "phases.h"

void slem_kernel_stats_free(SlemKernelStats *self) {
  if (!self) return;
  free(self->pivots);
  free(self->lp);
  free(self->mu_b);
  free(self->ginv);
  free(self->proj);
  free(self->bneg);
  free(self);
}

/* Incomplete (or complete) pivoted Cholesky: b(n, r) with stride r, the pivots and L_P. */
static int factor_icd(SlemKernelStats *ks, double **bout, size_t *rout, const SlemKernel *k,
                      const double *x, size_t n, size_t d, size_t rmax, double tol,
                      SlemError *err) {
  /* huge pages: each column of the factor touches every row */
  double *b = slem_mem_alloc_large(n * rmax * sizeof *b), *trace = malloc((rmax + 1) * sizeof *trace);
  size_t *piv = malloc(rmax * sizeof *piv), r = 0;
  int status;
  if (!b || !trace || !piv) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the %zu x %zu factor", n, rmax);
    goto done;
  }
  {
    SlemKernelIcl icl = {0, b, piv, trace};
    status = slem_kernel_icl(&icl, k, x, n, d, rmax, tol, err);
    r = icl.rank;
  }
  if (status) goto done;
  if (r == 0) {
    status = slem_error(err, SLEM_ENUMERIC, "the kernel matrix of the negatives is zero");
    goto done;
  }
  ks->pivots = malloc(r * d * sizeof *ks->pivots);
  ks->lp = calloc(r * r, sizeof *ks->lp);
  if (!ks->pivots || !ks->lp) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < r; i++) {
    memcpy(ks->pivots + i * d, x + piv[i] * d, d * sizeof *x);
    memcpy(ks->lp + i * r, b + piv[i] * rmax, (i + 1) * sizeof *b); /* lower triangle */
  }
  /* compact B to stride r */
  for (size_t i = 1; i < n && r < rmax; i++) memmove(b + i * r, b + i * rmax, r * sizeof *b);
  ks->info.trace_k = trace[0];
  ks->info.residual_trace = trace[r];
done:
  free(trace);
  free(piv);
  if (status) {
    free(b);
    return status;
  }
  *bout = b;
  *rout = r;
  return SLEM_OK;
}

/* Kernel PCA as slem_similarity.m does it: K = U D U^T, the top r eigenpairs with
 * eigenvalues above 1e-10 times the largest, stopping when the trace left is tol * trace(K)
 * or less; B = U_r D_r^1/2 (n, r) and proj = D_r^-1/2 U_r^T (r, n). */
static int factor_kpca(SlemKernelStats *ks, double **bout, size_t *rout, const SlemKernel *k,
                       const double *x, size_t n, size_t d, size_t rmax, double tol,
                       SlemError *err) {
  double *kk = malloc(n * n * sizeof *kk), *ev = malloc(rmax * sizeof *ev);
  double *vecs = malloc(rmax * n * sizeof *vecs), *b = NULL, trace0 = 0, kept = 0;
  size_t r = 0;
  int status = SLEM_OK;
  if (!kk || !ev || !vecs) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the %zu x %zu kernel matrix of "
                        "kernel PCA", n, n);
    goto done;
  }
  slem_kernel_block(k, kk, x, n, x, n, d);
  for (size_t i = 0; i < n; i++) trace0 += kk[i * n + i];
  status = slem_eigen_sym_top(kk, n, rmax, ev, vecs, "the kernel matrix", err);
  if (status) goto done;
  while (r < rmax && ev[r] > 1e-10 * ev[0] && trace0 - kept > tol * trace0) kept += ev[r++];
  if (r == 0 || !(ev[0] > 0)) {
    status = slem_error(err, SLEM_ENUMERIC, "the kernel matrix of the negatives is zero");
    goto done;
  }
  b = malloc(n * r * sizeof *b);
  ks->proj = malloc(r * n * sizeof *ks->proj);
  if (!b || !ks->proj) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the %zu x %zu factor", n, r);
    goto done;
  }
  for (size_t l = 0; l < r; l++) {
    double s = sqrt(ev[l]);
    for (size_t i = 0; i < n; i++) {
      b[i * r + l] = vecs[l * n + i] * s;
      ks->proj[l * n + i] = vecs[l * n + i] / s;
    }
  }
  ks->info.trace_k = trace0;
  ks->info.residual_trace = trace0 - kept;
done:
  free(kk);
  free(ev);
  free(vecs);
  if (status) {
    free(b);
    return status;
  }
  *bout = b;
  *rout = r;
  return SLEM_OK;
}

int slem_kernel_stats_new(SlemKernelStats **self, const SlemKernel *k, const double *x,
                          size_t n, size_t d, size_t rmax, double tol, double lambda,
                          double lambda_rel, SlemKernelFactor factor, int couple,
                          SlemError *err) {
  SlemKernelStats *ks = calloc(1, sizeof *ks);
  SlemStats *st = NULL;
  double *b = NULL;
  size_t r = 0;
  int status, threads = slem_blas_threads();
  *self = NULL;
  if (!ks) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (factor == SLEM_FACTOR_FULL) rmax = n, tol = 0;
  if (rmax > n) rmax = n;
  ks->kernel = *k;
  ks->d = d;
  ks->n = n;
  ks->factor = factor;
  ks->couple = couple;
  /* one BLAS thread: OpenBLAS's level-2 calls and its small GEMMs add in an order that
   * depends on how many threads share them, and the cache must not; the Cholesky shares
   * fixed chunks of rows among slem's threads (each on one BLAS thread) */
  if (factor != SLEM_FACTOR_KPCA) status = factor_icd(ks, &b, &r, k, x, n, d, rmax, tol, err);
  slem_blas_set_threads(1);
  if (factor == SLEM_FACTOR_KPCA) status = factor_kpca(ks, &b, &r, k, x, n, d, rmax, tol, err);
  if (status) goto done;
  ks->ginv = malloc(r * r * sizeof *ks->ginv);
  ks->mu_b = malloc(r * sizeof *ks->mu_b);
  if (!ks->ginv || !ks->mu_b) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  /* the mean and covariance of B through the linear machinery (which leaves B as it is) */
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
  /* lambda^2 beyond double (lambda > ~1e154, or below ~1e-154): every descriptor's norm
   * under- or overflows and the descriptors come out 0 */
  if (!isnormal(ks->info.lambda * ks->info.lambda)) {
    status = slem_error(err, SLEM_ENUMERIC, "kernel SLEM divides by lambda^2, and lambda = %g "
                        "puts it beyond double: give a lambda between 1e-150 and 1e150",
                        ks->info.lambda);
    goto done;
  }
  memcpy(ks->mu_b, slem_stats_mean(st), r * sizeof *ks->mu_b);
  if (factor == SLEM_FACTOR_KPCA || couple) ks->negs = x;
  if (couple) ks->bneg = b, b = NULL;
  ks->info.kernel = &ks->kernel;
  ks->info.r = r;
  ks->info.lambda_rel = lambda >= 0 ? -1 : lambda_rel;
  ks->info.gamma_median = -1;
  ks->info.factor = factor;
  ks->info.couple = couple;
done:
  slem_blas_set_threads(threads);
  slem_stats_free(st);
  free(b);
  if (status) {
    slem_kernel_stats_free(ks);
    return status;
  }
  *self = ks;
  return SLEM_OK;
}

int slem_kernel_stats_read_all(double **x, size_t *n, size_t *d, const char *const *paths,
                               size_t npaths, SlemFormat fmt, const SlemVecArrays *arrays,
                               size_t block, SlemProgressFn progress, void *progress_ctx, SlemError *err) {
  size_t cap = 0;
  int st = SLEM_OK;
  *x = NULL;
  *n = *d = 0;
  for (size_t i = 0; i < npaths && st == SLEM_OK; i++) {
    SlemVecReader *r = NULL;
    if (!slem_vecarrays_find(arrays, paths[i]) && strcmp(paths[i], "-") != 0 &&
        fmt == SLEM_FMT_AUTO && slem_cache_sniff(paths[i]))
      return slem_error(err, SLEM_EINVAL, "%s: a kernel cache is built from vectors, not from "
                        "partial caches", paths[i]);
    st = slem_vecreader_open_input(&r, paths[i], fmt, arrays, err);
    if (st) break;
    if (*d == 0) *d = slem_vecreader_dim(r);
    if (slem_vecreader_dim(r) != *d)
      st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), *d);
    while (st == SLEM_OK) {
      size_t got;
      if (*n + block > cap) {
        /* the file's count when it is known (all of it at once), else twice as many; on
         * huge pages (mem.h): the rows are decoded into fresh memory */
        int64_t count = slem_vecreader_count(r);
        size_t ncap = cap ? 2 * cap : 4 * block;
        double *p = NULL;
        if (count >= 0 && (uint64_t)count < SIZE_MAX / 2 - *n - block &&
            *n + (size_t)count + block > ncap)
          ncap = *n + (size_t)count + block;
        if (ncap <= SIZE_MAX / sizeof *p / *d && (p = slem_mem_alloc_large(ncap * *d * sizeof *p)) &&
            *n > 0)
          memcpy(p, *x, *n * *d * sizeof *p);
        if (!p) {
          st = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives of dimension %zu",
                          ncap, *d);
          break;
        }
        free(*x);
        *x = p;
        cap = ncap;
      }
      st = slem_vecreader_read(r, *x + *n * *d, block, &got, err);
      if (st || got == 0) break;
      *n += got;
      if (progress) progress(progress_ctx, *n);
    }
    slem_vecreader_free(r);
  }
  return st;
}


int slem_kernel_stats_read_negatives(SlemKernel *k, double **x, size_t *n, size_t *d,
                                     const char *const *inputs, size_t npaths,
                                     const SlemNegstatsOpts *o, SlemPhases *ph,
                                     SlemError *err) {
  double t = slem_now();
  int st = slem_kernel_parse(k, o->kernel, err);
  *x = NULL;
  *n = *d = 0;
  if (st == SLEM_OK)
    st = slem_kernel_stats_read_all(x, n, d, inputs, npaths, o->format, &o->arrays,
                                    o->block ? o->block : 4096, o->progress, o->progress_ctx,
                                    err);
  slem_phases_lap(&ph->read, &t);
  return st;
}

/* -K SPEC: kernel SLEM of depth 1, every negative held and factorised. */
static int takes_kernel(const SlemNegstatsOpts *o) { return o->kernel != NULL; }

static int fit_kernel(const char *output, const char *const *inputs, size_t npaths,
                      const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemKernel k;
  SlemKernelStats *ks = NULL;
  double *x = NULL, median = -1, t;
  size_t n = 0, d = 0;
  int st = slem_kernel_stats_read_negatives(&k, &x, &n, &d, inputs, npaths, o, &res->phases,
                                            err);
  t = slem_now();
  if (st == SLEM_OK)
    st = slem_kernel_prepare(&k, x, n, d, npaths == 1 ? inputs[0] : "negatives", 1, err);
  if (st == SLEM_OK && k.gamma_relative)
    st = slem_kernel_estimate_gamma(&k, &median, x, n, d, o->sample, o->seed, err);
  slem_phases_lap(&res->phases.compute, &t);
  if (st == SLEM_OK)
    st = slem_kernel_stats_new(&ks, &k, x, n, d, o->rank, o->tol, o->lambda, o->lambda_rel,
                               o->factor, o->couple, err);
  slem_phases_lap(&res->phases.factor, &t);
  if (st == SLEM_OK) {
    SlemProvenance prov = {"slem-negstats", inputs, npaths, NULL};
    ks->info.gamma_median = median;
    ks->info.seed = o->seed;
    res->n = n;
    res->d = d;
    res->rank = ks->info.r;
    res->rank_asked = o->factor == SLEM_FACTOR_FULL ? n : o->rank < n ? o->rank : n;
    res->residual_trace = ks->info.residual_trace;
    SlemKernelSections sec = {ks->pivots, ks->lp, ks->mu_b, ks->ginv, ks->negs, ks->proj, ks->bneg};
    st = slem_cache_write_kernel(output, d, n, &ks->info, &sec, &prov, err);
    slem_phases_lap(&res->phases.write, &t);
  }
  slem_kernel_stats_free(ks);
  free(x);
  return st;
}

const SlemFitOps slem_fit_kernel = {"kernel", takes_kernel, NULL, NULL, NULL, fit_kernel, NULL};

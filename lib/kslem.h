/* Kernel SLEM: statistics of the negatives in the span of a low-rank factor, projection
 * of new points, explicit descriptors and the exact similarity.
 *
 * With K ~ B B^T (B(n, r) from slem_icl) and mu_B the mean row of B,
 *   G = (1/n) B^T B - mu_B mu_B^T + lambda I.
 * A point x is projected with the pivot extension
 *   v = L_P^-1 k(x, pivots),  u = sqrt(max(k(x, x) - |v|^2, 0)),  z = G^-1 (v - mu_B),
 * which costs O(r d + r^2); |v|^2 <= k(x, x) holds in exact arithmetic (v is the projection
 * of phi(x) on the span of the pivots), so u^2 is clamped at 0 only against rounding.
 * The exact similarity of x and x' is
 *   s = [z.z' + (k(x, x') - v.v') / lambda^2] / (N N'),  N = sqrt(z.z + u^2 / lambda^2),
 * and the explicit descriptor z / N (norm <= 1) drops the term outside the span.
 */
#ifndef SLEM_KSLEM_H
#define SLEM_KSLEM_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "kernel.h"

typedef struct SlemKernelStats {
  SlemKernelInfo info;  /* info.kernel points at kernel below */
  SlemKernel kernel;
  size_t d;
  uint64_t n;
  double *pivots;       /* pivots(r, d), prepared */
  double *lp;           /* lp(r, r), lower triangular */
  double *mu_b;         /* mu_b(r) */
  double *ginv;         /* ginv(r, r) */
} SlemKernelStats;

/* Factorises the kernel matrix of the prepared negatives x(n, d) to rank at most rmax
 * (stopping earlier at residual trace tol * trace(K), or at the numerical rank) and
 * computes mu_B and G^-1 with lambda (>= 0: absolute) or lambda_rel (lambda = lambda_rel
 * * trace(Sigma_B) / r). k's gamma must be resolved. Errors: SLEM_ENUMERIC (lambda 0, G
 * singular), SLEM_ENOMEM. */
int slem_kernel_stats_new(SlemKernelStats **self, const SlemKernel *k, const double *x,
                          size_t n, size_t d, size_t rmax, double tol, double lambda,
                          double lambda_rel, SlemError *err);
void slem_kernel_stats_free(SlemKernelStats *self);

/* Projections of blocks of points against a kernel cache. */
typedef struct SlemKProj SlemKProj;

/* For blocks of at most max_rows points; cache (borrowed) must be of kind kernel.
 * Errors: SLEM_EINVAL, SLEM_ENOMEM. */
int slem_kproj_new(SlemKProj **self, const SlemCache *cache, size_t max_rows, SlemError *err);
void slem_kproj_free(SlemKProj *self);

/* Projects x(b, d). name and first_record (from 1) name the input in errors. Errors:
 * SLEM_EFORMAT (a negative value for a histogram kernel). */
int slem_kproj_run(SlemKProj *self, const double *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err);

/* Explicit descriptors y(b, r) = z / N of the last block (zero where N is 0). */
void slem_kproj_descriptors(const SlemKProj *self, float *y);
void slem_kproj_descriptors_f64(const SlemKProj *self, double *y);

/* s(nq, nd): exact similarities of the last blocks of q and db. Both projectors must be
 * over the same cache, with max_rows at least nq and nd. */
void slem_kproj_similarity(double *s, const SlemKProj *q, const SlemKProj *db);

/* Points whose u^2 came out negative beyond rounding (clamped to 0), over all blocks. */
uint64_t slem_kproj_clamps(const SlemKProj *self);

/* Rows in the last block. */
size_t slem_kproj_rows(const SlemKProj *self);

#endif

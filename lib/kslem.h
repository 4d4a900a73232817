/* Kernel SLEM: statistics of the negatives in the span of a low-rank factor (what
 * slem-negstats --kernel computes; the cache holds them). The projection of new points,
 * explicit descriptors and the exact similarity are in kproj.h.
 *
 * With K ~ B B^T (B(n, r) from slem_icl) and mu_B the mean row of B,
 *   G = (1/n) B^T B - mu_B mu_B^T + lambda I.
 */
#ifndef SLEM_KSLEM_H
#define SLEM_KSLEM_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "kernel.h"
/* The projection of new points and the exact similarity moved to kproj.h; included
 * here for the callers that still find them through this header. */
#include "kproj.h"

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

#endif

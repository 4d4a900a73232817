/* Kernel SLEM: statistics of the negatives in the span of a low-rank factor (what
 * slem-negstats --kernel computes; the cache holds them). The projection of new points,
 * explicit descriptors and the exact similarity are in kproj.h.
 *
 * With K ~ B B^T and mu_B the mean row of B,
 *   G = (1/n) B^T B - mu_B mu_B^T + lambda I.
 * The rows of B are the coordinates of the negatives' projections on an orthonormal basis
 * of a subspace E of the feature space: for incomplete Cholesky (and full, its complete
 * form) E is spanned by the pivots and a point is projected by v = L_P^-1 k(pivots, x);
 * for kernel PCA E holds the top r eigen-directions of K = U D U^T, B = U_r D_r^1/2 and
 * v = D_r^-1/2 U_r^T k(negatives, x) (the proj(r, n) section).
 */
#ifndef SLEM_KERNEL_STATS_H
#define SLEM_KERNEL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "kind_kernel.h"
#include "progress.h"
#include "vecs.h"
#include "error.h"
#include "kernel.h"
/* The projection of new points and the exact similarity are in kproj.h; included
 * here for the callers that still find them through this header. */
#include "kproj.h"
#include "negstats.h"

typedef struct SlemKernelStats {
  SlemKernelInfo info;  /* info.kernel points at kernel below */
  SlemKernel kernel;
  size_t d;
  uint64_t n;
  double *pivots;       /* pivots(r, d), prepared */
  double *lp;           /* lp(r, r), lower triangular */
  double *mu_b;         /* mu_b(r) */
  double *ginv;         /* ginv(r, r) */
  SlemKernelFactor factor;
  int couple;           /* B and the negatives kept for the coupling of kproj.h */
  const double *negs;   /* kpca or couple: negs(n, d), the prepared negatives (borrowed) */
  double *proj;         /* kpca: proj(r, n) = D_r^-1/2 U_r^T; else NULL */
  double *bneg;         /* couple: bneg(n, r) = B; else NULL */
} SlemKernelStats;

/* Factorises the kernel matrix of the prepared negatives x(n, d) by factor to rank at
 * most rmax (stopping earlier at residual trace tol * trace(K), or at the numerical rank:
 * no residual diagonal, or no eigenvalue, above 1e-10 times the largest; full ignores
 * rmax and tol) and computes mu_B and G^-1 with lambda (>= 0: absolute) or lambda_rel
 * (lambda = lambda_rel * trace(Sigma_B) / r). couple keeps B for the coupling. x must
 * outlive the result when factor is kpca or couple is set (negs points into it). k's
 * gamma must be resolved. kpca costs O(n^2) memory and O(n^3) time (LAPACK's dsyevr for
 * the top r eigenpairs of the dense K). Errors: SLEM_ENUMERIC (lambda 0, G singular, K zero),
 * SLEM_ENOMEM. */
int slem_kernel_stats_new(SlemKernelStats **self, const SlemKernel *k, const double *x,
                          size_t n, size_t d, size_t rmax, double tol, double lambda,
                          double lambda_rel, SlemKernelFactor factor, int couple,
                          SlemError *err);
void slem_kernel_stats_free(SlemKernelStats *self);

/* Reads every vector of paths[0..npaths) (format fmt, "-" stdin; those that name arrays of
 * arrays, which may be NULL, from memory: vecs.h) into one growing array
 * *x(*n, *d), block rows at a time, calling progress (may be NULL) with the rows read so
 * far: kernel SLEM holds them all. The caller frees *x. Errors: SLEM_EINVAL (a partial
 * cache among the inputs), SLEM_EFORMAT (dimensions that differ between files), those of
 * the readers, SLEM_ENOMEM. */
int slem_kernel_stats_read_all(double **x, size_t *n, size_t *d, const char *const *paths,
                               size_t npaths, SlemFormat fmt, const SlemVecArrays *arrays,
                               size_t block, SlemProgressFn progress, void *progress_ctx, SlemError *err);

/* The kernel of o->kernel parsed into *k, then every negative of inputs[0..npaths) read
 * as slem_kernel_stats_read_all() does with o's format, arrays, block (default 4096) and progress;
 * the seconds go to ph->read. The caller frees *x. Errors: those of slem_kernel_parse() and
 * of slem_kernel_stats_read_all(). */
int slem_kernel_stats_read_negatives(SlemKernel *k, double **x, size_t *n, size_t *d,
                                     const char *const *inputs, size_t npaths,
                                     const SlemNegstatsOpts *o, SlemPhases *ph,
                                     SlemError *err);

#endif

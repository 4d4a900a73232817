/* The whitening family and PCA-reduced SLEM, from the eigendecomposition of Sigma.
 *
 * With Sigma = sum_k s_k e_k e_k^T (s_k largest first) and delta = x - mu:
 *   whitening, alpha A:  y = (Sigma + lambda I)^A delta = sum_k (s_k + lambda)^A (e_k.delta) e_k
 *                        (d values; A = -1 is SLEM, A = -1/2 PCA whitening, A = 0 centring)
 *   PCA-reduced, rank R: y_k = (s_k + lambda)^A (e_k.delta), k < R (R values; A = -1 is
 *                        the reduced SLEM descriptor (Lambda_R + lambda I)^-1 U^T delta)
 * each written normalised, y / |y|. A block of vectors costs one GEMM with the
 * precomputed out_dim x d matrix.
 */
#ifndef SLEM_WHITEN_H
#define SLEM_WHITEN_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

typedef struct SlemWhitener SlemWhitener;

/* A new encoder for the linear cache holding an eigendecomposition (alpha any finite
 * value), or a pca cache, for blocks of at most max_rows vectors. Errors: SLEM_EINVAL (a
 * cache without eigenpairs, a kernel or partial cache, alpha not finite), SLEM_ENUMERIC
 * (alpha < 0 with s_k + lambda <= 0), SLEM_ENOMEM. */
int slem_whiten_new(SlemWhitener **self, const SlemCache *cache, double alpha,
                      size_t max_rows, SlemError *err);
void slem_whiten_free(SlemWhitener *self);

size_t slem_whiten_out_dim(const SlemWhitener *self);

/* Normalised rows y(b, out_dim) of b <= max_rows vectors x(b, d); a row with y = 0 is
 * written as zeros and counted in slem_whiten_zeros(). Cannot fail. */
void slem_whiten_run(SlemWhitener *self, float *y, const double *x, size_t b);
void slem_whiten_run_f64(SlemWhitener *self, double *y, const double *x, size_t b);
uint64_t slem_whiten_zeros(const SlemWhitener *self);

/* Counts in slem_whiten_zeros() only the rows [lo, hi) of the blocks encoded from now on
 * (a shard's rows of its first and last blocks, encoder.h); every row until called. */
void slem_whiten_count_rows(SlemWhitener *self, size_t lo, size_t hi);

/* Writes the cache of the statistics in stats (see slem_stats_inverse() for lambda and
 * lambda_rel) with its eigendecomposition: rank 0, a linear cache with evals(d) and
 * evecs(d, d) beside mu and A^-1; rank R in 1..d, a pca cache of the top R eigenpairs
 * (no inverse: lambda may be 0 when the top R eigenvalues are positive), lambda relative
 * to trace(Sigma)/d of the full Sigma. Errors: those of slem_stats_inverse(),
 * slem_eigen_sym() (eigen.h) and the cache writers; SLEM_EINVAL for R > d. */
struct SlemStats;
struct SlemProvenance;
/* The mixed covariance of the authors' SLEM_whitening.m (its `mixed`): stats holds the
 * positives and the negatives together (finished), Sigma = scatter / (N - 1), MATLAB's cov
 * of the union (centred on the union's mean), and the cache's mu(d) is mu_pos, the
 * positives' mean, on which the whitened vectors are centred. Writes a linear cache with
 * its eigendecomposition, as slem_whiten_write_cache() with rank 0 does, of n = N rows:
 * A^-1 = E^T diag(1 / (max(s_k, 0) + lambda)) E from the eigenpairs, lambda absolute
 * (>= 0) or lambda_rel * trace(Sigma) / d of this Sigma, rcond the ratio of the smallest to
 * the largest eigenvalue of A. Errors: SLEM_EINVAL (N < 2), SLEM_ENUMERIC (A singular:
 * an eigenvalue s_k + lambda not positive), those of slem_eigen_sym() and the writer,
 * SLEM_ENOMEM. */
int slem_whiten_write_mixed_cache(const char *path, struct SlemStats *stats,
                                  const double *mu_pos, double lambda, double lambda_rel,
                                  const struct SlemProvenance *prov, SlemError *err);

int slem_whiten_write_cache(const char *path, struct SlemStats *stats, double lambda,
                            double lambda_rel, size_t rank, const struct SlemProvenance *prov,
                            SlemError *err);

#endif

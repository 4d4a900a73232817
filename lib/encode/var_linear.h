/* The linear kind of cache: "linear", sections mu(d) and ainv(d, d) = (Sigma + lambda I)^-1,
 * and, when made with --eigen, evals(d) and evecs(d, d), the eigenpairs of Sigma (largest
 * first, row k the k-th eigenvector); readers that do not know them ignore them. Its JSON
 * header holds lambda, lambda_rel (when given), trace_sigma, rcond (when recorded) and
 * "covariance": "mixed" for slem-negstats --eigen --mixed (Sigma of the positives and
 * negatives together and mu the positives' mean; no such member: the negatives' own).
 */
#ifndef SLEM_VAR_LINEAR_H
#define SLEM_VAR_LINEAR_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

/* Eigenpairs of Sigma as a linear cache made with --eigen (neig = d) or a pca cache
 * (neig = R, var_pca.h) holds them: evals(neig), largest first, evecs(neig, d), row k the
 * k-th eigenvector, with the cache's mu(d) and lambda. */
typedef struct SlemCacheEigen {
  double lambda;
  const double *mu;
  size_t neig;
  const double *evals;
  const double *evecs;
} SlemCacheEigen;

/* What a linear cache holds: mu(d), ainv(d, d) = (Sigma + lambda I)^-1, symmetric, and
 * rcond, the reciprocal condition number of A (0: not recorded); eigen.neig is 0 and its
 * sections NULL unless the cache stores its eigendecomposition. mixed: 1 when Sigma is not
 * the negatives' own (slem-negstats --mixed: mu the positives' mean), so that what assumes
 * the negatives' 1/n statistics (--basic, --classifier) can refuse it. */
typedef struct SlemCacheLinear {
  double lambda;
  double rcond;
  int mixed;
  const double *mu;
  const double *ainv;
  SlemCacheEigen eigen;
} SlemCacheLinear;

/* The linear data of self, or NULL when self is of another kind. Cannot fail. */
const SlemCacheLinear *slem_cache_linear(const SlemCache *self);

/* What a linear cache records beyond its sections. */
typedef struct SlemLinearInfo {
  double lambda;       /* the lambda of A = Sigma + lambda I */
  double lambda_rel;   /* recorded when >= 0: lambda = lambda_rel * trace(Sigma) / d */
  double trace_sigma;  /* trace(Sigma), always recorded */
  double rcond;        /* reciprocal condition number of A, recorded when > 0 */
} SlemLinearInfo;

/* Writes a linear cache atomically from mu(d) and ainv(d, d). Errors: SLEM_ENUMERIC,
 * SLEM_EIO, SLEM_ENOMEM (slem_cache_write()). */
int slem_cache_write_linear(const char *path, size_t d, uint64_t n, const SlemLinearInfo *info,
                            const double *mu, const double *ainv, const SlemProvenance *prov,
                            SlemError *err);

/* A linear cache with its eigendecomposition (slem-negstats --eigen): evals(d), evecs(d,
 * d) besides; mixed: the covariance of --mixed (see the top of this file). */
int slem_cache_write_eigen(const char *path, size_t d, uint64_t n, double lambda,
                           double lambda_rel, double trace_sigma, double rcond, int mixed,
                           const double *mu, const double *ainv, const double *evals,
                           const double *evecs, const SlemProvenance *prov, SlemError *err);

#endif

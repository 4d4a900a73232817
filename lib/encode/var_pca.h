/* The pca kind of cache (slem-negstats --pca R): sections mu(d), evals(R) and evecs(R, d),
 * the top R eigenpairs of Sigma, with r, lambda, lambda_rel (when given), trace_sigma and
 * variance_kept = sum evals / trace_sigma in its JSON header.
 */
#ifndef SLEM_VAR_PCA_H
#define SLEM_VAR_PCA_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "var_linear.h"

/* The eigenpairs of a pca cache, or NULL when self is of another kind. */
const SlemCacheEigen *slem_cache_pca(const SlemCache *self);

/* The eigenpairs of a linear cache that stores them (var_linear.h) or of a pca cache,
 * NULL otherwise. Cannot fail. */
const SlemCacheEigen *slem_cache_eigen(const SlemCache *self);

/* Writes a pca cache of the top rank eigenpairs atomically. Errors: those of
 * slem_cache_write(). */
int slem_cache_write_pca(const char *path, size_t d, uint64_t n, size_t rank, double lambda,
                         double lambda_rel, double trace_sigma, const double *mu,
                         const double *evals, const double *evecs, const SlemProvenance *prov,
                         SlemError *err);

#endif

/* The recursive kinds of cache (recursive.h, var_nubeta.h): "recursive", depth >= 2 stages of
 * linear SLEM, stage s (1-based) with sections mu.s(d) and ainv.s(d, d) (mu and ainv for
 * the first), and "lambdas", "trace_sigmas" and "rconds" per stage in its JSON header;
 * "recursive-nubeta" (the [nu; beta] descriptors of new_full_encoder.m) has stage s in
 * dimension d + s - 1, with theta, theta_n and m per stage but the last, and the number of
 * positives those means took.
 */
#ifndef SLEM_KIND_RECURSIVE_H
#define SLEM_KIND_RECURSIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

/* What a recursive cache holds: depth >= 2 stages, per stage s < depth, mu[s](d),
 * ainv[s](d, d) and lambda[s]. A cache of kind "recursive-nubeta" (nu_beta 1) has stage s
 * in dimension d + s: mu[s](d + s), ainv[s](d + s, d + s), with theta and
 * theta_n(depth - 1). */
typedef struct SlemCacheRecursive {
  size_t depth;
  const double *const *mu;
  const double *const *ainv;
  const double *lambda;
  int nu_beta;
  double theta;
  const double *theta_n;
} SlemCacheRecursive;

/* The stages of a recursive or recursive-nubeta cache, or NULL for another kind. */
const SlemCacheRecursive *slem_cache_recursive(const SlemCache *self);

/* A recursive cache (recursive.h) of depth >= 2 stages: mu[s](d), ainv[s](d, d),
 * lambda[s], trace_sigma[s] and rcond[s] for s < depth, written atomically. Errors: those
 * of slem_cache_write(). */
int slem_cache_write_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                               double lambda_rel, const double *lambda,
                               const double *trace_sigma, const double *rcond,
                               const double *const *mu, const double *const *ainv,
                               const SlemProvenance *prov, SlemError *err);

/* A "recursive-nubeta" cache (var_nubeta.h): as a recursive one, stage s in dimension d + s,
 * with theta, theta_n[s] and the mean score m[s] that gave it for s < depth - 1, and the
 * number of positives those means took. */
typedef struct SlemNubetaInfo {
  double theta;
  const double *theta_n, *m;
  uint64_t npos;
} SlemNubetaInfo;
int slem_cache_write_nubeta(const char *path, size_t d, uint64_t n, size_t depth,
                            double lambda_rel, const double *lambda, const double *trace_sigma,
                            const double *rcond, const double *const *mu,
                            const double *const *ainv, const SlemNubetaInfo *nb,
                            const SlemProvenance *prov, SlemError *err);

#endif

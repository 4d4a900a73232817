/* The kernel kinds of cache (kernel_stats.h, var_krec.h). "kernel": pivots(r, d), the pivot
 * negatives after the kernel's input transform; lp(r, r), the lower-triangular factor of K
 * on the pivots; mu(r): mu_B, the mean row of B; ginv(r, r) = G^-1 with G = (1/n) B^T B -
 * mu_B mu_B^T + lambda I; its JSON header naming the kernel with all its parameters, the
 * rank r, the residual trace and the factor ("icd" when absent, "kpca", "full"). A kpca
 * cache has negatives(n, d) (prepared) and proj(r, n) in place of pivots and lp; a cache
 * made for the coupling ("couple": true) has negatives(n, d) and bneg(n, r) = B besides.
 * "kernel-recursive" (var_krec.h) holds depth >= 2 stages of kernel SLEM: "depth" and "stages"
 * in its JSON header, one object per stage with the members of a kernel cache and its
 * input dimension d, and each stage's sections of a kernel cache named NAME.S (pivots.1,
 * ginv.2, ...): no section is named mu, so a reader that does not know the kind refuses it
 * ("section 'mu' is missing") instead of using a stage as a linear cache.
 */
#ifndef SLEM_VAR_KERNEL_H
#define SLEM_VAR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "kernel.h"

/* What a kernel cache holds (see the top of this file): the kernel (gamma resolved), its
 * rank r, lambda, mu(r) = mu_B, ginv(r, r), symmetric; pivots(r, d), prepared, and lp(r, r),
 * lower triangular, unless factor is kpca; negs(n, d), prepared, for kpca or couple, else
 * NULL; proj(r, n) for kpca, else NULL; bneg(n, r) when couple, else NULL. */
typedef struct SlemCacheKernel {
  SlemKernel kernel;
  size_t r;
  double lambda;
  SlemKernelFactor factor;
  int couple;
  const double *mu;
  const double *ginv;
  const double *pivots;
  const double *lp;
  const double *negs;
  const double *proj;
  const double *bneg;
} SlemCacheKernel;

/* What a kernel-recursive cache holds: depth >= 2 stages, stage[s] a cache of kind kernel
 * (owned by the cache, its sections in the cache's mapping) whose input dimension d is the
 * cache's for s = 0, else the rank r of stage s - 1; its path is "PATH (stage S)". */
typedef struct SlemCacheKernelRecursive {
  size_t depth;
  const struct SlemCache *const *stage;
} SlemCacheKernelRecursive;

/* The data of a kernel cache (or of a stage of a kernel-recursive one, or a view), or NULL
 * for another kind; of a kernel-recursive cache, or NULL. Cannot fail. */
const SlemCacheKernel *slem_cache_kernel(const SlemCache *self);
const SlemCacheKernelRecursive *slem_cache_kernel_recursive(const SlemCache *self);

/* What a kernel cache records beyond its sections. */
typedef struct SlemKernelInfo {
  const SlemKernel *kernel;
  size_t r;
  double lambda, lambda_rel;       /* lambda_rel < 0: not given */
  double trace_k, residual_trace;  /* trace of K, and of K - B B^T */
  double trace_sigma_b;            /* trace of (1/n) B^T B - mu_B mu_B^T */
  double gamma_median;             /* < 0 unless gamma was set from the median */
  uint64_t seed;
  SlemKernelFactor factor;
  int couple;
} SlemKernelInfo;

/* The sections of a kernel cache: pivots and lp for icd and full, negs and proj for kpca,
 * negs and bneg besides when info->couple. */
typedef struct SlemKernelSections {
  const double *pivots, *lp, *mu_b, *ginv, *negs, *proj, *bneg;
} SlemKernelSections;

int slem_cache_write_kernel(const char *path, size_t d, uint64_t n, const SlemKernelInfo *info,
                            const SlemKernelSections *sections, const SlemProvenance *prov,
                            SlemError *err);

/* A kernel-recursive cache of depth >= 2 stages (see the top of this file): stage s has
 * info[s] and the sections ks[s] of a kernel cache whose input dimension is d for s = 0,
 * else info[s - 1]->r. Written atomically. Errors: SLEM_EINVAL (depth < 2), SLEM_ENUMERIC
 * (a value that is not finite), SLEM_EIO, SLEM_ENOMEM. */
int slem_cache_write_kernel_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                                      const SlemKernelInfo *const *info,
                                      const SlemKernelSections *const *ks,
                                      const SlemProvenance *prov, SlemError *err);

/* A new cache of kind kernel in *self over sections held in memory (ks, borrowed, with
 * info->kernel: they must outlive it), as slem_cache_write_kernel() would write them and
 * slem_cache_read() read them back, named name in messages; for projecting points through a
 * kernel stage before it is written (var_krec.h). Freed by slem_cache_free(); it has no JSON
 * header (slem_cache_json() returns NULL) and its fingerprint is that of no payload.
 * Errors: SLEM_ENOMEM. */
int slem_cache_kernel_view(SlemCache **self, const char *name, size_t d, uint64_t n,
                           const SlemKernelInfo *info, const SlemKernelSections *ks,
                           SlemError *err);

#endif

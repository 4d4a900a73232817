/* The negative-statistics cache (.slem): what slem-negstats computes once and every
 * slem-encode reads.
 *
 * Layout: the fixed header of the .slem container (container.h: magic, version, byte-order
 * mark, lengths, offsets, CRC-32s; SLEM_CACHE_VERSION is its version),
 * then the JSON header (cJSON: kind, d, n, lambda, sections with offset/shape/dtype,
 * the arithmetic that made it (arith.h), provenance), then the sections, each at a
 * 64-byte aligned absolute offset, float64 little-endian, row-major, so that a reader can
 * use them in place from mmap.
 *
 * Kinds: "linear" (sections mu(d), ainv(d, d) = (Sigma + lambda I)^-1), "partial" (the
 * complete nodes of the statistics tree of stats.h for a run of leaves: node_mu(m, d) and
 * node_scatter(m d, d), each node's scatter sum (x - mu)(x - mu)^T over its rows, with the
 * nodes' places and counts and the grid of leaves in the JSON header), mergeable across
 * shards into exactly the statistics of one pass,
 * and "kernel" (pivots(r, d): the pivot negatives after the kernel's input transform;
 * lp(r, r): the lower-triangular factor of K on the pivots; mu(r): mu_B, the mean row of
 * B; ginv(r, r) = G^-1 with G = (1/n) B^T B - mu_B mu_B^T + lambda I), its JSON header
 * naming the kernel with all its parameters, the rank r, the residual trace and the
 * factor ("icd" when absent, "kpca", "full"). A kpca cache has negatives(n, d) (prepared)
 * and proj(r, n) in place of pivots and lp; a cache made for the coupling ("couple":
 * true) has negatives(n, d) and bneg(n, r) = B besides.
 * "kernel-recursive" (lib/encode/krec.h) holds depth >= 2 stages of kernel SLEM: "depth" and
 * "stages" in its JSON header, one object per stage with the members of a kernel cache and
 * its input dimension d, and each stage's sections of a kernel cache named NAME.S (pivots.1,
 * ginv.2, ...): no section is named mu, so a reader that does not know the kind refuses it
 * ("section 'mu' is missing") instead of using a stage as a linear cache.
 */
#ifndef SLEM_CACHE_H
#define SLEM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kernel.h"

#define SLEM_CACHE_VERSION 1

typedef enum SlemCacheKind {
  SLEM_CACHE_LINEAR = 1,
  SLEM_CACHE_PARTIAL = 2,
  SLEM_CACHE_KERNEL = 3,
  SLEM_CACHE_PCA = 4,
  SLEM_CACHE_RECURSIVE = 5,
  SLEM_CACHE_KERNEL_RECURSIVE = 6
} SlemCacheKind;

typedef struct SlemCache {
  SlemCacheKind kind;
  size_t d;               /* dimension of the input vectors */
  uint64_t n;             /* negatives summarised */
  /* The kind's own data, owned by the cache, read through its kind's accessor below
   * (slem_cache_linear(), ..., each NULL for the other kinds). A new kind adds its struct,
   * its reader in cache.c and its accessor here, not fields to every cache. */
  const void *kind_data;
  struct SlemCachePriv *priv;
} SlemCache;

/* Eigenpairs of Sigma as a linear cache made with --eigen (neig = d) or a pca cache
 * (neig = R) holds them: evals(neig), largest first, evecs(neig, d), row k the k-th
 * eigenvector, with the cache's mu(d) and lambda. */
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

/* What a recursive cache holds: depth >= 2 stages, per stage s < depth, mu[s](d),
 * ainv[s](d, d) and lambda[s]. A cache of kind "recursive-nubeta" (nu_beta 1: the [nu; beta]
 * descriptors of new_full_encoder.m, lib/encode/nubeta.h) has stage s in dimension d + s:
 * mu[s](d + s), ainv[s](d + s, d + s), with theta and theta_n(depth - 1). */
typedef struct SlemCacheRecursive {
  size_t depth;
  const double *const *mu;
  const double *const *ainv;
  const double *lambda;
  int nu_beta;
  double theta;
  const double *theta_n;
} SlemCacheRecursive;

/* What a kernel-recursive cache holds: depth >= 2 stages, stage[s] a cache of kind kernel
 * (owned by the cache, its sections in the cache's mapping) whose input dimension d is the
 * cache's for s = 0, else the rank r of stage s - 1; its path is "PATH (stage S)". */
typedef struct SlemCacheKernelRecursive {
  size_t depth;
  const struct SlemCache *const *stage;
} SlemCacheKernelRecursive;

struct SlemPartialInfo;

/* The accessors of the kinds' data: each returns the data owned by self, or NULL when self
 * is of another kind. Cannot fail. slem_cache_eigen() returns the eigenpairs of a linear
 * cache that stores them or of a pca cache (the pca kind's data), NULL otherwise. */
const SlemCacheLinear *slem_cache_linear(const SlemCache *self);
const SlemCacheEigen *slem_cache_pca(const SlemCache *self);
const SlemCacheEigen *slem_cache_eigen(const SlemCache *self);
const struct SlemPartialInfo *slem_cache_partial(const SlemCache *self);
const SlemCacheKernel *slem_cache_kernel(const SlemCache *self);
const SlemCacheRecursive *slem_cache_recursive(const SlemCache *self);
const SlemCacheKernelRecursive *slem_cache_kernel_recursive(const SlemCache *self);

/* Maps and checks path: magic, byte order, version, header checksum, offsets and sizes
 * inside the file and consistent with d, both checksums, the JSON header. *self is set
 * to a new cache freed by slem_cache_free(). Errors: SLEM_EIO, SLEM_EFORMAT with what is
 * wrong ("written with byte order ...", "version 7; this slem reads version 1",
 * "checksum mismatch in the payload"). */
int slem_cache_read(SlemCache **self, const char *path, SlemError *err);
void slem_cache_free(SlemCache *self);

/* The JSON header, pretty-printed, with the fingerprint, owned by self; NULL when out of
 * memory. */
const char *slem_cache_json(const SlemCache *self);

/* 16 hex digits: FNV-1a (64 bits) of the payload, which names this cache's numbers in the
 * descriptors made with it; owned by self. Computed at the first call (from any thread),
 * since most runs never need it and hashing byte by byte costs more than reading. */
const char *slem_cache_fingerprint(const SlemCache *self);
const char *slem_cache_path(const SlemCache *self);

/* The line of the arithmetic that made the cache (arith.h: its BLAS core and versions), as
 * its JSON header records it, owned by self; NULL when it records none (an older slem). */
const char *slem_cache_arith(const SlemCache *self);

/* The lines of the arithmetics a cache mixes (arith.h: a merge of partial caches allowed to
 * mix them, " + " between), owned by self; NULL when it mixes none. */
const char *slem_cache_arith_mixed(const SlemCache *self);

/* The time a cache records in its provenance (its "time", UTC): fixed != 0: epoch, in
 * seconds since 1970 (reproducible caches; cmd/ passes SOURCE_DATE_EPOCH); fixed == 0: the
 * time of writing (the default). Process-wide: call it before any thread writes a cache.
 * No errors. */
void slem_cache_set_time(int fixed, int64_t epoch);

/* What a cache records of how it was made. */
typedef struct SlemProvenance {
  const char *tool;
  const char *const *inputs;
  size_t ninputs;
  const char *arith_mixed;  /* NULL, or the arithmetics of inputs that were allowed to mix */
} SlemProvenance;

/* What a linear cache records beyond its sections. */
typedef struct SlemLinearInfo {
  double lambda;       /* the lambda of A = Sigma + lambda I */
  double lambda_rel;   /* recorded when >= 0: lambda = lambda_rel * trace(Sigma) / d */
  double trace_sigma;  /* trace(Sigma), always recorded */
  double rcond;        /* reciprocal condition number of A, recorded when > 0 */
} SlemLinearInfo;

/* What a partial cache holds (stats.h): the complete nodes of the statistics tree over the
 * leaves [leaf_first, leaf_end) of a set of negatives of `rows` rows cut into leaf_total
 * leaves of leaf_rows rows each. leaf_rows 0: the leaves are whole sets of negatives folded
 * already (a merge of several sets). negatives names the set by the content of its vector
 * files, in order (16 hex digits; "": not recorded, a pipe or an older slem), so that the
 * shards of two sets of the same shape are never taken for one set. */
typedef struct SlemPartialInfo {
  size_t leaf_rows;
  uint64_t leaf_first, leaf_end, leaf_total;
  uint64_t rows;
  uint64_t shard_index, shard_count;  /* the shard written, count 0: none */
  size_t nnodes;
  const uint64_t *node;               /* node(nnodes, 3): level, index, n */
  const double *node_mu;              /* node_mu(nnodes, d) */
  const double *node_scatter;         /* node_scatter(nnodes d, d), lower triangles valid */
  char negatives[17];                 /* last: initialisers by position leave it "" */
} SlemPartialInfo;

/* Write a cache atomically (temporary file, fsync, rename): a linear one from mu(d) and
 * ainv(d, d), a partial one from its nodes. Errors: SLEM_EIO. */
int slem_cache_write_linear(const char *path, size_t d, uint64_t n, const SlemLinearInfo *info,
                            const double *mu, const double *ainv, const SlemProvenance *prov,
                            SlemError *err);
int slem_cache_write_partial(const char *path, size_t d, uint64_t n,
                             const SlemPartialInfo *info, const SlemProvenance *prov,
                             SlemError *err);

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
 * kernel stage before it is written (krec.h). Freed by slem_cache_free(); it has no JSON
 * header (slem_cache_json() returns NULL) and its fingerprint is that of no payload.
 * Errors: SLEM_ENOMEM. */
int slem_cache_kernel_view(SlemCache **self, const char *name, size_t d, uint64_t n,
                           const SlemKernelInfo *info, const SlemKernelSections *ks,
                           SlemError *err);

/* Eigendecompositions (slem-negstats --eigen, --pca). A linear cache may also hold
 * sections evals(d) and evecs(d, d), the eigenpairs of Sigma (largest first, row k the
 * k-th eigenvector); readers that do not know them ignore them. Kind "pca" holds
 * mu(d), evals(R) and evecs(R, d), the top R eigenpairs of Sigma, with lambda,
 * trace_sigma and variance_kept = sum evals / trace_sigma in its JSON header.
 * mixed: Sigma is the covariance of positives and negatives together and mu the positives'
 * mean (slem-negstats --eigen --mixed; "covariance": "mixed" in the header, read back as
 * SlemCacheLinear.mixed); 0 for the negatives' own statistics (no such member: the caches
 * of before). */
int slem_cache_write_eigen(const char *path, size_t d, uint64_t n, double lambda,
                           double lambda_rel, double trace_sigma, double rcond, int mixed,
                           const double *mu, const double *ainv, const double *evals,
                           const double *evecs, const SlemProvenance *prov, SlemError *err);
int slem_cache_write_pca(const char *path, size_t d, uint64_t n, size_t rank, double lambda,
                         double lambda_rel, double trace_sigma, const double *mu,
                         const double *evals, const double *evecs, const SlemProvenance *prov,
                         SlemError *err);

/* A "recursive-nubeta" cache (nubeta.h): as a recursive one, stage s in dimension d + s,
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
/* A recursive cache (lib/encode/recursive.h) of depth >= 2 stages: mu[s](d), ainv[s](d, d),
 * lambda[s], trace_sigma[s] and rcond[s] for s < depth. */
int slem_cache_write_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                               double lambda_rel, const double *lambda,
                               const double *trace_sigma, const double *rcond,
                               const double *const *mu, const double *const *ainv,
                               const SlemProvenance *prov, SlemError *err);

/* 1 when path is a regular file whose first bytes are the container magic and which is not
 * a descriptor container (JSON kind "descriptors": vectors; 0 also when it cannot be read;
 * a pipe or FIFO is not opened, so no byte of it is consumed). */
int slem_cache_sniff(const char *path);

#endif

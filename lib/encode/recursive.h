/* Recursive SLEM: stages of linear SLEM, each computed on the negatives encoded by the
 * stages before it.
 *
 * Stage 1 is the linear SLEM of the negatives x_i: mu_1, A_1 = Sigma_1 + lambda_1 I.
 * Stage s + 1 takes the negatives encoded (normalised) by stages 1..s,
 *   x_i^(s) = y_s(... y_1(x_i)),   y_s(z) = A_s^-1 (z - mu_s) / |A_s^-1 (z - mu_s)|,
 * and computes mu_(s+1), Sigma_(s+1) from them, lambda_(s+1) = lambda_rel *
 * trace(Sigma_(s+1)) / d (the same relative lambda at every stage). A vector is encoded by
 * applying y_1, ..., y_K in turn; the result is unit length (or zero).
 *
 * A cache of depth K >= 2 has kind "recursive": sections mu, ainv (stage 1) and mu.S,
 * ainv.S for S = 2..K, and "depth" and per-stage "lambdas" in its JSON header; readers
 * that do not know the kind refuse it rather than use stage 1 alone.
 */
#ifndef SLEM_RECURSIVE_H
#define SLEM_RECURSIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "phases.h"
#include "stats.h"
#include "vecs.h"

typedef struct SlemRecursive SlemRecursive;

/* What a cache of depth stages records per stage (recursive and [nu; beta] caches alike):
 * mu[s] and ainv[s] (A_s^-1), allocated by slem_recursive_stage_finish(), and the stage's
 * lambda, trace(Sigma_s) and reciprocal condition number. */
typedef struct SlemRecursiveStages {
  size_t depth;
  double **mu, **ainv, *lam, *trace, *rcond;
} SlemRecursiveStages;

/* Empty stages for depth of them. Errors: SLEM_ENOMEM. */
int slem_recursive_stages_new(SlemRecursiveStages *self, size_t depth, SlemError *err);
/* Frees what self holds (its own memory is the caller's); accepts one never made. */
void slem_recursive_stages_free(SlemRecursiveStages *self);

/* Stage s of self from the statistics *st of its inputs (dim values per row): finished,
 * then A_s^-1 with lambda (>= 0) or lambda_rel, mu_s, the trace and rcond kept; *st freed
 * and set to NULL, whatever happens. *n gets the row count at stage 0. The merge and the
 * factorisation are timed into ph. Errors: those of slem_stats_finish(), SLEM_ENOMEM, those
 * of slem_stats_inverse() (naming the stage when there are several). */
int slem_recursive_stage_finish(SlemRecursiveStages *self, size_t s, SlemStats **st, size_t dim,
                                double lambda, double lambda_rel, uint64_t *n, SlemPhases *ph,
                                SlemError *err);

/* A new encoder over a linear (depth 1) or recursive cache (borrowed; it must outlive the
 * encoder) for blocks of at most max_rows vectors. Errors: SLEM_EINVAL (another kind),
 * SLEM_ENOMEM. */
int slem_recursive_new(SlemRecursive **self, const SlemCache *cache, size_t max_rows,
                       SlemError *err);
void slem_recursive_free(SlemRecursive *self);

/* Values per output row: d, the cache's. Cannot fail. */
size_t slem_recursive_out_dim(const SlemRecursive *self);

/* Encodes b <= max_rows vectors x(b, d) through every stage into y(b, d), in double;
 * x is left unchanged. Vectors whose descriptor is zero at some stage are counted in
 * slem_recursive_zeros(). Cannot fail. */
void slem_recursive_run_f64(SlemRecursive *self, double *y, const double *x, size_t b);
void slem_recursive_run(SlemRecursive *self, float *y, const double *x, size_t b);
uint64_t slem_recursive_zeros(const SlemRecursive *self);

/* Counts in slem_recursive_zeros() only the rows [lo, hi) of the blocks encoded from now on
 * (a shard's rows of its first and last blocks, encoder.h); every row until called. */
void slem_recursive_count_rows(SlemRecursive *self, size_t lo, size_t hi);

/* Computes a cache of depth stages from the vector files inputs[0..ninputs) (read depth
 * times; stdin cannot be; those that name arrays of arrays, which may be NULL, from memory:
 * vecs.h) and writes it to path: a linear cache for depth 1, else a
 * recursive one. lambda >= 0 is stage 1's absolute lambda and is only allowed at depth 1;
 * otherwise lambda_rel >= 0 sets every stage's lambda. skip: skip non-finite vectors.
 * ph (may be NULL) gets the seconds spent reading, computing (the stages and the
 * statistics' leaves), merging (the statistics' tree), factoring and writing.
 * Errors: SLEM_EINVAL (bad arguments, stdin with depth > 1), those of the readers, of
 * slem_stats_inverse() (naming the stage), of the cache writer. */
int slem_recursive_write_cache(const char *path, const char *const *inputs, size_t ninputs,
                               SlemFormat fmt, const SlemVecArrays *arrays, size_t block, int skip, size_t depth,
                               double lambda, double lambda_rel, const SlemProvenance *prov,
                               SlemPhases *ph, SlemError *err);

/* SLEM_EINVAL naming the first of inputs[0..n) that is a slem cache (recognised with fmt
 * SLEM_FMT_AUTO; arrays, which may be NULL, are none): a recursive cache's stage 2 needs the
 * negatives themselves. */
int slem_recursive_check_inputs(const char *const *inputs, size_t n, SlemFormat fmt,
                                const SlemVecArrays *arrays, SlemError *err);

#endif

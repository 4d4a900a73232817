/* Kernel recursive SLEM: stages of kernel SLEM (kernel_stats.h, kproj.h), each computed on
 * the negatives' explicit descriptors of the stages before it, as recursive.h does with
 * linear stages: the kernel branch of the authors' quick_full_encoder.m (docs/kernel.md,
 * "Kernel recursive SLEM", says what it intends and where slem departs from it).
 *
 * Stage 1 is the kernel SLEM of the negatives x_i exactly as a kernel cache holds it (same
 * kernel, factor, rank and lambda). Stage s + 1 takes the negatives' explicit descriptors
 * through stages 1..s,
 *   x_i^(s) = y_s(... y_1(x_i)),   y_s(x) = z / N   (kproj.h: r_s values, norm <= 1),
 * computed in double, and factorises their kernel matrix with the same kernel spec, factor
 * and rank: a gamma relative to the median distance (rbf:g=R) is resolved on each stage's
 * own inputs, lambda_rel on each stage's own trace (an absolute lambda is the same at every
 * stage). A vector is encoded by applying y_1, ..., y_K in turn (double between stages);
 * the result has r_K values.
 */
#ifndef SLEM_VAR_KREC_H
#define SLEM_VAR_KREC_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "phases.h"
#include "kernel.h"

typedef struct SlemKRec SlemKRec;

/* A new encoder over a kernel-recursive cache (borrowed; it must outlive the encoder) for
 * blocks of at most max_rows vectors. Errors: SLEM_EINVAL (another kind), SLEM_ENOMEM. */
int slem_krec_new(SlemKRec **self, const SlemCache *cache, size_t max_rows, SlemError *err);
void slem_krec_free(SlemKRec *self);

/* Values per output row: the last stage's rank. Cannot fail. */
size_t slem_krec_out_dim(const SlemKRec *self);

/* Encodes b <= max_rows vectors x(b, d) through every stage into y(b, out_dim) (double or
 * float32: the last stage's z / N rounded once); name and first_record (1-based) name the
 * rows in errors: SLEM_EFORMAT from a kernel's input transform (a negative value for a
 * histogram kernel, naming the stage when it is not the first). */
int slem_krec_run_f64(SlemKRec *self, double *y, const double *x, size_t b, const char *name,
                      uint64_t first_record, SlemError *err);
int slem_krec_run(SlemKRec *self, float *y, const double *x, size_t b, const char *name,
                  uint64_t first_record, SlemError *err);

/* Points whose u^2 was clamped at 0 (kproj.h), over every stage and block. */
uint64_t slem_krec_clamps(const SlemKRec *self);

/* What a kernel-recursive cache is made with. */
typedef struct SlemKRecOpts {
  const char *kernel;        /* kernel spec (kernel.h); a relative gamma resolved per stage */
  size_t depth;              /* stages, >= 2 */
  size_t rank;               /* largest rank of each stage's factorisation */
  double tol;                /* kernel_stats.h */
  double lambda;             /* >= 0: the same absolute lambda at every stage */
  double lambda_rel;         /* else lambda = lambda_rel * trace(Sigma_B) / r, per stage */
  SlemKernelFactor factor;   /* icd, kpca or full, at every stage */
  size_t sample;             /* rows sampled for a relative gamma, and its seed */
  uint64_t seed;
} SlemKRecOpts;

/* Whether a kernel-recursive cache of depth stages can be made with the kernel spec: SLEM_OK,
 * or SLEM_EINVAL (a bad spec, depth < 2, or a kernel for histograms: stage 2 takes stage
 * 1's descriptors, whose values can be negative, so it would fail after stage 1's work). */
int slem_krec_check(const char *kernel, size_t depth, SlemError *err);

/* Computes the depth stages from the raw negatives x(n, d) (read only; named name in
 * messages) and writes the kernel-recursive cache to path atomically (cache.h). *rank gets
 * the last stage's rank, *residual its residual trace. Errors: SLEM_EINVAL (those of
 * slem_krec_check(), before any work), those of slem_kernel_prepare() and slem_kernel_estimate_gamma() on a stage's
 * inputs and of slem_kernel_stats_new() (prefixed with the stage), of the writer. ph (may
 * be NULL) gets the seconds spent computing (preparing the stages' inputs, their
 * descriptors), factoring (each stage's kernel statistics) and writing. */
int slem_krec_write_cache(const char *path, const double *x, size_t n, size_t d,
                          const char *name, const SlemKRecOpts *opts,
                          const SlemProvenance *prov, size_t *rank, double *residual,
                          SlemPhases *ph, SlemError *err);

#endif

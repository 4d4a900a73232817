/* The negative-statistics pipeline of slem-negstats: vector files and partial caches in,
 * one cache out (linear, partial or kernel), in a single call that a test can drive.
 *
 * Linear and partial: each input is either a partial cache (recognised by its magic when
 * the format is SLEM_FMT_AUTO) or a vector file, streamed in blocks (the next block read on
 * another thread while the current one is accumulated). The statistics follow the tree of
 * stats.h: the partial caches of the shards of one set of negatives, given in any order,
 * merge into the statistics of one run over all its rows, bit for bit; a missing or
 * repeated shard is an error. With `partial` the cache keeps the tree's nodes (mergeable
 * later); otherwise A^-1 is computed with the lambda asked. Kernel: every vector is held
 * (n x d) and factorised (kernel_stats.h). With `mixed`, the positives' file is read twice:
 * once as the last input of the union's statistics, once alone for their mean.
 * Memory of the linear path: O(d^2 + block d), whatever the number of negatives.
 */
#ifndef SLEM_NEGSTATS_H
#define SLEM_NEGSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "optspec.h"
#include "phases.h"
#include "progress.h"
#include "shard.h"
#include "vecs.h"

typedef struct SlemNegstatsOpts {
  SlemFormat format;     /* of the vector inputs (SLEM_FMT_AUTO: recognised; partial caches too) */
  SlemVecArrays arrays;  /* the inputs that are arrays in memory, named in inputs by their
                            readers' names (vecs.h; {NULL, 0}, the default: none): read from
                            their first row at every pass, as files would be */
  size_t block;          /* rows read per block; 0: 2^18 / d, 64 to 4096 (about 1 MiB of
                            float32; 4096 for the kernel path) */
  size_t leaf_rows;      /* linear: rows per leaf of the statistics tree (stats.h); 0:
                            slem_block_rows(d). Shards and whole runs must agree on it */
  int skip_nonfinite;    /* skip and count records holding NaN or Inf instead of failing */
  int partial;           /* write a partial cache: count, mean, scatter */
  size_t depth;          /* recursive SLEM (recursive.h): stages, default 1; > 1 reads the
                            vector files once per stage (no stdin, partial caches, shard,
                            eigen or pca; lambda_rel, not lambda); with kernel, kernel
                            recursive SLEM (krec.h: lambda or lambda_rel, no couple) */
  const char *adaptive;  /* NULL, or with depth > 1 a vector file of positives (not stdin):
                            the [nu; beta] stages and adaptive theta_n of new_full_encoder.m
                            (nubeta.h) with theta; lambda absolute or lambda_rel */
  double theta;          /* adaptive: the positives' weight (default 1) */
  SlemFormat pos_format; /* of the adaptive or mixed positives (SLEM_FMT_AUTO, the default:
                            recognised from the extension or content; format is the
                            negatives' only) */
  int eigen;             /* linear: also store the eigendecomposition of Sigma (whiten.h) */
  const char *mixed;     /* NULL, or with eigen a vector file of positives (not stdin): the
                            mixed covariance of SLEM_whitening.m, of the positives and the
                            negatives together, divided by N - 1, and mu the positives' mean
                            (slem_whiten_write_mixed_cache(); no partial caches, shard, pca,
                            depth or kernel) */
  size_t pca;            /* > 0: a PCA-reduced cache of the top pca eigenpairs (whiten.h);
                            more than d is SLEM_EINVAL, with res->d set */
  double lambda;         /* >= 0: absolute lambda; else lambda_rel applies */
  double lambda_rel;     /* lambda = lambda_rel * trace(Sigma) / d (or / r for a kernel) */
  const char *kernel;    /* a kernel spec (kernel.h) for kernel SLEM, or NULL */
  size_t rank;           /* kernel: largest rank of the factorisation */
  double tol;            /* kernel: stop when the residual trace falls below tol * trace(K) */
  SlemKernelFactor factor;  /* kernel: icd (default), kpca or full */
  int couple;            /* kernel: keep B and the negatives for the coupling (kproj.h) */
  size_t sample;         /* kernel: rows sampled to estimate a relative gamma */
  uint64_t seed;         /* kernel: seed of that sample */
  SlemShard shard;       /* partial only: the leaves floor(I L / N) .. floor((I + 1) L / N) - 1
                            of the L leaves of leaf_rows rows of the vector inputs, numbered
                            across them in order (count 0: all rows; shard.h) */
  const char *variant;   /* NULL, or the name of a variant asked for by its own option
                            (variant.h: slem_negstats_opt_variant(), e.g. "diagonal") */
  int allow_mixed_blas;  /* merge partial caches made on other BLAS cores (arith.h) than one
                            another or than this host (refused by default: SLEM_EFORMAT) */
  unsigned given;        /* SLEM_NEGSTATS_GIVEN_* of the options whose defaults a caller set
                            on purpose (0, the default: none), so that slem_negstats_check()
                            refuses them where they do nothing, as slem-negstats does */
  SlemProgressFn progress;  /* may be NULL: called with the negatives read so far */
  void *progress_ctx;
} SlemNegstatsOpts;

/* Bits of SlemNegstatsOpts.given: options given although equal to their defaults. */
enum {
  SLEM_NEGSTATS_GIVEN_LAMBDA_REL = 1u << 0, /* lambda_rel (--lambda-rel) */
  SLEM_NEGSTATS_GIVEN_RANK = 1u << 1,       /* rank (--rank) */
  SLEM_NEGSTATS_GIVEN_TOL = 1u << 2,        /* tol (--tol) */
  SLEM_NEGSTATS_GIVEN_FACTOR = 1u << 3,     /* factor (--factor) */
  SLEM_NEGSTATS_GIVEN_THETA = 1u << 4,      /* theta (--theta) */
  SLEM_NEGSTATS_GIVEN_POS_FORMAT = 1u << 5  /* pos_format (--positives-format) */
};

/* The rank a kernel factorisation stops at by default (SlemNegstatsOpts.rank). */
#define SLEM_NEGSTATS_RANK 256

/* Defaults: auto format, blocks by dimension, lambda_rel 1, rank 256, tol 0, sample 1000,
 * seed 1, no kernel, no progress. */
void slem_negstats_opts_init(SlemNegstatsOpts *opts);

/* The options of slem-negstats that SlemNegstatsOpts holds, each declared once as a spec
 * (optspec.h): those every fit shares (lambda, lambda-rel, format, positives-format,
 * skip-nonfinite, block, leaf-rows, allow-mixed-blas), then each variant's fit_options in
 * the table's order (variant.h), which is slem-negstats --help's order.
 *
 * slem_negstats_opts_set() sets the option name (the long option without its dashes) to
 * value (its text as on the command line; NULL for a flag), parsed, range-checked and
 * stored by its spec, with SLEM_NEGSTATS_GIVEN_* bits set where the spec says; text values
 * are borrowed (kept alive by the caller). The rules between options are
 * slem_negstats_check()'s. Errors: SLEM_EINVAL with slem-negstats' message ("--rank: '0'
 * is not a whole number from 1 to 1048576", "--theta: must be positive", "unknown option
 * 'NAME'"); opts is then unchanged.
 * slem_negstats_opts_count() and slem_negstats_opts_get() (i < count; static storage)
 * list them. Cannot fail. */
int slem_negstats_opts_set(SlemNegstatsOpts *opts, const char *name, const char *value,
                           SlemError *err);
size_t slem_negstats_opts_count(void);
const SlemOptSpec *slem_negstats_opts_get(size_t i);

/* The parser (SlemOptParseFn) of a variant's own flag that asks for it (--diagonal): sets
 * SlemNegstatsOpts.variant to the spec's name. Errors: SLEM_EINVAL "--A and --B ask for
 * two variants: give one" when another variant's flag was given. */
int slem_negstats_opt_variant(const SlemOptSpec *s, void *opts, const char *value,
                              SlemError *err);

/* What a run did beyond its cache, for the caller to report. */
typedef struct SlemNegstatsResult {
  uint64_t n;                  /* negatives summarised */
  size_t d;
  uint64_t skipped;            /* records skipped for NaN or Inf (skip_nonfinite) */
  const char *skipped_in;      /* the last input that had some (borrowed from inputs) */
  size_t rank, rank_asked;     /* kernel: rank reached, and asked */
  double residual_trace;       /* kernel: trace of K - B B^T */
  SlemPhases phases;           /* linear: where the wall time went (read on the prefetch
                                  thread, convert, leaves computed, tree merges, factor,
                                  write); block is the leaf's rows, units the leaves
                                  computed at once */
} SlemNegstatsResult;

/* Checks the rules between the options of opts and the inputs' names, before anything is
 * read (lib/encode/negstats_check.c): at least one input; --lambda or --lambda-rel, and
 * neither with partial; partial, shard, skip_nonfinite, eigen, pca, mixed and their
 * companions with the caches they make (kernel options only with a kernel; factor full
 * without rank or tol; eigen or pca, not both, on linear caches only; mixed with eigen and
 * the whole statistics; adaptive with depth >= 2 and linear SLEM; theta and pos_format only
 * with what reads them; mixed and adaptive positives, and the negatives of a linear depth
 * > 1, not from stdin; depth > 1 with none of partial, shard, eigen, pca, and on a kernel
 * neither couple nor a kernel for histograms, slem_krec_check()). inputs may be NULL when
 * n is 0. Errors: SLEM_EINVAL with slem-negstats' message for the first rule broken. */
int slem_negstats_check(const SlemNegstatsOpts *opts, const char *const *inputs, size_t n,
                        SlemError *err);

/* Summarises inputs[0..n) (paths, "-" for stdin at most once) into the cache output,
 * written atomically. Errors name the file and the record: those of reading the inputs
 * (dimensions that differ between files included), of the statistics (SLEM_ENUMERIC for a
 * singular A, with a lambda to try), SLEM_EINVAL (those of slem_negstats_check(), before
 * any work; a cache of another kind among the inputs; a shard of partial caches, or of an
 * input whose number of vectors is not known before reading it; mixed or adaptive with
 * partial caches among the inputs), SLEM_EFORMAT for partial
 * caches of different arithmetics (arith.h) unless allow_mixed_blas, SLEM_EIO, SLEM_ENOMEM.
 * A shard with no row (N > R, or all skipped) makes a partial cache of n = 0, which merges
 * as nothing. */
int slem_negstats_run(const char *output, const char *const *inputs, size_t n,
                      const SlemNegstatsOpts *opts, SlemNegstatsResult *res, SlemError *err);

#endif

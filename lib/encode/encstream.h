/* The pipeline of slem-encode: every vector of a reader encoded against a cache, block by
 * block, into a vector file written atomically, in one call that a test can drive.
 *
 * A linear cache gives SLEM descriptors (or classifiers, slem_linear.h); a kernel cache gives the
 * explicit kernel descriptors z / N (kproj.h), or the projections the exact similarity
 * needs, computed once for a database. The next block is read on another thread
 * while the current one is encoded; memory is O(block (d + out_dim)) beside the cache.
 */
#ifndef SLEM_ENCSTREAM_H
#define SLEM_ENCSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "slem_linear.h"
#include "error.h"
#include "ids.h"
#include "optspec.h"
#include "phases.h"
#include "progress.h"
#include "shard.h"
#include "vecs.h"

typedef struct SlemEncStreamOpts {
  SlemEncodeMode mode;      /* descriptors or classifiers (kernel: in the factor's space) */
  double theta;             /* classifiers: the weight of the positive (default 1) */
  int theta_set;            /* 1: theta was given on purpose: refused where nothing reads
                               it (slem_encstream_check()) */
  SlemPrecision precision;  /* arithmetic of unit descriptors (slem_linear.h) */
  size_t block;             /* vectors per block (default 1024; 0: slem_encstream_block(),
                               from d and the thread count, what slem-encode uses) */
  SlemFormat format;        /* of the output; SLEM_FMT_AUTO: from its name (vecs.h) */
  SlemDtype dtype;          /* element type of npy output (vecs.h) */
  const struct SlemIds *ids;  /* NULL, or the ids of the input's rows, kept by a container
                                 output with the rows written (vecs.h) */
  SlemShard shard;          /* encode only rows floor(I R / N) .. floor((I + 1) R / N) - 1 of
                               the R input rows (count 0: all of them; shard.h) */
  int alpha_set;            /* 1: the whitening family (whiten.h) with this alpha, from a
                               linear cache holding its eigendecomposition */
  double alpha;             /* also the power for a pca cache, which always uses whiten.h
                               (default -1) */
  const SlemIds *groups;    /* may be NULL: the group of every input row (groups.h): one
                               output row per group, in order of first appearance, from the
                               mean of its rows (linear caches; not with a shard) */
  int couple;               /* kernel caches made with --couple: the coupling of kproj.h */
  int projections;          /* kernel caches: write the rows' projections (slem_kproj_pack(),
                               by slem_kproj_run_fixed()) in double to a container, for
                               slem-match -c, instead of the explicit descriptors */
  int coordinates;          /* kernel caches: write v, the coordinates of each row in the
                               factor's space (r values), where --classifier's exemplars
                               of a kernel cache live (slem-match --affine) */
  int basic;                /* the authors' basic_encoder.m (enc_basic.c) with theta, from a
                               full linear cache: unit descriptors, no bias, uncentred */
  SlemProgressFn progress;  /* may be NULL: called with the vectors encoded so far */
  void *progress_ctx;
  struct SlemEsvm *esvm;    /* NULL, or exemplar SVMs against their negatives (esvm.h,
                               borrowed), encoded instead of a cache: slem_encstream_run()
                               is then called with cache NULL, esvm_d the negatives'
                               dimension, and the output carries no cache metadata */
  size_t esvm_d;
  /* may be NULL: called with finish_ctx and the rows written once all are, before the
   * output is made final; an error it returns (with err filled) leaves no output, like
   * any other (slem-esvm: its --ids against an input whose count only reading tells) */
  int (*finish)(void *ctx, uint64_t rows, SlemError *err);
  void *finish_ctx;
} SlemEncStreamOpts;

void slem_encstream_opts_init(SlemEncStreamOpts *opts);

/* The options of slem-encode that SlemEncStreamOpts holds, each declared once as a spec
 * (optspec.h): those every encoding shares (output-format, dtype, classifier, theta,
 * precision, block, shard), then each variant's encode_options in the table's order
 * (variant.h), which is slem-encode --help's order.
 *
 * slem_encstream_opts_set() sets the option name (the long option without its dashes) to
 * value (its text as on the command line; NULL for a flag, or for --couple's optional
 * MODE), parsed, range-checked and stored by its spec (theta_set and alpha_set set with
 * theta and alpha). The rules between options are slem_encstream_check()'s and the
 * encoders'. Errors: SLEM_EINVAL with slem-encode's message ("--theta: must be positive",
 * "--block: '0' is not a whole number from 1 to 1048576", "unknown option 'NAME'"); opts
 * is then unchanged.
 * slem_encstream_opts_count() and slem_encstream_opts_get() (i < count; static storage)
 * list them. Cannot fail. */
int slem_encstream_opts_set(SlemEncStreamOpts *opts, const char *name, const char *value,
                            SlemError *err);
size_t slem_encstream_opts_count(void);
const SlemOptSpec *slem_encstream_opts_get(size_t i);

typedef struct SlemEncStreamResult {
  uint64_t n;       /* vectors encoded */
  uint64_t zeros;   /* linear: inputs equal to the negatives' mean (zero descriptors) */
  uint64_t clamps;  /* kernel: vectors whose u^2 was clamped (kproj.h) */
  SlemPhases phases; /* where the wall time went: read (prefetch thread), compute, write
                        (writing thread), the waits for either; units: 256-row chunks per
                        block */
} SlemEncStreamResult;

/* The default rows per block for dimension d and threads BLAS threads: four 256-row
 * chunks (each one GEMM on one thread) per thread, at least 1024 rows, at most 128 MiB of
 * doubles per buffer (never under 1024). A multiple of 256, so that every chunk starts at
 * the same global row whatever the block, and the descriptors do not depend on it. */
size_t slem_encstream_block(size_t d, int threads);

/* The rule of --dtype, for slem-encode and slem-esvm alike: a type other than float32
 * only where the output's format stores it (slem_format_stores(): npy), and int8 only for
 * unit-norm descriptors (classifiers non-zero: it refuses). name is the type as the user
 * spelled it, for the message (NULL: its canonical name). Errors: SLEM_EINVAL with the
 * tools' message. */
int slem_encstream_check_dtype(SlemDtype dt, const char *name, SlemFormat fmt, int classifiers,
                               SlemError *err);

/* Checks the rules between the options of opts, before any file is read: output's format
 * (opts->format, else from output's name: SLEM_EINVAL naming the extensions when it names
 * none); theta_set only with classifiers or basic; alpha_set not with classifiers; the rule
 * of --dtype above; projections only to a format that carries them (the container) and
 * not as classifiers; coordinates with none of classifiers, projections, couple; groups
 * (has_groups: the caller gives them) not with a shard; ids (has_ids) only to a format that
 * carries them. What a cache's encoder takes is its own rule (encoder.h). Errors:
 * SLEM_EINVAL with slem-encode's message for the first rule broken. */
int slem_encstream_check(const SlemEncStreamOpts *opts, const char *output, int has_ids,
                         int has_groups, SlemError *err);

/* Encodes every vector of r (borrowed, at its start) against cache (borrowed) into output
 * ("-": stdout); with a shard, only that shard's rows, in order. Errors: SLEM_EFORMAT (a
 * dimension other than the cache's, naming both; a read error naming file and record),
 * SLEM_EINVAL (those of slem_encstream_check(), before anything is read; coupled
 * classifiers, or groups, with a kernel cache; projections without one; a shard of an input whose number of
 * vectors is not known before reading it: text, or a pipe of fvecs),
 * SLEM_EIO, SLEM_ENOMEM. No output file is left behind on failure. */
int slem_encstream_run(const SlemCache *cache, SlemVecReader *r, const char *output,
                       const SlemEncStreamOpts *opts, SlemEncStreamResult *res, SlemError *err);

/* slem-encode as one library call: the files of SlemEncStreamFiles opened and checked
 * against each other, then slem_encstream_run(). cmd/slem-encode.c parses its options into
 * it and reports; a test can drive a whole encoding the same way, without a process. */
typedef struct SlemEncStreamFiles {
  const char *cache;        /* the cache's path (slem-negstats) */
  const char *input;        /* the vectors ("-": stdin); an input with no vectors is an
                               empty segment, not an error */
  SlemFormat input_format;  /* SLEM_FMT_AUTO: from the extension, else the content */
  const char *ids;          /* NULL, or an ids file kept in the container (may be empty
                               with an empty input) */
  const char *groups;       /* NULL, or the group of every input row, one a line */
  /* may be NULL: a warning for the user (the library prints nothing; msg is borrowed for
   * the call): a cache made on another BLAS core than this run's */
  void (*warn)(void *ctx, const char *msg);
  void *warn_ctx;
  /* may be NULL: the vectors encoded so far, and how many there are (0: unknown) */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
} SlemEncStreamFiles;

/* Encodes files->input against files->cache into output with opts (their ids and groups,
 * and progress, are set from files; opts' own are ignored): slem_encstream_check(); the
 * ids, the cache, the input, the groups read; the cache's encoder chosen
 * (slem_encoder_choose(): a refusal is the options'); slem_encstream_run(). *usage (may be
 * NULL) is set to 1 when an error is in the options themselves (a usage error for a tool),
 * else 0. Errors: those of the steps, with a message naming file and record; nothing is
 * written on error. */
int slem_encstream_run_files(const SlemEncStreamFiles *files, const char *output,
                             const SlemEncStreamOpts *opts, SlemEncStreamResult *res, int *usage,
                             SlemError *err);

#endif

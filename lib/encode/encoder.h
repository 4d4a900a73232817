/* Encoders behind one interface: what turns a block of input vectors into a block of output
 * rows against a cache (SLEM descriptors, classifiers, whitening, PCA-reduced, recursive,
 * explicit kernel descriptors or kernel projections).
 *
 * Each encoder belongs to a SLEM variant (variant.h): its ops are in the variant's file
 * lib/encode/var_NAME.c, named by its SlemVariant, which one line X(NAME) lists in
 * SLEM_VARIANTS (variants.c). slem_encoder_choose() (encoder.c) asks the variants' encoders
 * in the table's order whether they take the cache and the options; the first that takes
 * them, or refuses the combination with a message, decides. Their accepts() look at
 * disjoint kinds and options, so the order decides nothing, with one exception: basic
 * (--basic) is an option of any cache, which only var_basic.c looks at, so it comes first.
 * The stream (encstream.c) then drives the ops alone: no code outside an encoder's file
 * tests the cache's kind to encode.
 *
 * Threads: an encoder's state (new()) holds its scratch; the cache is only read. One state
 * per worker makes run() safe to call from several threads at once, each on its own state.
 */
#ifndef SLEM_ENCODER_H
#define SLEM_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "encstream.h"
#include "error.h"
#include "vecs.h"

/* What accepts() answers. */
enum {
  SLEM_ENC_NOT_MINE = 0,  /* another encoder's cache or options */
  SLEM_ENC_MINE = 1,      /* this encoder handles them */
  SLEM_ENC_REFUSED = -1   /* its cache, but options it cannot honour: err says which */
};

typedef struct SlemEncoderOps {
  const char *name;
  /* Whether this encoder handles cache with opts (both borrowed): SLEM_ENC_MINE,
   * cache is NULL when opts carry ESVM negatives (opts->esvm), which only the esvm encoder
   * takes (the encoders of a cache answer SLEM_ENC_NOT_MINE to NULL);
   * SLEM_ENC_NOT_MINE, or SLEM_ENC_REFUSED with err filled (SLEM_EINVAL, a message naming
   * the cache's file and the option): a refusal is a usage error of the caller. Reads
   * nothing but the cache's header fields. */
  int (*accepts)(const SlemCache *cache, const SlemEncStreamOpts *opts, SlemError *err);
  /* A new state in *self for blocks of at most max_rows rows over cache (borrowed; it must
   * outlive the state); opts is read during the call only. Errors: those of the encoder's
   * module (SLEM_EINVAL, SLEM_ENUMERIC, SLEM_ENOMEM), a data or system error of the run. */
  int (*new_)(void **self, const SlemCache *cache, const SlemEncStreamOpts *opts,
              size_t max_rows, SlemError *err);
  /* Values per output row; *f64 set to 1 when rows are double (written with
   * slem_vecwriter_write_f64()), else 0 (float32). Cannot fail. */
  size_t (*out_dim)(const void *self, int *f64);
  /* Encodes b <= max_rows rows x(b, d) (d the cache's) into y(b, out_dim), float or double
   * as out_dim() says. name and first_record (1-based) name the rows in messages.
   * Errors: SLEM_EFORMAT or SLEM_ENUMERIC for a row the encoder cannot take (naming file
   * and record); the linear family cannot fail. */
  int (*run)(void *self, void *y, const double *x, size_t b, const char *name,
             uint64_t first_record, SlemError *err);
  /* Adds what the state counted (zeros, clamps) to res. May be NULL. */
  void (*counts)(const void *self, SlemEncStreamResult *res);
  /* Fills the fields of a container's metadata that belong to the encoder (kernel
   * projections: their layout). May be NULL. */
  void (*describe)(const void *self, SlemDescMeta *m);
  /* Frees a state from new_(); accepts NULL. */
  void (*free)(void *self);
  /* Optional (NULL: never): whether this state encodes rows given as float32 (run_f32),
   * and run_f32, which must give run()'s rows bit for bit when x holds float32 values
   * that the double rows would hold exactly; x is scratch (it may be overwritten). The
   * stream then reads inputs whose values float32 holds exactly
   * (slem_vecreader_f32_exact()) as float32, without widening them. */
  int (*takes_f32)(const void *self);
  int (*run_f32)(void *self, void *y, float *x, size_t b, const char *name,
                 uint64_t first_record, SlemError *err);
  /* 1 when run() and run_f32() do their work through slem_blas_par_units() or
   * slem_blas_par_chunks() alone (no thread of their own, no multi-threaded BLAS call):
   * the stream may then run two states on two blocks at once over one pool of threads
   * (encstream.c). 0 (the default): one block at a time. */
  int overlap;
  /* Optional (NULL: the encoder counts no zeros): the rows [lo, hi) of the blocks that run()
   * and run_f32() encode from now on whose zero descriptors counts() counts; every row until
   * it is called. A shard's first and last blocks are encoded whole, each row at its place
   * in the GEMM calls of the whole run, and their rows outside the shard (zeros where the
   * input seeks) are not the shard's: they count nothing, not even against a mean of exactly
   * zero. Called between blocks only. Cannot fail. */
  void (*count_rows)(void *self, size_t lo, size_t hi);
} SlemEncoderOps;

/* The encoder of the table that takes cache with opts, in *ops (static, never freed).
 * Errors: SLEM_EINVAL with the refusing encoder's message, or "no encoder" for a cache
 * that no encoder takes. */
int slem_encoder_choose(const SlemEncoderOps **ops, const SlemCache *cache,
                        const SlemEncStreamOpts *opts, SlemError *err);

/* For the encoders of the linear family (encopts.c): SLEM_ENC_REFUSED with the message when
 * opts ask for what only a kernel cache gives (--couple, --projections, --coordinates,
 * --groups' refusal is the kernel's own), else SLEM_ENC_MINE. */
int slem_encoder_refuse_kernel_options(const SlemCache *cache, const SlemEncStreamOpts *opts,
                                       SlemError *err);

#endif

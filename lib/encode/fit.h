/* How each SLEM variant fits its statistics from the negatives (slem-negstats): one ops
 * struct per fit, named by the variant (variant.h) in its table. slem_negstats_run()
 * (negstats.h) asks the variants' fits in the table's order for the first that takes the
 * options, and runs it: either the shared stream of the linear family (the negatives, and partial caches
 * merged exactly, through the statistics tree of stats.h) followed by the fit's finish(),
 * or a fit of its own that reads its inputs itself (recursive stages, kernels).
 */
#ifndef SLEM_FIT_H
#define SLEM_FIT_H

#include <stddef.h>

#include "cache.h"
#include "error.h"
#include "var_partial.h"
#include "negstats.h"

struct SlemStats;

/* What the shared stream hands to finish(). */
typedef struct SlemFitStream {
  const char *output;
  struct SlemStats *stats;        /* the negatives' statistics, flushed, not finished */
  const SlemPartialInfo *grid;    /* the leaves they cover (for a partial cache) */
  const SlemProvenance *prov;     /* what the cache records of its making */
  /* reads path alone into new statistics *st (flushed), with the run's options, counting
   * nothing in the run's result (the mixed positives' mean); the caller frees *st */
  int (*read)(void *ctx, const char *path, struct SlemStats **st, SlemError *err);
  void *read_ctx;
} SlemFitStream;

typedef struct SlemFitOps {
  const char *name;
  /* 1 when o asks for this fit. The table is asked in order: the first that takes o fits. */
  int (*takes)(const SlemNegstatsOpts *o);
  /* The linear family: writes the cache from the stream's statistics (NULL for a fit of
   * its own), adding its seconds to res->phases. Errors: those of its computation and
   * writer. */
  int (*finish)(const SlemFitStream *s, const SlemNegstatsOpts *o, SlemNegstatsResult *res,
                SlemError *err);
  /* May be NULL: a vector file that the stream appends to the negatives (the mixed
   * positives, recorded as an input too), and what to call it in the refusal of partial
   * caches beside it ("the mixed covariance takes vector files, not partial caches"). */
  const char *(*appends)(const SlemNegstatsOpts *o);
  const char *appends_what;
  /* A fit of its own (NULL for the linear family): summarises inputs[0..n) into the cache
   * output, filling res. Errors: those of slem_negstats_run(). */
  int (*fit)(const char *output, const char *const *inputs, size_t n, const SlemNegstatsOpts *o,
             SlemNegstatsResult *res, SlemError *err);
  /* May be NULL: the fit's own rules on o (which other options it refuses), checked before
   * any input is read. Errors: SLEM_EINVAL with the message. */
  int (*check)(const SlemNegstatsOpts *o, SlemError *err);
} SlemFitOps;

/* The first fit of the variants' table that takes o (the last, linear's, takes any).
 * Cannot fail. */
const SlemFitOps *slem_fits_choose(const SlemNegstatsOpts *o);

#endif

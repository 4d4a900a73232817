/* The SLEM variants: linear, whitening, PCA, partial statistics, mixed covariance,
 * recursive, [nu; beta] stages, basic, exemplar SVMs, kernel, kernel recursive and
 * diagonal SLEM.
 * Each is one file, lib/encode/var_NAME.c, which declares `const SlemVariant
 * slem_variant_NAME`, and one line X(NAME) in SLEM_VARIANTS (variants.c); it names
 * what it brings of the three families: the cache kind it reads and writes
 * (cachekinds.h), how slem-negstats fits it (fit.h), and how slem-encode encodes with it
 * (encoder.h). slem_cache_read(), slem_negstats_run() and slem_encstream_run() (and so
 * slem-negstats, slem-encode and slem-match -c) find their member through this table only.
 *
 * What several variants share stays in the module of its computation (stats.h,
 * slem_linear.c, whiten.c, recursive.c and kind_recursive.c, kernel_stats.c, kproj.c,
 * esvm.c; docs/layout.md, "The SLEM variants", lists which).
 *
 * To add a variant: write lib/encode/var_NAME.c with its kind, fit and encoder ops and
 * its SlemVariant, and add X(NAME) to SLEM_VARIANTS in the place its options ask for (the
 * table is asked in order, for fits and encoders alike).
 */
#ifndef SLEM_VARIANT_H
#define SLEM_VARIANT_H

#include <stddef.h>

#include "cachekinds.h"
#include "encoder.h"
#include "fit.h"

typedef struct SlemVariant {
  const char *name;                /* unique, as the docs name it */
  const char *summary;             /* one line: what it is, and the option that asks for it */
  const SlemCacheKindOps *kind;    /* the kind of cache it reads and writes, or NULL */
  const SlemFitOps *fit;           /* its fit (slem-negstats), or NULL: another's fit makes
                                      its cache */
  const SlemEncoderOps *encoder;   /* its encoder (slem-encode), or NULL */
  /* May be NULL: the slem-negstats flag of its own that asks for it (--NAME, without
   * dashes), which sets SlemNegstatsOpts.variant to the variant's name, and its help text
   * (lines of at most 52 characters, "\n" between them), which slem-negstats --help lists
   * from the table. */
  const char *option;
  const char *option_help;
} SlemVariant;

/* The variant whose own option is name (SlemVariant.option), or NULL. */
const SlemVariant *slem_variants_by_option(const char *name);

/* The number of variants, and the i-th (i < that number), in the table's order. Cannot
 * fail. */
size_t slem_variants_count(void);
const SlemVariant *slem_variants_get(size_t i);

#endif

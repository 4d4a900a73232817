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
 * To add a variant: write lib/encode/var_NAME.c with its kind, fit and encoder ops, its
 * options (arrays of SlemOptSpec: one spec each, from which the tools' parsing, checks and
 * --help come) and its SlemVariant, and add X(NAME) to SLEM_VARIANTS in the place its
 * options ask for (the table is asked in order, for fits and encoders alike, and lists
 * the options in that order in --help).
 */
#ifndef SLEM_VARIANT_H
#define SLEM_VARIANT_H

#include <stddef.h>

#include "cachekinds.h"
#include "encoder.h"
#include "fit.h"
#include "optspec.h"

typedef struct SlemVariant {
  const char *name;                /* unique, as the docs name it */
  const char *summary;             /* one line: what it is, and the option that asks for it */
  const SlemCacheKindOps *kind;    /* the kind of cache it reads and writes, or NULL */
  const SlemFitOps *fit;           /* its fit (slem-negstats), or NULL: another's fit makes
                                      its cache */
  const SlemEncoderOps *encoder;   /* its encoder (slem-encode), or NULL */
  /* Its own options (optspec.h; NULL-name terminated arrays, or NULL: none): those of its
   * fit, into SlemNegstatsOpts (slem-negstats, slem_negstats_opts_set()), and those of its
   * encoder, into SlemEncStreamOpts (slem-encode, slem_encstream_opts_set()). The tools'
   * getopt tables, parsing, range checks and --help lines come from them, in the table's
   * order, after the options every fit or encoding shares; a name is used once across all
   * of one tool's. A variant asked for by a flag of its own (--diagonal) gives that flag
   * the parser slem_negstats_opt_variant(), which sets SlemNegstatsOpts.variant to the
   * option's name. Help lines are at most 54 (fit) or 52 (encode) characters, so that
   * --help stays within 79 columns (tests/check_optspec.c). */
  const SlemOptSpec *fit_options;
  const SlemOptSpec *encode_options;
} SlemVariant;

/* The variant whose fit_options declare the option name (without dashes), or NULL. */
const SlemVariant *slem_variants_by_option(const char *name);

/* The number of variants, and the i-th (i < that number), in the table's order. Cannot
 * fail. */
size_t slem_variants_count(void);
const SlemVariant *slem_variants_get(size_t i);

/* The i-th option of a tool's --help order, NULL past the last: those of common (an array
 * ended by a spec whose name is NULL; may be NULL), then each variant's fit_options (fit
 * 1: slem-negstats) or encode_options (fit 0: slem-encode), in the table's order. And the
 * one of that list named name (without dashes), or NULL. Cannot fail. */
const SlemOptSpec *slem_variants_option(const SlemOptSpec *common, int fit, size_t i);
const SlemOptSpec *slem_variants_option_named(const SlemOptSpec *common, int fit,
                                              const char *name);

#endif

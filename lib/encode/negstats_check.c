/* The rules between slem-negstats' options, checked once (negstats.h): slem-negstats calls
 * slem_negstats_check() on the options it parsed and reports a refusal as a usage error;
 * slem_negstats_run() calls it again, so that a caller of the library gets the same
 * refusal before any work. */
#include "negstats.h"

#include <string.h>

#include "fit.h"
#include "var_krec.h"
#include "variant.h"

static int is_stdin(const char *path) { return path && strcmp(path, "-") == 0; }

/* The rules of the variants' fits (fit.h): those of the variant asked for by its own
 * option (variant.h), even when another fit takes the options, and those of the fit that
 * takes them. */
static int check_variant(const SlemNegstatsOpts *o, SlemError *err) {
  const SlemFitOps *fit = slem_fits_choose(o);
  const SlemVariant *asked = o->variant ? slem_variants_by_option(o->variant) : NULL;
  int st;
  if (o->variant && !asked)
    return slem_error(err, SLEM_EINVAL, "no variant is asked for by --%s", o->variant);
  if (asked && asked->fit && asked->fit->check && (st = asked->fit->check(o, err)) != SLEM_OK)
    return st;
  if (fit->check && fit != (asked ? asked->fit : NULL) && (st = fit->check(o, err)) != SLEM_OK)
    return st;
  return SLEM_OK;
}

/* Rules of depth > 1 (recursive SLEM, linear or kernel). */
static int check_depth(const SlemNegstatsOpts *o, const char *const *inputs, size_t n,
                       SlemError *err) {
  size_t depth = o->depth;
  if (o->partial || o->shard.count > 0)
    return slem_error(err, SLEM_EINVAL, "--depth %zu does not merge shards: stage 2 needs the "
                      "negatives encoded by the finished stage 1; give the negative files "
                      "themselves", depth);
  if (o->eigen || o->pca)
    return slem_error(err, SLEM_EINVAL, "--depth %zu is for linear or kernel SLEM: not with --%s",
                      depth, o->eigen ? "eigen" : "pca");
  if (o->kernel && o->adaptive)
    return slem_error(err, SLEM_EINVAL, "--adaptive-theta is for linear SLEM: not with --kernel");
  if (o->kernel && o->couple)
    return slem_error(err, SLEM_EINVAL, "--couple is for a kernel cache of depth 1: not with "
                      "--depth %zu (the coupling of a stage's inputs is not defined)", depth);
  if (o->kernel) return slem_krec_check(o->kernel, depth, err);
  if (o->lambda >= 0 && !o->adaptive)
    return slem_error(err, SLEM_EINVAL, "--depth %zu takes --lambda-rel (each stage relative to "
                      "its own trace), not an absolute --lambda", depth);
  for (size_t i = 0; i < n; i++)
    if (is_stdin(inputs[i]))
      return slem_error(err, SLEM_EINVAL, "--depth %zu reads the negatives once per stage: not "
                        "from stdin", depth);
  return SLEM_OK;
}

int slem_negstats_check(const SlemNegstatsOpts *o, const char *const *inputs, size_t n,
                        SlemError *err) {
  unsigned given = o->given;
  int lambda_rel = (given & SLEM_NEGSTATS_GIVEN_LAMBDA_REL) != 0;
  int factor = (given & SLEM_NEGSTATS_GIVEN_FACTOR) != 0;
  int rank = (given & SLEM_NEGSTATS_GIVEN_RANK) != 0, tol = (given & SLEM_NEGSTATS_GIVEN_TOL) != 0;
  if (n == 0)
    return slem_error(err, SLEM_EINVAL, "no negatives: give one or more vector files");
  if (o->lambda >= 0 && lambda_rel)
    return slem_error(err, SLEM_EINVAL, "give --lambda or --lambda-rel, not both");
  if (o->partial && (o->lambda >= 0 || lambda_rel))
    return slem_error(err, SLEM_EINVAL, "--partial stores sums only: lambda is chosen when the "
                      "partial caches are merged");
  if (o->partial && o->kernel)
    return slem_error(err, SLEM_EINVAL, "--partial does not go with --kernel");
  if (o->shard.count > 0 && !o->partial)
    return slem_error(err, SLEM_EINVAL, "--shard makes partial statistics: add --partial, then "
                      "merge the shards' caches with slem-negstats -o CACHE PART...");
  if (o->skip_nonfinite && o->kernel)
    return slem_error(err, SLEM_EINVAL, "--skip-nonfinite is for linear caches");
  if ((factor || o->couple || rank || tol) && !o->kernel)
    return slem_error(err, SLEM_EINVAL, "--%s is for kernel caches: add --kernel SPEC",
                      factor ? "factor" : o->couple ? "couple" : rank ? "rank" : "tol");
  if (factor && o->factor == SLEM_FACTOR_FULL && (rank || tol))
    return slem_error(err, SLEM_EINVAL, "--factor full goes to the numerical rank: no --%s",
                      rank ? "rank" : "tol");
  if ((o->eigen || o->pca) && (o->kernel || o->partial))
    return slem_error(err, SLEM_EINVAL, "--%s is for linear caches: not with --%s",
                      o->eigen ? "eigen" : "pca", o->kernel ? "kernel" : "partial");
  if (o->eigen && o->pca) return slem_error(err, SLEM_EINVAL, "give --eigen or --pca, not both");
  if (o->mixed && !o->eigen)
    return slem_error(err, SLEM_EINVAL, "--mixed makes an eigen cache for slem-encode --alpha: "
                      "add --eigen");
  if (o->mixed && (o->shard.count > 0 || o->depth > 1))
    return slem_error(err, SLEM_EINVAL, "--mixed needs the whole statistics: not with --%s",
                      o->depth > 1 ? "depth" : "shard");
  if (is_stdin(o->mixed))
    return slem_error(err, SLEM_EINVAL, "--mixed reads the positives twice: not from stdin");
  if (o->adaptive && o->depth < 2)
    return slem_error(err, SLEM_EINVAL, "--adaptive-theta adapts the negatives of the next stage: "
                      "give --depth K >= 2");
  if ((given & SLEM_NEGSTATS_GIVEN_POS_FORMAT) && !o->adaptive && !o->mixed)
    return slem_error(err, SLEM_EINVAL, "--positives-format goes with --mixed or --adaptive-theta");
  if ((given & SLEM_NEGSTATS_GIVEN_THETA) && !o->adaptive)
    return slem_error(err, SLEM_EINVAL, "--theta goes with --adaptive-theta (the [nu; beta] "
                      "stages)");
  if (is_stdin(o->adaptive))
    return slem_error(err, SLEM_EINVAL, "--adaptive-theta reads the positives once per stage: not "
                      "from stdin");
  if (o->depth > 1) {
    int st = check_depth(o, inputs, n, err);
    if (st != SLEM_OK) return st;
  }
  return check_variant(o, err);
}

/* The mixed covariance of the authors' SLEM_whitening.m (slem-negstats --eigen --mixed
 * POSITIVES): its fit and its line in the table of variants (variant.h). Its cache is a
 * linear one with its eigendecomposition (var_linear.h, "covariance": "mixed"), made by
 * slem_whiten_write_mixed_cache() (whiten.h) and encoded by the linear and whitening
 * variants' encoders; it has no kind or encoder of its own.
 */
#include "fit.h"
#include "phases.h"
#include "stats.h"
#include "variant.h"
#include "whiten.h"

/* --mixed: SLEM_whitening.m's covariance of the positives and the negatives together (the
 * positives appended to the stream), and mu the positives' mean (read again alone). */
static int takes_mixed(const SlemNegstatsOpts *o) { return o->mixed != NULL; }

static const char *mixed_positives(const SlemNegstatsOpts *o) { return o->mixed; }

static int finish_mixed(const SlemFitStream *s, const SlemNegstatsOpts *o,
                        SlemNegstatsResult *res, SlemError *err) {
  SlemStats *pos = NULL;
  double t0;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  if ((st = s->read(s->read_ctx, o->mixed, &pos, err)) == SLEM_OK &&
      (st = slem_stats_finish(pos, err)) == SLEM_OK) {
    if (slem_stats_count(pos) == 0) {
      st = slem_error(err, SLEM_EINVAL, "%s: no positives for the mixed covariance", o->mixed);
    } else {
      t0 = slem_now();
      st = slem_whiten_write_mixed_cache(s->output, s->stats, slem_stats_mean(pos), o->lambda,
                                         o->lambda_rel, s->prov, err);
      res->phases.factor += slem_now() - t0;
    }
  }
  slem_stats_free(pos);
  return st;
}

const SlemFitOps slem_fit_mixed = {"mixed", takes_mixed, finish_mixed, mixed_positives,
                                   "the mixed covariance", NULL, NULL};

#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec mixed_fit_options[] = {
    {.name = "mixed", .metavar = "POSITIVES", .type = SLEM_OPT_TEXT, O(mixed),
     .help = "with --eigen: the authors' SLEM_whitening.m mixed\n"
             "covariance, of POSITIVES and the negatives together\n"
             "(divided by N - 1), and mu the positives' mean"},
    {0}};
#undef O

const SlemVariant slem_variant_mixed = {
    "mixed",
    "SLEM_whitening.m's mixed covariance of positives and negatives (slem-negstats --eigen "
    "--mixed POSITIVES)",
    NULL, &slem_fit_mixed, NULL, mixed_fit_options, NULL};

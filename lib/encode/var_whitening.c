/* The whitening variant (slem-negstats --eigen, slem-encode --alpha A): its fit, which
 * makes the PCA-reduced variant's caches too (--pca R), its encoder, whose ops the
 * PCA-reduced one shares (var_whitening.h), and its line in the table of variants
 * (variant.h); the eigendecompositions and the whitener are whiten.c's.
 *
 * The encoder: the whitening family (whiten.h) from a linear cache holding its
 * eigendecomposition: slem-encode --alpha A. */
#include "var_whitening.h"
#include "whiten.h"
#include "var_pca.h"
#include "var_partial.h"
#include "var_linear.h"
#include "fit.h"
#include "phases.h"
#include "stats.h"
#include "variant.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if ((!slem_cache_linear(cache) && !slem_cache_partial(cache)) || !o->alpha_set)
    return SLEM_ENC_NOT_MINE;
  if (slem_cache_linear(cache) && !slem_cache_eigen(cache)) {
    slem_error(err, SLEM_EINVAL, "--alpha needs the eigendecomposition: %s holds none; make "
               "it with slem-negstats --eigen", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "%s: --classifier needs a full linear cache and no --alpha",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

int slem_enc_whiten_new(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                        size_t max_rows, SlemError *err) {
  return slem_whiten_new((SlemWhitener **)self, cache, o->alpha, max_rows, err);
}

size_t slem_enc_whiten_out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_whiten_out_dim(self);
}

int slem_enc_whiten_run(void *self, void *y, const double *x, size_t b, const char *name,
                        uint64_t first_record, SlemError *err) {
  slem_whiten_run(self, y, x, b);
  return SLEM_OK;
}

void slem_enc_whiten_counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_whiten_zeros(self);
}

void slem_enc_whiten_count_rows(void *self, size_t lo, size_t hi) {
  slem_whiten_count_rows(self, lo, hi);
}

void slem_enc_whiten_free(void *self) { slem_whiten_free(self); }

const SlemEncoderOps slem_enc_whiten = {"whiten", accepts, slem_enc_whiten_new,
                                        slem_enc_whiten_out_dim, slem_enc_whiten_run,
                                        slem_enc_whiten_counts, NULL, slem_enc_whiten_free,
    NULL, NULL, 1, slem_enc_whiten_count_rows};

/* --eigen and --pca: the eigendecomposition of the stream's Sigma (a linear cache that
 * keeps it, or a pca cache of its top pairs). */
static int takes_whiten(const SlemNegstatsOpts *o) { return o->eigen || o->pca; }

static int finish_whiten(const SlemFitStream *s, const SlemNegstatsOpts *o,
                         SlemNegstatsResult *res, SlemError *err) {
  double t0;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  t0 = slem_now();
  st = slem_whiten_write_cache(s->output, s->stats, o->lambda,
                               o->lambda >= 0 ? -1 : o->lambda_rel, o->pca, s->prov, err);
  res->phases.factor += slem_now() - t0;
  return st;
}

const SlemFitOps slem_fit_whiten = {"whiten", takes_whiten, finish_whiten, NULL, NULL, NULL, NULL};

extern const SlemEncoderOps slem_enc_whiten;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec whitening_fit_options[] = {
    {.name = "eigen", .type = SLEM_OPT_FLAG, O(eigen),
     .help = "also store the eigendecomposition of Sigma, for\n"
             "slem-encode --alpha"},
    {0}};
#undef O

/* --alpha A: any finite power; alpha_set says it was given. */
static int set_alpha(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemEncStreamOpts *o = opts;
  double a;
  int st = slem_optspec_real(s, value, &a, err);
  if (st == SLEM_OK) o->alpha = a, o->alpha_set = 1;
  return st;
}

#define O(f) SLEM_OPT_FIELD(SlemEncStreamOpts, f)
static const SlemOptSpec whitening_encode_options[] = {
    {.name = "alpha", .metavar = "A", .type = SLEM_OPT_CUSTOM, O(alpha), .parse = set_alpha,
     .help = "the whitening family: (Sigma + lambda I)^A (x - mu),\n"
             "normalised, from a cache made with slem-negstats\n"
             "--eigen (-1: SLEM, -0.5: PCA whitening, 0:\n"
             "centring); with a PCA cache (--pca R) the power of\n"
             "Lambda_R + lambda I (default -1)"},
    {0}};
#undef O

const SlemVariant slem_variant_whitening = {
    "whitening",
    "the eigendecomposition of Sigma and (Sigma + lambda I)^alpha (slem-negstats --eigen, "
    "slem-encode --alpha)",
    NULL, &slem_fit_whiten, &slem_enc_whiten, whitening_fit_options,
    whitening_encode_options};

/* Linear SLEM, the variant slem-negstats makes by default: its kind of cache "linear"
 * (var_linear.h), its fit, its encoder and its line in the table of variants (variant.h).
 */
#include "var_linear.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"
#include "encoder.h"
#include "fit.h"
#include "var_partial.h"
#include "mem.h"
#include "phases.h"
#include "slem_linear.h"
#include "stats.h"
#include "variant.h"

const SlemCacheLinear *slem_cache_linear(const SlemCache *self) {
  return self->kind_data && strcmp(self->kind, "linear") == 0 ? self->kind_data : NULL;
}

/* lambda, rcond when recorded, ainv, and the eigenpairs when stored. */
static int read_linear(SlemCache *c, const double *mu, SlemError *err) {
  const cJSON *json = slem_cache_header(c);
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  const cJSON *rc = cJSON_GetObjectItemCaseSensitive(json, "rcond");
  const cJSON *cov = cJSON_GetObjectItemCaseSensitive(json, "covariance");
  SlemCacheLinear *lin;
  size_t d = c->d;
  int status;
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda",
                      slem_cache_path(c));
  /* "mixed" (slem-negstats --mixed) or absent: another is a covariance this slem cannot use */
  if (cov && !(cJSON_IsString(cov) && strcmp(cov->valuestring, "mixed") == 0))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's covariance is not 'mixed', the "
                      "one this slem knows", slem_cache_path(c));
  if (!(lin = calloc(1, sizeof *lin))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  lin->lambda = lin->eigen.lambda = lam->valuedouble;
  lin->mixed = cov != NULL;
  lin->mu = lin->eigen.mu = mu;
  if (cJSON_IsNumber(rc) && rc->valuedouble > 0 && rc->valuedouble <= 1) lin->rcond = rc->valuedouble;
  status = slem_cache_section(c, "ainv", d, d, &lin->ainv, err);
  if (!status && slem_cache_has_section(c, "evecs")) {
    lin->eigen.neig = d;
    if ((status = slem_cache_section(c, "evals", d, 0, &lin->eigen.evals, err)) == 0)
      status = slem_cache_section(c, "evecs", d, d, &lin->eigen.evecs, err);
  }
  if (status) {
    free(lin);
    return status;
  }
  slem_cache_set_kind(c, lin, lin, free);
  return SLEM_OK;
}

const SlemCacheKindOps slem_kind_linear = {"linear", 1, read_linear};

/* The members of both writers, in the order of the JSON header; NULL when out of memory. */
static cJSON *members(double lambda, double lambda_rel, double trace_sigma, double rcond) {
  cJSON *m = cJSON_CreateObject();
  if (!m) return NULL;
  cJSON_AddNumberToObject(m, "lambda", lambda);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(m, "lambda_rel", lambda_rel);
  cJSON_AddNumberToObject(m, "trace_sigma", trace_sigma);
  if (rcond > 0) cJSON_AddNumberToObject(m, "rcond", rcond);
  return m;
}

int slem_cache_write_linear(const char *path, size_t d, uint64_t n, const SlemLinearInfo *info,
                            const double *mu, const double *ainv, const SlemProvenance *prov,
                            SlemError *err) {
  cJSON *m = members(info->lambda, info->lambda_rel, info->trace_sigma, info->rcond);
  SlemCacheSection sec[2] = {{"mu", mu, d, 0}, {"ainv", ainv, d, d}};
  int status;
  if (!m) return slem_error(err, SLEM_ENOMEM, "out of memory");
  status = slem_cache_write(path, "linear", d, n, m, sec, 2, prov, err);
  cJSON_Delete(m);
  return status;
}

int slem_cache_write_eigen(const char *path, size_t d, uint64_t n, double lambda,
                           double lambda_rel, double trace_sigma, double rcond, int mixed,
                           const double *mu, const double *ainv, const double *evals,
                           const double *evecs, const SlemProvenance *prov, SlemError *err) {
  cJSON *m = members(lambda, lambda_rel, trace_sigma, rcond);
  SlemCacheSection sec[4] = {{"mu", mu, d, 0}, {"ainv", ainv, d, d}, {"evals", evals, d, 0},
                             {"evecs", evecs, d, d}};
  int status;
  if (!m) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (mixed) cJSON_AddStringToObject(m, "covariance", "mixed");
  status = slem_cache_write(path, "linear", d, n, m, sec, 4, prov, err);
  cJSON_Delete(m);
  return status;
}

/* The linear SLEM encoder (slem_linear.h): unit descriptors or classifiers from a linear cache
 * without --alpha. A partial cache comes here too, and slem_encoder_new() refuses it. */

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if ((!slem_cache_linear(cache) && !slem_cache_partial(cache)) || o->alpha_set)
    return SLEM_ENC_NOT_MINE;
  /* the classifier's omega and nu solve the loss of the negatives' own mu and Sigma */
  if (o->mode == SLEM_ENCODE_CLASSIFIER && slem_cache_linear(cache) &&
      slem_cache_linear(cache)->mixed) {
    slem_error(err, SLEM_EINVAL, "--classifier needs the negatives' own statistics: %s holds "
               "the mixed covariance of positives and negatives (slem-negstats --mixed)",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  SlemEncoder *e = NULL;
  int st;
  *self = NULL;
  if ((st = slem_encoder_new(&e, cache, o->mode, o->theta, max_rows, err)) != SLEM_OK ||
      (st = slem_encoder_set_precision(e, o->precision, NULL, err)) != SLEM_OK) {
    slem_encoder_free(e);
    return st;
  }
  *self = e;
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_encoder_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  slem_encoder_run(self, y, x, b);
  return SLEM_OK;
}

static int takes_f32(const void *self) { return slem_encoder_takes_f32(self); }

static int run_f32(void *self, void *y, float *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err) {
  slem_encoder_run_f32(self, y, x, b);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_encoder_zeros(self);
}

static void count_rows(void *self, size_t lo, size_t hi) {
  slem_encoder_count_rows(self, lo, hi);
}

static void free_(void *self) { slem_encoder_free(self); }

const SlemEncoderOps slem_enc_linear = {"linear", accepts, new_, out_dim, run, counts, NULL,
                                        free_, takes_f32, run_f32, 1, count_rows};

/* The plain linear fit: A^-1 = (Sigma + lambda I)^-1 of the stream's statistics. */
static int takes_linear(const SlemNegstatsOpts *o) {
  (void)o;
  return 1;
}

static int finish_linear(const SlemFitStream *s, const SlemNegstatsOpts *o,
                         SlemNegstatsResult *res, SlemError *err) {
  double *ainv = NULL, used, t0;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  if (!(ainv = slem_mem_alloc_large(res->d * res->d * sizeof *ainv)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", res->d, res->d);
  t0 = slem_now();
  st = slem_stats_inverse(s->stats, ainv, &used, o->lambda, o->lambda_rel, err);
  res->phases.factor += slem_now() - t0;
  t0 = slem_now();
  if (st == SLEM_OK) {
    SlemLinearInfo info = {used, o->lambda >= 0 ? -1 : o->lambda_rel,
                           slem_stats_trace(s->stats), slem_stats_rcond(s->stats)};
    st = slem_cache_write_linear(s->output, res->d, res->n, &info, slem_stats_mean(s->stats),
                                 ainv, s->prov, err);
  }
  res->phases.write += slem_now() - t0;
  free(ainv);
  return st;
}

const SlemFitOps slem_fit_linear = {"linear", takes_linear, finish_linear, NULL, NULL, NULL, NULL};

extern const SlemEncoderOps slem_enc_linear;
const SlemVariant slem_variant_linear = {
    "linear",
    "SLEM descriptors and classifiers, A^-1 = (Sigma + lambda I)^-1 (slem-negstats)",
    &slem_kind_linear, &slem_fit_linear, &slem_enc_linear, NULL, NULL};

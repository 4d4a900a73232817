#include "kind_pca.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"
#include "kind_linear.h"
#include "variant.h"

const SlemCacheEigen *slem_cache_pca(const SlemCache *self) {
  return self->kind_data && strcmp(self->kind, "pca") == 0 ? self->kind_data : NULL;
}

const SlemCacheEigen *slem_cache_eigen(const SlemCache *self) {
  const SlemCacheLinear *lin = slem_cache_linear(self);
  if (lin) return lin->eigen.evecs ? &lin->eigen : NULL;
  return slem_cache_pca(self);
}

/* lambda, the rank R and three sections (mu found already). */
static int read_pca(SlemCache *c, const double *mu, SlemError *err) {
  const char *path = slem_cache_path(c);
  const cJSON *json = slem_cache_header(c);
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  SlemCacheEigen *e;
  uint64_t r;
  int st;
  if (slem_cache_member_uint(json, "r", c->d, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..d)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda", path);
  if (!(e = calloc(1, sizeof *e))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  slem_cache_set_rank(c, r);
  e->neig = r;
  e->lambda = lam->valuedouble;
  e->mu = mu;
  if ((st = slem_cache_section(c, "evals", r, 0, &e->evals, err)) ||
      (st = slem_cache_section(c, "evecs", r, c->d, &e->evecs, err))) {
    free(e);
    return st;
  }
  slem_cache_set_kind(c, e, e, free);
  return SLEM_OK;
}

const SlemCacheKindOps slem_kind_pca = {"pca", 1, read_pca};

int slem_cache_write_pca(const char *path, size_t d, uint64_t n, size_t rank, double lambda,
                         double lambda_rel, double trace_sigma, const double *mu,
                         const double *evals, const double *evecs, const SlemProvenance *prov,
                         SlemError *err) {
  cJSON *m = cJSON_CreateObject();
  SlemCacheSection sec[3] = {{"mu", mu, d, 0}, {"evals", evals, rank, 0},
                             {"evecs", evecs, rank, d}};
  double kept = 0;
  int status;
  if (!m) return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (size_t k = 0; k < rank; k++) kept += evals[k];
  cJSON_AddNumberToObject(m, "r", (double)rank);
  cJSON_AddNumberToObject(m, "lambda", lambda);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(m, "lambda_rel", lambda_rel);
  cJSON_AddNumberToObject(m, "trace_sigma", trace_sigma);
  cJSON_AddNumberToObject(m, "variance_kept", trace_sigma > 0 ? kept / trace_sigma : 1.0);
  status = slem_cache_write(path, "pca", d, n, m, sec, 3, prov, err);
  cJSON_Delete(m);
  return status;
}

extern const SlemEncoderOps slem_enc_pca;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec pca_fit_options[] = {
    {.name = "pca", .metavar = "R", .type = SLEM_OPT_WHOLE, O(pca), .min = 1, .max = 1L << 20,
     .help = "a PCA-reduced cache: the top R eigenpairs of Sigma\n"
             "only; descriptors (Lambda_R + lambda I)^-1 U^T (x -\n"
             "mu) of R values (--info shows the fraction of the\n"
             "variance kept)"},
    {0}};
#undef O

const SlemVariant slem_variant_pca = {
    "pca",
    "PCA-reduced SLEM of the top R eigenpairs (slem-negstats --pca R; fitted by whitening's "
    "fit)",
    &slem_kind_pca, NULL, &slem_enc_pca, pca_fit_options, NULL};

/* Diagonal SLEM (slem-negstats --diagonal): the exemplar model of a Gaussian of diagonal
 * covariance, A = diag(Sigma) + lambda I, whose descriptor of x is A^-1 (x - mu)
 * normalised, (x_k - mu_k) / (s_k + lambda) in each coordinate, s_k the variance of
 * coordinate k over the negatives (divided by n, as slem's Sigma). It costs d values of
 * cache and O(d) a row, where full SLEM costs d^2 and a GEMM; it keeps no correlation.
 *
 * The whole variant is this file and its line in variants.c: the cache kind "diagonal"
 * (sections mu(d) and ainv_diag(d) = 1 / (s_k + lambda); lambda, lambda_rel when given and
 * trace_sigma in the JSON header), the fit (the linear family's stream, then the diagonal),
 * the encoder and the option that asks for it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "dot.h"
#include "phases.h"
#include "stats.h"
#include "variant.h"

/* ---- the cache kind ---- */

typedef struct Diagonal {
  double lambda;
  const double *mu, *ainv_diag;
} Diagonal;

static const Diagonal *diagonal_of(const SlemCache *c) {
  return c && c->kind_data && strcmp(c->kind, "diagonal") == 0 ? c->kind_data : NULL;
}

static int read_diagonal(SlemCache *c, const double *mu, SlemError *err) {
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(slem_cache_header(c), "lambda");
  Diagonal *g;
  int st;
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda",
                      slem_cache_path(c));
  if (!(g = calloc(1, sizeof *g))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  g->lambda = lam->valuedouble;
  g->mu = mu;
  if ((st = slem_cache_section(c, "ainv_diag", c->d, 0, &g->ainv_diag, err)) != SLEM_OK) {
    free(g);
    return st;
  }
  for (size_t k = 0; k < c->d; k++)
    if (!(g->ainv_diag[k] > 0)) {
      double v = g->ainv_diag[k];
      free(g);
      return slem_error(err, SLEM_EFORMAT, "%s: section 'ainv_diag' holds %g at %zu: not the "
                        "inverse of a variance plus lambda", slem_cache_path(c), v, k + 1);
    }
  slem_cache_set_kind(c, g, g, free);
  return SLEM_OK;
}

static const SlemCacheKindOps kind = {"diagonal", 1, read_diagonal};

/* ---- the fit ---- */

static int takes(const SlemNegstatsOpts *o) {
  return o->variant && strcmp(o->variant, "diagonal") == 0;
}

/* Its options go with no other variant's, nor with partial statistics or shards. */
static int check(const SlemNegstatsOpts *o, SlemError *err) {
  if (o->kernel || o->partial || o->eigen || o->pca || o->mixed || o->depth > 1 ||
      o->adaptive || o->shard.count > 0)
    return slem_error(err, SLEM_EINVAL, "--diagonal makes a cache of its own: not with "
                      "--kernel, --partial, --eigen, --pca, --mixed, --depth, "
                      "--adaptive-theta or --shard");
  return SLEM_OK;
}

static int finish(const SlemFitStream *s, const SlemNegstatsOpts *o, SlemNegstatsResult *res,
                  SlemError *err) {
  size_t d = res->d;
  double *ainv = NULL, lambda, trace, t0 = slem_now();
  const double *scatter;
  cJSON *m = NULL;
  int st;
  if ((st = slem_stats_finish(s->stats, err)) != SLEM_OK) return st;
  scatter = slem_stats_scatter(s->stats);
  trace = slem_stats_trace(s->stats);
  lambda = o->lambda >= 0 ? o->lambda : o->lambda_rel * trace / (double)d;
  if (!(ainv = malloc(d * sizeof *ainv)) || !(m = cJSON_CreateObject())) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < d; k++) {
    double a = scatter[k * d + k] / (double)res->n + lambda;
    if (!(a > 0)) {
      st = slem_error(err, SLEM_ENUMERIC, "coordinate %zu of the negatives has variance 0 and "
                      "lambda is 0: diag(Sigma) + lambda I is singular; give --lambda > 0",
                      k + 1);
      goto done;
    }
    ainv[k] = 1 / a;
  }
  res->phases.factor += slem_now() - t0;
  t0 = slem_now();
  cJSON_AddNumberToObject(m, "lambda", lambda);
  if (o->lambda < 0) cJSON_AddNumberToObject(m, "lambda_rel", o->lambda_rel);
  cJSON_AddNumberToObject(m, "trace_sigma", trace);
  {
    SlemCacheSection sec[2] = {{"mu", slem_stats_mean(s->stats), d, 0},
                               {"ainv_diag", ainv, d, 0}};
    st = slem_cache_write(s->output, "diagonal", d, res->n, m, sec, 2, s->prov, err);
  }
  res->phases.write += slem_now() - t0;
done:
  cJSON_Delete(m);
  free(ainv);
  return st;
}

static const SlemFitOps fit = {"diagonal", takes, finish, NULL, NULL, NULL, check};

/* ---- the encoder ---- */

typedef struct Encoder {
  const Diagonal *g;
  size_t d;
  double *y;       /* max_rows x d */
  uint64_t zeros;  /* rows [count_lo, count_hi) equal to mu */
  size_t count_lo, count_hi;
} Encoder;

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!diagonal_of(cache) || o->esvm) return SLEM_ENC_NOT_MINE;
  if (o->mode == SLEM_ENCODE_CLASSIFIER || o->alpha_set || o->groups) {
    slem_error(err, SLEM_EINVAL, "%s is a diagonal cache: it gives descriptors only (no "
               "--classifier, --alpha or --groups)", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  Encoder *e = calloc(1, sizeof *e);
  (void)o;
  if (!e || !(e->y = malloc((max_rows ? max_rows : 1) * cache->d * sizeof *e->y))) {
    free(e);
    return slem_error(err, SLEM_ENOMEM, "out of memory for %zu rows of dimension %zu",
                      max_rows, cache->d);
  }
  e->g = diagonal_of(cache);
  e->d = cache->d;
  e->count_hi = SIZE_MAX;
  *self = e;
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return ((const Encoder *)self)->d;
}

typedef struct Job {
  Encoder *e;
  float *out;
  const double *x;
} Job;

/* Rows [lo, hi), each on its own: the descriptor of a row is the same wherever it lies. */
static void run_rows(void *ctx, size_t lo, size_t hi) {
  const Job *j = ctx;
  Encoder *e = j->e;
  size_t d = e->d;
  for (size_t r = lo; r < hi; r++) {
    const double *x = j->x + r * d;
    double *y = e->y + r * d, nrm, s;
    for (size_t k = 0; k < d; k++) y[k] = (x[k] - e->g->mu[k]) * e->g->ainv_diag[k];
    nrm = sqrt(slem_dot_f64(y, y, d));
    s = nrm > 0 ? 1 / nrm : 0;
    if (nrm == 0 && r >= e->count_lo && r < e->count_hi)
      __atomic_fetch_add(&e->zeros, 1, __ATOMIC_RELAXED);
    for (size_t k = 0; k < d; k++) j->out[r * d + k] = (float)(y[k] * s);
  }
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  Job j = {self, y, x};
  (void)name, (void)first_record, (void)err;
  slem_blas_par_chunks(b, 256, run_rows, &j);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += ((const Encoder *)self)->zeros;
}

static void count_rows(void *self, size_t lo, size_t hi) {
  Encoder *e = self;
  e->count_lo = lo;
  e->count_hi = hi;
}

static void encoder_free(void *self) {
  Encoder *e = self;
  if (e) free(e->y);
  free(e);
}

static const SlemEncoderOps encoder = {"diagonal", accepts,  new_, out_dim, run, counts, NULL,
                                       encoder_free, NULL, NULL, 1, count_rows};

static const SlemOptSpec diagonal_fit_options[] = {
    {.name = "diagonal", .type = SLEM_OPT_CUSTOM, .parse = slem_negstats_opt_variant,
     .help = "a diagonal cache: A = diag(Sigma) + lambda I, the\n"
             "variances only; descriptors (x - mu) / (s + lambda)\n"
             "normalised, O(d) a row (no --classifier or --alpha)"},
    {0}};

const SlemVariant slem_variant_diagonal = {
    "diagonal",
    "SLEM of a diagonal covariance, A = diag(Sigma) + lambda I: d values of cache, O(d) a "
    "row (slem-negstats --diagonal)",
    &kind, &fit, &encoder, diagonal_fit_options, NULL};

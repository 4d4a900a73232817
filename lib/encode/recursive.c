#include "recursive.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "rowmul.h"
#include "io.h"
#include "stats.h"
#include "fit.h"
#include "vecs.h"
#include "kind_linear.h"
#include "kind_recursive.h"
#include "variant.h"

/* The rows of a block whose zeros count: [lo, hi). */
typedef struct Counted {
  size_t lo, hi;
} Counted;

static const Counted all_rows = {0, SIZE_MAX};

/* One stage: y(b, d) = normalise((x - mu) ainv), in double, on rows first.. of a block;
 * returns the zero rows among those that count (cnt). */
static uint64_t stage(double *y, double *delta, const double *x, size_t b, size_t d,
                      const double *mu, const double *ainv, size_t first, Counted cnt) {
  uint64_t zeros = 0;
  if (b == 0) return 0;
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < d; j++) delta[i * d + j] = x[i * d + j] - mu[j];
  slem_rowmul_f64(y, d, delta, d, b, ainv, d, d, d); /* row by row (rowmul.h) */
  for (size_t i = 0; i < b; i++) {
    double nrm = cblas_dnrm2((int)d, y + i * d, 1), s = nrm > 0 ? 1 / nrm : 0;
    if (nrm == 0 && first + i >= cnt.lo && first + i < cnt.hi) zeros++;
    cblas_dscal((int)d, s, y + i * d, 1);
  }
  return zeros;
}

typedef struct StagesJob {
  double *y, *work;
  const double *x;
  size_t d, k;
  const double *const *mu, *const *ainv;
  Counted cnt;
  uint64_t zeros;
} StagesJob;

/* Rows [lo, hi): every stage, one BLAS call per stage on this thread. */
static void stages_rows(void *ctx, size_t lo, size_t hi) {
  StagesJob *j = ctx;
  size_t d = j->d, b = hi - lo;
  double *y = j->y + lo * d, *work = j->work + lo * d;
  uint64_t zeros = stage(y, work, j->x + lo * d, b, d, j->mu[0], j->ainv[0], lo, j->cnt);
  for (size_t s = 1; s < j->k; s++) {
    /* y holds stage s's input: move it to work, subtract mu there, multiply into y */
    memcpy(work, y, b * d * sizeof *y);
    zeros += stage(y, work, work, b, d, j->mu[s], j->ainv[s], lo, j->cnt);
  }
  __atomic_fetch_add(&j->zeros, zeros, __ATOMIC_RELAXED);
}

/* Applies stages 0..k-1 to x(b, d) into y(b, d); work(b, d) is scratch. y may be x when
 * k == 0 only. In fixed chunks of 256 rows on slem's threads, the BLAS on one thread each:
 * a multithreaded dgemm's bits depend on its thread count (stats.c), these do not. Returns
 * the zero rows (at any stage) among the rows cnt. */
static uint64_t stages(double *y, double *work, const double *x, size_t b, size_t d, size_t k,
                       const double *const *mu, const double *const *ainv, Counted cnt) {
  StagesJob j = {y, work, x, d, k, mu, ainv, cnt, 0};
  if (k == 0) {
    if (y != x) memcpy(y, x, b * d * sizeof *y);
    return 0;
  }
  slem_blas_par_chunks(b, 256, stages_rows, &j);
  return j.zeros;
}

struct SlemRecursive {
  size_t d, depth, max_rows;
  const double *const *mu, *const *ainv;
  const double *mu1[1], *ainv1[1];  /* a linear cache's single stage */
  double *y, *work;
  uint64_t zeros;
  Counted cnt;  /* the rows of a block whose zeros count */
};

size_t slem_recursive_out_dim(const SlemRecursive *self) { return self->d; }

int slem_recursive_new(SlemRecursive **self, const SlemCache *cache, size_t max_rows,
                       SlemError *err) {
  SlemRecursive *r;
  *self = NULL;
  if (!slem_cache_linear(cache) && !slem_cache_recursive(cache))
    return slem_error(err, SLEM_EINVAL, "%s: not a linear or recursive cache",
                      slem_cache_path(cache));
  r = calloc(1, sizeof *r);
  if (!r) return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->d = cache->d;
  r->max_rows = max_rows;
  r->cnt = all_rows;
  if (slem_cache_recursive(cache)) {
    r->depth = slem_cache_recursive(cache)->depth;
    r->mu = slem_cache_recursive(cache)->mu;
    r->ainv = slem_cache_recursive(cache)->ainv;
  } else {
    r->depth = 1;
    r->mu1[0] = slem_cache_linear(cache)->mu;
    r->ainv1[0] = slem_cache_linear(cache)->ainv;
    r->mu = r->mu1;
    r->ainv = r->ainv1;
  }
  r->y = malloc(max_rows * r->d * sizeof *r->y);
  r->work = malloc(max_rows * r->d * sizeof *r->work);
  if (!r->y || !r->work) {
    slem_recursive_free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
  }
  *self = r;
  return SLEM_OK;
}

void slem_recursive_free(SlemRecursive *self) {
  if (!self) return;
  free(self->y);
  free(self->work);
  free(self);
}

uint64_t slem_recursive_zeros(const SlemRecursive *self) { return self->zeros; }

void slem_recursive_count_rows(SlemRecursive *self, size_t lo, size_t hi) {
  self->cnt = (Counted){lo, hi};
}

void slem_recursive_run_f64(SlemRecursive *self, double *y, const double *x, size_t b) {
  self->zeros += stages(y, self->work, x, b, self->d, self->depth, self->mu, self->ainv,
                        self->cnt);
}

void slem_recursive_run(SlemRecursive *self, float *y, const double *x, size_t b) {
  slem_recursive_run_f64(self, self->y, x, b);
  for (size_t i = 0; i < b * self->d; i++) y[i] = (float)self->y[i];
}

/* Adds the vectors of one file, encoded by stages 0..k-1, to st. */
static int add_file(SlemStats **st, const char *path, SlemFormat fmt,
                    const SlemVecArrays *arrays, size_t block, int skip, size_t k, const double *const *mu, const double *const *ainv, size_t *d,
                    SlemPhases *ph, SlemError *err) {
  SlemVecReader *r = NULL;
  double *x = NULL, *y = NULL, *work = NULL;
  int status = slem_vecreader_open_input(&r, path, fmt, arrays, err);
  if (status) return status;
  slem_vecreader_skip_nonfinite(r, skip);
  if (*d == 0) *d = slem_vecreader_dim(r);
  if (slem_vecreader_dim(r) != *d) {
    status = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it "
                        "have %zu", slem_vecreader_name(r), slem_vecreader_dim(r), *d);
    goto done;
  }
  if (!block) block = slem_block_rows(*d);
  if (!*st && (status = slem_stats_new(st, *d, slem_block_rows(*d), 0, err)) != SLEM_OK)
    goto done;
  x = malloc(block * *d * sizeof *x);
  y = malloc(block * *d * sizeof *y);
  work = malloc(block * *d * sizeof *work);
  if (!x || !y || !work) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto done;
  }
  for (;;) {
    size_t got;
    double t = slem_now();
    status = slem_vecreader_read(r, x, block, &got, err);
    slem_phases_lap(&ph->read, &t);
    if (status != SLEM_OK || got == 0) break;
    stages(y, work, x, got, *d, k, mu, ainv, all_rows);
    status = slem_stats_add(*st, y, got, err);
    slem_phases_lap(&ph->compute, &t);
    if (status != SLEM_OK) break;
  }
done:
  free(x);
  free(y);
  free(work);
  slem_vecreader_free(r);
  return status;
}

int slem_recursive_stages_new(SlemRecursiveStages *self, size_t depth, SlemError *err) {
  memset(self, 0, sizeof *self);
  self->depth = depth;
  self->mu = calloc(depth, sizeof *self->mu);
  self->ainv = calloc(depth, sizeof *self->ainv);
  self->lam = calloc(depth, sizeof *self->lam);
  self->trace = calloc(depth, sizeof *self->trace);
  self->rcond = calloc(depth, sizeof *self->rcond);
  if (!self->mu || !self->ainv || !self->lam || !self->trace || !self->rcond)
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  return SLEM_OK;
}

void slem_recursive_stages_free(SlemRecursiveStages *self) {
  for (size_t s = 0; s < self->depth && self->mu; s++) free(self->mu[s]);
  for (size_t s = 0; s < self->depth && self->ainv; s++) free(self->ainv[s]);
  free(self->mu);
  free(self->ainv);
  free(self->lam);
  free(self->trace);
  free(self->rcond);
  memset(self, 0, sizeof *self);
}

int slem_recursive_stage_finish(SlemRecursiveStages *self, size_t s, SlemStats **st, size_t dim,
                                double lambda, double lambda_rel, uint64_t *n, SlemPhases *ph,
                                SlemError *err) {
  double t = slem_now();
  int status = slem_stats_finish(*st, err);
  slem_phases_lap(&ph->merge, &t);
  if (status != SLEM_OK) goto done;
  if (s == 0) *n = slem_stats_count(*st);
  self->mu[s] = malloc(dim * sizeof **self->mu);
  self->ainv[s] = malloc(dim * dim * sizeof **self->ainv);
  if (!self->mu[s] || !self->ainv[s]) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", dim, dim);
    goto done;
  }
  status = slem_stats_inverse(*st, self->ainv[s], &self->lam[s], lambda, lambda_rel, err);
  slem_phases_lap(&ph->factor, &t);
  if (status != SLEM_OK) {
    if (self->depth > 1) {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err->msg);
      slem_error(err, status, "stage %zu of %zu: %s", s + 1, self->depth, msg);
    }
    goto done;
  }
  memcpy(self->mu[s], slem_stats_mean(*st), dim * sizeof **self->mu);
  self->trace[s] = slem_stats_trace(*st);
  self->rcond[s] = slem_stats_rcond(*st);
done:
  slem_stats_free(*st);
  *st = NULL;
  return status;
}

int slem_recursive_write_cache(const char *path, const char *const *inputs, size_t ninputs,
                               SlemFormat fmt, const SlemVecArrays *arrays, size_t block, int skip, size_t depth,
                               double lambda, double lambda_rel, const SlemProvenance *prov,
                               SlemPhases *ph, SlemError *err) {
  SlemPhases none = {0};
  SlemRecursiveStages sg = {0};
  SlemStats *st = NULL;
  size_t d = 0;
  uint64_t n = 0;
  int status = SLEM_OK;
  double t;
  if (!ph) ph = &none;
  if (depth == 0 || ninputs == 0)
    return slem_error(err, SLEM_EINVAL, "depth and the inputs must be at least 1");
  if (depth > 1 && lambda >= 0)
    return slem_error(err, SLEM_EINVAL, "an absolute lambda is for depth 1: give lambda_rel, "
                      "relative to each stage's own trace");
  for (size_t i = 0; depth > 1 && i < ninputs; i++) {
    if (slem_vecarrays_find(arrays, inputs[i])) continue; /* read from memory */
    if (strcmp(inputs[i], "-") == 0)
      return slem_error(err, SLEM_EINVAL, "stdin (-) cannot be read once per stage: give "
                        "the negatives as files for depth %zu", depth);
    if ((status = slem_in_rereadable(inputs[i], err)) != SLEM_OK) return status;
  }
  if ((status = slem_recursive_stages_new(&sg, depth, err)) != SLEM_OK) goto done;
  for (size_t s = 0; s < depth; s++) {
    for (size_t i = 0; i < ninputs; i++)
      if ((status = add_file(&st, inputs[i], fmt, arrays, block, skip, s, (const double *const *)sg.mu,
                             (const double *const *)sg.ainv, &d, ph, err)) != SLEM_OK)
        goto done;
    if ((status = slem_recursive_stage_finish(&sg, s, &st, d, lambda, lambda_rel, &n, ph,
                                              err)) != SLEM_OK)
      goto done;
  }
  t = slem_now();
  if (depth == 1) {
    SlemLinearInfo info = {sg.lam[0], lambda >= 0 ? -1 : lambda_rel, sg.trace[0], sg.rcond[0]};
    status = slem_cache_write_linear(path, d, n, &info, sg.mu[0], sg.ainv[0], prov, err);
  } else
    status = slem_cache_write_recursive(path, d, n, depth, lambda_rel, sg.lam, sg.trace,
                                        sg.rcond, (const double *const *)sg.mu,
                                        (const double *const *)sg.ainv, prov, err);
  slem_phases_lap(&ph->write, &t);
done:
  slem_recursive_stages_free(&sg);
  slem_stats_free(st);
  return status;
}

int slem_recursive_check_inputs(const char *const *inputs, size_t n, SlemFormat fmt,
                                const SlemVecArrays *arrays, SlemError *err) {
  for (size_t i = 0; i < n; i++)
    if (!slem_vecarrays_find(arrays, inputs[i]) && strcmp(inputs[i], "-") != 0 && fmt == SLEM_FMT_AUTO && slem_cache_sniff(inputs[i]))
      return slem_error(err, SLEM_EINVAL, "%s: a slem cache cannot make a recursive cache: "
                        "stage 2 needs the negatives themselves", inputs[i]);
  return SLEM_OK;
}

/* --depth K (K > 1, linear): the stages, each on the negatives encoded by the ones before. */
static int takes_recursive(const SlemNegstatsOpts *o) { return o->depth > 1; }

static int fit_recursive(const char *output, const char *const *inputs, size_t n,
                         const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemProvenance prov = {"slem-negstats", inputs, n, NULL};
  int st = slem_recursive_check_inputs(inputs, n, o->format, &o->arrays, err);
  if (st == SLEM_OK)
    st = slem_recursive_write_cache(output, inputs, n, o->format, &o->arrays, o->block, o->skip_nonfinite,
                                    o->depth, o->lambda, o->lambda_rel, &prov, &res->phases,
                                    err);
  return st;
}

const SlemFitOps slem_fit_recursive = {"recursive", takes_recursive, NULL, NULL, NULL,
                                       fit_recursive, NULL};

extern const SlemCacheKindOps slem_kind_recursive;
extern const SlemEncoderOps slem_enc_recursive;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec recursive_fit_options[] = {
    {.name = "depth", .metavar = "K", .type = SLEM_OPT_WHOLE, O(depth), .min = 1, .max = 1024,
     .help = "recursive SLEM: K stages, stage s + 1 computed on the\n"
             "negatives encoded by stages 1..s, each with the same\n"
             "--lambda-rel of its own trace (default 1; K > 1 reads\n"
             "the negative files K times, and takes no partial\n"
             "caches); with --kernel, K stages of kernel SLEM, each\n"
             "on the negatives' explicit descriptors of the stages\n"
             "before (same spec, factor and rank; --lambda or\n"
             "--lambda-rel per stage)"},
    {0}};
#undef O

const SlemVariant slem_variant_recursive = {
    "recursive",
    "stages of linear SLEM, each on the negatives encoded by the ones before (slem-negstats "
    "--depth K)",
    &slem_kind_recursive, &slem_fit_recursive, &slem_enc_recursive, recursive_fit_options, NULL};

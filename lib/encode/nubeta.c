#include "nubeta.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "rowmul.h"
#include "io.h"
#include "recursive.h"
#include "stats.h"
#include "fit.h"
#include "kind_recursive.h"
#include "variant.h"

/* The rows of a block whose zeros count: [lo, hi). */
typedef struct Counted {
  size_t lo, hi;
} Counted;

static const Counted all_rows = {0, SIZE_MAX};

/* Stage s: in(b, p) -> out(b, p + 1) = normalised [nu; beta] with weight t and numerator c
 * (nubeta.h), on rows first.. of a block; y(b, p) is scratch. Returns the zero rows among
 * those that count (cnt). */
static uint64_t stage(double *out, double *y, const double *in, size_t b, size_t p,
                      const double *mu, const double *ainv, double t, double c, size_t first,
                      Counted cnt) {
  uint64_t zeros = 0;
  double *delta = out; /* out's first b p values hold delta until y is made */
  if (b == 0) return 0;
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < p; j++) delta[i * p + j] = in[i * p + j] - mu[j];
  slem_rowmul_f64(y, p, delta, p, b, ainv, p, p, p); /* row by row (rowmul.h) */
  /* C and nu need delta, gone once out is written: one row at a time, from the last
   * (row i of out, p + 1 values from (p + 1) i, never overwrites delta's rows before it) */
  for (size_t ii = b; ii-- > 0;) {
    const double *x = in + ii * p, *yi = y + ii * p;
    double q = 0, dotx = 0, nrm, cc, nu;
    for (size_t j = 0; j < p; j++) q += (x[j] - mu[j]) * yi[j];
    cc = c / (t * q + t + 1);
    for (size_t j = 0; j < p; j++) dotx += yi[j] * (t * x[j] + mu[j]);
    nu = (t - 1) / (t + 1) - cc * dotx / (t + 1);
    {
      double *o = out + ii * (p + 1);
      nrm = nu * nu;
      for (size_t j = 0; j < p; j++) nrm += (cc * yi[j]) * (cc * yi[j]);
      nrm = sqrt(nrm);
      if (nrm == 0 || isinf(nrm)) {
        /* the squares under- or overflowed (a huge or tiny lambda: A^-1 ~ I / lambda); the
         * norm scaled by the largest value then (only then: other rows keep their bits) */
        double mx = fabs(nu), ss;
        for (size_t j = 0; j < p; j++) mx = fmax(mx, fabs(cc * yi[j]));
        if (mx > 0 && isfinite(mx)) {
          ss = (nu / mx) * (nu / mx);
          for (size_t j = 0; j < p; j++) ss += (cc * yi[j] / mx) * (cc * yi[j] / mx);
          nrm = mx * sqrt(ss);
        }
      }
      if (nrm == 0 && first + ii >= cnt.lo && first + ii < cnt.hi) zeros++;
      o[0] = nrm > 0 ? nu / nrm : 0;
      for (size_t j = 0; j < p; j++) o[j + 1] = nrm > 0 ? cc * yi[j] / nrm : 0;
    }
  }
  return zeros;
}

typedef struct Chain {
  size_t d, k, w;  /* input dimension, stages, widest row (d + k) */
  const double *const *mu, *const *ainv;
  const double *t; /* t[s]: the weight of stage s */
  double c;
  double *a, *b2, *y;  /* scratch, max_rows w each */
} Chain;

typedef struct ChainJob {
  const Chain *ch;
  const double *x;
  double *outd;  /* (rows, d + k), or NULL */
  float *outf;
  Counted cnt;
  uint64_t zeros;
} ChainJob;

/* Rows [lo, hi): every stage, one BLAS call per stage on this thread. */
static void chain_rows(void *ctx, size_t lo, size_t hi) {
  ChainJob *j = ctx;
  const Chain *ch = j->ch;
  size_t b = hi - lo, d = ch->d, od = d + ch->k;
  double *a = ch->a + lo * ch->w, *o = ch->b2 + lo * ch->w, *y = ch->y + lo * ch->w, *tmp;
  uint64_t zeros = 0;
  memcpy(a, j->x + lo * d, b * d * sizeof *a);
  for (size_t s = 0; s < ch->k; s++) {
    zeros += stage(o, y, a, b, d + s, ch->mu[s], ch->ainv[s], ch->t[s], ch->c, lo, j->cnt);
    tmp = a, a = o, o = tmp;
  }
  for (size_t i = 0; i < b * od; i++) {
    if (j->outd) j->outd[lo * od + i] = a[i];
    else j->outf[lo * od + i] = (float)a[i];
  }
  __atomic_fetch_add(&j->zeros, zeros, __ATOMIC_RELAXED);
}

/* x(b, d) through the chain's stages into outd or outf (b, d + k), fixed 256-row chunks;
 * returns the zero rows (at any stage) among the rows cnt. */
static uint64_t chain_run(const Chain *ch, double *outd, float *outf, const double *x, size_t b,
                          Counted cnt) {
  ChainJob j = {ch, x, outd, outf, cnt, 0};
  slem_blas_par_chunks(b, 256, chain_rows, &j);
  return j.zeros;
}

static int chain_init(Chain *ch, size_t d, size_t k, size_t max_rows) {
  ch->d = d;
  ch->k = k;
  ch->w = d + k;
  ch->a = malloc(max_rows * ch->w * sizeof *ch->a);
  ch->b2 = malloc(max_rows * ch->w * sizeof *ch->b2);
  ch->y = malloc(max_rows * ch->w * sizeof *ch->y);
  return ch->a && ch->b2 && ch->y;
}

static void chain_free(Chain *ch) {
  free(ch->a);
  free(ch->b2);
  free(ch->y);
  ch->a = ch->b2 = ch->y = NULL;
}

struct SlemNubeta {
  Chain ch;
  double *t;
  uint64_t zeros;
  Counted cnt;  /* the rows of a block whose zeros count */
};

int slem_nubeta_new(SlemNubeta **self, const SlemCache *cache, size_t max_rows,
                    SlemError *err) {
  const SlemCacheRecursive *rec = slem_cache_recursive(cache);
  SlemNubeta *e;
  *self = NULL;
  if (!rec || !rec->nu_beta)
    return slem_error(err, SLEM_EINVAL, "%s: not a recursive-nubeta cache", slem_cache_path(cache));
  if (!(e = calloc(1, sizeof *e))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (!chain_init(&e->ch, cache->d, rec->depth, max_rows ? max_rows : 1) ||
      !(e->t = malloc(rec->depth * sizeof *e->t))) {
    slem_nubeta_free(e);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
  }
  for (size_t s = 0; s < rec->depth; s++) e->t[s] = rec->theta;
  e->cnt = all_rows;
  e->ch.mu = rec->mu;
  e->ch.ainv = rec->ainv;
  e->ch.t = e->t;
  e->ch.c = 2;
  *self = e;
  return SLEM_OK;
}

void slem_nubeta_free(SlemNubeta *self) {
  if (!self) return;
  chain_free(&self->ch);
  free(self->t);
  free(self);
}

size_t slem_nubeta_out_dim(const SlemNubeta *self) { return self->ch.d + self->ch.k; }
uint64_t slem_nubeta_zeros(const SlemNubeta *self) { return self->zeros; }

void slem_nubeta_count_rows(SlemNubeta *self, size_t lo, size_t hi) {
  self->cnt = (Counted){lo, hi};
}

void slem_nubeta_run(SlemNubeta *self, float *y, const double *x, size_t b) {
  self->zeros += chain_run(&self->ch, NULL, y, x, b, self->cnt);
}

/* Reads up to max rows of path (dimension d, or any when *d is 0) through ch (k stages)
 * into stats (made here when NULL), or, when stats is NULL, into keep(max, d + k). */
static int read_through(SlemStats **st, double *keep, size_t *kept, const char *path,
                        SlemFormat fmt, const SlemVecArrays *arrays, size_t block, int skip, size_t *d, size_t max,
                        Chain *ch, SlemPhases *ph, SlemError *err) {
  SlemVecReader *r = NULL;
  double *x = NULL, *y = NULL;
  size_t done = 0, od;
  int status = slem_vecreader_open_input(&r, path, fmt, arrays, err);
  if (status) return status;
  slem_vecreader_skip_nonfinite(r, skip);
  if (*d == 0) *d = slem_vecreader_dim(r);
  if (slem_vecreader_dim(r) != *d) {
    status = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it "
                        "have %zu", slem_vecreader_name(r), slem_vecreader_dim(r), *d);
    goto done;
  }
  od = *d + ch->k;
  if (st && !*st && (status = slem_stats_new(st, od, slem_block_rows(od), 0, err)) != SLEM_OK)
    goto done;
  x = malloc(block * *d * sizeof *x);
  y = malloc(block * od * sizeof *y);
  if (!x || !y) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto done;
  }
  while (done < max) {
    size_t got;
    double t = slem_now();
    status = slem_vecreader_read(r, x, block < max - done ? block : max - done, &got, err);
    slem_phases_lap(&ph->read, &t);
    if (status != SLEM_OK || got == 0) break;
    chain_run(ch, keep ? keep + done * od : y, NULL, x, got, all_rows);
    if (st) status = slem_stats_add(*st, y, got, err);
    slem_phases_lap(&ph->compute, &t);
    if (status != SLEM_OK) break;
    done += got;
  }
  if (kept) *kept = done;
done:
  free(x);
  free(y);
  slem_vecreader_free(r);
  return status;
}

int slem_nubeta_write_cache(const char *path, const char *const *inputs, size_t ninputs,
                            const char *positives, SlemFormat fmt,
                            const SlemVecArrays *arrays, SlemFormat pos_fmt, size_t block, int skip,
                            size_t depth, double theta, double lambda, double lambda_rel,
                            const SlemProvenance *prov, SlemPhases *ph, SlemError *err) {
  SlemPhases none = {0};
  SlemRecursiveStages sg = {0};
  double *tn = NULL, *tp = NULL, *m = NULL, *pin = NULL, *pout = NULL;
  SlemStats *st = NULL;
  Chain neg = {0}, pos = {0}, one = {0};
  size_t d = 0, npos = 0;
  uint64_t n = 0;
  int status = SLEM_OK;
  double t;
  if (!ph) ph = &none;
  if (depth < 2 || ninputs == 0 || !(theta > 0) || !positives)
    return slem_error(err, SLEM_EINVAL, "[nu; beta] stages need depth >= 2, negatives, theta "
                      "> 0 and the positives");
  for (size_t i = 0; i < ninputs; i++) {
    if (slem_vecarrays_find(arrays, inputs[i])) continue; /* read from memory */
    if (strcmp(inputs[i], "-") == 0)
      return slem_error(err, SLEM_EINVAL, "stdin (-) cannot be read once per stage: give "
                        "the negatives as files for depth %zu", depth);
    if ((status = slem_in_rereadable(inputs[i], err)) != SLEM_OK) return status;
  }
  if (strcmp(positives, "-") == 0)
    return slem_error(err, SLEM_EINVAL, "the positives are read once per stage: not from stdin");
  if ((status = slem_in_rereadable(positives, err)) != SLEM_OK) return status;
  if (!block) block = 1024;
  if ((status = slem_recursive_stages_new(&sg, depth, err)) != SLEM_OK) goto done;
  tn = calloc(depth, sizeof *tn);
  tp = calloc(depth, sizeof *tp);
  m = calloc(depth, sizeof *m);
  if (!tn || !tp || !m) goto oom;
  for (size_t s = 0; s < depth; s++) tp[s] = theta;
  { /* the first file's dimension sizes the scratch */
    SlemVecReader *r = NULL;
    if ((status = slem_vecreader_open_input(&r, inputs[0], fmt, arrays, err)) != SLEM_OK)
      goto done;
    d = slem_vecreader_dim(r);
    slem_vecreader_free(r);
  }
  for (size_t s = 0; s < depth; s++) {
    size_t p;
    /* the negatives through stages 0..s-1 with theta_n, c = 1 */
    chain_free(&neg);
    if (!chain_init(&neg, d, s, block)) goto oom;
    neg.mu = (const double *const *)sg.mu, neg.ainv = (const double *const *)sg.ainv;
    neg.t = tn, neg.c = 1;
    for (size_t i = 0; i < ninputs; i++)
      if ((status = read_through(&st, NULL, NULL, inputs[i], fmt, arrays, block, skip, &d, SIZE_MAX,
                                 &neg, ph, err)) != SLEM_OK)
        goto done;
    p = d + s;
    if ((status = slem_recursive_stage_finish(&sg, s, &st, p, lambda, lambda_rel, &n, ph,
                                              err)) != SLEM_OK)
      goto done;
    if (s + 1 == depth) break;
    /* m: the first positives through stages 0..s-1 (theta, c = 2), then stage s */
    chain_free(&pos);
    free(pin);
    free(pout);
    pin = malloc(SLEM_NUBETA_POSITIVES * (p + 1) * sizeof *pin);
    pout = malloc(SLEM_NUBETA_POSITIVES * (p + 1) * sizeof *pout);
    if (!pin || !pout || !chain_init(&pos, d, s, SLEM_NUBETA_POSITIVES)) goto oom;
    pos.mu = (const double *const *)sg.mu, pos.ainv = (const double *const *)sg.ainv;
    pos.t = tp, pos.c = 2;
    if ((status = read_through(NULL, pin, &npos, positives, pos_fmt, NULL, SLEM_NUBETA_POSITIVES, skip,
                               &d, SLEM_NUBETA_POSITIVES, &pos, ph, err)) != SLEM_OK)
      goto done;
    if (npos == 0) {
      status = slem_error(err, SLEM_EINVAL, "%s: no positives to adapt theta_n", positives);
      goto done;
    }
    chain_free(&one);
    if (!chain_init(&one, p, 1, SLEM_NUBETA_POSITIVES)) goto oom;
    one.mu = (const double *const *)sg.mu + s, one.ainv = (const double *const *)sg.ainv + s;
    one.t = tp, one.c = 2;
    chain_run(&one, pout, NULL, pin, npos, all_rows);
    {
      double sum = 0;
      for (size_t i = 0; i < npos; i++) {
        const double *o = pout + i * (p + 1), *x = pin + i * p;
        double sc = o[0];
        for (size_t j = 0; j < p; j++) sc += o[j + 1] * x[j];
        sum += sc;
      }
      m[s] = sum / (double)npos;
    }
    tn[s] = theta + ((1 + m[s]) * (1 + m[s])) / ((1 - m[s]) * (1 - m[s])) / 2;
    if (!isfinite(tn[s])) {
      status = slem_error(err, SLEM_ENUMERIC, "stage %zu of %zu: the positives' mean score on "
                          "their own exemplars is %g: theta_n is not finite", s + 1, depth, m[s]);
      goto done;
    }
  }
  {
    SlemNubetaInfo info = {theta, tn, m, npos};
    t = slem_now();
    status = slem_cache_write_nubeta(path, d, n, depth, lambda >= 0 ? -1 : lambda_rel, sg.lam,
                                     sg.trace, sg.rcond, (const double *const *)sg.mu,
                                     (const double *const *)sg.ainv, &info, prov, err);
    slem_phases_lap(&ph->write, &t);
  }
  goto done;
oom:
  status = slem_error(err, SLEM_ENOMEM, "out of memory");
done:
  chain_free(&neg);
  chain_free(&pos);
  chain_free(&one);
  slem_recursive_stages_free(&sg);
  free(tn);
  free(tp);
  free(m);
  free(pin);
  free(pout);
  slem_stats_free(st);
  return status;
}

/* --depth K --adaptive-theta POSITIVES: the [nu; beta] stages, the positives an input too. */
static int takes_nubeta(const SlemNegstatsOpts *o) { return o->depth > 1 && o->adaptive; }

static int fit_nubeta(const char *output, const char *const *inputs, size_t n,
                      const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemProvenance prov = {"slem-negstats", inputs, n, NULL};
  const char **pin = NULL;
  int st = slem_recursive_check_inputs(inputs, n, o->format, &o->arrays, err);
  if (st == SLEM_OK) st = slem_cache_prov_append(&prov, &pin, inputs, n, o->adaptive, err);
  if (st == SLEM_OK)
    st = slem_nubeta_write_cache(output, inputs, n, o->adaptive, o->format, &o->arrays, o->pos_format,
                                 o->block, o->skip_nonfinite, o->depth, o->theta, o->lambda,
                                 o->lambda_rel, &prov, &res->phases, err);
  free(pin);
  return st;
}

const SlemFitOps slem_fit_nubeta = {"nubeta", takes_nubeta, NULL, NULL, NULL, fit_nubeta, NULL};

extern const SlemCacheKindOps slem_kind_nubeta;
extern const SlemEncoderOps slem_enc_nubeta;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec nubeta_fit_options[] = {
    {.name = "adaptive-theta", .metavar = "POSITIVES", .type = SLEM_OPT_TEXT, O(adaptive),
     .help = "with --depth K (linear): new_full_encoder.m's [nu;\n"
             "beta] stages (d + K values), the next stage's\n"
             "negatives encoded with theta_n adapted to the first\n"
             "100 rows of POSITIVES; --lambda (every stage) or\n"
             "--lambda-rel"},
    {.name = "theta", .metavar = "T", .type = SLEM_OPT_REAL, O(theta), .real = SLEM_OPT_POSITIVE,
     .given = SLEM_NEGSTATS_GIVEN_THETA,
     .help = "with --adaptive-theta: the positives' weight (default\n"
             "1)"},
    {0}};
#undef O

const SlemVariant slem_variant_nubeta = {
    "nubeta",
    "new_full_encoder.m's [nu; beta] stages with adaptive theta_n (slem-negstats --depth K "
    "--adaptive-theta POSITIVES)",
    &slem_kind_nubeta, &slem_fit_nubeta, &slem_enc_nubeta, nubeta_fit_options, NULL};

/* The affine scorer (scorer.h): one variant of the scorer family, in its own file. */
#include "scorer_affine.h"

#include "blas.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dot.h"

/* ---- the affine scorer ----
 *
 * Fast score: v = fl32(sgemm(w, x)) + b in double, then f(v) rounded to float, with f the
 * sigmoid or the identity. Exact score: f(slem_dot_f32(w, x) + b), a function of the two
 * vectors alone. Why the slack bounds the difference: as for the inner product
 * (scorer.c), |fl32(sgemm) - w.x| <= gamma_d |w| |x| + 2d 2^-149, and the exact dot is
 * within gamma_d(2^-53) |w| |x| of w.x; adding b in double costs 2^-53 |v| each; f is
 * Lipschitz with constant |a| / 4 (the sigmoid) or 1 (the identity); the final rounding to
 * float adds 2^-24 |f(v)|, at most 2^-24 for a probability and 2^-24 (|w| |x| + |b|) for
 * an affine score. The factor 1.01 covers the rounding of the bound's own arithmetic and
 * of exp(). */

typedef struct AffineScorer {
  SlemScorer base;
  const SlemCalibration *cal;
  float *w;       /* w(max_q, d) */
  double *b;      /* b(max_q) */
  double *wn;     /* |w|, per query */
  float *row;     /* one query of d + 1 values as read */
  const float *x; /* the last tile (borrowed until the next) */
  double xmax;    /* max |x| over the last tile */
  double gamma;   /* gamma_d(2^-24) + gamma_d(2^-53) */
  uint64_t first; /* index of the current block's first query */
  uint64_t next;  /* queries read so far */
} AffineScorer;

static int affine_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err) {
  AffineScorer *s = (AffineScorer *)self;
  size_t d = self->d;
  int st;
  *got = 0;
  s->first = s->next;
  for (size_t i = 0; i < self->max_q; i++) {
    size_t one;
    if ((st = slem_vecreader_read_f32(r, s->row, 1, &one, err)) != SLEM_OK) return st;
    if (one == 0) break;
    memcpy(s->w + i * d, s->row, d * sizeof *s->row);
    s->b[i] = s->row[d];
    s->wn[i] = sqrt(slem_dot_f32(s->row, s->row, d));
    (*got)++;
  }
  s->next += *got;
  if (s->cal && s->next > slem_calibration_count(s->cal)) {
    size_t m = slem_calibration_count(s->cal);
    return slem_error(err, SLEM_EFORMAT, "%s: query %zu has no sigmoid: the calibration holds "
                      "%zu", slem_vecreader_name(r), m + 1, m);
  }
  return SLEM_OK;
}

static double affine_map(const AffineScorer *s, size_t i, double v) {
  return s->cal ? slem_calibration_sigmoid(slem_calibration_get(s->cal, s->first + i), v) : v;
}

/* b and the sigmoids, a query's row of scores at a time, on every thread (each row depends
 * on itself alone: the chunks change no bit). */
typedef struct AffineJob {
  const AffineScorer *s;
  float *scores;
  size_t nd;
} AffineJob;

static void affine_map_rows(void *ctx, size_t lo, size_t hi) {
  const AffineJob *j = ctx;
  for (size_t i = lo; i < hi; i++) {
    float *t = j->scores + i * j->nd;
    for (size_t c = 0; c < j->nd; c++) t[c] = (float)affine_map(j->s, i, (double)t[c] + j->s->b[i]);
  }
}

static int affine_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                       uint64_t first_record, SlemError *err) {
  AffineScorer *s = (AffineScorer *)self;
  size_t d = self->d, nq = self->nq;
  s->x = rows;
  s->xmax = 0;
  if (nq == 0 || nd == 0) return SLEM_OK;
  for (size_t j = 0; j < nd; j++) {
    double n = sqrt(slem_dot_f32(s->x + j * d, s->x + j * d, d));
    if (n > s->xmax) s->xmax = n;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)d, 1.0f, s->w,
              (int)d, rows, (int)d, 0.0f, scores, (int)nd);
  {
    AffineJob job = {s, scores, nd};
    /* chunks of about 2^16 scores */
    slem_blas_par_chunks(nq, (((size_t)1 << 16) + nd - 1) / nd, affine_map_rows, &job);
  }
  return SLEM_OK;
}

static double affine_slack(const SlemScorer *self, size_t i) {
  const AffineScorer *s = (const AffineScorer *)self;
  double wx = s->wn[i] * s->xmax, vmax = wx + fabs(s->b[i]);
  double dv = s->gamma * wx + 2 * (double)self->d * 0x1p-149 + 0x1p-52 * vmax;
  double lip = s->cal ? fabs(slem_calibration_get(s->cal, s->first + i)->a) / 4 : 1;
  double fmax = s->cal ? 1 : vmax;
  return 1.01 * (lip * dv + 0x1p-24 * fmax) + 0x1p-60;
}

static double affine_exact(const SlemScorer *self, size_t i, size_t j) {
  const AffineScorer *s = (const AffineScorer *)self;
  size_t d = self->d;
  return affine_map(s, i, slem_dot_f32(s->w + i * d, s->x + j * d, d) + s->b[i]);
}

static void affine_exact_rows(const SlemScorer *self, size_t i, const size_t *j, size_t m,
                              double *out) {
  const AffineScorer *s = (const AffineScorer *)self;
  slem_dot_f32_at(s->w + i * self->d, s->x, self->d, j, m, out);
  for (size_t r = 0; r < m; r++) out[r] = affine_map(s, i, out[r] + s->b[i]);
}

static void affine_destroy(SlemScorer *self) {
  AffineScorer *s = (AffineScorer *)self;
  free(s->w);
  free(s->b);
  free(s->wn);
  free(s->row);
  free(s);
}

static const SlemScorerOps affine_ops = {"affine classifier", affine_queries, affine_tile,
                                         affine_slack, affine_exact, NULL, affine_destroy,
                                         affine_exact_rows};

int slem_scorer_affine_new(SlemScorer **self, size_t d, const SlemCalibration *cal,
                           size_t max_q, size_t max_d, SlemError *err) {
  AffineScorer *s = calloc(1, sizeof *s);
  *self = NULL;
  if (!s || !(s->w = malloc(max_q * d * sizeof *s->w)) || !(s->b = malloc(max_q * sizeof *s->b)) ||
      !(s->wn = malloc(max_q * sizeof *s->wn)) || !(s->row = malloc((d + 1) * sizeof *s->row))) {
    if (s) affine_destroy(&s->base);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu classifiers", max_q);
  }
  s->base = (SlemScorer){&affine_ops, d, max_q, max_d, 1, 0, 0, 0, 0, 0, 0, NULL};
  s->cal = cal;
  s->gamma = slem_scorer_gamma((double)d, 0x1p-24) + slem_scorer_gamma((double)d, 0x1p-53);
  *self = &s->base;
  return SLEM_OK;
}

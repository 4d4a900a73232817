#include "scorer.h"

#include <float.h>
#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "blas.h"
#include "mem.h"

void slem_scorer_free(SlemScorer *self) {
  if (self) self->ops->destroy(self);
}

int slem_scorer_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err) {
  int st = self->ops->queries(self, r, got, err);
  self->nq = st ? 0 : *got;
  return st;
}

int slem_scorer_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                     uint64_t first_record, SlemError *err) {
  return self->ops->tile(self, scores, rows, nd, name, first_record, err);
}

double slem_scorer_slack(const SlemScorer *self, size_t i) { return self->ops->slack(self, i); }

double slem_scorer_exact(const SlemScorer *self, size_t i, size_t j) {
  return self->ops->exact(self, i, j);
}

_Static_assert(SLEM_EXACT_ROWS <= SLEM_KLANES, "slem_dot_f32_at takes SLEM_KLANES rows");

void slem_scorer_exact_rows(const SlemScorer *self, size_t i, const size_t *j, size_t m,
                            double *out) {
  if (self->ops->exact_rows) {
    self->ops->exact_rows(self, i, j, m, out);
    return;
  }
  for (size_t r = 0; r < m; r++) out[r] = self->ops->exact(self, i, j[r]);
}

int slem_scorer_f32(const SlemScorer *self) { return self->f32; }
size_t slem_scorer_nq(const SlemScorer *self) { return self->nq; }

void slem_scorer_set_units(SlemScorer *self, int unit_q, int unit_db) {
  self->unit_q = unit_q;
  self->unit_db = unit_db;
}

void slem_scorer_set_tiles(SlemScorer *self, SlemTileCache *tiles) { self->tiles = tiles; }

void slem_scorer_set_tile(SlemScorer *self, size_t tile, int keep, int replay) {
  self->tile = tile;
  self->keep = keep;
  self->replay = replay;
}

uint64_t slem_scorer_clamps(const SlemScorer *self) {
  return self->ops->clamps ? self->ops->clamps(self) : 0;
}

double slem_scorer_gamma(double n, double u) { return n * u / (1 - n * u); }

/* ---- the inner product ----
 *
 * Why the slack bounds the error. The fast score of q and x is s = fl32(sum_l q_l x_l),
 * from sgemm in some order (blocked, vectorised, with or without FMA, but a classical
 * product: each of the d products rounded at most once and d - 1 additions in a tree);
 * the standard bound for such a sum is |s - q.x| <= gamma_d sum |q_l x_l| <= gamma_d |q|
 * |x| (Cauchy-Schwarz), gamma_d = d u / (1 - d u), u = 2^-24, while no product or partial
 * sum is subnormal; each subnormal rounding adds at most 2^-150 in absolute terms, and
 * there are at most 2d of them, hence the extra 2d 2^-149. The exact score e is the same
 * sum in double of the exact products: |e - q.x| <= gamma_d(2^-53) |q||x|, a 2^-29
 * fraction of the float bound. With normalize the fast score is fl32(s * iq * ix), one
 * more rounding (u |score|, and the score is at most about 1) and the relative errors of
 * iq and ix (a few 2^-53 each); e is q.x / (|q| |x|). The factor 1.01 covers every
 * double-rounding term and the rounding of the bound's own arithmetic, which are all
 * below 2^-28 of gamma_d. */

typedef struct IpScorer {
  SlemScorer base;
  int normalize;
  float *q;             /* q(max_q, d), as read */
  double *qn, *iq;      /* |q| and the factor applied to q's scores (1, or 1 / |q|) */
  const float *x;       /* the last tile, as read (borrowed until the next tile) */
  double *xn, *ix;      /* |x| and its factor, per row of the tile */
  double xmax, ixmax;   /* max over the tile of |x| ix and of ix */
  double gamma;         /* 1.01 (gamma_d + 2u) */
} IpScorer;

static void norms(const float *x, size_t n, size_t d, int normalize, double *nrm, double *f) {
  for (size_t i = 0; i < n; i++) {
    double ss = slem_dot_f32(x + i * d, x + i * d, d);
    nrm[i] = sqrt(ss);
    f[i] = !normalize ? 1 : ss > 0 ? 1 / nrm[i] : 0;
  }
}

/* SLEM descriptors have norm 1 (linear), at most 1 (kernel SLEM's explicit ones) or 0 (the
 * negatives' mean itself), up to float32 rounding: a larger norm is a plain vector. */
static int not_unit(double norm) { return norm > 1 + 1e-3; }

static int refuse_plain(const char *name, uint64_t record, double norm, SlemError *err) {
  return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 " has norm %g > 1: plain vectors, not "
                    "SLEM descriptors, matched against the descriptors of a slem container; encode "
                    "them with slem-encode -c CACHE, or pass --no-check", name, record, norm);
}

static int ip_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err) {
  IpScorer *s = (IpScorer *)self;
  int st = slem_vecreader_read_f32(r, s->q, self->max_q, got, err);
  if (!st) norms(s->q, *got, self->d, s->normalize, s->qn, s->iq);
  if (!st && self->unit_q)
    for (size_t i = 0; i < *got; i++)
      if (not_unit(s->qn[i]))
        return refuse_plain(slem_vecreader_name(r), slem_vecreader_done(r) - *got + i + 1, s->qn[i],
                            err);
  return st;
}

/* The tile's row norms and the cosine's scaling of its scores, on every thread: each row
 * (each query's row of scores) depends on itself alone, so the chunks change no bit. */
typedef struct IpTileJob {
  IpScorer *s;
  const float *rows;
  float *scores;
  size_t nd;
} IpTileJob;

#define IP_CHUNK 256

static void ip_norm_rows(void *ctx, size_t lo, size_t hi) {
  const IpTileJob *j = ctx;
  size_t d = j->s->base.d;
  norms(j->rows + lo * d, hi - lo, d, j->s->normalize, j->s->xn + lo, j->s->ix + lo);
}

static void ip_scale_rows(void *ctx, size_t lo, size_t hi) {
  const IpTileJob *j = ctx;
  const IpScorer *s = j->s;
  size_t nd = j->nd;
  for (size_t i = lo; i < hi; i++)
    for (size_t c = 0; c < nd; c++)
      j->scores[i * nd + c] = (float)((double)j->scores[i * nd + c] * s->iq[i] * s->ix[c]);
}

static int ip_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                   uint64_t first_record, SlemError *err) {
  IpScorer *s = (IpScorer *)self;
  size_t d = self->d, nq = self->nq;
  IpTileJob job = {s, rows, scores, nd};
  s->x = rows;
  s->xmax = s->ixmax = 0;
  if (nq == 0 || nd == 0) return SLEM_OK;
  slem_blas_par_chunks(nd, IP_CHUNK, ip_norm_rows, &job);
  if (self->unit_db)
    for (size_t j = 0; j < nd; j++)
      if (not_unit(s->xn[j])) return refuse_plain(name, first_record + j, s->xn[j], err);
  for (size_t j = 0; j < nd; j++) {
    if (s->xn[j] * s->ix[j] > s->xmax) s->xmax = s->xn[j] * s->ix[j];
    if (s->ix[j] > s->ixmax) s->ixmax = s->ix[j];
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)d, 1.0f, s->q,
              (int)d, rows, (int)d, 0.0f, scores, (int)nd);
  if (s->normalize) /* chunks of about 2^16 scores */
    slem_blas_par_chunks(nq, (((size_t)1 << 16) + nd - 1) / nd, ip_scale_rows, &job);
  return SLEM_OK;
}

static double ip_slack(const SlemScorer *self, size_t i) {
  const IpScorer *s = (const IpScorer *)self;
  return s->gamma * s->qn[i] * s->iq[i] * s->xmax +
         1.01 * 2 * (double)self->d * 0x1p-149 * s->iq[i] * s->ixmax;
}

static double ip_exact(const SlemScorer *self, size_t i, size_t j) {
  const IpScorer *s = (const IpScorer *)self;
  size_t d = self->d;
  double dot = slem_dot_f32(s->q + i * d, s->x + j * d, d);
  if (!s->normalize) return dot;
  return s->iq[i] > 0 && s->ix[j] > 0 ? dot / (s->qn[i] * s->xn[j]) : 0;
}

static void ip_exact_rows(const SlemScorer *self, size_t i, const size_t *j, size_t m,
                          double *out) {
  const IpScorer *s = (const IpScorer *)self;
  slem_dot_f32_at(s->q + i * self->d, s->x, self->d, j, m, out);
  if (s->normalize)
    for (size_t r = 0; r < m; r++)
      out[r] = s->iq[i] > 0 && s->ix[j[r]] > 0 ? out[r] / (s->qn[i] * s->xn[j[r]]) : 0;
}

static void ip_destroy(SlemScorer *self) {
  IpScorer *s = (IpScorer *)self;
  free(s->q);
  free(s->qn);
  free(s->iq);
  free(s->xn);
  free(s->ix);
  free(s);
}

static const SlemScorerOps ip_ops = {"inner product", ip_queries, ip_tile, ip_slack, ip_exact,
                                     NULL, ip_destroy, ip_exact_rows};

int slem_scorer_ip_new(SlemScorer **self, size_t d, int normalize, size_t max_q, size_t max_d,
                       SlemError *err) {
  IpScorer *s = calloc(1, sizeof *s);
  *self = NULL;
  if (!s) return slem_error(err, SLEM_ENOMEM, "out of memory");
  s->base = (SlemScorer){&ip_ops, d, max_q, max_d, 1, 0, 0, 0, 0, 0, 0, NULL};
  s->normalize = normalize;
  s->gamma = 1.01 * (slem_scorer_gamma((double)d, 0x1p-24) + 2 * 0x1p-24);
  s->q = slem_mem_alloc_large(max_q * d * sizeof *s->q);
  s->qn = malloc(max_q * sizeof *s->qn);
  s->iq = malloc(max_q * sizeof *s->iq);
  s->xn = malloc(max_d * sizeof *s->xn);
  s->ix = malloc(max_d * sizeof *s->ix);
  if (!s->q || !s->qn || !s->iq || !s->xn || !s->ix) {
    ip_destroy(&s->base);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu queries", max_q);
  }
  *self = &s->base;
  return SLEM_OK;
}

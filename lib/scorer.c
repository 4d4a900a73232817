#include "scorer.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdlib.h>

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

int slem_scorer_f32(const SlemScorer *self) { return self->f32; }
size_t slem_scorer_nq(const SlemScorer *self) { return self->nq; }

uint64_t slem_scorer_clamps(const SlemScorer *self) {
  return self->ops->clamps ? self->ops->clamps(self) : 0;
}

/* ---- the inner product ---- */

typedef struct IpScorer {
  SlemScorer base;
  int normalize;
  float *q;  /* q(max_q, d) */
} IpScorer;

/* L2-normalises the rows of x(n, d) in place, accumulating in double. */
static void normalize_rows(float *x, size_t n, size_t d) {
  for (size_t i = 0; i < n; i++) {
    float *t = x + i * d;
    double ss = 0, scale;
    for (size_t j = 0; j < d; j++) ss += (double)t[j] * t[j];
    scale = ss > 0 ? 1 / sqrt(ss) : 0;
    for (size_t j = 0; j < d; j++) t[j] = (float)(t[j] * scale);
  }
}

static int ip_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err) {
  IpScorer *s = (IpScorer *)self;
  int st = slem_vecreader_read_f32(r, s->q, self->max_q, got, err);
  if (!st && s->normalize) normalize_rows(s->q, *got, self->d);
  return st;
}

static int ip_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                   uint64_t first_record, SlemError *err) {
  IpScorer *s = (IpScorer *)self;
  size_t d = self->d;
  if (self->nq == 0 || nd == 0) return SLEM_OK;
  if (s->normalize) normalize_rows(rows, nd, d);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)self->nq, (int)nd, (int)d, 1.0f, s->q,
              (int)d, rows, (int)d, 0.0f, scores, (int)nd);
  return SLEM_OK;
}

static void ip_destroy(SlemScorer *self) {
  IpScorer *s = (IpScorer *)self;
  free(s->q);
  free(s);
}

static const SlemScorerOps ip_ops = {"inner product", ip_queries, ip_tile, NULL, ip_destroy};

int slem_scorer_ip_new(SlemScorer **self, size_t d, int normalize, size_t max_q, size_t max_d,
                       SlemError *err) {
  IpScorer *s = calloc(1, sizeof *s);
  *self = NULL;
  if (!s || !(s->q = malloc(max_q * d * sizeof *s->q))) {
    free(s);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu queries", max_q);
  }
  s->base = (SlemScorer){&ip_ops, d, max_q, max_d, 1, 0};
  s->normalize = normalize;
  *self = &s->base;
  return SLEM_OK;
}

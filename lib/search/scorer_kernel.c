#include "scorer_kernel.h"

#include "kproj.h"
#include "mem.h"
#include "tilecache.h"
#include "var_kernel.h"
#include "blas.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the kernel scorer ----
 *
 * Both ways of scoring start from the same per-row projections (v, z, N), computed by
 * slem_kproj_run_fixed(), which depend on the row alone, and from the same kernel value
 * K = k(x, x') of slem_kernel_eval() (a function of the pair). The fast score of a tile is
 * T_b = K / lambda^2 + Z Z'^T - V V'^T / lambda^2 by two dgemm, divided by N N'; the exact
 * one computes T_e with fixed-order sums of r products. Both are sums of at most 2r + 2
 * rounded terms of magnitudes adding up to M = |K| / lambda^2 + |z||z'| + |v||v'| /
 * lambda^2 (Cauchy-Schwarz), so |T_b - T_e| <= 2 gamma_{2r+8}(2^-53) M, whatever the
 * order; the same division by the same N N' adds 2 u |s| to each, and the fast score's
 * rounding to float u |s|, |s| <= M / (N N'). Hence the slack 1.01 (2 gamma_{2r+8} + 6 u)
 * M / (N N'), taken at the tile's largest |z'| / N', |v'| / (lambda N') and |K| / N'. A
 * point with N = 0 scores 0 both ways.
 * Coupled, 1 / lambda becomes the per-row weight t: T_b = K t t' + Z Z'^T - (t V)(t' V')^T
 * and T_e = K (t t') + z.z' - (v.v') (t t'); each term carries at most three more
 * roundings (the products with t), within the same gamma_{2r+8}, and M = |K t t'| +
 * |z||z'| + |v t||v' t'|, taken at the tile's largest |z'| / N', |v' t'| / N' and
 * |K t'| / N'. */

typedef struct KernelScorer {
  SlemScorer base;
  SlemKProj *qp, *dp;  /* projections of the queries and of the current tile */
  double *qx;          /* qx(max_q, d): the queries as read */
  double *sd;          /* sd(max_q, max_d): similarities in double */
  double *xt;          /* the tile's rows side by side (slem_kernel_lanes) */
  double *kmax;        /* kmax(max_q): max over the tile of |K| / N' */
  double *qa, *qb;     /* per query: |z| / N, |v| / (lambda N) */
  double amax, bmax;   /* the same, max over the tile */
  double c;            /* 1.01 (2 gamma_{2r+8} + 6 u) */
  size_t blocks;       /* query blocks loaded */
  uint64_t db_clamps;  /* clamps of the database rows, counted on its first pass only */
  int packed;          /* tiles are rows of slem_kproj_pack(), not base features */
} KernelScorer;

/* Doubles kept per row. */
static size_t kept_row(const SlemKProj *p) {
  return p->c->d + 2 * slem_cache_kernel(p->c)->r + 1 + (p->couple ? slem_cache_kernel(p->c)->r + 1 : 0);
}

/* Keeps the projections of tile `tile` (the current dp) in the tile cache, per row its xp,
 * v, z, N (and t, t v when coupled), for the replays of that tile; the cache may decline
 * (its budget, the order of the tiles): the tile is then projected again. */
static void kept_add(KernelScorer *s, SlemTileCache *tc, size_t tile) {
  const SlemKProj *p = s->dp;
  size_t nd = p->rows, d = p->c->d, r = slem_cache_kernel(p->c)->r, bytes = nd * kept_row(p) * sizeof(double);
  double *a = slem_tilecache_derive(tc, tile, nd, bytes);
  if (!a) return;
  memcpy(a, p->xp, nd * d * sizeof *a), a += nd * d;
  memcpy(a, p->v, nd * r * sizeof *a), a += nd * r;
  memcpy(a, p->z, nd * r * sizeof *a), a += nd * r;
  memcpy(a, p->nrm, nd * sizeof *a), a += nd;
  if (p->couple) {
    memcpy(a, p->tt, nd * sizeof *a), a += nd;
    memcpy(a, p->tv, nd * r * sizeof *a);
  }
}

/* dp gets the kept projections a of a tile of nd rows: what slem_kproj_run_fixed() gave for
 * the same rows (its numbers depend on the row alone). */
static void kept_restore(KernelScorer *s, const double *a, size_t nd) {
  SlemKProj *p = s->dp;
  size_t d = p->c->d, r = slem_cache_kernel(p->c)->r;
  p->rows = nd;
  memcpy(p->xp, a, nd * d * sizeof *a), a += nd * d;
  memcpy(p->v, a, nd * r * sizeof *a), a += nd * r;
  memcpy(p->z, a, nd * r * sizeof *a), a += nd * r;
  memcpy(p->nrm, a, nd * sizeof *a), a += nd;
  if (p->couple) {
    memcpy(p->tt, a, nd * sizeof *a), a += nd;
    memcpy(p->tv, a, nd * r * sizeof *a);
  }
}

/* The weight of row i's part outside the span: 1 / lambda, or t when coupled. */
static double tw(const SlemKProj *p, size_t i) { return p->couple ? p->tt[i] : 1 / slem_cache_kernel(p->c)->lambda; }

/* |z| / N and |v| t / N of the rows of p (t = 1 / lambda without coupling), 0 where N is
 * 0. */
static void row_factors(const SlemKProj *p, double *a, double *b) {
  size_t r = slem_cache_kernel(p->c)->r;
  for (size_t i = 0; i < p->rows; i++) {
    double n = p->nrm[i];
    a[i] = n > 0 ? sqrt(slem_dot_f64(p->z + i * r, p->z + i * r, r)) / n : 0;
    b[i] = n > 0 ? sqrt(slem_dot_f64(p->v + i * r, p->v + i * r, r)) * fabs(tw(p, i)) / n : 0;
  }
}

static int kernel_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err) {
  KernelScorer *s = (KernelScorer *)self;
  int st;
  /* each block of queries streams the whole database: its rows are counted once */
  if (s->blocks++ == 1) s->db_clamps = slem_kproj_clamps(s->dp);
  st = slem_vecreader_read(r, s->qx, self->max_q, got, err);
  if (st || *got == 0) return st;
  st = slem_kproj_run_fixed(s->qp, s->qx, *got, slem_vecreader_name(r),
                            slem_vecreader_done(r) - *got + 1, err);
  if (!st) row_factors(s->qp, s->qa, s->qb);
  return st;
}

/* Queries lo to hi of the tile: K = k(q_i, x_j) into sd, each slem_kernel_eval's double
 * (so that the exact score sees the same K), and kmax. */
static void kernel_rows(void *ctx, size_t lo, size_t hi) {
  KernelScorer *s = ctx;
  const SlemKProj *q = s->qp, *x = s->dp;
  const SlemCache *c = q->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t nd = x->rows, d = c->d;
  double g8[SLEM_KLANES];
  /* a group of tile rows (8 d doubles) stays in the first-level cache for the chunk's
   * queries */
  for (size_t j = 0; j < nd; j += SLEM_KLANES) {
    size_t m = nd - j < SLEM_KLANES ? nd - j : SLEM_KLANES;
    for (size_t i = lo; i < hi; i++) {
      slem_kernel_eval_lanes(&kc->kernel, q->xp + i * d, s->xt + j * d, d, g8);
      memcpy(s->sd + i * nd + j, g8, m * sizeof *g8);
    }
  }
  for (size_t i = lo; i < hi; i++) {
    double km = 0, *si = s->sd + i * nd;
    for (size_t j = 0; j < nd; j++) {
      double kw = x->couple ? fabs(si[j] * x->tt[j]) : fabs(si[j]);
      if (x->nrm[j] > 0 && kw / x->nrm[j] > km) km = kw / x->nrm[j];
    }
    s->kmax[i] = km;
  }
}

static int kernel_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                       uint64_t first_record, SlemError *err) {
  KernelScorer *s = (KernelScorer *)self;
  const SlemKProj *q = s->qp, *x = s->dp;
  const SlemCache *c = q->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t nq = self->nq, r = kc->r, d = c->d;
  double lam2 = kc->lambda * kc->lambda, *sd = s->sd;
  SlemTileCache *tc = self->tiles;
  const double *kept;
  if (s->packed) { /* projected once, by slem-encode --projections */
    int st = slem_kproj_unpack(s->dp, rows, nd, name, first_record, err);
    if (st) return st;
  } else if (self->replay && tc && (kept = slem_tilecache_derived(tc, self->tile, nd)) != NULL) {
    kept_restore(s, kept, nd);
  } else {
    /* slem_match() reads the files again: the projections kept are idle */
    if (s->blocks > 1 && tc) slem_tilecache_drop_derived(tc);
    int st = slem_kproj_run_fixed(s->dp, rows, nd, name, first_record, err);
    if (st) return st;
    if (self->keep && tc) kept_add(s, tc, self->tile);
  }
  s->amax = s->bmax = 0;
  if (nq == 0 || nd == 0) return SLEM_OK;
  for (size_t j = 0; j < nd; j++) {
    double n = x->nrm[j], a, b;
    if (!(n > 0)) continue;
    a = sqrt(slem_dot_f64(x->z + j * r, x->z + j * r, r)) / n;
    b = x->couple ? sqrt(slem_dot_f64(x->v + j * r, x->v + j * r, r)) * fabs(x->tt[j]) / n
                  : sqrt(slem_dot_f64(x->v + j * r, x->v + j * r, r)) / (kc->lambda * n);
    if (a > s->amax) s->amax = a;
    if (b > s->bmax) s->bmax = b;
  }
  slem_kernel_lanes(s->xt, x->xp, nd, d);
  slem_blas_par_chunks(nq, 32, kernel_rows, s);
  if (q->couple) {
    for (size_t i = 0; i < nq; i++)
      for (size_t j = 0; j < nd; j++) sd[i * nd + j] *= q->tt[i] * x->tt[j];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, 1.0, q->z,
                (int)r, x->z, (int)r, 1.0, sd, (int)nd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, -1.0, q->tv,
                (int)r, x->tv, (int)r, 1.0, sd, (int)nd);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, 1.0, q->z,
                (int)r, x->z, (int)r, 1.0 / lam2, sd, (int)nd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, -1.0 / lam2,
                q->v, (int)r, x->v, (int)r, 1.0, sd, (int)nd);
  }
  for (size_t i = 0; i < nq; i++)
    for (size_t j = 0; j < nd; j++) {
      double den = q->nrm[i] * x->nrm[j];
      scores[i * nd + j] = (float)(den > 0 ? sd[i * nd + j] / den : 0);
    }
  return SLEM_OK;
}

static double kernel_slack(const SlemScorer *self, size_t i) {
  const KernelScorer *s = (const KernelScorer *)self;
  double n = s->qp->nrm[i], lam2 = slem_cache_kernel(s->qp->c)->lambda * slem_cache_kernel(s->qp->c)->lambda;
  if (!(n > 0)) return 0;
  if (s->qp->couple)
    return s->c * (s->qa[i] * s->amax + s->qb[i] * s->bmax + s->kmax[i] * fabs(s->qp->tt[i]) / n);
  return s->c * (s->qa[i] * s->amax + s->qb[i] * s->bmax + s->kmax[i] / (lam2 * n));
}

static double kernel_exact(const SlemScorer *self, size_t i, size_t j) {
  const KernelScorer *s = (const KernelScorer *)self;
  const SlemKProj *q = s->qp, *x = s->dp;
  const SlemCache *c = q->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t r = kc->r, d = c->d;
  double lam2 = kc->lambda * kc->lambda, den = q->nrm[i] * x->nrm[j], t;
  if (!(den > 0)) return 0;
  if (q->couple) {
    double w = q->tt[i] * x->tt[j];
    t = slem_kernel_eval(&kc->kernel, q->xp + i * d, x->xp + j * d, d) * w;
    t += slem_dot_f64(q->z + i * r, x->z + j * r, r);
    t -= slem_dot_f64(q->v + i * r, x->v + j * r, r) * w;
    return t / den;
  }
  t = slem_kernel_eval(&kc->kernel, q->xp + i * d, x->xp + j * d, d) / lam2;
  t += slem_dot_f64(q->z + i * r, x->z + j * r, r);
  t -= slem_dot_f64(q->v + i * r, x->v + j * r, r) / lam2;
  return t / den;
}

static uint64_t kernel_clamps(const SlemScorer *self) {
  const KernelScorer *s = (const KernelScorer *)self;
  return slem_kproj_clamps(s->qp) + (s->blocks > 1 ? s->db_clamps : slem_kproj_clamps(s->dp));
}

static void kernel_destroy(SlemScorer *self) {
  KernelScorer *s = (KernelScorer *)self;
  slem_kproj_free(s->qp);
  slem_kproj_free(s->dp);
  free(s->qx);
  free(s->sd);
  free(s->xt);
  free(s->kmax);
  free(s->qa);
  free(s->qb);
  free(s);
}

static const SlemScorerOps kernel_ops = {"kernel SLEM", kernel_queries, kernel_tile, kernel_slack,
                                         kernel_exact, kernel_clamps, kernel_destroy,
                                         NULL};

void slem_scorer_kernel_projections(SlemScorer *self) {
  KernelScorer *s = (KernelScorer *)self;
  s->packed = 1; /* slem_match() keeps the packed rows themselves */
}

int slem_scorer_kernel_new(SlemScorer **self, const SlemCache *cache, size_t max_q,
                           size_t max_d, int couple, SlemError *err) {
  KernelScorer *s = calloc(1, sizeof *s);
  int st;
  *self = NULL;
  if (!s) return slem_error(err, SLEM_ENOMEM, "out of memory");
  s->base = (SlemScorer){&kernel_ops, cache->d, max_q, max_d, 0, 0, 0, 0, 0, 0, 0, NULL};
  if ((st = slem_kproj_new(&s->qp, cache, max_q, couple, err)) != SLEM_OK ||
      (st = slem_kproj_new(&s->dp, cache, max_d, couple, err)) != SLEM_OK) {
    kernel_destroy(&s->base);
    return st;
  }
  s->c = 1.01 * (2 * slem_scorer_gamma(2.0 * (double)slem_cache_kernel(cache)->r + 8, 0x1p-53) + 6 * 0x1p-24);
  s->qx = slem_mem_alloc_large(max_q * cache->d * sizeof *s->qx);
  s->sd = slem_mem_alloc_large(max_q * max_d * sizeof *s->sd);
  s->xt = slem_mem_alloc_large(slem_kernel_lanes_size(max_d, cache->d) * sizeof *s->xt);
  s->kmax = malloc(max_q * sizeof *s->kmax);
  s->qa = malloc(max_q * sizeof *s->qa);
  s->qb = malloc(max_q * sizeof *s->qb);
  if (!s->qx || !s->sd || !s->xt || !s->kmax || !s->qa || !s->qb) {
    kernel_destroy(&s->base);
    return slem_error(err, SLEM_ENOMEM, "out of memory for the kernel match tiles");
  }
  *self = &s->base;
  return SLEM_OK;
}

#include "kproj.h"

#include "mem.h"
#include "blas.h"
#include "dot.h"
#include "kernel.h"
#include "rowmul.h"
#include "tilecache.h"
#include "var_kernel.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static SlemKProjFinish couple_finish(int couple);

/* Rows per chunk of slem_kproj_run(), fixed from the start of the block. Each row's
 * numbers depend on that row alone (the products row by row, rowmul.h; the triangular
 * solve row by row), so the chunks change nothing but the time. */
#define KPROJ_CHUNK 256

/* Rows of the coupling's product V B^T at a time in slem_kproj_run() (its scratch vb). */
#define KPROJ_SUB 16

/* Threads of slem_kproj_run_fixed() at most. */
#define SLEM_KPROJ_THREADS 64

/* Below this fraction of k(x, x), u^2 is rounding: x lies in the span and is not coupled. */
#define COUPLE_FLOOR 1e-12

int slem_kproj_new(SlemKProj **self, const SlemCache *cache, size_t max_rows, int couple,
                   SlemError *err) {
  SlemKProj *p;
  const SlemCacheKernel *kc = slem_cache_kernel(cache);
  size_t d = cache->d, r, n;
  *self = NULL;
  if (!kc)
    return slem_error(err, SLEM_EINVAL, "%s is not a kernel cache", slem_cache_path(cache));
  r = kc->r;
  if (couple && !couple_finish(couple))
    return slem_error(err, SLEM_EINVAL, "no coupling %d", couple);
  if (couple && !kc->couple)
    return slem_error(err, SLEM_EINVAL, "%s was made without --couple: the coupling needs the "
                      "negatives and B it keeps (slem-negstats --kernel ... --couple)",
                      slem_cache_path(cache));
  n = (size_t)cache->n;
  p = calloc(1, sizeof *p);
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  p->c = cache;
  p->couple = couple;
  p->finish = couple ? couple_finish(couple) : NULL;
  p->max_rows = max_rows;
  p->xp = slem_mem_alloc_large(max_rows * d * sizeof *p->xp);
  p->v = slem_mem_alloc_large(max_rows * r * sizeof *p->v);
  p->z = slem_mem_alloc_large(max_rows * r * sizeof *p->z);
  p->t = slem_mem_alloc_large(max_rows * r * sizeof *p->t);
  p->kxx = malloc(max_rows * sizeof *p->kxx);
  p->u2 = malloc(max_rows * sizeof *p->u2);
  p->nrm = malloc(max_rows * sizeof *p->nrm);
  if (kc->factor != SLEM_FACTOR_KPCA &&
      (p->pivt = malloc(slem_kernel_lanes_size(r, d) * sizeof *p->pivt)))
    slem_kernel_lanes(p->pivt, kc->pivots, r, d);
  if (!p->xp || !p->v || !p->z || !p->t || !p->kxx || !p->u2 || !p->nrm ||
      (kc->factor != SLEM_FACTOR_KPCA && !p->pivt)) {
    slem_kproj_free(p);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
  }
  if (kc->factor == SLEM_FACTOR_KPCA || couple) {
    if (n > SIZE_MAX / sizeof(double) / (max_rows ? max_rows : 1) ||
        !(p->kx = slem_mem_alloc_large(max_rows * n * sizeof *p->kx)) ||
        !(p->negt = slem_mem_alloc_large(slem_kernel_lanes_size(n, d) * sizeof *p->negt))) {
      slem_kproj_free(p);
      return slem_error(err, SLEM_ENOMEM, "out of memory for the kernel values of %zu vectors "
                        "against %zu negatives", max_rows, n);
    }
    slem_kernel_lanes(p->negt, kc->negs, n, d);
    if (!(p->negs_t = slem_mem_alloc_large(d * n * sizeof *p->negs_t)) ||
        !(p->negs2 = malloc(n * sizeof *p->negs2))) {
      slem_kproj_free(p);
      return slem_error(err, SLEM_ENOMEM, "out of memory for the negatives (%zu x %zu)", n, d);
    }
    slem_kernel_rows_prepare(p->negs_t, p->negs2, kc->negs, n, d);
  }
  if (kc->factor == SLEM_FACTOR_KPCA) {
    if (!(p->proj_t = slem_mem_alloc_large(n * r * sizeof *p->proj_t))) {
      slem_kproj_free(p);
      return slem_error(err, SLEM_ENOMEM, "out of memory for the projection (%zu x %zu)", r, n);
    }
    for (size_t l = 0; l < r; l++)
      for (size_t j = 0; j < n; j++) p->proj_t[j * r + l] = kc->proj[l * n + j];
  } else {
    if (!(p->piv_t = malloc(d * r * sizeof *p->piv_t)) ||
        !(p->piv2 = malloc(r * sizeof *p->piv2))) {
      slem_kproj_free(p);
      return slem_error(err, SLEM_ENOMEM, "out of memory for the pivots (%zu x %zu)", r, d);
    }
    slem_kernel_rows_prepare(p->piv_t, p->piv2, kc->pivots, r, d);
  }
  if (couple) {
    p->tt = malloc(max_rows * sizeof *p->tt);
    p->tv = slem_mem_alloc_large(max_rows * r * sizeof *p->tv);
    p->a0 = slem_mem_alloc_large(max_rows * r * sizeof *p->a0);
    p->bneg_t = slem_mem_alloc_large(r * n * sizeof *p->bneg_t);
    size_t chunks = ((max_rows ? max_rows : 1) + KPROJ_CHUNK - 1) / KPROJ_CHUNK;
    p->vb = slem_mem_alloc_large(chunks * KPROJ_SUB * n * sizeof *p->vb);
    if (!p->tt || !p->tv || !p->a0 || !p->bneg_t || !p->vb) {
      slem_kproj_free(p);
      return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
    }
  }
  if (couple)
    for (size_t j = 0; j < n; j++)
      for (size_t l = 0; l < r; l++) p->bneg_t[l * n + j] = kc->bneg[j * r + l];
  *self = p;
  return SLEM_OK;
}

void slem_kproj_free(SlemKProj *self) {
  if (!self) return;
  free(self->xp);
  free(self->v);
  free(self->z);
  free(self->t);
  free(self->kxx);
  free(self->u2);
  free(self->nrm);
  free(self->kx);
  free(self->tt);
  free(self->tv);
  free(self->a0);
  free(self->pivt);
  free(self->negt);
  free(self->negs_t);
  free(self->negs2);
  free(self->piv_t);
  free(self->piv2);
  free(self->proj_t);
  free(self->bneg_t);
  free(self->vb);
  free(self);
}

uint64_t slem_kproj_clamps(const SlemKProj *self) { return self->clamps; }
const double *slem_kproj_v(const SlemKProj *self) { return self->v; }
const double *slem_kproj_z(const SlemKProj *self) { return self->z; }
size_t slem_kproj_rows(const SlemKProj *self) { return self->rows; }

/* A SlemKProjFinish does with the coupled z of row i (beta its weight on the new direction
 * e, u the norm of phi(x) outside the span) what its coupling does: sets tt[i] (t, the
 * weight of the part outside the span) and nrm[i]. */

/* The inner product of the coupled descriptors: t = beta / u, N^2 = z.z + beta^2. */
static void finish_exact(SlemKProj *self, size_t i, double beta, double u) {
  size_t r = slem_cache_kernel(self->c)->r;
  const double *zi = self->z + i * r;
  self->tt[i] = beta / u;
  self->nrm[i] = sqrt(slem_dot_f64(zi, zi, r) + beta * beta);
}

/* slem_similarity.m: the coupled z, the part outside the span weighed as uncoupled. */
static void finish_authors(SlemKProj *self, size_t i, double beta, double u) {
  size_t r = slem_cache_kernel(self->c)->r;
  const double *zi = self->z + i * r;
  double lam = slem_cache_kernel(self->c)->lambda;
  (void)beta;
  self->tt[i] = 1 / lam;
  self->nrm[i] = sqrt(slem_dot_f64(zi, zi, r) + u * u / (lam * lam));
}

/* The couplings: a new one is a finish function and a line here (its number and name in
 * vectypes.h). */
static const struct {
  int couple;
  SlemKProjFinish finish;
} couplings[] = {
    {SLEM_COUPLE_EXACT, finish_exact},
    {SLEM_COUPLE_AUTHORS, finish_authors},
};

#define NCOUPLINGS (sizeof couplings / sizeof couplings[0])

static SlemKProjFinish couple_finish(int couple) {
  for (size_t i = 0; i < NCOUPLINGS; i++)
    if (couplings[i].couple == couple) return couplings[i].finish;
  return NULL;
}

/* The coupling of row i, from its w (kx row i, already (k(x_j, x) - b_j.v) / u), the sums
 * wbar = sum w / n and ww = sum w^2 / n, and its a0 = B^T w / n (a0 row i): with y the
 * uncoupled z of the row,
 *   a0 -= mu_B wbar,  a00 = ww - wbar^2 + lambda,  g = G^-1 a0,
 *   eta = 1 / (a00 - a0.g),  xi = u - wbar - a0.y,  beta = eta xi,
 *   z = y - beta g, then t and N by the coupling (finish_exact(), finish_authors()). */
static void couple_row(SlemKProj *self, size_t i, double wbar, double ww) {
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t r = kc->r;
  double *a0 = self->a0 + i * r, *g = self->t + i * r, *zi = self->z + i * r;
  double u = sqrt(self->u2[i]), a00 = ww - wbar * wbar + kc->lambda, eta, xi, beta;
  for (size_t l = 0; l < r; l++) a0[l] -= kc->mu[l] * wbar;
  for (size_t l = 0; l < r; l++) g[l] = slem_dot_f64(kc->ginv + l * r, a0, r);
  eta = 1 / (a00 - slem_dot_f64(a0, g, r));
  xi = u - wbar - slem_dot_f64(a0, zi, r);
  beta = eta * xi;
  for (size_t l = 0; l < r; l++) zi[l] -= beta * g[l];
  self->finish(self, i, beta, u);
  for (size_t l = 0; l < r; l++) self->tv[i * r + l] = self->tt[i] * self->v[i * r + l];
}

/* A row not coupled: its part outside the span weighs 1 / lambda, as without coupling. */
static void uncoupled_row(SlemKProj *self, size_t i) {
  size_t r = slem_cache_kernel(self->c)->r;
  self->tt[i] = 1 / slem_cache_kernel(self->c)->lambda;
  for (size_t l = 0; l < r; l++) self->tv[i * r + l] = self->tt[i] * self->v[i * r + l];
}

static int couples(const SlemKProj *self, size_t i) {
  return self->u2[i] > COUPLE_FLOOR * self->kxx[i];
}

/* slem_kproj_run() for rows lo to hi of the block. */
static void run_rows(void *ctx, size_t lo, size_t hi) {
  SlemKProj *self = ctx;
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t d = c->d, r = kc->r, n = (size_t)c->n, b = hi - lo;
  double lam2 = kc->lambda * kc->lambda;
  double *xp = self->xp + lo * d, *v = self->v + lo * r, *z = self->z + lo * r;
  double *t = self->t + lo * r, *kx = self->kx ? self->kx + lo * n : NULL;
  uint64_t clamps = 0;
  if (kx) slem_kernel_rows(&kc->kernel, kx, xp, b, kc->negs, self->negs_t, self->negs2, n, d);
  if (kc->factor == SLEM_FACTOR_KPCA) {
    /* v = D_r^-1/2 U_r^T k(negatives, x): V(b, r) = K(x, X) proj^T */
    slem_rowmul_f64(v, r, kx, n, b, self->proj_t, r, n, r);
  } else {
    /* v = L_P^-1 k(x, pivots), row by row: forward substitution, each sum in a fixed order */
    slem_kernel_rows(&kc->kernel, v, xp, b, kc->pivots, self->piv_t, self->piv2, r, d);
    for (size_t i = 0; i < b; i++) {
      double *vi = v + i * r;
      for (size_t j = 0; j < r; j++)
        vi[j] = (vi[j] - slem_dot_f64(kc->lp + j * r, vi, j)) / kc->lp[j * r + j];
    }
  }
  /* z = (v - mu_B) G^-1, G^-1 symmetric */
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < r; j++) t[i * r + j] = v[i * r + j] - kc->mu[j];
  slem_rowmul_f64(z, r, t, r, b, kc->ginv, r, r, r);
  for (size_t i = lo; i < hi; i++) {
    const double *xi = self->xp + i * d, *vi = self->v + i * r, *zi = self->z + i * r;
    double kxx = slem_kernel_eval(&kc->kernel, xi, xi, d), u2 = kxx - slem_dot_f64(vi, vi, r);
    if (u2 < 0) {
      if (u2 < -1e-9 * (fabs(kxx) + 1e-300)) clamps++;
      u2 = 0;
    }
    self->kxx[i] = kxx;
    self->u2[i] = u2;
    self->nrm[i] = sqrt(slem_dot_f64(zi, zi, r) + u2 / lam2);
  }
  __atomic_fetch_add(&self->clamps, clamps, __ATOMIC_RELAXED);
  if (!self->couple) return;
  /* W(b, n) = (K(x, X) - V B^T) / u by rows, then A0(b, r) = W B / n; the chunk's rows
   * KPROJ_SUB at a time through the chunk's own rows of vb */
  double *vb = self->vb + lo / KPROJ_CHUNK * KPROJ_SUB * n;
  for (size_t i0 = 0; i0 < b; i0 += KPROJ_SUB) {
    size_t m = b - i0 < KPROJ_SUB ? b - i0 : KPROJ_SUB;
    slem_rowmul_f64(vb, n, v + i0 * r, r, m, self->bneg_t, n, r, n);
    for (size_t i = i0; i < i0 + m; i++) {
      double sc = couples(self, lo + i) ? 1 / sqrt(self->u2[lo + i]) : 0;
      for (size_t j = 0; j < n; j++)
        kx[i * n + j] = (kx[i * n + j] - vb[(i - i0) * n + j]) * sc;
    }
  }
  slem_rowmul_f64(self->a0 + lo * r, r, kx, n, b, kc->bneg, r, n, r);
  for (size_t i = 0; i < b * r; i++) self->a0[lo * r + i] /= (double)n;
  for (size_t i = lo; i < hi; i++) {
    const double *w = self->kx + i * n;
    double sw = 0, sww = 0;
    if (!couples(self, i)) {
      uncoupled_row(self, i);
      continue;
    }
    for (size_t j = 0; j < n; j++) sw += w[j], sww += w[j] * w[j];
    couple_row(self, i, sw / (double)n, sww / (double)n);
  }
}

int slem_kproj_run(SlemKProj *self, const double *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err) {
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  int st;
  self->rows = b;
  if (b == 0) return SLEM_OK;
  memcpy(self->xp, x, b * c->d * sizeof *x);
  st = slem_kernel_prepare(&kc->kernel, self->xp, b, c->d, name, first_record, err);
  if (st) return st;
  slem_blas_par_chunks(b, KPROJ_CHUNK, run_rows, self);
  return SLEM_OK;
}

void slem_kproj_descriptors(const SlemKProj *self, float *y) {
  size_t r = slem_cache_kernel(self->c)->r;
  for (size_t i = 0; i < self->rows; i++) {
    double s = self->nrm[i] > 0 ? 1 / self->nrm[i] : 0;
    for (size_t j = 0; j < r; j++) y[i * r + j] = (float)(self->z[i * r + j] * s);
  }
}

void slem_kproj_descriptors_f64(const SlemKProj *self, double *y) {
  size_t r = slem_cache_kernel(self->c)->r;
  for (size_t i = 0; i < self->rows; i++) {
    double s = self->nrm[i] > 0 ? 1 / self->nrm[i] : 0;
    for (size_t j = 0; j < r; j++) y[i * r + j] = self->z[i * r + j] * s;
  }
}

void slem_kproj_similarity(double *s, const SlemKProj *q, const SlemKProj *db) {
  const SlemCache *c = q->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t nq = q->rows, nd = db->rows, r = kc->r;
  double lam2 = kc->lambda * kc->lambda;
  if (nq == 0 || nd == 0) return;
  slem_kernel_block(&kc->kernel, s, q->xp, nq, db->xp, nd, c->d);
  if (q->couple && db->couple) {
    /* s = K t t' + Z_q Z_d^T - (t V_q)(t' V_d)^T, then / (N_q N_d) */
    for (size_t i = 0; i < nq; i++)
      for (size_t j = 0; j < nd; j++) s[i * nd + j] *= q->tt[i] * db->tt[j];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, 1.0, q->z,
                (int)r, db->z, (int)r, 1.0, s, (int)nd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, -1.0, q->tv,
                (int)r, db->tv, (int)r, 1.0, s, (int)nd);
  } else {
    /* s = K / lambda^2 + Z_q Z_d^T - V_q V_d^T / lambda^2, then / (N_q N_d) */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, 1.0, q->z,
                (int)r, db->z, (int)r, 1.0 / lam2, s, (int)nd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)r, -1.0 / lam2,
                q->v, (int)r, db->v, (int)r, 1.0, s, (int)nd);
  }
  for (size_t i = 0; i < nq; i++)
    for (size_t j = 0; j < nd; j++) {
      double den = q->nrm[i] * db->nrm[j];
      s[i * nd + j] = den > 0 ? s[i * nd + j] / den : 0;
    }
}

/* out(n) = k(x, y_j) for the n rows of yt (side by side), each slem_kernel_eval's double. */
static void kernel_row(const SlemKernel *k, double *out, const double *x, const double *yt,
                       size_t n, size_t d) {
  double g8[SLEM_KLANES];
  for (size_t j = 0; j < n; j += SLEM_KLANES) {
    size_t m = n - j < SLEM_KLANES ? n - j : SLEM_KLANES;
    slem_kernel_eval_lanes(k, x, yt + j * d, d, g8);
    memcpy(out + j, g8, m * sizeof *g8);
  }
}

/* The doubles of scratch fixed_group() needs: k(x, pivots) (kpca: k(x, negatives)), v and
 * v - mu_B, each side by side for SLEM_KLANES rows. */
static size_t group_scratch(const SlemCache *c) {
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t nk = kc->factor == SLEM_FACTOR_KPCA ? (size_t)c->n : kc->r;
  return (nk + 2 * kc->r) * SLEM_KLANES;
}

/* v and z of rows i0 to i0 + m - 1 (m <= SLEM_KLANES) by slem_kproj_run_fixed(): every sum in
 * a fixed order, no BLAS, the rows side by side in w only so that each step runs on
 * SLEM_KLANES rows at once (slem_dot_f64_lanes: each row's bits those of slem_dot_f64
 * alone), no state shared with the other rows but the cache (read only). */
static void fixed_group(SlemKProj *self, size_t i0, size_t m, double *w) {
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t d = c->d, r = kc->r, n = (size_t)c->n, L = SLEM_KLANES;
  int kpca = kc->factor == SLEM_FACTOR_KPCA;
  size_t nk = kpca ? n : r;
  double *kt = w, *vt = w + nk * L, *tt = vt + r * L, out[SLEM_KLANES];
  memset(kt, 0, nk * L * sizeof *kt); /* lanes past m stay 0 */
  for (size_t g = 0; g < m; g++) {
    size_t i = i0 + g;
    const double *xi = self->xp + i * d;
    double *kx = self->kx ? self->kx + i * n : NULL, *ti = self->t + i * r;
    if (kx) kernel_row(&kc->kernel, kx, xi, self->negt, n, d);
    if (kpca) {
      for (size_t j = 0; j < n; j++) kt[j * L + g] = kx[j];
    } else {
      kernel_row(&kc->kernel, ti, xi, self->pivt, r, d); /* k(x, pivots) in ti meanwhile */
      for (size_t l = 0; l < r; l++) kt[l * L + g] = ti[l];
    }
  }
  if (kpca) {
    for (size_t l = 0; l < r; l++) slem_dot_f64_lanes(kc->proj + l * n, kt, n, vt + l * L);
  } else {
    /* v = L_P^-1 k(x, pivots) by forward substitution */
    for (size_t l = 0; l < r; l++) {
      slem_dot_f64_lanes(kc->lp + l * r, vt, l, out);
      for (size_t g = 0; g < L; g++) vt[l * L + g] = (kt[l * L + g] - out[g]) / kc->lp[l * r + l];
    }
  }
  for (size_t l = 0; l < r; l++)
    for (size_t g = 0; g < L; g++) tt[l * L + g] = vt[l * L + g] - kc->mu[l];
  /* z = G^-1 (v - mu_B) */
  for (size_t l = 0; l < r; l++) {
    slem_dot_f64_lanes(kc->ginv + l * r, tt, r, out);
    for (size_t g = 0; g < m; g++) self->z[(i0 + g) * r + l] = out[g];
  }
  for (size_t g = 0; g < m; g++)
    for (size_t l = 0; l < r; l++) {
      self->v[(i0 + g) * r + l] = vt[l * L + g];
      self->t[(i0 + g) * r + l] = tt[l * L + g];
    }
}

/* The rest of row i once fixed_group() gave its v and z: k(x, x), u, N and the coupling,
 * each sum in a fixed order; returns 1 when its u^2 was clamped beyond rounding. */
static int fixed_row(SlemKProj *self, size_t i) {
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t d = c->d, r = kc->r, n = (size_t)c->n;
  double lam2 = kc->lambda * kc->lambda;
  const double *xi = self->xp + i * d;
  double *vi = self->v + i * r, *zi = self->z + i * r;
  double *kx = self->kx ? self->kx + i * n : NULL;
  double kxx, u2, vv;
  kxx = slem_kernel_eval(&kc->kernel, xi, xi, d);
  vv = slem_dot_f64(vi, vi, r);
  u2 = kxx - vv;
  if (u2 < 0) u2 = 0;
  self->kxx[i] = kxx;
  self->u2[i] = u2;
  self->nrm[i] = sqrt(slem_dot_f64(zi, zi, r) + u2 / lam2);
  if (self->couple) {
    if (!couples(self, i)) {
      uncoupled_row(self, i);
    } else {
      double u = sqrt(u2), sw = 0, sww = 0, *a0 = self->a0 + i * r;
      for (size_t j = 0; j < n; j++) {
        kx[j] = (kx[j] - slem_dot_f64(kc->bneg + j * r, vi, r)) / u;
        sw += kx[j];
        sww += kx[j] * kx[j];
      }
      /* a0 = B^T w / n, each sum over the negatives in their order */
      for (size_t l = 0; l < r; l++) {
        double s = 0;
        for (size_t j = 0; j < n; j++) s += kc->bneg[j * r + l] * kx[j];
        a0[l] = s / (double)n;
      }
      couple_row(self, i, sw / (double)n, sww / (double)n);
    }
  }
  return kxx - vv < -1e-9 * (fabs(kxx) + 1e-300);
}

/* The rows of a block shared among threads: each row's numbers depend on that row alone,
 * so the split changes nothing but the time. */
typedef struct FixedJob {
  SlemKProj *self;
  size_t lo, hi, clamps;
  double *w; /* group_scratch() doubles */
} FixedJob;

static void *fixed_rows(void *arg) {
  FixedJob *job = arg;
  for (size_t i = job->lo; i < job->hi; i += SLEM_KLANES)
    fixed_group(job->self, i, job->hi - i < SLEM_KLANES ? job->hi - i : SLEM_KLANES, job->w);
  for (size_t i = job->lo; i < job->hi; i++) job->clamps += (size_t)fixed_row(job->self, i);
  return NULL;
}

int slem_kproj_run_fixed(SlemKProj *self, const double *x, size_t b, const char *name,
                         uint64_t first_record, SlemError *err) {
  const SlemCache *c = self->c;
  const SlemCacheKernel *kc = slem_cache_kernel(c);
  size_t d = c->d, nt = 1, started = 0, ws = group_scratch(c);
  FixedJob job[SLEM_KPROJ_THREADS];
  double *w;
  pthread_t tid[SLEM_KPROJ_THREADS];
  int st;
  self->rows = b;
  if (b == 0) return SLEM_OK;
  memcpy(self->xp, x, b * d * sizeof *x);
  /* the input transform is per value, so per row */
  st = slem_kernel_prepare(&kc->kernel, self->xp, b, d, name, first_record, err);
  if (st) return st;
  /* as many threads as BLAS may use (the BLAS threads are idle meanwhile), a few rows
   * each at least */
  if (slem_blas_threads() > 1) nt = (size_t)slem_blas_threads();
  if (nt > SLEM_KPROJ_THREADS) nt = SLEM_KPROJ_THREADS;
  if (nt > b / 4) nt = b / 4 ? b / 4 : 1;
  if (!(w = malloc(nt * ws * sizeof *w)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for the projections of %zu vectors", b);
  for (size_t t = 0; t < nt; t++)
    job[t] = (FixedJob){self, b * t / nt, b * (t + 1) / nt, 0, w + t * ws};
  for (size_t t = 1; t < nt; t++, started++)
    if (pthread_create(&tid[t - 1], NULL, fixed_rows, &job[t]) != 0) break;
  /* rows of threads that could not start are done here */
  for (size_t t = started + 1; t < nt; t++) fixed_rows(&job[t]);
  fixed_rows(&job[0]);
  for (size_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
  for (size_t t = 0; t < nt; t++) self->clamps += job[t].clamps;
  free(w);
  return SLEM_OK;
}

void slem_kproj_pack(const SlemKProj *self, double *out) {
  size_t d = self->c->d, r = slem_cache_kernel(self->c)->r, w = SLEM_KPROJ_WIDTH(d, r, self->couple);
  for (size_t i = 0; i < self->rows; i++) {
    double *o = out + i * w;
    memcpy(o, self->xp + i * d, d * sizeof *o), o += d;
    memcpy(o, self->v + i * r, r * sizeof *o), o += r;
    memcpy(o, self->z + i * r, r * sizeof *o), o += r;
    *o++ = self->nrm[i];
    if (self->couple) *o = self->tt[i];
  }
}

int slem_kproj_unpack(SlemKProj *self, const double *rows, size_t b, const char *name,
                      uint64_t first_record, SlemError *err) {
  size_t d = self->c->d, r = slem_cache_kernel(self->c)->r, w = SLEM_KPROJ_WIDTH(d, r, self->couple);
  int hist = slem_kernel_needs_histograms(&slem_cache_kernel(self->c)->kernel);
  self->rows = 0;
  for (size_t i = 0; i < b; i++) {
    const double *o = rows + i * w;
    if (!(o[d + 2 * r] >= 0))
      return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": a negative norm N (%g) in "
                        "the projections", name, first_record + i, o[d + 2 * r]);
    for (size_t j = 0; hist && j < d; j++)
      if (o[j] < 0)
        return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu is negative "
                          "(%g); the kernel needs histograms", name, first_record + i, j + 1, o[j]);
    memcpy(self->xp + i * d, o, d * sizeof *o), o += d;
    memcpy(self->v + i * r, o, r * sizeof *o), o += r;
    memcpy(self->z + i * r, o, r * sizeof *o), o += r;
    self->nrm[i] = *o++;
    if (self->couple) { /* t v as couple_row() makes it: not stored, so always t times v */
      self->tt[i] = *o;
      for (size_t l = 0; l < r; l++) self->tv[i * r + l] = self->tt[i] * self->v[i * r + l];
    }
  }
  self->rows = b;
  return SLEM_OK;
}

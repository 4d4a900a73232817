/* Kernel SLEM, applied: projection of new points against a kernel cache, explicit
 * descriptors and the exact similarity, and the kernel scorer of slem_match().
 *
 * With the cache's factor on the pivots (see kernel_stats.h for the model), a point x is
 * projected with the pivot extension
 *   v = L_P^-1 k(x, pivots),  u = sqrt(max(k(x, x) - |v|^2, 0)),  z = G^-1 (v - mu_B),
 * which costs O(r d + r^2); |v|^2 <= k(x, x) holds in exact arithmetic (v is the projection
 * of phi(x) on the span of the pivots), so u^2 is clamped at 0 only against rounding.
 * The exact similarity of x and x' is
 *   s = [z.z' + (k(x, x') - v.v') / lambda^2] / (N N'),  N = sqrt(z.z + u^2 / lambda^2),
 * and the explicit descriptor z / N (norm <= 1) drops the term outside the span.
 *
 * With a kernel PCA factor, v = D_r^-1/2 U_r^T k(negatives, x) instead (cache.h).
 *
 * The coupling (the ICD branch of the authors' slem_similarity.m, here for any factor):
 * the negatives' parts outside the span E are dropped by the factorisation, but each new
 * point x brings its own direction e = (phi(x) - P_E phi(x)) / u, on which negative j has
 * the coordinate w_j = (k(x_j, x) - b_j.v) / u. The exemplar problem is then solved
 * exactly in E + e, with the negatives' coordinates [b_j, w_j] and x at [v, u]: with
 * wbar = mean w, a0 = (1/n) B^T w - mu_B wbar, a00 = (1/n) w.w - wbar^2 + lambda (the new
 * row and column of G), by the Schur complement
 *   eta = 1 / (a00 - a0.G^-1 a0),  xi = u - wbar - a0.G^-1 (v - mu_B),
 *   beta = eta xi,  z = G^-1 (v - mu_B) - beta G^-1 a0.
 * The descriptor is z on E plus beta e, so N = sqrt(z.z + beta^2) and, with t = beta / u,
 *   s = [z.z' + t t' (k(x, x') - v.v')] / (N N'),
 * the inner product of the two descriptors (e.e' = (k(x, x') - v.v') / (u u')). Without
 * coupling beta = u / lambda, t = 1 / lambda: the formula above. (slem_similarity.m keeps
 * (k(x, x') - v.v') / lambda^2 for that term, the value it has when no negative has a
 * coordinate on e; slem uses the inner product of the descriptors it solves for.) A point
 * with u^2 <= 1e-12 k(x, x) lies in E and is not coupled. Costs O(n (d + r)) per point.
 *
 * The couplings are a table (kproj.c): "exact" (SLEM_COUPLE_EXACT, the default of
 * --couple) is the inner product above; "authors" (SLEM_COUPLE_AUTHORS) is the score of
 * slem_similarity.m itself, the coupled z with the uncoupled weight of the part outside
 * the span: t = 1 / lambda, N = sqrt(z.z + u^2 / lambda^2), so
 *   s = [z.z' + (k(x, x') - v.v') / lambda^2] / (N N')
 * with z the coupled one. It is not the cosine of two exemplars, but it ranks better on
 * some data (docs/family.md, "The family, measured").
 */
#ifndef SLEM_KPROJ_H
#define SLEM_KPROJ_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

/* The couplings: SLEM_COUPLE_*, slem_couple_parse() and slem_couple_name() of vectypes.h. */

/* Projections of blocks of points against a kernel cache. */
typedef struct SlemKProj SlemKProj;

/* A coupling's last step (kproj.c's table): the weight t and norm N of coupled row i. */
typedef void (*SlemKProjFinish)(struct SlemKProj *self, size_t i, double beta, double u);

/* Its fields are kproj.c's; scorer_kernel.c (the kernel scorer) reads them, no other file. */
struct SlemKProj {
  const SlemCache *c;
  int couple;            /* SLEM_COUPLE_*, 0 for none */
  SlemKProjFinish finish;   /* coupled: t and N of a coupled row */
  size_t max_rows, rows;
  double *xp;   /* xp(max_rows, d): prepared inputs */
  double *v;    /* v(max_rows, r) */
  double *z;    /* z(max_rows, r) */
  double *t;    /* t(max_rows, r): scratch */
  double *kxx;  /* k(x, x) */
  double *u2;   /* u^2 */
  double *nrm;  /* N */
  double *kx;   /* kpca or couple: kx(max_rows, n), k(x, negatives), then the coupling w */
  double *tt;   /* couple: tt(max_rows), the weight t of the part outside the span */
  double *tv;   /* couple: tv(max_rows, r) = t v */
  double *a0;   /* couple: a0(max_rows, r), then G^-1 a0 */
  double *pivt; /* the pivots side by side (slem_kernel_lanes), for slem_kproj_run_fixed() */
  double *negt; /* kpca or couple: the negatives side by side */
  /* for slem_kproj_run(), whose products go row by row (rowmul.h): the transposes of the
   * negatives (d, n) and of the pivots (d, r), their rows' squared norms, proj^T (n, r) for
   * kpca, bneg^T (r, n) and a scratch of KPROJ_SUB rows of n when coupled */
  double *negs_t, *negs2, *piv_t, *piv2, *proj_t, *bneg_t, *vb;
  uint64_t clamps;
};

/* For blocks of at most max_rows points; cache (borrowed) must be of kind kernel, and made
 * with --couple when couple (a SLEM_COUPLE_*) is not 0. Errors: SLEM_EINVAL, SLEM_ENOMEM. */
int slem_kproj_new(SlemKProj **self, const SlemCache *cache, size_t max_rows, int couple,
                   SlemError *err);
void slem_kproj_free(SlemKProj *self);

/* Projects x(b, d). name and first_record (from 1) name the input in errors. Errors:
 * SLEM_EFORMAT (a negative value for a histogram kernel). */
int slem_kproj_run(SlemKProj *self, const double *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err);

/* The same projections, computed row by row with every sum in a fixed order (no BLAS):
 * the v, z, u and N of a point then depend on that point alone, not on the block it came
 * in or the thread count. Slower than slem_kproj_run() by the BLAS factor; used by the
 * kernel scorer, whose exact scores must not depend on how the work was cut. */
int slem_kproj_run_fixed(SlemKProj *self, const double *x, size_t b, const char *name,
                         uint64_t first_record, SlemError *err);

/* The last block's v(b, r) (the coordinates of phi(x) in the factor's space) and
 * z(b, r) = G^-1 (v - mu_B), coupled when the projector is; borrowed, valid until the next
 * run. */
const double *slem_kproj_v(const SlemKProj *self);
const double *slem_kproj_z(const SlemKProj *self);

/* Explicit descriptors y(b, r) = z / N of the last block (zero where N is 0). */
void slem_kproj_descriptors(const SlemKProj *self, float *y);
void slem_kproj_descriptors_f64(const SlemKProj *self, double *y);

/* The projections of the last block, row by row (SLEM_KPROJ_WIDTH(d, r, couple) doubles a
 * row, vecs.h): the prepared features, v, z, N and, coupled, t; what a container
 * of kernel projections holds (slem-encode --projections). Computed by
 * slem_kproj_run_fixed(), they are what slem_match() computes for the same rows. */
void slem_kproj_pack(const SlemKProj *self, double *out);

/* The last block becomes the b rows rows(b, width) of slem_kproj_pack(), as if projected
 * (t v, coupled, recomputed from t and v as the projection computes it).
 * Checked: N >= 0 and, for the kernels of histograms, prepared features >= 0; name and
 * first_record (from 1) name the rows in errors (SLEM_EFORMAT). b <= max_rows. */
int slem_kproj_unpack(SlemKProj *self, const double *rows, size_t b, const char *name,
                      uint64_t first_record, SlemError *err);

/* s(nq, nd): exact similarities of the last blocks of q and db. Both projectors must be
 * over the same cache, with max_rows at least nq and nd. */
void slem_kproj_similarity(double *s, const SlemKProj *q, const SlemKProj *db);

/* Points whose u^2 came out negative beyond rounding (clamped to 0), over all blocks. */
uint64_t slem_kproj_clamps(const SlemKProj *self);

/* Rows in the last block. */
size_t slem_kproj_rows(const SlemKProj *self);

#endif

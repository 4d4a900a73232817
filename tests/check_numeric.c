/* Numerical properties of negstats and encode that do not come from the code under test:
 * the gradient of J vanishes at the closed form, the direction does not depend on theta,
 * lambda = 0 gives LDA, a large common offset costs no precision, shards merge exactly,
 * and the outputs agree with scikit-learn's weighted ridge regression (testdata/golden). */
#include "testutil.h"

#include <gsl/gsl_linalg.h>

#include "../lib/formats/cache.h"
#include "../lib/encode/var_linear.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/encode/slem_linear.h"
#include "../lib/linalg/blas.h"
#include "../lib/linalg/stats.h"
#include "../lib/formats/vecs.h"

/* Builds a linear cache from neg(n, d) through the real write and read path. */
static SlemCache *make_cache(const double *neg, size_t n, size_t d, double lambda) {
  SlemStats *s = NULL;
  SlemCache *c = NULL;
  SlemError err;
  double *x = malloc(n * d * sizeof *x), *ainv = malloc(d * d * sizeof *ainv), used;
  char *path = tu_path("numeric.slem");
  memcpy(x, neg, n * d * sizeof *x);
  ck_assert_int_eq(slem_stats_new(&s, d, 256, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_msg(slem_stats_inverse(s, ainv, &used, lambda, -1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_double_eq(used, lambda);
  SlemLinearInfo info = {used, -1, slem_stats_trace(s), slem_stats_rcond(s)};
  ck_assert_int_eq(slem_cache_write_linear(path, d, n, &info, slem_stats_mean(s), ainv, NULL, &err),
                   SLEM_OK);
  ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
  slem_stats_free(s);
  free(x);
  free(ainv);
  free(path);
  return c;
}

/* Gradient of J(w, b) = theta l(1, w.x0 + b) + (1/n) sum l(-1, w.xi + b) + lambda/2 |w|^2,
 * l(y, t) = (y - t)^2 / 2, written straight from the definition. g has d + 1 entries. */
static void grad_J(double *g, const double *w, double b, const double *x0, const double *neg,
                   size_t n, size_t d, double theta, double lambda) {
  double f0 = b, gb;
  for (size_t j = 0; j < d; j++) f0 += w[j] * x0[j];
  for (size_t j = 0; j < d; j++) g[j] = theta * (f0 - 1) * x0[j] + lambda * w[j];
  gb = theta * (f0 - 1);
  for (size_t i = 0; i < n; i++) {
    double fi = b;
    for (size_t j = 0; j < d; j++) fi += w[j] * neg[i * d + j];
    for (size_t j = 0; j < d; j++) g[j] += (fi + 1) * neg[i * d + j] / (double)n;
    gb += (fi + 1) / (double)n;
  }
  g[d] = gb;
}

START_TEST(gradient_vanishes_at_closed_form) {
  static const size_t dims[][2] = {{60, 5}, {200, 16}, {30, 40}}; /* n, d (n < d too) */
  static const double thetas[] = {1e-3, 1, 1e3};
  static const double lambdas[] = {1e-2, 1, 10};
  tu_seed(11);
  for (size_t pi = 0; pi < 3; pi++) {
    size_t n = dims[pi][0], d = dims[pi][1];
    double *neg = malloc(n * d * sizeof *neg), x0[64], out[65], g[65];
    SlemCache *c;
    tu_gaussian_rows(neg, n, d, 3.0);
    tu_gaussian_rows(x0, 1, d, 3.5);
    c = make_cache(neg, n, d, lambdas[pi]);
    for (size_t ti = 0; ti < 3; ti++) {
      SlemEncoder *e = NULL;
      SlemError err;
      double gn = 0, scale = 0;
      ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_CLASSIFIER, thetas[ti], 1, &err),
                       SLEM_OK);
      slem_encoder_run_f64(e, out, x0, 1);
      grad_J(g, out, out[d], x0, neg, n, d, thetas[ti], lambdas[pi]);
      /* scale: the size of the gradient's terms, so the bound is relative */
      for (size_t j = 0; j < d; j++) scale += fabs(x0[j]) * (thetas[ti] + 1);
      for (size_t j = 0; j <= d; j++) gn = fmax(gn, fabs(g[j]));
      ck_assert_msg(gn <= 1e-10 * scale, "n=%zu d=%zu theta=%g: |grad J| = %g (scale %g)", n, d,
                    thetas[ti], gn, scale);
      /* and J is not flat there: a step of 1e-3 along w_0 changes the gradient */
      out[0] += 1e-3;
      grad_J(g, out, out[d], x0, neg, n, d, thetas[ti], lambdas[pi]);
      ck_assert_double_gt(fabs(g[0]), 1e3 * gn);
      slem_encoder_free(e);
    }
    slem_cache_free(c);
    free(neg);
  }
}
END_TEST

START_TEST(direction_does_not_depend_on_theta) {
  size_t n = 120, d = 10;
  double *neg = malloc(n * d * sizeof *neg), x[3 * 10], unit[3 * 10], clf[3 * 11];
  static const double thetas[] = {1e-3, 1, 1e3};
  SlemCache *c;
  SlemEncoder *eu = NULL;
  SlemError err;
  tu_seed(12);
  tu_gaussian_rows(neg, n, d, -2.0);
  tu_gaussian_rows(x, 3, d, -1.0);
  c = make_cache(neg, n, d, 0.3);
  ck_assert_int_eq(slem_encoder_new(&eu, c, SLEM_ENCODE_UNIT, 1, 3, &err), SLEM_OK);
  slem_encoder_run_f64(eu, unit, x, 3);
  for (size_t t = 0; t < 3; t++) {
    SlemEncoder *e = NULL;
    ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_CLASSIFIER, thetas[t], 3, &err), SLEM_OK);
    slem_encoder_run_f64(e, clf, x, 3);
    for (size_t i = 0; i < 3; i++) {
      double nrm = 0;
      ck_assert_double_lt(tu_one_minus_cos(clf + i * (d + 1), unit + i * d, d), 1e-13);
      for (size_t j = 0; j < d; j++) nrm += unit[i * d + j] * unit[i * d + j];
      ck_assert_double_eq_tol(nrm, 1.0, 1e-14);
    }
    slem_encoder_free(e);
  }
  slem_encoder_free(eu);
  slem_cache_free(c);
  free(neg);
}
END_TEST

/* Positives of magnitude 1e3 to 1e300 (finite, as the readers accept them): omega and nu
 * against the exact rational closed form of scripts/gen-classifier-huge.py
 * (testdata/golden/classifier-huge.txt). delta^T A^-1 delta overflowed from |x| ~ 1e154 on
 * and the classifier was NaN. Relative 1e-12: A's condition number is about 10 here. */
START_TEST(classifier_of_huge_positives_is_finite_and_exact) {
  FILE *f = fopen("testdata/golden/classifier-huge.txt", "r");
  char line[1024];
  size_t n, d, rows = 0;
  double lambda, neg[6 * 3];
  SlemCache *c;
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* the comment */
  ck_assert_int_eq(fscanf(f, "%zu %zu %lf", &n, &d, &lambda), 3);
  ck_assert(n == 6 && d == 3);
  for (size_t i = 0; i < n * d; i++) ck_assert_int_eq(fscanf(f, "%lf", &neg[i]), 1);
  c = make_cache(neg, n, d, lambda);
  for (;;) {
    double theta, x0[3], ref[4], out[4], wmax = 0;
    SlemEncoder *e = NULL;
    SlemError err;
    if (fscanf(f, "%lf", &theta) != 1) break;
    for (size_t j = 0; j < d; j++) ck_assert_int_eq(fscanf(f, "%lf", &x0[j]), 1);
    for (size_t j = 0; j <= d; j++) ck_assert_int_eq(fscanf(f, "%lf", &ref[j]), 1);
    ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_CLASSIFIER, theta, 1, &err), SLEM_OK);
    slem_encoder_run_f64(e, out, x0, 1);
    for (size_t j = 0; j < d; j++) wmax = fmax(wmax, fabs(ref[j]));
    for (size_t j = 0; j < d; j++)
      ck_assert_msg(fabs(out[j] - ref[j]) <= 1e-12 * wmax, "theta %g, x0 %g: omega_%zu %.17g, "
                    "expected %.17g", theta, x0[0], j + 1, out[j], ref[j]);
    ck_assert_msg(fabs(out[d] - ref[d]) <= 1e-12 * (1 + fabs(ref[d])), "theta %g, x0 %g: nu "
                  "%.17g, expected %.17g", theta, x0[0], out[d], ref[d]);
    slem_encoder_free(e);
    rows++;
  }
  ck_assert_uint_eq(rows, 25);
  fclose(f);
  slem_cache_free(c);
}
END_TEST

START_TEST(lambda_zero_is_lda) {
  size_t n = 300, d = 8;
  double *neg = malloc(n * d * sizeof *neg), x0[8], mu[8] = {0}, out[8];
  double sigma[64] = {0}, rhs[8];
  SlemCache *c;
  SlemEncoder *e = NULL;
  SlemError err;
  gsl_permutation *p = gsl_permutation_alloc(d);
  int sgn;
  tu_seed(13);
  tu_gaussian_rows(neg, n, d, 1.0);
  tu_gaussian_rows(x0, 1, d, 2.0);
  /* LDA direction by a two-pass covariance and an LU solve: no Cholesky, no streaming */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) mu[j] += neg[i * d + j] / (double)n;
  for (size_t i = 0; i < n; i++)
    for (size_t a = 0; a < d; a++)
      for (size_t b = 0; b < d; b++)
        sigma[a * d + b] += (neg[i * d + a] - mu[a]) * (neg[i * d + b] - mu[b]) / (double)n;
  for (size_t j = 0; j < d; j++) rhs[j] = x0[j] - mu[j];
  {
    gsl_matrix_view S = gsl_matrix_view_array(sigma, d, d);
    gsl_vector_view r = gsl_vector_view_array(rhs, d);
    ck_assert_int_eq(gsl_linalg_LU_decomp(&S.matrix, p, &sgn), 0);
    ck_assert_int_eq(gsl_linalg_LU_svx(&S.matrix, p, &r.vector), 0);
  }
  c = make_cache(neg, n, d, 0.0);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, 1, &err), SLEM_OK);
  slem_encoder_run_f64(e, out, x0, 1);
  ck_assert_double_lt(tu_one_minus_cos(out, rhs, d), 1e-12);
  /* and a real lambda moves it away from LDA (the check above can fail) */
  slem_encoder_free(e);
  slem_cache_free(c);
  c = make_cache(neg, n, d, 5.0);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, 1, &err), SLEM_OK);
  slem_encoder_run_f64(e, out, x0, 1);
  ck_assert_double_gt(tu_one_minus_cos(out, rhs, d), 1e-6);
  slem_encoder_free(e);
  slem_cache_free(c);
  gsl_permutation_free(p);
  free(neg);
}
END_TEST

/* 10^6 vectors on a common offset of 1e6 whose exact mean and covariance are known:
 * dimension j holds offset + s_j(i) with s a fixed zero-mean periodic pattern. */
START_TEST(large_offset_loses_no_precision) {
  const size_t n = 1000000, d = 4, block = 4096;
  static const double pat[4][6] = {{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5},
                                   {1, -1, 1, -1, 1, -1},
                                   {3, 0, 0, -3, 0, 0},
                                   {0.25, 0.25, -0.25, -0.25, 0.5, -0.5}};
  double *x = malloc(block * d * sizeof *x), exact[16] = {0};
  const double *sc, *mu;
  SlemStats *s = NULL;
  SlemError err;
  ck_assert_int_eq(slem_stats_new(&s, d, 256, 0, &err), SLEM_OK);
  for (size_t i0 = 0; i0 < n; i0 += block) {
    size_t b = n - i0 < block ? n - i0 : block;
    for (size_t i = 0; i < b; i++)
      for (size_t j = 0; j < d; j++) x[i * d + j] = 1e6 + pat[j][(i0 + i) % 6];
    ck_assert_int_eq(slem_stats_add(s, x, b, &err), SLEM_OK);
  }
  ck_assert_int_eq(slem_stats_finish(s, &err), SLEM_OK);
  /* n is a multiple of 6 less 4: the exact sums over the rows that are there */
  {
    double m[4] = {0};
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < d; j++) m[j] += pat[j][i % 6];
    for (size_t j = 0; j < d; j++) m[j] /= (double)n;
    for (size_t i = 0; i < 6; i++) {
      size_t reps = n / 6 + (i < n % 6);
      for (size_t a = 0; a < d; a++)
        for (size_t b = 0; b < d; b++)
          exact[a * d + b] += (double)reps * (pat[a][i] - m[a]) * (pat[b][i] - m[b]);
    }
    mu = slem_stats_mean(s);
    for (size_t j = 0; j < d; j++) ck_assert_double_eq_tol(mu[j], 1e6 + m[j], 1e-9);
  }
  sc = slem_stats_scatter(s);
  for (size_t a = 0; a < d * d; a++)
    ck_assert_msg(fabs(sc[a] - exact[a]) <= 1e-9 * (double)n,
                  "scatter[%zu] = %.17g, exact %.17g", a, sc[a], exact[a]);
  ck_assert_uint_eq(slem_stats_count(s), n);
  slem_stats_free(s);
  free(x);
}
END_TEST

/* The statistics of shards of whole leaves, their nodes pushed in order, are those of one
 * pass over all the rows bit for bit, whatever the blocks the rows arrive in; and they
 * agree with the plain two-pass formulas. */
static SlemStats *stats_of(const double *x, size_t n, size_t d, size_t leaf, size_t lo,
                           size_t hi, size_t chunk) {
  SlemStats *s = NULL;
  SlemError err;
  ck_assert_int_eq(slem_stats_new(&s, d, leaf, lo / leaf, &err), SLEM_OK);
  for (size_t i = lo; i < hi; i += chunk)
    ck_assert_int_eq(slem_stats_add(s, x + i * d, (hi - i < chunk ? hi - i : chunk), &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_flush(s, &err), SLEM_OK);
  (void)n;
  return s;
}

static void shards_merge_at(size_t d) {
  size_t n = 1000, leaf = 16;
  double *x = malloc(n * d * sizeof *x), m[7] = {0}, sc[49] = {0};
  SlemStats *all, *merged = NULL;
  SlemError err;
  tu_seed(14);
  tu_gaussian_rows(x, n, d, 100.0);
  all = stats_of(x, n, d, leaf, 0, n, n);
  ck_assert_int_eq(slem_stats_finish(all, &err), SLEM_OK);
  /* 63 leaves (the last one of 8 rows) cut into 1, 2, 3, 5, 7 and 63 shards */
  for (size_t ns = 1; ns <= 63; ns += (ns < 7 ? 1 : 56)) {
    size_t nleaves = (n + leaf - 1) / leaf;
    ck_assert_int_eq(slem_stats_new(&merged, d, leaf, 0, &err), SLEM_OK);
    for (size_t k = 0; k < ns; k++) {
      size_t a = k * nleaves / ns, b = (k + 1) * nleaves / ns;
      SlemStats *part = stats_of(x, n, d, leaf, a * leaf, b * leaf < n ? b * leaf : n, 7 + k);
      for (size_t i = 0; i < slem_stats_nodes(part); i++) {
        unsigned level;
        uint64_t index, cnt;
        const double *mu;
        double *s = malloc(d * d * sizeof *s);
        slem_stats_node(part, i, &level, &index, &cnt, &mu, s);
        ck_assert_int_eq(slem_stats_push(merged, level, index, cnt, mu, s, &err), SLEM_OK);
        free(s);
      }
      slem_stats_free(part);
    }
    ck_assert_int_eq(slem_stats_finish(merged, &err), SLEM_OK);
    ck_assert_uint_eq(slem_stats_count(merged), n);
    ck_assert_msg(memcmp(slem_stats_mean(merged), slem_stats_mean(all), d * sizeof(double)) == 0,
                  "%zu shards: the mean differs in its bits", ns);
    ck_assert_msg(memcmp(slem_stats_scatter(merged), slem_stats_scatter(all),
                         d * d * sizeof(double)) == 0, "%zu shards: the scatter differs", ns);
    slem_stats_free(merged);
  }
  /* a node out of place is refused */
  ck_assert_int_eq(slem_stats_new(&merged, d, leaf, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_push(merged, 1, 1, 3, m, sc, &err), SLEM_EINVAL);
  slem_stats_free(merged);
  /* the two-pass formulas */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) m[j] += x[i * d + j] / (double)n;
  for (size_t i = 0; i < n; i++)
    for (size_t a = 0; a < d; a++)
      for (size_t b = 0; b < d; b++) sc[a * d + b] += (x[i * d + a] - m[a]) * (x[i * d + b] - m[b]);
  for (size_t j = 0; j < d; j++) ck_assert_double_eq_tol(slem_stats_mean(all)[j], m[j], 1e-12);
  for (size_t j = 0; j < d * d; j++)
    ck_assert_double_eq_tol(slem_stats_scatter(all)[j], sc[j], 1e-9 * fabs(sc[j]) + 1e-9);
  slem_stats_free(all);
  free(x);
}

/* The mean, the scatter and A^-1 have the same bits for 1, 2, 3 and 5 BLAS threads, at
 * sizes where OpenBLAS runs its level 3 on several (its multithreaded dgemm rounds
 * differently for some thread counts, and its dsyrk too on AVX-512 cores: d 301 with leaves
 * of 256 rows there; the folded scatter and the inverse are computed so that this does not
 * show). */
static void statistics_at(size_t d, size_t leaf) {
  size_t n = 2500;
  double *x = malloc(n * d * sizeof *x), *a1 = malloc(d * d * sizeof *a1),
         *ai = malloc(d * d * sizeof *ai), *m1 = malloc(d * sizeof *m1),
         *s1 = malloc(d * d * sizeof *s1), lam;
  int threads = slem_blas_threads();
  static const int ts[] = {1, 2, 3, 5};
  SlemError err;
  tu_seed(15);
  tu_gaussian_rows(x, n, d, 3.0);
  for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
    SlemStats *s;
    slem_blas_set_threads(ts[t]);
    s = stats_of(x, n, d, leaf, 0, n, 700);
    ck_assert_int_eq(slem_stats_finish(s, &err), SLEM_OK);
    ck_assert_msg(slem_stats_inverse(s, t ? ai : a1, &lam, -1, 0.1, &err) == SLEM_OK, "%s", err.msg);
    if (t == 0) {
      memcpy(m1, slem_stats_mean(s), d * sizeof *m1);
      memcpy(s1, slem_stats_scatter(s), d * d * sizeof *s1);
    } else {
      ck_assert_msg(memcmp(m1, slem_stats_mean(s), d * sizeof *m1) == 0, "%d threads: mean", ts[t]);
      ck_assert_msg(memcmp(s1, slem_stats_scatter(s), d * d * sizeof *s1) == 0,
                    "%d threads: scatter", ts[t]);
      ck_assert_msg(memcmp(a1, ai, d * d * sizeof *ai) == 0, "%d threads: A^-1", ts[t]);
    }
    slem_stats_free(s);
  }
  slem_blas_set_threads(threads);
  free(x);
  free(a1);
  free(ai);
  free(m1);
  free(s1);
}

START_TEST(statistics_do_not_depend_on_threads) {
  statistics_at(401, 1024);
  statistics_at(301, 256);
}
END_TEST

/* float32 rows are kept packed in a leaf and widened in place by the threads: rows added as
 * float32 and as doubles, in pieces that fill leaves partly with each (float32 then
 * doubles, doubles then float32, a leaf of float32 alone), give the bits of the same
 * values added as doubles, in batches of several leaves, on 1 and 2 threads. */
START_TEST(float32_rows_widen_in_place) {
  size_t n = 1000, d = 33, leaf = 100;
  static const size_t piece[] = {37, 150, 5, 100, 63, 200, 1};
  double *x = malloc(n * d * sizeof *x), *m0 = malloc(d * sizeof *m0),
         *s0 = malloc(d * d * sizeof *s0);
  float *xf = malloc(n * d * sizeof *xf);
  int threads = slem_blas_threads();
  SlemError err;
  tu_seed(41);
  tu_gaussian_rows(x, n, d, 3.0);
  for (size_t i = 0; i < n * d; i++) x[i] = xf[i] = (float)x[i];
  for (int t = 1; t <= 4; t += 3) {
    SlemStats *a, *b;
    slem_blas_set_threads(t);
    ck_assert_int_eq(slem_stats_new(&a, d, leaf, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_stats_new(&b, d, leaf, 0, &err), SLEM_OK);
    slem_stats_set_batch(a, 3);
    slem_stats_set_batch(b, 3);
    ck_assert_int_eq(slem_stats_add(a, x, n, &err), SLEM_OK);
    for (size_t i = 0, k = 0; i < n; k++) {
      size_t m = piece[k % 7] < n - i ? piece[k % 7] : n - i;
      ck_assert_int_eq(k % 2 ? slem_stats_add(b, x + i * d, m, &err)
                             : slem_stats_add_f32(b, xf + i * d, m, &err), SLEM_OK);
      i += m;
    }
    ck_assert_int_eq(slem_stats_finish(a, &err) | slem_stats_finish(b, &err), SLEM_OK);
    ck_assert_uint_eq(slem_stats_count(b), n);
    ck_assert_msg(memcmp(slem_stats_mean(a), slem_stats_mean(b), d * sizeof(double)) == 0,
                  "%d threads: mean", t);
    ck_assert_msg(memcmp(slem_stats_scatter(a), slem_stats_scatter(b), d * d * sizeof(double)) == 0,
                  "%d threads: scatter", t);
    if (t == 1) {
      memcpy(m0, slem_stats_mean(a), d * sizeof *m0);
      memcpy(s0, slem_stats_scatter(a), d * d * sizeof *s0);
    } else {
      ck_assert(memcmp(m0, slem_stats_mean(b), d * sizeof *m0) == 0);
      ck_assert(memcmp(s0, slem_stats_scatter(b), d * d * sizeof *s0) == 0);
    }
    slem_stats_free(a);
    slem_stats_free(b);
  }
  slem_blas_set_threads(threads);
  free(x);
  free(xf);
  free(m0);
  free(s0);
}
END_TEST

/* at an even dimension, an odd one (the folded scatter's blocks of 4 and 3 columns) and 1 */
START_TEST(shards_merge_exactly) {
  shards_merge_at(6);
  shards_merge_at(7);
  shards_merge_at(1);
}
END_TEST

START_TEST(inverse_is_an_inverse) {
  size_t n = 400, d = 30;
  double *x = malloc(n * d * sizeof *x), *ainv = malloc(d * d * sizeof *ainv), used;
  const double *sc;
  SlemStats *s = NULL;
  SlemError err;
  tu_seed(15);
  tu_gaussian_rows(x, n, d, 0.0);
  slem_stats_new(&s, d, 256, 0, &err);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_inverse(s, ainv, &used, -1, 0.01, &err), SLEM_OK);
  ck_assert_double_eq_tol(used, 0.01 * slem_stats_trace(s) / (double)d, 1e-15);
  sc = slem_stats_scatter(s);
  for (size_t i = 0; i < d; i++)
    for (size_t j = 0; j < d; j++) {
      double v = 0;
      for (size_t k = 0; k < d; k++) v += (sc[i * d + k] / (double)n + (i == k) * used) * ainv[k * d + j];
      ck_assert_double_eq_tol(v, i == j, 1e-10);
      ck_assert_double_eq(ainv[i * d + j], ainv[j * d + i]);
    }
  slem_stats_free(s);
  free(x);
  free(ainv);
}
END_TEST

START_TEST(singular_without_lambda_is_an_error) {
  size_t n = 50, d = 5;
  double *x = malloc(n * d * sizeof *x), ainv[25], used;
  SlemStats *s = NULL;
  SlemError err;
  tu_seed(16);
  tu_gaussian_rows(x, n, d, 0.0);
  for (size_t i = 0; i < n; i++) x[i * d + 2] = 7.0; /* a constant dimension */
  slem_stats_new(&s, d, 256, 0, &err);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_inverse(s, ainv, &used, 0, -1, &err), SLEM_ENUMERIC);
  ck_assert_ptr_nonnull(strstr(err.msg, "lambda_rel 1e-3"));
  ck_assert_int_eq(slem_stats_inverse(s, ainv, &used, -1, 1e-3, &err), SLEM_OK);
  /* duplicated dimension: rank deficient by rounding only */
  for (size_t i = 0; i < n; i++) x[i * d + 2] = x[i * d + 1] = tu_gauss();
  slem_stats_free(s);
  slem_stats_new(&s, d, 256, 0, &err);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_inverse(s, ainv, &used, 0, -1, &err), SLEM_ENUMERIC);
  slem_stats_free(s);
  free(x);
}
END_TEST

/* reads a whole golden file through the reader (whose round trips are tested elsewhere) */
static double *read_all(const char *path, size_t *n, size_t *d) {
  SlemVecReader *r = NULL;
  SlemError err;
  double *x;
  size_t got;
  ck_assert_msg(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  *d = slem_vecreader_dim(r);
  *n = (size_t)slem_vecreader_count(r);
  x = malloc(*n * *d * sizeof *x);
  ck_assert_int_eq(slem_vecreader_read(r, x, *n, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, *n);
  slem_vecreader_free(r);
  return x;
}

START_TEST(agrees_with_sklearn_ridge) {
  size_t n, d, np_, d2, nr, dr;
  double *neg = read_all("testdata/golden/neg.fvecs", &n, &d);
  double *pos = read_all("testdata/golden/pos.fvecs", &np_, &d2);
  double *ref = read_all("testdata/golden/desc_pos.npy", &nr, &dr);
  double *out = malloc(np_ * (d + 1) * sizeof *out);
  SlemCache *c = make_cache(neg, n, d, 0.05);
  SlemEncoder *e = NULL;
  SlemError err;
  ck_assert_uint_eq(d, d2);
  ck_assert_uint_eq(nr, np_);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, np_, &err), SLEM_OK);
  {
    float *f = malloc(np_ * d * sizeof *f);
    slem_encoder_run(e, f, pos, np_); /* the float32 path that the tool writes */
    for (size_t i = 0; i < np_; i++) {
      double row[64];
      for (size_t j = 0; j < d; j++) row[j] = f[i * d + j];
      ck_assert_double_le(tu_one_minus_cos(row, ref + i * d, d), 1e-6);
    }
    free(f);
  }
  slem_encoder_free(e);
  free(ref);
  for (int t = 0; t < 2; t++) {
    const char *file = t ? "testdata/golden/clf_theta10.npy" : "testdata/golden/clf_theta1.npy";
    double theta = t ? 10 : 1, maxabs = 0, maxerr = 0;
    ref = read_all(file, &nr, &dr);
    ck_assert_uint_eq(dr, d + 1);
    ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_CLASSIFIER, theta, np_, &err), SLEM_OK);
    slem_encoder_run_f64(e, out, pos, np_);
    for (size_t i = 0; i < np_ * (d + 1); i++) {
      maxabs = fmax(maxabs, fabs(ref[i]));
      maxerr = fmax(maxerr, fabs(ref[i] - out[i]));
    }
    ck_assert_msg(maxerr <= 1e-9 * maxabs, "%s: max error %g", file, maxerr);
    slem_encoder_free(e);
    free(ref);
  }
  slem_cache_free(c);
  /* lambda = 0 against numpy's solve */
  c = make_cache(neg, n, d, 0.0);
  ref = read_all("testdata/golden/lda_pos.npy", &nr, &dr);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, np_, &err), SLEM_OK);
  slem_encoder_run_f64(e, out, pos, np_);
  for (size_t i = 0; i < np_; i++) ck_assert_double_le(tu_one_minus_cos(out + i * d, ref + i * d, d), 1e-10);
  slem_encoder_free(e);
  slem_cache_free(c);
  free(ref);
  free(neg);
  free(pos);
  free(out);
}
END_TEST

START_TEST(mean_input_gives_zero_descriptor) {
  size_t n = 40, d = 3;
  double *neg = malloc(n * d * sizeof *neg), mu[3] = {0};
  float out[3] = {1, 1, 1};
  SlemCache *c;
  SlemEncoder *e = NULL;
  SlemError err;
  tu_seed(17);
  tu_gaussian_rows(neg, n, d, 0.0);
  c = make_cache(neg, n, d, 0.1);
  memcpy(mu, slem_cache_linear(c)->mu, sizeof mu);
  slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, 1, &err);
  slem_encoder_run(e, out, mu, 1);
  ck_assert_float_eq(out[0], 0);
  ck_assert_float_eq(out[2], 0);
  ck_assert_uint_eq(slem_encoder_zeros(e), 1);
  slem_encoder_free(e);
  slem_cache_free(c);
  free(neg);
}
END_TEST

/* --precision auto: float32 when cond(A) <= 1e4, and there the descriptors stay within
 * 1 - cos <= 1e-6 of the double ones; double when A is ill-conditioned. */
START_TEST(single_precision_within_its_bound) {
  size_t n = 3000, d = 64, np = 300;
  double *neg = malloc(n * d * sizeof *neg), *pos = malloc(np * d * sizeof *pos);
  double *yd = malloc(np * d * sizeof *yd);
  float *ys = malloc(np * d * sizeof *ys);
  static const double lambdas[] = {0.7, 1e-3};
  tu_seed(18);
  /* independent dimensions with variances from 1 to 1e4 */
  for (size_t i = 0; i < n * d; i++) neg[i] = tu_gauss() * pow(10, 2.0 * (double)(i % d) / (double)(d - 1));
  for (size_t i = 0; i < np * d; i++) pos[i] = tu_gauss() * pow(10, 2.0 * (double)(i % d) / (double)(d - 1));
  for (int t = 0; t < 2; t++) {
    SlemCache *c = make_cache(neg, n, d, lambdas[t]);
    SlemEncoder *e = NULL;
    SlemPrecision chosen;
    SlemError err;
    double worst = 0;
    ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, np, &err), SLEM_OK);
    slem_encoder_run_f64(e, yd, pos, np);
    ck_assert_int_eq(slem_encoder_set_precision(e, SLEM_PRECISION_AUTO, &chosen, &err), SLEM_OK);
    if (t == 0) {
      ck_assert_msg(chosen == SLEM_PRECISION_SINGLE, "cond %g: auto chose double", 1 / slem_cache_linear(c)->rcond);
      ck_assert_double_gt(1 / slem_cache_linear(c)->rcond, 1e3); /* near the threshold, not far below it */
    } else {
      ck_assert_msg(chosen == SLEM_PRECISION_DOUBLE, "cond %g: auto chose single", 1 / slem_cache_linear(c)->rcond);
      ck_assert_int_eq(slem_encoder_set_precision(e, SLEM_PRECISION_SINGLE, &chosen, &err), SLEM_OK);
    }
    slem_encoder_run(e, ys, pos, np);
    for (size_t i = 0; i < np; i++) {
      double row[64];
      for (size_t j = 0; j < d; j++) row[j] = ys[i * d + j];
      worst = fmax(worst, tu_one_minus_cos(row, yd + i * d, d));
    }
    if (t == 0) ck_assert_msg(worst <= 1e-6, "cond %g: 1 - cos = %g", 1 / slem_cache_linear(c)->rcond, worst);
    slem_encoder_free(e);
    slem_cache_free(c);
  }
  free(neg);
  free(pos);
  free(yd);
  free(ys);
}
END_TEST

/* The scale of the float32 path's deltas (slem_encode_row_max(), in lanes) is the scalar
 * loop's maximum: every length's tail, the largest value at every place, in the lanes and
 * after them, values over many exponents, and a row equal to mu (0). */
static void row_max_is_scalar(void) {
  static const size_t dims[] = {0, 1, 3, 7, 8, 9, 13, 16, 23, 130, 2051};
  tu_seed(61);
  for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
    size_t d = dims[di];
    float *x = malloc((d + 1) * sizeof *x);
    double *mu = malloc((d + 1) * sizeof *mu);
    for (size_t at = 0; at <= d; at++) { /* at == d: no planted maximum */
      double want = 0, got;
      for (size_t j = 0; j < d; j++) {
        x[j] = (float)(tu_gauss() * ldexp(1, (int)(tu_uniform() * 30) - 15));
        mu[j] = at == d && di % 2 ? x[j] : tu_gauss() * ldexp(1, (int)(tu_uniform() * 30) - 15);
      }
      if (at < d) x[at] = (float)(mu[at] + (at % 2 ? -1e6 : 1e6)); /* the largest, here */
      for (size_t j = 0; j < d; j++) want = fmax(want, fabs((double)x[j] - mu[j]));
      got = slem_encode_row_max(x, mu, d);
      ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "d %zu, largest at %zu: %.17g vs %.17g",
                    d, at, got, want);
    }
    free(x);
    free(mu);
  }
}

START_TEST(row_max_equals_scalar) {
  row_max_is_scalar(); /* with AVX2 where the CPU has it */
}
END_TEST

START_TEST(row_max_without_avx_equals_scalar) {
  setenv("SLEM_TEST_LANES", "sse", 1); /* read once per process: each test is a fork */
  row_max_is_scalar();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("numeric");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, gradient_vanishes_at_closed_form);
  tcase_add_test(tc, direction_does_not_depend_on_theta);
  tcase_add_test(tc, classifier_of_huge_positives_is_finite_and_exact);
  tcase_add_test(tc, lambda_zero_is_lda);
  tcase_add_test(tc, large_offset_loses_no_precision);
  tcase_add_test(tc, shards_merge_exactly);
  tcase_add_test(tc, statistics_do_not_depend_on_threads);
  tcase_add_test(tc, float32_rows_widen_in_place);
  tcase_add_test(tc, inverse_is_an_inverse);
  tcase_add_test(tc, singular_without_lambda_is_an_error);
  tcase_add_test(tc, agrees_with_sklearn_ridge);
  tcase_add_test(tc, mean_input_gives_zero_descriptor);
  tcase_add_test(tc, single_precision_within_its_bound);
  tcase_add_test(tc, row_max_equals_scalar);
  tcase_add_test(tc, row_max_without_avx_equals_scalar);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

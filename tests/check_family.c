/* The rest of the SLEM family against float64 references written with numpy from the
 * definitions (testdata/family, scripts/gen-family.py), and against the objectives they
 * minimise.
 *
 * Several positives: slem-encode --groups encodes x0 = the mean of a group's rows with the
 * single-positive closed form. That closed form minimises
 *   J_mean(w, b) = theta/m sum_j l(1, w.x_j + b) - theta/2 w^T S_p w
 *                  + (1/n) sum_i l(-1, w.x_i + b) + lambda/2 |w|^2
 *                = theta l(1, w.x0 + b) + (1/n) sum_i l(-1, w.x_i + b) + lambda/2 |w|^2,
 * S_p the positives' own biased covariance (the identity
 * 1/m sum_j (t_j - 1)^2 = (mean_j t_j - 1)^2 + w^T S_p w). Keeping the positives' scatter,
 *   J_all(w, b) = theta/m sum_j l(1, w.x_j + b) + (1/n) sum_i l(-1, w.x_i + b) + lambda/2 |w|^2,
 * eliminating b gives (Sigma + theta S_p + lambda I) w = c (x0 - mu), the same closed form
 * with A = Sigma + theta S_p + lambda I. When the positives share Sigma (S_p = Sigma) that
 * is A = (1 + theta) Sigma + lambda I, whose direction is the descriptor of a cache with
 * lambda / (1 + theta); with lambda = 0 it is Sigma^-1 (x0 - mu), LDA's direction. */
#include "testutil.h"

#include "../lib/formats/cache.h"
#include "../lib/encode/kind_linear.h"
#include "../lib/encode/kind_pca.h"
#include "../lib/encode/kind_recursive.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/encode/slem_linear.h"
#include "../lib/encode/encoder.h"
#include "../lib/io/groups.h"
#include "../lib/io/ids.h"
#include "../lib/linalg/stats.h"
#include "../lib/formats/vecs.h"
#include "../lib/encode/recursive.h"
#include "../lib/linalg/blas.h"
#include "../lib/linalg/eigen.h"
#include "../lib/encode/whiten.h"

#define FAM "testdata/family/"

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

/* A linear cache of neg(n, d) with an absolute lambda, through the real write/read path. */
static SlemCache *make_cache(const double *neg, size_t n, size_t d, double lambda,
                             const char *name) {
  SlemStats *s = NULL;
  SlemCache *c = NULL;
  SlemError err;
  double *x = malloc(n * d * sizeof *x), *ainv = malloc(d * d * sizeof *ainv), used;
  char *path = tu_path(name);
  memcpy(x, neg, n * d * sizeof *x);
  ck_assert_int_eq(slem_stats_new(&s, d, 256, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_msg(slem_stats_inverse(s, ainv, &used, lambda, -1, &err) == SLEM_OK, "%s", err.msg);
  SlemLinearInfo info = {used, -1, slem_stats_trace(s), slem_stats_rcond(s)};
  ck_assert_int_eq(slem_cache_write_linear(path, d, n, &info, slem_stats_mean(s), ainv, NULL,
                                           &err), SLEM_OK);
  ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
  slem_stats_free(s);
  free(x);
  free(ainv);
  free(path);
  return c;
}

/* The group means of pos(m, d) named by the lines of names_path, fed in two chunks. */
static SlemGroups *group_means(const char *names_path, SlemIds **names, const double *pos,
                               size_t m, size_t d, const double **means) {
  SlemGroups *g = NULL;
  SlemError err;
  size_t half = m / 3;
  ck_assert_msg(slem_ids_labels_read(names, names_path, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_groups_new(&g, *names, d, &err), SLEM_OK);
  ck_assert_int_eq(slem_groups_add(g, pos, half, "pos", &err), SLEM_OK);
  ck_assert_int_eq(slem_groups_add(g, pos + half * d, m - half, "pos", &err), SLEM_OK);
  ck_assert_msg(slem_groups_finish(g, "pos", means, &err) == SLEM_OK, "%s", err.msg);
  return g;
}

START_TEST(groups_agree_with_numpy) {
  size_t n, d, m, dp, nr, dr, nc, dc;
  double *neg = read_all(FAM "neg.fvecs", &n, &d), *pos = read_all(FAM "pos.fvecs", &m, &dp);
  double *ref = read_all(FAM "groups-desc.npy", &nr, &dr);
  double *refc = read_all(FAM "groups-clf.npy", &nc, &dc);
  SlemCache *c = make_cache(neg, n, d, 0.05, "groups.slem");
  SlemIds *names = NULL, *order = NULL;
  const double *means;
  SlemGroups *g = group_means(FAM "pos.groups", &names, pos, m, d, &means);
  SlemEncoder *e = NULL, *ec = NULL;
  SlemError err;
  size_t k = slem_groups_count(g);
  double *y = malloc(k * (d + 1) * sizeof *y), worst = 0, worst_c = 0;
  ck_assert_uint_eq(dp, d);
  ck_assert_uint_eq(k, 9);
  ck_assert_uint_eq(nr, k);
  ck_assert_uint_eq(dr, d);
  ck_assert_uint_eq(nc, k);
  ck_assert_uint_eq(dc, d + 1);
  /* order of first appearance */
  ck_assert_int_eq(slem_ids_read(&order, FAM "groups-order.txt", &err), SLEM_OK);
  ck_assert_uint_eq(slem_ids_count(order), k);
  for (size_t i = 0; i < k; i++) ck_assert_str_eq(slem_groups_name(g, i), slem_ids_get(order, i));
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, k, &err), SLEM_OK);
  slem_encoder_run_f64(e, y, means, k);
  for (size_t i = 0; i < k; i++) {
    double cs = tu_one_minus_cos(y + i * d, ref + i * d, d);
    ck_assert_msg(cs <= 1e-12, "group %zu: 1 - cos = %g", i, cs);
    worst = fmax(worst, cs);
  }
  ck_assert_int_eq(slem_encoder_new(&ec, c, SLEM_ENCODE_CLASSIFIER, 2, k, &err), SLEM_OK);
  slem_encoder_run_f64(ec, y, means, k);
  for (size_t i = 0; i < k * (d + 1); i++) {
    double rel = fabs(y[i] - refc[i]) / fmax(fabs(refc[i]), 1e-300);
    ck_assert_msg(fabs(y[i] - refc[i]) <= 1e-9 * fabs(refc[i]), "classifier value %zu: %.17g, "
                  "numpy %.17g", i, y[i], refc[i]);
    worst_c = fmax(worst_c, rel);
  }
  printf("groups: worst 1 - cos %.3g, worst relative classifier error %.3g\n", worst, worst_c);
  slem_encoder_free(e);
  slem_encoder_free(ec);
  slem_groups_free(g);
  slem_ids_free(names);
  slem_ids_free(order);
  slem_cache_free(c);
  free(neg), free(pos), free(ref), free(refc), free(y);
}
END_TEST

START_TEST(group_of_one_is_the_single_positive) {
  size_t n, d, m, dp;
  double *neg = read_all(FAM "neg.fvecs", &n, &d), *pos = read_all(FAM "pos.fvecs", &m, &dp);
  SlemCache *c = make_cache(neg, n, d, 0.05, "one.slem");
  SlemIds *names = NULL;
  const double *means;
  SlemGroups *g = group_means(FAM "pos.groups", &names, pos, m, d, &means);
  SlemEncoder *e = NULL;
  SlemError err;
  size_t k = slem_groups_count(g), singles = 0;
  double *y = malloc(k * (d + 1) * sizeof *y), *y1 = malloc((d + 1) * sizeof *y1);
  for (int mode = 0; mode < 2; mode++) {
    size_t od = d + (size_t)mode;
    ck_assert_int_eq(slem_encoder_new(&e, c, mode ? SLEM_ENCODE_CLASSIFIER : SLEM_ENCODE_UNIT,
                                      1.5, k, &err), SLEM_OK);
    slem_encoder_run_f64(e, y, means, k);
    for (size_t gi = 0; gi < k; gi++) {
      size_t cnt = 0, row = 0;
      for (size_t i = 0; i < m; i++)
        if (strcmp(slem_ids_get(names, i), slem_groups_name(g, gi)) == 0) cnt++, row = i;
      if (cnt != 1) continue;
      singles++;
      slem_encoder_run_f64(e, y1, pos + row * d, 1);
      for (size_t j = 0; j < od; j++) ck_assert_double_eq(y[gi * od + j], y1[j]);
    }
    slem_encoder_free(e);
  }
  ck_assert_uint_eq(singles, 2); /* one single-row group, in both modes */
  slem_groups_free(g);
  slem_ids_free(names);
  slem_cache_free(c);
  free(neg), free(pos), free(y), free(y1);
}
END_TEST

START_TEST(lambda_zero_is_lda) {
  size_t n, d, m, dp, nr, dr;
  double *neg = read_all(FAM "lda-neg.fvecs", &n, &d), *pos = read_all(FAM "lda-pos.fvecs", &m, &dp);
  double *coef = read_all(FAM "lda-coef.npy", &nr, &dr);
  SlemCache *c = make_cache(neg, n, d, 0, "lda.slem");
  char *gpath = tu_path("lda.groups");
  FILE *f = fopen(gpath, "w");
  SlemIds *names = NULL;
  const double *means;
  SlemGroups *g;
  SlemEncoder *e = NULL;
  SlemError err;
  double y[16], cs;
  ck_assert_uint_eq(nr, 1);
  ck_assert_uint_eq(dr, d);
  for (size_t i = 0; i < m; i++) fputs("A\n", f);
  ck_assert_int_eq(fclose(f), 0);
  g = group_means(gpath, &names, pos, m, d, &means);
  ck_assert_uint_eq(slem_groups_count(g), 1);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, 1, &err), SLEM_OK);
  slem_encoder_run_f64(e, y, means, 1);
  cs = tu_one_minus_cos(y, coef, d);
  printf("lda: 1 - cos to scikit-learn's LDA coef_ %.3g\n", cs);
  ck_assert_msg(cs <= 1e-9, "1 - cos to LDA = %g", cs);
  slem_encoder_free(e);
  slem_groups_free(g);
  slem_ids_free(names);
  slem_cache_free(c);
  free(neg), free(pos), free(coef), free(gpath);
}
END_TEST

/* Gradient of J_all (w, b) with m positives weighted theta/m each; g has d + 1 entries. */
static void grad_J_all(double *g, const double *w, double b, const double *pos, size_t m,
                       const double *neg, size_t n, size_t d, double theta, double lambda) {
  for (size_t j = 0; j < d; j++) g[j] = lambda * w[j];
  g[d] = 0;
  for (int side = 0; side < 2; side++) {
    const double *x = side ? neg : pos;
    size_t cnt = side ? n : m;
    double wt = side ? 1.0 / (double)n : theta / (double)m, y = side ? -1 : 1;
    for (size_t i = 0; i < cnt; i++) {
      double t = b;
      for (size_t j = 0; j < d; j++) t += w[j] * x[i * d + j];
      for (size_t j = 0; j < d; j++) g[j] += wt * (t - y) * x[i * d + j];
      g[d] += wt * (t - y);
    }
  }
}

START_TEST(gradients_vanish_at_the_closed_forms) {
  enum { N = 120, D = 7, M = 9 };
  static const double thetas[] = {0.5, 1, 4}, lambdas[] = {0, 0.3};
  double *neg = malloc(N * D * sizeof *neg), pos_any[M * D], *pos_shared = malloc(N * D * sizeof *pos_shared);
  double shift[D], x0[D], w[D + 1], g[D + 1];
  SlemError err;
  tu_seed(1111);
  tu_gaussian_rows(neg, N, D, 0.4);
  tu_gaussian_rows(pos_any, M, D, 2.0);
  for (size_t j = 0; j < D; j++) shift[j] = 1 + 0.25 * (double)j;
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) pos_shared[i * D + j] = neg[i * D + j] + shift[j];
  for (size_t li = 0; li < 2; li++)
    for (size_t ti = 0; ti < 3; ti++) {
      double th = thetas[ti], lam = lambdas[li], gn, wn, q = 0, cc, b, wx = 0, wm = 0;
      SlemCache *c = make_cache(neg, N, D, lam, "grad.slem");
      SlemEncoder *e = NULL;
      /* (1) the tool's classifier of a group of M arbitrary positives zeroes J_mean's
       * gradient, that is J_all's gradient plus theta S_p w */
      for (size_t j = 0; j < D; j++) {
        x0[j] = 0;
        for (size_t i = 0; i < M; i++) x0[j] += pos_any[i * D + j] / M;
      }
      ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_CLASSIFIER, th, 1, &err), SLEM_OK);
      slem_encoder_run_f64(e, w, x0, 1);
      grad_J_all(g, w, w[D], pos_any, M, neg, N, D, th, lam);
      for (size_t i = 0; i < M; i++) { /* minus theta S_p w */
        double t = 0;
        for (size_t j = 0; j < D; j++) t += w[j] * (pos_any[i * D + j] - x0[j]);
        for (size_t j = 0; j < D; j++) g[j] -= th / M * t * (pos_any[i * D + j] - x0[j]);
      }
      gn = 0, wn = 0;
      for (size_t j = 0; j <= D; j++) gn += g[j] * g[j], wn += w[j] * w[j];
      ck_assert_msg(sqrt(gn) <= 1e-10 * (1 + sqrt(wn)), "J_mean, theta %g lambda %g: |grad| %g",
                    th, lam, sqrt(gn));
      slem_encoder_free(e);
      slem_cache_free(c);
      /* (2) positives sharing Sigma: J_all's minimiser is the closed form with
       * A = (1 + theta) Sigma + lambda I = (1 + theta) (Sigma + lambda/(1 + theta) I) */
      c = make_cache(neg, N, D, lam / (1 + th), "grad2.slem");
      for (size_t j = 0; j < D; j++) x0[j] = slem_cache_linear(c)->mu[j] + shift[j];
      {
        double y[D], delta[D];
        for (size_t j = 0; j < D; j++) delta[j] = x0[j] - slem_cache_linear(c)->mu[j];
        for (size_t i = 0; i < D; i++) {
          y[i] = 0;
          for (size_t j = 0; j < D; j++) y[i] += slem_cache_linear(c)->ainv[i * D + j] * delta[j] / (1 + th);
          q += delta[i] * y[i];
        }
        cc = 2 * th / (th * q + th + 1);
        for (size_t j = 0; j < D; j++) w[j] = cc * y[j], wx += w[j] * x0[j], wm += w[j] * slem_cache_linear(c)->mu[j];
        b = (th * (1 - wx) - (1 + wm)) / (1 + th);
        /* and its direction is the descriptor of that cache */
        ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, 1, &err), SLEM_OK);
        slem_encoder_run_f64(e, y, x0, 1);
        ck_assert(tu_one_minus_cos(y, w, D) <= 1e-12);
        slem_encoder_free(e);
      }
      grad_J_all(g, w, b, pos_shared, N, neg, N, D, th, lam);
      gn = 0, wn = 0;
      for (size_t j = 0; j <= D; j++) gn += g[j] * g[j];
      for (size_t j = 0; j < D; j++) wn += w[j] * w[j];
      ck_assert_msg(sqrt(gn) <= 1e-10 * (1 + sqrt(wn)), "J_all, theta %g lambda %g: |grad| %g",
                    th, lam, sqrt(gn));
      slem_cache_free(c);
    }
  free(neg);
  free(pos_shared);
}
END_TEST

START_TEST(groups_file_errors) {
  SlemIds *names = NULL;
  SlemGroups *g = NULL;
  SlemError err;
  const double *means;
  double x[3 * 2] = {1, 2, 3, 4, 5, 6};
  char *p = tu_path("short.groups");
  FILE *f = fopen(p, "w");
  fputs("a\nb\n", f);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(slem_ids_labels_read(&names, p, &err), SLEM_OK);
  ck_assert_int_eq(slem_groups_new(&g, names, 2, &err), SLEM_OK);
  /* too many rows: refused, naming the record and the groups file */
  ck_assert_int_eq(slem_groups_add(g, x, 3, "in.fvecs", &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "record 3"));
  ck_assert_ptr_nonnull(strstr(err.msg, "short.groups"));
  slem_groups_free(g);
  /* too few */
  ck_assert_int_eq(slem_groups_new(&g, names, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_groups_add(g, x, 1, "in.fvecs", &err), SLEM_OK);
  ck_assert_int_eq(slem_groups_finish(g, "in.fvecs", &means, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "1 records"));
  slem_groups_free(g);
  slem_ids_free(names);
  free(p);
}
END_TEST

/* A cache with eigenpairs (rank 0: linear with --eigen; else pca) of neg(n, d). */
static SlemCache *make_eigen_cache(const double *neg, size_t n, size_t d, double lambda,
                                   double lambda_rel, size_t rank, const char *name) {
  SlemStats *s = NULL;
  SlemCache *c = NULL;
  SlemError err;
  double *x = malloc(n * d * sizeof *x);
  char *path = tu_path(name);
  memcpy(x, neg, n * d * sizeof *x);
  ck_assert_int_eq(slem_stats_new(&s, d, 256, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
  ck_assert_msg(slem_whiten_write_cache(path, s, lambda, lambda_rel, rank, NULL, &err) == SLEM_OK,
                "%s", err.msg);
  ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_ptr_nonnull(slem_cache_eigen(c) ? slem_cache_eigen(c)->evecs : NULL);
  slem_stats_free(s);
  free(x);
  free(path);
  return c;
}

static double *whiten(const SlemCache *c, double alpha, const double *x, size_t m) {
  SlemWhitener *w = NULL;
  SlemError err;
  double *y;
  ck_assert_msg(slem_whiten_new(&w, c, alpha, m, &err) == SLEM_OK, "%s", err.msg);
  y = malloc(m * slem_whiten_out_dim(w) * sizeof *y);
  slem_whiten_run_f64(w, y, x, m);
  slem_whiten_free(w);
  return y;
}

START_TEST(whitening_agrees_with_numpy) {
  static const double alphas[] = {-1, -0.5, 0, 0.3};
  size_t n, d, m, dp, nr, dr;
  double *neg = read_all(FAM "neg.fvecs", &n, &d), *pos = read_all(FAM "pos.fvecs", &m, &dp);
  double *ref = read_all(FAM "whiten.npy", &nr, &dr), worst = 0;
  SlemCache *c = make_eigen_cache(neg, n, d, 0.05, -1, 0, "eig.slem");
  ck_assert_uint_eq(nr, 4 * m);
  ck_assert_uint_eq(dr, d);
  ck_assert_uint_eq(slem_cache_eigen(c)->neig, d);
  ck_assert_ptr_nonnull(slem_cache_linear(c)->ainv); /* still a linear cache that slem-encode reads as before */
  for (size_t a = 0; a < 4; a++) {
    double *y = whiten(c, alphas[a], pos, m);
    for (size_t i = 0; i < m; i++) {
      double cs = tu_one_minus_cos(y + i * d, ref + (a * m + i) * d, d);
      ck_assert_msg(cs <= 1e-9, "alpha %g, row %zu: 1 - cos = %g", alphas[a], i, cs);
      worst = fmax(worst, cs);
    }
    free(y);
  }
  printf("whitening: worst 1 - cos to numpy %.3g\n", worst);
  slem_cache_free(c);
  free(neg), free(pos), free(ref);
}
END_TEST

START_TEST(alpha_minus_one_is_slem) {
  size_t n, d, m, dq;
  double *neg = read_all("testdata/digits/negatives.fvecs", &n, &d);
  double *q = read_all("testdata/digits/queries.fvecs", &m, &dq), worst = 0;
  SlemCache *c = make_eigen_cache(neg, n, d, -1, 1, 0, "eig-digits.slem");
  SlemEncoder *e = NULL;
  SlemError err;
  double *y = whiten(c, -1, q, m), *ref = malloc(m * d * sizeof *ref);
  ck_assert_int_eq(slem_encoder_new(&e, c, SLEM_ENCODE_UNIT, 1, m, &err), SLEM_OK);
  slem_encoder_run_f64(e, ref, q, m);
  for (size_t i = 0; i < m; i++) worst = fmax(worst, tu_one_minus_cos(y + i * d, ref + i * d, d));
  printf("alpha -1 against A^-1 (x - mu) on the digits: worst 1 - cos %.3g\n", worst);
  ck_assert_msg(worst <= 1e-9, "1 - cos = %g", worst);
  /* alpha 0 is centring */
  free(y);
  y = whiten(c, 0, q, m);
  for (size_t i = 0; i < m; i++) {
    double dl[64];
    for (size_t j = 0; j < d; j++) dl[j] = q[i * d + j] - slem_cache_eigen(c)->mu[j];
    ck_assert(tu_one_minus_cos(y + i * d, dl, d) <= 1e-12);
  }
  slem_encoder_free(e);
  slem_cache_free(c);
  free(neg), free(q), free(y), free(ref);
}
END_TEST

/* G = Y Y^T of m rows of width k */
static double gram_gap(const double *a, size_t ka, const double *b, size_t kb, size_t m) {
  double gap = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) {
      double ga = 0, gb = 0;
      for (size_t t = 0; t < ka; t++) ga += a[i * ka + t] * a[j * ka + t];
      for (size_t t = 0; t < kb; t++) gb += b[i * kb + t] * b[j * kb + t];
      gap = fmax(gap, fabs(ga - gb));
    }
  return gap;
}

START_TEST(alpha_half_is_pca_whitening) {
  size_t n, d, m, dp, nr, dr;
  double *neg = read_all(FAM "neg.fvecs", &n, &d), *pos = read_all(FAM "pos.fvecs", &m, &dp);
  double *sk = read_all(FAM "sk-white.npy", &nr, &dr), *y, gap;
  SlemCache *c = make_eigen_cache(neg, n, d, 0, -1, 0, "eig0.slem");
  ck_assert_uint_eq(nr, m);
  y = whiten(c, -0.5, pos, m);
  gap = gram_gap(y, d, sk, dr, m);
  printf("alpha -1/2 against scikit-learn's PCA(whiten=True): Gram matrices within %.3g\n", gap);
  ck_assert_msg(gap <= 1e-9, "Gram gap %g", gap);
  slem_cache_free(c);
  free(neg), free(pos), free(sk), free(y);
}
END_TEST

START_TEST(pca_agrees_with_numpy) {
  size_t n, d, m, dp, nr, dr;
  double *neg = read_all(FAM "neg.fvecs", &n, &d), *pos = read_all(FAM "pos.fvecs", &m, &dp);
  double *ref = read_all(FAM "pca-r3.npy", &nr, &dr), *y, kept_ref, kept, worst = 0;
  SlemCache *c = make_eigen_cache(neg, n, d, -1, 0.5, 3, "pca.slem");
  FILE *f = fopen(FAM "pca-r3.kept", "r");
  const char *k;
  ck_assert_str_eq(c->kind, "pca");
  ck_assert_ptr_nonnull(slem_cache_pca(c));
  ck_assert_uint_eq(slem_cache_pca(c)->neig, 3);
  ck_assert_uint_eq(dr, 3);
  y = whiten(c, -1, pos, m);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < 3; j++)
      worst = fmax(worst, fabs(y[i * 3 + j] - ref[i * 3 + j]));
  }
  printf("pca R 3: worst entry gap to numpy %.3g\n", worst);
  ck_assert_msg(worst <= 1e-9, "gap %g", worst);
  ck_assert_int_eq(fscanf(f, "%lf", &kept_ref), 1);
  fclose(f);
  k = strstr(slem_cache_json(c), "\"variance_kept\"");
  ck_assert_ptr_nonnull(k);
  kept = strtod(strchr(k, ':') + 1, NULL);
  ck_assert_msg(fabs(kept - kept_ref) <= 1e-12, "variance kept %.17g, numpy %.17g", kept, kept_ref);
  slem_cache_free(c);
  free(y);
  /* R = d keeps everything: the same inner products as the full SLEM descriptors */
  {
    SlemCache *full = make_eigen_cache(neg, n, d, -1, 0.5, d, "pca-d.slem");
    SlemCache *lin = make_cache(neg, n, d, slem_cache_pca(full)->lambda, "lin-d.slem");
    SlemEncoder *e = NULL;
    SlemError err;
    double *yr = whiten(full, -1, pos, m), *ys = malloc(m * d * sizeof *ys);
    ck_assert_int_eq(slem_encoder_new(&e, lin, SLEM_ENCODE_UNIT, 1, m, &err), SLEM_OK);
    slem_encoder_run_f64(e, ys, pos, m);
    ck_assert_msg(gram_gap(yr, d, ys, d, m) <= 1e-12, "R = d differs from SLEM");
    slem_encoder_free(e);
    slem_cache_free(full);
    slem_cache_free(lin);
    free(yr), free(ys);
  }
  /* R > d is refused */
  {
    SlemStats *s = NULL;
    SlemError err;
    double *x = malloc(n * d * sizeof *x);
    char *p = tu_path("toobig.slem");
    memcpy(x, neg, n * d * sizeof *x);
    ck_assert_int_eq(slem_stats_new(&s, d, 256, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_stats_add(s, x, n, &err) | slem_stats_finish(s, &err), SLEM_OK);
    ck_assert_int_eq(slem_whiten_write_cache(p, s, 1, -1, d + 1, NULL, &err), SLEM_EINVAL);
    ck_assert_int_eq(access(p, F_OK), -1);
    slem_stats_free(s);
    free(x), free(p);
  }
  free(neg), free(pos), free(ref);
}
END_TEST

START_TEST(eigenpairs_are_eigenpairs) {
  enum { N = 300, D = 24 };
  double *x = malloc(N * D * sizeof *x), sigma[D * D], ev[D], V[D * D], worst = 0, orth = 0;
  SlemError err;
  tu_seed(77);
  tu_gaussian_rows(x, N, D, 3.0);
  for (size_t i = 0; i < D; i++)
    for (size_t j = 0; j < D; j++) {
      double s = 0;
      for (size_t r = 0; r < N; r++) s += x[r * D + i] * x[r * D + j];
      sigma[i * D + j] = s / N;
    }
  ck_assert_int_eq(slem_eigen_sym(sigma, D, ev, V, "Sigma", &err), SLEM_OK);
  for (size_t k = 0; k < D; k++) {
    if (k) ck_assert(ev[k] <= ev[k - 1]);
    for (size_t i = 0; i < D; i++) {
      double sv = 0;
      for (size_t j = 0; j < D; j++) sv += sigma[i * D + j] * V[k * D + j];
      worst = fmax(worst, fabs(sv - ev[k] * V[k * D + i]) / ev[0]);
    }
    for (size_t l = 0; l < D; l++) {
      double dt = 0;
      for (size_t j = 0; j < D; j++) dt += V[k * D + j] * V[l * D + j];
      orth = fmax(orth, fabs(dt - (k == l)));
    }
  }
  ck_assert_msg(worst <= 1e-12 && orth <= 1e-12, "residual %g, orthogonality %g", worst, orth);
  free(x);
}
END_TEST

START_TEST(recursive_agrees_with_numpy) {
  size_t n, d, m, dp, nr, dr;
  double *pos = read_all(FAM "pos.fvecs", &m, &dp), *neg = read_all(FAM "neg.fvecs", &n, &d);
  double *ref = read_all(FAM "rec.npy", &nr, &dr), *y = malloc(m * d * sizeof *y), worst = 0;
  const char *inputs[1] = {FAM "neg.fvecs"};
  ck_assert_uint_eq(nr, 3 * m);
  for (size_t k = 1; k <= 3; k++) {
    char name[32];
    char *path;
    SlemCache *c = NULL;
    SlemRecursive *r = NULL;
    SlemError err;
    snprintf(name, sizeof name, "rec%zu.slem", k);
    path = tu_path(name);
    ck_assert_msg(slem_recursive_write_cache(path, inputs, 1, SLEM_FMT_AUTO, NULL, 7, 0, k, -1, 0.5,
                                             NULL, NULL, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_str_eq(c->kind, k == 1 ? "linear" : "recursive");
    ck_assert_uint_eq(slem_cache_recursive(c) ? slem_cache_recursive(c)->depth : 1, k);
    ck_assert_uint_eq(c->n, n);
    ck_assert_int_eq(slem_recursive_new(&r, c, m, &err), SLEM_OK);
    slem_recursive_run_f64(r, y, pos, m);
    for (size_t i = 0; i < m; i++) {
      double cs = tu_one_minus_cos(y + i * d, ref + ((k - 1) * m + i) * d, d);
      ck_assert_msg(cs <= 1e-9, "depth %zu, row %zu: 1 - cos = %g", k, i, cs);
      worst = fmax(worst, cs);
    }
    if (k == 1) { /* depth 1 is plain SLEM */
      SlemCache *lin = make_cache(neg, n, d, slem_cache_linear(c)->lambda, "rec-lin.slem");
      SlemEncoder *e = NULL;
      double *ys = malloc(m * d * sizeof *ys);
      ck_assert_int_eq(slem_encoder_new(&e, lin, SLEM_ENCODE_UNIT, 1, m, &err), SLEM_OK);
      slem_encoder_run_f64(e, ys, pos, m);
      for (size_t i = 0; i < m; i++) ck_assert(tu_one_minus_cos(y + i * d, ys + i * d, d) <= 1e-12);
      slem_encoder_free(e);
      slem_cache_free(lin);
      free(ys);
    } else { /* every stage's lambda is 0.5 trace / d of its own Sigma: traces below 1 */
      ck_assert(slem_cache_recursive(c)->lambda[1] < slem_cache_recursive(c)->lambda[0]);
      ck_assert(slem_cache_recursive(c)->lambda[1] <= 0.5 / (double)d + 1e-12);
    }
    slem_recursive_free(r);
    slem_cache_free(c);
    free(path);
  }
  printf("recursive, depth 1-3: worst 1 - cos to numpy %.3g\n", worst);
  /* an absolute lambda and stdin are refused beyond depth 1 */
  {
    SlemError err;
    char *p = tu_path("bad.slem");
    const char *in2[1] = {"-"};
    ck_assert_int_eq(slem_recursive_write_cache(p, inputs, 1, SLEM_FMT_AUTO, NULL, 0, 0, 2, 1.0, -1, NULL,
                                                NULL, &err), SLEM_EINVAL);
    ck_assert_int_eq(slem_recursive_write_cache(p, in2, 1, SLEM_FMT_AUTO, NULL, 0, 0, 2, -1, 1, NULL,
                                                NULL, &err), SLEM_EINVAL);
    ck_assert_int_eq(access(p, F_OK), -1);
    free(p);
  }
  free(pos), free(neg), free(ref), free(y);
}
END_TEST

/* Whitening (the eigenpairs of its cache, its P = E^T diag(f) E, each block) and recursive
 * SLEM (the stages of its cache and of each block) give the same doubles for 1, 2, 3 and 5
 * BLAS threads, at a size where OpenBLAS shares its level 2 and 3 among several (and then
 * rounds differently). */
START_TEST(family_does_not_depend_on_threads) {
  enum { N = 1500, D = 301, M = 900 };
  double *neg = malloc(N * D * sizeof *neg), *pos = malloc(M * D * sizeof *pos);
  double *w1 = NULL, *r1 = malloc(M * D * sizeof *r1), *ry = malloc(M * D * sizeof *ry);
  char *negp = tu_path("tneg.fvecs");
  const char *inputs[1];
  int threads = slem_blas_threads();
  static const int ts[] = {1, 2, 3, 5};
  SlemCache *ec1 = NULL;
  tu_seed(61);
  tu_gaussian_rows(neg, N, D, 1.0);
  tu_gaussian_rows(pos, M, D, 1.5);
  tu_write_fvecs(negp, neg, N, D);
  inputs[0] = negp;
  for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
    char name[32], *path;
    SlemCache *c = NULL;
    SlemRecursive *r = NULL;
    SlemError err;
    SlemCache *ec;
    double *w;
    slem_blas_set_threads(ts[t]);
    snprintf(name, sizeof name, "teig%d.slem", ts[t]);
    ec = make_eigen_cache(neg, N, D, 0.1, -1, 0, name);
    w = whiten(ec, -0.5, pos, M);
    snprintf(name, sizeof name, "trec%d.slem", ts[t]);
    path = tu_path(name);
    ck_assert_msg(slem_recursive_write_cache(path, inputs, 1, SLEM_FMT_AUTO, NULL, 256, 0, 2, -1, 0.5,
                                             NULL, NULL, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_recursive_new(&r, c, M, &err), SLEM_OK);
    slem_recursive_run_f64(r, t ? ry : r1, pos, M);
    if (t == 0) {
      w1 = w;
      ec1 = ec;
    } else {
      ck_assert_msg(memcmp(slem_cache_eigen(ec1)->evals, slem_cache_eigen(ec)->evals, D * sizeof(double)) == 0 &&
                    memcmp(slem_cache_eigen(ec1)->evecs, slem_cache_eigen(ec)->evecs, D * D * sizeof(double)) == 0,
                    "%d threads: eigenpairs", ts[t]);
      ck_assert_msg(memcmp(w1, w, M * D * sizeof *w) == 0, "%d threads: whitened", ts[t]);
      slem_cache_free(ec);
      ck_assert_msg(memcmp(r1, ry, M * D * sizeof *ry) == 0, "%d threads: recursive", ts[t]);
      free(w);
    }
    slem_recursive_free(r);
    slem_cache_free(c);
    free(path);
  }
  slem_blas_set_threads(threads);
  slem_cache_free(ec1);
  free(w1);
  free(r1);
  free(ry);
  free(neg);
  free(pos);
  free(negp);
}
END_TEST


/* The encoders' table: each cache kind and option set is taken by exactly the expected
 * encoder, or refused with the message slem-encode reports. */
static void expect_choice(const SlemCache *c, const SlemEncStreamOpts *o, const char *name,
                          const char *refusal) {
  const SlemEncoderOps *ops = NULL;
  SlemError err;
  int st = slem_encoder_choose(&ops, c, o, &err);
  if (name) {
    ck_assert_msg(st == SLEM_OK, "%s", err.msg);
    ck_assert_str_eq(ops->name, name);
  } else {
    ck_assert_int_eq(st, SLEM_EINVAL);
    ck_assert_ptr_null(ops);
    ck_assert_msg(strstr(err.msg, refusal) != NULL, "'%s' lacks '%s'", err.msg, refusal);
  }
}

START_TEST(encoders_are_chosen_by_their_table) {
  size_t n, d;
  double *neg = read_all(FAM "neg.fvecs", &n, &d);
  SlemCache *lin = make_cache(neg, n, d, 0.05, "choose-lin.slem");
  SlemCache *eig = make_eigen_cache(neg, n, d, -1, 0.5, 0, "choose-eig.slem");
  SlemCache *pca = make_eigen_cache(neg, n, d, -1, 0.5, 3, "choose-pca.slem");
  SlemCache *rec = NULL;
  SlemEncStreamOpts o;
  SlemError err;
  const char *inputs[1] = {FAM "neg.fvecs"};
  char *path = tu_path("choose-rec.slem");
  ck_assert_msg(slem_recursive_write_cache(path, inputs, 1, SLEM_FMT_AUTO, NULL, 7, 0, 2, -1, 0.5,
                                           NULL, NULL, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_cache_read(&rec, path, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_ptr_nonnull(slem_cache_recursive(rec));
  ck_assert_ptr_null(slem_cache_recursive(lin));
  slem_encstream_opts_init(&o);
  expect_choice(lin, &o, "linear", NULL);
  expect_choice(eig, &o, "linear", NULL);
  expect_choice(pca, &o, "pca", NULL);
  expect_choice(rec, &o, "recursive", NULL);
  o.mode = SLEM_ENCODE_CLASSIFIER;
  expect_choice(lin, &o, "linear", NULL);
  expect_choice(pca, &o, NULL, "is PCA-reduced");
  expect_choice(rec, &o, NULL, "unit descriptors only (no --classifier)");
  slem_encstream_opts_init(&o);
  o.alpha_set = 1;
  o.alpha = -0.5;
  expect_choice(eig, &o, "whiten", NULL);
  expect_choice(pca, &o, "pca", NULL);
  expect_choice(lin, &o, NULL, "holds none; make it with slem-negstats --eigen");
  expect_choice(rec, &o, NULL, "unit descriptors only (no --alpha)");
  slem_encstream_opts_init(&o);
  o.couple = 1;
  expect_choice(lin, &o, NULL, "--couple needs a kernel cache");
  o.couple = 0;
  o.projections = 1;
  expect_choice(rec, &o, NULL, "--projections need a kernel cache");
  slem_cache_free(lin);
  slem_cache_free(eig);
  slem_cache_free(pca);
  slem_cache_free(rec);
  free(path);
  free(neg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("family");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, groups_agree_with_numpy);
  tcase_add_test(tc, group_of_one_is_the_single_positive);
  tcase_add_test(tc, lambda_zero_is_lda);
  tcase_add_test(tc, gradients_vanish_at_the_closed_forms);
  tcase_add_test(tc, groups_file_errors);
  tcase_add_test(tc, whitening_agrees_with_numpy);
  tcase_add_test(tc, alpha_minus_one_is_slem);
  tcase_add_test(tc, alpha_half_is_pca_whitening);
  tcase_add_test(tc, pca_agrees_with_numpy);
  tcase_add_test(tc, eigenpairs_are_eigenpairs);
  tcase_add_test(tc, recursive_agrees_with_numpy);
  tcase_add_test(tc, family_does_not_depend_on_threads);
  tcase_add_test(tc, encoders_are_chosen_by_their_table);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)


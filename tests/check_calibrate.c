/* Platt calibration of exemplar scores: the fit against an independent scipy fit
 * (testdata/esvm/calib-digits20.txt, scripts/gen-esvm.py), the optimality conditions, the
 * file round trip, the errors. */
#include "testutil.h"

#include "../lib/search/calibration.h"
#include "../lib/search/match.h"
#include "../lib/search/scorer.h"
#include "../lib/linalg/blas.h"

/* gradient of Platt's NLL at (A, B) = (-a, a b) with the smoothed targets */
static void platt_gradient(const SlemSigmoid *sg, const double *pos, size_t np,
                           const double *neg, size_t nn, double g[2]) {
  double A = -sg->a, B = sg->a * sg->b;
  g[0] = g[1] = 0;
  for (int c = 0; c < 2; c++)
    for (size_t i = 0; i < (c ? nn : np); i++) {
      double s = c ? neg[i] : pos[i], t = c ? 1.0 / (nn + 2.0) : (np + 1.0) / (np + 2.0);
      double p = 1 / (1 + exp(A * s + B)); /* P(positive) */
      g[0] += s * (t - p);
      g[1] += t - p;
    }
}

START_TEST(fit_is_stationary_and_sensible) {
  double pos[40], neg[400], g[2];
  SlemSigmoid sg;
  SlemError err;
  int iters;
  tu_seed(7);
  for (int i = 0; i < 40; i++) pos[i] = 1.0 + tu_gauss();
  for (int i = 0; i < 400; i++) neg[i] = -1.0 + 0.7 * tu_gauss();
  ck_assert_msg(slem_calibration_platt_fit(&sg, pos, 40, neg, 400, &iters, &err) == SLEM_OK,
                "%s", err.msg);
  platt_gradient(&sg, pos, 40, neg, 400, g);
  ck_assert_msg(fabs(g[0]) < 1e-9 && fabs(g[1]) < 1e-9, "gradient %g %g", g[0], g[1]);
  ck_assert(sg.a > 0);               /* higher scores, more likely positive */
  ck_assert(sg.b > -1 && sg.b < 1);  /* the midpoint lies between the two classes */
  ck_assert_int_le(iters, 30);
  ck_assert_double_eq_tol(slem_calibration_sigmoid(&sg, sg.b), 0.5, 1e-15);
  ck_assert(slem_calibration_sigmoid(&sg, 1e300) == 1 &&
            slem_calibration_sigmoid(&sg, -1e300) == 0);
  ck_assert(slem_calibration_sigmoid(&sg, 3) > slem_calibration_sigmoid(&sg, 2));
}
END_TEST

/* Separable scores: the smoothed targets keep the maximum finite. */
START_TEST(separable_scores_give_a_finite_fit) {
  double pos[3] = {2, 3, 4}, neg[5] = {-3, -2, -1, -0.5, 0}, g[2];
  SlemSigmoid sg;
  SlemError err;
  ck_assert_msg(slem_calibration_platt_fit(&sg, pos, 3, neg, 5, NULL, &err) == SLEM_OK, "%s",
                err.msg);
  ck_assert(isfinite(sg.a) && isfinite(sg.b) && sg.a > 0);
  platt_gradient(&sg, pos, 3, neg, 5, g);
  ck_assert_msg(fabs(g[0]) < 1e-10 && fabs(g[1]) < 1e-10, "gradient %g %g", g[0], g[1]);
  /* no probability reaches 0 or 1 */
  ck_assert(slem_calibration_sigmoid(&sg, 4) < 1 - 1e-6 &&
            slem_calibration_sigmoid(&sg, -3) > 1e-6);
}
END_TEST

START_TEST(agrees_with_scipy_on_the_digits) {
  SlemCalibrateInput in = {
      .classifiers = "testdata/esvm/clf-digits20.fvecs",
      .exemplar_labels = "testdata/esvm/digits-q20.labels",
      .positives = "testdata/digits/validation.fvecs",
      .positive_labels = "testdata/digits/validation.labels",
      .negatives = "testdata/digits/negatives.fvecs",
  };
  SlemCalibration *cal = NULL, *ref = NULL;
  SlemError err;
  double worst = 0;
  ck_assert_msg(slem_calibration_fit(&cal, &in, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_calibration_read(&ref, "testdata/esvm/calib-digits20.txt", &err) == SLEM_OK,
                "%s", err.msg);
  ck_assert_uint_eq(slem_calibration_count(cal), 20);
  ck_assert_uint_eq(slem_calibration_count(ref), 20);
  for (size_t e = 0; e < 20; e++) {
    const SlemSigmoid *a = slem_calibration_get(cal, e), *b = slem_calibration_get(ref, e);
    double ra = fabs(a->a - b->a) / fabs(b->a), rb = fabs(a->b - b->b) / fabs(b->b);
    size_t np, nn;
    ck_assert_msg(ra <= 1e-8 && rb <= 1e-8, "exemplar %zu: a %.17g b %.17g, scipy %.17g %.17g",
                  e, a->a, a->b, b->a, b->b);
    if (ra > worst) worst = ra;
    if (rb > worst) worst = rb;
    slem_calibration_counts(cal, e, &np, &nn);
    ck_assert(np >= 5 && np + nn == 100 + 597);
  }
  printf("calibrate: 20 exemplars against scipy, worst relative difference %.3g\n", worst);
  slem_calibration_free(cal);
  slem_calibration_free(ref);
}
END_TEST

START_TEST(fit_does_not_depend_on_threads) {
  /* 200 classifiers of dimension 300 scored on 1200 positives: a size where OpenBLAS runs
   * its dgemm on several threads, rounding differently for 3 and 5 of them; the sigmoids
   * come out the same for 1, 2, 3 and 5 */
  enum { M = 200, D = 300, NV = 1200 };
  double *clf = malloc(M * (D + 1) * sizeof *clf), *val = malloc(NV * D * sizeof *val);
  SlemSigmoid first[M];
  char *cp = tu_path("tclf.fvecs"), *vp = tu_path("tval.fvecs"), *el = tu_path("tclf.labels"),
       *pl = tu_path("tval.labels");
  SlemCalibrateInput in = {.classifiers = cp, .exemplar_labels = el, .positives = vp,
                           .positive_labels = pl};
  static const int ts[] = {1, 2, 3, 5};
  int threads = slem_blas_threads();
  FILE *f;
  tu_seed(71);
  tu_gaussian_rows(clf, M, D + 1, 0.0);
  tu_gaussian_rows(val, NV, D, 0.0);
  for (size_t i = 0; i < NV; i++) /* each positive near its class's classifier */
    for (size_t j = 0; j < D; j++) val[i * D + j] += 0.3 * clf[(i % 20) * (D + 1) + j];
  tu_write_fvecs(cp, clf, M, D + 1);
  tu_write_fvecs(vp, val, NV, D);
  f = fopen(el, "w");
  for (size_t e = 0; e < M; e++) fprintf(f, "c%zu\n", e % 20);
  fclose(f);
  f = fopen(pl, "w");
  for (size_t i = 0; i < NV; i++) fprintf(f, "c%zu\n", i % 20);
  fclose(f);
  for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
    SlemCalibration *cal = NULL;
    SlemError err;
    slem_blas_set_threads(ts[t]);
    ck_assert_msg(slem_calibration_fit(&cal, &in, &err) == SLEM_OK, "%s", err.msg);
    for (size_t e = 0; e < M; e++) {
      const SlemSigmoid *sg = slem_calibration_get(cal, e);
      if (t == 0) first[e] = *sg;
      else ck_assert_msg(memcmp(&first[e], sg, sizeof *sg) == 0, "%d threads: exemplar %zu",
                         ts[t], e);
    }
    slem_calibration_free(cal);
  }
  slem_blas_set_threads(threads);
  free(clf), free(val), free(cp), free(vp), free(el), free(pl);
}
END_TEST

START_TEST(file_round_trip_is_exact) {
  SlemCalibrateInput in = {
      .classifiers = "testdata/esvm/clf-digits20.fvecs",
      .exemplar_labels = "testdata/esvm/digits-q20.labels",
      .positives = "testdata/digits/validation.fvecs",
      .positive_labels = "testdata/digits/validation.labels",
  };
  SlemCalibration *cal = NULL, *back = NULL;
  SlemError err;
  char *path = tu_path("cal.txt");
  ck_assert_msg(slem_calibration_fit(&cal, &in, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_calibration_write(cal, path, &err), SLEM_OK);
  ck_assert_int_eq(slem_calibration_read(&back, path, &err), SLEM_OK);
  ck_assert_uint_eq(slem_calibration_count(back), 20);
  for (size_t e = 0; e < 20; e++) {
    ck_assert(slem_calibration_get(cal, e)->a == slem_calibration_get(back, e)->a);
    ck_assert(slem_calibration_get(cal, e)->b == slem_calibration_get(back, e)->b);
  }
  slem_calibration_free(cal);
  slem_calibration_free(back);
  free(path);
}
END_TEST

START_TEST(bad_inputs) {
  double s[3] = {1, 1, 1}, t[2] = {0, 1};
  SlemSigmoid sg;
  SlemError err;
  SlemCalibration *cal = NULL;
  char *bad = tu_path("bad.txt"), *labels = tu_path("labels.txt");
  SlemCalibrateInput in = {
      .classifiers = "testdata/digits/queries.fvecs", /* descriptors, not classifiers */
      .exemplar_labels = "testdata/digits/queries.labels",
      .positives = "testdata/digits/validation.fvecs",
      .positive_labels = "testdata/digits/validation.labels",
  };
  ck_assert_int_eq(slem_calibration_platt_fit(&sg, s, 0, t, 2, NULL, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_calibration_platt_fit(&sg, s, 2, t, 0, NULL, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_calibration_platt_fit(&sg, s, 2, s, 1, NULL, &err), SLEM_ENUMERIC);
  ck_assert_ptr_nonnull(strstr(err.msg, "every score is 1"));

  ck_assert_int_eq(slem_calibration_fit(&cal, &in, &err), SLEM_EFORMAT);
  ck_assert_ptr_null(cal);
  ck_assert_msg(strstr(err.msg, "file of descriptors rather than classifiers"), "%s", err.msg);

  /* an exemplar whose label no validation vector has */
  in.classifiers = "testdata/esvm/clf-digits20.fvecs";
  tu_write_bytes(labels, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n0\n1\n2\n3\n4\n5\n6\n7\n8\nX\n", 40);
  in.exemplar_labels = labels;
  ck_assert_int_eq(slem_calibration_fit(&cal, &in, &err), SLEM_EINVAL);
  ck_assert_msg(strstr(err.msg, "exemplar 20 (label X) has no validation positive"), "%s", err.msg);
  /* label counts */
  in.exemplar_labels = "testdata/digits/queries.labels";
  ck_assert_int_eq(slem_calibration_fit(&cal, &in, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "100 labels, but testdata/esvm/clf-digits20.fvecs has 20"), "%s",
                err.msg);
  /* negatives of another dimension */
  in.exemplar_labels = "testdata/esvm/digits-q20.labels";
  in.negatives = "testdata/esvm/neg.fvecs";
  ck_assert_int_eq(slem_calibration_fit(&cal, &in, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "neg.fvecs: dimension 32, but the positives"), "%s", err.msg);

  tu_write_bytes(bad, "1 2\n3\n", 6);
  ck_assert_int_eq(slem_calibration_read(&cal, bad, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "bad.txt: line 2"), "%s", err.msg);
  tu_write_bytes(bad, "1 nan\n", 6);
  ck_assert_int_eq(slem_calibration_read(&cal, bad, &err), SLEM_EFORMAT);
  tu_write_bytes(bad, "", 0);
  ck_assert_int_eq(slem_calibration_read(&cal, bad, &err), SLEM_EFORMAT);
  ck_assert_ptr_null(cal);
  free(bad);
  free(labels);
}
END_TEST

typedef struct Got {
  size_t n;
  uint64_t row[3][4];
  float score[3][4];
} Got;

static int keep(void *ctx, uint64_t query, const SlemHit *hits, size_t n, SlemError *err) {
  Got *g = ctx;
  (void)err;
  for (size_t i = 0; i < n; i++) {
    g->row[query][i] = hits[i].row;
    g->score[query][i] = hits[i].score;
  }
  g->n += n;
  return 0;
}

/* slem_match with classifier queries: w.x + b, then the query's sigmoid, by hand */
START_TEST(affine_and_calibrated_match) {
  char *dbp = tu_path("adb.fvecs"), *qp = tu_path("aq.fvecs"), *cp = tu_path("acal.txt");
  double db[4 * 2] = {1, 0, 0, 1, 1, 1, -1, 2}, clf[3 * 3] = {1, 2, 0.5, -1, 1, 0, 0.5, 0.5, -2};
  SlemSigmoid sg[3] = {{2, 1}, {0.5, 0}, {-1, 3}};
  SlemVecReader *q = NULL, *d = NULL;
  SlemCalibration *cal = NULL;
  SlemMatchOpts o;
  SlemMatchStats st;
  SlemError err;
  FILE *f;
  tu_write_fvecs(dbp, db, 4, 2);
  tu_write_fvecs(qp, clf, 3, 3);
  f = fopen(cp, "w");
  for (int i = 0; i < 3; i++) fprintf(f, "%.17g %.17g\n", sg[i].a, sg[i].b);
  fclose(f);
  ck_assert_int_eq(slem_calibration_read(&cal, cp, &err), SLEM_OK);
  for (int calibrated = 0; calibrated < 2; calibrated++) {
    Got g = {0};
    slem_match_opts_init(&o);
    o.k = 4;
    if (calibrated) o.calibration = cal;
    else o.affine = 1;
    ck_assert_int_eq(slem_vecreader_open(&q, qp, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_open(&d, dbp, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_msg(slem_match(q, d, &o, keep, &g, &st, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_uint_eq(g.n, 12);
    for (int i = 0; i < 3; i++)
      for (int r = 0; r < 4; r++) {
        uint64_t j = g.row[i][r];
        double s = clf[i * 3] * db[j * 2] + clf[i * 3 + 1] * db[j * 2 + 1] + clf[i * 3 + 2];
        if (calibrated) s = 1 / (1 + exp(-sg[i].a * (s - sg[i].b)));
        ck_assert_msg(fabs(g.score[i][r] - s) <= 1e-6 * (1 + fabs(s)), "query %d rank %d: %g, "
                      "expected %g", i, r, g.score[i][r], s);
        if (r > 0) ck_assert(g.score[i][r] <= g.score[i][r - 1]);
      }
    slem_vecreader_free(q);
    slem_vecreader_free(d);
  }
  /* descriptors where classifiers are expected */
  slem_match_opts_init(&o);
  o.calibration = cal;
  ck_assert_int_eq(slem_vecreader_open(&q, dbp, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_open(&d, dbp, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_match(q, d, &o, keep, NULL, &st, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "classifiers of 2 values (w, then b) score vectors of dimension 1"),
                "%s", err.msg);
  slem_vecreader_free(q);
  slem_vecreader_free(d);
  slem_calibration_free(cal);
  free(dbp);
  free(qp);
  free(cp);
}
END_TEST

/* The affine scorer's fast scores stay within its slack of its exact scores, and the exact
 * score is w.x + b (then the sigmoid) computed here in long double. */
START_TEST(affine_slack_bounds_the_fast_scores) {
  enum { D = 37, NQ = 6, ND = 50 };
  char *qp = tu_path("sq.fvecs"), *cp = tu_path("scal.txt");
  double clf[NQ * (D + 1)], rows64[ND * D];
  float rows[ND * D], scores[NQ * ND];
  SlemCalibration *cal = NULL;
  SlemVecReader *q = NULL;
  SlemScorer *sc = NULL;
  SlemError err;
  FILE *f;
  size_t got;
  double worst = 0;
  tu_seed(11);
  for (int i = 0; i < NQ * (D + 1); i++) clf[i] = (float)(tu_gauss() * (i % 5 + 1));
  for (int i = 0; i < ND * D; i++) rows64[i] = rows[i] = (float)(3 + tu_gauss());
  tu_write_fvecs(qp, clf, NQ, D + 1);
  f = fopen(cp, "w");
  for (int i = 0; i < NQ; i++) fprintf(f, "%.17g %.17g\n", 0.5 + i, -3.0 + i);
  fclose(f);
  ck_assert_int_eq(slem_calibration_read(&cal, cp, &err), SLEM_OK);
  for (int calibrated = 0; calibrated < 2; calibrated++) {
    ck_assert_int_eq(slem_scorer_affine_new(&sc, D, calibrated ? cal : NULL, NQ, ND, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_open(&q, qp, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_scorer_queries(sc, q, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, NQ);
    ck_assert_int_eq(slem_scorer_tile(sc, scores, rows, ND, "rows", 1, &err), SLEM_OK);
    for (int i = 0; i < NQ; i++)
      for (int j = 0; j < ND; j++) {
        long double v = (float)clf[i * (D + 1) + D];
        double e = slem_scorer_exact(sc, (size_t)i, (size_t)j), want;
        for (int l = 0; l < D; l++) v += (long double)(float)clf[i * (D + 1) + l] * rows64[j * D + l];
        want = (double)v;
        if (calibrated) {
          SlemSigmoid sg = {0.5 + i, -3.0 + i};
          want = slem_calibration_sigmoid(&sg, want);
        }
        ck_assert_msg(fabs(e - want) <= 1e-12 * (1 + fabs(want)), "exact %g, want %g", e, want);
        ck_assert_msg(fabs(scores[i * ND + j] - e) <= slem_scorer_slack(sc, (size_t)i),
                      "query %d row %d: fast %.9g exact %.17g slack %g", i, j, scores[i * ND + j],
                      e, slem_scorer_slack(sc, (size_t)i));
        if (fabs(scores[i * ND + j] - e) / slem_scorer_slack(sc, (size_t)i) > worst)
          worst = fabs(scores[i * ND + j] - e) / slem_scorer_slack(sc, (size_t)i);
      }
    slem_vecreader_free(q);
    slem_scorer_free(sc);
  }
  ck_assert(worst > 0); /* the fast scores are not the exact ones: the bound was exercised */
  slem_calibration_free(cal);
  free(qp);
  free(cp);
}
END_TEST

/* slem-calibrate's rules, in the library (they were cmd/slem-calibrate.c's); the fit
 * checks them too, before anything is read */
START_TEST(rules_between_options) {
  SlemCalibrateInput in = {0};
  SlemCalibration *cal = NULL;
  SlemError err;
  ck_assert_int_eq(slem_calibration_check(&in, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no classifiers: give -c CLASSIFIERS");
  in.classifiers = "c.fvecs";
  ck_assert_int_eq(slem_calibration_fit(&cal, &in, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no exemplar labels: give --exemplar-labels FILE");
  ck_assert_ptr_null(cal);
  in.exemplar_labels = "-";
  in.positives = "p.fvecs";
  ck_assert_int_eq(slem_calibration_check(&in, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no validation labels: give --positive-labels FILE");
  in.positive_labels = "p.labels";
  ck_assert_int_eq(slem_calibration_check(&in, &err), SLEM_OK);
  in.negatives = "-";
  ck_assert_int_eq(slem_calibration_check(&in, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "only one input can be stdin");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("calibrate");
  TCase *tc = tcase_create("calibrate");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, fit_is_stationary_and_sensible);
  tcase_add_test(tc, separable_scores_give_a_finite_fit);
  tcase_add_test(tc, agrees_with_scipy_on_the_digits);
  tcase_add_test(tc, file_round_trip_is_exact);
  tcase_add_test(tc, fit_does_not_depend_on_threads);
  tcase_add_test(tc, bad_inputs);
  tcase_add_test(tc, affine_and_calibrated_match);
  tcase_add_test(tc, affine_slack_bounds_the_fast_scores);
  tcase_add_test(tc, rules_between_options);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

/* Exemplar SVMs through LIBLINEAR: agreement with scikit-learn's LinearSVC
 * (testdata/esvm, scripts/gen-esvm.py), determinism across thread counts, the errors. */
#include "testutil.h"

#include "../lib/encode/esvm.h"
#include "../lib/encode/esvmrun.h"
#include "../lib/formats/vecs.h"

/* reads a whole file through the reader (whose round trips are tested elsewhere) */
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

static SlemEsvm *esvm_from(const char *neg_path, const SlemEsvmOpts *opts) {
  SlemVecReader *r = NULL;
  SlemEsvm *e = NULL;
  SlemError err;
  ck_assert_msg(slem_vecreader_open(&r, neg_path, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_esvm_new(&e, r, opts, &err) == SLEM_OK, "%s", err.msg);
  slem_vecreader_free(r);
  return e;
}

START_TEST(agrees_with_sklearn_linearsvc) {
  FILE *f = fopen("testdata/esvm/cases.txt", "r");
  char line[256], name[64], solver[8];
  double C, wpos, bias, worst = 0, worst_b = 0;
  int cases = 0;
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f)) {
    SlemEsvmOpts o;
    SlemEsvm *e;
    SlemError err;
    size_t n, d, nr, dr, dn, dnd;
    char ref_path[128];
    double *pos, *ref, *y, *neg;
    const char *pos_path = "testdata/esvm/pos.fvecs", *neg_path = "testdata/esvm/neg.fvecs";
    if (line[0] == '#') continue;
    ck_assert_int_eq(sscanf(line, "%63s %lf %lf %7s %lf", name, &C, &wpos, solver, &bias), 5);
    if (strcmp(name, "digits") == 0) {
      pos_path = "testdata/esvm/digits-q20.fvecs";
      neg_path = "testdata/digits/negatives.fvecs";
    }
    slem_esvm_opts_init(&o);
    o.C = C;
    o.pos_weight = wpos;
    o.loss = strcmp(solver, "l1") == 0 ? SLEM_ESVM_HINGE : SLEM_ESVM_SQUARED_HINGE;
    o.bias = bias;
    o.classifier = 1;
    e = esvm_from(neg_path, &o);
    pos = read_all(pos_path, &n, &d);
    snprintf(ref_path, sizeof ref_path, "testdata/esvm/ref-%s.npy", name);
    ref = read_all(ref_path, &nr, &dr);
    neg = read_all(neg_path, &dn, &dnd);
    ck_assert_uint_eq(nr, n);
    ck_assert_uint_eq(dr, d + 1); /* the reference holds w and b */
    ck_assert_uint_eq(dnd, d);
    ck_assert_uint_eq(slem_esvm_out_dim(e), d + 1);
    ck_assert_uint_eq(slem_esvm_negatives(e), dn);
    y = malloc(n * (d + 1) * sizeof *y);
    ck_assert_msg(slem_esvm_run_f64(e, y, pos, n, &err) == SLEM_OK, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
      double c = tu_one_minus_cos(y + i * (d + 1), ref + i * (d + 1), d);
      double db = fabs(y[i * (d + 1) + d] - ref[i * (d + 1) + d]);
      ck_assert_msg(c <= 1e-4, "%s: exemplar %zu: 1 - cos = %g", name, i, c);
      ck_assert_msg(db <= 1e-3 * (1 + fabs(ref[i * (d + 1) + d])), "%s: exemplar %zu: b %.9g, "
                    "sklearn %.9g", name, i, y[i * (d + 1) + d], ref[i * (d + 1) + d]);
      if (bias == 0) ck_assert(y[i * (d + 1) + d] == 0);
      if (c > worst) worst = c;
      if (db > worst_b) worst_b = db;
    }
    ck_assert_uint_eq(slem_esvm_zeros(e), 0);
    ck_assert_uint_eq(slem_esvm_unconverged(e), 0);
    cases++;
    slem_esvm_free(e);
    free(pos);
    free(ref);
    free(neg);
    free(y);
  }
  fclose(f);
  ck_assert_int_eq(cases, 4);
  printf("esvm: %d cases against LinearSVC, worst 1 - cos %.3g, worst |b - b_ref| %.3g\n", cases,
         worst, worst_b);
}
END_TEST

/* The unit descriptor is w / |w| of the classifier. */
START_TEST(descriptor_is_the_normalised_w) {
  SlemEsvmOpts o;
  SlemEsvm *e1, *e2;
  SlemError err;
  size_t n, d;
  double *pos = read_all("testdata/esvm/pos.fvecs", &n, &d), *clf, *desc;
  slem_esvm_opts_init(&o);
  e1 = esvm_from("testdata/esvm/neg.fvecs", &o);
  o.classifier = 1;
  e2 = esvm_from("testdata/esvm/neg.fvecs", &o);
  ck_assert_uint_eq(slem_esvm_out_dim(e1), d);
  desc = malloc(n * d * sizeof *desc);
  clf = malloc(n * (d + 1) * sizeof *clf);
  ck_assert_int_eq(slem_esvm_run_f64(e1, desc, pos, n, &err), SLEM_OK);
  ck_assert_int_eq(slem_esvm_run_f64(e2, clf, pos, n, &err), SLEM_OK);
  for (size_t i = 0; i < n; i++) {
    double nrm = 0;
    for (size_t j = 0; j < d; j++) nrm += clf[i * (d + 1) + j] * clf[i * (d + 1) + j];
    nrm = sqrt(nrm);
    for (size_t j = 0; j < d; j++)
      ck_assert_double_eq_tol(desc[i * d + j], clf[i * (d + 1) + j] / nrm, 1e-15);
  }
  slem_esvm_free(e1);
  slem_esvm_free(e2);
  free(pos);
  free(clf);
  free(desc);
}
END_TEST

/* The same bytes for 1, 2 and 5 threads, and an exemplar's result does not depend on its
 * row (so that shards agree with one run). */
START_TEST(deterministic_whatever_the_threads) {
  SlemEsvmOpts o;
  SlemError err;
  size_t n, d;
  double *pos = read_all("testdata/digits/queries.fvecs", &n, &d), *y[3], *moved;
  int threads[3] = {1, 2, 5};
  uint64_t first[3];
  ck_assert_msg(slem_esvm_parallel_rand() == 1, "LIBLINEAR's rand() is not bound to the "
                "per-thread generator: problems would be trained one at a time");
  n = 40;
  for (int t = 0; t < 3; t++) {
    SlemEsvm *e;
    slem_esvm_opts_init(&o);
    o.threads = threads[t];
    o.classifier = 1;
    e = esvm_from("testdata/digits/negatives.fvecs", &o);
    ck_assert_int_eq(slem_esvm_threads(e), threads[t]);
    y[t] = malloc(n * (d + 1) * sizeof *y[t]);
    ck_assert_int_eq(slem_esvm_run_f64(e, y[t], pos, n, &err), SLEM_OK);
    first[t] = slem_esvm_first_loosened(e);
    ck_assert(first[t] == UINT64_MAX || slem_esvm_loosened(e) > 0);
    if (t > 0) ck_assert_msg(memcmp(y[0], y[t], n * (d + 1) * sizeof *y[0]) == 0,
                             "%d threads differ from 1", threads[t]);
    if (t > 0) ck_assert_uint_eq(first[t], first[0]);
    if (t == 2) {
      /* exemplar 7 alone, as the first row of a block */
      moved = malloc((d + 1) * sizeof *moved);
      ck_assert_int_eq(slem_esvm_run_f64(e, moved, pos + 7 * d, 1, &err), SLEM_OK);
      ck_assert(memcmp(moved, y[0] + 7 * (d + 1), (d + 1) * sizeof *moved) == 0);
      free(moved);
    }
    slem_esvm_free(e);
  }
  for (int t = 0; t < 3; t++) free(y[t]);
  free(pos);
}
END_TEST

START_TEST(bad_parameters_and_inputs) {
  SlemEsvmOpts o;
  SlemVecReader *r = NULL;
  SlemVecWriter *w = NULL;
  SlemEsvm *e = NULL;
  SlemError err;
  char *empty = tu_path("empty.txt"), *small = tu_path("small.fvecs"), *out = tu_path("out.fvecs");
  double neg[6] = {1, 0, 0, 1, 1, 1};

  slem_esvm_opts_init(&o);
  o.C = 0;
  ck_assert_int_eq(slem_vecreader_open(&r, "testdata/esvm/neg.fvecs", SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_esvm_new(&e, r, &o, &err), SLEM_EINVAL);
  ck_assert_ptr_null(e);
  ck_assert_ptr_nonnull(strstr(err.msg, "C (0)"));
  o.C = 1;
  o.pos_weight = -1;
  ck_assert_int_eq(slem_esvm_new(&e, r, &o, &err), SLEM_EINVAL);
  o.pos_weight = 1;
  o.bias = -1;
  ck_assert_int_eq(slem_esvm_new(&e, r, &o, &err), SLEM_EINVAL);
  slem_vecreader_free(r);

  /* no negatives: a text file of comments only */
  tu_write_bytes(empty, "# nothing\n1 2\n", 14);
  slem_esvm_opts_init(&o);
  ck_assert_int_eq(slem_vecreader_open(&r, empty, SLEM_FMT_TEXT, &err), SLEM_OK);
  {
    double x[2];
    size_t got;
    ck_assert_int_eq(slem_vecreader_read(r, x, 1, &got, &err), SLEM_OK); /* consume the row */
  }
  ck_assert_int_eq(slem_esvm_new(&e, r, &o, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "no negatives"));
  slem_vecreader_free(r);

  /* a stream whose dimension differs from the negatives' */
  tu_write_fvecs(small, neg, 3, 2);
  e = esvm_from(small, &o);
  ck_assert_int_eq(slem_vecreader_open(&r, "testdata/esvm/pos.fvecs", SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_open(&w, out, SLEM_FMT_FVECS, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_esvm_encode_stream(e, r, w, 16, NULL, NULL, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "dimension 32, but the negatives have dimension 2"), "%s", err.msg);
  slem_vecwriter_abort(w);
  ck_assert(!tu_file_exists(out));
  slem_vecreader_free(r);
  slem_esvm_free(e);
  free(empty);
  free(small);
  free(out);
}
END_TEST

/* slem-esvm as one call (esvmrun.h): its rules, the ids checked against the input before
 * anything is written, the result counted */
START_TEST(the_pipeline_in_one_call) {
  SlemEsvmRunOpts o;
  SlemEsvmRunResult res;
  SlemError err;
  char *ids = tu_path("pos.ids"), *out = tu_path("run.fvecs"), text[4096];
  size_t n, d, len = 0;
  double *pos = read_all("testdata/esvm/pos.fvecs", &n, &d);

  free(pos);
  slem_esvmrun_opts_init(&o);
  ck_assert_int_eq(slem_esvmrun_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no negatives: give -n NEGATIVES");
  o.negatives = "-";
  ck_assert_int_eq(slem_esvmrun_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "the negatives and the input cannot both be stdin");
  o.negatives = "testdata/esvm/neg.fvecs";
  o.input = "testdata/esvm/pos.fvecs";
  o.output = out;
  o.dtype = SLEM_DTYPE_F2;
  ck_assert_int_eq(slem_esvmrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--dtype f2 needs npy output (-F npy, or OUT.npy)");
  o.dtype = SLEM_DTYPE_F4;
  /* one id short: refused before the output exists */
  for (size_t i = 0; i + 1 < n; i++) len += (size_t)snprintf(text + len, sizeof text - len, "e%zu\n", i);
  tu_write_bytes(ids, text, len);
  o.ids = ids;
  ck_assert_int_eq(slem_esvmrun(&o, &res, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "ids for"), "%s", err.msg);
  ck_assert(!tu_file_exists(out));
  o.ids = NULL;
  o.esvm.threads = 2;
  ck_assert_msg(slem_esvmrun(&o, &res, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(res.n, n);
  ck_assert(tu_file_exists(out));
  if (res.zeros == 0) ck_assert_str_eq(res.first_zero, "");
  free(ids);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("esvm");
  TCase *tc = tcase_create("esvm");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, agrees_with_sklearn_linearsvc);
  tcase_add_test(tc, descriptor_is_the_normalised_w);
  tcase_add_test(tc, deterministic_whatever_the_threads);
  tcase_add_test(tc, bad_parameters_and_inputs);
  tcase_add_test(tc, the_pipeline_in_one_call);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

/* Query expansion: AQE, alpha-QE and DBA against numpy references of dirtorch's formula
 * (testdata/expand, scripts/gen-esvm.py), negative scores, ids, the errors. */
#include "testutil.h"

#include "../lib/rank/expand.h"
#include "../lib/io/ids.h"
#include "../lib/formats/vecs.h"

/* reads a whole file (a text file's count is not known up front) */
static double *read_all(const char *path, size_t *n, size_t *d) {
  SlemVecReader *r = NULL;
  SlemError err;
  double *x;
  size_t got, cap = 4096;
  ck_assert_msg(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  *d = slem_vecreader_dim(r);
  x = malloc(cap * *d * sizeof *x);
  ck_assert_int_eq(slem_vecreader_read(r, x, cap, &got, &err), SLEM_OK);
  ck_assert_uint_lt(got, cap);
  *n = got;
  slem_vecreader_free(r);
  return x;
}

static SlemExpander *expander(const char *db, const SlemIds *ids, size_t n, double alpha) {
  SlemVecReader *r = NULL;
  SlemExpander *e = NULL;
  SlemExpandOpts o = {n, alpha};
  SlemError err;
  ck_assert_int_eq(slem_vecreader_open(&r, db, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_msg(slem_expand_new(&e, r, ids, &o, &err) == SLEM_OK, "%s", err.msg);
  slem_vecreader_free(r);
  return e;
}

/* the ranking of q against db by brute force in double, ties to the lower row, with row
 * self left out when self_row < ndb */
static void brute_rank(size_t *rows, double *scores, const double *q, const double *db, size_t ndb,
                       size_t d, size_t self_row) {
  double *s = malloc(ndb * sizeof *s);
  for (size_t j = 0; j < ndb; j++) {
    s[j] = 0;
    for (size_t k = 0; k < d; k++) s[j] += (double)(float)q[k] * (double)(float)db[j * d + k];
    rows[j] = j;
  }
  for (size_t a = 0; a < ndb; a++) /* selection sort: small sizes */
    for (size_t b = a + 1; b < ndb; b++)
      if (s[rows[b]] > s[rows[a]] || (s[rows[b]] == s[rows[a]] && rows[b] < rows[a])) {
        size_t t = rows[a];
        rows[a] = rows[b];
        rows[b] = t;
      }
  if (self_row < ndb) {
    size_t w = 0;
    for (size_t a = 0; a < ndb; a++)
      if (rows[a] != self_row) rows[w++] = rows[a];
  }
  for (size_t a = 0; a < ndb; a++) scores[a] = s[rows[a]];
  free(s);
}

static void against_reference(const char *refpath, const char *qpath, size_t n, double alpha,
                              int dba) {
  size_t nq, d, ndb, d2, nr, dr;
  double *q = read_all(qpath, &nq, &d), *db = read_all("testdata/expand/db.fvecs", &ndb, &d2);
  double *ref = read_all(refpath, &nr, &dr), *y = malloc(d * sizeof *y), worst = 0;
  size_t *rows = malloc(ndb * sizeof *rows);
  double *scores = malloc(ndb * sizeof *scores);
  SlemExpander *e = expander("testdata/expand/db.fvecs", NULL, n, alpha);
  SlemError err;
  ck_assert_uint_eq(nr, nq);
  ck_assert_uint_eq(dr, d);
  for (size_t i = 0; i < nq; i++) {
    double c;
    brute_rank(rows, scores, q + i * d, db, ndb, d, dba ? i : (size_t)-1);
    ck_assert_msg(slem_expand_run(e, y, q + i * d, rows, scores, ndb - (dba != 0), "q", &err) ==
                  SLEM_OK, "%s", err.msg);
    c = tu_one_minus_cos(y, ref + i * d, d);
    ck_assert_msg(c <= 1e-6, "%s: vector %zu: 1 - cos = %g", refpath, i, c);
    if (c > worst) worst = c;
  }
  printf("expand: %s, worst 1 - cos %.3g\n", refpath, worst);
  slem_expand_free(e);
  free(q);
  free(db);
  free(ref);
  free(y);
  free(rows);
  free(scores);
}

START_TEST(aqe_agrees_with_numpy) {
  against_reference("testdata/expand/aqe-n2.txt", "testdata/expand/q.fvecs", 2, 0, 0);
}
END_TEST

START_TEST(alpha_qe_agrees_with_numpy) {
  against_reference("testdata/expand/aqe-n5-a3.txt", "testdata/expand/q.fvecs", 5, 3, 0);
}
END_TEST

START_TEST(dba_agrees_with_numpy) {
  against_reference("testdata/expand/dba-n2.txt", "testdata/expand/db.fvecs", 2, 0, 1);
}
END_TEST

/* x = e1, e2 in the plane; q = (1, 1): weights checked by hand */
START_TEST(weights_follow_dirtorch) {
  char *db = tu_path("plane.fvecs");
  double x[4] = {1, 0, 0, 1}, q[2] = {1, 1}, y[2];
  size_t rows[2] = {0, 1};
  double neg[2] = {0.5, -0.5};
  SlemExpander *e;
  SlemError err;
  tu_write_fvecs(db, x, 2, 2);
  /* alpha 0: both weights 1 whatever the sign: q + e1 + e2 = (2, 2) */
  e = expander(db, NULL, 2, 0);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, neg, 2, "q", &err), SLEM_OK);
  ck_assert_double_eq_tol(y[0], sqrt(0.5), 1e-15);
  ck_assert_double_eq_tol(y[1], sqrt(0.5), 1e-15);
  slem_expand_free(e);
  /* alpha 3: weights 0.125 and -0.125: (1.125, 0.875) */
  e = expander(db, NULL, 2, 3);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, neg, 2, "q", &err), SLEM_OK);
  ck_assert_double_eq_tol(y[0] / y[1], 1.125 / 0.875, 1e-14);
  slem_expand_free(e);
  /* alpha 2: 0.25 and 0.25 */
  e = expander(db, NULL, 2, 2);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, neg, 2, "q", &err), SLEM_OK);
  ck_assert_double_eq_tol(y[0], y[1], 1e-15);
  slem_expand_free(e);
  /* alpha 0.5: no real power of -0.5 */
  e = expander(db, NULL, 2, 0.5);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, neg, 2, "q7", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "query q7: rank 2: score -0.5 to the power alpha = 0.5"), "%s",
                err.msg);
  /* n = 1 uses only the first */
  slem_expand_free(e);
  e = expander(db, NULL, 1, 1);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, neg, 2, "q", &err), SLEM_OK);
  ck_assert_double_eq_tol(y[0] / y[1], 1.5, 1e-14);
  slem_expand_free(e);
  free(db);
}
END_TEST

/* Finite scores near DBL_MAX (a ranking's text holds any double): a row of unit length, or
 * an error naming the query; it was written as zeros (1e300: the squares overflowed) or as
 * NaN (1.7e308: the sum did), status 0 */
START_TEST(huge_scores_stay_unit_or_fail) {
  char *db = tu_path("plane.fvecs");
  double x[4] = {1, 0, 0, 1}, q[2] = {1, 1}, y[2];
  size_t rows[2] = {0, 1};
  double big[2] = {1e300, 1e300}, max[2] = {1.7e308, 1.7e308};
  SlemExpander *e;
  SlemError err;
  tu_write_fvecs(db, x, 2, 2);
  e = expander(db, NULL, 2, 1);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, big, 2, "q", &err), SLEM_OK);
  ck_assert_double_eq_tol(y[0], sqrt(0.5), 1e-15);
  ck_assert_double_eq_tol(y[1], sqrt(0.5), 1e-15);
  slem_expand_free(e);
  x[1] = 1; /* e1 + e2 twice: 2 * 1.7e308 overflows */
  x[2] = 1;
  tu_write_fvecs(db, x, 2, 2);
  e = expander(db, NULL, 2, 1);
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, max, 2, "q5", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "query q5: the sum of its 2 weighted results overflows"), "%s",
                err.msg);
  slem_expand_free(e);
  free(db);
}
END_TEST

START_TEST(rows_ids_and_errors) {
  char *db = tu_path("three.fvecs"), *ids = tu_path("three.ids"), *dup = tu_path("dup.ids");
  double x[6] = {1, 0, 0, 1, 1, 1}, q[2] = {1, 0}, y[2], s[1] = {1};
  size_t row, rows[1] = {0};
  SlemIds *id = NULL;
  SlemVecReader *r = NULL;
  SlemExpander *e;
  SlemExpandOpts o = {0, 0};
  SlemError err;
  tu_write_fvecs(db, x, 3, 2);
  tu_write_bytes(ids, "a\nb\nc\n", 6);
  tu_write_bytes(dup, "a\nb\na\n", 6);
  e = expander(db, NULL, 2, 0);
  ck_assert_int_eq(slem_expand_row(e, "2", 1, &row, &err), SLEM_OK);
  ck_assert_uint_eq(row, 2);
  ck_assert_int_eq(slem_expand_row(e, "3", 1, &row, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "document '3' is not a row of the database (0 to 2"), "%s", err.msg);
  ck_assert_int_eq(slem_expand_row(e, "b", 1, &row, &err), SLEM_EFORMAT);
  ck_assert_int_eq(slem_expand_row(e, "-1", 2, &row, &err), SLEM_EFORMAT);
  /* n larger than the ranking */
  ck_assert_int_eq(slem_expand_run(e, y, q, rows, s, 1, "q3", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "query q3: the ranking lists 1 result, fewer than the 2"), "%s",
                err.msg);
  slem_expand_free(e);

  ck_assert_int_eq(slem_ids_read(&id, ids, &err), SLEM_OK);
  e = expander(db, id, 1, 0);
  ck_assert_int_eq(slem_expand_row(e, "c", 1, &row, &err), SLEM_OK);
  ck_assert_uint_eq(row, 2);
  ck_assert_int_eq(slem_expand_row(e, "2", 1, &row, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "document '2' is not among the database ids"), "%s", err.msg);
  slem_expand_free(e);
  slem_ids_free(id);

  /* duplicate ids: refused when read as ids, and by the expander given them as a list */
  ck_assert_int_eq(slem_ids_read(&id, dup, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "line 3: id 'a' appears twice (line 1)"), "%s", err.msg);
  ck_assert_int_eq(slem_ids_labels_read(&id, dup, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_open(&r, db, SLEM_FMT_AUTO, &err), SLEM_OK);
  o.n = 1;
  ck_assert_int_eq(slem_expand_new(&e, r, id, &o, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "line 3: id 'a' is also on line 1"), "%s", err.msg);
  ck_assert_int_eq(slem_vecreader_rewind(r, &err), SLEM_OK);
  o.n = 0;
  ck_assert_int_eq(slem_expand_new(&e, r, NULL, &o, &err), SLEM_EINVAL);
  o.n = 1;
  o.alpha = -1;
  ck_assert_int_eq(slem_expand_new(&e, r, NULL, &o, &err), SLEM_EINVAL);
  ck_assert_ptr_null(e);
  slem_vecreader_free(r);
  slem_ids_free(id);
  free(db);
  free(ids);
  free(dup);
}
END_TEST

/* slem-expand's rules, in the library (they were cmd/slem-expand.c's); run_files checks
 * them too, before anything is read */
START_TEST(rules_between_options) {
  SlemExpandOpts o;
  SlemExpandFiles f = {0};
  SlemError err;
  uint64_t zeros;
  slem_expand_opts_init(&o);
  f.input = "-";
  f.output = "-";
  f.output_format = SLEM_FMT_AUTO;
  ck_assert_int_eq(slem_expand_check(&f, &o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no database: give -d DATABASE");
  f.db = "db.fvecs";
  ck_assert_int_eq(slem_expand_check(&f, &o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no -n: give the number of results to add to each vector");
  o.n = 2;
  ck_assert_int_eq(slem_expand_check(&f, &o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "the vectors come from stdin: give the ranking with -r RANKING");
  f.ranking = "r.tsv";
  f.qids = "-";
  ck_assert_int_eq(slem_expand_check(&f, &o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "only one input can be stdin");
  f.qids = NULL;
  ck_assert_int_eq(slem_expand_check(&f, &o, &err), SLEM_OK);
  f.output = "out.nosuchformat";
  ck_assert_int_eq(slem_expand_run_files(&f, &o, &zeros, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "out.nosuchformat"));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("expand");
  TCase *tc = tcase_create("expand");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, aqe_agrees_with_numpy);
  tcase_add_test(tc, alpha_qe_agrees_with_numpy);
  tcase_add_test(tc, dba_agrees_with_numpy);
  tcase_add_test(tc, weights_follow_dirtorch);
  tcase_add_test(tc, huge_scores_stay_unit_or_fail);
  tcase_add_test(tc, rows_ids_and_errors);
  tcase_add_test(tc, rules_between_options);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

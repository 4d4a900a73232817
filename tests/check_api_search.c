/* The C API's search and evaluation (slem.h, lib/api/api_search.c, api_eval.c): D and I
 * against a brute force written here (FAISS's layout: best first, ties by the lower row,
 * -1 / -FLT_MAX padding), the same bytes at 1 and 2 threads and for float64 input, 10 000
 * queries, and the measures against values computed by hand; every bad input a status and
 * a message, with nothing written. tests/cli-api-search.sh compares the same calls with
 * the tools' bytes. */
#include "testutil.h"

#include <float.h>

#include "blas.h"
#include "slem.h"

/* Small whole numbers: every product and sum is exact in float and double, so the scores
 * are known exactly, and ties are many. */
static void int_rows(float *x, size_t n, size_t d, int range) {
  for (size_t i = 0; i < n * d; i++) x[i] = (float)((int)(tu_next() % (uint64_t)(2 * range + 1)) - range);
}

/* The brute force: query i's k best rows of db by inner product (cosine with normalize,
 * in double), best first, ties by the lower row, padded to k. */
static void brute(const float *q, size_t nq, const float *db, size_t ndb, size_t d, size_t k,
                  int normalize, float *D, int64_t *I) {
  double *s = malloc((ndb ? ndb : 1) * sizeof *s);
  unsigned char *used = malloc(ndb ? ndb : 1);
  for (size_t i = 0; i < nq; i++) {
    for (size_t r = 0; r < ndb; r++) {
      double ab = 0, aa = 0, bb = 0;
      for (size_t j = 0; j < d; j++) {
        ab += (double)q[i * d + j] * db[r * d + j];
        aa += (double)q[i * d + j] * q[i * d + j];
        bb += (double)db[r * d + j] * db[r * d + j];
      }
      s[r] = (float)(normalize ? (aa > 0 && bb > 0 ? ab / (sqrt(aa) * sqrt(bb)) : 0) : ab);
      used[r] = 0;
    }
    for (size_t c = 0; c < k; c++) {
      long best = -1;
      for (size_t r = 0; r < ndb; r++)
        if (!used[r] && (best < 0 || s[r] > s[best])) best = (long)r;
      if (best >= 0) used[best] = 1;
      D[i * k + c] = best >= 0 ? (float)s[best] : -FLT_MAX;
      I[i * k + c] = best;
    }
  }
  free(s);
  free(used);
}

START_TEST(search_is_the_brute_force_in_faiss_layout) {
  size_t nq = 37, ndb = 500, d = 24, k = 10;
  float *q = malloc(nq * d * sizeof *q), *db = malloc(ndb * d * sizeof *db);
  float *D = malloc(nq * k * sizeof *D), *D2 = malloc(nq * k * sizeof *D2), *Dr = malloc(nq * k * sizeof *Dr);
  int64_t *I = malloc(nq * k * sizeof *I), *I2 = malloc(nq * k * sizeof *I2), *Ir = malloc(nq * k * sizeof *Ir);
  double *q64 = malloc(nq * d * sizeof *q64), *db64 = malloc(ndb * d * sizeof *db64);
  SlemError err = {0};
  int before;
  tu_seed(45);
  int_rows(q, nq, d, 3);
  int_rows(db, ndb, d, 3);
  for (size_t i = 0; i < nq * d; i++) q64[i] = q[i];
  for (size_t i = 0; i < ndb * d; i++) db64[i] = db[i];
  {
    SlemArray qa = {q, SLEM_FLOAT32, nq, d}, da = {db, SLEM_FLOAT32, ndb, d};
    SlemArray qa64 = {q64, SLEM_FLOAT64, nq, d}, da64 = {db64, SLEM_FLOAT64, ndb, d};
    brute(q, nq, db, ndb, d, k, 0, Dr, Ir);
    before = slem_blas_threads();
    ck_assert_int_eq(slem_search(&qa, &da, k, 0, 1, D, I, &err), SLEM_OK);
    ck_assert_int_eq(slem_blas_threads(), before); /* the threads restored */
    ck_assert_mem_eq(I, Ir, nq * k * sizeof *I);
    ck_assert_mem_eq(D, Dr, nq * k * sizeof *D);
    ck_assert_int_eq(slem_search(&qa, &da, k, 0, 2, D2, I2, &err), SLEM_OK);
    ck_assert_int_eq(slem_blas_threads(), before);
    ck_assert_mem_eq(I2, I, nq * k * sizeof *I);
    ck_assert_mem_eq(D2, D, nq * k * sizeof *D);
    /* float64 arrays of the same values: the same bytes */
    memset(D2, 0, nq * k * sizeof *D2);
    ck_assert_int_eq(slem_search(&qa64, &da64, k, 0, 2, D2, I2, &err), SLEM_OK);
    ck_assert_mem_eq(I2, I, nq * k * sizeof *I);
    ck_assert_mem_eq(D2, D, nq * k * sizeof *D);
    /* cosine: the rows agree with the brute force's; the scores within float rounding */
    brute(q, nq, db, ndb, d, k, 1, Dr, Ir);
    ck_assert_int_eq(slem_search(&qa, &da, k, SLEM_SEARCH_NORMALIZE, 1, D, I, &err), SLEM_OK);
    ck_assert_int_eq(slem_search(&qa, &da, k, SLEM_SEARCH_NORMALIZE, 2, D2, I2, &err), SLEM_OK);
    ck_assert_mem_eq(I2, I, nq * k * sizeof *I);
    ck_assert_mem_eq(D2, D, nq * k * sizeof *D);
    for (size_t i = 0; i < nq * k; i++) {
      ck_assert_float_eq_tol(D[i], Dr[i], 1e-6);
      ck_assert(D[i] <= 1.0f + 1e-6f);
      if (i % k) ck_assert(D[i] <= D[i - 1]);
    }
  }
  free(q), free(db), free(D), free(D2), free(Dr), free(I), free(I2), free(Ir), free(q64), free(db64);
}
END_TEST

START_TEST(k_beyond_the_database_is_padded_as_faiss_pads) {
  size_t nq = 5, ndb = 7, d = 4, k = 12;
  float q[5 * 4], db[7 * 4], D[5 * 12], Dr[5 * 12];
  int64_t I[5 * 12], Ir[5 * 12];
  SlemError err = {0};
  SlemArray qa = {q, SLEM_FLOAT32, nq, d}, da = {db, SLEM_FLOAT32, ndb, d}, empty = {NULL, SLEM_FLOAT32, 0, d};
  tu_seed(7);
  int_rows(q, nq, d, 2);
  int_rows(db, ndb, d, 2);
  brute(q, nq, db, ndb, d, k, 0, Dr, Ir);
  ck_assert_int_eq(slem_search(&qa, &da, k, 0, 0, D, I, &err), SLEM_OK);
  ck_assert_mem_eq(I, Ir, sizeof I);
  ck_assert_mem_eq(D, Dr, sizeof D);
  for (size_t i = 0; i < nq; i++)
    for (size_t c = ndb; c < k; c++) {
      ck_assert_int_eq(I[i * k + c], -1);
      ck_assert(D[i * k + c] == -FLT_MAX);
    }
  /* a database of no rows: padding alone (faiss.IndexFlatIP with nothing added) */
  ck_assert_int_eq(slem_search(&qa, &empty, k, 0, 0, D, I, &err), SLEM_OK);
  for (size_t i = 0; i < nq * k; i++) {
    ck_assert_int_eq(I[i], -1);
    ck_assert(D[i] == -FLT_MAX);
  }
}
END_TEST

START_TEST(ten_thousand_queries_beyond_the_blocks) {
  size_t nq = 10000, ndb = 300, d = 16, k = 7;
  float *q = malloc(nq * d * sizeof *q), *db = malloc(ndb * d * sizeof *db);
  float *D = malloc(nq * k * sizeof *D), *Dr = malloc(nq * k * sizeof *Dr);
  int64_t *I = malloc(nq * k * sizeof *I), *Ir = malloc(nq * k * sizeof *Ir);
  SlemError err = {0};
  SlemArray qa = {q, SLEM_FLOAT32, nq, d}, da = {db, SLEM_FLOAT32, ndb, d};
  tu_seed(10000);
  int_rows(q, nq, d, 4);
  int_rows(db, ndb, d, 4);
  brute(q, nq, db, ndb, d, k, 0, Dr, Ir);
  ck_assert_int_eq(slem_search(&qa, &da, k, 0, 2, D, I, &err), SLEM_OK);
  ck_assert_mem_eq(I, Ir, nq * k * sizeof *I);
  ck_assert_mem_eq(D, Dr, nq * k * sizeof *D);
  free(q), free(db), free(D), free(Dr), free(I), free(Ir);
}
END_TEST

/* A failing call must leave D and I as they were. */
#define UNTOUCHED(D, I, n)                                                                   \
  for (size_t u_ = 0; u_ < (n); u_++) {                                                      \
    ck_assert(D[u_] == 12345.0f);                                                            \
    ck_assert_int_eq(I[u_], 777);                                                            \
  }

START_TEST(bad_search_input_is_refused_and_writes_nothing) {
  float q[3 * 4] = {0}, db[6 * 5] = {0}, D[3 * 4];
  double q64[3 * 4] = {0};
  int64_t I[3 * 4];
  SlemError err = {0};
  SlemArray qa = {q, SLEM_FLOAT32, 3, 4}, da = {db, SLEM_FLOAT32, 6, 4}, d5 = {db, SLEM_FLOAT32, 6, 5};
  SlemArray none = {q, SLEM_FLOAT32, 0, 4}, bad_dtype = {q, 7, 3, 4}, q64a = {q64, SLEM_FLOAT64, 3, 4};
  for (size_t i = 0; i < 12; i++) D[i] = 12345.0f, I[i] = 777;
  ck_assert_int_eq(slem_search(&qa, &da, 0, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "k 0: ask for at least one result per query");
  ck_assert_int_eq(slem_search(&qa, &d5, 4, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "database: 5 columns, but the queries' dimension is 4");
  ck_assert_int_eq(slem_search(&none, &da, 4, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "queries: no rows");
  ck_assert_int_eq(slem_search(&bad_dtype, &da, 4, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "queries: dtype 7, not SLEM_FLOAT32 (1) or SLEM_FLOAT64 (2)");
  ck_assert_int_eq(slem_search(&qa, &da, 4, 8, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_search(&qa, &da, 4, 0, 0, NULL, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "D is NULL");
  ck_assert_int_eq(slem_search(NULL, &da, 4, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_search(&qa, &da, 4, 0, -1, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "threads: -1, not 0 (SLEM_THREADS, else all cores) to 1024");
  ck_assert_int_eq(slem_search_kernel(NULL, &qa, &da, 4, 0, 0, D, I, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no cache (NULL)");
  /* a NaN row, named by its row and column, in either array and either dtype */
  q[2 * 4 + 1] = NAN;
  ck_assert_int_eq(slem_search(&qa, &da, 4, 0, 0, D, I, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "queries: row 2, column 1: NaN");
  q[2 * 4 + 1] = 0;
  db[5 * 4 + 3] = -INFINITY;
  ck_assert_int_eq(slem_search(&qa, &da, 4, 0, 0, D, I, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "database: row 5, column 3: infinite");
  db[5 * 4 + 3] = 0;
  q64[1 * 4] = NAN;
  ck_assert_int_eq(slem_search(&q64a, &da, 4, 0, 0, D, I, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "queries: row 1, column 0: NaN");
  /* a float64 beyond float32's range, in which the inner product reads the vectors */
  q64[1 * 4] = 0;
  q64[2 * 4 + 3] = -1e39;
  ck_assert_int_eq(slem_search(&q64a, &da, 4, 0, 0, D, I, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "queries: row 2, column 3: -9.9999999999999994e+38 is beyond float32's "
                   "range, in which the vectors are read");
  q64[2 * 4 + 3] = 3.4e38; /* below FLT_MAX: read */
  ck_assert_int_eq(slem_search(&q64a, &da, 4, 0, 0, D, I, &err), SLEM_OK);
  for (size_t i = 0; i < 12; i++) D[i] = 12345.0f, I[i] = 777;
  /* beyond the first block of the check */
  {
    float *big = calloc(2000 * 4, sizeof *big);
    SlemArray ba = {big, SLEM_FLOAT32, 2000, 4};
    big[1500 * 4 + 2] = INFINITY;
    ck_assert_int_eq(slem_search(&qa, &ba, 4, 0, 0, D, I, &err), SLEM_EFORMAT);
    ck_assert_str_eq(err.msg, "database: row 1500, column 2: infinite");
    free(big);
  }
  /* the database's values are refused by its reader in the first pass, which ends before any
   * hit is handed out: nothing written with several blocks of queries and tiles either */
  {
    size_t nq = 3000, ndb = 10000, k = 5;
    float *bq = calloc(nq * 4, sizeof *bq), *bd = calloc(ndb * 4, sizeof *bd);
    float *bD = malloc(nq * k * sizeof *bD);
    int64_t *bI = malloc(nq * k * sizeof *bI);
    SlemArray bqa = {bq, SLEM_FLOAT32, nq, 4}, bda = {bd, SLEM_FLOAT32, ndb, 4};
    for (size_t i = 0; i < nq * k; i++) bD[i] = 12345.0f, bI[i] = 777;
    bd[(ndb - 1) * 4 + 1] = NAN;
    ck_assert_int_eq(slem_search(&bqa, &bda, k, 0, 2, bD, bI, &err), SLEM_EFORMAT);
    ck_assert_str_eq(err.msg, "database: row 9999, column 1: NaN");
    UNTOUCHED(bD, bI, nq * k);
    bd[(ndb - 1) * 4 + 1] = 0;
    bq[2999 * 4] = INFINITY; /* a query of the second block: found before the first is written */
    ck_assert_int_eq(slem_search(&bqa, &bda, k, 0, 2, bD, bI, &err), SLEM_EFORMAT);
    ck_assert_str_eq(err.msg, "queries: row 2999, column 0: infinite");
    UNTOUCHED(bD, bI, nq * k);
    free(bq), free(bd), free(bD), free(bI);
  }
  /* no error: NULL err is allowed too */
  ck_assert_int_eq(slem_search(&qa, &da, 0, 0, 0, D, I, NULL), SLEM_EINVAL);
  UNTOUCHED(D, I, 12);
}
END_TEST

/* A cache fitted here on n x d negatives with the options name=value (NULL-terminated). */
static SlemCache *fit(const float *neg, size_t n, size_t d, const char *const *opts) {
  SlemFitOptions *o = NULL;
  SlemCache *c = NULL;
  SlemError err = {0};
  SlemArray x = {neg, SLEM_FLOAT32, n, d};
  ck_assert_int_eq(slem_fit_options_new(&o, &err), SLEM_OK);
  for (size_t i = 0; opts[i]; i += 2)
    ck_assert_msg(slem_fit_options_set(o, opts[i], opts[i + 1], &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_fit(&c, &x, o, 1, &err) == SLEM_OK, "%s", err.msg);
  slem_fit_options_free(o);
  return c;
}

START_TEST(kernel_search_is_exact_and_refuses_what_it_cannot_score) {
  size_t n = 300, nq = 20, ndb = 150, d = 8, k = 12;
  float *neg = malloc(n * d * sizeof *neg), *q = malloc(nq * d * sizeof *q), *db = malloc(ndb * d * sizeof *db);
  float *D = malloc(nq * k * sizeof *D), *D2 = malloc(nq * k * sizeof *D2);
  int64_t *I = malloc(nq * k * sizeof *I), *I2 = malloc(nq * k * sizeof *I2);
  const char *rbf[] = {"kernel", "rbf:g=1", "rank", "16", NULL}, *chi2[] = {"kernel", "chi2", "rank", "16", NULL};
  const char *linear[] = {NULL};
  SlemCache *c;
  SlemError err = {0};
  SlemArray qa = {q, SLEM_FLOAT32, nq, d}, da = {db, SLEM_FLOAT32, ndb, d};
  tu_seed(3);
  for (size_t i = 0; i < n * d; i++) neg[i] = (float)tu_uniform();
  for (size_t i = 0; i < nq * d; i++) q[i] = (float)tu_uniform();
  for (size_t i = 0; i < ndb * d; i++) db[i] = (float)tu_uniform();
  c = fit(neg, n, d, rbf);
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, 0, 1, D, I, &err), SLEM_OK);
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, 0, 2, D2, I2, &err), SLEM_OK);
  ck_assert_mem_eq(I2, I, nq * k * sizeof *I);
  ck_assert_mem_eq(D2, D, nq * k * sizeof *D);
  for (size_t i = 0; i < nq * k; i++) {
    ck_assert(I[i] >= 0 && I[i] < (int64_t)ndb);
    ck_assert(D[i] <= 1.0f + 1e-6f && D[i] >= -1.0f - 1e-6f); /* a normalised similarity */
    if (i % k) ck_assert(D[i] < D[i - 1] || (D[i] == D[i - 1] && I[i] > I[i - 1]));
  }
  for (size_t i = 0; i < nq * k; i++) D2[i] = 12345.0f, I2[i] = 777;
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, SLEM_SEARCH_NORMALIZE, 1, D2, I2, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "SLEM_SEARCH_NORMALIZE does not go with a kernel cache: its similarity is normalised");
  {
    SlemArray q7 = {q, SLEM_FLOAT32, nq, 7};
    ck_assert_int_eq(slem_search_kernel(c, &q7, &da, k, 0, 1, D2, I2, &err), SLEM_EINVAL);
    ck_assert_str_eq(err.msg, "queries: 7 columns, but the cache's dimension is 8");
  }
  slem_cache_free(c);
  c = fit(neg, n, d, linear);
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, 0, 1, D2, I2, &err), SLEM_EINVAL);
  ck_assert(strncmp(err.msg, "a cache of kind linear: the exact similarity takes a kernel cache", 64) == 0);
  slem_cache_free(c);
  /* a kernel of histograms: a negative value refused before the search, by row and column */
  c = fit(neg, n, d, chi2);
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, 0, 1, D, I, &err), SLEM_OK);
  db[140 * d + 6] = -0.5f;
  ck_assert_int_eq(slem_search_kernel(c, &qa, &da, k, 0, 1, D2, I2, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "database: row 140, column 6: -0.5 is negative; the chi2 kernel needs histograms");
  slem_cache_free(c);
  UNTOUCHED(D2, I2, nq * k);
  free(neg), free(q), free(db), free(D), free(D2), free(I), free(I2);
}
END_TEST

/* Two queries of labels 0 and 1 against four rows of labels 0 1 0 1: query 0 ranks 0 1 2
 * (relevant at ranks 1 and 3 of R = 2: AP (1 + 2/3) / 2), query 1 ranks 3 then nothing
 * (-1; relevant at rank 1 of R = 2: AP 1/2). */
static const int64_t ql[2] = {0, 1}, dl[4] = {0, 1, 0, 1};
static const int64_t I2[2 * 3] = {0, 1, 2, 3, -1, -1};

START_TEST(evaluate_gives_the_measures_of_the_rows) {
  SlemTruthArrays truth = {NULL, ql, dl, 4, 0};
  const char *names[] = {"map", "P_1", "P_5", "P_10", "recall_2", "recall_1", "recip_rank", "P.2", "num_rel_ret"};
  double v[9];
  SlemError err = {0};
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &truth, names, 9, v, &err), SLEM_OK);
  ck_assert_double_eq_tol(v[0], ((1 + 2.0 / 3) / 2 + 0.5) / 2, 1e-15);
  ck_assert_double_eq(v[1], 1);
  ck_assert_double_eq_tol(v[2], (2.0 / 5 + 1.0 / 5) / 2, 1e-15);
  ck_assert_double_eq_tol(v[3], (2.0 / 10 + 1.0 / 10) / 2, 1e-15);
  ck_assert_double_eq(v[4], 0.5);          /* R@2: 1 of 2 for each */
  ck_assert_double_eq(v[5], 0.5);          /* R@1: 1 of 2 for each */
  ck_assert_double_eq(v[6], 1);            /* recip_rank */
  ck_assert_double_eq_tol(v[7], (0.5 + 0.5) / 2, 1e-15); /* P.2 */
  ck_assert_double_eq(v[8], 3);            /* num_rel_ret: a sum */
  /* qrels naming the same rows: the same numbers */
  {
    char *path = tu_path("rows.qrels");
    FILE *f = fopen(path, "w");
    SlemTruthArrays qt = {path, NULL, NULL, 0, 0};
    double w[9];
    fputs("0 0 0 1\n0 0 2 1\n1 0 1 1\n1 0 3 1\n", f);
    fclose(f);
    ck_assert_int_eq(slem_evaluate(I2, 2, 3, &qt, names, 9, w, &err), SLEM_OK);
    ck_assert_mem_eq(w, v, sizeof v);
    /* a ranking file of the same rows (tsv): the same numbers */
    {
      char *rk = tu_path("r.tsv");
      f = fopen(rk, "w");
      fputs("0\t1\t0\t3\n0\t2\t1\t2\n0\t3\t2\t1\n1\t1\t3\t5\n", f);
      fclose(f);
      memset(w, 0, sizeof w);
      ck_assert_int_eq(slem_evaluate_file(rk, NULL, &qt, names, 9, w, &err), SLEM_OK);
      ck_assert_mem_eq(w, v, sizeof v);
      truth.nq = 2;
      memset(w, 0, sizeof w);
      ck_assert_int_eq(slem_evaluate_file(rk, "tsv", &truth, names, 9, w, &err), SLEM_OK);
      ck_assert_mem_eq(w, v, sizeof v);
      free(rk);
    }
    free(path);
  }
}
END_TEST

START_TEST(bad_evaluate_input_is_refused_and_writes_nothing) {
  SlemTruthArrays truth = {NULL, ql, dl, 4, 0}, both = {"x.qrels", ql, dl, 4, 0}, neither = {0};
  const char *map[] = {"map"}, *unknown[] = {"map", "mAP"}, *several[] = {"ndcg_cut"};
  const char *runid[] = {"runid"};
  int64_t out_of_range[2 * 3] = {0, 1, 4, 3, -1, -1}, below[2 * 3] = {0, -2, 1, 3, -1, -1};
  int64_t twice[2 * 3] = {0, 1, 0, 3, -1, -1};
  double v[2] = {42, 42};
  SlemError err = {0};
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &truth, unknown, 2, v, &err), SLEM_EINVAL);
  ck_assert(strncmp(err.msg, "unknown measure 'mAP': map, P_1, P_5, P_10, recall_K, or one of "
                    "slem-eval -M's (num_q, num_ret,", 88) == 0);
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &truth, several, 1, v, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "measure 'ndcg_cut' has 9 values (one per cut-off): name one, as ndcg_cut.5");
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &truth, runid, 1, v, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "runid is not a number (--trec-compat prints it)");
  ck_assert_int_eq(slem_evaluate(out_of_range, 2, 3, &truth, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "I: row 0, column 2: 4 is not a row of the database (0 to 3, or -1 for none)");
  ck_assert_int_eq(slem_evaluate(below, 2, 3, &truth, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "I: row 0, column 1: -2 is not a row of the database (0 to 3, or -1 for none)");
  ck_assert_int_eq(slem_evaluate(twice, 2, 3, &truth, map, 1, v, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "I: row 0, column 2: id '0' appears twice for query '0'");
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &both, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_evaluate(I2, 2, 3, &neither, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_evaluate(I2, 2, 0, &truth, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_evaluate(NULL, 2, 3, &truth, map, 1, v, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_evaluate_file("/nonexistent/r.tsv", NULL, &truth, map, 1, v, &err),
                   SLEM_EINVAL); /* labels without their count */
  truth.nq = 2;
  ck_assert_int_eq(slem_evaluate_file("/nonexistent/r.tsv", NULL, &truth, map, 1, v, &err), SLEM_EIO);
  ck_assert_int_eq(slem_evaluate_file("/nonexistent/r.tsv", "xml", &truth, map, 1, v, &err), SLEM_EINVAL);
  {
    SlemTruthArrays missing = {"/nonexistent/q.qrels", NULL, NULL, 0, 0};
    ck_assert_int_eq(slem_evaluate(I2, 2, 3, &missing, map, 1, v, &err), SLEM_EIO);
    ck_assert(strstr(err.msg, "/nonexistent/q.qrels") != NULL);
  }
  ck_assert(v[0] == 42 && v[1] == 42);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("api_search");
  TCase *tc = tcase_create("api_search");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, search_is_the_brute_force_in_faiss_layout);
  tcase_add_test(tc, k_beyond_the_database_is_padded_as_faiss_pads);
  tcase_add_test(tc, ten_thousand_queries_beyond_the_blocks);
  tcase_add_test(tc, bad_search_input_is_refused_and_writes_nothing);
  tcase_add_test(tc, kernel_search_is_exact_and_refuses_what_it_cannot_score);
  tcase_add_test(tc, evaluate_gives_the_measures_of_the_rows);
  tcase_add_test(tc, bad_evaluate_input_is_refused_and_writes_nothing);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

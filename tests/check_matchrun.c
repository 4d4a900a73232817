/* slem_matchrun(): a whole search driven as slem-match drives it, without a process. */
#include "testutil.h"

#include "../lib/rank/matchrun.h"
#include "../lib/io/mem.h"
#include "../lib/formats/tilecache.h"

#define D 16
#define NQ 2500 /* beyond one block of 2048 queries */
#define NDB 3000
#define K 7

/* Small integers: every score is an exact integer, the ranking known without rounding,
 * and ties are many (broken by the lower row). */
static double *int_rows(size_t n) {
  double *x = malloc(n * D * sizeof *x);
  for (size_t i = 0; i < n * D; i++) x[i] = (double)(int)(tu_next() % 7) - 3;
  return x;
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  char *b;
  long len;
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  rewind(f);
  b = malloc((size_t)len + 1);
  ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
  b[len] = 0;
  fclose(f);
  *n = (size_t)len;
  return b;
}

/* The expected tsv: brute force over the integers, best first, ties by lower row. */
static char *brute_tsv(const double *q, const double *x) {
  size_t cap = (size_t)NQ * K * 48, len = 0;
  char *out = malloc(cap);
  for (size_t i = 0; i < NQ; i++) {
    double best[K];
    size_t row[K], n = 0;
    for (size_t j = 0; j < NDB; j++) {
      double s = 0;
      size_t p;
      for (size_t l = 0; l < D; l++) s += q[i * D + l] * x[j * D + l];
      if (n == K && s <= best[K - 1]) continue;
      p = n < K ? n++ : K - 1;
      while (p > 0 && best[p - 1] < s) {
        best[p] = best[p - 1];
        row[p] = row[p - 1];
        p--;
      }
      best[p] = s;
      row[p] = j;
    }
    for (size_t r = 0; r < n; r++)
      len += (size_t)snprintf(out + len, cap - len, "%zu\t%zu\t%zu\t%.9g\n", i, r + 1, row[r],
                              (double)(float)best[r]);
  }
  return out;
}

static double *qv, *xv;
static char *qpath, *dbpath, *expected;

static void setup(void) {
  if (qv) return;
  tu_seed(28);
  qv = int_rows(NQ);
  xv = int_rows(NDB);
  qpath = tu_path("q.fvecs");
  dbpath = tu_path("db.fvecs");
  tu_write_fvecs(qpath, qv, NQ, D);
  tu_write_fvecs(dbpath, xv, NDB, D);
  expected = brute_tsv(qv, xv);
}

static void run_ok(SlemMatchRunOpts *o, SlemMatchRunResult *res) {
  SlemError err;
  ck_assert_msg(slem_matchrun(o, res, &err) == SLEM_OK, "%s", err.msg);
}

START_TEST(a_whole_search_writes_the_exact_ranking) {
  const char *db[1];
  char *out = tu_path("r.tsv"), *got;
  size_t n;
  SlemMatchRunOpts o;
  SlemMatchRunResult res;
  setup();
  db[0] = dbpath;
  slem_matchrun_opts_init(&o);
  ck_assert_str_eq(o.queries, "-");
  ck_assert_uint_eq(o.match.memory, SLEM_MEMORY_AUTO);
  o.queries = qpath;
  o.db = db;
  o.ndb = 1;
  o.output = out;
  o.match.k = K;
  run_ok(&o, &res);
  ck_assert_uint_eq(res.stats.nq, NQ);
  ck_assert_uint_eq(res.stats.ndb, NDB);
  ck_assert_uint_eq(res.stats.passes, 2);
  got = slurp(out, &n);
  ck_assert_uint_eq(n, strlen(expected));
  ck_assert_msg(strcmp(got, expected) == 0, "another ranking than the brute force's");
  free(got);
  free(out);
}
END_TEST

/* The budget comes in the options: none kept reads the files every pass, enough keeps them
 * after the first; the bytes written are the same. */
START_TEST(the_memory_budget_is_an_option) {
  const char *db[1];
  char *out = tu_path("m.tsv"), *got;
  size_t budgets[] = {0, 5000, (size_t)64 << 20};
  uint64_t reads[] = {10, 10, 1};
  size_t n;
  SlemMatchRunOpts o;
  SlemMatchRunResult res;
  setup();
  db[0] = dbpath;
  for (size_t b = 0; b < 3; b++) {
    slem_matchrun_opts_init(&o);
    o.queries = qpath;
    o.db = db;
    o.ndb = 1;
    o.output = out;
    o.match.k = K;
    o.match.qblock = 250;
    o.match.dblock = 100;
    o.match.memory = budgets[b];
    run_ok(&o, &res);
    ck_assert_uint_eq(res.stats.passes, 10);
    ck_assert_uint_eq(res.stats.reads, reads[b]);
    got = slurp(out, &n);
    ck_assert_msg(strcmp(got, expected) == 0, "budget %zu: another ranking", budgets[b]);
    free(got);
  }
  free(out);
}
END_TEST

static void count_warning(void *ctx, const char *msg) {
  ck_assert_ptr_nonnull(strstr(msg, "--shard with npy"));
  ++*(int *)ctx;
}

/* npy through the same call, a shard's warning through the callback. */
START_TEST(npy_and_warnings_go_through_the_options) {
  const char *db[1];
  char *out = tu_path("r.npy"), *iname = tu_path("r.I.npy");
  int warned = 0;
  SlemMatchRunOpts o;
  SlemMatchRunResult res;
  setup();
  db[0] = dbpath;
  slem_matchrun_opts_init(&o);
  o.queries = qpath;
  o.db = db;
  o.ndb = 1;
  o.output = out;
  o.match.k = K;
  o.shard = (SlemShard){1, 2};
  o.warn = count_warning;
  o.warn_ctx = &warned;
  run_ok(&o, &res);
  ck_assert_int_eq(warned, 1);
  ck_assert_uint_eq(res.stats.ndb, NDB - NDB / 2);
  ck_assert(tu_file_exists(iname));
  free(out);
  free(iname);
}
END_TEST

/* The rules between options are the library's, reported as the options' (usage) errors;
 * nothing is written. */
START_TEST(option_rules_are_usage_errors) {
  const char *db[1], *two[2];
  char *out = tu_path("never.tsv");
  SlemMatchRunOpts o;
  SlemMatchRunResult res;
  SlemError err;
  setup();
  db[0] = dbpath;
  slem_matchrun_opts_init(&o);
  o.queries = qpath;
  o.output = out;
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_int_eq(res.usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "no database"));
  o.db = db;
  o.ndb = 1;
  o.couple = 1;
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_int_eq(res.usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "--couple goes with a kernel cache"));
  o.couple = 0;
  o.match.normalize = 1;
  o.match.affine = 1;
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_int_eq(res.usage, 1);
  o.match.normalize = o.match.affine = 0;
  two[0] = two[1] = dbpath;
  o.db = two;
  o.ndb = 2;
  o.db_ids = db;
  o.ndb_ids = 1;
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "--db-ids for 2 database files"));
  o.db = db;
  o.ndb = 1;
  o.db_ids = NULL;
  o.ndb_ids = 0;
  o.output = qpath; /* an input */
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_int_eq(res.usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "is also an input"));
  /* npy to stdout: the options' fault (it was a data error, exit 1) */
  o.output = "-";
  o.output_format = "npy";
  ck_assert_int_eq(slem_matchrun_check(&o, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EINVAL);
  ck_assert_int_eq(res.usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "npy rankings are two files"));
  o.output_format = NULL;
  /* a data error is not the options' */
  o.output = out;
  o.queries = dbpath;
  o.match.affine = 1;
  ck_assert_int_eq(slem_matchrun(&o, &res, &err), SLEM_EFORMAT);
  ck_assert_int_eq(res.usage, 0);
  ck_assert(!tu_file_exists(out));
  free(out);
}
END_TEST

/* Rows: all or none under the budget. Derived: in order, kept so far stay past the budget,
 * all dropped out of order or when dropped. */
START_TEST(the_tile_cache_keeps_within_its_budget) {
  SlemTileCache *c;
  SlemError err;
  SlemBlockPos pos = {"db", 1, 0}, got;
  char rows[100];
  size_t nd;
  memset(rows, 7, sizeof rows);
  ck_assert_int_eq(slem_tilecache_new(&c, 250, 1, &err), SLEM_OK);
  ck_assert(slem_tilecache_keeping(c));
  slem_tilecache_keep_rows(c, rows, 10, 100, &pos);
  pos.row = 10;
  slem_tilecache_keep_rows(c, rows, 10, 100, &pos);
  ck_assert_uint_eq(slem_tilecache_tiles(c), 2);
  ck_assert_int_eq(((const char *)slem_tilecache_rows(c, 1, &nd, &got))[99], 7);
  ck_assert_uint_eq(nd, 10);
  ck_assert_uint_eq(got.row, 10);
  slem_tilecache_keep_rows(c, rows, 10, 100, &pos); /* 300 > 250: none */
  ck_assert(!slem_tilecache_keeping(c));
  ck_assert_uint_eq(slem_tilecache_tiles(c), 0);
  ck_assert_ptr_nonnull(slem_tilecache_derive(c, 0, 10, 100));
  ck_assert_ptr_nonnull(slem_tilecache_derive(c, 1, 5, 100));
  ck_assert_ptr_null(slem_tilecache_derive(c, 2, 5, 100)); /* past the budget: stops */
  ck_assert_ptr_null(slem_tilecache_derive(c, 3, 5, 10));
  ck_assert_ptr_nonnull(slem_tilecache_derived(c, 1, 5));
  ck_assert_ptr_null(slem_tilecache_derived(c, 1, 6)); /* another tile */
  ck_assert_ptr_null(slem_tilecache_derived(c, 2, 5));
  slem_tilecache_drop_derived(c);
  ck_assert_ptr_null(slem_tilecache_derived(c, 0, 10));
  slem_tilecache_free(c);
  ck_assert_int_eq(slem_tilecache_new(&c, 1000, 0, &err), SLEM_OK);
  ck_assert(!slem_tilecache_keeping(c));
  ck_assert_ptr_null(slem_tilecache_derive(c, 1, 5, 10)); /* out of order: stops */
  ck_assert_ptr_null(slem_tilecache_derive(c, 0, 5, 10));
  slem_tilecache_free(c);
  slem_tilecache_free(NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("matchrun");
  TCase *tc = tcase_create("matchrun");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, a_whole_search_writes_the_exact_ranking);
  tcase_add_test(tc, the_memory_budget_is_an_option);
  tcase_add_test(tc, npy_and_warnings_go_through_the_options);
  tcase_add_test(tc, option_rules_are_usage_errors);
  tcase_add_test(tc, the_tile_cache_keeps_within_its_budget);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

/* trec_eval-compatible evaluation against the golden outputs of scripts/gen-trec.py, whose
 * transcription of trec_eval's definitions printed the same lines as trec_eval 10.0 on these
 * runs: exact ties broken by decreasing docno, ranks ignored, graded relevance, unjudged
 * documents, run topics without qrels, qrels topics without results (with and without -c),
 * another relevance level. Then the errors. */
#include "testutil.h"

#include "../lib/eval/measures.h"
#include "../lib/eval/treceval.h"

#define TD "testdata/trec/"

/* Feeds a TREC run to ev with a reader of its own (qid Q0 docno rank score tag). */
static void feed_run(SlemTrecEval *ev, const char *path) {
  FILE *f = fopen(path, "r");
  char line[512], q[128], d[128];
  double s;
  uint64_t n = 0;
  SlemError err;
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f)) {
    n++;
    ck_assert_int_eq(sscanf(line, "%127s %*s %127s %*s %lf", q, d, &s), 3);
    ck_assert_msg(slem_treceval_result(ev, q, d, s, path, n, &err) == SLEM_OK, "%s", err.msg);
  }
  fclose(f);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf = NULL;
  size_t cap = 0;
  ck_assert_ptr_nonnull(f);
  ck_assert(getdelim(&buf, &cap, '\0', f) > 0);
  fclose(f);
  return buf;
}

static const char *const all_measures[] = {"num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                           "gm_map", "Rprec", "recip_rank", "iprec_at_recall",
                                           "P", "ndcg"};

/* Evaluates base.run against base.qrels and compares with expected.NAME.txt. */
static void golden(const char *base, const char *name, int complete, int per_query, long level,
                   uint64_t want_skipped) {
  char run[256], qrels[256], expect[256], *got = NULL, *want;
  size_t len = 0;
  uint64_t skipped = 99;
  SlemTrecOpts o;
  SlemTrecEval *ev;
  SlemError err;
  FILE *out = open_memstream(&got, &len);
  snprintf(run, sizeof run, TD "%s.run", base);
  snprintf(qrels, sizeof qrels, TD "%s.qrels", base);
  snprintf(expect, sizeof expect, TD "expected.%s.txt", name);
  slem_treceval_opts_init(&o);
  o.complete = complete;
  o.per_query = per_query;
  o.relevance_level = level;
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  for (size_t i = 0; i < sizeof all_measures / sizeof *all_measures; i++)
    ck_assert_int_eq(slem_treceval_measure(ev, all_measures[i], &err), SLEM_OK);
  ck_assert_msg(slem_treceval_read_qrels(ev, qrels, &err) == SLEM_OK, "%s", err.msg);
  feed_run(ev, run);
  ck_assert_msg(slem_treceval_write(ev, out, &skipped, &err) == SLEM_OK, "%s", err.msg);
  fclose(out);
  want = slurp(expect);
  ck_assert_msg(strcmp(got, want) == 0, "%s differs:\n%s", expect, got);
  ck_assert_uint_eq(skipped, want_skipped);
  free(got);
  free(want);
  slem_treceval_free(ev);
}

START_TEST(edge_cases) {
  golden("edge", "edge", 0, 0, 1, 1); /* q4 of the qrels is not in the run */
  golden("edge", "edge-q", 0, 1, 1, 1);
  golden("edge", "edge-c", 1, 0, 1, 0);
  golden("edge", "edge-cq", 1, 1, 1, 0);
  golden("edge", "edge-l2", 0, 1, 2, 1);
}
END_TEST

START_TEST(digits) {
  golden("digits", "digits", 0, 0, 1, 10);
  golden("digits", "digits-cq", 1, 1, 1, 0);
}
END_TEST

/* The default set is trec_eval's official one without runid and bpref; cut-off lists. */
START_TEST(measure_lists) {
  SlemTrecOpts o;
  SlemTrecEval *ev;
  SlemError err;
  char *got = NULL;
  size_t len = 0;
  FILE *out;
  slem_treceval_opts_init(&o);
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "P.2,1", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "iprec_at_recall.0.5", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "map", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, TD "edge.qrels", &err), SLEM_OK);
  feed_run(ev, TD "edge.run");
  out = open_memstream(&got, &len);
  ck_assert_int_eq(slem_treceval_write(ev, out, NULL, &err), SLEM_OK);
  fclose(out);
  /* P by hand: re-sorted, q1 is d4 (0) d7 (unjudged) d3 d1 d2, q10 is d (2) c (0) b a, q2
   * is x1 (unjudged) x3 (unjudged) x2 x10 x4, and q5 has no relevant document: P_1 is
   * (0 + 1 + 0 + 0) / 4, P_2 (0 + 1/2 + 0 + 0) / 4; the cut-offs come out sorted. map and
   * iprec as trec_eval 10.0 prints them for these files. */
  ck_assert_str_eq(got, "map                   \tall\t0.3465\n"
                        "iprec_at_recall_0.50  \tall\t0.5250\n"
                        "P_1                   \tall\t0.2500\n"
                        "P_2                   \tall\t0.1250\n");
  free(got);
  slem_treceval_free(ev);
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "P.0", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_treceval_measure(ev, "P.5,5", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "5 twice"));
  ck_assert_int_eq(slem_treceval_measure(ev, "iprec_at_recall.1.5", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_treceval_measure(ev, "map.3", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_treceval_measure(ev, "mapp", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown measure 'mapp'"));
  /* what trec_eval has and slem does not is named as such, with the reason */
  ck_assert_int_eq(slem_treceval_measure(ev, "rbp", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "rbp: not supported by slem: trec_eval 10.0's m_rbp.c"));
  ck_assert_int_eq(slem_treceval_measure(ev, "prefs_simp", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "not supported by slem: preference judgements"));
  slem_treceval_free(ev);
}
END_TEST

/* Parameters that are not cut-offs: kept as given for the value's name, one value; the first
 * parameters given for a measure win, as in trec_eval. */
START_TEST(measure_params) {
  SlemMeasureReq req;
  SlemTrecOpts o;
  SlemTrecEval *ev;
  SlemError err;
  char name[64], *got = NULL;
  size_t len = 0;
  FILE *out;
  ck_assert_int_eq(slem_measure_parse(&req, "ndcg.1=0,2=1.5", &err), SLEM_OK);
  ck_assert_int_eq(req.gain_map, 1);
  ck_assert_uint_eq(req.ncuts, 4);
  ck_assert(req.cuts[0] == 1 && req.cuts[1] == 0 && req.cuts[2] == 2 && req.cuts[3] == 1.5);
  slem_measure_value_name(&req, 0, name, sizeof name);
  ck_assert_str_eq(name, "ndcg_1=0,2=1.5");
  ck_assert_int_eq(slem_measure_parse(&req, "utility.2,-1,0,0.5", &err), SLEM_OK);
  ck_assert_int_eq(req.gain_map, 0);
  ck_assert_uint_eq(req.ncuts, 4);
  ck_assert(req.cuts[1] == -1 && req.cuts[3] == 0.5);
  ck_assert_int_eq(slem_measure_parse(&req, "rbp_resid.p=0.25", &err), SLEM_OK);
  ck_assert(req.ncuts == 1 && req.cuts[0] == 0.25);
  ck_assert_int_eq(slem_measure_parse(&req, "set_F.1e400", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_measure_parse(&req, "11pt_avg.0.2,0.1", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_measure_parse(&req, "ndcg.1 =2", &err), SLEM_EINVAL);
  /* utility by hand on edge: q1 retrieves 5 with 2 relevant of 3, so with coefficients 2, -1,
   * 0, 1 and -N 10: 2*2 - 3 + 0 + (10 + 2 - 5 - 3) = 5 */
  slem_treceval_opts_init(&o);
  o.per_query = 1;
  o.no_summary = 1;
  o.num_docs = 10;
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "utility.2,-1,0,1", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "utility.1,1,1,1", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "P.3", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_measure(ev, "P.1,2", &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, TD "edge.qrels", &err), SLEM_OK);
  feed_run(ev, TD "edge.run");
  out = open_memstream(&got, &len);
  ck_assert_int_eq(slem_treceval_write(ev, out, NULL, &err), SLEM_OK);
  fclose(out);
  ck_assert_ptr_nonnull(strstr(got, "P_3                   \tq1\t0.3333\n"
                                    "utility_2,-1,0,1      \tq1\t5.0000\n"));
  ck_assert_ptr_null(strstr(got, "P_1"));
  ck_assert_ptr_null(strstr(got, "\tall\t"));
  free(got);
  slem_treceval_free(ev);
}
END_TEST

START_TEST(errors) {
  SlemTrecOpts o;
  SlemTrecEval *ev;
  SlemError err;
  char path[] = "/tmp/slem-treceval-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fputs("q1 0 d1 1\nq1 0 d2 x\n", f);
  fclose(f);
  slem_treceval_opts_init(&o);
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, path, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, ": line 2: relevance 'x'"), "%s", err.msg);
  slem_treceval_free(ev);
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  f = fopen(path, "w");
  fputs("q1 0 d1 1\n\nq1 0 d1 2\n", f);
  fclose(f);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, path, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, ": line 3: document 'd1' judged twice"), "%s", err.msg);
  f = fopen(path, "w");
  fputs("q1 0 d1\n", f);
  fclose(f);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, path, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "3 fields, expected 4"), "%s", err.msg);
  ck_assert_int_eq(slem_treceval_result(ev, "q1", "d5", 1.0, "run", 7, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_result(ev, "q1", "d5", 0.5, "run", 8, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "run: line 8: document 'd5' retrieved twice for topic 'q1'"), "%s", err.msg);
  ck_assert_int_eq(slem_treceval_result(ev, "q1", "d6", NAN, "run", 9, &err), SLEM_EFORMAT);
  slem_treceval_free(ev);
  /* no topic in common */
  ck_assert_int_eq(slem_treceval_new(&ev, &o, &err), SLEM_OK);
  f = fopen(path, "w");
  fputs("q9 0 d1 1\n", f);
  fclose(f);
  ck_assert_int_eq(slem_treceval_read_qrels(ev, path, &err), SLEM_OK);
  ck_assert_int_eq(slem_treceval_result(ev, "q1", "d5", 1.0, "run", 1, &err), SLEM_OK);
  f = fopen("/dev/null", "w");
  ck_assert_int_eq(slem_treceval_write(ev, f, NULL, &err), SLEM_EFORMAT);
  fclose(f);
  slem_treceval_free(ev);
  unlink(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("treceval");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;
  tcase_add_test(tc, edge_cases);
  tcase_add_test(tc, digits);
  tcase_add_test(tc, measure_lists);
  tcase_add_test(tc, measure_params);
  tcase_add_test(tc, errors);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

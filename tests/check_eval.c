/* AP and the other measures on rankings computed by hand. */
#include "testutil.h"

#include <math.h>

#include "../lib/eval/eval.h"

static const double eps = 1e-12;

START_TEST(ap_one_relevant_at_rank_two) {
  unsigned char rel[] = {0, 1};
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_TREC, rel, 2, 1), 0.5, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_OXFORD, rel, 2, 1), 0.25, eps);
}
END_TEST

START_TEST(ap_hand_cases) {
  /* relevant at 1 and 3 of R = 2: trec (1 + 2/3)/2; oxford 1/2 (1 + 1)/2 + 1/2 (1/2 + 2/3)/2 */
  unsigned char a[] = {1, 0, 1};
  /* truncated: R = 3, one retrieved at rank 1: trec 1/3, oxford 1/3 (1 + 1)/2 */
  unsigned char b[] = {1, 0};
  /* nothing relevant retrieved */
  unsigned char c[] = {0, 0, 0};
  /* perfect ranking */
  unsigned char p[] = {1, 1, 1, 0};
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_TREC, a, 3, 2), (1 + 2.0 / 3) / 2, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_OXFORD, a, 3, 2), 0.5 + 0.5 * (0.5 + 2.0 / 3) / 2, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_TREC, b, 2, 3), 1.0 / 3, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_OXFORD, b, 2, 3), 1.0 / 3, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_TREC, c, 3, 2), 0, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_OXFORD, c, 3, 2), 0, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_TREC, p, 4, 3), 1, eps);
  ck_assert_double_eq_tol(slem_eval_ap(SLEM_AP_OXFORD, p, 4, 3), 1, eps);
  ck_assert_double_eq(slem_eval_ap(SLEM_AP_TREC, p, 4, 0), 0); /* empty ground truth */
}
END_TEST

/* Evaluates a ranking and qrels given as text; the result's query names point into the
 * ground truth, so *truth is handed back to be freed after it. */
static SlemEvalResult *evaluate_files(SlemTruth **truth, const char *ranking, const char *qrels,
                                      const char *junk, SlemApKind ap) {
  char *pr = tu_path("r.tsv"), *pq = tu_path("q.qrels"), *pj = tu_path("j.txt");
  SlemTruth *t = NULL;
  SlemEvalResult *res = NULL;
  SlemEvalOpts o;
  SlemError err;
  tu_write_bytes(pr, ranking, strlen(ranking));
  tu_write_bytes(pq, qrels, strlen(qrels));
  ck_assert_msg(slem_truth_read_qrels(&t, pq, &err) == SLEM_OK, "%s", err.msg);
  if (junk) {
    tu_write_bytes(pj, junk, strlen(junk));
    ck_assert_msg(slem_truth_read_junk(t, pj, &err) == SLEM_OK, "%s", err.msg);
  }
  slem_eval_opts_init(&o);
  o.ap = ap;
  o.recall_k = 2;
  ck_assert_msg(slem_eval_result_read(&res, pr, SLEM_RANK_AUTO, t, &o, &err) == SLEM_OK, "%s", err.msg);
  *truth = t;
  free(pr);
  free(pq);
  free(pj);
  return res;
}

START_TEST(ties_follow_the_rank_field) {
  /* equal scores: the rank field decides, even when the lines come in another order */
  SlemTruth *t = NULL;
  SlemEvalResult *r = evaluate_files(&t, "q\t2\ta\t0.5\nq\t1\tb\t0.5\n", "q 0 a 1\n", NULL, SLEM_AP_TREC);
  ck_assert_double_eq_tol(r->map, 0.5, eps);
  ck_assert_double_eq_tol(r->p1, 0, eps);
  slem_eval_result_free(r);
  slem_truth_free(t);
}
END_TEST

START_TEST(junk_is_neither_relevant_nor_counted) {
  /* ranking j a x b with j junk and a, b, j relevant in the qrels: R = 2 after junk */
  const char *rank = "q\t1\tj\t4\nq\t2\ta\t3\nq\t3\tx\t2\nq\t4\tb\t1\n";
  const char *qrels = "q 0 a 1\nq 0 b 1\nq 0 j 1\n";
  SlemTruth *t = NULL;
  SlemEvalResult *r = evaluate_files(&t, rank, qrels, "q j\n", SLEM_AP_TREC);
  ck_assert_uint_eq(r->q[0].nrel, 2);
  ck_assert_uint_eq(r->q[0].nret, 3);
  ck_assert_double_eq_tol(r->map, (1 + 2.0 / 3) / 2, eps);
  ck_assert_double_eq_tol(r->p1, 1, eps);
  ck_assert_double_eq_tol(r->rk, 0.5, eps); /* R@2: a of {a, b} */
  /* interpolated precision: recall 0..0.5 -> 1, 0.6..1 -> 2/3 */
  ck_assert_double_eq_tol(r->curve[0], 1, eps);
  ck_assert_double_eq_tol(r->curve[5], 1, eps);
  ck_assert_double_eq_tol(r->curve[6], 2.0 / 3, eps);
  ck_assert_double_eq_tol(r->curve[10], 2.0 / 3, eps);
  slem_eval_result_free(r);
  slem_truth_free(t);
  r = evaluate_files(&t, rank, qrels, "q j\n", SLEM_AP_OXFORD);
  ck_assert_double_eq_tol(r->map, 0.5 + 0.5 * (0.5 + 2.0 / 3) / 2, eps);
  slem_eval_result_free(r);
  slem_truth_free(t);
}
END_TEST

START_TEST(skipped_and_missing_queries) {
  /* q: AP 1; m: in the qrels, not ranked (AP 0, counted); z: nothing relevant (skipped) */
  SlemTruth *t = NULL;
  SlemEvalResult *r = evaluate_files(&t, "q\t1\ta\t1\nz\t1\ta\t1\n", "q 0 a 1\nm 0 a 1\nz 0 a 0\n", NULL,
                                     SLEM_AP_TREC);
  ck_assert_uint_eq(r->evaluated, 2);
  ck_assert_uint_eq(r->missing, 1);
  ck_assert_uint_eq(r->skipped, 1);
  ck_assert_double_eq_tol(r->map, 0.5, eps);
  ck_assert_int_eq(r->q[1].status, SLEM_Q_MISSING);
  ck_assert_int_eq(r->q[2].status, SLEM_Q_SKIPPED);
  slem_eval_result_free(r);
  slem_truth_free(t);
}
END_TEST

START_TEST(truncated_ranking_counts_unretrieved_as_zero) {
  SlemTruth *t = NULL;
  SlemEvalResult *r = evaluate_files(&t, "q\t1\ta\t1\nq\t2\tx\t0\n", "q 0 a 1\nq 0 b 1\nq 0 c 1\n", NULL,
                                     SLEM_AP_TREC);
  ck_assert_double_eq_tol(r->map, 1.0 / 3, eps);
  ck_assert_double_eq_tol(r->p5, 0.2, eps); /* P@5 divides by 5 even with 2 retrieved */
  ck_assert_double_eq_tol(r->curve[3], 1, eps);   /* recall 0.3 <= 1/3 */
  ck_assert_double_eq_tol(r->curve[4], 0, eps);   /* recall 0.4 never reached */
  slem_eval_result_free(r);
  slem_truth_free(t);
}
END_TEST

/* Graded qrels: grades kept as given, junk out of the ideal ranking, nDCG and its cut-offs
 * by hand, through the measures table (-M) */
START_TEST(graded_qrels_and_extra_measures) {
  char *pr = tu_path("g.tsv"), *pq = tu_path("g.qrels"), *pj = tu_path("g.junk");
  const char *ranking = "q\t1\tb\t0.9\nq\t2\ta\t0.8\nq\t3\tz\t0.7\n";
  /* a 3, b 1, c 2 (junk), d 0, e -1; z unjudged */
  const char *qrels = "q 0 a 3\nq 0 b 1\nq 0 c 2\nq 0 d 0\nq 0 e -1\nq 0 b 0\n";
  SlemTruth *t = NULL;
  SlemEvalResult *r = NULL;
  SlemEvalOpts o;
  SlemMeasureReq req[3];
  SlemError err;
  long gains[8];
  double dcg1 = 1.0, dcg2 = 1.0 + 3.0 / log2(3.0), ideal1 = 3.0, ideal2 = 3.0 + 1.0 / log2(3.0);
  tu_write_bytes(pr, ranking, strlen(ranking));
  tu_write_bytes(pq, qrels, strlen(qrels));
  tu_write_bytes(pj, "q c\n", 4);
  ck_assert_msg(slem_truth_read_qrels(&t, pq, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_truth_read_junk(t, pj, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_truth_rel(t, 0, slem_truth_find_doc(t, "a")), 3);
  ck_assert_int_eq(slem_truth_rel(t, 0, slem_truth_find_doc(t, "b")), 1); /* first >= 1 */
  ck_assert_int_eq(slem_truth_rel(t, 0, slem_truth_find_doc(t, "d")), 0);
  ck_assert_int_eq(slem_truth_rel(t, 0, slem_truth_find_doc(t, "e")), SLEM_POOLED);
  ck_assert_int_eq(slem_truth_rel(t, 0, slem_truth_find_doc(t, "z")), SLEM_UNJUDGED);
  ck_assert_uint_eq(slem_truth_nnonrel(t, 0), 1); /* d: b's line 0 is not its grade, c junk */
  ck_assert_uint_eq(slem_truth_nrel(t, 0), 2);
  ck_assert_uint_le(slem_truth_max_gains(t, 0), 8);
  ck_assert_uint_eq(slem_truth_gains(t, 0, gains), 2); /* c is junk */
  ck_assert_int_eq(gains[0], 3);
  ck_assert_int_eq(gains[1], 1);
  ck_assert_int_eq(slem_measure_parse(&req[0], "ndcg", &err), SLEM_OK);
  ck_assert_int_eq(slem_measure_parse(&req[1], "ndcg_cut.2,1", &err), SLEM_OK);
  ck_assert_int_eq(slem_measure_parse(&req[2], "success.1", &err), SLEM_OK);
  ck_assert_int_eq(slem_measure_parse(&req[2], "nosuch", &err), -1);
  ck_assert_int_eq(slem_measure_parse(&req[2], "map.3", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_measure_parse(&req[2], "recall.1", &err), SLEM_OK);
  slem_eval_opts_init(&o);
  o.measures = req;
  o.nmeasures = 3;
  ck_assert_msg(slem_eval_result_read(&r, pr, SLEM_RANK_AUTO, t, &o, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(r->nvalues, 4);
  ck_assert_double_eq_tol(r->q[0].values[0], dcg2 / ideal2, eps);  /* ndcg */
  ck_assert_double_eq_tol(r->q[0].values[1], dcg1 / ideal1, eps);  /* ndcg_cut_1 */
  ck_assert_double_eq_tol(r->q[0].values[2], dcg2 / ideal2, eps);  /* ndcg_cut_2 */
  ck_assert_double_eq_tol(r->q[0].values[3], 0.5, eps);            /* recall_1 */
  ck_assert_double_eq_tol(r->map, (1.0 + 1.0) / 2, eps);
  slem_eval_result_free(r);
  slem_truth_free(t);
  /* strict reading (--trec-compat): a pair judged twice is an error naming the line */
  ck_assert_int_eq(slem_truth_read_graded(&t, pq, 1, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, ": line 6: document 'b' judged twice for topic 'q'"), "%s", err.msg);
  free(pr);
  free(pq);
  free(pj);
}
END_TEST

/* The default mode's -M measures tell judged non-relevant documents (grade 0) from those the
 * qrels do not judge (unjudged) and from those they judge negative (in the pool, unjudged),
 * as trec_eval does: ranking d a z e b, d judged 0, a and b relevant, z not in the qrels,
 * e judged -1; N = 1 judged non-relevant (c is junk) */
START_TEST(extra_measures_tell_unjudged_from_nonrelevant) {
  const char *rank = "q\t1\td\t5\nq\t2\ta\t4\nq\t3\tz\t3\nq\t4\te\t2\nq\t5\tb\t1\n";
  const char *qrels = "q 0 a 1\nq 0 b 2\nq 0 c 0\nq 0 d 0\nq 0 e -1\n";
  char *pr = tu_path("u.tsv"), *pq = tu_path("u.qrels"), *pj = tu_path("u.junk");
  const char *specs[] = {"bpref", "num_nonrel_judged_ret", "unj.5,10", "infAP", "rbp_resid"};
  SlemMeasureReq req[5];
  SlemTruth *t = NULL;
  SlemEvalResult *r = NULL;
  SlemEvalOpts o;
  SlemError err;
  double p3 = 0.9 * 0.9 * 0.9, p5 = p3 * 0.9 * 0.9;
  tu_write_bytes(pr, rank, strlen(rank));
  tu_write_bytes(pq, qrels, strlen(qrels));
  tu_write_bytes(pj, "q c\n", 4);
  ck_assert_msg(slem_truth_read_qrels(&t, pq, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_truth_read_junk(t, pj, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(slem_truth_nnonrel(t, 0), 1);
  for (size_t i = 0; i < 5; i++) ck_assert_int_eq(slem_measure_parse(&req[i], specs[i], &err), SLEM_OK);
  slem_eval_opts_init(&o);
  o.measures = req;
  o.nmeasures = 5;
  ck_assert_msg(slem_eval_result_read(&r, pr, SLEM_RANK_AUTO, t, &o, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(r->nvalues, 6);
  /* bpref: d, the one judged non-relevant, is above both a and b: 1 - min(1, 2) / min(1, 2) */
  ck_assert_double_eq_tol(r->q[0].values[0], 0.0, eps);
  ck_assert_double_eq_tol(r->q[0].values[1], 1.0, eps); /* d */
  ck_assert_double_eq_tol(r->q[0].values[2], 2.0 / 5, eps); /* z, e in the first 5 */
  ck_assert_double_eq_tol(r->q[0].values[3], 2.0 / 10, eps);
  /* infAP: a at rank 2 after one non-relevant, b at rank 5 after d, z (outside the pool,
   * skipped), e (pooled) */
  ck_assert_double_eq_tol(r->q[0].values[4],
                          (1.0 / 2 + 0.5 * (1.0 / 1) * ((0 + 1e-5) / (1 + 2e-5)) +
                           1.0 / 5 + (4.0 / 5) * ((1 + 1 + 1) / 4.0) * ((1 + 1e-5) / (2 + 2e-5))) / 2,
                          eps);
  /* rbp_resid, p = 0.9: p^5 + (1 - p)(p^2 + p^3) for z and e unjudged */
  ck_assert_double_eq_tol(r->q[0].values[5], p5 + 0.1 * (0.9 * 0.9 + p3), eps);
  slem_eval_result_free(r);
  slem_truth_free(t);
  free(pr);
  free(pq);
  free(pj);
}
END_TEST

/* With labels every database row is judged: N is the rows of another label, junk out */
START_TEST(labels_judge_every_row) {
  char *ql = tu_path("l.q"), *dl = tu_path("l.db");
  SlemTruth *t = NULL;
  SlemError err;
  tu_write_bytes(ql, "A\nB\n", 4);
  tu_write_bytes(dl, "A\nB\nA\nB\nB\n", 10);
  ck_assert_msg(slem_truth_read_labels(&t, ql, dl, NULL, NULL, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(slem_truth_nnonrel(t, 0), 3); /* rows 1, 3, 4 */
  ck_assert_uint_eq(slem_truth_nnonrel(t, 1), 2); /* rows 0, 2 (row 1 is query 1's self) */
  ck_assert_int_eq(slem_truth_rel(t, 0, 2), 1);
  ck_assert_int_eq(slem_truth_rel(t, 0, 1), 0);
  slem_truth_free(t);
  free(ql);
  free(dl);
}
END_TEST

/* slem-eval's -M and the rules between its options, in the library (cmd/slem-eval.c's) */
START_TEST(extra_measure_and_option_rules) {
  SlemMeasureReq req;
  SlemEvalOpts o;
  SlemTruthSpec spec = {0};
  SlemError err;
  ck_assert_int_eq(slem_eval_measure_parse(&req, "ndcg_cut.10", &err), SLEM_OK);
  ck_assert_int_eq(slem_eval_measure_parse(&req, "nosuch", &err), SLEM_EINVAL);
  ck_assert_msg(strncmp(err.msg, "-M: unknown measure 'nosuch' (", 30) == 0, "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(err.msg, "ndcg_cut"));
  ck_assert_int_eq(slem_eval_measure_parse(&req, "ndcg.1=0", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "-M ndcg.1=0: a gain map goes with --trec-compat (slem-trec_eval)");
  ck_assert_int_eq(slem_eval_measure_parse(&req, "P.0", &err), SLEM_EINVAL);
  ck_assert_msg(strncmp(err.msg, "-M: ", 4) == 0 && strstr(err.msg, "P.0"), "%s", err.msg);

  slem_eval_opts_init(&o);
  spec.qrels = "t.qrels";
  ck_assert_int_eq(slem_eval_check(&spec, &o, 0, NULL, NULL, "c.txt", &err), SLEM_OK);
  ck_assert_int_eq(slem_eval_check(&spec, &o, 1, NULL, NULL, "c.txt", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--protocol takes neither labels, ids, --exclude-self, --curve nor --ap");
  o.nmeasures = 1;
  ck_assert_int_eq(slem_eval_check(&spec, &o, 1, NULL, NULL, NULL, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "-M goes with slem-eval's own measures (--trec-compat: -m)");
  o.nmeasures = 0;
  spec.qrels = NULL; /* no ground truth: slem_truth_check()'s refusal */
  ck_assert_int_eq(slem_eval_check(&spec, &o, 0, NULL, NULL, NULL, &err), SLEM_EINVAL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("eval");
  TCase *tc = tcase_create("eval");
  tcase_add_test(tc, ap_one_relevant_at_rank_two);
  tcase_add_test(tc, ap_hand_cases);
  tcase_add_test(tc, ties_follow_the_rank_field);
  tcase_add_test(tc, junk_is_neither_relevant_nor_counted);
  tcase_add_test(tc, skipped_and_missing_queries);
  tcase_add_test(tc, truncated_ranking_counts_unretrieved_as_zero);
  tcase_add_test(tc, graded_qrels_and_extra_measures);
  tcase_add_test(tc, extra_measures_tell_unjudged_from_nonrelevant);
  tcase_add_test(tc, labels_judge_every_row);
  tcase_add_test(tc, extra_measure_and_option_rules);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

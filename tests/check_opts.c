/* Unit tests of the options initialisers: each one, given a struct full of 0xAA bytes
 * (what a caller's stack may hold), must leave every field at its documented default,
 * every pointer NULL unless the default names something. A field an initialiser forgets
 * (SlemEvalOpts.progress once) made slem-report crash past 256 queries. */
#include "testutil.h"

#include "../lib/encode/encstream.h"
#include "../lib/encode/esvm.h"
#include "../lib/eval/eval.h"
#include "../lib/rank/expand.h"
#include "../lib/search/match.h"
#include "../lib/rank/merge.h"
#include "../lib/encode/negstats.h"
#include "../lib/report/report.h"
#include "../lib/report/thumbs.h"
#include "../lib/search/topk.h"
#include "../lib/eval/treceval.h"

#define DIRTY(x) memset(&(x), 0xAA, sizeof(x))

START_TEST(test_eval) {
  SlemEvalOpts o;
  DIRTY(o);
  slem_eval_opts_init(&o);
  ck_assert_int_eq(o.ap, SLEM_AP_TREC);
  ck_assert_uint_eq(o.recall_k, 100);
  ck_assert_uint_eq(o.curve_points, 11);
  ck_assert_ptr_null((void *)o.progress);
  ck_assert_ptr_null(o.progress_ctx);
}
END_TEST

START_TEST(test_esvm) {
  SlemEsvmOpts o;
  DIRTY(o);
  slem_esvm_opts_init(&o);
  ck_assert(o.C == 1 && o.pos_weight == 1 && o.bias == 1 && o.eps == 1e-4);
  ck_assert_int_eq(o.loss, SLEM_ESVM_HINGE);
  ck_assert_int_eq(o.classifier, 0);
  ck_assert_int_eq(o.threads, 0);
}
END_TEST

START_TEST(test_merge) {
  SlemMergeOpts o;
  DIRTY(o);
  slem_merge_opts_init(&o);
  ck_assert_uint_eq(o.k, 100);
  ck_assert_int_eq(o.format, SLEM_RANK_AUTO);
  ck_assert_ptr_null(o.db_ids);
  ck_assert_ptr_null((void *)o.check);
  ck_assert_ptr_null(o.check_ctx);
  ck_assert_ptr_null((void *)o.progress);
  ck_assert_ptr_null(o.progress_ctx);
}
END_TEST

START_TEST(test_expand) {
  SlemExpandOpts o;
  DIRTY(o);
  slem_expand_opts_init(&o);
  ck_assert_uint_eq(o.n, 0);
  ck_assert(o.alpha == 0);
}
END_TEST

START_TEST(test_match) {
  SlemMatchOpts o;
  DIRTY(o);
  slem_match_opts_init(&o);
  ck_assert_uint_eq(o.k, 100);
  ck_assert_uint_eq(o.qblock, 2048);
  ck_assert_uint_eq(o.dblock, 0);
  ck_assert_int_eq(o.exclude_self, 0);
  ck_assert_int_eq(o.normalize, 0);
  ck_assert_ptr_null(o.kernel);
  ck_assert_int_eq(o.couple, 0);
  ck_assert_int_eq(o.affine, 0);
  ck_assert_ptr_null(o.calibration);
  ck_assert_int_eq(o.unit_queries, 0);
  ck_assert_int_eq(o.unit_db, 0);
  ck_assert_ptr_null((void *)o.progress);
  ck_assert_ptr_null(o.progress_ctx);
}
END_TEST

START_TEST(test_negstats) {
  SlemNegstatsOpts o;
  DIRTY(o);
  slem_negstats_opts_init(&o);
  ck_assert_int_eq(o.format, SLEM_FMT_AUTO);
  ck_assert_uint_eq(o.block, 0);
  ck_assert_uint_eq(o.leaf_rows, 0);
  ck_assert_int_eq(o.skip_nonfinite, 0);
  ck_assert_int_eq(o.partial, 0);
  ck_assert_uint_eq(o.depth, 0);
  ck_assert_int_eq(o.eigen, 0);
  ck_assert_uint_eq(o.pca, 0);
  ck_assert(o.lambda == -1 && o.lambda_rel == 1 && o.tol == 0);
  ck_assert_ptr_null(o.kernel);
  ck_assert_uint_eq(o.rank, 256);
  ck_assert_int_eq(o.factor, SLEM_FACTOR_ICD);
  ck_assert_int_eq(o.couple, 0);
  ck_assert_uint_eq(o.sample, 1000);
  ck_assert_uint_eq(o.seed, 1);
  ck_assert_uint_eq(o.shard.count, 0);
  ck_assert_ptr_null((void *)o.progress);
  ck_assert_ptr_null(o.progress_ctx);
}
END_TEST

START_TEST(test_encstream) {
  SlemEncStreamOpts o, z;
  DIRTY(o);
  slem_encstream_opts_init(&o);
  memset(&z, 0, sizeof z);
  slem_encstream_opts_init(&z);
  /* the same struct whatever the memory held before */
  ck_assert_int_eq(memcmp(&o, &z, sizeof o), 0);
  ck_assert_int_eq(o.format, SLEM_FMT_AUTO);
  ck_assert_uint_eq(o.block, 1024);
  ck_assert(o.theta == 1 && o.alpha == -1);
}
END_TEST

START_TEST(test_report) {
  SlemReportOpts o;
  DIRTY(o);
  slem_report_opts_init(&o);
  ck_assert_ptr_null(o.title);
  ck_assert_ptr_null(o.truth_note);
  ck_assert_int_eq(o.ap, SLEM_AP_TREC);
  ck_assert_uint_eq(o.recall_k, 100);
  ck_assert_uint_eq(o.curve_points, 11);
  ck_assert_uint_eq(o.top, 10);
  ck_assert_uint_eq(o.nqueries, 10);
  ck_assert_uint_eq(o.extremes, 3);
  ck_assert_uint_eq(o.bins, 10);
}
END_TEST

START_TEST(test_thumbs) {
  SlemThumbOpts o;
  DIRTY(o);
  slem_thumbs_opts_init(&o);
  ck_assert_ptr_null(o.images_dir);
  ck_assert_int_eq(o.embed, 0);
  ck_assert_int_eq(o.ids_are_paths, 0);
  ck_assert_ptr_null(o.shape);
  ck_assert_int_eq(o.range.fixed, 0);
  ck_assert_int_eq(o.range.invert, 0);
  ck_assert_ptr_null(o.vectors[0]);
  ck_assert_ptr_null(o.vectors[1]);
  ck_assert_ptr_null(o.ids[0]);
  ck_assert_ptr_null(o.ids[1]);
  ck_assert_uint_eq(o.min_side, 64);
  ck_assert_str_eq(o.base_dir, ".");
}
END_TEST

START_TEST(test_treceval) {
  SlemTrecOpts o;
  DIRTY(o);
  slem_treceval_opts_init(&o);
  ck_assert_int_eq(o.relevance_level, 1);
  ck_assert_int_eq(o.complete, 0);
  ck_assert_int_eq(o.per_query, 0);
}
END_TEST

START_TEST(test_topk) {
  SlemTopK t;
  SlemHit mem[4];
  DIRTY(t);
  slem_topk_init(&t, mem, 4);
  ck_assert_ptr_eq(t.heap, mem);
  ck_assert_uint_eq(t.k, 4);
  ck_assert_uint_eq(t.n, 0);
  ck_assert_int_eq(t.owned, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("opts");
  TCase *tc = tcase_create("init");
  tcase_add_test(tc, test_eval);
  tcase_add_test(tc, test_esvm);
  tcase_add_test(tc, test_merge);
  tcase_add_test(tc, test_expand);
  tcase_add_test(tc, test_match);
  tcase_add_test(tc, test_negstats);
  tcase_add_test(tc, test_encstream);
  tcase_add_test(tc, test_report);
  tcase_add_test(tc, test_thumbs);
  tcase_add_test(tc, test_treceval);
  tcase_add_test(tc, test_topk);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

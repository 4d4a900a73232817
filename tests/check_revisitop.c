/* The revisited Oxford/Paris protocol against scripts/gen-revisitop.py, a transcription of
 * revisitop's compute_map definition (whose own code gave the same numbers on these files):
 * both rankings of the demo digits (full cosine, SLEM top 100), three protocols, per-query
 * AP, mAP and mP@1/5/10, to 1e-12. Then hand cases and the errors. */
#include "testutil.h"

#include "../lib/eval/revisitop.h"

#define TD "testdata/revisitop/"

/* expected.txt: "ranking protocol measure value" lines, read once */
#define MAX_EXPECTED 1024
static struct { char key[128]; double v; } exp_tab[MAX_EXPECTED];
static size_t n_exp;

static double expected(const char *ranking, const char *proto, const char *measure) {
  char key[128];
  if (n_exp == 0) {
    FILE *f = fopen(TD "expected.txt", "r");
    char r[64], p[16], m[32];
    double v;
    ck_assert_ptr_nonnull(f);
    while (n_exp < MAX_EXPECTED && fscanf(f, "%63s %15s %31s %lf", r, p, m, &v) == 4) {
      snprintf(exp_tab[n_exp].key, sizeof exp_tab[n_exp].key, "%s %s %s", r, p, m);
      exp_tab[n_exp++].v = v;
    }
    fclose(f);
    ck_assert_uint_gt(n_exp, 0);
  }
  snprintf(key, sizeof key, "%s %s %s", ranking, proto, measure);
  for (size_t i = 0; i < n_exp; i++)
    if (strcmp(exp_tab[i].key, key) == 0) return exp_tab[i].v;
  ck_abort_msg("no %s in expected.txt", key);
  return 0;
}

/* Feeds a TSV ranking (query rank id score, rank order) query by query. */
static void feed(SlemRevisit *rv, const char *path) {
  FILE *f = fopen(path, "r");
  char q[64], cur[64] = "", id[64], *ids[2000];
  size_t n = 0, rank;
  double s;
  SlemError err;
  ck_assert_ptr_nonnull(f);
  for (;;) {
    int got = fscanf(f, "%63s %zu %63s %lf", q, &rank, id, &s);
    if ((got != 4 || strcmp(q, cur)) && n > 0) {
      ck_assert_msg(slem_revisit_query(rv, cur, (const char *const *)ids, n, &err) == SLEM_OK, "%s", err.msg);
      for (size_t i = 0; i < n; i++) free(ids[i]);
      n = 0;
    }
    if (got != 4) break;
    strcpy(cur, q);
    ck_assert_uint_eq(rank, n + 1);
    ids[n++] = strdup(id);
  }
  fclose(f);
}

START_TEST(against_transcription) {
  static const char *const rankings[] = {"cosine-full", "slem-top100"};
  static const char *const protos[] = {"easy", "medium", "hard"};
  for (int r = 0; r < 2; r++)
    for (int p = 0; p < 3; p++) {
      SlemRevisit *rv;
      SlemProtocol pr;
      SlemRevisitResult res;
      SlemError err;
      char path[128], name[32];
      size_t nap = 0;
      ck_assert_int_eq(slem_revisitop_protocol_parse(&pr, protos[p]), SLEM_OK);
      ck_assert_int_eq(slem_revisit_new(&rv, pr, &err), SLEM_OK);
      ck_assert_int_eq(slem_revisit_read(rv, SLEM_GT_EASY, TD "easy.txt", &err), SLEM_OK);
      ck_assert_int_eq(slem_revisit_read(rv, SLEM_GT_HARD, TD "hard.txt", &err), SLEM_OK);
      ck_assert_int_eq(slem_revisit_read(rv, SLEM_GT_JUNK, TD "junk.txt", &err), SLEM_OK);
      snprintf(path, sizeof path, "testdata/eval/%s.tsv", rankings[r]);
      feed(rv, path);
      ck_assert_int_eq(slem_revisit_result(rv, &res, &err), SLEM_OK);
      ck_assert_double_eq_tol(res.map, expected(rankings[r], protos[p], "mAP"), 1e-12);
      for (int c = 0; c < SLEM_REVISIT_NK; c++) {
        snprintf(name, sizeof name, "mP@%zu", slem_revisit_kappas[c]);
        ck_assert_double_eq_tol(res.mp[c], expected(rankings[r], protos[p], name), 1e-12);
      }
      ck_assert_uint_eq(res.evaluated, (size_t)expected(rankings[r], protos[p], "queries"));
      ck_assert_uint_eq(res.missing, 0);
      for (size_t i = 0; i < slem_revisit_nqueries(rv); i++) {
        const char *qid;
        double ap, mp[SLEM_REVISIT_NK];
        int status;
        ck_assert_int_eq(slem_revisit_query_result(rv, i, &qid, &ap, mp, &status), SLEM_OK);
        if (status != 0) continue;
        snprintf(name, sizeof name, "ap.%s", qid);
        ck_assert_double_eq_tol(ap, expected(rankings[r], protos[p], name), 1e-12);
        nap++;
      }
      ck_assert_uint_eq(nap, res.evaluated);
      slem_revisit_free(rv);
    }
}
END_TEST

/* By hand: easy {a, b}, hard {c}, junk {j}. Ranking j a c x b. Medium: positives a c b at
 * positions 1 2 4, junk j before all: shifted 0 1 3; AP = ((1 + 1) / 2 + (1/1 + 2/2) / 2
 * + (2/3 + 3/4) / 2) / 3 = (1 + 1 + 17/24) / 3; P@1 = 1, P@5: kq = min(4, 5) = 4, 3 / 4.
 * Easy: c is junk too: a, b at 1, 4, shifted 0, 2: AP = ((1 + 1) / 2 + (1/2 + 2/3) / 2) / 2,
 * P@5: kq = min(3, 5), 2 / 3. Hard: j, a and b are junk: c at 2, shifted 0: AP 1, P@5 1. */
START_TEST(by_hand) {
  static const char *const ids[] = {"j", "a", "c", "x", "b"};
  static const double want_ap[3] = {(1 + (0.5 + 2.0 / 3) / 2) / 2, (2 + 17.0 / 24) / 3, 1.0};
  static const double want_p5[3] = {2.0 / 3, 0.75, 1.0};
  char path[] = "/tmp/slem-revisit-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fputs("q 0 a 2\nq 0 b 2\nq 0 c 1\nq 0 j -1\nq 0 x 0\nr 0 a 0\n", f);
  fclose(f);
  for (int p = 0; p < 3; p++) {
    SlemRevisit *rv;
    SlemRevisitResult res;
    SlemError err;
    ck_assert_int_eq(slem_revisit_new(&rv, (SlemProtocol)p, &err), SLEM_OK);
    ck_assert_msg(slem_revisit_read_qrels(rv, path, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_revisit_query(rv, "q", ids, 5, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_result(rv, &res, &err), SLEM_OK);
    ck_assert_double_eq_tol(res.map, want_ap[p], 1e-15);
    ck_assert_double_eq_tol(res.mp[1], want_p5[p], 1e-15);
    ck_assert_uint_eq(res.evaluated, 1);
    ck_assert_uint_eq(res.empty, 1); /* r has no positive */
    slem_revisit_free(rv);
  }
  /* easy protocol, ranking x c a: c is junk, a at shifted position 1 (1-based 2): P@1 has
   * kq = min(2, 1) = 1 and no positive in the first 1: 0; P@5 has kq = 2: 1/2 */
  {
    SlemRevisit *rv;
    SlemRevisitResult res;
    SlemError err;
    static const char *const ids2[] = {"x", "c", "a"};
    ck_assert_int_eq(slem_revisit_new(&rv, SLEM_PROTO_EASY, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_read_qrels(rv, path, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_query(rv, "q", ids2, 3, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_query(rv, "q", ids, 5, &err), SLEM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "ranked twice"));
    ck_assert_int_eq(slem_revisit_query(rv, "zz", ids, 5, &err), SLEM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "'zz' of the ranking is not in the ground truth"));
    ck_assert_int_eq(slem_revisit_result(rv, &res, &err), SLEM_OK);
    ck_assert_double_eq(res.mp[0], 0.0);
    ck_assert_double_eq_tol(res.mp[1], 0.5, 1e-15);
    slem_revisit_free(rv);
  }
  /* a query of the ground truth that the ranking lacks scores 0 and is counted */
  {
    SlemRevisit *rv;
    SlemRevisitResult res;
    SlemError err;
    ck_assert_int_eq(slem_revisit_new(&rv, SLEM_PROTO_MEDIUM, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_read_qrels(rv, path, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_result(rv, &res, &err), SLEM_OK);
    ck_assert_uint_eq(res.missing, 1);
    ck_assert_double_eq(res.map, 0.0);
    slem_revisit_free(rv);
  }
  /* errors: a pair listed twice, a bad grade, the wrong number of fields */
  {
    SlemRevisit *rv;
    SlemError err;
    f = fopen(path, "w");
    fputs("q 0 a 2\nq 0 a 1\n", f);
    fclose(f);
    ck_assert_int_eq(slem_revisit_new(&rv, SLEM_PROTO_MEDIUM, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_read_qrels(rv, path, &err), SLEM_EFORMAT);
    /* the qrels reader's words (truth.c, strict), naming the line */
    ck_assert_msg(strstr(err.msg, ": line 2: document 'a' judged twice for topic 'q'"), "%s", err.msg);
    slem_revisit_free(rv);
    f = fopen(path, "w");
    fputs("q 0 a 3\n", f);
    fclose(f);
    ck_assert_int_eq(slem_revisit_new(&rv, SLEM_PROTO_MEDIUM, &err), SLEM_OK);
    ck_assert_int_eq(slem_revisit_read_qrels(rv, path, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, ": line 1: grade '3'"), "%s", err.msg);
    ck_assert_int_eq(slem_revisit_read(rv, SLEM_GT_JUNK, path, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, "4 fields, expected 2"), "%s", err.msg);
    slem_revisit_free(rv);
  }
  unlink(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("revisitop");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;
  tcase_add_test(tc, against_transcription);
  tcase_add_test(tc, by_hand);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

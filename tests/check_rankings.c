/* The rankings module: format names, the writer and the reader's iterator, round trips
 * through all three formats, and bad lines named by file and line. */
#include "testutil.h"

#include <float.h>
#include <inttypes.h>

#include "../lib/io/fmt.h"
#include "../lib/rank/rankings.h"

/* Reads the whole text of path into a new string. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *s = calloc(1, 1 << 16);
  ck_assert_ptr_nonnull(f);
  fread(s, 1, (1 << 16) - 1, f);
  fclose(f);
  return s;
}

/* The text of a jsonl ranking at path of one query "q" (one result) between m's shard
 * lines. */
static char *one_query_ranking(const char *path, const SlemRankShard *m) {
  SlemRankEntry a = {.id = "1", .score = 0.5f, .row = 1};
  SlemRankWriter *w;
  SlemError err;
  ck_assert_int_eq(slem_rankwriter_open(&w, path, SLEM_RANK_JSONL, NULL, NULL, NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_write_entries(w, "q", &a, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard_end(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
  return slurp(path);
}

START_TEST(format_names) {
  SlemRankFormat f = SLEM_RANK_AUTO;
  SlemError err;
  ck_assert_int_eq(slem_rankformat_parse(&f, "trec", &err), SLEM_OK);
  ck_assert_int_eq(f, SLEM_RANK_TREC);
  ck_assert_int_eq(slem_rankformat_parse(&f, "jsonl", NULL), SLEM_OK);
  ck_assert_int_eq(f, SLEM_RANK_JSONL);
  ck_assert_str_eq(slem_rankformat_name(SLEM_RANK_TSV), "tsv");
  ck_assert_str_eq(slem_rankformat_name(SLEM_RANK_AUTO), "auto");
  /* the undocumented "json" spelling is gone */
  ck_assert_int_eq(slem_rankformat_parse(&f, "json", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "unknown format 'json' (tsv, trec, jsonl, npy)");
  ck_assert_int_eq(f, SLEM_RANK_JSONL);
}
END_TEST

/* A format of its own files cannot go to stdout: the table says which (npy), the others
 * go anywhere; a usage error for the tools (slem-match -F npy -o - exited 1). */
START_TEST(output_to_stdout) {
  SlemError err;
  for (SlemRankFormat f = SLEM_RANK_TSV; f < SLEM_RANK_NPY; f++) {
    ck_assert_int_eq(slem_rankformat_check_output(f, "-", &err), SLEM_OK);
    ck_assert_int_eq(slem_rankformat_check_output(f, NULL, &err), SLEM_OK);
  }
  ck_assert_int_eq(slem_rankformat_check_output(SLEM_RANK_AUTO, "-", &err), SLEM_OK);
  ck_assert_int_eq(slem_rankformat_check_output(SLEM_RANK_NPY, "out.npy", &err), SLEM_OK);
  ck_assert_int_eq(slem_rankformat_check_output(SLEM_RANK_NPY, "-", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "npy rankings are two files (NAME.I.npy and NAME.D.npy): give -o "
                   "NAME.npy");
  ck_assert_int_eq(slem_rankformat_check_output(SLEM_RANK_NPY, NULL, &err), SLEM_EINVAL);
}
END_TEST

/* Writes two queries of string-id entries in format fmt, then reads them back with the
 * format recognised, and checks every field. */
static void round_trip(SlemRankFormat fmt, const char *name) {
  char *path = tu_path(name);
  SlemRankEntry a[3] = {{.id = "img-7", .score = 0.75f, .row = 7},
                        {.id = "x", .score = 0.5f, .row = 12},
                        {.id = "long_id_0001", .score = -1.25e-3f, .row = 0}};
  SlemRankEntry b[1] = {{.id = "img-7", .score = 3e10f, .row = -1}};
  const SlemRankQuery *q;
  SlemRankWriter *w = NULL;
  SlemRankReader *r = NULL;
  SlemError err;
  char buf[SLEM_FMT_G9_MAX];
  ck_assert_msg(slem_rankwriter_open(&w, path, fmt, NULL, NULL, "run1", &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankwriter_write_entries(w, "q-one", a, 3, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankwriter_write_entries(w, "q2", b, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankwriter_close(w, &err) == SLEM_OK, "%s", err.msg);

  ck_assert_msg(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankreader_next(r, &q, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_rankreader_format(r), fmt);
  ck_assert_ptr_nonnull(q);
  ck_assert_str_eq(q->query, "q-one");
  ck_assert_uint_eq(q->index, 0);
  ck_assert_uint_eq(q->line, 1);
  ck_assert_uint_eq(q->n, 3);
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(q->e[i].rank, (long)i + 1);
    ck_assert_str_eq(q->e[i].id, a[i].id);
    ck_assert_msg((float)q->e[i].score == (float)a[i].score, "score %zu: %.9g", i, q->e[i].score);
    slem_fmt_g9(buf, (float)a[i].score);
    if (fmt == SLEM_RANK_JSONL) {
      ck_assert_ptr_null(q->e[i].score_text);
      ck_assert_int_eq(q->e[i].row, a[i].row);
      ck_assert_uint_eq(q->e[i].line, 1);
    } else {
      ck_assert_str_eq(q->e[i].score_text, buf);
      ck_assert_int_eq(q->e[i].row, -1);
      ck_assert_uint_eq(q->e[i].line, i + 1);
    }
    if (fmt == SLEM_RANK_TREC) ck_assert_str_eq(q->e[i].tag, "run1");
    else ck_assert_ptr_null(q->e[i].tag);
  }
  ck_assert_msg(slem_rankreader_next(r, &q, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_ptr_nonnull(q);
  ck_assert_str_eq(q->query, "q2");
  ck_assert_uint_eq(q->index, 1);
  ck_assert_uint_eq(q->n, 1);
  ck_assert_str_eq(q->e[0].id, "img-7");
  ck_assert_int_eq(q->e[0].row, -1); /* jsonl leaves "row" out when it is not known */
  ck_assert_msg((float)q->e[0].score == 3e10f, "%.9g", q->e[0].score);
  ck_assert_msg(slem_rankreader_next(r, &q, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_ptr_null(q);
  ck_assert_uint_eq(slem_rankreader_queries(r), 2);
  slem_rankreader_free(r);
  free(path);
}

START_TEST(round_trip_tsv) { round_trip(SLEM_RANK_TSV, "rt.tsv"); }
END_TEST
START_TEST(round_trip_trec) { round_trip(SLEM_RANK_TREC, "rt.trec"); }
END_TEST
START_TEST(round_trip_jsonl) { round_trip(SLEM_RANK_JSONL, "rt.jsonl"); }
END_TEST

/* Hits with rows and an ids table, the way slem-match writes them: the same bytes as
 * entries with those ids and rows. */
START_TEST(hits_and_entries_write_the_same_bytes) {
  static const SlemRankFormat fmts[] = {SLEM_RANK_TSV, SLEM_RANK_TREC, SLEM_RANK_JSONL};
  for (size_t f = 0; f < 3; f++) {
    char *p1 = tu_path("hits.out"), *p2 = tu_path("entries.out"), *s1, *s2;
    SlemHit h[2] = {{4, 0.25f}, {1, 0.125f}};
    SlemRankEntry e[2] = {{.id = "4", .score = 0.25, .row = 4}, {.id = "1", .score = 0.125, .row = 1}};
    SlemRankWriter *w = NULL;
    SlemError err;
    ck_assert_int_eq(slem_rankwriter_open(&w, p1, fmts[f], NULL, NULL, NULL, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankwriter_write(w, 3, h, 2, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankwriter_open(&w, p2, fmts[f], NULL, NULL, NULL, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankwriter_write_entries(w, "3", e, 2, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
    s1 = slurp(p1);
    s2 = slurp(p2);
    ck_assert_str_eq(s1, s2);
    if (f == 0) ck_assert_str_eq(s1, "3\t1\t4\t0.25\n3\t2\t1\t0.125\n");
    if (f == 1) ck_assert_str_eq(s1, "3 Q0 4 1 0.25 slem\n3 Q0 1 2 0.125 slem\n");
    if (f == 2)
      ck_assert_str_eq(s1, "{\"query\":\"3\",\"results\":[{\"rank\":1,\"id\":\"4\",\"row\":4,\"score\":0.25},"
                           "{\"rank\":2,\"id\":\"1\",\"row\":1,\"score\":0.125}]}\n");
    free(s1);
    free(s2);
    free(p1);
    free(p2);
  }
}
END_TEST

/* Reads text as a ranking in format fmt until an error or the end; returns the status
 * and leaves the message in err; *nq counts the queries handed out before. */
static int read_text(const char *text, SlemRankFormat fmt, SlemError *err, size_t *nq) {
  char *path = tu_path("bad.rank");
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  int st;
  tu_write_bytes(path, text, strlen(text));
  *nq = 0;
  st = slem_rankreader_open(&r, path, fmt, err);
  ck_assert_int_eq(st, SLEM_OK);
  while ((st = slem_rankreader_next(r, &q, err)) == SLEM_OK && q) ++*nq;
  slem_rankreader_free(r);
  free(path);
  return st;
}

static void expect_bad(const char *text, SlemRankFormat fmt, const char *msg, size_t nq_before) {
  SlemError err;
  size_t nq;
  ck_assert_int_eq(read_text(text, fmt, &err, &nq), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "bad.rank: ") && strstr(err.msg, msg), "'%s' lacks '%s'", err.msg, msg);
  ck_assert_uint_eq(nq, nq_before);
}

START_TEST(bad_lines_name_file_and_line) {
  expect_bad("q\t1\tx\n", SLEM_RANK_AUTO, "line 1: 3 fields, expected 4", 0);
  expect_bad("q\t1\ta\t0.9\nq\t2\tx\tabc\n", SLEM_RANK_AUTO, "line 2: score 'abc' is not a number", 1);
  expect_bad("q\t1\ta\t0.9\nq\t2\tx\tinf\n", SLEM_RANK_TSV, "line 2: score 'inf' is not a number", 1);
  expect_bad("q\tone\ta\t0.9\n", SLEM_RANK_TSV, "line 1: rank 'one' is not a positive whole number", 0);
  expect_bad("q\t0\ta\t0.9\n", SLEM_RANK_TSV, "line 1: rank '0' is not a positive", 0);
  expect_bad("q\t1\ta\t0.9\nq\t2\ta\t0.8\n", SLEM_RANK_AUTO, "line 2: id 'a' appears twice for query 'q'", 0);
  expect_bad("q Q0 a 1 0.5\n", SLEM_RANK_TREC, "line 1: 5 fields, expected 6", 0);
  expect_bad("{\"query\":\"q\",\"results\":[{\"id\":\"a\"}]}\n", SLEM_RANK_AUTO,
             "line 1: result 1 needs a string \"id\" and a number \"score\"", 0);
  expect_bad("{\"query\":\"q\",\"results\":[{\"id\":\"a\",\"score\":1,\"row\":-2}]}\n", SLEM_RANK_AUTO,
             "line 1: result 1: \"row\" is not a whole number >= 0", 0);
  expect_bad("{\"query\":\"q\",\"results\":[{\"id\":\"a\",\"score\":1,\"row\":1.5}]}\n", SLEM_RANK_JSONL,
             "line 1: result 1: \"row\"", 0);
  expect_bad("{\"query\":\"q\",\"results\":[]}\n[1]\n", SLEM_RANK_AUTO, "line 2: not a JSON object", 1);
  expect_bad("{\"results\":[]}\n", SLEM_RANK_JSONL, "line 1: needs a string \"query\"", 0);
  /* a key given twice is refused, not read as its first value */
  expect_bad("{\"query\":\"q\",\"query\":\"w\",\"results\":[]}\n", SLEM_RANK_JSONL,
             "line 1: the key \"query\" twice", 0);
  expect_bad("{\"query\":\"q\",\"results\":[{\"id\":\"a\",\"score\":1,\"id\":\"b\"}]}\n",
             SLEM_RANK_AUTO, "line 1: result 1: the key \"id\" twice", 0);
  expect_bad("", SLEM_RANK_AUTO, "no rankings (empty file)", 0);
  expect_bad(" \n\t\n", SLEM_RANK_AUTO, "no rankings (empty file)", 0);
  /* a bad line: the lines before it are handed out first (as a query, here the part of q
   * before line 2 above), then the error, so that errors come in line order */
  expect_bad("q\t1\ta\t0.9\nw\t1\ta\t0.9\nw\t2\tb\n", SLEM_RANK_TSV, "line 3: 3 fields", 2);
  expect_bad("q\t1\ta\t0.9\nw\tx\ta\t0.9\n", SLEM_RANK_TSV, "line 2: rank 'x'", 1);
}
END_TEST

/* The shard lines: written from the table by the writer, read back by the reader (the
 * first at the first query, the end line at the end) and by slem_rankshard_read_end(); an
 * end line without a first line, a second one, and a line after it are refused. */
START_TEST(shard_lines_round_trip) {
  char *path = tu_path("shard.jsonl");
  SlemRankShard m = {.index = 2, .count = 5, .rows = 1001, .k = 7, .database = "0123456789abcdef",
                     .has_end = 1, .queries = 3, .query_set = "fedcba9876543210"}, e = {0};
  SlemRankEntry a = {.id = "9", .score = 0.5f, .row = 9};
  SlemRankWriter *w;
  SlemRankReader *r;
  const SlemRankQuery *q;
  const SlemRankShard *got;
  SlemError err;
  size_t nf, nq = 0;
  int found = 0;
  const SlemRankShardField *f = slem_rankshard_fields(&nf);
  char *text;
  ck_assert_int_ge(nf, 7);
  ck_assert_int_eq(slem_rankwriter_open(&w, path, SLEM_RANK_JSONL, NULL, NULL, NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard(w, &m, &err), SLEM_OK);
  for (int i = 0; i < 3; i++) {
    char qn[8];
    snprintf(qn, sizeof qn, "q%d", i);
    ck_assert_int_eq(slem_rankwriter_write_entries(w, qn, &a, 1, &err), SLEM_OK);
  }
  ck_assert_int_eq(slem_rankwriter_shard_end(w, &m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
  text = slurp(path);
  ck_assert_ptr_nonnull(strstr(text, "{\"slem_shard\":{\"index\":2,\"count\":5,\"rows\":1001,\"k\":7,"
                                     "\"database\":\"0123456789abcdef\"}}\n{\"query\":\"q0\""));
  ck_assert_ptr_nonnull(strstr(text, "\n{\"slem_shard_end\":{\"queries\":3,\"query_set\":"
                                     "\"fedcba9876543210\"}}\n"));
  free(text);
  ck_assert_int_eq(slem_rankshard_read_end(path, &e, &found, &err), SLEM_OK);
  ck_assert_int_eq(found, 1);
  ck_assert_uint_eq(e.queries, 3);
  ck_assert_str_eq(e.query_set, "fedcba9876543210");
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  while (slem_rankreader_next(r, &q, &err) == SLEM_OK && q) nq++;
  ck_assert_uint_eq(nq, 3);
  got = slem_rankreader_shard(r);
  ck_assert_ptr_nonnull(got);
  ck_assert_int_eq(got->has_end, 1);
  for (size_t i = 0; i < nf; i++) { /* every field of the table came back */
    char x[SLEM_SHARD_VALUE_MAX], y[SLEM_SHARD_VALUE_MAX];
    ck_assert_str_eq(slem_rankshard_value(got, f + i, x), slem_rankshard_value(&m, f + i, y));
  }
  slem_rankreader_free(r);
  free(path);
  /* refused lines */
  expect_bad("{\"query\":\"q\",\"results\":[]}\n{\"slem_shard_end\":{\"queries\":1,\"query_set\":"
             "\"0123456789abcdef\"}}\n", SLEM_RANK_AUTO, "line 2: a shard's end line, but no shard line", 1);
  expect_bad("{\"slem_shard\":{\"index\":0,\"count\":1,\"rows\":1,\"k\":1,\"database\":\"0123456789abcdef\"}}\n"
             "{\"query\":\"q\",\"results\":[]}\n{\"slem_shard_end\":{\"queries\":1,\"query_set\":"
             "\"0123456789abcdef\"}}\n{\"query\":\"w\",\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 4: a line after the shard's end line", 1);
  expect_bad("{\"slem_shard\":{\"index\":0,\"count\":1,\"rows\":1,\"k\":1,\"database\":\"0123\"}}\n"
             "{\"query\":\"q\",\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line (no 'database' of 16 hex digits)", 0);
  expect_bad("{\"slem_shard\":{\"index\":1,\"count\":1,\"rows\":1,\"k\":1,\"database\":"
             "\"0123456789abcdef\"}}\n{\"query\":\"q\",\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line (index 1 of 1)", 0);
  /* a group's span (slem-merge --partial): at least 1, within the split */
  expect_bad("{\"slem_shard\":{\"index\":1,\"span\":3,\"count\":3,\"rows\":1,\"k\":1,\"database\":"
             "\"0123456789abcdef\"}}\n{\"query\":\"q\",\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line (span 3 from index 1 of 3)", 0);
  expect_bad("{\"slem_shard\":{\"index\":1,\"span\":0,\"count\":3,\"rows\":1,\"k\":1,\"database\":"
             "\"0123456789abcdef\"}}\n{\"query\":\"q\",\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line (no whole 'span')", 0);
  /* an arithmetic that is not a text, or holds a control character */
  expect_bad("{\"slem_shard\":{\"index\":0,\"count\":1,\"rows\":1,\"k\":1,\"database\":"
             "\"0123456789abcdef\",\"arithmetic\":7}}\n{\"query\":\"q\",\"results\":[]}\n",
             SLEM_RANK_AUTO, "line 1: a bad shard line ('arithmetic' not a text of at most 159", 0);
  expect_bad("{\"slem_shard\":{\"index\":0,\"count\":1,\"rows\":1,\"k\":1,\"database\":"
             "\"0123456789abcdef\",\"descriptors_arithmetic\":\"A\\nB\"}}\n{\"query\":\"q\","
             "\"results\":[]}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line ('descriptors_arithmetic' not a text", 0);
}
END_TEST

/* Writes a ranking of one query between m's shard lines at path; returns the text and
 * puts the span that a reader finds in *span. */
static char *span_file(const char *path, const SlemRankShard *m, uint64_t *span) {
  SlemRankEntry a = {.id = "9", .score = 0.5f, .row = 9};
  SlemRankWriter *w;
  SlemRankReader *r;
  const SlemRankQuery *q;
  SlemError err;
  ck_assert_int_eq(slem_rankwriter_open(&w, path, SLEM_RANK_JSONL, NULL, NULL, NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_write_entries(w, "q0", &a, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard_end(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_ptr_nonnull(slem_rankreader_shard(r));
  *span = slem_rankreader_shard(r)->span;
  slem_rankreader_free(r);
  return slurp(path);
}

/* A group's span is written after the index when it is not 1, and read back; a line
 * without one holds one shard. */
START_TEST(shard_line_span_round_trip) {
  char *path = tu_path("span.jsonl"), *text;
  SlemRankShard m = {.index = 2, .span = 3, .count = 5, .rows = 1001, .k = 7,
                     .database = "0123456789abcdef", .has_end = 1, .queries = 1,
                     .query_set = "fedcba9876543210"};
  uint64_t span = 0;
  text = span_file(path, &m, &span);
  ck_assert_ptr_nonnull(strstr(text, "{\"slem_shard\":{\"index\":2,\"span\":3,\"count\":5,"));
  ck_assert_uint_eq(span, 3);
  free(text);
  m.span = 1; /* one shard: no span written, and 1 read back */
  text = span_file(path, &m, &span);
  ck_assert_ptr_null(strstr(text, "span"));
  ck_assert_uint_eq(span, 1);
  free(text);
  free(path);
}
END_TEST

/* The arithmetics (arith.h) are texts of the table: written when recorded, read back
 * whole, absent (an older slem, vectors that are not containers) read as "". */
START_TEST(shard_line_arithmetics_round_trip) {
  char *path = tu_path("arith.jsonl"), *text;
  SlemRankShard m = {.index = 0, .count = 1, .rows = 3, .k = 2, .database = "0123456789abcdef",
                     .arith = "SkylakeX (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)",
                     .desc_arith = "Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36) + SkylakeX "
                                   "(OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)",
                     .has_end = 1, .queries = 1, .query_set = "fedcba9876543210"};
  SlemRankReader *r;
  const SlemRankQuery *q;
  const SlemRankShard *got;
  SlemError err;
  text = one_query_ranking(path, &m);
  ck_assert_ptr_nonnull(strstr(text, "\"database\":\"0123456789abcdef\",\"arithmetic\":\"SkylakeX "
                                     "(OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)\",\"descriptors_"
                                     "arithmetic\":\"Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc "
                                     "2.36) + SkylakeX (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)\"}}\n"));
  free(text);
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  while (slem_rankreader_next(r, &q, &err) == SLEM_OK && q) continue;
  got = slem_rankreader_shard(r);
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got->arith, m.arith);
  ck_assert_str_eq(got->desc_arith, m.desc_arith);
  slem_rankreader_free(r);
  /* none recorded: not written, read as "" */
  m.arith[0] = m.desc_arith[0] = 0;
  text = one_query_ranking(path, &m);
  ck_assert_ptr_null(strstr(text, "arithmetic"));
  free(text);
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  while (slem_rankreader_next(r, &q, &err) == SLEM_OK && q) continue;
  got = slem_rankreader_shard(r);
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got->arith, "");
  ck_assert_str_eq(got->desc_arith, "");
  slem_rankreader_free(r);
  free(path);
}
END_TEST

/* A group of shards whose descriptors name several arithmetics (slem-merge --partial with
 * --allow-mixed-blas) records each with its fingerprints: written when there are two or
 * more, read back whole; texts that the writer would not write are refused naming the file
 * and the line. */
START_TEST(shard_line_classes_round_trip) {
  char *path = tu_path("classes.jsonl"), *text;
  SlemRankShard m = {.index = 0, .span = 2, .count = 4, .rows = 8, .k = 2,
                     .database = "0123456789abcdef", .desc_arith = "A (L) + B (L)",
                     .has_end = 1, .queries = 1, .query_set = "fedcba9876543210"};
  SlemRankShardClass c[SLEM_SHARD_CLASSES + 1] = {{.arith = "A (L)", .database = "0123456789abcdef",
                                                   .query_set = "fedcba9876543210"},
                                                  {.arith = "B (L)", .database = "1111111111111111",
                                                   .query_set = "2222222222222222"},
                                                  {.arith = "", .database = "0123456789abcdef"}},
                     got[SLEM_SHARD_CLASSES];
  SlemRankReader *r;
  const SlemRankQuery *q;
  const SlemRankShard *back;
  SlemError err;
  /* one: none recorded; a query set unknown: the first line's alone */
  ck_assert_int_eq(slem_rankshard_set_classes(&m, c, 1), 0);
  ck_assert_str_eq(m.desc_databases, "");
  ck_assert_uint_eq(slem_rankshard_classes(&m, got), 1);
  ck_assert_str_eq(got[0].arith, "A (L) + B (L)");
  ck_assert_int_eq(slem_rankshard_set_classes(&m, c, 3), 0);
  ck_assert_str_eq(m.desc_databases, "0123456789abcdef=A (L) | 1111111111111111=B (L) | 0123456789abcdef=");
  ck_assert_str_eq(m.desc_query_sets, "");
  ck_assert_int_eq(slem_rankshard_set_classes(&m, c, 2), 0);
  ck_assert_str_eq(m.desc_query_sets, "fedcba9876543210 2222222222222222");
  /* too many, or an arithmetic that would not read back */
  for (size_t i = 2; i <= SLEM_SHARD_CLASSES; i++) c[i] = c[0], c[i].arith[0] = (char)('C' + i);
  ck_assert_int_eq(slem_rankshard_set_classes(&m, c, SLEM_SHARD_CLASSES + 1), -1);
  snprintf(c[2].arith, sizeof c[2].arith, "C | D");
  ck_assert_int_eq(slem_rankshard_set_classes(&m, c, 3), -1);
  ck_assert_str_eq(m.desc_query_sets, "fedcba9876543210 2222222222222222"); /* unchanged */
  text = one_query_ranking(path, &m);
  ck_assert_ptr_nonnull(strstr(text, "\"descriptors_arithmetic\":\"A (L) + B (L)\",\"descriptors_"
                                     "databases\":\"0123456789abcdef=A (L) | 1111111111111111=B "
                                     "(L)\"}}\n"));
  ck_assert_ptr_nonnull(strstr(text, "\"query_set\":\"fedcba9876543210\",\"descriptors_query_sets\":"
                                     "\"fedcba9876543210 2222222222222222\"}}\n"));
  free(text);
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  while (slem_rankreader_next(r, &q, &err) == SLEM_OK && q) continue;
  back = slem_rankreader_shard(r);
  ck_assert_ptr_nonnull(back);
  ck_assert_uint_eq(slem_rankshard_classes(back, got), 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_str_eq(got[i].arith, c[i].arith);
    ck_assert_str_eq(got[i].database, c[i].database);
    ck_assert_str_eq(got[i].query_set, c[i].query_set);
  }
  slem_rankreader_free(r);
  free(path);
#define HEAD "{\"slem_shard\":{\"index\":0,\"count\":1,\"rows\":1,\"k\":1,\"database\":\"0123456789abcdef\","
#define BODY "{\"query\":\"q\",\"results\":[]}\n"
#define END "{\"slem_shard_end\":{\"queries\":1,\"query_set\":\"0123456789abcdef\""
#define TWO "\"descriptors_databases\":\"0123456789abcdef=A | 0123456789abcdef=B\"}}\n"
  expect_bad(HEAD "\"descriptors_databases\":\"0123456789abcdef=A\"}}\n" BODY END "}}\n", SLEM_RANK_AUTO,
             "line 1: a bad shard line ('descriptors_databases' not two to", 0);
  expect_bad(HEAD "\"descriptors_databases\":\"0123=A | 0123456789abcdef=B\"}}\n" BODY END "}}\n",
             SLEM_RANK_AUTO, "line 1: a bad shard line ('descriptors_databases'", 0);
  expect_bad(HEAD "\"descriptors_databases\":\"0123456789abcdef=A | 0123456789abcdef=A\"}}\n" BODY END
             "}}\n", SLEM_RANK_AUTO, "line 1: a bad shard line ('descriptors_databases'", 0);
  expect_bad(HEAD TWO BODY END "}}\n", SLEM_RANK_AUTO,
             "line 3: a bad shard line ('descriptors_query_sets' not one query set for each", 1);
  expect_bad(HEAD TWO BODY END ",\"descriptors_query_sets\":\"0123456789abcdef\"}}\n", SLEM_RANK_AUTO,
             "line 3: a bad shard line ('descriptors_query_sets'", 1);
  expect_bad(HEAD "\"arithmetic\":\"A\"}}\n" BODY END ",\"descriptors_query_sets\":\"0123456789abcdef "
             "0123456789abcdef\"}}\n", SLEM_RANK_AUTO, "line 3: a bad shard line ('descriptors_query_sets'", 1);
#undef HEAD
#undef BODY
#undef END
#undef TWO
}
END_TEST

START_TEST(queries_group_consecutive_lines) {
  /* blank lines skipped; q's lines apart: a second group with the index of the first */
  const char *text = "q\t1\ta\t0.9\n\nq\t2\tb\t0.8\nw\t1\ta\t0.7\nq\t3\tc\t0.6\n";
  char *path = tu_path("groups.tsv");
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  SlemError err;
  tu_write_bytes(path, text, strlen(text));
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_str_eq(q->query, "q");
  ck_assert_uint_eq(q->n, 2);
  ck_assert_uint_eq(q->e[1].line, 3);
  ck_assert_str_eq(q->e[1].id, "b");
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_str_eq(q->query, "w");
  ck_assert_uint_eq(q->index, 1);
  ck_assert_uint_eq(q->line, 4);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_str_eq(q->query, "q");
  ck_assert_uint_eq(q->index, 0);
  ck_assert_uint_eq(q->n, 1);
  ck_assert_str_eq(q->e[0].id, "c");
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_ptr_null(q);
  slem_rankreader_free(r);
  free(path);
}
END_TEST

START_TEST(many_entries_per_query) {
  /* more entries than the id set's first size, and long ids: the arena and the set grow */
  char *path = tu_path("many.tsv");
  FILE *f = fopen(path, "w");
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  SlemError err;
  for (int i = 0; i < 3000; i++) fprintf(f, "query\t%d\tdocument-%0200d\t%d\n", i + 1, i, -i);
  fclose(f);
  ck_assert_int_eq(slem_rankreader_open(&r, path, SLEM_RANK_TSV, &err), SLEM_OK);
  ck_assert_msg(slem_rankreader_next(r, &q, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(q->n, 3000);
  ck_assert_int_eq(q->e[2999].rank, 3000);
  ck_assert_double_eq(q->e[2999].score, -2999);
  ck_assert_int_eq(strncmp(q->e[1234].id, "document-0000", 13), 0);
  ck_assert_str_eq(q->e[1234].id + strlen(q->e[1234].id) - 4, "1234");
  slem_rankreader_free(r);
  free(path);
}
END_TEST

/* npy: 10 000 queries (past every batch) of up to 3 results written as slem-match does,
 * read back by each of the names of the pair, and through slem_rankwriter_write_entries()
 * the same bytes. */
START_TEST(npy_round_trip) {
  char *path = tu_path("rt.npy"), *ipath = tu_path("rt.I.npy"), *dpath = tu_path("rt.D.npy");
  char *base = tu_path("rt"), *p2 = tu_path("rt2.npy"), *i2 = tu_path("rt2.I.npy");
  const char *names[] = {path, ipath, dpath, base};
  SlemRankWriter *w = NULL, *w2 = NULL;
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  SlemError err;
  ck_assert_int_eq(slem_rankformat_from_path(path), SLEM_RANK_NPY);
  ck_assert_int_eq(slem_rankwriter_open(&w, path, SLEM_RANK_NPY, NULL, NULL, NULL, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_rankwriter_open_k(&w, "-", SLEM_RANK_NPY, NULL, NULL, NULL, 3, &err), SLEM_EINVAL);
  ck_assert_msg(slem_rankwriter_open_k(&w, path, SLEM_RANK_NPY, NULL, NULL, NULL, 3, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankwriter_open_k(&w2, p2, SLEM_RANK_NPY, NULL, NULL, NULL, 3, &err) == SLEM_OK, "%s", err.msg);
  for (uint64_t i = 0; i < 10000; i++) {
    SlemHit h[3];
    SlemRankEntry e[3];
    size_t n = i % 4 == 3 ? 0 : i % 4 + 1;
    n = n > 3 ? 3 : n;
    for (size_t j = 0; j < n; j++) {
      h[j].row = (i * 7 + j * 13) % 100003;
      h[j].score = (float)(1.0 / (double)(i + j + 3));
      memset(&e[j], 0, sizeof e[j]);
      e[j].id = "ignored";
      e[j].row = (int64_t)h[j].row;
      e[j].score = h[j].score;
    }
    ck_assert_msg(slem_rankwriter_write(w, i, h, n, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_msg(slem_rankwriter_write_entries(w2, "q", e, n, &err) == SLEM_OK, "%s", err.msg);
  }
  ck_assert_msg(slem_rankwriter_close(w, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_rankwriter_close(w2, &err) == SLEM_OK, "%s", err.msg);
  {
    FILE *a = fopen(ipath, "rb"), *b = fopen(i2, "rb");
    int ca, cb;
    do {
      ca = getc(a);
      cb = getc(b);
    } while (ca == cb && ca != EOF);
    ck_assert_int_eq(ca, cb);
    fclose(a);
    fclose(b);
  }
  for (size_t k = 0; k < 4; k++) {
    uint64_t i = 0;
    ck_assert_msg(slem_rankreader_open(&r, names[k], SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_rankreader_is_text(r), 0);
    for (;; i++) {
      char buf[32];
      size_t n = i % 4 == 3 ? 0 : i % 4 + 1;
      n = n > 3 ? 3 : n;
      ck_assert_msg(slem_rankreader_next(r, &q, &err) == SLEM_OK, "%s", err.msg);
      if (!q) break;
      snprintf(buf, sizeof buf, "%" PRIu64, i);
      ck_assert_str_eq(q->query, buf);
      ck_assert_uint_eq(q->n, n);
      for (size_t j = 0; j < n; j++) {
        snprintf(buf, sizeof buf, "%" PRIu64, (i * 7 + j * 13) % 100003);
        ck_assert_str_eq(q->e[j].id, buf);
        ck_assert_int_eq(q->e[j].row, (int64_t)((i * 7 + j * 13) % 100003));
        ck_assert_int_eq(q->e[j].rank, (long)j + 1);
        ck_assert(q->e[j].score == (double)(float)(1.0 / (double)(i + j + 3)));
        ck_assert_ptr_null(q->e[j].score_text);
      }
    }
    ck_assert_uint_eq(i, 10000);
    ck_assert_int_eq(slem_rankreader_format(r), SLEM_RANK_NPY);
    ck_assert_uint_eq(slem_rankreader_queries(r), 10000);
    slem_rankreader_free(r);
  }
  free(path);
  free(ipath);
  free(dpath);
  free(base);
  free(p2);
  free(i2);
}
END_TEST

/* Writes an npy matrix of (nq, k) with dtype descr and the raw data. */
static void put_npy(const char *path, const char *descr, int nq, int k, const void *data,
                    size_t bytes) {
  char h[128];
  FILE *f = fopen(path, "wb");
  memset(h, ' ', sizeof h);
  memcpy(h, "\x93NUMPY\x01\x00\x76\x00", 10);
  snprintf(h + 10, 100, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, nq, k);
  h[strlen(h)] = ' ';
  h[127] = '\n';
  fwrite(h, 1, 128, f);
  fwrite(data, 1, bytes, f);
  fclose(f);
}

static void expect_npy_bad(const char *path, int status, const char *msg) {
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  SlemError err;
  int st = slem_rankreader_open(&r, path, SLEM_RANK_AUTO, &err);
  while (st == SLEM_OK && (st = slem_rankreader_next(r, &q, &err)) == SLEM_OK && q) {
  }
  ck_assert_int_eq(st, status);
  ck_assert_msg(strstr(err.msg, msg), "'%s' lacks '%s'", err.msg, msg);
  slem_rankreader_free(r);
}

START_TEST(npy_bad_pairs) {
  char *ip = tu_path("b.I.npy"), *dp = tu_path("b.D.npy");
  int64_t I[4] = {3, -1, 4, 5};
  float D[4] = {0.5f, -FLT_MAX, 0.25f, 0.125f};
  SlemRankReader *r = NULL;
  SlemError err;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  put_npy(dp, "<f4", 2, 2, D, sizeof D);
  expect_npy_bad(ip, SLEM_OK, ""); /* padding last: fine */
  I[1] = 7;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  expect_npy_bad(dp, SLEM_OK, ""); /* 7 with -FLT_MAX is a result (a score FAISS can give) */
  I[0] = -1;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "row 0, column 0: padding (I -1) with a score other than");
  D[0] = -FLT_MAX;
  put_npy(dp, "<f4", 2, 2, D, sizeof D);
  expect_npy_bad(ip, SLEM_EFORMAT, "row 0, column 1: a result after the padding");
  I[0] = -2;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "row 0, column 0: a negative row other than the padding");
  I[0] = 3;
  I[3] = 4;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "b.I.npy: row 1, column 1: id '4' appears twice for query '1'");
  put_npy(ip, "<i8", 1, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "b.I.npy: 1 x 2 values of 8 bytes, but the file holds 32 bytes");
  put_npy(ip, "<i8", 1, 4, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "b.D.npy: 2 x 2, but ");
  put_npy(ip, "<f8", 2, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EFORMAT, "b.I.npy: npy rankings need dtype <i8");
  remove(dp);
  I[3] = 5;
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  expect_npy_bad(ip, SLEM_EIO, "b.D.npy: No such file or directory (npy rankings are a pair");
  ck_assert_int_eq(slem_rankreader_open(&r, "-", SLEM_RANK_NPY, &err), SLEM_EINVAL);
  ck_assert_msg(strstr(err.msg, "cannot come from stdin or a pipe"), "%s", err.msg);
  free(ip);
  free(dp);
}
END_TEST

/* FAISS users' pairs: I int32 and D float64 (numpy's astype) read as the int64 / float32
 * pair of the same values, by the names np.save gave them (x_I.npy, x_D.npy); a float64
 * score beyond float32's range is refused by its place. */
START_TEST(npy_int32_float64) {
  char *ip = tu_path("w_I.npy"), *dp = tu_path("w_D.npy");
  int32_t I[4] = {3, 9, 4, -1};
  double D[4] = {0.5, 0.25, 0.125, -FLT_MAX};
  SlemRankReader *r = NULL;
  const SlemRankQuery *q;
  SlemError err;
  put_npy(ip, "<i4", 2, 2, I, sizeof I);
  put_npy(dp, "<f8", 2, 2, D, sizeof D);
  ck_assert_int_eq(slem_rankreader_open(&r, dp, SLEM_RANK_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_uint_eq(q->n, 2);
  ck_assert_str_eq(q->e[0].id, "3");
  ck_assert_int_eq(q->e[1].row, 9);
  ck_assert(q->e[1].score == 0.25);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_uint_eq(q->n, 1); /* the padding, -FLT_MAX as a double */
  ck_assert_int_eq(q->e[0].row, 4);
  ck_assert(q->e[0].score == 0.125);
  ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
  ck_assert_ptr_null(q);
  slem_rankreader_free(r);
  D[1] = 1e39;
  put_npy(dp, "<f8", 2, 2, D, sizeof D);
  expect_npy_bad(ip, SLEM_EFORMAT, "w_D.npy: row 0, column 1: score 1e+39 is not a finite number of float32");
  put_npy(dp, "<f2", 2, 2, D, 8);
  expect_npy_bad(ip, SLEM_EFORMAT, "w_D.npy: npy rankings need dtype <f4 or <f8");
  free(ip);
  free(dp);
}
END_TEST

/* Each format names the place of a query and of a result its own way: a text format its
 * lines, npy its rows and columns from 0, as its reader's messages count them. */
START_TEST(places_by_format) {
  char *tp = tu_path("p.tsv"), *ip = tu_path("p.I.npy"), *dp = tu_path("p.D.npy");
  const char *text = "0\t1\t3\t0.5\n0\t2\t4\t0.25\n1\t1\t5\t0.5\n1\t2\t6\t0.25\n";
  int64_t I[4] = {3, 4, 5, 6};
  float D[4] = {0.5f, 0.25f, 0.5f, 0.25f};
  const char *want[2][2] = {{"line 3", "line 4"}, {"row 1", "row 1, column 1"}};
  char buf[SLEM_RANK_PLACE_MAX];
  tu_write_bytes(tp, text, strlen(text));
  put_npy(ip, "<i8", 2, 2, I, sizeof I);
  put_npy(dp, "<f4", 2, 2, D, sizeof D);
  for (int f = 0; f < 2; f++) {
    SlemRankReader *r = NULL;
    const SlemRankQuery *q;
    SlemError err;
    ck_assert_int_eq(slem_rankreader_open(&r, f ? ip : tp, SLEM_RANK_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
    ck_assert_int_eq(slem_rankreader_next(r, &q, &err), SLEM_OK);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(q->n, 2);
    ck_assert_str_eq(slem_rankreader_place(r, buf, q->line, SLEM_RANK_WHOLE_QUERY), want[f][0]);
    ck_assert_str_eq(slem_rankreader_place(r, buf, q->e[1].line, 1), want[f][1]);
    slem_rankreader_free(r);
  }
  free(tp);
  free(ip);
  free(dp);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rankings");
  TCase *tc = tcase_create("rankings");
  tcase_add_test(tc, format_names);
  tcase_add_test(tc, output_to_stdout);
  tcase_add_test(tc, round_trip_tsv);
  tcase_add_test(tc, round_trip_trec);
  tcase_add_test(tc, round_trip_jsonl);
  tcase_add_test(tc, hits_and_entries_write_the_same_bytes);
  tcase_add_test(tc, bad_lines_name_file_and_line);
  tcase_add_test(tc, queries_group_consecutive_lines);
  tcase_add_test(tc, shard_lines_round_trip);
  tcase_add_test(tc, shard_line_span_round_trip);
  tcase_add_test(tc, shard_line_arithmetics_round_trip);
  tcase_add_test(tc, shard_line_classes_round_trip);
  tcase_add_test(tc, many_entries_per_query);
  tcase_add_test(tc, npy_round_trip);
  tcase_add_test(tc, npy_bad_pairs);
  tcase_add_test(tc, npy_int32_float64);
  tcase_add_test(tc, places_by_format);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

/* slem_merge on hand-made shards: the ordering rule across shards (ties to the lower
 * global row), rows from jsonl and from an ids table, K beyond the shards, and the
 * refusals that only a merge can see. */
#include "testutil.h"

#include <sys/resource.h>

#include "../lib/rank/merge.h"
#include "../lib/rank/npypair.h"

static char *write_text(const char *name, const char *text) {
  char *p = tu_path(name);
  tu_write_bytes(p, text, strlen(text));
  return p;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *s = calloc(1, 1 << 16);
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_lt(fread(s, 1, (1 << 16) - 1, f), (1 << 16) - 1);
  fclose(f);
  return s;
}

/* Merges shards a and b with k into a file and returns its text (NULL on error, with
 * the message in err). */
static char *merge2(const char *a, const char *b, size_t k, SlemRankFormat fmt, const char *ids,
                    SlemError *err) {
  char *pa = write_text("a.rank", a), *pb = write_text("b.rank", b), *po = tu_path("out.rank");
  const char *shards[2];
  SlemMergeOpts o;
  SlemMergeStats st;
  char *text = NULL;
  shards[0] = pa;
  shards[1] = pb;
  unlink(po);
  slem_merge_opts_init(&o);
  o.k = k;
  o.format = fmt;
  o.db_ids = ids;
  if (slem_merge(shards, 2, po, &o, &st, err) == SLEM_OK) text = slurp(po);
  else ck_assert_msg(!tu_file_exists(po), "an output was left after: %s", err->msg);
  free(pa);
  free(pb);
  free(po);
  return text;
}

START_TEST(ties_go_to_the_lower_global_row) {
  /* both shards score 0.5 on rows 3 (b) and 4 (a): 3 first, whatever the shard order */
  SlemError err;
  char *m = merge2("q\t1\t4\t0.5\nq\t2\t0\t0.25\n", "q\t1\t3\t0.5\nq\t2\t9\t0.375\n", 3,
                   SLEM_RANK_AUTO, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "q\t1\t3\t0.5\nq\t2\t4\t0.5\nq\t3\t9\t0.375\n");
  free(m);
  m = merge2("q\t1\t3\t0.5\nq\t2\t9\t0.375\n", "q\t1\t4\t0.5\nq\t2\t0\t0.25\n", 3, SLEM_RANK_AUTO,
             NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "q\t1\t3\t0.5\nq\t2\t4\t0.5\nq\t3\t9\t0.375\n");
  free(m);
}
END_TEST

START_TEST(ties_within_a_shard_in_any_order) {
  /* FAISS lists equal scores in an order of its own (here rows 7, 5): the merge puts them
   * by the lower row, as one slem-match writes them; a score that goes up is refused */
  SlemError err;
  char *m = merge2("q\t1\t7\t0.5\nq\t2\t5\t0.5\nq\t3\t1\t0.25\n", "q\t1\t6\t0.5\n", 3,
                   SLEM_RANK_AUTO, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "q\t1\t5\t0.5\nq\t2\t6\t0.5\nq\t3\t7\t0.5\n");
  free(m);
  m = merge2("q\t1\t7\t0.25\nq\t2\t5\t0.5\n", "q\t1\t6\t0.5\n", 3, SLEM_RANK_AUTO, NULL,
             &err);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(err.msg, "not best first") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(rows_from_jsonl_and_from_ids) {
  /* the ids sort the other way from the rows: the rule follows the rows */
  const char *a = "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"zz\",\"row\":1,\"score\":1}]}\n";
  const char *b = "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"aa\",\"row\":2,\"score\":1}]}\n";
  char *ids = write_text("db.ids", "x\nzz\naa\n");
  SlemError err;
  char *m = merge2(a, b, 5, SLEM_RANK_TSV, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "q\t1\tzz\t1\nq\t2\taa\t1\n");
  free(m);
  m = merge2("q Q0 aa 1 1 run7\n", "q Q0 zz 1 1 run8\n", 5, SLEM_RANK_AUTO, ids, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "q Q0 zz 1 1 run7\nq Q0 aa 2 1 run7\n");
  free(m);
  m = merge2("q Q0 aa 1 1 run7\n", "q Q0 zz 1 1 run8\n", 5, SLEM_RANK_JSONL, ids, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"zz\",\"row\":1,\"score\":1},"
                      "{\"rank\":2,\"id\":\"aa\",\"row\":2,\"score\":1}]}\n");
  free(m);
  /* jsonl's row must agree with the ids table */
  free(ids);
  ids = write_text("db.ids", "zz\naa\n");
  ck_assert_ptr_null(merge2(a, b, 5, SLEM_RANK_TSV, ids, &err));
  ck_assert_msg(strstr(err.msg, "a.rank: line 1: id 'zz' has row 1, but line 1 of") != NULL, "%s",
                err.msg);
  free(ids);
}
END_TEST

START_TEST(refusals) {
  SlemError err;
  /* the query lists differ */
  ck_assert_ptr_null(merge2("q\t1\t1\t1\n", "w\t1\t2\t1\n", 2, SLEM_RANK_AUTO, NULL, &err));
  ck_assert_msg(strstr(err.msg, "b.rank: line 1: query 'w', but") != NULL, "%s", err.msg);
  /* one list shorter than k while its shard returned more rows elsewhere */
  ck_assert_ptr_null(merge2("q\t1\t1\t1\nw\t1\t3\t1\nw\t2\t5\t0\n", "q\t1\t2\t1\nq\t2\t4\t0\nw\t1\t2\t1\nw\t2\t4\t0\n",
                            2, SLEM_RANK_AUTO, NULL, &err));
  ck_assert_msg(strstr(err.msg, "a.rank: line 1: query 'q' has 1 results, fewer than -k 2") != NULL,
                "%s", err.msg);
  /* a row in both shards */
  ck_assert_ptr_null(merge2("q\t1\t1\t1\n", "q\t1\t1\t1\n", 2, SLEM_RANK_AUTO, NULL, &err));
  ck_assert_msg(strstr(err.msg, "b.rank: line 1: row 1 ('1') is also in") != NULL, "%s", err.msg);
  /* a cut last line */
  ck_assert_ptr_null(merge2("q\t1\t1\t1\n", "q\t1\t2\t0.5", 2, SLEM_RANK_AUTO, NULL, &err));
  ck_assert_msg(strstr(err.msg, "b.rank: the last line has no newline") != NULL, "%s", err.msg);
  /* a row number with a leading zero is an id, not a row */
  ck_assert_ptr_null(merge2("q\t1\t01\t1\n", "q\t1\t2\t0.5\n", 2, SLEM_RANK_AUTO, NULL, &err));
  ck_assert_msg(strstr(err.msg, "a.rank: line 1: id '01' is not a database row") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(short_lists_of_small_shards_are_exact) {
  /* shard a has two rows and lists both (one with exclude-self): fewer than k is fine */
  SlemError err;
  char *m = merge2("0\t1\t1\t0.5\n1\t1\t0\t0.5\n", "0\t1\t2\t0.75\n0\t2\t3\t0.25\n1\t1\t3\t1\n1\t2\t2\t0\n",
                   3, SLEM_RANK_AUTO, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_str_eq(m, "0\t1\t2\t0.75\n0\t2\t1\t0.5\n0\t3\t3\t0.25\n1\t1\t3\t1\n1\t2\t0\t0.5\n1\t3\t2\t0\n");
  free(m);
}
END_TEST

/* Writes shard m of a two-shard split of 4 rows, one query listing its rows, through the
 * writer's shard lines; returns the path. */
static char *write_shard(const char *name, const SlemRankShard *m) {
  char *p = tu_path(name);
  char id[2][8];
  SlemRankEntry e[2] = {{.score = 1}, {.score = 0.5}};
  SlemRankWriter *w;
  SlemError err;
  for (int i = 0; i < 2; i++) {
    e[i].row = (int64_t)(2 * m->index + (uint64_t)i);
    snprintf(id[i], sizeof id[i], "%d", (int)e[i].row);
    e[i].id = id[i];
  }
  ck_assert_int_eq(slem_rankwriter_open(&w, p, SLEM_RANK_JSONL, NULL, NULL, NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_write_entries(w, "q", e, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_shard_end(w, m, &err), SLEM_OK);
  ck_assert_int_eq(slem_rankwriter_close(w, &err), SLEM_OK);
  return p;
}

/* Every field of the shard lines that the shards must share (the table of rankings.h, so
 * a field added there is tested here too): changed in one shard, the merge is refused,
 * naming both files, the line and the field, and nothing is written. An arithmetic is
 * compared by its rule (the match's: its libraries, not its core; one not recorded: not
 * at all), and --allow-mixed-blas waives what the table says it waives: the arithmetics,
 * and the fingerprints of descriptors between shards of other descriptor arithmetics. */
START_TEST(shard_lines_are_compared_field_by_field) {
  SlemRankShard m = {.index = 0, .count = 2, .rows = 4, .k = 2, .database = "0123456789abcdef",
                     .arith = "Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)",
                     .desc_arith = "Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)",
                     .scoring = "dot",
                     .has_end = 1, .queries = 1, .query_set = "fedcba9876543210"}, x;
  size_t nf;
  const SlemRankShardField *f = slem_rankshard_fields(&nf);
  char *a = write_shard("s0.jsonl", &m), *b, *po = tu_path("out.tsv");
  const char *shards[2];
  SlemMergeOpts o;
  SlemError err;
  size_t compared = 0, waived = 0;
  slem_merge_opts_init(&o);
  o.k = 2;
  o.format = SLEM_RANK_TSV;
  x = m;
  x.index = 1;
  b = write_shard("s1.jsonl", &x);
  shards[0] = a;
  shards[1] = b;
  ck_assert_int_eq(slem_merge(shards, 2, po, &o, NULL, &err), SLEM_OK);
  free(b);
  for (size_t i = 0; i < nf; i++) {
    char *p, want[256];
    if (!f[i].differs) continue;
    ck_assert_int_ne(f[i].rule, SLEM_SHARDR_ANY);
    x = m;
    x.index = 1;
    p = (char *)&x + f[i].offset;
    if (f[i].type == SLEM_SHARDF_U64) {
      uint64_t v;
      memcpy(&v, p, sizeof v);
      v++;
      memcpy(p, &v, sizeof v);
    } else if (f[i].rule == SLEM_SHARDR_LIBS) { /* the libraries, not the core */
      p = strstr(p, " (");
      ck_assert_ptr_nonnull(p);
      p[2] = p[2] == '0' ? '1' : '0';
    } else { /* hex digits, a word or a text */
      p[0] = p[0] == '0' ? '1' : '0';
    }
    b = write_shard("s1.jsonl", &x);
    shards[1] = b;
    unlink(po);
    ck_assert_int_eq(slem_merge(shards, 2, po, &o, NULL, &err), SLEM_EFORMAT);
    snprintf(want, sizeof want, "s1.jsonl: %s: %s ", f[i].end ? "its end line" : "line 1", f[i].key);
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "s0.jsonl has ") &&
                  strstr(err.msg, f[i].differs), "field %s: '%s'", f[i].key, err.msg);
    ck_assert(!tu_file_exists(po));
    /* --allow-mixed-blas: waived where the table says so, else refused as before */
    o.allow_mixed_blas = 1;
    ck_assert_int_eq(slem_merge(shards, 2, po, &o, NULL, &err),
                     f[i].mixed == SLEM_SHARDM_ALWAYS ? SLEM_OK : SLEM_EFORMAT);
    ck_assert_int_eq(tu_file_exists(po), f[i].mixed == SLEM_SHARDM_ALWAYS);
    unlink(po);
    if (f[i].mixed == SLEM_SHARDM_DESC) { /* waived between descriptors of two arithmetics */
      x.desc_arith[0] = 'S';
      free(b);
      shards[1] = b = write_shard("s1.jsonl", &x);
      ck_assert_msg(slem_merge(shards, 2, po, &o, NULL, &err) == SLEM_OK, "field %s: '%s'",
                    f[i].key, err.msg);
      o.allow_mixed_blas = 0;
      ck_assert_int_eq(slem_merge(shards, 2, po, &o, NULL, &err), SLEM_EFORMAT);
      /* without it, the first field in the table's order that differs is named */
      snprintf(want, sizeof want, "s1.jsonl: line 1: %s",
               f[i].end ? "descriptors_arithmetic Saswell (" : f[i].key);
      ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "s0.jsonl has "), "%s", err.msg);
      unlink(po);
    }
    waived += f[i].mixed != SLEM_SHARDM_NEVER;
    o.allow_mixed_blas = 0;
    compared++;
    free(b);
  }
  ck_assert_uint_ge(waived, 4); /* two arithmetics, the database, the query set */
  /* the match's core alone, or an arithmetic not recorded (an older slem): not compared */
  x = m;
  x.index = 1;
  snprintf(x.arith, sizeof x.arith, "SkylakeX%s", strstr(m.arith, " ("));
  x.desc_arith[0] = 0;
  b = write_shard("s1.jsonl", &x);
  shards[1] = b;
  ck_assert_int_eq(slem_merge(shards, 2, po, &o, NULL, &err), SLEM_OK);
  unlink(po);
  free(b);
  ck_assert_uint_ge(compared, 7);
  /* a k below the merge's */
  o.k = 3;
  ck_assert_int_eq(slem_merge(shards, 1, po, &o, NULL, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "s0.jsonl: line 1: made with -k 2, fewer than the merge's -k 3"), "%s",
                err.msg);
  free(a);
  free(po);
}
END_TEST

/* A group merged with --allow-mixed-blas from shards of several arithmetics: without the
 * flag it breaks the rule of the arithmetic it mixed beside anything, a group of the same
 * mix and itself included (one level refuses its shards); with it, its fingerprints are
 * compared arithmetic by arithmetic, as one level compares every two of its shards. */
START_TEST(groups_of_several_arithmetics) {
  size_t nf;
  const SlemRankShardField *f = slem_rankshard_fields(&nf), *fa = NULL, *fd = NULL, *fdb = NULL,
                           *fq = NULL;
  SlemRankShard g = {.index = 0, .span = 2, .count = 4, .rows = 8, .k = 2,
                     .database = "aaaaaaaaaaaaaaaa", .arith = "A (L)", .desc_arith = "A (L) + B (L)",
                     .has_end = 1, .queries = 1, .query_set = "1111111111111111"},
                x = g;
  SlemRankShardClass c[2] = {{.arith = "A (L)", .database = "aaaaaaaaaaaaaaaa",
                              .query_set = "1111111111111111"},
                             {.arith = "B (L)", .database = "bbbbbbbbbbbbbbbb",
                              .query_set = "2222222222222222"}};
  char va[17], vb[17], ar[SLEM_ARITH_LIST_MAX];
  for (size_t i = 0; i < nf; i++) {
    if (strcmp(f[i].key, "arithmetic") == 0) fa = f + i;
    if (strcmp(f[i].key, "descriptors_arithmetic") == 0) fd = f + i;
    if (strcmp(f[i].key, "database") == 0) fdb = f + i;
    if (strcmp(f[i].key, "query_set") == 0) fq = f + i;
  }
  ck_assert(fa && fd && fdb && fq);
  ck_assert_int_eq(slem_rankshard_set_classes(&g, c, 2), 0);
  /* a shard of queries and database of two arithmetics records "A (L) + B (L)" too: one
   * arithmetic of its own, not a mix */
  ck_assert_int_eq(slem_rankshard_mixes(fd, &g), 1);
  ck_assert_int_eq(slem_rankshard_mixes(fd, &x), 0);
  ck_assert_int_eq(slem_rankshard_differ(fd, &g, &g, 0), 1);
  ck_assert_int_eq(slem_rankshard_differ(fd, &x, &x, 0), 0);
  ck_assert_int_eq(slem_rankshard_differ(fd, &g, &x, 0), 1);
  ck_assert_int_eq(slem_rankshard_differ(fd, &g, &g, 1), 0);
  /* the match's libraries: a list is a group's mix */
  ck_assert_int_eq(slem_rankshard_mixes(fa, &g), 0);
  snprintf(x.arith, sizeof x.arith, "A (L) + A (M)");
  ck_assert_int_eq(slem_rankshard_mixes(fa, &x), 1);
  ck_assert_int_eq(slem_rankshard_differ(fa, &x, &x, 0), 1);
  ck_assert_int_eq(slem_rankshard_differ(fa, &x, &x, 1), 0);
  ck_assert_int_eq(slem_rankshard_mixes(fdb, &g), 0);
  /* under the flag: a shard of A with A's database, of B with B's, of a third with its own,
   * of "A + B" with B's: all agree; of A with B's database, or of none recorded, do not */
  x = g;
  x.desc_databases[0] = x.desc_query_sets[0] = '\0';
  snprintf(x.desc_arith, sizeof x.desc_arith, "A (L)");
  ck_assert_int_eq(slem_rankshard_differ(fdb, &g, &x, 1), 0);
  ck_assert_int_eq(slem_rankshard_differ(fq, &x, &g, 1), 0);
  snprintf(x.desc_arith, sizeof x.desc_arith, "B (L)");
  ck_assert_int_eq(slem_rankshard_differ(fdb, &g, &x, 1), 1);
  ck_assert_int_eq(slem_rankshard_prints(fdb, &g, &x, va, vb, ar), 0);
  ck_assert_str_eq(va, "bbbbbbbbbbbbbbbb");
  ck_assert_str_eq(vb, "aaaaaaaaaaaaaaaa");
  ck_assert_str_eq(ar, "B (L)");
  ck_assert_int_eq(slem_rankshard_differ(fq, &x, &g, 1), 1); /* its query set is A's too */
  memcpy(x.database, "bbbbbbbbbbbbbbbb", 17);
  memcpy(x.query_set, "2222222222222222", 17);
  ck_assert_int_eq(slem_rankshard_differ(fdb, &g, &x, 1), 0);
  ck_assert_int_eq(slem_rankshard_differ(fq, &g, &x, 1), 0);
  ck_assert_int_eq(slem_rankshard_prints(fdb, &x, &g, va, vb, ar), -1);
  snprintf(x.desc_arith, sizeof x.desc_arith, "A (L) + B (L)");
  ck_assert_int_eq(slem_rankshard_differ(fdb, &g, &x, 1), 0);
  snprintf(x.desc_arith, sizeof x.desc_arith, "C (L)");
  memcpy(x.database, "cccccccccccccccc", 17);
  ck_assert_int_eq(slem_rankshard_differ(fdb, &x, &g, 1), 0);
  x.desc_arith[0] = '\0'; /* compared with every arithmetic */
  ck_assert_int_eq(slem_rankshard_differ(fdb, &x, &g, 1), 1);
  ck_assert_int_eq(slem_rankshard_prints(fdb, &x, &g, va, vb, ar), 0);
  ck_assert_str_eq(ar, "");
  /* and without the flag, a fingerprint as before: the group's own, the lowest shard's */
  memcpy(x.database, "aaaaaaaaaaaaaaaa", 17);
  ck_assert_int_eq(slem_rankshard_differ(fdb, &x, &g, 0), 0);
}
END_TEST

/* The most memory this process has held, in MiB. */
static long peak_mib(void) {
  struct rusage u;
  ck_assert_int_eq(getrusage(RUSAGE_SELF, &u), 0);
  return u.ru_maxrss >> 10;
}

START_TEST(a_far_row_costs_no_memory) {
  /* row 2^27 - 1, the last the fast merge takes in its tables of rows (8 bytes a row, 32
   * more for ids of their own, 5 GiB of address space): only the pages of the rows listed
   * may be written (a realloc and a memset wrote them all, 5 GB in 11 s); in jsonl with ids
   * of their own, with ids that are the rows, and in npy */
  static const char *far[2][2] = {
      {"{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"far\",\"row\":134217727,\"score\":2},"
       "{\"rank\":2,\"id\":\"near\",\"row\":3,\"score\":1}]}\n",
       "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"b5\",\"row\":5,\"score\":1.5},"
       "{\"rank\":2,\"id\":\"b6\",\"row\":6,\"score\":0.5}]}\n"},
      {"{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"134217727\",\"row\":134217727,"
       "\"score\":2},{\"rank\":2,\"id\":\"3\",\"row\":3,\"score\":1}]}\n",
       "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"5\",\"row\":5,\"score\":1.5},"
       "{\"rank\":2,\"id\":\"6\",\"row\":6,\"score\":0.5}]}\n"}};
  static const char *want[2] = {
      "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"far\",\"row\":134217727,\"score\":2},"
      "{\"rank\":2,\"id\":\"b5\",\"row\":5,\"score\":1.5}]}\n",
      "{\"query\":\"q\",\"results\":[{\"rank\":1,\"id\":\"134217727\",\"row\":134217727,"
      "\"score\":2},{\"rank\":2,\"id\":\"5\",\"row\":5,\"score\":1.5}]}\n"};
  SlemHit ha[2] = {{134217727, 2.0f}, {3, 1.0f}}, hb[2] = {{5, 1.5f}, {6, 0.5f}};
  char *na = tu_path("far.npy"), *nb = tu_path("near.npy"), *ia = tu_path("far.I.npy"),
       *ib = tu_path("near.I.npy"), *po = tu_path("farm.npy"), *pi = tu_path("farm.I.npy");
  const char *shards[2] = {ia, ib};
  unsigned char rows[16];
  int64_t r0, r1;
  SlemNpyPair *w;
  SlemMergeOpts o;
  SlemError err;
  long before = peak_mib();
  FILE *f;
  for (int i = 0; i < 2; i++) {
    char *m = merge2(far[i][0], far[i][1], 2, SLEM_RANK_AUTO, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_str_eq(m, want[i]);
    free(m);
  }
  ck_assert_int_eq(slem_npypair_open(&w, na, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_write(w, 0, ha, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_close(w, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_open(&w, nb, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_write(w, 0, hb, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_close(w, &err), SLEM_OK);
  slem_merge_opts_init(&o);
  o.k = 2;
  ck_assert_msg(slem_merge(shards, 2, po, &o, NULL, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_ptr_nonnull(f = fopen(pi, "rb"));
  ck_assert_int_eq(fseek(f, -16, SEEK_END), 0);
  ck_assert_uint_eq(fread(rows, 1, 16, f), 16);
  fclose(f);
  memcpy(&r0, rows, 8);
  memcpy(&r1, rows + 8, 8);
  ck_assert_int_eq(r0, 134217727);
  ck_assert_int_eq(r1, 5);
  /* a fifth of the 5 GiB: AddressSanitizer (SANITIZE=1) writes the shadow of the
   * allocations, an eighth of their size */
  ck_assert_msg(peak_mib() - before < 1024, "the merges held %ld MiB more", peak_mib() - before);
  free(na);
  free(nb);
  free(ia);
  free(ib);
  free(po);
  free(pi);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("merge");
  TCase *tc = tcase_create("merge");
  tcase_add_test(tc, ties_go_to_the_lower_global_row);
  tcase_add_test(tc, ties_within_a_shard_in_any_order);
  tcase_add_test(tc, rows_from_jsonl_and_from_ids);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, short_lists_of_small_shards_are_exact);
  tcase_add_test(tc, shard_lines_are_compared_field_by_field);
  tcase_add_test(tc, groups_of_several_arithmetics);
  tcase_add_test(tc, a_far_row_costs_no_memory);
  /* the far row maps 5 GiB of tables: under AddressSanitizer their shadow alone takes longer
   * than Check's default 4 s on a slow machine (CI's sanitizer pass timed out there) */
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

/* Top-k matching against a brute-force ranking written independently here. */
#include "testutil.h"

#include <pthread.h>

#include "../lib/formats/db.h"
#include "../lib/search/match.h"
#include "../lib/io/mem.h"
#include "../lib/linalg/blas.h"
#include "../lib/io/shard.h"
#include "../lib/io/textbuf.h"
#include "../lib/search/scorer.h"
#include "../lib/search/topk.h"
#include "../lib/formats/vecs.h"

typedef struct Collected {
  size_t k;
  uint64_t nq;
  SlemHit *hits;  /* hits(nq, k) */
  size_t *n;
} Collected;

static int collect(void *ctx, uint64_t q, const SlemHit *h, size_t n, SlemError *err) {
  Collected *c = ctx;
  ck_assert_uint_eq(q, c->nq); /* queries arrive in order */
  memcpy(c->hits + q * c->k, h, n * sizeof *h);
  c->n[q] = n;
  c->nq++;
  return SLEM_OK;
}

/* Brute force in double with the documented order: score down, then row up. */
static void brute(uint64_t *rows, size_t *nout, const double *q, const double *db, size_t ndb,
                  size_t d, size_t k, long self, int normalize) {
  double *s = malloc(ndb * sizeof *s);
  char *used = calloc(ndb, 1);
  double qn = 0;
  for (size_t j = 0; j < d; j++) qn += q[j] * q[j];
  qn = normalize ? sqrt(qn) : 1;
  for (size_t i = 0; i < ndb; i++) {
    double v = 0, dn = 0;
    for (size_t j = 0; j < d; j++) v += q[j] * db[i * d + j], dn += db[i * d + j] * db[i * d + j];
    s[i] = v / qn / (normalize ? sqrt(dn) : 1);
  }
  *nout = 0;
  for (size_t r = 0; r < k; r++) {
    long best = -1;
    for (size_t i = 0; i < ndb; i++)
      if (!used[i] && (long)i != self && (best < 0 || s[i] > s[best])) best = (long)i;
    if (best < 0) break;
    used[best] = 1;
    rows[(*nout)++] = (uint64_t)best;
  }
  free(s);
  free(used);
}

static void run_case(size_t nq, size_t ndb, size_t d, size_t k, size_t qblock, size_t dblock,
                     int exclude_self, int normalize, int dup_rows) {
  double *q = malloc(nq * d * sizeof *q), *db = malloc(ndb * d * sizeof *db);
  char *pq = tu_path("q.fvecs"), *pd = tu_path("db.fvecs");
  SlemVecReader *rq = NULL, *rd = NULL;
  SlemMatchOpts o;
  SlemError err;
  Collected c = {k, 0, malloc(nq * k * sizeof(SlemHit)), malloc(nq * sizeof(size_t))};
  SlemMatchStats ms;
  uint64_t *ref = malloc(k * sizeof *ref);
  for (size_t i = 0; i < nq * d; i++) q[i] = tu_gauss();
  for (size_t i = 0; i < ndb * d; i++) db[i] = tu_gauss() * (1 + (double)(i % 3));
  if (dup_rows) /* exact ties: rows 5, 17 and 40 equal row 3 */
    for (size_t j = 0; j < d; j++) db[5 * d + j] = db[17 * d + j] = db[40 * d + j] = db[3 * d + j];
  /* values float32 can hold exactly, so the brute force sees what the tool reads */
  for (size_t i = 0; i < nq * d; i++) q[i] = (float)q[i];
  for (size_t i = 0; i < ndb * d; i++) db[i] = (float)db[i];
  tu_write_fvecs(pq, q, nq, d);
  tu_write_fvecs(pd, db, ndb, d);
  ck_assert_int_eq(slem_vecreader_open(&rq, pq, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_open(&rd, pd, SLEM_FMT_AUTO, &err), SLEM_OK);
  slem_match_opts_init(&o);
  o.k = k;
  o.qblock = qblock;
  o.dblock = dblock;
  o.exclude_self = exclude_self;
  o.normalize = normalize;
  ck_assert_msg(slem_match(rq, rd, &o, collect, &c, &ms, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(ms.nq, nq);
  ck_assert_uint_eq(ms.ndb, ndb);
  ck_assert_uint_eq(c.nq, nq);
  for (size_t i = 0; i < nq; i++) {
    size_t nref;
    brute(ref, &nref, q + i * d, db, ndb, d, k, exclude_self ? (long)i : -1, normalize);
    ck_assert_uint_eq(c.n[i], nref);
    for (size_t r = 0; r < nref; r++) {
      const SlemHit *h = c.hits + i * k + r;
      /* rows agree unless two float32 scores are within rounding of each other */
      if (h->row != ref[r]) {
        double sa = 0, sb = 0;
        for (size_t j = 0; j < d; j++) sa += q[i * d + j] * db[h->row * d + j], sb += q[i * d + j] * db[ref[r] * d + j];
        ck_assert_msg(fabs(sa - sb) < 1e-5 * (fabs(sa) + 1), "query %zu rank %zu: row %llu, expected %llu",
                      i, r + 1, (unsigned long long)h->row, (unsigned long long)ref[r]);
      }
      if (r > 0) ck_assert(h->score <= h[-1].score);
      if (exclude_self) ck_assert_uint_ne(h->row, i);
    }
  }
  if (dup_rows) /* among equal scores the lower row comes first */
    for (size_t i = 0; i < nq; i++)
      for (size_t r = 1; r < c.n[i]; r++) {
        const SlemHit *h = c.hits + i * k + r;
        if (h->score == h[-1].score) ck_assert_uint_lt(h[-1].row, h->row);
      }
  slem_vecreader_free(rq);
  slem_vecreader_free(rd);
  free(q);
  free(db);
  free(pq);
  free(pd);
  free(c.hits);
  free(c.n);
  free(ref);
}

START_TEST(topk_equals_brute_force) {
  tu_seed(31);
  run_case(50, 700, 16, 10, 4096, 1024, 0, 0, 0);   /* one tile */
  run_case(50, 700, 16, 10, 7, 64, 0, 0, 0);        /* many query blocks and tiles */
  run_case(30, 300, 8, 5, 8, 50, 1, 1, 0);          /* exclude self, cosine */
  run_case(20, 60, 4, 100, 6, 16, 0, 0, 0);         /* k beyond the database */
  run_case(20, 60, 4, 60, 6, 16, 1, 0, 0);          /* all but self */
}
END_TEST

START_TEST(ties_go_to_the_lower_row) {
  tu_seed(32);
  run_case(40, 100, 6, 100, 16, 7, 0, 0, 1);
  run_case(40, 100, 6, 100, 16, 7, 0, 1, 1);
}
END_TEST

START_TEST(dimension_mismatch_is_an_error) {
  double a[8] = {0}, b[9] = {0};
  char *pa = tu_path("a.fvecs"), *pb = tu_path("b.fvecs");
  SlemVecReader *ra = NULL, *rb = NULL;
  SlemMatchOpts o;
  SlemError err;
  SlemMatchStats ms;
  tu_write_fvecs(pa, a, 2, 4);
  tu_write_fvecs(pb, b, 3, 3);
  slem_vecreader_open(&ra, pa, SLEM_FMT_AUTO, &err);
  slem_vecreader_open(&rb, pb, SLEM_FMT_AUTO, &err);
  slem_match_opts_init(&o);
  ck_assert_int_eq(slem_match(ra, rb, &o, collect, NULL, &ms, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "dimension 4"));
  ck_assert_ptr_nonnull(strstr(err.msg, "dimension 3"));
  slem_vecreader_free(ra);
  slem_vecreader_free(rb);
  free(pa);
  free(pb);
}
END_TEST

/* The ordering rule by hand: a before b when its score is higher, or equal and its row
 * lower. */
static int ranks_before(const SlemHit *a, const SlemHit *b) {
  if (a->score != b->score) return a->score > b->score;
  return a->row < b->row;
}

START_TEST(topk_keeps_the_best_k_in_order) {
  enum { N = 500 };
  SlemHit all[N], mem[40];
  SlemTopK t, *owned = NULL;
  SlemError err;
  tu_seed(33);
  for (size_t i = 0; i < N; i++) { /* few distinct scores: many exact ties */
    all[i].row = (uint64_t)((i * 7919) % N);
    all[i].score = (float)(tu_next() % 13) - 6.0f;
  }
  ck_assert_int_eq(slem_topk_new(&owned, 40, &err), SLEM_OK);
  slem_topk_init(&t, mem, 40);
  for (size_t i = 0; i < N; i++) {
    slem_topk_push(&t, all[i]);
    slem_topk_push(owned, all[i]);
    if (i < 39) ck_assert_ptr_null(slem_topk_worst(&t));
  }
  ck_assert_ptr_nonnull(slem_topk_worst(&t));
  {
    SlemHit w = *slem_topk_worst(&t);
    size_t n = slem_topk_sorted(&t), n2 = slem_topk_sorted(owned);
    SlemHit ref[N];
    ck_assert_uint_eq(n, 40);
    ck_assert_uint_eq(n2, 40);
    /* reference: selection by the rule written above, independently of slem_topk_hit_cmp */
    memcpy(ref, all, sizeof ref);
    for (size_t r = 0; r < 40; r++) {
      size_t b = r;
      for (size_t i = r + 1; i < N; i++)
        if (ranks_before(&ref[i], &ref[b])) b = i;
      SlemHit x = ref[r];
      ref[r] = ref[b];
      ref[b] = x;
      ck_assert_uint_eq(t.heap[r].row, ref[r].row);
      ck_assert(t.heap[r].score == ref[r].score);
      ck_assert_uint_eq(owned->heap[r].row, ref[r].row);
    }
    ck_assert_uint_eq(w.row, ref[39].row); /* the worst held was the 40th */
  }
  /* a hit that ties the worst score but has a higher row does not enter; a lower row does */
  slem_topk_init(&t, mem, 2);
  ck_assert_int_eq(slem_topk_push(&t, (SlemHit){5, 1.0f}), 1);
  ck_assert_int_eq(slem_topk_push(&t, (SlemHit){9, 1.0f}), 1);
  ck_assert_int_eq(slem_topk_push(&t, (SlemHit){12, 1.0f}), 0);
  ck_assert_int_eq(slem_topk_push(&t, (SlemHit){7, 1.0f}), 1);
  ck_assert_uint_eq(slem_topk_worst(&t)->row, 7);
  ck_assert_uint_eq(slem_topk_sorted(&t), 2);
  ck_assert_uint_eq(mem[0].row, 5);
  ck_assert_uint_eq(mem[1].row, 7);
  /* capacity 0 keeps nothing */
  slem_topk_init(&t, mem, 0);
  ck_assert_int_eq(slem_topk_push(&t, (SlemHit){1, 3.0f}), 0);
  ck_assert_uint_eq(slem_topk_sorted(&t), 0);
  slem_topk_free(owned);
  slem_topk_free(NULL);
}
END_TEST

START_TEST(hit_cmp_is_the_rule) {
  SlemHit a = {3, 2.0f}, b = {1, 2.0f}, c = {0, 1.5f};
  ck_assert_int_gt(slem_topk_hit_cmp(&a, &b), 0); /* equal scores: lower row first */
  ck_assert_int_lt(slem_topk_hit_cmp(&b, &a), 0);
  ck_assert_int_lt(slem_topk_hit_cmp(&a, &c), 0); /* higher score first, whatever the row */
  ck_assert_int_gt(slem_topk_hit_cmp(&c, &a), 0);
  ck_assert_int_eq(slem_topk_hit_cmp(&a, &a), 0);
  ck_assert(slem_topk_hit_before(&b, &a) && !slem_topk_hit_before(&a, &b) && !slem_topk_hit_before(&a, &a));
}
END_TEST

/* The inner-product scorer against the plain sum: scores(nq, nd) of a block of queries
 * against two tiles, float32 tiles, cosine with normalize. */
START_TEST(ip_scorer_scores_a_tile) {
  enum { NQ = 5, ND = 9, D = 6 };
  double q[NQ * D], x[ND * D];
  float rows[ND * D], scores[NQ * ND];
  char *pq = tu_path("sq.fvecs");
  SlemVecReader *rq = NULL;
  SlemScorer *sc = NULL;
  SlemError err;
  size_t got;
  tu_seed(34);
  for (size_t i = 0; i < NQ * D; i++) q[i] = (float)tu_gauss();
  for (size_t i = 0; i < ND * D; i++) x[i] = (float)tu_gauss();
  tu_write_fvecs(pq, q, NQ, D);
  for (int normalize = 0; normalize <= 1; normalize++) {
    ck_assert_int_eq(slem_vecreader_open(&rq, pq, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_scorer_ip_new(&sc, D, normalize, 3, ND, &err), SLEM_OK);
    ck_assert_int_eq(slem_scorer_f32(sc), 1);
    for (size_t q0 = 0;; q0 += got) {
      ck_assert_int_eq(slem_scorer_queries(sc, rq, &got, &err), SLEM_OK);
      if (got == 0) break;
      ck_assert_uint_eq(got, q0 == 3 ? 2 : 3);
      ck_assert_uint_eq(slem_scorer_nq(sc), got);
      for (size_t i = 0; i < ND * D; i++) rows[i] = (float)x[i];
      ck_assert_int_eq(slem_scorer_tile(sc, scores, rows, ND, "x", 1, &err), SLEM_OK);
      for (size_t i = 0; i < got; i++)
        for (size_t j = 0; j < ND; j++) {
          double s = 0, nq = 0, nx = 0;
          for (size_t l = 0; l < D; l++) {
            s += q[(q0 + i) * D + l] * x[j * D + l];
            nq += q[(q0 + i) * D + l] * q[(q0 + i) * D + l];
            nx += x[j * D + l] * x[j * D + l];
          }
          if (normalize) s /= sqrt(nq * nx);
          ck_assert_msg(fabs(scores[i * ND + j] - s) < 1e-5 * (1 + fabs(s)), "%g vs %g",
                        scores[i * ND + j], s);
        }
    }
    ck_assert_uint_eq(slem_scorer_clamps(sc), 0);
    slem_scorer_free(sc);
    slem_vecreader_free(rq);
  }
  slem_scorer_free(NULL);
  free(pq);
}
END_TEST

START_TEST(shard_ranges_cover_the_rows) {
  SlemShard s;
  SlemError err;
  uint64_t lo, hi;
  const uint64_t rows[] = {0, 1, 2, 7, 1000, 1080, 12345678901ull};
  ck_assert_int_eq(slem_shard_parse(&s, "2/7", &err), SLEM_OK);
  ck_assert_uint_eq(s.index, 2);
  ck_assert_uint_eq(s.count, 7);
  ck_assert_int_eq(slem_shard_parse(&s, "7/7", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "I must be below N"));
  ck_assert_int_eq(slem_shard_parse(&s, "0/0", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_shard_parse(&s, "-1/3", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_shard_parse(&s, "1/3x", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_shard_parse(&s, "1 /3", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_shard_parse(&s, "/3", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_shard_parse(&s, "99999999999999999999/3", &err), SLEM_EINVAL);
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
    for (uint64_t n = 1; n <= 9; n++) {
      uint64_t next = 0;
      for (uint64_t i = 0; i < n; i++) {
        SlemShard t = {i, n};
        slem_shard_range(&t, rows[r], &lo, &hi);
        ck_assert_uint_eq(lo, next);             /* contiguous, in order */
        ck_assert_uint_ge(hi, lo);
        ck_assert_uint_le(hi - lo, rows[r] / n + 1); /* sizes differ by one at most */
        ck_assert_uint_ge(hi - lo, rows[r] / n);
        ck_assert_uint_eq(lo, (uint64_t)((unsigned __int128)i * rows[r] / n));
        next = hi;
      }
      ck_assert_uint_eq(next, rows[r]); /* every row once */
    }
  s.count = 0; /* no sharding: everything */
  slem_shard_range(&s, 55, &lo, &hi);
  ck_assert_uint_eq(lo, 0);
  ck_assert_uint_eq(hi, 55);
}
END_TEST

/* Same rows and bit-identical scores (SlemHit has padding: compare fields). */
static void same_hits(const SlemHit *a, const SlemHit *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ck_assert_uint_eq(a[i].row, b[i].row);
    ck_assert_mem_eq(&a[i].score, &b[i].score, sizeof(float));
  }
}

/* Runs slem_match_db over files[0..nf-1] (shard s) and collects into c. */
static void match_files(Collected *c, const char *qpath, const char *const *files, size_t nf,
                        SlemShard s, const SlemMatchOpts *o) {
  SlemVecReader *rq = NULL;
  SlemDb *db = NULL;
  SlemError err;
  SlemMatchStats ms;
  c->nq = 0;
  ck_assert_int_eq(slem_vecreader_open(&rq, qpath, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_msg(slem_db_open(&db, files, NULL, nf, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_db_select(db, &s, &err), SLEM_OK);
  ck_assert_msg(slem_match_db(rq, db, o, collect, c, &ms, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_le(ms.rescored, ms.pairs);
  slem_db_free(db);
  slem_vecreader_free(rq);
}

/* Exact scores: the same hits, bit for bit, whatever the blocks, tiles and files; the
 * scores are the double inner products (or cosines) rounded to float, computed here by a
 * plain loop; duplicates score alike, the lower row first. */
START_TEST(scores_are_exact_and_independent_of_the_cut) {
  enum { NQ = 23, ND = 300, D = 37, K = 15 };
  double *q = malloc(NQ * D * sizeof *q), *x = malloc(ND * D * sizeof *x);
  char *pq = tu_path("eq.fvecs"), *pd = tu_path("ed.fvecs"), *p0 = tu_path("ed0.fvecs"),
       *p1 = tu_path("ed1.fvecs"), *p2 = tu_path("ed2.fvecs");
  const char *one[1] = {pd}, *three[3] = {p0, p1, p2};
  Collected ref = {K, 0, malloc(NQ * K * sizeof(SlemHit)), malloc(NQ * sizeof(size_t))};
  Collected got = {K, 0, malloc(NQ * K * sizeof(SlemHit)), malloc(NQ * sizeof(size_t))};
  SlemHit *merged = malloc(3 * K * sizeof *merged);
  SlemMatchOpts o;
  tu_seed(35);
  for (size_t i = 0; i < NQ * D; i++) q[i] = (float)tu_gauss();
  for (size_t i = 0; i < ND * D; i++) x[i] = (float)(tu_gauss() * 1e-3);
  for (size_t r = 0; r < 40; r++) /* rows 200-239 copy rows 0-39; query 5 is row 3 */
    memcpy(x + (200 + r) * D, x + r * D, D * sizeof *x);
  memcpy(q + 5 * D, x + 3 * D, D * sizeof *x);
  tu_write_fvecs(pq, q, NQ, D);
  tu_write_fvecs(pd, x, ND, D);
  tu_write_fvecs(p0, x, 100, D);
  tu_write_fvecs(p1, x + 100 * D, 150, D);
  tu_write_fvecs(p2, x + 250 * D, 50, D);
  for (int normalize = 0; normalize <= 1; normalize++) {
    slem_match_opts_init(&o);
    o.k = K;
    o.normalize = normalize;
    match_files(&ref, pq, one, 1, (SlemShard){0, 0}, &o);
    for (size_t i = 0; i < NQ; i++) { /* against a plain double loop */
      double s[ND];
      ck_assert_uint_eq(ref.n[i], K);
      for (size_t j = 0; j < ND; j++) {
        double dot = 0, nq = 0, nx = 0;
        for (size_t l = 0; l < D; l++) {
          dot += q[i * D + l] * x[j * D + l];
          nq += q[i * D + l] * q[i * D + l];
          nx += x[j * D + l] * x[j * D + l];
        }
        s[j] = (float)(normalize ? dot / (sqrt(nq) * sqrt(nx)) : dot);
      }
      for (size_t r = 0; r < K; r++) {
        const SlemHit *h = ref.hits + i * K + r;
        size_t better = 0;
        ck_assert_msg(h->score == (float)s[h->row], "query %zu row %llu: %.9g, expected %.9g", i,
                      (unsigned long long)h->row, h->score, s[h->row]);
        for (size_t j = 0; j < ND; j++) /* rows ranking before it, by the rule */
          better += s[j] > s[h->row] || (s[j] == s[h->row] && j < h->row);
        ck_assert_uint_eq(better, r);
      }
    }
    if (normalize) /* a vector with itself: cosine 1 exactly */
      ck_assert(ref.hits[5 * K].score == 1.0f && ref.hits[5 * K].row == 3 &&
                ref.hits[5 * K + 1].score == 1.0f && ref.hits[5 * K + 1].row == 203);
    for (size_t qb = 1; qb <= 64; qb *= 4)
      for (size_t tb = 1; tb <= 512; tb *= 8) {
        o.qblock = qb;
        o.dblock = tb;
        match_files(&got, pq, tb == 8 ? three : one, tb == 8 ? 3 : 1, (SlemShard){0, 0}, &o);
        ck_assert_mem_eq(got.n, ref.n, NQ * sizeof(size_t));
        same_hits(got.hits, ref.hits, NQ * K);
      }
    /* three shards merged by the rule give the whole */
    {
      Collected sh[3];
      for (int s = 0; s < 3; s++) {
        sh[s] = (Collected){K, 0, malloc(NQ * K * sizeof(SlemHit)), malloc(NQ * sizeof(size_t))};
        o.qblock = 7;
        o.dblock = 33;
        match_files(&sh[s], pq, three, 3, (SlemShard){(uint64_t)s, 3}, &o);
      }
      for (size_t i = 0; i < NQ; i++) {
        size_t m = 0;
        for (int s = 0; s < 3; s++)
          for (size_t r = 0; r < sh[s].n[i]; r++) {
            SlemHit h = sh[s].hits[i * K + r];
            ck_assert_uint_ge(h.row, (uint64_t)s * ND / 3);
            ck_assert_uint_lt(h.row, (uint64_t)(s + 1) * ND / 3);
            merged[m++] = h;
          }
        qsort(merged, m, sizeof *merged, slem_topk_hit_cmp);
        same_hits(merged, ref.hits + i * K, K);
      }
      for (int s = 0; s < 3; s++) {
        free(sh[s].hits);
        free(sh[s].n);
      }
    }
  }
  free(q);
  free(x);
  free(pq);
  free(pd);
  free(p0);
  free(p1);
  free(p2);
  free(ref.hits);
  free(ref.n);
  free(got.hits);
  free(got.n);
  free(merged);
}
END_TEST

/* The lower bounds that prune a tile (match.c: the k-th largest kept by a selection) on
 * small whole numbers, where many rows tie exactly and so do their bounds: every k from 1
 * to beyond the rows, tiles of 1 to 3 rows and of 7 (fewer rows than k), with and without
 * the query's own row, on 1 and 3 threads. The scores are exact in double, so the rows
 * must be the brute force's, equal scores by the lower row. */
START_TEST(lower_bounds_with_exact_ties) {
  enum { NQ = 6, ND = 24, D = 3 };
  double q[NQ * D], x[ND * D];
  char *pq = tu_path("tq.fvecs"), *pd = tu_path("tx.fvecs");
  Collected c = {ND + 1, 0, malloc(NQ * (ND + 1) * sizeof(SlemHit)), malloc(NQ * sizeof(size_t))};
  uint64_t ref[ND + 1];
  const size_t tiles[] = {1, 2, 3, 7};
  const int ts[] = {1, 3};
  int threads = slem_blas_threads();
  tu_seed(36);
  for (size_t i = 0; i < ND * D; i++) x[i] = floor(tu_uniform() * 3) - 1;
  for (size_t j = 0; j < D; j++) x[9 * D + j] = x[2 * D + j] = x[0 * D + j]; /* copies */
  memcpy(q, x, sizeof q); /* the queries are the first rows, for --exclude-self */
  tu_write_fvecs(pq, q, NQ, D);
  tu_write_fvecs(pd, x, ND, D);
  for (size_t t = 0; t < sizeof ts / sizeof *ts; t++) {
    slem_blas_set_threads(ts[t]);
    for (size_t k = 1; k <= ND + 1; k++)
      for (size_t b = 0; b < sizeof tiles / sizeof *tiles; b++)
        for (int self = 0; self <= 1; self++) {
          const char *one[1] = {pd};
          SlemMatchOpts o;
          slem_match_opts_init(&o);
          o.k = k;
          o.dblock = tiles[b];
          o.qblock = 4;
          o.exclude_self = self;
          c.k = k;
          match_files(&c, pq, one, 1, (SlemShard){0, 0}, &o);
          for (size_t i = 0; i < NQ; i++) {
            size_t nref;
            brute(ref, &nref, q + i * D, x, ND, D, k, self ? (long)i : -1, 0);
            ck_assert_uint_eq(c.n[i], nref);
            for (size_t r = 0; r < nref; r++)
              ck_assert_msg(c.hits[i * k + r].row == ref[r], "-t %d -k %zu tiles of %zu%s: "
                            "query %zu rank %zu: row %llu, expected %llu", ts[t], k, tiles[b],
                            self ? " --exclude-self" : "", i, r + 1,
                            (unsigned long long)c.hits[i * k + r].row, (unsigned long long)ref[r]);
          }
        }
  }
  slem_blas_set_threads(threads);
  free(pq);
  free(pd);
  free(c.hits);
  free(c.n);
}
END_TEST

/* slem_blas_par_units: every row in exactly one call, cut at multiples of the unit from
 * row 0 whatever the thread count, on workers numbered below slem_blas_par_workers(). */
typedef struct UnitsSeen {
  int *hits;          /* calls that covered each row */
  size_t n, unit, workers;
  int bad;            /* a call cut elsewhere, or a worker out of range */
  pthread_mutex_t mu;
} UnitsSeen;

static void count_unit(void *ctx, size_t worker, size_t lo, size_t hi) {
  UnitsSeen *u = ctx;
  pthread_mutex_lock(&u->mu);
  if (worker >= u->workers || lo % u->unit != 0 || hi <= lo ||
      hi != (lo + u->unit < u->n ? lo + u->unit : u->n))
    u->bad = 1;
  for (size_t i = lo; i < hi && i < u->n; i++) u->hits[i]++;
  pthread_mutex_unlock(&u->mu);
}

START_TEST(par_units_cover_each_row_once) {
  static const int ts[] = {1, 2, 3, 5};
  static const size_t ns[] = {0, 1, 7, 1000, 1001};
  int threads = slem_blas_threads();
  for (size_t t = 0; t < sizeof ts / sizeof *ts; t++) {
    slem_blas_set_threads(ts[t]);
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
      UnitsSeen u = {calloc(ns[k] + 1, sizeof(int)), ns[k], 7, slem_blas_par_workers(), 0,
                     PTHREAD_MUTEX_INITIALIZER};
      ck_assert_ptr_nonnull(u.hits);
      slem_blas_par_units(u.n, u.unit, count_unit, &u);
      ck_assert_msg(!u.bad, "-t %d, n %zu: a unit cut elsewhere or a worker out of range", ts[t],
                    u.n);
      for (size_t i = 0; i < u.n; i++)
        ck_assert_msg(u.hits[i] == 1, "-t %d: row %zu covered %d times", ts[t], i, u.hits[i]);
      ck_assert_int_eq(slem_blas_threads(), ts[t]); /* the BLAS's count given back */
      free(u.hits);
    }
  }
  slem_blas_set_threads(threads);
}
END_TEST

/* slem_blas_pool_begin(): units of two callers at once, each covered once on workers in
 * range; a unit's own units run in place; the thread count told and given back. */
typedef struct PoolCaller {
  UnitsSeen u;
  int rounds;
} PoolCaller;

static void *pool_caller(void *arg) {
  PoolCaller *c = arg;
  for (int r = 0; r < c->rounds; r++) slem_blas_par_units(c->u.n, c->u.unit, count_unit, &c->u);
  return NULL;
}

static void nested_unit(void *ctx, size_t worker, size_t lo, size_t hi) {
  UnitsSeen *outer = ctx, inner = {calloc(hi - lo + 1, sizeof(int)), hi - lo, 2,
                                   slem_blas_par_workers(), 0, PTHREAD_MUTEX_INITIALIZER};
  int ok = inner.hits != NULL;
  if (ok) slem_blas_par_units(inner.n, inner.unit, count_unit, &inner);
  for (size_t i = 0; ok && i < inner.n; i++) ok = inner.hits[i] == 1;
  if (!ok || inner.bad) outer->bad = 1;
  free(inner.hits);
  count_unit(ctx, worker, lo, hi);
}

extern int openblas_get_num_threads(void);

START_TEST(pool_runs_units_of_two_callers) {
  int threads = slem_blas_threads();
  slem_blas_set_threads(1);
  ck_assert_int_eq(slem_blas_pool_begin(), 0); /* one worker: no pool */
  slem_blas_set_threads(3);
  ck_assert_int_eq(slem_blas_pool_begin(), 1);
  ck_assert_int_eq(slem_blas_threads(), 3);
  ck_assert_int_eq(slem_blas_pool_begin(), 0); /* one at a time */
  {
    PoolCaller c[2];
    pthread_t tid;
    for (int i = 0; i < 2; i++) {
      c[i] = (PoolCaller){{calloc(1001 + 1, sizeof(int)), 1001, 7 + 4 * (size_t)i,
                           slem_blas_par_workers(), 0, PTHREAD_MUTEX_INITIALIZER}, 20};
      ck_assert_ptr_nonnull(c[i].u.hits);
    }
    ck_assert_int_eq(pthread_create(&tid, NULL, pool_caller, &c[1]), 0);
    pool_caller(&c[0]);
    pthread_join(tid, NULL);
    for (int i = 0; i < 2; i++) {
      ck_assert_msg(!c[i].u.bad, "caller %d: a unit cut elsewhere or a worker out of range", i);
      for (size_t r = 0; r < c[i].u.n; r++)
        ck_assert_msg(c[i].u.hits[r] == 20, "caller %d: row %zu covered %d times in 20 calls", i,
                      r, c[i].u.hits[r]);
      free(c[i].u.hits);
    }
  }
  {
    UnitsSeen u = {calloc(101, sizeof(int)), 100, 9, slem_blas_par_workers(), 0,
                   PTHREAD_MUTEX_INITIALIZER};
    ck_assert_ptr_nonnull(u.hits);
    slem_blas_par_units(u.n, u.unit, nested_unit, &u);
    ck_assert_msg(!u.bad, "a unit's own units not each covered once");
    for (size_t r = 0; r < u.n; r++) ck_assert_int_eq(u.hits[r], 1);
    free(u.hits);
  }
  /* a count set while the pool runs is told and restored at its end; the BLAS stays on
   * one thread meanwhile (code that saves the count, sets 1 and restores it) */
  slem_blas_set_threads(1);
  ck_assert_int_eq(slem_blas_threads(), 1);
  slem_blas_set_threads(3);
  ck_assert_int_eq(slem_blas_threads(), 3);
  ck_assert_int_eq(openblas_get_num_threads(), 1);
  slem_blas_pool_end();
  ck_assert_int_eq(slem_blas_threads(), 3); /* OpenBLAS's own count again */
  ck_assert_int_eq(openblas_get_num_threads(), 3);
  slem_blas_pool_end();                     /* a second end does nothing */
  slem_blas_set_threads(threads);
}
END_TEST

/* A sink that formats each query as "query:row,row,...;" and fails at one query: the text
 * written through format and write is that of emit, query by query, in order. */
typedef struct TextSink {
  SlemTextBuf out;   /* what write (or emit) wrote */
  uint64_t fail_at;  /* the query whose formatting fails (UINT64_MAX: none) */
} TextSink;

static int put_query(TextSink *ts, SlemTextBuf *buf, uint64_t q, const SlemHit *h, size_t n,
                     SlemError *err) {
  char line[64];
  if (q == ts->fail_at) return slem_error(err, SLEM_EFORMAT, "query %llu fails", (unsigned long long)q);
  snprintf(line, sizeof line, "%llu:", (unsigned long long)q);
  ck_assert_int_eq(slem_textbuf_put(buf, line, strlen(line)), 0);
  for (size_t i = 0; i < n; i++) {
    snprintf(line, sizeof line, "%llu,", (unsigned long long)h[i].row);
    ck_assert_int_eq(slem_textbuf_put(buf, line, strlen(line)), 0);
  }
  ck_assert_int_eq(slem_textbuf_put(buf, ";", 1), 0);
  return SLEM_OK;
}

static int text_emit(void *ctx, uint64_t q, const SlemHit *h, size_t n, SlemError *err) {
  TextSink *ts = ctx;
  return put_query(ts, &ts->out, q, h, n, err);
}

static int text_format(void *ctx, const SlemHitsBlock *b, size_t lo, size_t hi, SlemTextBuf *buf,
                       SlemError *err) {
  ck_assert_uint_le(hi, b->nq);
  for (size_t i = lo; i < hi; i++) {
    int st = put_query(ctx, buf, b->q0 + i, b->hits + i * b->stride, b->n[i], err);
    if (st) return st;
  }
  return SLEM_OK;
}

static int text_write(void *ctx, const char *text, size_t len, SlemError *err) {
  TextSink *ts = ctx;
  (void)err;
  ck_assert_int_eq(slem_textbuf_put(&ts->out, text, len), 0);
  return SLEM_OK;
}

/* The rankings formatted on the threads in units (slem_match_db_sink() with format) are
 * those of emit, byte for byte, past several blocks of queries and at -t 1/2/3/5; a
 * format error is returned after the text of the queries before it, as emit's. */
START_TEST(sink_format_is_emit) {
  enum { NQ = 1000, ND = 300, D = 8, K = 10 };
  static const int ts[] = {1, 2, 3, 5};
  static const uint64_t fails[] = {UINT64_MAX, 0, 137, 999};
  double *q = malloc(NQ * D * sizeof *q), *x = malloc(ND * D * sizeof *x);
  char *pq = tu_path("sq.fvecs"), *pd = tu_path("sd.fvecs");
  int threads = slem_blas_threads();
  for (size_t i = 0; i < NQ * D; i++) q[i] = (float)tu_gauss();
  for (size_t i = 0; i < ND * D; i++) x[i] = (float)tu_gauss();
  tu_write_fvecs(pq, q, NQ, D);
  tu_write_fvecs(pd, x, ND, D);
  for (size_t f = 0; f < sizeof fails / sizeof *fails; f++)
    for (size_t t = 0; t < sizeof ts / sizeof *ts; t++) {
      TextSink a = {{NULL, 0, 0}, fails[f]}, b = {{NULL, 0, 0}, fails[f]};
      SlemHitsSink emit_only = {text_emit, NULL, NULL, &a}, fmt = {text_emit, text_format,
                                                                 text_write, &b};
      SlemError ea = {0}, eb = {0};
      int sa, sb;
      for (int pass = 0; pass < 2; pass++) {
        SlemVecReader *rq = NULL, *rd = NULL;
        SlemDb *db = NULL;
        SlemMatchOpts o;
        SlemMatchStats ms;
        slem_blas_set_threads(ts[t]);
        slem_match_opts_init(&o);
        o.k = K;
        o.qblock = 300; /* four blocks, the last of 100 */
        ck_assert_int_eq(slem_vecreader_open(&rq, pq, SLEM_FMT_AUTO, &ea), SLEM_OK);
        ck_assert_int_eq(slem_vecreader_open(&rd, pd, SLEM_FMT_AUTO, &ea), SLEM_OK);
        ck_assert_int_eq(slem_db_wrap(&db, rd, &ea), SLEM_OK);
        if (pass == 0) sa = slem_match_db_sink(rq, db, &o, &emit_only, &ms, &ea);
        else sb = slem_match_db_sink(rq, db, &o, &fmt, &ms, &eb);
        slem_db_free(db);
        slem_vecreader_free(rq);
        slem_vecreader_free(rd);
      }
      ck_assert_int_eq(sa, fails[f] == UINT64_MAX ? SLEM_OK : SLEM_EFORMAT);
      ck_assert_int_eq(sb, sa);
      if (sa) ck_assert_str_eq(eb.msg, ea.msg);
      ck_assert_msg(a.out.len > 0 || fails[f] == 0, "-t %d: nothing written", ts[t]);
      ck_assert_msg(a.out.len == b.out.len &&
                        (a.out.len == 0 || memcmp(a.out.text, b.out.text, a.out.len) == 0),
                    "-t %d, failing at %llu: the formatted text differs from emit's (%zu and "
                    "%zu bytes)", ts[t], (unsigned long long)fails[f], b.out.len, a.out.len);
      slem_textbuf_free(&a.out);
      slem_textbuf_free(&b.out);
    }
  slem_blas_set_threads(threads);
  free(q);
  free(x);
  free(pq);
  free(pd);
}
END_TEST

/* SLEM_MATCH_MEMORY as a user writes it, and what is refused rather than misread. */
START_TEST(bytes_parse_as_written) {
  static const struct { const char *s; size_t v; } good[] = {
      {"0", 0}, {"1000", 1000}, {"4K", 4096}, {"4k", 4096}, {"512M", (size_t)512 << 20},
      {"4G", (size_t)4 << 30}, {"4GiB", (size_t)4 << 30}, {"4gb", (size_t)4 << 30},
      {"2T", (size_t)2 << 40}, {"100B", 100}, {"18446744073709551615", (size_t)-1},
      {"16777215T", (size_t)16777215 << 40}};
  static const char *bad[] = {"", "garbage", "-5", "+5", " 4G", "4G ", "4.5G", "4Gi", "4P",
                              "18446744073709551616", "99999999999999999999", "16777216T",
                              "4KK", "0x10"};
  size_t v;
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    v = 12345;
    ck_assert_msg(slem_mem_parse_bytes(good[i].s, &v) == 0, "'%s' refused", good[i].s);
    ck_assert_msg(v == good[i].v, "'%s' read as %zu", good[i].s, v);
  }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    v = 12345;
    ck_assert_msg(slem_mem_parse_bytes(bad[i], &v) == -1, "'%s' accepted", bad[i]);
    ck_assert_msg(v == 12345, "'%s' changed the output", bad[i]);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("match");
  TCase *tc = tcase_create("match");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, topk_equals_brute_force);
  tcase_add_test(tc, ties_go_to_the_lower_row);
  tcase_add_test(tc, lower_bounds_with_exact_ties);
  tcase_add_test(tc, dimension_mismatch_is_an_error);
  tcase_add_test(tc, topk_keeps_the_best_k_in_order);
  tcase_add_test(tc, hit_cmp_is_the_rule);
  tcase_add_test(tc, ip_scorer_scores_a_tile);
  tcase_add_test(tc, shard_ranges_cover_the_rows);
  tcase_add_test(tc, scores_are_exact_and_independent_of_the_cut);
  tcase_add_test(tc, bytes_parse_as_written);
  tcase_add_test(tc, par_units_cover_each_row_once);
  tcase_add_test(tc, pool_runs_units_of_two_callers);
  tcase_add_test(tc, sink_format_is_emit);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

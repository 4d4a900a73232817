#define _POSIX_C_SOURCE 200809L
#include "match.h"

#include "kproj.h"
#include "scorer_kernel.h"
#include "mem.h"
#include "prefetch.h"
#include "phases.h"
#include "scorer.h"
#include "blas.h"
#include "libslem.h"
#include "tilecache.h"
#include "var_kernel.h"
#include "writeback.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

int slem_match_rules(int kernel, int couple, int normalize, int affine, SlemError *err) {
  if (couple && !kernel)
    return slem_error(err, SLEM_EINVAL, "--couple goes with a kernel cache: give -c CACHE");
  if (kernel && normalize)
    return slem_error(err, SLEM_EINVAL, "--normalize does not go with a kernel cache: its "
                      "similarity is normalised");
  if (affine && (kernel || normalize))
    return slem_error(err, SLEM_EINVAL, "classifier queries (--affine, --calibration) go with "
                      "neither -c nor --normalize");
  return SLEM_OK;
}

void slem_match_opts_init(SlemMatchOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->k = 100;
  opts->qblock = 2048;
  opts->dblock = 0; /* slem_block_rows(d) */
  opts->memory = SLEM_MEMORY_AUTO;
}

/* Bounds in float that keep their direction: lo(x) <= x <= up(x), so that float(e) of an
 * exact score e with lo <= e <= up lies in [lo(x), up(x)] too (rounding is monotone). */
static float round_down(double x) {
  float f = (float)x;
  return (double)f > x ? nextafterf(f, -INFINITY) : f;
}
static float round_up(double x) {
  float f = (float)x;
  return (double)f < x ? nextafterf(f, INFINITY) : f;
}

/* Four float32 of GCC's (and clang's) vector extension, compared element by element:
 * one SSE register (plain x86-64), one NEON register. */
typedef float F4 __attribute__((vector_size(16)));
typedef int I4 __attribute__((vector_size(16)));

/* The first j >= from (nd when none) whose fast score s[j] is not below tf or is -Inf,
 * eight scores at a time: most scores of a tile are below the threshold. For a float s and
 * tf = round_up(thr), s < tf exactly when s < thr (no float lies in [thr, tf)), so this
 * finds the row the scalar test (s[j] < thr && s[j] != -Inf: skipped) finds; NaN is never
 * below. */
static size_t next_candidate(const float *s, size_t from, size_t nd, float tf) {
  size_t j = from;
  const F4 t = {tf, tf, tf, tf}, ninf = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (; j + 8 <= nd; j += 8) {
    F4 v, w;
    I4 keep;
    uint64_t lanes[2];
    memcpy(&v, s + j, sizeof v);
    memcpy(&w, s + j + 4, sizeof w);
    keep = ~(((v < t) & (v > ninf)) & ((w < t) & (w > ninf)));
    memcpy(lanes, &keep, sizeof lanes);
    if (lanes[0] | lanes[1]) break;
  }
  for (; j < nd; j++)
    if (!(s[j] < tf && s[j] != -INFINITY)) break;
  return j;
}

/* The k largest lower bounds of a query's exact scores so far, the tiles' before this one
 * included: v[0..n) (room for 2k), unordered; a new bound is appended, and low_keep()
 * keeps the k largest once there are 2k (or at the end of a tile). Only the k-th largest
 * value matters (the threshold below): it is the same whatever the order of the bounds, a
 * bound not above the k-th largest kept cannot change it (most candidates' are not: they
 * lie within the slack below it), and appending costs less than a heap push. */
typedef struct LowK {
  float *v;
  size_t n;
  float kth; /* the k-th largest as low_keep() last found it (-Inf: fewer than k) */
} LowK;

static int float_desc(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x < y) - (x > y);
}

/* The k-th largest of v[0..n), n > k, moved to v[k - 1], with the larger ones before it and
 * the smaller after (Hoare's selection; no value is NaN). Past 2 log2(n) + 8 rounds (values
 * laid out against the median of three) the rest is sorted: O(n log n) at worst. */
static void kth_largest(float *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1, want = k - 1, rounds = 8;
  for (size_t m = n; m > 1; m >>= 1) rounds += 2;
  while (lo < hi) {
    if (rounds-- == 0) {
      qsort(v + lo, hi - lo + 1, sizeof *v, float_desc);
      return;
    }
    size_t i = lo, j = hi, mid = lo + (hi - lo) / 2;
    float a = v[lo], b = v[mid], c = v[hi], pivot;
    /* the median of three */
    pivot = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    while (i <= j) {
      while (v[i] > pivot) i++;
      while (v[j] < pivot) j--;
      if (i <= j) {
        float t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break; /* between j and i: equal to the pivot */
  }
}

/* Keeps the k largest bounds; returns the k-th largest (kept in low->kth), or -Inf while
 * there are fewer than k. */
static float low_keep(LowK *low, size_t k) {
  float m;
  if (low->n < k) return low->kth = -INFINITY;
  if (low->n > k) {
    kth_largest(low->v, low->n, k);
    low->n = k;
    return low->kth = low->v[k - 1];
  }
  m = low->v[0];
  for (size_t j = 1; j < k; j++) m = low->v[j] < m ? low->v[j] : m;
  return low->kth = m;
}

/* The fast scores below which a row cannot enter the top k: with lk the k-th largest
 * lower bound held, a row whose upper bound up(s + slack) is below lk has, rounded to
 * float, an exact score strictly below that of k other rows. s < thr implies it. */
static double threshold(float lk, double slack) {
  return lk > -INFINITY ? (double)nextafterf(lk, -INFINITY) - slack : -INFINITY;
}

int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err) {
  SlemDb *set = NULL;
  int st = slem_db_wrap(&set, db, err);
  if (st) {
    memset(stats, 0, sizeof *stats);
    return st;
  }
  st = slem_match_db(queries, set, opts, emit, ctx, stats, err);
  slem_db_free(set);
  return st;
}

struct Cand {
  size_t j;
  float up;
};

/* The workers of the selection at most (slem_blas_par_workers()). */
#define TILE_WORKERS 64

/* Queries per unit of a tile's selection, from the data alone (the block's nq queries and
 * base, the default tile rows of d), never from the thread count: about 2^16 (query, row)
 * pairs, and at least 64 units when the block has 64 queries, so that there are many more
 * units than threads (128 at the default block of 2 048 queries with tiles of 4 096 rows).
 * Each query's selection depends on that query and the tile only: the unit changes nothing
 * but the time. */
static size_t select_unit(size_t base, size_t nq) {
  size_t u = ((size_t)1 << 16) / (base ? base : 1), few = (nq + 63) / 64;
  if (u > 64) u = 64;
  if (u > few) u = few;
  return u < 1 ? 1 : u;
}

size_t slem_match_tile_rows(size_t d, int threads) {
  size_t rows = slem_block_rows((d + 1) / 2);
  return threads > 4 ? 2 * rows : rows;
}

/* One tile's selection for queries [lo, hi) of a unit: each query's numbers depend on that
 * query and the tile alone, so that the threads sharing the units change nothing but the
 * time. Per worker: its candidates' scratch, its count of re-scored pairs and the error of
 * the first unit that had one among those it ran (units run in increasing order). */
typedef struct TileJob {
  SlemScorer *sc;
  const SlemMatchOpts *opts;
  const float *scores;
  SlemTopK *tops;
  LowK *lows;
  struct Cand *cand;  /* a row of tile candidates per worker */
  size_t nd;
  SlemBlockPos pos;
  uint64_t q0;
  const char *qname;
  size_t unit;
  atomic_size_t fail_unit; /* the lowest unit that failed so far (SIZE_MAX: none) */
  uint64_t rescored[TILE_WORKERS];
  int status[TILE_WORKERS];
  size_t err_unit[TILE_WORKERS];
  SlemError err[TILE_WORKERS];
} TileJob;

/* A unit's error, kept when it is its worker's first; later units need not run (every unit
 * below it still does, so the error kept in the end is that of the first query that has
 * one, whatever the threads). */
static void unit_failed(TileJob *jb, size_t u) {
  size_t cur = atomic_load(&jb->fail_unit);
  while (u < cur && !atomic_compare_exchange_weak(&jb->fail_unit, &cur, u)) {
  }
}

static void tile_queries(void *ctx, size_t worker, size_t qlo, size_t qhi) {
  TileJob *jb = ctx;
  size_t nd = jb->nd, u = qlo / jb->unit;
  struct Cand *cand = jb->cand + worker * nd;
  const SlemBlockPos *pos = &jb->pos;
  if (u > atomic_load(&jb->fail_unit)) return; /* an earlier unit failed */
  /* Per query: the rows of the tile that may enter its top k, from their fast scores
   * s and the slack (lo(s - slack) <= exact <= up(s + slack)), while the k-th best
   * lower bound rises; then those whose upper bound still reaches it are re-scored
   * exactly and offered to the top k. A row of the exact top k is never dropped: k
   * rows beating it would need lower bounds above its upper bound. */
  for (size_t i = qlo; i < qhi; i++) {
    const float *s = jb->scores + i * nd;
    SlemTopK *t = &jb->tops[i];
    LowK *low = &jb->lows[i];
    size_t k = t->k;
    uint64_t self_row = jb->q0 + i;
    float lk = low->kth; /* kept at the end of the tile before: no bound came since */
    double slack = slem_scorer_slack(jb->sc, i), thr = threshold(lk, slack);
    float tf = round_up(thr);
    size_t nc = 0;
    for (size_t j = 0; (j = next_candidate(s, j, nd, tf)) < nd; j++) {
      /* the common case, skipped above: not good enough (NaN and -Inf, from an overflow,
       * fall through) */
      if (jb->opts->exclude_self && pos->row + j == self_row) continue;
      if (isfinite(s[j])) {
        float lb = round_down((double)s[j] - slack);
        cand[nc++] = (struct Cand){j, round_up((double)s[j] + slack)};
        if (lb <= lk) continue; /* not above the k-th held: it changes nothing */
        low->v[low->n++] = lb;
        if (low->n == 2 * k) tf = round_up(thr = threshold(lk = low_keep(low, k), slack));
      } else {
        cand[nc++] = (struct Cand){j, INFINITY};
      }
    }
    lk = low_keep(low, k);
    /* the lower bounds are all in: those still reaching the k-th are re-scored, a few
     * rows at once, and offered in the order of the tile */
    for (size_t m = 0; m < nc;) {
      size_t js[SLEM_EXACT_ROWS], nb = 0;
      double e[SLEM_EXACT_ROWS];
      for (; m < nc && nb < SLEM_EXACT_ROWS; m++)
        if (cand[m].up >= lk) js[nb++] = cand[m].j;
      slem_scorer_exact_rows(jb->sc, i, js, nb, e);
      jb->rescored[worker] += nb;
      for (size_t r = 0; r < nb; r++) {
        SlemHit h;
        if (isnan(e[r])) continue;
        h.row = pos->row + js[r];
        h.score = (float)e[r];
        if (isinf(h.score)) { /* scores are written as float32: never as inf */
          if (!jb->status[worker] || u < jb->err_unit[worker]) {
            jb->err_unit[worker] = u;
            jb->status[worker] = slem_error(&jb->err[worker], SLEM_ENUMERIC, "%s: query %" PRIu64 ", %s "
                                       "record %" PRIu64 ": the score %.6g is beyond float32, in "
                                       "which scores are written; scale the vectors down (or use "
                                       "--normalize)", jb->qname, jb->q0 + i + 1, pos->name,
                                       pos->record + js[r], e[r]);
          }
          unit_failed(jb, u);
          return;
        }
        slem_topk_push(t, h);
      }
    }
  }
}

/* The units in which a block's rankings are sorted and formatted, at most: fixed by the
 * block's queries alone (slem_blas_par_units()), many more than threads. */
#define EMIT_UNITS 64

/* A block of queries' top k: sorted, and formatted when the sink can, by the threads in
 * units of queries (emit_units); then handed to the writer thread (writeback.h), which
 * writes the units' texts (or emits the queries) in query order while the next block is
 * scored into the other of two sets. */
typedef struct EmitBlock {
  SlemTopK *tops;
  size_t *cnt;              /* hits of each query once sorted */
  SlemHitsBlock hb;
  const SlemHitsSink *sink;
  size_t unit, nunits;
  atomic_size_t fail_unit;  /* the lowest unit whose formatting failed (SIZE_MAX: none) */
  SlemTextBuf text[EMIT_UNITS];
  int status[EMIT_UNITS];
  SlemError err[EMIT_UNITS];
} EmitBlock;

static void emit_units(void *ctx, size_t worker, size_t lo, size_t hi) {
  EmitBlock *b = ctx;
  size_t u = lo / b->unit, cur;
  (void)worker;
  for (size_t i = lo; i < hi; i++) b->cnt[i] = slem_topk_sorted(&b->tops[i]);
  b->text[u].len = 0;
  b->status[u] = SLEM_OK;
  if (!b->sink->format || u > atomic_load(&b->fail_unit)) return; /* not written after it */
  b->status[u] = b->sink->format(b->sink->ctx, &b->hb, lo, hi, &b->text[u], &b->err[u]);
  if (b->status[u] == SLEM_OK) return;
  cur = atomic_load(&b->fail_unit);
  while (u < cur && !atomic_compare_exchange_weak(&b->fail_unit, &cur, u)) {
  }
}

static int emit_block(void *ctx, const void *buf, size_t nq, SlemError *err) {
  const EmitBlock *b = buf;
  const SlemHitsSink *s = b->sink;
  (void)ctx;
  if (s->format) {
    for (size_t u = 0; u < b->nunits; u++) {
      int st = b->text[u].len ? s->write(s->ctx, b->text[u].text, b->text[u].len, err) : SLEM_OK;
      if (st) return st;
      if (b->status[u]) { /* after the text of the queries before the failing one */
        *err = b->err[u];
        return b->status[u];
      }
    }
    return SLEM_OK;
  }
  for (size_t i = 0; i < nq; i++) {
    int st = s->emit(s->ctx, b->hb.q0 + i, b->tops[i].heap, b->cnt[i], err);
    if (st) return st;
  }
  return SLEM_OK;
}

int slem_match_db(SlemVecReader *queries, SlemDb *db, const SlemMatchOpts *opts,
                  SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err) {
  SlemHitsSink sink = {emit, NULL, NULL, ctx};
  return slem_match_db_sink(queries, db, opts, &sink, stats, err);
}

int slem_match_db_sink(SlemVecReader *queries, SlemDb *db, const SlemMatchOpts *opts,
                       const SlemHitsSink *sink, SlemMatchStats *stats, SlemError *err) {
  size_t d = slem_vecreader_dim(queries);
  size_t qb = opts->qblock ? opts->qblock : 2048, qmax;
  size_t dd = d; /* values per database row: d, or the width of kernel projections */
  size_t tb, k = opts->k;
  float *scores = NULL;
  SlemHit *mem[2] = {NULL, NULL};
  float *lmem = NULL;
  SlemTopK *tops2[2] = {NULL, NULL}, *tops = NULL;
  LowK *lows = NULL;
  struct Cand *cand = NULL;
  TileJob *job = NULL; /* large: an error message per worker */
  size_t nthreads = (size_t)slem_blas_threads(), nworkers = slem_blas_par_workers(), unit = 1;
  size_t base; /* the default tile rows of d (the selection's units are cut by them) */
  SlemWriteback *wb = NULL;
  EmitBlock *eb = NULL; /* two: one being written while the next block fills the other */
  size_t *cnt[2] = {NULL, NULL};
  int cur = 0;
  uint64_t q0 = 0, ndb = 0, lo, hi;
  int status = SLEM_OK, first = 1, once = !slem_db_seekable(db), packed = 0;
  int64_t nqueries = slem_vecreader_count(queries);
  SlemScorer *sc = NULL;
  SlemPrefetch *pf = NULL;
  SlemTileCache *kp = NULL;
  void *scratch = NULL;
  size_t esize;

  int affine = opts->affine || opts->calibration != NULL;

  double t_start = slem_now(), t0;
  memset(stats, 0, sizeof *stats);
  if ((status = slem_match_rules(opts->kernel != NULL, opts->couple, opts->normalize, affine,
                                 err)) != SLEM_OK)
    return status;
  stats->phases.threads = (int)nthreads;
  slem_db_window(db, &lo, &hi);
  if (opts->kernel) { /* a database of kernel projections is not projected again */
    const SlemCache *c = opts->kernel;
    size_t r = slem_cache_kernel(c) ? slem_cache_kernel(c)->r : 0;  /* else refused below */
    if ((status = slem_db_projections(db, slem_cache_fingerprint(c), c->d, r, opts->couple, &packed,
                                      err)) != SLEM_OK)
      return status;
    if (packed) dd = SLEM_KPROJ_WIDTH(c->d, r, opts->couple);
  }
  /* float32 tiles are half the bytes of the double blocks elsewhere: twice the rows, and
   * twice again beyond 4 threads (slem_match_tile_rows()) */
  base = opts->kernel ? slem_block_rows(dd) : slem_block_rows((d + 1) / 2);
  tb = opts->dblock ? opts->dblock
                    : opts->kernel ? base : slem_match_tile_rows(d, (int)nthreads);
  if (packed && slem_db_dim(db) != dd)
    return slem_error(err, SLEM_EFORMAT, "%s: rows of %zu values, not the %zu of its layout",
                      slem_db_name(db), slem_db_dim(db), dd);
  if (affine) {
    if (slem_db_dim(db) + 1 != d)
      return slem_error(err, SLEM_EFORMAT, "%s: classifiers of %zu values (w, then b) score "
                        "vectors of dimension %zu, but %s has dimension %zu",
                        slem_vecreader_name(queries), d, d - 1, slem_db_name(db),
                        slem_db_dim(db));
    d -= 1;
  } else if (!packed && slem_db_dim(db) != d) {
    return slem_error(err, SLEM_EFORMAT, "%s has dimension %zu but %s has dimension %zu%s",
                      slem_vecreader_name(queries), d, slem_db_name(db), slem_db_dim(db),
                      slem_db_dim(db) + 1 == d
                          ? ": are the queries classifiers (w, then b)? They need "
                            "--affine or --calibration"
                          : "");
  }
  if (k == 0) return slem_error(err, SLEM_EINVAL, "k must be at least 1");
  /* buffers by what the run needs: a query lists no more than the rows searched, and a
   * large k takes fewer queries per block (the ranking does not depend on the block) */
  if (slem_db_rows(db) >= 0) {
    uint64_t end = hi < (uint64_t)slem_db_rows(db) ? hi : (uint64_t)slem_db_rows(db);
    uint64_t rows = end > lo ? end - lo : 0;
    if (k > rows) k = rows ? (size_t)rows : 1;
  }
  if (!opts->qblock) {
    size_t per = 2 * k * sizeof(SlemHit) + tb * sizeof(float), cap = ((size_t)256 << 20) / per;
    if (qb > cap) qb = cap ? cap : 1;
  }
  if (once && nqueries > (int64_t)qb)
    return slem_error(err, SLEM_EIO, "%s: %" PRId64 " queries need the database read %" PRIu64
                      " times (once per %zu), so it must be regular files, not a pipe",
                      slem_db_name(db), nqueries, ((uint64_t)nqueries + qb - 1) / qb, qb);
  /* a database read once, queries of unknown count: one query more tells whether they fit */
  qmax = once ? qb + 1 : qb;
  if (opts->kernel) {
    if (opts->kernel->d != d)
      return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the cache %s has dimension %zu",
                        slem_vecreader_name(queries), d, slem_cache_path(opts->kernel), opts->kernel->d);
    status = slem_scorer_kernel_new(&sc, opts->kernel, qmax, tb, opts->couple, err);
    if (status == SLEM_OK && packed) slem_scorer_kernel_projections(sc);
  } else if (affine) {
    status = slem_scorer_affine_new(&sc, d, opts->calibration, qmax, tb, err);
  } else {
    status = slem_scorer_ip_new(&sc, d, opts->normalize, qmax, tb, err);
    if (status == SLEM_OK) slem_scorer_set_units(sc, opts->unit_queries, opts->unit_db);
  }
  if (status) goto done;
  scores = slem_mem_alloc_large(qmax * tb * sizeof *scores);
  /* two sets of top k: one being written while the next block fills the other */
  mem[0] = malloc(qmax * k * sizeof *mem[0]);
  mem[1] = malloc(qmax * k * sizeof *mem[1]);
  tops2[0] = malloc(qmax * sizeof *tops2[0]);
  tops2[1] = malloc(qmax * sizeof *tops2[1]);
  lmem = malloc(qmax * 2 * k * sizeof *lmem);
  lows = malloc(qmax * sizeof *lows);
  cnt[0] = malloc(qmax * sizeof *cnt[0]);
  cnt[1] = malloc(qmax * sizeof *cnt[1]);
  eb = calloc(2, sizeof *eb);
  if (nthreads < 1) nthreads = 1;
  if (nworkers > TILE_WORKERS) nworkers = TILE_WORKERS;
  cand = malloc(nworkers * tb * sizeof *cand);
  job = calloc(1, sizeof *job);
  esize = slem_scorer_f32(sc) ? sizeof(float) : sizeof(double);
  scratch = slem_mem_alloc_large(tb * dd * esize);
  if (!scores || !mem[0] || !mem[1] || !lmem || !tops2[0] || !tops2[1] || !lows || !cand ||
      !job || !scratch || !cnt[0] || !cnt[1] || !eb) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the match tiles");
    goto done;
  }
  /* more than one block of queries (or an unknown number) from regular files: keep the
   * tiles of the first pass, as they were read, before the scorer works on them */
  status = slem_tilecache_new(&kp, slem_mem_match_budget(opts->memory),
                              !once && (nqueries < 0 || nqueries > (int64_t)qb), err);
  if (status) goto done;
  slem_scorer_set_tiles(sc, kp);
  if ((status = slem_writeback_new(&wb, emit_block, NULL, err)) != SLEM_OK) goto done;
  for (;;) {
    size_t nq, nd;
    uint64_t nrows = 0;
    SlemBlockPos pos;
    t0 = slem_now();
    status = slem_scorer_queries(sc, queries, &nq, err);
    stats->phases.convert += slem_now() - t0;
    if (status) goto done;
    if (nq == 0) break;
    if (nq > qb) {
      status = slem_error(err, SLEM_EIO, "%s: more than %zu queries need the database read more "
                          "than once, so it must be regular files, not a pipe",
                          slem_db_name(db), qb);
      goto done;
    }
    if (!first) {
      if (once) {
        status = slem_error(err, SLEM_EIO, "%s: with more than %zu queries the database is read "
                            "again, so it must be a regular file, not a pipe", slem_db_name(db), qb);
        goto done;
      }
      if (!slem_tilecache_keeping(kp)) {
        status = slem_db_rewind(db, err);
        if (status) goto done;
      }
    }
    /* the set written two blocks ago: slem_writeback_put() of the last block waited for it */
    tops = tops2[cur];
    for (size_t i = 0; i < nq; i++) {
      slem_topk_init(&tops[i], mem[cur] + i * k, k);
      lows[i] = (LowK){lmem + i * 2 * k, 0, -INFINITY};
    }
    /* the database, a tile ahead on another thread, for this block of queries; or the
     * tiles the first block kept */
    stats->passes++;
    if (first || !slem_tilecache_keeping(kp)) {
      stats->reads++;
      status = slem_prefetch_new_fn(&pf, slem_db_read, db, dd, tb, slem_scorer_f32(sc), err);
      if (status) goto done;
    }
    for (size_t ti = 0;; ti++) {
      void *rows;
      if (pf) {
        status = slem_prefetch_next_pos(pf, &rows, &nd, &pos, err);
        if (status) goto done;
        if (first && nd > 0) slem_tilecache_keep_rows(kp, rows, nd, nd * dd * esize, &pos);
      } else if (ti < slem_tilecache_tiles(kp)) { /* a copy: the scorer may change its rows */
        const void *kept = slem_tilecache_rows(kp, ti, &nd, &pos);
        memcpy(scratch, kept, nd * dd * esize);
        rows = scratch;
      } else {
        nd = 0;
      }
      if (nd == 0) break;
      /* keep: slem_tilecache_keep_rows() above may have given up; replay: from the kept
       * tiles, the first pass's bytes */
      slem_scorer_set_tile(sc, ti, pf && first && slem_tilecache_keeping(kp), !pf);
      t0 = slem_now();
      status = slem_scorer_tile(sc, scores, rows, nd, pos.name, pos.record, err);
      stats->phases.compute += slem_now() - t0;
      if (status) goto done;
      t0 = slem_now();
      /* the queries' selections, in units of queries taken by the threads (each query's
       * own) */
      {
        size_t fw = SIZE_MAX;
        memset(job->rescored, 0, sizeof job->rescored);
        memset(job->status, 0, sizeof job->status);
        atomic_init(&job->fail_unit, SIZE_MAX);
        job->sc = sc, job->opts = opts, job->scores = scores, job->tops = tops, job->lows = lows;
        job->cand = cand, job->nd = nd, job->pos = pos, job->q0 = q0;
        job->qname = slem_vecreader_name(queries), job->unit = unit = select_unit(base, nq);
        slem_blas_par_units(nq, unit, tile_queries, job);
        if ((nq + unit - 1) / unit > stats->phases.units) /* the most of any block */
          stats->phases.units = (nq + unit - 1) / unit;
        for (size_t w = 0; w < nworkers; w++) {
          stats->rescored += job->rescored[w];
          if (job->status[w] && (fw == SIZE_MAX || job->err_unit[w] < job->err_unit[fw])) fw = w;
        }
        if (fw != SIZE_MAX) { /* the error of the first query that had one */
          status = job->status[fw];
          *err = job->err[fw];
          goto done;
        }
      }
      stats->phases.merge += slem_now() - t0;
      nrows += nd;
      if (opts->progress) opts->progress(opts->progress_ctx, stats->pairs + nrows * nq);
    }
    if (pf) {
      double rd, wt;
      slem_prefetch_times(pf, &rd, &wt);
      stats->phases.read += rd;
      stats->phases.wait_read += wt;
    }
    slem_prefetch_free(pf);
    pf = NULL;
    stats->pairs += nrows * nq;
    if (first) {
      /* a database of empty segments (a night with no new images) is no error: every
       * query is written with no result, as for an empty shard */
      ndb = nrows;
    } else if (nrows != ndb) {
      status = slem_error(err, SLEM_EFORMAT, "%s: changed while being read (%" PRIu64
                          " rows, then %" PRIu64 ")", slem_db_name(db), ndb, nrows);
      goto done;
    }
    /* sorted (and formatted) by the threads in units of queries, then written on the
     * writer thread while the next block is scored; an error of an earlier block's
     * writing comes back here */
    t0 = slem_now();
    {
      EmitBlock *b = &eb[cur];
      b->tops = tops, b->cnt = cnt[cur], b->sink = sink;
      b->hb = (SlemHitsBlock){q0, nq, mem[cur], k, cnt[cur]};
      b->unit = (nq + EMIT_UNITS - 1) / EMIT_UNITS;
      b->nunits = (nq + b->unit - 1) / b->unit;
      atomic_init(&b->fail_unit, SIZE_MAX);
      slem_blas_par_units(nq, b->unit, emit_units, b);
    }
    stats->phases.write += slem_now() - t0;
    if ((status = slem_writeback_put(wb, &eb[cur], nq, err)) != SLEM_OK) goto done;
    cur ^= 1;
    q0 += nq;
    first = 0;
  }
  if ((status = slem_writeback_finish(wb, err)) != SLEM_OK) goto done;
  stats->nq = q0;
  stats->ndb = ndb;
  stats->clamps = slem_scorer_clamps(sc);
  stats->phases.wall = slem_now() - t_start;
  stats->phases.block = tb;
done:
  /* the earlier blocks' rankings came first: their writing's error wins over a later one */
  if (wb && status != SLEM_OK) {
    SlemError werr;
    int wst = slem_writeback_finish(wb, &werr);
    if (wst != SLEM_OK) {
      status = wst;
      *err = werr;
    }
  }
  if (wb) {
    double wr, wt;
    slem_writeback_times(wb, &wr, &wt);
    stats->phases.write += wr;
    stats->phases.wait_write += wt;
  }
  slem_writeback_free(wb);
  slem_prefetch_free(pf);
  slem_scorer_free(sc);
  slem_tilecache_free(kp);
  free(scratch);
  free(scores);
  free(mem[0]);
  free(mem[1]);
  free(lmem);
  free(tops2[0]);
  free(tops2[1]);
  free(lows);
  free(cand);
  free(job);
  free(cnt[0]);
  free(cnt[1]);
  if (eb)
    for (size_t b = 0; b < 2; b++)
      for (size_t u = 0; u < EMIT_UNITS; u++) slem_textbuf_free(&eb[b].text[u]);
  free(eb);
  return status;
}

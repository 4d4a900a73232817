#include "match.h"

#include "kslem.h"
#include "prefetch.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void slem_match_opts_init(SlemMatchOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->k = 100;
  opts->qblock = 2048;
  opts->dblock = 0; /* slem_block_rows(d) */
}

/* a ranks below b: lower score, or the same score and a later row */
static int worse(const SlemHit *a, const SlemHit *b) {
  return a->score < b->score || (a->score == b->score && a->row > b->row);
}

/* Min-heap on "worse": the root is the worst hit kept. */
static void heap_push(SlemHit *h, size_t *n, size_t k, SlemHit c) {
  size_t i;
  if (*n < k) {
    i = (*n)++;
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (!worse(&c, &h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = c;
    return;
  }
  if (!worse(&h[0], &c)) return;
  i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const SlemHit *mv = &c;
    if (l < k && worse(&h[l], mv)) m = l, mv = &h[l];
    if (r < k && worse(&h[r], mv)) m = r, mv = &h[r];
    if (m == i) break;
    h[i] = h[m];
    i = m;
  }
  h[i] = c;
}

static int best_first(const void *a, const void *b) {
  const SlemHit *x = a, *y = b;
  if (worse(y, x)) return -1;
  if (worse(x, y)) return 1;
  return 0;
}

/* L2-normalises the rows of x(n, d) in place, accumulating in double. */
static void normalize_rows(float *x, size_t n, size_t d) {
  for (size_t i = 0; i < n; i++) {
    float *t = x + i * d;
    double ss = 0, scale;
    for (size_t j = 0; j < d; j++) ss += (double)t[j] * t[j];
    scale = ss > 0 ? 1 / sqrt(ss) : 0;
    for (size_t j = 0; j < d; j++) t[j] = (float)(t[j] * scale);
  }
}

/* How a block of queries and a tile of the database become scores(nq, nd): float32
 * rows and one sgemm for the inner product, double rows and the kernel projections
 * otherwise. */
typedef struct Scorer {
  size_t d;
  int normalize;
  float *qf;                 /* inner product: the query rows */
  double *qd;                /* kernel: the query rows */
  SlemKProj *qp, *dp;        /* kernel: projections */
  double *sd;                /* kernel: scores in double */
} Scorer;

static int read_queries(Scorer *sc, SlemVecReader *r, size_t max, size_t *got, SlemError *err) {
  int st;
  if (sc->qp) {
    st = slem_vecreader_read(r, sc->qd, max, got, err);
    if (st || *got == 0) return st;
    return slem_kproj_run(sc->qp, sc->qd, *got, slem_vecreader_name(r),
                          slem_vecreader_done(r) - *got + 1, err);
  }
  st = slem_vecreader_read_f32(r, sc->qf, max, got, err);
  if (!st && sc->normalize) normalize_rows(sc->qf, *got, sc->d);
  return st;
}

/* scores(nq, nd) for the database rows (float32 for the inner product, double for a
 * kernel) that start at record first. */
static int score_tile(Scorer *sc, float *scores, size_t nq, void *rows, size_t nd,
                      const char *name, uint64_t first, SlemError *err) {
  if (sc->qp) {
    int st = slem_kproj_run(sc->dp, rows, nd, name, first, err);
    if (st) return st;
    slem_kproj_similarity(sc->sd, sc->qp, sc->dp);
    for (size_t i = 0; i < nq * nd; i++) scores[i] = (float)sc->sd[i];
    return SLEM_OK;
  }
  if (sc->normalize) normalize_rows(rows, nd, sc->d);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)sc->d, 1.0f, sc->qf,
              (int)sc->d, rows, (int)sc->d, 0.0f, scores, (int)nd);
  return SLEM_OK;
}

int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err) {
  size_t d = slem_vecreader_dim(queries);
  size_t qb = opts->qblock ? opts->qblock : 2048;
  /* float32 tiles are half the bytes of the double blocks elsewhere: twice the rows */
  size_t tb = opts->dblock ? opts->dblock
                           : opts->kernel ? slem_block_rows(d) : slem_block_rows((d + 1) / 2);
  size_t k = opts->k;
  float *scores = NULL;
  SlemHit *heaps = NULL;
  size_t *sizes = NULL;
  uint64_t q0 = 0, ndb = 0, db_clamps = 0;
  int status = SLEM_OK, first = 1;
  Scorer sc = {d, opts->normalize, NULL, NULL, NULL, NULL, NULL};
  SlemPrefetch *pf = NULL;

  memset(stats, 0, sizeof *stats);
  if (slem_vecreader_dim(db) != d)
    return slem_error(err, SLEM_EFORMAT, "%s has dimension %zu but %s has dimension %zu",
                      slem_vecreader_name(queries), d, slem_vecreader_name(db),
                      slem_vecreader_dim(db));
  if (k == 0) return slem_error(err, SLEM_EINVAL, "k must be at least 1");
  if (opts->kernel) {
    if (opts->normalize)
      return slem_error(err, SLEM_EINVAL, "the kernel similarity is normalised already: no --normalize");
    if (opts->kernel->d != d)
      return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the cache %s has dimension %zu",
                        slem_vecreader_name(queries), d, slem_cache_path(opts->kernel), opts->kernel->d);
    if ((status = slem_kproj_new(&sc.qp, opts->kernel, qb, err)) != SLEM_OK ||
        (status = slem_kproj_new(&sc.dp, opts->kernel, tb, err)) != SLEM_OK)
      goto done;
    sc.sd = malloc(qb * tb * sizeof *sc.sd);
    sc.qd = malloc(qb * d * sizeof *sc.qd);
  } else {
    sc.qf = malloc(qb * d * sizeof *sc.qf);
  }
  scores = malloc(qb * tb * sizeof *scores);
  heaps = malloc(qb * k * sizeof *heaps);
  sizes = malloc(qb * sizeof *sizes);
  if (!scores || !heaps || !sizes || (opts->kernel ? !sc.sd || !sc.qd : !sc.qf)) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the match tiles");
    goto done;
  }
  for (;;) {
    size_t nq, nd;
    uint64_t row0 = 0;
    status = read_queries(&sc, queries, qb, &nq, err);
    if (status) goto done;
    if (nq == 0) break;
    if (!first) {
      if (!slem_vecreader_seekable(db)) {
        status = slem_error(err, SLEM_EIO,
                            "%s: with more than %zu queries the database is read again, so it "
                            "must be a regular file, not a pipe", slem_vecreader_name(db), qb);
        goto done;
      }
      status = slem_vecreader_rewind(db, err);
      if (status) goto done;
    }
    memset(sizes, 0, nq * sizeof *sizes);
    /* the database, a tile ahead on another thread, for this block of queries */
    status = slem_prefetch_new(&pf, db, tb, !opts->kernel, err);
    if (status) goto done;
    for (;;) {
      void *rows;
      status = slem_prefetch_next(pf, &rows, &nd, err);
      if (status) goto done;
      if (nd == 0) break;
      status = score_tile(&sc, scores, nq, rows, nd, slem_vecreader_name(db), row0 + 1, err);
      if (status) goto done;
      for (size_t i = 0; i < nq; i++) {
        const float *s = scores + i * nd;
        SlemHit *h = heaps + i * k;
        size_t *n = sizes + i;
        uint64_t self_row = q0 + i;
        for (size_t j = 0; j < nd; j++) {
          SlemHit c;
          if (*n == k && s[j] < h[0].score) continue; /* the common case: not good enough */
          if (isnan(s[j])) continue;
          c.row = row0 + j;
          c.score = s[j];
          if (opts->exclude_self && c.row == self_row) continue;
          heap_push(h, n, k, c);
        }
      }
      row0 += nd;
    }
    slem_prefetch_free(pf);
    pf = NULL;
    if (first) {
      ndb = row0;
      if (sc.dp) db_clamps = slem_kproj_clamps(sc.dp);
      if (ndb == 0) {
        status = slem_error(err, SLEM_EFORMAT, "%s: no vectors", slem_vecreader_name(db));
        goto done;
      }
    } else if (row0 != ndb) {
      status = slem_error(err, SLEM_EFORMAT, "%s: changed while being read (%" PRIu64
                          " rows, then %" PRIu64 ")", slem_vecreader_name(db), ndb, row0);
      goto done;
    }
    for (size_t i = 0; i < nq; i++) {
      SlemHit *h = heaps + i * k;
      qsort(h, sizes[i], sizeof *h, best_first);
      status = emit(ctx, q0 + i, h, sizes[i], err);
      if (status) goto done;
    }
    q0 += nq;
    first = 0;
  }
  stats->nq = q0;
  stats->ndb = ndb;
  stats->clamps = db_clamps + (sc.qp ? slem_kproj_clamps(sc.qp) : 0);
done:
  slem_prefetch_free(pf);
  free(sc.qd);
  free(sc.qf);
  free(sc.sd);
  slem_kproj_free(sc.qp);
  slem_kproj_free(sc.dp);
  free(scores);
  free(heaps);
  free(sizes);
  return status;
}

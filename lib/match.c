#include "match.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void slem_match_opts_init(SlemMatchOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->k = 100;
  opts->qblock = 4096;
  opts->dblock = 1024;
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

static void to_float(float *dst, const double *src, size_t n, size_t d, int normalize) {
  for (size_t i = 0; i < n; i++) {
    const double *s = src + i * d;
    float *t = dst + i * d;
    double scale = 1;
    if (normalize) {
      double ss = 0;
      for (size_t j = 0; j < d; j++) ss += s[j] * s[j];
      scale = ss > 0 ? 1 / sqrt(ss) : 0;
    }
    for (size_t j = 0; j < d; j++) t[j] = (float)(s[j] * scale);
  }
}

int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, uint64_t *nq_out, uint64_t *ndb_out,
               SlemError *err) {
  size_t d = slem_vecreader_dim(queries);
  size_t qb = opts->qblock ? opts->qblock : 4096, tb = opts->dblock ? opts->dblock : 1024;
  size_t k = opts->k;
  double *qd = NULL, *dd = NULL;
  float *qf = NULL, *df = NULL, *scores = NULL;
  SlemHit *heaps = NULL;
  size_t *sizes = NULL;
  uint64_t q0 = 0, ndb = 0;
  int status = SLEM_OK, first = 1;

  *nq_out = *ndb_out = 0;
  if (slem_vecreader_dim(db) != d)
    return slem_error(err, SLEM_EFORMAT, "%s has dimension %zu but %s has dimension %zu",
                      slem_vecreader_name(queries), d, slem_vecreader_name(db),
                      slem_vecreader_dim(db));
  if (k == 0) return slem_error(err, SLEM_EINVAL, "k must be at least 1");
  qd = malloc(qb * d * sizeof *qd);
  dd = malloc(tb * d * sizeof *dd);
  qf = malloc(qb * d * sizeof *qf);
  df = malloc(tb * d * sizeof *df);
  scores = malloc(qb * tb * sizeof *scores);
  heaps = malloc(qb * k * sizeof *heaps);
  sizes = malloc(qb * sizeof *sizes);
  if (!qd || !dd || !qf || !df || !scores || !heaps || !sizes) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the match tiles");
    goto done;
  }
  for (;;) {
    size_t nq, nd;
    uint64_t row0 = 0;
    status = slem_vecreader_read(queries, qd, qb, &nq, err);
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
    to_float(qf, qd, nq, d, opts->normalize);
    memset(sizes, 0, nq * sizeof *sizes);
    for (;;) {
      status = slem_vecreader_read(db, dd, tb, &nd, err);
      if (status) goto done;
      if (nd == 0) break;
      to_float(df, dd, nd, d, opts->normalize);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nd, (int)d, 1.0f, qf,
                  (int)d, df, (int)d, 0.0f, scores, (int)nd);
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
    if (first) {
      ndb = row0;
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
  *nq_out = q0;
  *ndb_out = ndb;
done:
  free(qd);
  free(dd);
  free(qf);
  free(df);
  free(scores);
  free(heaps);
  free(sizes);
  return status;
}

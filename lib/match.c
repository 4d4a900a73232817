#include "match.h"

#include "kproj.h"
#include "prefetch.h"
#include "scorer.h"

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

int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err) {
  size_t d = slem_vecreader_dim(queries);
  size_t qb = opts->qblock ? opts->qblock : 2048;
  /* float32 tiles are half the bytes of the double blocks elsewhere: twice the rows */
  size_t tb = opts->dblock ? opts->dblock
                           : opts->kernel ? slem_block_rows(d) : slem_block_rows((d + 1) / 2);
  size_t k = opts->k;
  float *scores = NULL;
  SlemHit *mem = NULL;
  SlemTopK *tops = NULL;
  uint64_t q0 = 0, ndb = 0;
  int status = SLEM_OK, first = 1;
  SlemScorer *sc = NULL;
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
    status = slem_scorer_kernel_new(&sc, opts->kernel, qb, tb, err);
  } else {
    status = slem_scorer_ip_new(&sc, d, opts->normalize, qb, tb, err);
  }
  if (status) goto done;
  scores = malloc(qb * tb * sizeof *scores);
  mem = malloc(qb * k * sizeof *mem);
  tops = malloc(qb * sizeof *tops);
  if (!scores || !mem || !tops) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the match tiles");
    goto done;
  }
  for (;;) {
    size_t nq, nd;
    uint64_t row0 = 0;
    status = slem_scorer_queries(sc, queries, &nq, err);
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
    for (size_t i = 0; i < nq; i++) slem_topk_init(&tops[i], mem + i * k, k);
    /* the database, a tile ahead on another thread, for this block of queries */
    status = slem_prefetch_new(&pf, db, tb, slem_scorer_f32(sc), err);
    if (status) goto done;
    for (;;) {
      void *rows;
      status = slem_prefetch_next(pf, &rows, &nd, err);
      if (status) goto done;
      if (nd == 0) break;
      status = slem_scorer_tile(sc, scores, rows, nd, slem_vecreader_name(db), row0 + 1, err);
      if (status) goto done;
      for (size_t i = 0; i < nq; i++) {
        const float *s = scores + i * nd;
        SlemTopK *t = &tops[i];
        uint64_t self_row = q0 + i;
        for (size_t j = 0; j < nd; j++) {
          SlemHit c;
          const SlemHit *w = slem_topk_worst(t);
          if (w && s[j] < w->score) continue; /* the common case: not good enough */
          if (isnan(s[j])) continue;
          c.row = row0 + j;
          c.score = s[j];
          if (opts->exclude_self && c.row == self_row) continue;
          slem_topk_push(t, c);
        }
      }
      row0 += nd;
    }
    slem_prefetch_free(pf);
    pf = NULL;
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
      size_t n = slem_topk_sorted(&tops[i]);
      status = emit(ctx, q0 + i, tops[i].heap, n, err);
      if (status) goto done;
    }
    q0 += nq;
    first = 0;
  }
  stats->nq = q0;
  stats->ndb = ndb;
  stats->clamps = slem_scorer_clamps(sc);
done:
  slem_prefetch_free(pf);
  slem_scorer_free(sc);
  free(scores);
  free(mem);
  free(tops);
  return status;
}

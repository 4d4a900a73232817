#include "expand.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "strmap.h"

void slem_expand_opts_init(SlemExpandOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->n = 0;
  opts->alpha = 0;
}

struct SlemExpander {
  SlemExpandOpts opts;
  size_t d, rows;
  float *x;          /* x(rows, d) */
  SlemStrMap *ids;   /* id -> row, NULL: rows by number */
  uint64_t zeros;
};

int slem_expand_new(SlemExpander **out, SlemVecReader *db, const SlemIds *ids,
                      const SlemExpandOpts *opts, SlemError *err) {
  SlemExpander *self = NULL;
  size_t d = slem_vecreader_dim(db), block = slem_block_rows(d), cap = 0, got;
  int status = SLEM_OK;

  *out = NULL;
  if (opts->n == 0 || !(opts->alpha >= 0) || !isfinite(opts->alpha))
    return slem_error(err, SLEM_EINVAL, "n (%zu) must be at least 1 and alpha (%g) a "
                      "non-negative number", opts->n, opts->alpha);
  self = calloc(1, sizeof *self);
  if (!self) return slem_error(err, SLEM_ENOMEM, "out of memory");
  self->opts = *opts;
  self->d = d;
  for (;;) {
    if (self->rows + block > cap) {
      size_t ncap = cap ? 2 * cap : block;
      float *p;
      while (ncap < self->rows + block) ncap *= 2;
      p = realloc(self->x, ncap * d * sizeof *p);
      if (!p) {
        status = slem_error(err, SLEM_ENOMEM, "%s: out of memory after %zu vectors",
                            slem_vecreader_name(db), self->rows);
        goto cleanup;
      }
      self->x = p;
      cap = ncap;
    }
    if ((status = slem_vecreader_read_f32(db, self->x + self->rows * d, block, &got, err)) !=
        SLEM_OK)
      goto cleanup;
    if (got == 0) break;
    self->rows += got;
  }
  if (ids) {
    if (slem_ids_count(ids) != self->rows) {
      status = slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but the database %s has %zu rows",
                          slem_ids_name(ids), slem_ids_count(ids), slem_vecreader_name(db),
                          self->rows);
      goto cleanup;
    }
    if (!(self->ids = slem_strmap_new())) {
      status = slem_error(err, SLEM_ENOMEM, "out of memory for the database ids");
      goto cleanup;
    }
    for (size_t i = 0; i < self->rows; i++) {
      const char *s = slem_ids_get(ids, i);
      long k = slem_strmap_intern(self->ids, s, strlen(s));
      if (k < 0) {
        status = slem_error(err, SLEM_ENOMEM, "out of memory for the database ids");
        goto cleanup;
      }
      if ((size_t)k != i) {
        status = slem_error(err, SLEM_EFORMAT, "%s: line %zu: id '%s' is also on line %ld",
                            slem_ids_name(ids), i + 1, s, k + 1);
        goto cleanup;
      }
    }
  }
  *out = self;
  self = NULL;
cleanup:
  slem_expand_free(self);
  return status;
}

void slem_expand_free(SlemExpander *self) {
  if (!self) return;
  free(self->x);
  slem_strmap_free(self->ids);
  free(self);
}

size_t slem_expand_dim(const SlemExpander *self) { return self->d; }
size_t slem_expand_rows(const SlemExpander *self) { return self->rows; }
uint64_t slem_expand_zeros(const SlemExpander *self) { return self->zeros; }

int slem_expand_row(const SlemExpander *self, const char *id, size_t len, size_t *row,
                      SlemError *err) {
  if (self->ids) {
    long k = slem_strmap_find(self->ids, id, len);
    if (k < 0)
      return slem_error(err, SLEM_EFORMAT, "document '%.*s' is not among the database ids",
                        (int)len, id);
    *row = (size_t)k;
    return SLEM_OK;
  }
  {
    char buf[32], *end;
    unsigned long long v;
    if (len == 0 || len >= sizeof buf || id[0] < '0' || id[0] > '9')
      goto bad;
    memcpy(buf, id, len);
    buf[len] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    if (*end || errno || v >= self->rows) goto bad;
    *row = (size_t)v;
    return SLEM_OK;
  }
bad:
  return slem_error(err, SLEM_EFORMAT, "document '%.*s' is not a row of the database (0 to "
                    "%zu; give --db-ids when the ranking names documents by id)",
                    (int)(len < 64 ? len : 64), id, self->rows - 1);
}

int slem_expand_run(SlemExpander *self, double *y, const double *q, const size_t *rows,
                      const double *scores, size_t nhits, const char *qname, SlemError *err) {
  size_t d = self->d, n = self->opts.n;
  double nrm = 0;

  if (nhits < n)
    return slem_error(err, SLEM_EFORMAT, "query %s: the ranking lists %zu result%s, fewer "
                      "than the %zu to add (-n)", qname, nhits, nhits == 1 ? "" : "s", n);
  memcpy(y, q, d * sizeof *y);
  for (size_t j = 0; j < n; j++) {
    double w = self->opts.alpha == 0 ? 1 : pow(scores[j], self->opts.alpha);
    const float *x = self->x + rows[j] * d;
    if (!isfinite(w))
      return slem_error(err, SLEM_EFORMAT, "query %s: rank %zu: score %.9g to the power "
                        "alpha = %g is not a real number (a negative score needs a whole "
                        "alpha)", qname, j + 1, scores[j], self->opts.alpha);
    for (size_t k = 0; k < d; k++) y[k] += w * x[k];
  }
  for (size_t k = 0; k < d; k++) {
    /* finite weights whose sum is not (scores near DBL_MAX): the row was written as NaN */
    if (!isfinite(y[k]))
      return slem_error(err, SLEM_EFORMAT, "query %s: the sum of its %zu weighted results "
                        "overflows (scores %.9g to %.9g, alpha = %g)", qname, n, scores[n - 1],
                        scores[0], self->opts.alpha);
    nrm += y[k] * y[k];
  }
  nrm = sqrt(nrm);
  if (isinf(nrm)) {
    /* the squares overflow where the values do not (scores of 1e300): the row was written
     * as zeros; the norm scaled by the largest value instead */
    double m = 0, s = 0;
    for (size_t k = 0; k < d; k++) m = fmax(m, fabs(y[k]));
    for (size_t k = 0; k < d; k++) s += (y[k] / m) * (y[k] / m);
    nrm = m * sqrt(s);
  }
  if (nrm > 0)
    for (size_t k = 0; k < d; k++) y[k] /= nrm;
  else
    self->zeros++;
  return SLEM_OK;
}

/* A query's entry key.pos, ordered by slem_rankings_key_cmp(). */
typedef struct {
  SlemRankKey key;
} ExpandOrder;

/* Sets *ord to rq's entries in rank order (as slem-eval takes them), or to NULL when the
 * file order is that already (slem-match's rankings); *ord grows in *cap. SLEM_ENOMEM. */
static int expand_order(const SlemRankQuery *rq, ExpandOrder **buf, size_t *cap,
                        const ExpandOrder **ord, SlemError *err) {
  size_t j;
  *ord = NULL;
  for (j = 1; j < rq->n && rq->e[j - 1].rank <= rq->e[j].rank; j++) {}
  if (j >= rq->n) return SLEM_OK;
  if (rq->n > *cap) {
    ExpandOrder *b = realloc(*buf, rq->n * sizeof *b);
    if (!b)
      return slem_error(err, SLEM_ENOMEM, "out of memory ordering %zu results by rank", rq->n);
    *buf = b;
    *cap = rq->n;
  }
  for (j = 0; j < rq->n; j++) {
    (*buf)[j].key = (SlemRankKey){rq->e[j].rank, rq->e[j].line, j};
  }
  qsort(*buf, rq->n, sizeof **buf, slem_rankings_key_cmp);
  *ord = *buf;
  return SLEM_OK;
}

int slem_expand_stream(SlemExpander *self, SlemVecReader *in, const SlemIds *qids,
                       SlemRankReader *r, SlemVecWriter *out, SlemProgressFn progress,
                       void *ctx, SlemError *err) {
  size_t d = self->d, n = self->opts.n, block = slem_block_rows(d), got;
  double *x = NULL, *y = NULL, *sc = NULL;
  float *yf = NULL;
  size_t *rows = NULL, ord_cap = 0;
  ExpandOrder *ord_buf = NULL;
  uint64_t done = 0;
  int status = SLEM_OK;
  const char *rname = slem_rankreader_name(r);

  if (slem_vecreader_dim(in) != d)
    return slem_error(err, SLEM_EFORMAT, "%s: %zu values per row, but the database has dimension "
                      "%zu%s", slem_vecreader_name(in), slem_vecreader_dim(in), d,
                      slem_vecreader_dim(in) == d + 1
                          ? ": is it a file of classifiers (w, then b)? Expansion takes "
                            "descriptors"
                          : "");
  x = malloc(block * d * sizeof *x);
  y = malloc(d * sizeof *y);
  yf = malloc(block * d * sizeof *yf);
  rows = malloc(n * sizeof *rows);
  sc = malloc(n * sizeof *sc);
  if (!x || !y || !yf || !rows || !sc) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto cleanup;
  }
  for (;;) {
    if ((status = slem_vecreader_read(in, x, block, &got, err)) != SLEM_OK) goto cleanup;
    if (got == 0) break;
    for (size_t i = 0; i < got; i++, done++) {
      const SlemRankQuery *rq;
      const ExpandOrder *ord;
      const char *qid;
      size_t qlen, nh, take;
      char want[32], qname[300];
      const char *expect = want;
      if (qids) {
        if (done >= slem_ids_count(qids)) {
          status = slem_error(err, SLEM_EFORMAT, "%s: fewer ids than the vectors of %s",
                              slem_ids_name(qids), slem_vecreader_name(in));
          goto cleanup;
        }
        expect = slem_ids_get(qids, done);
      } else {
        snprintf(want, sizeof want, "%llu", (unsigned long long)done);
      }
      if ((status = slem_rankreader_next(r, &rq, err)) != SLEM_OK) goto cleanup;
      if (!rq) {
        status = slem_error(err, SLEM_EFORMAT, "%s ends before query '%s' (vector %llu of %s): "
                            "it must rank every vector, in order", rname, expect,
                            (unsigned long long)done + 1, slem_vecreader_name(in));
        goto cleanup;
      }
      qid = rq->query;
      qlen = strlen(qid);
      nh = rq->n;
      if (strcmp(expect, qid) != 0) {
        status = slem_error(err, SLEM_EFORMAT, "%s: query '%.*s' where '%s' (vector %llu of "
                            "%s) was expected: the ranking must rank every vector, in order%s",
                            rname, (int)(qlen < 64 ? qlen : 64), qid, expect,
                            (unsigned long long)done + 1, slem_vecreader_name(in),
                            qids ? "" : " (give --query-ids when it names queries by id)");
        goto cleanup;
      }
      snprintf(qname, sizeof qname, "'%s' of %s", expect, rname);
      take = nh < n ? nh : n;
      if ((status = expand_order(rq, &ord_buf, &ord_cap, &ord, err)) != SLEM_OK) goto cleanup;
      for (size_t j = 0; j < take; j++) {
        const SlemRankEntry *e = rq->e + (ord ? ord[j].key.pos : j);
        if ((status = slem_expand_row(self, e->id, strlen(e->id), &rows[j], err)) != SLEM_OK) {
          char msg[SLEM_ERRMSG_MAX];
          snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
          slem_error(err, status, "%s: query '%s': rank %zu: %s", rname, expect, j + 1, msg);
          goto cleanup;
        }
        sc[j] = e->score;
      }
      if ((status = slem_expand_run(self, y, x + i * d, rows, sc, nh, qname, err)) != SLEM_OK)
        goto cleanup;
      for (size_t k = 0; k < d; k++) yf[i * d + k] = (float)y[k];
    }
    if ((status = slem_vecwriter_write(out, yf, got, err)) != SLEM_OK) goto cleanup;
    if (progress) progress(ctx, done);
  }
  {
    const SlemRankQuery *rq;
    if ((status = slem_rankreader_next(r, &rq, err)) != SLEM_OK) goto cleanup;
    if (rq) {
      char at[SLEM_RANK_PLACE_MAX];
      status = slem_error(err, SLEM_EFORMAT, "%s: %s: query '%.64s' after the last of the %llu "
                          "vectors of %s", rname,
                          slem_rankreader_place(r, at, rq->line, SLEM_RANK_WHOLE_QUERY), rq->query,
                          (unsigned long long)done, slem_vecreader_name(in));
      goto cleanup;
    }
  }
  if (qids && done != slem_ids_count(qids))
    status = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %llu vectors", slem_ids_name(qids),
                        slem_ids_count(qids), (unsigned long long)done);
cleanup:
  free(x);
  free(y);
  free(yf);
  free(rows);
  free(sc);
  free(ord_buf);
  return status;
}

typedef struct {
  const SlemExpandFiles *files;
  uint64_t total;
} Progress;

static void on_progress(void *ctx, uint64_t done) {
  const Progress *p = ctx;
  p->files->progress(p->files->progress_ctx, done, p->total);
}

static int is_stdin(const char *path) { return path && strcmp(path, "-") == 0; }

int slem_expand_check(const SlemExpandFiles *f, const SlemExpandOpts *opts, SlemError *err) {
  const char *input = f->input ? f->input : "-";
  SlemFormat ofmt = f->output_format;
  int uses;
  if (!f->db) return slem_error(err, SLEM_EINVAL, "no database: give -d DATABASE");
  if (opts->n == 0)
    return slem_error(err, SLEM_EINVAL, "no -n: give the number of results to add to each vector");
  if (!f->ranking && is_stdin(input))
    return slem_error(err, SLEM_EINVAL, "the vectors come from stdin: give the ranking with -r "
                      "RANKING");
  uses = is_stdin(f->db) + is_stdin(f->ranking ? f->ranking : "-") + is_stdin(input) +
         is_stdin(f->qids) + is_stdin(f->dbids);
  if (uses > 1) return slem_error(err, SLEM_EINVAL, "only one input can be stdin");
  if (ofmt == SLEM_FMT_AUTO) return slem_format_for_output(&ofmt, f->output ? f->output : "-", err);
  return SLEM_OK;
}

int slem_expand_run_files(const SlemExpandFiles *f, const SlemExpandOpts *opts,
                          uint64_t *zeros, SlemError *err) {
  SlemVecReader *db = NULL, *in = NULL;
  SlemIds *qids = NULL, *dbids = NULL;
  SlemRankReader *rr = NULL;
  SlemExpander *ex = NULL;
  SlemVecWriter *w = NULL;
  Progress pr = {f, 0};
  SlemFormat ofmt = f->output_format;
  int st;
  if (zeros) *zeros = 0;
  if ((st = slem_expand_check(f, opts, err)) != SLEM_OK ||
      (ofmt == SLEM_FMT_AUTO &&
       (st = slem_format_for_output(&ofmt, f->output ? f->output : "-", err)) != SLEM_OK))
    return st;
  if ((f->qids && (st = slem_ids_read(&qids, f->qids, err)) != SLEM_OK) ||
      (f->dbids && (st = slem_ids_read(&dbids, f->dbids, err)) != SLEM_OK) ||
      (st = slem_vecreader_open(&db, f->db, f->db_format, err)) != SLEM_OK ||
      (st = slem_expand_new(&ex, db, dbids, opts, err)) != SLEM_OK ||
      (st = slem_vecreader_open(&in, f->input ? f->input : "-", f->input_format, err)) != SLEM_OK ||
      (st = slem_rankreader_open(&rr, f->ranking ? f->ranking : "-", f->ranking_format, err)) !=
          SLEM_OK)
    goto done;
  pr.total = slem_vecreader_count(in) > 0 ? (uint64_t)slem_vecreader_count(in) : 0;
  if ((st = slem_vecwriter_open(&w, f->output ? f->output : "-", ofmt, slem_expand_dim(ex),
                                slem_vecreader_count(in), err)) != SLEM_OK ||
      (st = slem_expand_stream(ex, in, qids, rr, w, f->progress ? on_progress : NULL, &pr,
                               err)) != SLEM_OK)
    goto done;
  st = slem_vecwriter_close(w, err);
  w = NULL;
  if (st == SLEM_OK && zeros) *zeros = slem_expand_zeros(ex);
done:
  slem_vecwriter_abort(w);
  slem_rankreader_free(rr);
  slem_expand_free(ex);
  slem_vecreader_free(in);
  slem_vecreader_free(db);
  slem_ids_free(qids);
  slem_ids_free(dbids);
  return st;
}

#include "truth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "lines.h"
#include "measures.h"
#include "strmap.h"
#include "vecs.h"

/* One judgement of the qrels: its grade as given; seq, the line's order, decides which of
 * two lines judging one pair counts (the first with a grade >= 1, else the first). */
typedef struct Judg {
  size_t q, doc, seq;
  uint64_t line;
  long grade;
} Judg;

struct SlemTruth {
  int labels;            /* 1: labels, 0: qrels */
  SlemStrMap *qmap, *dmap;
  /* qrels */
  SlemKeySet *rel;
  size_t *nrel;          /* per query */
  Judg *jud;             /* by query, then document: one per judged pair */
  size_t njud, cjud;
  size_t *joff;          /* query q's judgements: jud[joff[q] .. joff[q + 1]) */
  /* labels */
  long *qlab, *dlab;     /* per query row, per database row */
  size_t *lab_count;     /* database rows per label */
  /* junk */
  SlemKeySet *junk;
  size_t *junk_rel;      /* per query: junk documents that were relevant */
  size_t *junk_n;        /* per query: junk documents */
  size_t junk_unknown;   /* qrels: junk lines of queries the qrels lack, left out */
};

void slem_truth_free(SlemTruth *self) {
  if (!self) return;
  slem_strmap_free(self->qmap);
  slem_strmap_free(self->dmap);
  slem_keyset_free(self->rel);
  slem_keyset_free(self->junk);
  free(self->nrel);
  free(self->jud);
  free(self->joff);
  free(self->qlab);
  free(self->dlab);
  free(self->lab_count);
  free(self->junk_rel);
  free(self->junk_n);
  free(self);
}

static SlemTruth *truth_new(int labels) {
  SlemTruth *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->labels = labels;
  t->qmap = slem_strmap_new();
  t->dmap = slem_strmap_new();
  t->junk = slem_keyset_new();
  t->rel = labels ? NULL : slem_keyset_new();
  if (!t->qmap || !t->dmap || !t->junk || (!labels && !t->rel)) {
    slem_truth_free(t);
    return NULL;
  }
  return t;
}

/* Grows a per-query array of size_t to hold index i. */
static int ensure(size_t **a, size_t *cap, size_t i) {
  if (i < *cap) return 0;
  {
    size_t n = *cap ? *cap : 256;
    size_t *p;
    while (n <= i) n *= 2;
    p = realloc(*a, n * sizeof *p);
    if (!p) return -1;
    memset(p + *cap, 0, (n - *cap) * sizeof *p);
    *a = p;
    *cap = n;
  }
  return 0;
}

static int by_query_doc_seq(const void *a, const void *b) {
  const Judg *x = a, *y = b;
  if (x->q != y->q) return x->q < y->q ? -1 : 1;
  if (x->doc != y->doc) return x->doc < y->doc ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts the judgements by query and document, keeps one per pair (the first line with a
 * grade >= 1, which makes the pair relevant, else the first line), and indexes the queries.
 * strict: a pair judged twice is an error naming the first line that judges a pair again
 * (*dup gets that line's judgement and returns 1). -1 when out of memory. */
static int index_judgements(SlemTruth *t, int strict, Judg *dup) {
  size_t nq = slem_strmap_count(t->qmap), n = 0;
  int found = 0;
  if (!(t->joff = calloc(nq + 1, sizeof *t->joff))) return -1;
  if (t->njud) qsort(t->jud, t->njud, sizeof *t->jud, by_query_doc_seq);
  for (size_t i = 0; i < t->njud;) {
    size_t j = i, pick = i;
    while (j < t->njud && t->jud[j].q == t->jud[i].q && t->jud[j].doc == t->jud[i].doc) j++;
    if (strict && j - i > 1 && (!found || t->jud[i + 1].line < dup->line)) {
      *dup = t->jud[i + 1];
      found = 1;
    }
    for (size_t k = i; k < j; k++)
      if (t->jud[k].grade >= 1) {
        pick = k;
        break;
      }
    t->jud[n++] = t->jud[pick];
    i = j;
  }
  t->njud = n;
  for (size_t i = 0; i < n; i++) t->joff[t->jud[i].q + 1]++;
  for (size_t q = 0; q < nq; q++) t->joff[q + 1] += t->joff[q];
  return found;
}

int slem_truth_read_qrels(SlemTruth **self, const char *path, SlemError *err) {
  return slem_truth_read_graded(self, path, 0, err);
}

int slem_truth_read_graded(SlemTruth **self, const char *path, int strict, SlemError *err) {
  SlemTruth *t = truth_new(0);
  Judg dup;
  int ix;
  SlemLines *in = NULL;
  size_t cap = 0;
  int st;
  *self = NULL;
  if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_lines_open(&in, path, err);
  if (st) goto fail;
  for (;;) {
    char *f[6], *line;
    size_t nf, len;
    long qi, di, rel;
    char *end;
    st = slem_lines_next(in, &line, &len, err);
    if (st) goto fail;
    if (!line) break;
    /* a comment, as trec_eval skips it: '#' first on the line */
    if (line[0] == '#' || (nf = slem_lines_split(line, " \t", 1, f, 6)) == 0) continue;
    if (nf != 4) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 4 (qid iter "
                      "docno rel)", slem_lines_name(in), slem_lines_number(in), nf);
      goto fail;
    }
    errno = 0;
    rel = strtol(f[3], &end, 10);
    if (end == f[3] || *end || errno) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": relevance '%s' is not a whole "
                      "number", slem_lines_name(in), slem_lines_number(in), f[3]);
      goto fail;
    }
    qi = slem_strmap_intern(t->qmap, f[0], strlen(f[0]));
    di = slem_strmap_intern(t->dmap, f[2], strlen(f[2]));
    if (qi < 0 || di < 0 || ensure(&t->nrel, &cap, (size_t)qi) != 0) goto nomem;
    if (t->njud == t->cjud) {
      size_t c = t->cjud ? 2 * t->cjud : 1024;
      Judg *p = realloc(t->jud, c * sizeof *p);
      if (!p) goto nomem;
      t->jud = p;
      t->cjud = c;
    }
    t->jud[t->njud].q = (size_t)qi;
    t->jud[t->njud].doc = (size_t)di;
    t->jud[t->njud].seq = t->njud;
    t->jud[t->njud].line = slem_lines_number(in);
    t->jud[t->njud++].grade = rel;
    if (rel >= 1) {
      int added = slem_keyset_add(t->rel, slem_pair((size_t)qi, (size_t)di));
      if (added < 0) goto nomem;
      t->nrel[qi] += (size_t)added;
    }
  }
  if (slem_strmap_count(t->qmap) == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no judgements (empty file)", slem_lines_name(in));
    goto fail;
  }
  t->junk_rel = calloc(slem_strmap_count(t->qmap), sizeof *t->junk_rel);
  t->junk_n = calloc(slem_strmap_count(t->qmap), sizeof *t->junk_n);
  if (!t->junk_rel || !t->junk_n || (ix = index_judgements(t, strict, &dup)) < 0) goto nomem;
  if (ix) {
    st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": document '%s' judged twice for "
                    "topic '%s'", slem_lines_name(in), dup.line, slem_strmap_get(t->dmap, dup.doc),
                    slem_strmap_get(t->qmap, dup.q));
    goto fail;
  }
  slem_lines_free(in);
  *self = t;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_lines_free(in);
  slem_truth_free(t);
  return st;
}

/* Interns the ids of n rows (from an ids file, or "0".."n-1") into map; duplicates are
 * errors. */
static int intern_rows(SlemStrMap *map, const char *ids_path, size_t n, const char *what,
                       SlemError *err) {
  SlemIds *ids = NULL;
  int st = SLEM_OK;
  if (ids_path) {
    st = slem_ids_read(&ids, ids_path, err);
    if (st) return st;
    if (slem_ids_count(ids) != n) {
      st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %zu %s labels", ids_path,
                      slem_ids_count(ids), n, what);
      goto done;
    }
  }
  for (size_t i = 0; i < n; i++) {
    char buf[24];
    const char *s = buf;
    long k;
    if (ids) s = slem_ids_get(ids, i);
    else snprintf(buf, sizeof buf, "%zu", i);
    k = slem_strmap_intern(map, s, strlen(s));
    if (k < 0) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto done;
    }
    if ((size_t)k != i) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %zu: id '%s' appears twice", ids_path, i + 1, s);
      goto done;
    }
  }
done:
  slem_ids_free(ids);
  return st;
}

/* The labels of one side (db 0: the queries, 1: the database), row i's as text in buf
 * (24 bytes) or in the source's own storage. */
typedef const char *(*LabelFn)(const void *src, int db, size_t i, char *buf);

/* The ground truth of nq query and nd database labels (label() gives them), the rows named
 * by the ids files qids / dbids or by their numbers: what slem_truth_read_labels() and
 * slem_truth_from_labels() share. */
static int labels_truth(SlemTruth **self, size_t nq, size_t nd, LabelFn label, const void *src,
                        const char *qids, const char *dbids, int exclude_self, SlemError *err) {
  SlemTruth *t = truth_new(1);
  SlemStrMap *labmap = slem_strmap_new();
  size_t nlab;
  char buf[24];
  int st;
  *self = NULL;
  if (!t || !labmap) goto nomem;
  if ((st = intern_rows(t->qmap, qids, nq, "query", err)) != SLEM_OK ||
      (st = intern_rows(t->dmap, dbids, nd, "database", err)) != SLEM_OK)
    goto fail;
  t->qlab = malloc((nq ? nq : 1) * sizeof *t->qlab);
  t->dlab = malloc((nd ? nd : 1) * sizeof *t->dlab);
  t->junk_rel = calloc(nq ? nq : 1, sizeof *t->junk_rel);
  t->junk_n = calloc(nq ? nq : 1, sizeof *t->junk_n);
  if (!t->qlab || !t->dlab || !t->junk_rel || !t->junk_n) goto nomem;
  for (size_t i = 0; i < nd; i++) {
    const char *s = label(src, 1, i, buf);
    if ((t->dlab[i] = slem_strmap_intern(labmap, s, strlen(s))) < 0) goto nomem;
  }
  for (size_t i = 0; i < nq; i++) {
    const char *s = label(src, 0, i, buf);
    if ((t->qlab[i] = slem_strmap_intern(labmap, s, strlen(s))) < 0) goto nomem;
  }
  nlab = slem_strmap_count(labmap);
  t->lab_count = calloc(nlab ? nlab : 1, sizeof *t->lab_count);
  if (!t->lab_count) goto nomem;
  for (size_t i = 0; i < nd; i++) t->lab_count[t->dlab[i]]++;
  if (exclude_self)
    for (size_t i = 0; i < nq && i < nd; i++) {
      if (slem_keyset_add(t->junk, slem_pair(i, i)) < 0) goto nomem;
      if (t->qlab[i] == t->dlab[i]) t->junk_rel[i]++;
      t->junk_n[i]++;
    }
  slem_strmap_free(labmap);
  *self = t;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_strmap_free(labmap);
  slem_truth_free(t);
  return st;
}

/* Label files: src is their two lists of ids. */
static const char *file_label(const void *src, int db, size_t i, char *buf) {
  const SlemIds *const *lists = src;
  (void)buf;
  return slem_ids_get(lists[db], i);
}

int slem_truth_read_labels(SlemTruth **self, const char *qlabels, const char *dblabels,
                           const char *qids, const char *dbids, int exclude_self,
                           SlemError *err) {
  SlemIds *lists[2] = {NULL, NULL};
  int st;
  *self = NULL;
  if ((st = slem_ids_labels_read(&lists[0], qlabels, err)) == SLEM_OK &&
      (st = slem_ids_labels_read(&lists[1], dblabels, err)) == SLEM_OK)
    st = labels_truth(self, slem_ids_count(lists[0]), slem_ids_count(lists[1]), file_label,
                      (const void *)lists, qids, dbids, exclude_self, err);
  slem_ids_free(lists[0]);
  slem_ids_free(lists[1]);
  return st;
}

/* Label arrays: src is their two pointers. */
static const char *array_label(const void *src, int db, size_t i, char *buf) {
  const int64_t *const *arrays = src;
  snprintf(buf, 24, "%" PRId64, arrays[db][i]);
  return buf;
}

int slem_truth_from_labels(SlemTruth **self, const int64_t *qlabels, size_t nq,
                           const int64_t *dblabels, size_t nd, SlemError *err) {
  const int64_t *arrays[2] = {qlabels, dblabels};
  *self = NULL;
  if ((nq && !qlabels) || (nd && !dblabels))
    return slem_error(err, SLEM_EINVAL, "%s labels: NULL", nq && !qlabels ? "query" : "database");
  return labels_truth(self, nq, nd, array_label, arrays, NULL, NULL, 0, err);
}

int slem_truth_relevant(const SlemTruth *self, size_t q, size_t d) {
  if (self->labels) return self->qlab[q] == self->dlab[d];
  return slem_keyset_has(self->rel, slem_pair(q, d));
}

int slem_truth_junk(const SlemTruth *self, size_t q, size_t d) {
  return slem_keyset_has(self->junk, slem_pair(q, d));
}

size_t slem_truth_nrel(const SlemTruth *self, size_t q) {
  size_t base = self->labels ? self->lab_count[self->qlab[q]] : self->nrel[q];
  return base - self->junk_rel[q];
}

long slem_truth_rel(const SlemTruth *self, size_t q, long d) {
  size_t lo, hi;
  if (self->labels) return d >= 0 && self->qlab[q] == self->dlab[d];
  if (d < 0) return SLEM_UNJUDGED;
  lo = self->joff[q];
  hi = self->joff[q + 1];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (self->jud[mid].doc < (size_t)d) lo = mid + 1;
    else hi = mid;
  }
  if (lo == self->joff[q + 1] || self->jud[lo].doc != (size_t)d) return SLEM_UNJUDGED;
  return self->jud[lo].grade < 0 ? SLEM_POOLED : self->jud[lo].grade;
}

size_t slem_truth_nnonrel(const SlemTruth *self, size_t q) {
  size_t n = 0;
  if (self->labels)
    return slem_strmap_count(self->dmap) - self->lab_count[self->qlab[q]] -
           (self->junk_n[q] - self->junk_rel[q]);
  for (size_t i = self->joff[q]; i < self->joff[q + 1]; i++)
    n += self->jud[i].grade == 0 && !slem_truth_junk(self, q, self->jud[i].doc);
  return n;
}

static int by_gain_desc(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x > y ? -1 : x < y;
}

size_t slem_truth_max_gains(const SlemTruth *self, size_t q) {
  if (self->labels) return slem_truth_nrel(self, q);
  return self->joff[q + 1] - self->joff[q];
}

size_t slem_truth_gains(const SlemTruth *self, size_t q, long *gains) {
  size_t n = 0;
  if (self->labels) {
    n = slem_truth_nrel(self, q);
    for (size_t i = 0; i < n; i++) gains[i] = 1;
    return n;
  }
  for (size_t i = self->joff[q]; i < self->joff[q + 1]; i++)
    if (self->jud[i].grade > 0 && !slem_truth_junk(self, q, self->jud[i].doc))
      gains[n++] = self->jud[i].grade;
  if (n > 1) qsort(gains, n, sizeof *gains, by_gain_desc);
  return n;
}

size_t slem_truth_njudged(const SlemTruth *self, size_t q) {
  return self->labels ? 0 : self->joff[q + 1] - self->joff[q];
}

void slem_truth_judgement(const SlemTruth *self, size_t q, size_t i, const char **docno,
                          long *grade, uint64_t *line) {
  const Judg *j = self->jud + self->joff[q] + i;
  *docno = slem_strmap_get(self->dmap, j->doc);
  *grade = j->grade;
  if (line) *line = j->line;
}

size_t slem_truth_queries(const SlemTruth *self) { return slem_strmap_count(self->qmap); }

const char *slem_truth_query(const SlemTruth *self, size_t q) { return slem_strmap_get(self->qmap, q); }

long slem_truth_find_query(const SlemTruth *self, const char *s) {
  return slem_strmap_find(self->qmap, s, strlen(s));
}

long slem_truth_find_doc(const SlemTruth *self, const char *s) {
  return slem_strmap_find(self->dmap, s, strlen(s));
}

int slem_truth_knows_all_docs(const SlemTruth *self) { return self->labels; }

size_t slem_truth_junk_unknown(const SlemTruth *self) { return self->junk_unknown; }

int slem_truth_read_junk(SlemTruth *self, const char *path, SlemError *err) {
  SlemLines *in = NULL;
  int st = slem_lines_open(&in, path, err);
  if (st) return st;
  for (;;) {
    char *f[3];
    size_t nf;
    long qi, di;
    int added;
    st = slem_lines_fields(in, f, 3, &nf, err);
    if (st || nf == 0) break;
    if (nf != 2) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 2 (query id, "
                      "junk id)", slem_lines_name(in), slem_lines_number(in), nf);
      break;
    }
    qi = slem_strmap_find(self->qmap, f[0], strlen(f[0]));
    if (qi < 0 && !self->labels) { /* qrels: a query without judgements, as trec_eval skips it */
      self->junk_unknown++;
      continue;
    }
    if (qi < 0) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' is not in the ground "
                      "truth", slem_lines_name(in), slem_lines_number(in), f[0]);
      break;
    }
    di = self->labels ? slem_strmap_find(self->dmap, f[1], strlen(f[1]))
                      : slem_strmap_intern(self->dmap, f[1], strlen(f[1]));
    if (di < 0) {
      st = self->labels ? slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": '%s' is not a "
                                     "database id", slem_lines_name(in), slem_lines_number(in), f[1])
                        : slem_error(err, SLEM_ENOMEM, "out of memory");
      break;
    }
    added = slem_keyset_add(self->junk, slem_pair((size_t)qi, (size_t)di));
    if (added < 0) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      break;
    }
    if (added && slem_truth_relevant(self, (size_t)qi, (size_t)di)) self->junk_rel[qi]++;
    self->junk_n[qi] += (size_t)added;
  }
  slem_lines_free(in);
  return st;
}

int slem_truth_read_neighbors(SlemTruth **self, const char *path, size_t k, const char *qids,
                              const char *dbids, SlemError *err) {
  SlemTruth *t = truth_new(0);
  SlemVecReader *r = NULL;
  SlemIds *qi = NULL, *di = NULL;
  double *x = NULL;
  size_t d, block, cap = 0;
  uint64_t row = 0;
  int st;
  *self = NULL;
  if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_vecreader_open(&r, path, SLEM_FMT_AUTO, err)) != SLEM_OK ||
      (qids && (st = slem_ids_read(&qi, qids, err)) != SLEM_OK) ||
      (dbids && (st = slem_ids_read(&di, dbids, err)) != SLEM_OK))
    goto fail;
  /* row numbers are integers: a float file (ann-benchmarks' FILE:distances beside
   * FILE:neighbors, fvecs) is not read as rows, whatever its values */
  if (slem_vecreader_integers(r) == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: floating-point values: --neighbors takes the "
                    "neighbours' row numbers, stored as integers (ann-benchmarks' FILE:neighbors, "
                    "not FILE:distances; ivecs, ibin, an integer npy)", path);
    goto fail;
  }
  d = slem_vecreader_dim(r);
  if (k > d) {
    st = slem_error(err, SLEM_EINVAL, "%s: %zu neighbours per query, fewer than the %zu of "
                    "recall@%zu", slem_vecreader_name(r), d, k, k);
    goto fail;
  }
  block = slem_block_rows(d);
  if (!(x = malloc(block * d * sizeof *x))) goto nomem;
  for (;;) {
    size_t got;
    if ((st = slem_vecreader_read(r, x, block, &got, err)) != SLEM_OK) goto fail;
    if (got == 0) break;
    for (size_t i = 0; i < got; i++, row++) {
      char qb[24], db[24];
      const char *qs = qb;
      long q;
      if (qi && row >= slem_ids_count(qi)) {
        st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for more queries", qids,
                        slem_ids_count(qi));
        goto fail;
      }
      if (qi) qs = slem_ids_get(qi, row);
      else snprintf(qb, sizeof qb, "%" PRIu64, row);
      if ((q = slem_strmap_intern(t->qmap, qs, strlen(qs))) < 0 ||
          ensure(&t->nrel, &cap, (size_t)q) != 0)
        goto nomem;
      for (size_t j = 0; j < k; j++) {
        double v = x[i * d + j];
        const char *ds = db;
        long dd;
        int added;
        if (v != (double)(int64_t)v || v < 0 || (di && v >= (double)slem_ids_count(di))) {
          st = slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": neighbour %zu (%.17g) is "
                          "not a database row number%s", slem_vecreader_name(r), row + 1, j + 1,
                          v, di ? " of the --db-ids" : "");
          goto fail;
        }
        if (di) ds = slem_ids_get(di, (size_t)v);
        else snprintf(db, sizeof db, "%" PRId64, (int64_t)v);
        if ((dd = slem_strmap_intern(t->dmap, ds, strlen(ds))) < 0) goto nomem;
        if ((added = slem_keyset_add(t->rel, slem_pair((size_t)q, (size_t)dd))) < 0) goto nomem;
        if (!added) {
          st = slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": row %s is a neighbour "
                          "twice", slem_vecreader_name(r), row + 1, ds);
          goto fail;
        }
        t->nrel[q]++;
        if (t->njud == t->cjud) {
          size_t c = t->cjud ? 2 * t->cjud : 1024;
          Judg *p = realloc(t->jud, c * sizeof *p);
          if (!p) goto nomem;
          t->jud = p;
          t->cjud = c;
        }
        t->jud[t->njud] = (Judg){(size_t)q, (size_t)dd, t->njud, row + 1, 1};
        t->njud++;
      }
    }
  }
  if (slem_strmap_count(t->qmap) == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no queries", path);
    goto fail;
  }
  if (qi && row != slem_ids_count(qi)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %" PRIu64 " queries", qids,
                    slem_ids_count(qi), row);
    goto fail;
  }
  if (!(t->junk_rel = calloc(slem_strmap_count(t->qmap), sizeof *t->junk_rel)) ||
      !(t->junk_n = calloc(slem_strmap_count(t->qmap), sizeof *t->junk_n)))
    goto nomem;
  if (index_judgements(t, 0, NULL) < 0) goto nomem;
  *self = t;
  t = NULL;
  goto done;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_truth_free(t);
done:
  free(x);
  slem_vecreader_free(r);
  slem_ids_free(qi);
  slem_ids_free(di);
  return st;
}

int slem_truth_check(const SlemTruthSpec *s, int protocol, const char *easy, const char *hard,
                     int with_neighbors, SlemError *err) {
  int labels = s->qlabels || s->dblabels;
  if (!protocol && (easy || hard))
    return slem_error(err, SLEM_EINVAL, "--easy and --hard go with --protocol");
  if (protocol) {
    if (!s->qrels == !(easy || hard))
      return slem_error(err, SLEM_EINVAL, "--protocol needs the positives: --easy F and --hard F, "
                        "or graded --qrels");
    if (labels) return slem_error(err, SLEM_EINVAL, "--protocol takes no labels");
    if (s->qrels && s->njunk)
      return slem_error(err, SLEM_EINVAL, "--protocol with --qrels: junk is grade -1 there");
  } else if (s->neighbors) {
    if (s->qrels || labels || s->exclude_self)
      return slem_error(err, SLEM_EINVAL, "--neighbors is the ground truth alone: no --qrels, "
                        "labels or --exclude-self");
  } else {
    if (!s->qrels == !labels)
      return slem_error(err, SLEM_EINVAL, with_neighbors
                        ? "give the ground truth as --qrels, --query-labels and --db-labels, or "
                          "--neighbors"
                        : "give the ground truth as --qrels, or as --query-labels and --db-labels");
    if (!s->qrels && !(s->qlabels && s->dblabels))
      return slem_error(err, SLEM_EINVAL, "--query-labels and --db-labels go together");
  }
  if (s->qrels && (s->qids || s->dbids || s->exclude_self))
    return slem_error(err, SLEM_EINVAL, "--query-ids, --db-ids and --exclude-self go with labels, "
                      "not --qrels");
  return SLEM_OK;
}

int slem_truth_read(SlemTruth **self, const SlemTruthSpec *spec, SlemError *err) {
  int st;
  *self = NULL;
  if ((st = slem_truth_check(spec, 0, NULL, NULL, 1, err)) != SLEM_OK) return st;
  if (spec->neighbors)
    st = slem_truth_read_neighbors(self, spec->neighbors, spec->neighbors_k, spec->qids,
                                   spec->dbids, err);
  else
    st = spec->qrels ? slem_truth_read_qrels(self, spec->qrels, err)
                     : slem_truth_read_labels(self, spec->qlabels, spec->dblabels, spec->qids,
                                              spec->dbids, spec->exclude_self, err);
  for (size_t i = 0; st == SLEM_OK && i < spec->njunk; i++)
    st = slem_truth_read_junk(*self, spec->junk[i], err);
  if (st) {
    slem_truth_free(*self);
    *self = NULL;
  }
  return st;
}

size_t slem_truth_docs(const SlemTruth *self) { return slem_strmap_count(self->dmap); }

const char *slem_truth_doc(const SlemTruth *self, size_t d) { return slem_strmap_get(self->dmap, d); }

#define _POSIX_C_SOURCE 200809L
#include "eval.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "io.h"
#include "strmap.h"

double slem_ap(SlemApKind kind, const unsigned char *rel, size_t n, size_t nrel) {
  double ap = 0, r_prev = 0, p_prev = 1;
  size_t hits = 0;
  if (nrel == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    if (rel[i]) hits++;
    if (kind == SLEM_AP_TREC) {
      if (rel[i]) ap += (double)hits / (double)(i + 1);
    } else {
      double r = (double)hits / (double)nrel, p = (double)hits / (double)(i + 1);
      ap += (r - r_prev) * (p_prev + p) / 2;
      r_prev = r;
      p_prev = p;
    }
  }
  return kind == SLEM_AP_TREC ? ap / (double)nrel : ap;
}

/* ---- rankings ---- */

typedef struct Entry {
  long rank;
  double score;
  size_t doc;     /* index in the run's document map */
  uint64_t line;
} Entry;

typedef struct RunQuery {
  Entry *e;
  size_t n, cap;
  uint64_t line;  /* first line of the query */
} RunQuery;

struct SlemRun {
  char *name;
  SlemStrMap *qmap, *dmap;
  RunQuery *q;
  size_t qcap;
};

void slem_run_free(SlemRun *self) {
  if (!self) return;
  for (size_t i = 0; self->q && i < slem_strmap_count(self->qmap); i++) free(self->q[i].e);
  free(self->q);
  slem_strmap_free(self->qmap);
  slem_strmap_free(self->dmap);
  free(self->name);
  free(self);
}

size_t slem_run_queries(const SlemRun *self) { return slem_strmap_count(self->qmap); }

/* Splits line in place at any of seps; returns the field count (at most max). */
static size_t split(char *line, const char *seps, int collapse, char **f, size_t max) {
  size_t n = 0;
  char *p = line;
  if (collapse)
    while (*p && strchr(seps, *p)) p++;
  if (!*p) return 0;
  for (;;) {
    char *end = p + strcspn(p, seps);
    if (n < max) f[n] = p;
    n++;
    if (!*end) break;
    *end = '\0';
    p = end + 1;
    if (collapse) {
      while (*p && strchr(seps, *p)) p++;
      if (!*p) break;
    }
  }
  return n;
}

static int add_entry(SlemRun *run, SlemKeySet *seen, const char *q, const char *doc, long rank,
                     double score, uint64_t line, SlemError *err) {
  long qi = slem_strmap_intern(run->qmap, q, strlen(q));
  long di = slem_strmap_intern(run->dmap, doc, strlen(doc));
  RunQuery *rq;
  int added;
  if (qi < 0 || di < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((size_t)qi >= run->qcap) {
    size_t cap = run->qcap ? 2 * run->qcap : 256;
    RunQuery *p = realloc(run->q, cap * sizeof *p);
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    memset(p + run->qcap, 0, (cap - run->qcap) * sizeof *p);
    run->q = p;
    run->qcap = cap;
  }
  rq = run->q + qi;
  if (rq->n == 0 && rq->line == 0) rq->line = line;
  added = slem_keyset_add(seen, slem_pair((size_t)qi, (size_t)di));
  if (added < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (added == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' appears twice for query '%s'",
                      run->name, line, doc, q);
  if (rq->n == rq->cap) {
    size_t cap = rq->cap ? 2 * rq->cap : 16;
    Entry *p = realloc(rq->e, cap * sizeof *p);
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    rq->e = p;
    rq->cap = cap;
  }
  rq->e[rq->n].rank = rank;
  rq->e[rq->n].score = score;
  rq->e[rq->n].doc = (size_t)di;
  rq->e[rq->n].line = line;
  rq->n++;
  return SLEM_OK;
}

static int parse_rank(const char *s, long *out) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < 1) return -1;
  *out = v;
  return 0;
}

static int parse_score(const char *s, double *out) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (end == s || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

enum { FMT_TSV, FMT_TREC, FMT_JSONL };

static int parse_line(SlemRun *run, SlemKeySet *seen, int fmt, char *line, uint64_t ln,
                      SlemError *err) {
  char *f[8];
  size_t nf;
  long rank;
  double score;
  if (fmt == FMT_JSONL) {
    cJSON *o = cJSON_Parse(line), *q, *res, *h;
    long pos = 0;
    int st = SLEM_OK;
    if (!o || !cJSON_IsObject(o)) {
      cJSON_Delete(o);
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": not a JSON object", run->name, ln);
    }
    q = cJSON_GetObjectItemCaseSensitive(o, "query");
    res = cJSON_GetObjectItemCaseSensitive(o, "results");
    if (!cJSON_IsString(q) || !cJSON_IsArray(res)) {
      cJSON_Delete(o);
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": needs a string \"query\" and an "
                        "array \"results\"", run->name, ln);
    }
    cJSON_ArrayForEach(h, res) {
      cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "id");
      cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "score");
      cJSON *rk = cJSON_GetObjectItemCaseSensitive(h, "rank");
      pos++;
      if (!cJSON_IsString(id) || !cJSON_IsNumber(sc) || (rk && !cJSON_IsNumber(rk))) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": result %ld needs a string \"id\" "
                        "and a number \"score\"", run->name, ln, pos);
        break;
      }
      st = add_entry(run, seen, q->valuestring, id->valuestring,
                     rk ? (long)rk->valuedouble : pos, sc->valuedouble, ln, err);
      if (st) break;
    }
    cJSON_Delete(o);
    return st;
  }
  {
    /* tsv: query rank id score, tabs; trec: qid Q0 docno rank score tag, white space */
    int tsv = fmt == FMT_TSV;
    size_t want = tsv ? 4 : 6, irank = tsv ? 1 : 3, iscore = tsv ? 3 : 4;
    nf = tsv ? split(line, "\t", 0, f, 8) : split(line, " \t", 1, f, 8);
    if (nf != want)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected %zu (%s)",
                        run->name, ln, nf, want,
                        tsv ? "query, rank, id, score, separated by tabs"
                            : "qid Q0 docno rank score tag");
    if (parse_rank(f[irank], &rank) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": rank '%s' is not a positive whole "
                        "number", run->name, ln, f[irank]);
    if (parse_score(f[iscore], &score) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score '%s' is not a number",
                        run->name, ln, f[iscore]);
    return add_entry(run, seen, f[0], f[2], rank, score, ln, err);
  }
}

int slem_run_read(SlemRun **self, const char *path, const char *format, SlemError *err) {
  SlemRun *run = calloc(1, sizeof *run);
  SlemKeySet *seen = slem_keyset_new();
  SlemIn *in = NULL;
  int st, fmt = -1;
  uint64_t ln = 0;
  *self = NULL;
  if (!run || !seen || !(run->qmap = slem_strmap_new()) || !(run->dmap = slem_strmap_new())) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto fail;
  }
  if (format) {
    if (strcmp(format, "tsv") == 0) fmt = FMT_TSV;
    else if (strcmp(format, "trec") == 0) fmt = FMT_TREC;
    else if (strcmp(format, "jsonl") == 0) fmt = FMT_JSONL;
    else {
      st = slem_error(err, SLEM_EINVAL, "unknown ranking format '%s' (tsv, trec, jsonl)", format);
      goto fail;
    }
  }
  st = slem_in_open(&in, path, err);
  if (st) goto fail;
  run->name = strdup(slem_in_name(in));
  if (!run->name) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto fail;
  }
  for (;;) {
    char *line;
    size_t len;
    st = slem_in_getline(in, &line, &len, err);
    if (st) goto fail;
    if (!line) break;
    ln++;
    if (strspn(line, " \t") == len) continue;
    if (fmt < 0) {
      if (line[strspn(line, " \t")] == '{') fmt = FMT_JSONL;
      else if (strchr(line, '\t') && !strchr(line, ' ')) fmt = FMT_TSV;
      else fmt = FMT_TREC;
    }
    st = parse_line(run, seen, fmt, line, ln, err);
    if (st) goto fail;
  }
  if (slem_strmap_count(run->qmap) == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no rankings (empty file)", run->name);
    goto fail;
  }
  slem_in_free(in);
  slem_keyset_free(seen);
  *self = run;
  return SLEM_OK;
fail:
  slem_in_free(in);
  slem_keyset_free(seen);
  slem_run_free(run);
  return st;
}

/* ---- ground truth ---- */

struct SlemTruth {
  int labels;            /* 1: labels, 0: qrels */
  SlemStrMap *qmap, *dmap;
  /* qrels */
  SlemKeySet *rel;
  size_t *nrel;          /* per query */
  /* labels */
  long *qlab, *dlab;     /* per query row, per database row */
  size_t *lab_count;     /* database rows per label */
  /* junk */
  SlemKeySet *junk;
  size_t *junk_rel;      /* per query: junk documents that were relevant */
};

void slem_truth_free(SlemTruth *self) {
  if (!self) return;
  slem_strmap_free(self->qmap);
  slem_strmap_free(self->dmap);
  slem_keyset_free(self->rel);
  slem_keyset_free(self->junk);
  free(self->nrel);
  free(self->qlab);
  free(self->dlab);
  free(self->lab_count);
  free(self->junk_rel);
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

int slem_truth_read_qrels(SlemTruth **self, const char *path, SlemError *err) {
  SlemTruth *t = truth_new(0);
  SlemIn *in = NULL;
  size_t cap = 0;
  uint64_t ln = 0;
  int st;
  *self = NULL;
  if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_open(&in, path, err);
  if (st) goto fail;
  for (;;) {
    char *line, *f[6];
    size_t len, nf;
    long qi, di, rel;
    char *end;
    st = slem_in_getline(in, &line, &len, err);
    if (st) goto fail;
    if (!line) break;
    ln++;
    nf = split(line, " \t", 1, f, 6);
    if (nf == 0) continue;
    if (nf != 4) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 4 (qid iter "
                      "docno rel)", slem_in_name(in), ln, nf);
      goto fail;
    }
    errno = 0;
    rel = strtol(f[3], &end, 10);
    if (end == f[3] || *end || errno) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": relevance '%s' is not a whole "
                      "number", slem_in_name(in), ln, f[3]);
      goto fail;
    }
    qi = slem_strmap_intern(t->qmap, f[0], strlen(f[0]));
    di = slem_strmap_intern(t->dmap, f[2], strlen(f[2]));
    if (qi < 0 || di < 0 || ensure(&t->nrel, &cap, (size_t)qi) != 0) goto nomem;
    if (rel >= 1) {
      int added = slem_keyset_add(t->rel, slem_pair((size_t)qi, (size_t)di));
      if (added < 0) goto nomem;
      t->nrel[qi] += (size_t)added;
    }
  }
  if (slem_strmap_count(t->qmap) == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no judgements (empty file)", slem_in_name(in));
    goto fail;
  }
  t->junk_rel = calloc(slem_strmap_count(t->qmap), sizeof *t->junk_rel);
  if (!t->junk_rel) goto nomem;
  slem_in_free(in);
  *self = t;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_in_free(in);
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

int slem_truth_read_labels(SlemTruth **self, const char *qlabels, const char *dblabels,
                           const char *qids, const char *dbids, int exclude_self,
                           SlemError *err) {
  SlemTruth *t = truth_new(1);
  SlemIds *ql = NULL, *dl = NULL;
  SlemStrMap *labmap = slem_strmap_new();
  size_t nq, nd, nlab;
  int st;
  *self = NULL;
  if (!t || !labmap) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto fail;
  }
  if ((st = slem_ids_read(&ql, qlabels, err)) != SLEM_OK ||
      (st = slem_ids_read(&dl, dblabels, err)) != SLEM_OK)
    goto fail;
  nq = slem_ids_count(ql);
  nd = slem_ids_count(dl);
  if ((st = intern_rows(t->qmap, qids, nq, "query", err)) != SLEM_OK ||
      (st = intern_rows(t->dmap, dbids, nd, "database", err)) != SLEM_OK)
    goto fail;
  t->qlab = malloc(nq * sizeof *t->qlab);
  t->dlab = malloc(nd * sizeof *t->dlab);
  t->junk_rel = calloc(nq, sizeof *t->junk_rel);
  if (!t->qlab || !t->dlab || !t->junk_rel) goto nomem;
  for (size_t i = 0; i < nd; i++) {
    const char *s = slem_ids_get(dl, i);
    if ((t->dlab[i] = slem_strmap_intern(labmap, s, strlen(s))) < 0) goto nomem;
  }
  for (size_t i = 0; i < nq; i++) {
    const char *s = slem_ids_get(ql, i);
    if ((t->qlab[i] = slem_strmap_intern(labmap, s, strlen(s))) < 0) goto nomem;
  }
  nlab = slem_strmap_count(labmap);
  t->lab_count = calloc(nlab, sizeof *t->lab_count);
  if (!t->lab_count) goto nomem;
  for (size_t i = 0; i < nd; i++) t->lab_count[t->dlab[i]]++;
  if (exclude_self)
    for (size_t i = 0; i < nq && i < nd; i++) {
      if (slem_keyset_add(t->junk, slem_pair(i, i)) < 0) goto nomem;
      if (t->qlab[i] == t->dlab[i]) t->junk_rel[i]++;
    }
  slem_ids_free(ql);
  slem_ids_free(dl);
  slem_strmap_free(labmap);
  *self = t;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_ids_free(ql);
  slem_ids_free(dl);
  slem_strmap_free(labmap);
  slem_truth_free(t);
  return st;
}

static int relevant(const SlemTruth *t, size_t q, size_t d) {
  if (t->labels) return t->qlab[q] == t->dlab[d];
  return slem_keyset_has(t->rel, slem_pair(q, d));
}

static size_t nrel_of(const SlemTruth *t, size_t q) {
  size_t base = t->labels ? t->lab_count[t->qlab[q]] : t->nrel[q];
  return base - t->junk_rel[q];
}

int slem_truth_read_junk(SlemTruth *self, const char *path, SlemError *err) {
  SlemIn *in = NULL;
  uint64_t ln = 0;
  int st = slem_in_open(&in, path, err);
  if (st) return st;
  for (;;) {
    char *line, *f[3];
    size_t len, nf;
    long qi, di;
    int added;
    st = slem_in_getline(in, &line, &len, err);
    if (st || !line) break;
    ln++;
    nf = split(line, " \t", 1, f, 3);
    if (nf == 0) continue;
    if (nf != 2) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 2 (query id, "
                      "junk id)", slem_in_name(in), ln, nf);
      break;
    }
    qi = slem_strmap_find(self->qmap, f[0], strlen(f[0]));
    if (qi < 0) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' is not in the ground "
                      "truth", slem_in_name(in), ln, f[0]);
      break;
    }
    di = self->labels ? slem_strmap_find(self->dmap, f[1], strlen(f[1]))
                      : slem_strmap_intern(self->dmap, f[1], strlen(f[1]));
    if (di < 0) {
      st = self->labels ? slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": '%s' is not a "
                                     "database id", slem_in_name(in), ln, f[1])
                        : slem_error(err, SLEM_ENOMEM, "out of memory");
      break;
    }
    added = slem_keyset_add(self->junk, slem_pair((size_t)qi, (size_t)di));
    if (added < 0) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      break;
    }
    if (added && relevant(self, (size_t)qi, (size_t)di)) self->junk_rel[qi]++;
  }
  slem_in_free(in);
  return st;
}

/* ---- evaluation ---- */

void slem_eval_opts_init(SlemEvalOpts *opts) {
  opts->ap = SLEM_AP_TREC;
  opts->recall_k = 100;
  opts->curve_points = 11;
}

void slem_evalresult_free(SlemEvalResult *self) {
  if (!self) return;
  free(self->q);
  free(self->curve);
  free(self);
}

static int by_rank(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->line < y->line ? -1 : x->line > y->line;
}

static double prec_at(const unsigned char *rel, size_t n, size_t k) {
  size_t h = 0;
  for (size_t i = 0; i < n && i < k; i++) h += rel[i];
  return (double)h / (double)k;
}

/* Adds to curve the interpolated precision at points recall levels r_l = l/(points - 1):
 * the best precision at any relevant rank whose recall is at least r_l, that is the
 * best over the hits h >= ceil(r_l R); 0 when fewer hits were retrieved. best(n) is
 * scratch space. */
static void add_curve(double *curve, size_t points, const unsigned char *rel, size_t n,
                      size_t nrel, double *best) {
  size_t hits = 0;
  for (size_t i = 0; i < n; i++)
    if (rel[i]) {
      best[hits] = (double)(hits + 1) / (double)(i + 1);
      hits++;
    }
  for (size_t h = hits; h-- > 1;) /* suffix maximum */
    if (best[h] > best[h - 1]) best[h - 1] = best[h];
  for (size_t l = 0; l < points; l++) {
    double need = ceil((double)l / (double)(points - 1) * (double)nrel - 1e-9);
    size_t h = need < 1 ? 1 : (size_t)need;
    if (h <= hits) curve[l] += best[h - 1];
  }
}

int slem_evaluate(SlemEvalResult **out, const SlemRun *run, const SlemTruth *truth,
                  const SlemEvalOpts *opts, SlemError *err) {
  size_t nq = slem_strmap_count(truth->qmap), maxn = 0, counted = 0;
  SlemEvalResult *res = calloc(1, sizeof *res);
  unsigned char *rel = NULL;
  double *best = NULL;
  int st = SLEM_OK;
  *out = NULL;
  if (!res) return slem_error(err, SLEM_ENOMEM, "out of memory");
  res->nq = nq;
  res->curve_points = opts->curve_points < 2 ? 11 : opts->curve_points;
  res->q = calloc(nq, sizeof *res->q);
  res->curve = calloc(res->curve_points, sizeof *res->curve);
  for (size_t i = 0; i < slem_strmap_count(run->qmap); i++)
    if (run->q[i].n > maxn) maxn = run->q[i].n;
  rel = malloc(maxn + 1);
  best = malloc((maxn + 1) * sizeof *best);
  if (!res->q || !res->curve || !rel || !best) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t q = 0; q < nq; q++) {
    res->q[q].query = slem_strmap_get(truth->qmap, q);
    res->q[q].nrel = nrel_of(truth, q);
    res->q[q].status = res->q[q].nrel ? SLEM_Q_MISSING : SLEM_Q_SKIPPED;
  }
  for (size_t i = 0; i < slem_strmap_count(run->qmap); i++) {
    const char *qs = slem_strmap_get(run->qmap, i);
    long q = slem_strmap_find(truth->qmap, qs, strlen(qs));
    RunQuery *rq = run->q + i;
    SlemQueryResult *r;
    size_t n = 0;
    if (q < 0) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' is not in the ground truth",
                      run->name, rq->line, qs);
      goto done;
    }
    r = res->q + q;
    qsort(rq->e, rq->n, sizeof *rq->e, by_rank);
    for (size_t k = 0; k < rq->n; k++) {
      const char *ds = slem_strmap_get(run->dmap, rq->e[k].doc);
      long d = slem_strmap_find(truth->dmap, ds, strlen(ds));
      if (d < 0 && truth->labels) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": '%s' is not a database id of "
                        "the labels", run->name, rq->e[k].line, ds);
        goto done;
      }
      if (d >= 0 && slem_keyset_has(truth->junk, slem_pair((size_t)q, (size_t)d))) continue;
      rel[n++] = d >= 0 && relevant(truth, (size_t)q, (size_t)d);
    }
    r->nret = n;
    if (r->nrel == 0) continue;
    r->status = SLEM_Q_EVALUATED;
    r->ap = slem_ap(opts->ap, rel, n, r->nrel);
    r->p1 = prec_at(rel, n, 1);
    r->p5 = prec_at(rel, n, 5);
    r->p10 = prec_at(rel, n, 10);
    r->rk = prec_at(rel, n, opts->recall_k) * (double)opts->recall_k / (double)r->nrel;
    add_curve(res->curve, res->curve_points, rel, n, r->nrel, best);
  }
  for (size_t q = 0; q < nq; q++) {
    const SlemQueryResult *r = res->q + q;
    if (r->status == SLEM_Q_SKIPPED) {
      res->skipped++;
      continue;
    }
    if (r->status == SLEM_Q_MISSING) res->missing++;
    counted++;
    res->map += r->ap;
    res->p1 += r->p1;
    res->p5 += r->p5;
    res->p10 += r->p10;
    res->rk += r->rk;
  }
  res->evaluated = counted;
  if (counted) {
    res->map /= (double)counted;
    res->p1 /= (double)counted;
    res->p5 /= (double)counted;
    res->p10 /= (double)counted;
    res->rk /= (double)counted;
    for (size_t i = 0; i < res->curve_points; i++) res->curve[i] /= (double)counted;
  }
done:
  free(rel);
  free(best);
  if (st) {
    slem_evalresult_free(res);
    return st;
  }
  *out = res;
  return SLEM_OK;
}

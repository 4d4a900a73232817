#define _POSIX_C_SOURCE 200809L
#include "treceval.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "strmap.h"

/* The measures, in trec_eval's order of output. */
enum { M_NUM_Q, M_NUM_RET, M_NUM_REL, M_NUM_REL_RET, M_MAP, M_GM_MAP, M_RPREC, M_RECIP,
       M_IPREC, M_P, M_NDCG, M_COUNT };
static const char *const measure_names[M_COUNT] = {
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
    "iprec_at_recall", "P", "ndcg"};
#define MIN_GEO_MEAN 1e-5 /* trec_eval's floor for the geometric mean of AP */
#define MAX_CUTS 64

typedef struct Judg {
  size_t doc;
  long rel;
} Judg;

typedef struct Res {
  size_t doc;
  double score;
  uint64_t line;
  const char *docno; /* set when evaluating */
  long rel;
} Res;

typedef struct Topic {
  Judg *j;
  size_t nj, cj;
  Res *r;
  size_t nr, cr;
  int judged; /* in the qrels */
} Topic;

struct SlemTrecEval {
  SlemTrecOpts o;
  SlemStrMap *qids, *docs;
  SlemKeySet *seen_q, *seen_r;
  Topic *t;
  size_t nt, ct;
  int want[M_COUNT], any_wanted;
  long pcut[MAX_CUTS];
  double icut[MAX_CUTS];
  size_t npcut, nicut;
};

static const long default_pcut[] = {5, 10, 15, 20, 30, 100, 200, 500, 1000};
static const double default_icut[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

void slem_treceval_opts_init(SlemTrecOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->relevance_level = 1;
}

int slem_treceval_new(SlemTrecEval **out, const SlemTrecOpts *opts, SlemError *err) {
  SlemTrecEval *self = calloc(1, sizeof *self);
  *out = NULL;
  if (!self) return slem_error(err, SLEM_ENOMEM, "out of memory");
  self->o = *opts;
  self->qids = slem_strmap_new();
  self->docs = slem_strmap_new();
  self->seen_q = slem_keyset_new();
  self->seen_r = slem_keyset_new();
  self->npcut = sizeof default_pcut / sizeof *default_pcut;
  memcpy(self->pcut, default_pcut, sizeof default_pcut);
  self->nicut = sizeof default_icut / sizeof *default_icut;
  memcpy(self->icut, default_icut, sizeof default_icut);
  if (!self->qids || !self->docs || !self->seen_q || !self->seen_r) {
    slem_treceval_free(self);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  *out = self;
  return SLEM_OK;
}

void slem_treceval_free(SlemTrecEval *self) {
  if (!self) return;
  for (size_t i = 0; i < self->nt; i++) {
    free(self->t[i].j);
    free(self->t[i].r);
  }
  free(self->t);
  slem_strmap_free(self->qids);
  slem_strmap_free(self->docs);
  slem_keyset_free(self->seen_q);
  slem_keyset_free(self->seen_r);
  free(self);
}

/* Parses the comma-separated cut-offs after "P." (whole, positive) or
 * "iprec_at_recall." (0 to 1), refusing duplicates. */
static int parse_cuts(SlemTrecEval *self, int m, const char *spec, const char *params,
                      SlemError *err) {
  size_t n = 0;
  const char *p = params;
  for (;;) {
    char *end;
    errno = 0;
    if (n == MAX_CUTS)
      return slem_error(err, SLEM_EINVAL, "%s: at most %d cut-offs", spec, MAX_CUTS);
    if (m == M_P) {
      long v = strtol(p, &end, 10);
      if (end == p || errno || v <= 0 || (*end && *end != ','))
        return slem_error(err, SLEM_EINVAL, "%s: cut-offs are positive whole numbers", spec);
      for (size_t i = 0; i < n; i++)
        if (self->pcut[i] == v) return slem_error(err, SLEM_EINVAL, "%s: %ld twice", spec, v);
      self->pcut[n++] = v;
    } else {
      double v = strtod(p, &end);
      if (end == p || errno || !(v >= 0 && v <= 1) || (*end && *end != ','))
        return slem_error(err, SLEM_EINVAL, "%s: recall levels go from 0 to 1", spec);
      for (size_t i = 0; i < n; i++)
        if (self->icut[i] == v) return slem_error(err, SLEM_EINVAL, "%s: %g twice", spec, v);
      self->icut[n++] = v;
    }
    if (!*end) break;
    p = end + 1;
  }
  /* trec_eval prints the cut-offs in increasing order, whatever the order given */
  for (size_t a = 1; a < n; a++)
    for (size_t b = a; b > 0; b--) {
      if (m == M_P && self->pcut[b - 1] > self->pcut[b]) {
        long t = self->pcut[b];
        self->pcut[b] = self->pcut[b - 1];
        self->pcut[b - 1] = t;
      } else if (m == M_IPREC && self->icut[b - 1] > self->icut[b]) {
        double t = self->icut[b];
        self->icut[b] = self->icut[b - 1];
        self->icut[b - 1] = t;
      }
    }
  if (m == M_P) self->npcut = n;
  else self->nicut = n;
  return SLEM_OK;
}

int slem_treceval_measure(SlemTrecEval *self, const char *spec, SlemError *err) {
  const char *dot = strchr(spec, '.');
  size_t len = dot ? (size_t)(dot - spec) : strlen(spec);
  if (len == 8 && strncmp(spec, "official", 8) == 0 && !dot) {
    for (int m = M_NUM_Q; m <= M_P; m++) self->want[m] = 1;
    self->any_wanted = 1;
    return SLEM_OK;
  }
  for (int m = 0; m < M_COUNT; m++) {
    if (strlen(measure_names[m]) != len || strncmp(spec, measure_names[m], len) != 0) continue;
    if (dot) {
      int st;
      if (m != M_P && m != M_IPREC)
        return slem_error(err, SLEM_EINVAL, "%s: %s takes no parameters here", spec,
                          measure_names[m]);
      if ((st = parse_cuts(self, m, spec, dot + 1, err)) != SLEM_OK) return st;
    }
    self->want[m] = 1;
    self->any_wanted = 1;
    return SLEM_OK;
  }
  return slem_error(err, SLEM_EINVAL,
                    "unknown measure '%s' (num_q, num_ret, num_rel, num_rel_ret, map, gm_map, "
                    "Rprec, recip_rank, iprec_at_recall, P, ndcg, official)", spec);
}

/* The topic of qid, created when new; NULL when out of memory. */
static Topic *topic(SlemTrecEval *self, const char *qid) {
  long i = slem_strmap_intern(self->qids, qid, strlen(qid));
  if (i < 0) return NULL;
  if ((size_t)i == self->nt) {
    if (self->nt == self->ct) {
      size_t c = self->ct ? 2 * self->ct : 64;
      Topic *t = realloc(self->t, c * sizeof *t);
      if (!t) return NULL;
      self->t = t;
      self->ct = c;
    }
    memset(self->t + self->nt++, 0, sizeof *self->t);
  }
  return self->t + i;
}

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? 2 * *cap : 16;
  void *q = realloc(*p, c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

int slem_treceval_read_qrels(SlemTrecEval *self, const char *path, SlemError *err) {
  SlemIn *in = NULL;
  char *line;
  size_t len;
  uint64_t lineno = 0;
  int st = slem_in_open(&in, path, err);
  while (st == SLEM_OK && (st = slem_in_getline(in, &line, &len, err)) == SLEM_OK && line) {
    char *f[5], *save = NULL, *end;
    size_t nf = 0;
    long rel, doc;
    Topic *t;
    lineno++;
    for (char *tok = strtok_r(line, " \t", &save); tok && nf < 5; tok = strtok_r(NULL, " \t", &save))
      f[nf++] = tok;
    if (nf == 0) continue;
    if (nf != 4) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 4 "
                      "(qid iter docno rel)", slem_in_name(in), lineno, nf);
      break;
    }
    errno = 0;
    rel = strtol(f[3], &end, 10);
    if (end == f[3] || *end || errno) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": relevance '%s' is not a whole "
                      "number", slem_in_name(in), lineno, f[3]);
      break;
    }
    if (!(t = topic(self, f[0])) || (doc = slem_strmap_intern(self->docs, f[2], strlen(f[2]))) < 0 ||
        grow((void **)&t->j, &t->cj, t->nj, sizeof *t->j)) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", slem_in_name(in));
      break;
    }
    switch (slem_keyset_add(self->seen_q, slem_pair((size_t)(t - self->t), (size_t)doc))) {
    case 0:
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": document '%s' judged twice for "
                      "topic '%s'", slem_in_name(in), lineno, f[2], f[0]);
      break;
    case -1: st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", slem_in_name(in)); break;
    default:
      t->j[t->nj].doc = (size_t)doc;
      t->j[t->nj++].rel = rel;
      t->judged = 1;
    }
  }
  slem_in_free(in);
  return st;
}

int slem_treceval_result(SlemTrecEval *self, const char *qid, const char *docno, double score,
                         const char *name, uint64_t line, SlemError *err) {
  Topic *t;
  long doc;
  if (!isfinite(score))
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score is not finite", name, line);
  if (!(t = topic(self, qid)) || (doc = slem_strmap_intern(self->docs, docno, strlen(docno))) < 0 ||
      grow((void **)&t->r, &t->cr, t->nr, sizeof *t->r))
    return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  switch (slem_keyset_add(self->seen_r, slem_pair((size_t)(t - self->t), (size_t)doc))) {
  case 0:
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": document '%s' retrieved twice "
                      "for topic '%s'", name, line, docno, qid);
  case -1: return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  }
  t->r[t->nr].doc = (size_t)doc;
  t->r[t->nr].score = score;
  t->r[t->nr++].line = line;
  return SLEM_OK;
}

int slem_treceval_add_run(SlemTrecEval *self, SlemRankReader *rankings, SlemError *err) {
  const SlemRankQuery *q;
  int st;
  while ((st = slem_rankreader_next(rankings, &q, err)) == SLEM_OK && q)
    for (size_t i = 0; i < q->n && st == SLEM_OK; i++)
      st = slem_treceval_result(self, q->query, q->e[i].id, q->e[i].score,
                                slem_rankreader_name(rankings), q->e[i].line, err);
  return st;
}

int slem_treceval_write_path(SlemTrecEval *self, const char *path, uint64_t *skipped,
                             SlemError *err) {
  SlemOut *out = NULL;
  int st = slem_out_open(&out, path, err);
  if (st == SLEM_OK) st = slem_treceval_write(self, slem_out_file(out), skipped, err);
  if (st != SLEM_OK) {
    slem_out_abort(out);
    return st;
  }
  return slem_out_commit(out, err);
}

/* trec_eval's order: higher score first, equal scores by docno in decreasing order. */
static int by_score_docno(const void *a, const void *b) {
  const Res *x = a, *y = b;
  if (x->score > y->score) return -1;
  if (x->score < y->score) return 1;
  return strcmp(y->docno, x->docno);
}

static int by_doc(const void *a, const void *b) {
  const Judg *x = a, *y = b;
  return x->doc < y->doc ? -1 : x->doc > y->doc;
}

static int by_gain_desc(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x > y ? -1 : x < y;
}

typedef struct Values {
  double v[M_COUNT];
  double p[MAX_CUTS], ip[MAX_CUTS];
} Values;

/* The measures of one topic; t->r sorted and its rel values set. A topic the run lacks
 * (complete mode) has nr = 0 and scores 0 everywhere but num_rel. */
static int topic_values(const SlemTrecEval *self, const Topic *t, Values *out) {
  long level = self->o.relevance_level, num_rel = 0, rel_ret = 0, so_far = 0, *gains = NULL;
  size_t nret = t->nr, ng = 0, cut[MAX_CUTS];
  double sum = 0, dcg = 0, idcg = 0;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < t->nj; i++) num_rel += t->j[i].rel >= level;
  for (size_t i = 0; i < nret; i++) rel_ret += t->r[i].rel >= level;
  out->v[M_NUM_Q] = 1;
  out->v[M_NUM_RET] = (double)nret;
  out->v[M_NUM_REL] = (double)num_rel;
  out->v[M_NUM_REL_RET] = (double)rel_ret;
  for (size_t i = 0; i < nret; i++) {
    if (t->r[i].rel < level) continue;
    so_far++;
    sum += (double)so_far / (double)(i + 1);
    if (so_far == 1) out->v[M_RECIP] = 1.0 / (double)(i + 1);
  }
  out->v[M_MAP] = so_far ? sum / (double)num_rel : 0.0;
  out->v[M_GM_MAP] = log(out->v[M_MAP] > MIN_GEO_MEAN ? out->v[M_MAP] : MIN_GEO_MEAN);
  if (nret > 0 && num_rel > 0) {
    size_t look = nret < (size_t)num_rel ? nret : (size_t)num_rel;
    long r = 0;
    for (size_t i = 0; i < look; i++) r += t->r[i].rel >= level;
    out->v[M_RPREC] = (double)r / (double)num_rel;
  }
  /* P at k: a short ranking is filled with non-relevant documents */
  for (size_t c = 0; c < self->npcut; c++) {
    long r = 0, k = self->pcut[c];
    for (size_t i = 0; i < nret && (long)i < k; i++) r += t->r[i].rel >= level;
    out->p[c] = (double)r / (double)k;
  }
  /* interpolated precision at recall x: the largest precision at any rank from the one where
   * lround(x num_rel) relevant documents are in, walking the ranking backwards */
  if (nret > 0) {
    double best = (double)rel_ret / (double)nret;
    long rel_so_far = rel_ret;
    long cc = (long)self->nicut - 1;
    for (size_t c = 0; c < self->nicut; c++) cut[c] = (size_t)lround(self->icut[c] * (double)num_rel);
    while (cc >= 0 && cut[cc] > (size_t)rel_ret) cc--;
    for (size_t i = nret; i > 0 && rel_so_far > 0; i--) {
      double prec = (double)rel_so_far / (double)i;
      if (best < prec) best = prec;
      if (t->r[i - 1].rel >= level) {
        while (cc >= 0 && (size_t)rel_so_far == cut[cc]) out->ip[cc--] = best;
        rel_so_far--;
      }
    }
    while (cc >= 0) out->ip[cc--] = best;
  }
  /* nDCG: gains are the qrels values; the ideal ranking sorts the qrels by gain */
  if (t->nj > 0 && !(gains = malloc(t->nj * sizeof *gains))) return -1;
  for (size_t i = 0; i < t->nj; i++)
    if (t->j[i].rel > 0) gains[ng++] = t->j[i].rel;
  if (ng > 0) qsort(gains, ng, sizeof *gains, by_gain_desc);
  for (size_t i = 0; i < ng; i++) idcg += (double)gains[i] / log2((double)(i + 2));
  for (size_t i = 0; i < nret; i++)
    if (t->r[i].rel > 0) dcg += (double)t->r[i].rel / log2((double)(i + 2));
  out->v[M_NDCG] = idcg > 0 ? dcg / idcg : 0.0;
  free(gains);
  return 0;
}

/* Writes the lines of one measure for qid; 0 on a write error. */
static int print_measure(const SlemTrecEval *self, FILE *out, int m, const char *qid,
                         const Values *v) {
  char name[64];
  int ok = 1;
  if (m == M_P || m == M_IPREC) {
    size_t n = m == M_P ? self->npcut : self->nicut;
    for (size_t c = 0; c < n; c++) {
      if (m == M_P) snprintf(name, sizeof name, "P_%ld", self->pcut[c]);
      else snprintf(name, sizeof name, "iprec_at_recall_%.2f", self->icut[c]);
      ok &= fprintf(out, "%-22s\t%s\t%6.4f\n", name, qid, m == M_P ? v->p[c] : v->ip[c]) > 0;
    }
  } else if (m <= M_NUM_REL_RET) {
    ok &= fprintf(out, "%-22s\t%s\t%ld\n", measure_names[m], qid, (long)v->v[m]) > 0;
  } else {
    ok &= fprintf(out, "%-22s\t%s\t%6.4f\n", measure_names[m], qid, v->v[m]) > 0;
  }
  return ok;
}

int slem_treceval_write(SlemTrecEval *self, FILE *out, uint64_t *skipped_out, SlemError *err) {
  Values acc, v;
  uint64_t nq = 0, skipped = 0;
  size_t *order = NULL;
  int ok = 1, want[M_COUNT];
  memset(&acc, 0, sizeof acc);
  memcpy(want, self->want, sizeof want);
  if (!self->any_wanted)
    for (int m = M_NUM_Q; m <= M_P; m++) want[m] = 1;
  if (self->nt > 0 && !(order = malloc(self->nt * sizeof *order)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  /* topics of the qrels in strcmp order */
  size_t n = 0;
  for (size_t i = 0; i < self->nt; i++)
    if (self->t[i].judged) order[n++] = i;
  for (size_t a = 1; a < n; a++) { /* insertion sort: topic counts are small */
    size_t x = order[a], b = a;
    const char *qx = slem_strmap_get(self->qids, x);
    while (b > 0 && strcmp(slem_strmap_get(self->qids, order[b - 1]), qx) > 0) {
      order[b] = order[b - 1];
      b--;
    }
    order[b] = x;
  }
  for (size_t a = 0; a < n; a++) {
    Topic *t = self->t + order[a];
    const char *qid = slem_strmap_get(self->qids, order[a]);
    if (t->nr == 0 && !self->o.complete) {
      skipped++;
      continue;
    }
    if (t->nj > 0) qsort(t->j, t->nj, sizeof *t->j, by_doc);
    for (size_t i = 0; i < t->nr; i++) {
      Judg key = {t->r[i].doc, 0};
      Judg *hit = t->nj > 0 ? bsearch(&key, t->j, t->nj, sizeof *t->j, by_doc) : NULL;
      t->r[i].docno = slem_strmap_get(self->docs, t->r[i].doc);
      t->r[i].rel = hit ? hit->rel : -1;
    }
    if (t->nr > 0) qsort(t->r, t->nr, sizeof *t->r, by_score_docno);
    if (topic_values(self, t, &v) != 0) {
      free(order);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
    nq++;
    for (int m = 0; m < M_COUNT; m++) acc.v[m] += v.v[m];
    for (size_t c = 0; c < self->npcut; c++) acc.p[c] += v.p[c];
    for (size_t c = 0; c < self->nicut; c++) acc.ip[c] += v.ip[c];
    if (self->o.per_query)
      for (int m = M_NUM_RET; m < M_COUNT; m++)
        if (want[m] && m != M_GM_MAP) ok &= print_measure(self, out, m, qid, &v);
  }
  free(order);
  if (skipped_out) *skipped_out = skipped;
  if (nq == 0)
    return slem_error(err, SLEM_EFORMAT, "no topic has both results and relevance judgements");
  for (int m = 0; m < M_COUNT; m++) {
    if (m == M_NUM_Q) acc.v[m] = (double)nq;
    else if (m == M_GM_MAP) acc.v[m] = exp(acc.v[m] / (double)nq);
    else if (m > M_NUM_REL_RET) acc.v[m] /= (double)nq;
  }
  for (size_t c = 0; c < self->npcut; c++) acc.p[c] /= (double)nq;
  for (size_t c = 0; c < self->nicut; c++) acc.ip[c] /= (double)nq;
  for (int m = 0; m < M_COUNT; m++)
    if (want[m]) ok &= print_measure(self, out, m, "all", &acc);
  if (!ok || ferror(out)) return slem_error(err, SLEM_EIO, "write error");
  return SLEM_OK;
}

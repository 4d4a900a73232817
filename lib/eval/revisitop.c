#define _POSIX_C_SOURCE 200809L
#include "revisitop.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "io.h"
#include "measures.h"
#include "strmap.h"
#include "truth.h"

const size_t slem_revisit_kappas[SLEM_REVISIT_NK] = {1, 5, 10};

typedef struct Query {
  size_t count[3]; /* easy, hard, junk items */
  int ranked;
  double ap, mp[SLEM_REVISIT_NK];
} Query;

struct SlemRevisit {
  SlemProtocol p;
  SlemStrMap *qids, *items;
  SlemKeySet *kind[3];
  Query *q;
  size_t nq, cq;
};

int slem_revisitop_protocol_parse(SlemProtocol *p, const char *name) {
  static const char *const names[] = {"easy", "medium", "hard"};
  for (int i = 0; i < 3; i++)
    if (strcmp(name, names[i]) == 0) {
      *p = (SlemProtocol)i;
      return SLEM_OK;
    }
  return SLEM_EINVAL;
}

const char *slem_revisitop_protocol_name(SlemProtocol p) {
  return p == SLEM_PROTO_EASY ? "easy" : p == SLEM_PROTO_MEDIUM ? "medium" : "hard";
}

int slem_revisit_new(SlemRevisit **out, SlemProtocol p, SlemError *err) {
  SlemRevisit *self = calloc(1, sizeof *self);
  *out = NULL;
  if (!self) return slem_error(err, SLEM_ENOMEM, "out of memory");
  self->p = p;
  self->qids = slem_strmap_new();
  self->items = slem_strmap_new();
  for (int k = 0; k < 3; k++) self->kind[k] = slem_keyset_new();
  if (!self->qids || !self->items || !self->kind[0] || !self->kind[1] || !self->kind[2]) {
    slem_revisit_free(self);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  *out = self;
  return SLEM_OK;
}

void slem_revisit_free(SlemRevisit *self) {
  if (!self) return;
  slem_strmap_free(self->qids);
  slem_strmap_free(self->items);
  for (int k = 0; k < 3; k++) slem_keyset_free(self->kind[k]);
  free(self->q);
  free(self);
}

/* The index of query qid, added when new; -1 when out of memory. */
static long query(SlemRevisit *self, const char *qid) {
  long q = slem_strmap_intern(self->qids, qid, strlen(qid));
  if (q >= 0 && (size_t)q == self->nq) {
    if (self->nq == self->cq) {
      size_t c = self->cq ? 2 * self->cq : 64;
      Query *n = realloc(self->q, c * sizeof *n);
      if (!n) return -1;
      self->q = n;
      self->cq = c;
    }
    memset(self->q + self->nq++, 0, sizeof *self->q);
  }
  return q;
}

/* Records item as of kind for qid; a pair seen before (of any kind) is an error. */
static int add(SlemRevisit *self, SlemGtKind kind, const char *qid, const char *item,
               const char *name, uint64_t line, SlemError *err) {
  long q = query(self, qid);
  long it = slem_strmap_intern(self->items, item, strlen(item));
  uint64_t key;
  if (q < 0 || it < 0) return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  key = slem_pair((size_t)q, (size_t)it);
  for (int k = 0; k < 3; k++)
    if (slem_keyset_has(self->kind[k], key))
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": '%s' is listed twice for query "
                        "'%s'", name, line, item, qid);
  if (slem_keyset_add(self->kind[kind], key) < 0)
    return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  self->q[q].count[kind]++;
  return SLEM_OK;
}

/* Reads "query item" lines of one kind. */
static int read_lines(SlemRevisit *self, SlemGtKind kind, const char *path, SlemError *err) {
  SlemIn *in = NULL;
  char *line;
  size_t len;
  uint64_t lineno = 0;
  int st = slem_in_open(&in, path, err);
  while (st == SLEM_OK && (st = slem_in_getline(in, &line, &len, err)) == SLEM_OK && line) {
    char *f[5], *save = NULL;
    size_t nf = 0;
    lineno++;
    for (char *t = strtok_r(line, " \t", &save); t && nf < 5; t = strtok_r(NULL, " \t", &save))
      f[nf++] = t;
    if (nf == 0) continue;
    if (nf != 2) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 2 (query item)",
                      slem_in_name(in), lineno, nf);
      break;
    }
    st = add(self, kind, f[0], f[1], slem_in_name(in), lineno, err);
  }
  slem_in_free(in);
  return st;
}

int slem_revisit_read(SlemRevisit *self, SlemGtKind kind, const char *path, SlemError *err) {
  return read_lines(self, kind, path, err);
}

int slem_revisit_read_qrels(SlemRevisit *self, const char *path, SlemError *err) {
  SlemTruth *t = NULL;
  int st = slem_truth_read_graded(&t, path, 1, err);
  for (size_t q = 0; st == SLEM_OK && q < slem_truth_queries(t); q++) {
    const char *qid = slem_truth_query(t, q);
    if (query(self, qid) < 0) st = slem_error(err, SLEM_ENOMEM, "out of memory");
    for (size_t i = 0; st == SLEM_OK && i < slem_truth_njudged(t, q); i++) {
      const char *docno;
      long g;
      uint64_t line;
      slem_truth_judgement(t, q, i, &docno, &g, &line);
      if (g < -1 || g > 2)
        st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": grade '%ld': expected 2 (easy), "
                        "1 (hard), 0 (negative) or -1 (junk)", path, line, g);
      else if (g != 0) /* 0: a judged negative, the query exists with nothing to record */
        st = add(self, g == 2 ? SLEM_GT_EASY : g == 1 ? SLEM_GT_HARD : SLEM_GT_JUNK, qid, docno,
                 path, line, err);
    }
  }
  slem_truth_free(t);
  return st;
}

/* Positives and junk of the protocol, from the kinds. */
static int is_positive(SlemProtocol p, int kind) {
  return p == SLEM_PROTO_MEDIUM ? kind != SLEM_GT_JUNK
                                : kind == (p == SLEM_PROTO_EASY ? SLEM_GT_EASY : SLEM_GT_HARD);
}

static size_t npos(const SlemRevisit *self, const Query *q) {
  size_t n = 0;
  for (int k = SLEM_GT_EASY; k <= SLEM_GT_HARD; k++)
    if (is_positive(self->p, k)) n += q->count[k];
  return n;
}

int slem_revisit_query(SlemRevisit *self, const char *qid, const char *const *ids, size_t n,
                       SlemError *err) {
  long qi = slem_strmap_find(self->qids, qid, strlen(qid));
  Query *q;
  size_t np, nt, m = 0;
  long *rel;
  SlemJudged jq = {0};
  const SlemMeasure *tab = slem_measures(&nt);
  long mp = slem_measure_find("revisitop_mP", 12);
  double kappas[SLEM_REVISIT_NK];
  if (qi < 0)
    return slem_error(err, SLEM_EFORMAT, "query '%s' of the ranking is not in the ground truth", qid);
  q = self->q + qi;
  if (q->ranked) return slem_error(err, SLEM_EFORMAT, "query '%s' is ranked twice", qid);
  q->ranked = 1;
  q->ap = 0;
  np = npos(self, q);
  if (np == 0) return SLEM_OK;
  if (!(rel = malloc((n ? n : 1) * sizeof *rel))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  /* the ranking with this protocol's junk removed: 1 a positive, 0 anything else */
  for (size_t i = 0; i < n; i++) {
    long it = slem_strmap_find(self->items, ids[i], strlen(ids[i]));
    int kind = -1;
    if (it >= 0)
      for (int k = 0; k < 3; k++)
        if (slem_keyset_has(self->kind[k], slem_pair((size_t)qi, (size_t)it))) kind = k;
    if (kind >= 0 && !is_positive(self->p, kind)) continue; /* junk under this protocol */
    rel[m++] = kind >= 0;
  }
  jq.rel = rel;
  jq.n = m;
  jq.num_rel = (long)np;
  jq.level = 1;
  q->ap = slem_judged_ap(&jq, SLEM_AP_REVISITOP);
  for (int c = 0; c < SLEM_REVISIT_NK; c++) kappas[c] = (double)slem_revisit_kappas[c];
  tab[mp].per_query(&jq, kappas, SLEM_REVISIT_NK, q->mp);
  free(rel);
  return SLEM_OK;
}

int slem_revisit_result(SlemRevisit *self, SlemRevisitResult *out, SlemError *err) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < self->nq; i++) {
    const Query *q = self->q + i;
    if (npos(self, q) == 0) {
      out->empty++;
      continue;
    }
    out->evaluated++;
    if (!q->ranked) {
      out->missing++;
      continue;
    }
    out->map += q->ap;
    for (int c = 0; c < SLEM_REVISIT_NK; c++) out->mp[c] += q->mp[c];
  }
  if (out->evaluated == 0)
    return slem_error(err, SLEM_EFORMAT, "no query has a positive under the %s protocol",
                      slem_revisitop_protocol_name(self->p));
  out->map /= (double)out->evaluated;
  for (int c = 0; c < SLEM_REVISIT_NK; c++) out->mp[c] /= (double)out->evaluated;
  return SLEM_OK;
}

size_t slem_revisit_nqueries(const SlemRevisit *self) { return self->nq; }

int slem_revisit_query_result(const SlemRevisit *self, size_t i, const char **qid, double *ap,
                              double mp[SLEM_REVISIT_NK], int *status) {
  const Query *q = self->q + i;
  if (i >= self->nq) return SLEM_EINVAL;
  *qid = slem_strmap_get(self->qids, i);
  *status = npos(self, q) == 0 ? 1 : !q->ranked ? 2 : 0;
  *ap = *status == 0 ? q->ap : 0.0;
  for (int c = 0; c < SLEM_REVISIT_NK; c++) mp[c] = *status == 0 ? q->mp[c] : 0.0;
  return SLEM_OK;
}

typedef struct Ranked {
  SlemRankKey key; /* first: ordered by slem_rankings_key_cmp() */
  const char *id;
} Ranked;

int slem_revisit_add_run(SlemRevisit *self, SlemRankReader *rankings, SlemError *err) {
  const SlemRankQuery *q;
  Ranked *r = NULL;
  const char **ids = NULL;
  size_t cap = 0;
  int st;
  while ((st = slem_rankreader_next(rankings, &q, err)) == SLEM_OK && q) {
    if (q->n > cap) {
      Ranked *nr = realloc(r, q->n * sizeof *r);
      const char **ni = nr ? realloc(ids, q->n * sizeof *ids) : NULL;
      if (nr) r = nr;
      if (ni) ids = ni;
      if (!nr || !ni) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", slem_rankreader_name(rankings));
        break;
      }
      cap = q->n;
    }
    for (size_t i = 0; i < q->n; i++) r[i] = (Ranked){{q->e[i].rank, q->e[i].line, i}, q->e[i].id};
    qsort(r, q->n, sizeof *r, slem_rankings_key_cmp);
    for (size_t i = 0; i < q->n; i++) ids[i] = r[i].id;
    if ((st = slem_revisit_query(self, q->query, ids, q->n, err)) != SLEM_OK) {
      char msg[SLEM_ERRMSG_MAX], at[SLEM_RANK_PLACE_MAX];
      snprintf(msg, sizeof msg, "%s", err->msg);
      st = slem_error(err, st, "%s: %s: %s", slem_rankreader_name(rankings),
                      slem_rankreader_place(rankings, at, q->line, SLEM_RANK_WHOLE_QUERY), msg);
      break;
    }
  }
  free(r);
  free(ids);
  return st;
}

static const char *const status_names[] = {"ok", "empty", "missing"};

static int write_text(SlemRevisit *self, FILE *f, const SlemRevisitResult *res, int flags) {
  int ok = 1;
  if (flags & SLEM_REVISIT_PER_QUERY) {
    ok &= fprintf(f, "# query\tAP\tP@1\tP@5\tP@10\tstatus\n") > 0;
    for (size_t i = 0; i < self->nq; i++) {
      const char *qid;
      double ap, mp[SLEM_REVISIT_NK];
      int status;
      slem_revisit_query_result(self, i, &qid, &ap, mp, &status);
      ok &= fprintf(f, "%s\t%.6f\t%.4f\t%.4f\t%.4f\t%s\n", qid, ap, mp[0], mp[1], mp[2],
                    status_names[status]) > 0;
    }
  }
  ok &= fprintf(f, "protocol\t%s\nmAP\t%.6f\n", slem_revisitop_protocol_name(self->p),
                res->map) > 0;
  for (int c = 0; c < SLEM_REVISIT_NK; c++)
    ok &= fprintf(f, "mP@%zu\t%.6f\n", slem_revisit_kappas[c], res->mp[c]) > 0;
  ok &= fprintf(f, "queries\t%zu\nempty\t%zu\nmissing\t%zu\n", res->evaluated, res->empty,
                res->missing) > 0;
  return ok;
}

static int write_json(SlemRevisit *self, FILE *f, const SlemRevisitResult *res, int flags) {
  cJSON *o = cJSON_CreateObject(), *arr;
  char key[16], *text;
  int ok = o != NULL;
  if (!ok) return 0;
  cJSON_AddStringToObject(o, "protocol", slem_revisitop_protocol_name(self->p));
  cJSON_AddNumberToObject(o, "map", res->map);
  for (int c = 0; c < SLEM_REVISIT_NK; c++) {
    snprintf(key, sizeof key, "mp@%zu", slem_revisit_kappas[c]);
    cJSON_AddNumberToObject(o, key, res->mp[c]);
  }
  cJSON_AddNumberToObject(o, "queries", (double)res->evaluated);
  cJSON_AddNumberToObject(o, "empty", (double)res->empty);
  cJSON_AddNumberToObject(o, "missing", (double)res->missing);
  if ((flags & SLEM_REVISIT_PER_QUERY) && (arr = cJSON_AddArrayToObject(o, "per_query")))
    for (size_t i = 0; i < self->nq; i++) {
      const char *qid;
      double ap, mp[SLEM_REVISIT_NK];
      int status;
      cJSON *q = cJSON_CreateObject();
      if (!q) break;
      slem_revisit_query_result(self, i, &qid, &ap, mp, &status);
      cJSON_AddStringToObject(q, "query", qid);
      cJSON_AddNumberToObject(q, "ap", ap);
      for (int c = 0; c < SLEM_REVISIT_NK; c++) {
        snprintf(key, sizeof key, "p@%zu", slem_revisit_kappas[c]);
        cJSON_AddNumberToObject(q, key, mp[c]);
      }
      cJSON_AddStringToObject(q, "status", status_names[status]);
      cJSON_AddItemToArray(arr, q);
    }
  text = cJSON_PrintUnformatted(o);
  ok = text && fprintf(f, "%s\n", text) > 0;
  free(text);
  cJSON_Delete(o);
  return ok;
}

int slem_revisit_write(SlemRevisit *self, const char *path, int flags, SlemError *err) {
  SlemRevisitResult res;
  SlemOut *out = NULL;
  int st = slem_revisit_result(self, &res, err);
  if (st == SLEM_OK) st = slem_out_open(&out, path, err);
  if (st != SLEM_OK) return st;
  if (!((flags & SLEM_REVISIT_JSON) ? write_json : write_text)(self, slem_out_file(out), &res, flags)) {
    slem_out_abort(out);
    return slem_error(err, SLEM_ENOMEM, "out of memory formatting the result");
  }
  return slem_out_commit(out, err);
}

int slem_revisit_run(SlemProtocol p, const char *qrels, const char *easy, const char *hard,
                     const char *const *junk, size_t njunk, const char *path, SlemRankFormat fmt,
                     const char *output, int flags, SlemError *err) {
  SlemRevisit *rv = NULL;
  SlemRankReader *r = NULL;
  SlemTruthSpec spec = {.qrels = qrels, .junk = junk, .njunk = njunk};
  int st = slem_truth_check(&spec, 1, easy, hard, 0, err);
  if (st == SLEM_OK) st = slem_revisit_new(&rv, p, err);
  if (st == SLEM_OK && qrels) st = slem_revisit_read_qrels(rv, qrels, err);
  if (st == SLEM_OK && easy) st = slem_revisit_read(rv, SLEM_GT_EASY, easy, err);
  if (st == SLEM_OK && hard) st = slem_revisit_read(rv, SLEM_GT_HARD, hard, err);
  for (size_t i = 0; i < njunk && st == SLEM_OK; i++)
    st = slem_revisit_read(rv, SLEM_GT_JUNK, junk[i], err);
  if (st == SLEM_OK) st = slem_rankreader_open(&r, path, fmt, err);
  if (st == SLEM_OK) st = slem_revisit_add_run(rv, r, err);
  if (st == SLEM_OK) st = slem_revisit_write(rv, output, flags, err);
  slem_rankreader_free(r);
  slem_revisit_free(rv);
  return st;
}

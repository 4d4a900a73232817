#define _POSIX_C_SOURCE 200809L
#include "eval.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "strmap.h"

static const char *const ap_names[] = {"trec", "oxford"};

int slem_eval_apkind_parse(SlemApKind *kind, const char *name, SlemError *err) {
  for (size_t i = 0; i < sizeof ap_names / sizeof *ap_names; i++)
    if (strcmp(name, ap_names[i]) == 0) {
      *kind = (SlemApKind)i;
      return SLEM_OK;
    }
  return slem_error(err, SLEM_EINVAL, "'%s' is neither trec nor oxford", name);
}

const char *slem_eval_apkind_name(SlemApKind kind) { return ap_names[kind == SLEM_AP_OXFORD]; }

double slem_eval_ap(SlemApKind kind, const unsigned char *rel, size_t n, size_t nrel) {
  long *r = malloc((n ? n : 1) * sizeof *r);
  SlemJudged q = {0};
  double ap;
  if (!r) return NAN;
  for (size_t i = 0; i < n; i++) r[i] = rel[i] != 0;
  q.rel = r;
  q.n = n;
  q.num_rel = (long)nrel;
  q.level = 1;
  ap = slem_judged_ap(&q, kind);
  free(r);
  return ap;
}

/* ---- a ranking gathered per query ---- */

typedef struct Entry {
  SlemRankKey key; /* first: ordered by slem_rankings_key_cmp() */
  size_t doc;      /* index in the run's document map */
} Entry;

typedef struct RunQuery {
  Entry *e;
  size_t n, cap;
  uint64_t line;  /* first line of the query */
} RunQuery;

/* Every entry of a ranking, per query id: evaluation needs a query's whole list, and a
 * query's lines may be spread over the file. */
typedef struct Run {
  const char *name;
  const SlemRankReader *reader; /* for the places of its messages (slem_rankreader_place) */
  SlemStrMap *qmap, *dmap;
  RunQuery *q;
  size_t qcap;
  uint64_t listed; /* query lines read, those with no result included */
} Run;

static void run_clear(Run *run) {
  for (size_t i = 0; run->q && i < slem_strmap_count(run->qmap); i++) free(run->q[i].e);
  free(run->q);
  slem_strmap_free(run->qmap);
  slem_strmap_free(run->dmap);
}

/* Reads every query of reader into run; an id twice for one query is an error even when
 * the query's lines are apart (the reader checks the lines that are together). */
static int run_gather(Run *run, SlemRankReader *reader, const SlemEvalOpts *opts, SlemError *err) {
  uint64_t nread = 0;
  SlemKeySet *seen = slem_keyset_new();
  int st = SLEM_OK;
  run->name = slem_rankreader_name(reader);
  run->reader = reader;
  run->qmap = slem_strmap_new();
  run->dmap = slem_strmap_new();
  if (!seen || !run->qmap || !run->dmap) goto nomem;
  for (;;) {
    const SlemRankQuery *g;
    long qi;
    RunQuery *rq;
    st = slem_rankreader_next(reader, &g, err);
    if (st || !g) break;
    if (opts->progress && (++nread & 255) == 0) opts->progress(opts->progress_ctx, nread);
    run->listed++;
    if (g->n == 0) continue; /* a jsonl line with no results names no query */
    qi = slem_strmap_intern(run->qmap, g->query, strlen(g->query));
    if (qi < 0) goto nomem;
    if ((size_t)qi >= run->qcap) {
      size_t cap = run->qcap ? 2 * run->qcap : 256;
      RunQuery *p = realloc(run->q, cap * sizeof *p);
      if (!p) goto nomem;
      memset(p + run->qcap, 0, (cap - run->qcap) * sizeof *p);
      run->q = p;
      run->qcap = cap;
    }
    rq = run->q + qi;
    if (rq->n == 0) rq->line = g->line;
    for (size_t k = 0; k < g->n; k++) {
      long di = slem_strmap_intern(run->dmap, g->e[k].id, strlen(g->e[k].id));
      int added;
      if (di < 0) goto nomem;
      added = slem_keyset_add(seen, slem_pair((size_t)qi, (size_t)di));
      if (added < 0) goto nomem;
      if (added == 0) {
        char at[SLEM_RANK_PLACE_MAX];
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' appears twice for query '%s'", run->name,
                        slem_rankreader_place(reader, at, g->e[k].line, k), g->e[k].id, g->query);
        goto done;
      }
      if (rq->n == rq->cap) {
        size_t cap = rq->cap ? 2 * rq->cap : 16;
        Entry *p = realloc(rq->e, cap * sizeof *p);
        if (!p) goto nomem;
        rq->e = p;
        rq->cap = cap;
      }
      rq->e[rq->n].key.rank = g->e[k].rank;
      rq->e[rq->n].doc = (size_t)di;
      rq->e[rq->n].key.line = g->e[k].line;
      rq->e[rq->n].key.pos = k;
      rq->n++;
    }
  }
  goto done;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
done:
  slem_keyset_free(seen);
  return st;
}

/* ---- evaluation ---- */

int slem_eval_measure_parse(SlemMeasureReq *req, const char *spec, SlemError *err) {
  size_t nt;
  const SlemMeasure *tab = slem_measures(&nt);
  int r = slem_measure_parse(req, spec, err);
  if (r < 0) {
    char names[1024];
    size_t used = 0;
    names[0] = 0;
    for (size_t i = 0; i < nt && used < sizeof names; i++)
      if (tab[i].aggregate != SLEM_AGG_TEXT && tab[i].aggregate != SLEM_AGG_STRING)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                 tab[i].name);
    return slem_error(err, SLEM_EINVAL, "unknown measure '%s' (%s)", spec, names);
  }
  if (r != SLEM_OK) return r;
  if (req->gain_map)
    return slem_error(err, SLEM_EINVAL, "%s: a gain map goes with --trec-compat (slem-trec_eval)",
                      spec);
  if (tab[req->m].aggregate == SLEM_AGG_TEXT || tab[req->m].aggregate == SLEM_AGG_STRING)
    return slem_error(err, SLEM_EINVAL, "%s is not a number (--trec-compat prints it)", spec);
  return SLEM_OK;
}

void slem_eval_opts_init(SlemEvalOpts *opts) {
  /* the whole struct: a field left to the caller's stack (progress, once) is a crash */
  memset(opts, 0, sizeof *opts);
  opts->ap = SLEM_AP_TREC;
  opts->recall_k = 100;
  opts->curve_points = 11;
}

void slem_eval_result_free(SlemEvalResult *self) {
  if (!self) return;
  free(self->q);
  free(self->curve);
  free(self->measures);
  free(self->means);
  free(self->values);
  free(self);
}

static double prec_at(const long *rel, size_t n, size_t k) {
  size_t h = 0;
  for (size_t i = 0; i < n && i < k; i++) h += rel[i] >= 1;
  return (double)h / (double)k;
}

/* Adds to curve the interpolated precision at points recall levels r_l = l/(points - 1):
 * the best precision at any relevant rank whose recall is at least r_l, that is the
 * best over the hits h >= ceil(r_l R); 0 when fewer hits were retrieved. best(n) is
 * scratch space. */
static void add_curve(double *curve, size_t points, const long *rel, size_t n,
                      size_t nrel, double *best) {
  size_t hits = 0;
  for (size_t i = 0; i < n; i++)
    if (rel[i] >= 1) {
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

/* The AP of query q whose ranking (junk removed) has grades rel(n), and the asked
 * measures' values, written to res->q[q].values. gains: scratch space for the ideal
 * ranking. */
static double query_measures(SlemEvalResult *res, const SlemTruth *truth, size_t q,
                             const long *rel, size_t n, long *gains) {
  size_t nt;
  const SlemMeasure *tab = slem_measures(&nt);
  SlemJudged jq = {0};
  double *out = res->values + q * res->nvalues;
  /* an empty ranking (a query the ranking lacks, or whose results are all junk): the
   * measures see trec_eval -c's stand-in for a topic the run lacks, one document the qrels
   * do not name, and those that trec_eval then zeroes are 0 (11pt_avg would divide 0 by 0
   * on no ranking at all) */
  static const long stand_in = SLEM_UNJUDGED;
  jq.rel = n ? rel : &stand_in;
  jq.n = n ? n : 1;
  jq.num_rel = (long)res->q[q].nrel;
  jq.level = 1;
  if (res->nmeasures) {
    jq.num_nonrel = (long)slem_truth_nnonrel(truth, q);
    jq.gains = gains;
    jq.ngains = slem_truth_gains(truth, q, gains);
  }
  for (size_t m = 0; m < res->nmeasures; m++) {
    const SlemMeasureReq *r = res->measures + m;
    size_t nv = tab[r->m].cut == SLEM_CUT_NONE ? 1 : r->ncuts;
    tab[r->m].per_query(&jq, r->cuts, r->ncuts, out);
    if (n == 0 && tab[r->m].zero_if_missing)
      for (size_t c = 0; c < nv; c++) out[c] = 0;
    out += nv;
  }
  return slem_judged_ap(&jq, res->ap);
}

/* res->means from the sums over the evaluated queries, by each measure's aggregate. */
static void aggregate(SlemEvalResult *res) {
  size_t nt, v = 0;
  const SlemMeasure *tab = slem_measures(&nt);
  double nq = (double)res->evaluated;
  for (size_t m = 0; m < res->nmeasures; m++) {
    const SlemMeasure *me = &tab[res->measures[m].m];
    size_t nv = me->cut == SLEM_CUT_NONE ? 1 : res->measures[m].ncuts;
    for (size_t c = 0; c < nv; c++, v++) {
      switch (me->aggregate) {
      case SLEM_AGG_NUM_Q: res->means[v] = nq; break;
      case SLEM_AGG_GEO: res->means[v] = nq > 0 ? exp(res->means[v] / nq) : 0; break;
      case SLEM_AGG_MEAN: res->means[v] = nq > 0 ? res->means[v] / nq : 0; break;
      case SLEM_AGG_SUM:
      case SLEM_AGG_NUM_REL:
      case SLEM_AGG_TEXT:
      case SLEM_AGG_STRING: break;
      }
    }
  }
}

int slem_eval_result_new(SlemEvalResult **self, SlemRankReader *rankings, const SlemTruth *truth,
                        const SlemEvalOpts *opts, SlemError *err) {
  size_t nq = slem_truth_queries(truth), maxn = 0, counted = 0;
  SlemEvalResult *res = calloc(1, sizeof *res);
  long *rel = NULL, *gains = NULL;
  double *best = NULL;
  size_t maxg = 0;
  Run runs = {0}, *run = &runs;
  int st = SLEM_OK;
  *self = NULL;
  if (!res) return slem_error(err, SLEM_ENOMEM, "out of memory");
  res->ap = opts->ap;
  res->recall_k = opts->recall_k;
  if (opts->nmeasures) {
    const SlemMeasure *tab = slem_measures(&maxg);
    if (!(res->measures = malloc(opts->nmeasures * sizeof *res->measures))) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto done;
    }
    memcpy(res->measures, opts->measures, opts->nmeasures * sizeof *res->measures);
    res->nmeasures = opts->nmeasures;
    for (size_t m = 0; m < res->nmeasures; m++)
      res->nvalues += tab[res->measures[m].m].cut == SLEM_CUT_NONE ? 1 : res->measures[m].ncuts;
    maxg = 0;
  }
  st = run_gather(run, rankings, opts, err);
  if (st) goto done;
  /* jsonl lists every query, with no result when the database was empty (a night with no
   * new images): then every query is missing, AP 0; a file that lists none is an error */
  if (run->listed == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no rankings (empty file)", run->name);
    goto done;
  }
  res->nq = nq;
  res->curve_points = opts->curve_points < 2 ? 11 : opts->curve_points;
  res->q = calloc(nq, sizeof *res->q);
  res->curve = calloc(res->curve_points, sizeof *res->curve);
  for (size_t i = 0; i < slem_strmap_count(run->qmap); i++)
    if (run->q[i].n > maxn) maxn = run->q[i].n;
  for (size_t q = 0; q < nq; q++)
    if (slem_truth_max_gains(truth, q) > maxg) maxg = slem_truth_max_gains(truth, q);
  rel = malloc((maxn + 1) * sizeof *rel);
  gains = malloc((maxg + 1) * sizeof *gains);
  best = malloc((maxn + 1) * sizeof *best);
  res->means = calloc(res->nvalues + 1, sizeof *res->means);
  res->values = calloc(nq * res->nvalues + 1, sizeof *res->values);
  if (!res->q || !res->curve || !rel || !best || !gains || !res->means || !res->values) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t q = 0; q < nq; q++) {
    res->q[q].query = slem_truth_query(truth, q);
    res->q[q].nrel = slem_truth_nrel(truth, q);
    res->q[q].status = res->q[q].nrel ? SLEM_Q_MISSING : SLEM_Q_SKIPPED;
    res->q[q].values = res->values + q * res->nvalues;
    if (res->q[q].nrel) query_measures(res, truth, q, rel, 0, gains); /* empty ranking */
  }
  for (size_t i = 0; i < slem_strmap_count(run->qmap); i++) {
    const char *qs = slem_strmap_get(run->qmap, i);
    long q = slem_truth_find_query(truth, qs);
    RunQuery *rq = run->q + i;
    SlemQueryResult *r;
    size_t n = 0;
    if (q < 0 && !slem_truth_knows_all_docs(truth)) { /* qrels: as trec_eval, left out */
      if (res->unknown++ == 0 || rq->line < res->unknown_line) res->unknown_line = rq->line;
      continue;
    }
    if (q < 0) {
      char at[SLEM_RANK_PLACE_MAX];
      st = slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' is not in the ground truth", run->name,
                      slem_rankreader_place(run->reader, at, rq->line, SLEM_RANK_WHOLE_QUERY), qs);
      goto done;
    }
    r = res->q + q;
    qsort(rq->e, rq->n, sizeof *rq->e, slem_rankings_key_cmp);
    for (size_t k = 0; k < rq->n; k++) {
      const char *ds = slem_strmap_get(run->dmap, rq->e[k].doc);
      long d = slem_truth_find_doc(truth, ds);
      if (d < 0 && slem_truth_knows_all_docs(truth)) {
        char at[SLEM_RANK_PLACE_MAX];
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: '%s' is not a database id of the labels",
                        run->name, slem_rankreader_place(run->reader, at, rq->e[k].key.line,
                                                         rq->e[k].key.pos), ds);
        goto done;
      }
      if (d >= 0 && slem_truth_junk(truth, (size_t)q, (size_t)d)) continue;
      rel[n++] = slem_truth_rel(truth, (size_t)q, d);
    }
    r->nret = n;
    if (r->nrel == 0) continue;
    r->status = SLEM_Q_EVALUATED;
    r->ap = query_measures(res, truth, (size_t)q, rel, n, gains);
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
    for (size_t v = 0; v < res->nvalues; v++) res->means[v] += r->values[v];
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
  aggregate(res);
done:
  free(rel);
  free(gains);
  free(best);
  run_clear(run);
  if (st) {
    slem_eval_result_free(res);
    return st;
  }
  *self = res;
  return SLEM_OK;
}

int slem_eval_result_read(SlemEvalResult **self, const char *path, SlemRankFormat fmt,
                         const SlemTruth *truth, const SlemEvalOpts *opts, SlemError *err) {
  SlemRankReader *r = NULL;
  int st = slem_rankreader_open(&r, path, fmt, err);
  *self = NULL;
  if (st == SLEM_OK) st = slem_eval_result_new(self, r, truth, opts, err);
  slem_rankreader_free(r);
  return st;
}

/* ---- reports ---- */

static const char *const status_names[] = {"ok", "skipped", "missing"};

/* The name of value v of self's asked measures into name; sets *count when it is a count. */
static void value_name(const SlemEvalResult *self, size_t v, char *name, size_t size, int *count) {
  size_t nt;
  const SlemMeasure *tab = slem_measures(&nt);
  for (size_t m = 0; m < self->nmeasures; m++) {
    const SlemMeasure *me = &tab[self->measures[m].m];
    size_t nv = me->cut == SLEM_CUT_NONE ? 1 : self->measures[m].ncuts;
    if (v < nv) {
      slem_measure_value_name(self->measures + m, v, name, size);
      if (count) *count = me->count;
      return;
    }
    v -= nv;
  }
}

static int write_text(FILE *fp, const SlemEvalResult *r, int per_query) {
  int ok = 1, count;
  size_t k = r->recall_k;
  char name[80];
  if (per_query) {
    ok &= fprintf(fp, "# query\tAP\tP@1\tP@5\tP@10\tR@%zu\trelevant\tretrieved\tstatus", k) > 0;
    for (size_t v = 0; v < r->nvalues; v++) {
      value_name(r, v, name, sizeof name, NULL);
      ok &= fprintf(fp, "\t%s", name) > 0;
    }
    ok &= putc('\n', fp) != EOF;
    for (size_t i = 0; i < r->nq; i++) {
      const SlemQueryResult *q = r->q + i;
      ok &= fprintf(fp, "%s\t%.6f\t%.4f\t%.4f\t%.4f\t%.4f\t%zu\t%zu\t%s", q->query, q->ap, q->p1,
                    q->p5, q->p10, q->rk, q->nrel, q->nret, status_names[q->status]) > 0;
      for (size_t v = 0; v < r->nvalues; v++) {
        value_name(r, v, name, sizeof name, &count);
        ok &= fprintf(fp, count ? "\t%.0f" : "\t%.4f", q->values[v]) > 0;
      }
      ok &= putc('\n', fp) != EOF;
    }
  }
  ok &= fprintf(fp, "mAP\t%.6f\nP@1\t%.6f\nP@5\t%.6f\nP@10\t%.6f\nR@%zu\t%.6f\n", r->map, r->p1,
                r->p5, r->p10, k, r->rk) > 0;
  for (size_t v = 0; v < r->nvalues; v++) {
    value_name(r, v, name, sizeof name, &count);
    ok &= fprintf(fp, count ? "%s\t%.0f\n" : "%s\t%.6f\n", name, r->means[v]) > 0;
  }
  ok &= fprintf(fp, "queries\t%zu\nskipped\t%zu\nmissing\t%zu\nap\t%s\n", r->evaluated, r->skipped,
                r->missing, slem_eval_apkind_name(r->ap)) > 0;
  return ok ? SLEM_OK : SLEM_EIO;
}

/* Adds the asked measures' values vals(self->nvalues) to o; NULL out of memory. */
static cJSON *add_values(cJSON *o, const SlemEvalResult *self, const double *vals) {
  char name[80];
  for (size_t v = 0; v < self->nvalues; v++) {
    value_name(self, v, name, sizeof name, NULL);
    if (!cJSON_AddNumberToObject(o, name, vals[v])) return NULL;
  }
  return o;
}

/* Adds the measures of one query or of the mean to o; NULL out of memory. */
static cJSON *add_measures(cJSON *o, const char *rkey, double ap, double p1, double p5,
                           double p10, double rk) {
  if (!cJSON_AddNumberToObject(o, "ap", ap) || !cJSON_AddNumberToObject(o, "p@1", p1) ||
      !cJSON_AddNumberToObject(o, "p@5", p5) || !cJSON_AddNumberToObject(o, "p@10", p10) ||
      !cJSON_AddNumberToObject(o, rkey, rk))
    return NULL;
  return o;
}

static int write_json(FILE *fp, const SlemEvalResult *r, int per_query) {
  cJSON *o = cJSON_CreateObject();
  char key[32], *text = NULL;
  int st = SLEM_ENOMEM;
  snprintf(key, sizeof key, "r@%zu", r->recall_k);
  if (!o || !cJSON_AddStringToObject(o, "ap", slem_eval_apkind_name(r->ap)) ||
      !cJSON_AddNumberToObject(o, "map", r->map) || !cJSON_AddNumberToObject(o, "p@1", r->p1) ||
      !cJSON_AddNumberToObject(o, "p@5", r->p5) || !cJSON_AddNumberToObject(o, "p@10", r->p10) ||
      !cJSON_AddNumberToObject(o, key, r->rk) || !add_values(o, r, r->means) ||
      !cJSON_AddNumberToObject(o, "queries", (double)r->evaluated) ||
      !cJSON_AddNumberToObject(o, "skipped", (double)r->skipped) ||
      !cJSON_AddNumberToObject(o, "missing", (double)r->missing))
    goto done;
  if (per_query) {
    cJSON *arr = cJSON_AddArrayToObject(o, "per_query");
    if (!arr) goto done;
    for (size_t i = 0; i < r->nq; i++) {
      const SlemQueryResult *q = r->q + i;
      cJSON *e = cJSON_CreateObject();
      if (!e) goto done;
      cJSON_AddItemToArray(arr, e);
      if (!cJSON_AddStringToObject(e, "query", q->query) ||
          !add_measures(e, key, q->ap, q->p1, q->p5, q->p10, q->rk) || !add_values(e, r, q->values) ||
          !cJSON_AddNumberToObject(e, "relevant", (double)q->nrel) ||
          !cJSON_AddNumberToObject(e, "retrieved", (double)q->nret) ||
          !cJSON_AddStringToObject(e, "status", status_names[q->status]))
        goto done;
    }
  }
  text = cJSON_Print(o);
  if (!text) goto done;
  st = fputs(text, fp) >= 0 && putc('\n', fp) != EOF ? SLEM_OK : SLEM_EIO;
done:
  cJSON_Delete(o);
  free(text);
  return st;
}

int slem_eval_result_put(const SlemEvalResult *self, SlemOut *out, int flags, SlemError *err) {
  int st = (flags & SLEM_EVAL_JSON ? write_json : write_text)(slem_out_file(out), self,
                                                             flags & SLEM_EVAL_PER_QUERY);
  if (st == SLEM_ENOMEM) return slem_error(err, st, "out of memory");
  if (st) return slem_error(err, st, "%s: write: %s", slem_out_name(out), strerror(errno));
  return SLEM_OK;
}

int slem_eval_result_put_curve(const SlemEvalResult *self, SlemOut *out, const char *run,
                              SlemError *err) {
  FILE *fp = slem_out_file(out);
  int ok = fprintf(fp, "# interpolated precision-recall of %s: mean over %zu queries, mAP %.6f\n"
                       "# recall\tprecision\n", run, self->evaluated, self->map) > 0;
  for (size_t i = 0; i < self->curve_points; i++)
    ok &= fprintf(fp, "%.6g\t%.6f\n", (double)i / (double)(self->curve_points - 1),
                  self->curve[i]) > 0;
  if (!ok) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(out), strerror(errno));
  return SLEM_OK;
}

int slem_eval_result_write(const SlemEvalResult *self, const char *path, int flags,
                          SlemError *err) {
  SlemOut *out = NULL;
  int st = slem_out_open(&out, path, err);
  if (st) return st;
  if ((st = slem_eval_result_put(self, out, flags, err)) != SLEM_OK) {
    slem_out_abort(out);
    return st;
  }
  return slem_out_commit(out, err);
}

int slem_eval_result_write_curve(const SlemEvalResult *self, const char *path, const char *run,
                                SlemError *err) {
  SlemOut *out = NULL;
  int st = slem_out_open(&out, path, err);
  if (st) return st;
  if ((st = slem_eval_result_put_curve(self, out, run, err)) != SLEM_OK) {
    slem_out_abort(out);
    return st;
  }
  return slem_out_commit(out, err);
}

int slem_eval_run(SlemEvalResult **self, SlemTruth **truth, const char *path,
                  SlemRankFormat fmt, const SlemTruthSpec *spec, const SlemEvalOpts *opts,
                  const char *output, const char *curve, int flags, SlemError *err) {
  SlemOut *outs[2] = {NULL, NULL};
  int st;
  *self = NULL;
  if ((st = slem_truth_read(truth, spec, err)) != SLEM_OK ||
      (st = slem_eval_result_read(self, path, fmt, *truth, opts, err)) != SLEM_OK ||
      (st = slem_out_open(&outs[0], output, err)) != SLEM_OK ||
      (curve && (st = slem_out_open(&outs[1], curve, err)) != SLEM_OK) ||
      (st = slem_eval_result_put(*self, outs[0], flags, err)) != SLEM_OK ||
      (curve && (st = slem_eval_result_put_curve(*self, outs[1],
                                                strcmp(path, "-") ? path : "<stdin>", err)) !=
                    SLEM_OK))
    goto done;
  st = slem_out_commit_all(outs, 2, err);
  outs[0] = outs[1] = NULL;
done:
  slem_out_abort(outs[0]);
  slem_out_abort(outs[1]);
  if (st != SLEM_OK) {
    slem_eval_result_free(*self);
    *self = NULL;
    slem_truth_free(*truth);
    *truth = NULL;
  }
  return st;
}

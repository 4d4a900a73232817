/* The evaluation of the C API (slem.h): slem_evaluate() and slem_evaluate_file() are
 * slem-eval's (eval.h: slem_eval_result_new()) on a ranking read from the caller's I
 * (rank_array.c, slem_rank_array_open()) or from a ranking file, against qrels or labels in
 * memory (truth.h), each asked value taken from the result slem-eval prints: the summary's
 * "map", "P_1", "P_5", "P_10", "recall_K" (R@K, of an evaluation with --recall-k K), or a
 * measure of -M (SlemEvalOpts.measures) of one value. */
#define _POSIX_C_SOURCE 200809L
#include "slem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "eval.h"
#include "measures.h"
#include "rankings.h"
#include "truth.h"

/* What an asked name takes from a result. */
enum { V_MAP, V_P1, V_P5, V_P10, V_RECALL, V_MEASURE };

typedef struct Ask {
  int what;
  size_t k;      /* V_RECALL: K */
  size_t value;  /* V_MEASURE: its index among the result's values (means) */
  int done;      /* out holds its value */
} Ask;

/* "recall_K": K, a whole number from 1, into *k; 0 when name is not of that form. */
static int recall_k(const char *name, size_t *k) {
  const char *p = name + 7;
  char *end;
  unsigned long long v;
  if (strncmp(name, "recall_", 7) != 0 || *p < '1' || *p > '9') return 0;
  v = strtoull(p, &end, 10);
  if (*end || v > SIZE_MAX) return 0;
  *k = (size_t)v;
  return 1;
}

/* The names into ask[n] and the -M measures they need into reqs (*nreqs of them, at most
 * n). Errors: SLEM_EINVAL naming the measure (unknown, or of several values). */
static int plan(const char *const *names, size_t n, Ask *ask, SlemMeasureReq *reqs,
                size_t *nreqs, SlemError *err) {
  size_t nt, nvalues = 0;
  const SlemMeasure *tab = slem_measures(&nt);
  *nreqs = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = names[i];
    int st;
    if (!s) return slem_error(err, SLEM_EINVAL, "measure %zu: NULL", i);
    if (strcmp(s, "map") == 0) ask[i].what = V_MAP;
    else if (strcmp(s, "P_1") == 0) ask[i].what = V_P1;
    else if (strcmp(s, "P_5") == 0) ask[i].what = V_P5;
    else if (strcmp(s, "P_10") == 0) ask[i].what = V_P10;
    else if (recall_k(s, &ask[i].k)) ask[i].what = V_RECALL;
    else {
      SlemMeasureReq *r = reqs + *nreqs;
      size_t nv;
      SlemError e = {0};
      if ((st = slem_eval_measure_parse(r, s, &e)) != SLEM_OK) {
        const char *list = strchr(e.msg, '(');
        if (strncmp(e.msg, "unknown measure", 15) == 0 && list)
          return slem_error(err, st, "unknown measure '%s': map, P_1, P_5, P_10, recall_K, or "
                            "one of slem-eval -M's %s", s, list);
        if (err) *err = e;
        return st;
      }
      nv = tab[r->m].cut == SLEM_CUT_NONE ? 1 : r->ncuts;
      if (nv != 1)
        return slem_error(err, SLEM_EINVAL, "measure '%s' has %zu values (one per cut-off): name "
                          "one, as %s.%g", s, nv, tab[r->m].name, r->cuts[0]);
      ask[i].what = V_MEASURE;
      ask[i].value = nvalues++;
      (*nreqs)++;
    }
  }
  return SLEM_OK;
}

/* The ranking to evaluate: the caller's I, or a ranking file. */
typedef struct Ranking {
  const int64_t *I;
  size_t nq, k;
  uint64_t ndb;
  const char *path;
  SlemRankFormat fmt;
} Ranking;

/* One evaluation of the ranking against truth with R@recall_k and the measures reqs. */
static int evaluate_once(SlemEvalResult **res, const Ranking *rk, const SlemTruth *truth,
                         size_t recall_k, const SlemMeasureReq *reqs, size_t nreqs,
                         SlemError *err) {
  SlemEvalOpts opts;
  SlemRankReader *reader = NULL;
  int st;
  slem_eval_opts_init(&opts);
  opts.recall_k = recall_k;
  opts.measures = reqs;
  opts.nmeasures = nreqs;
  if (!rk->path) {
    if ((st = slem_rank_array_open(&reader, "I", rk->I, rk->nq, rk->k, rk->ndb, err)) != SLEM_OK)
      return st;
    st = slem_eval_result_new(res, reader, truth, &opts, err);
    slem_rankreader_free(reader);
    return st;
  }
  return slem_eval_result_read(res, rk->path, rk->fmt, truth, &opts, err);
}

/* Both entry points: the names planned, the truth read, the ranking evaluated once per K of
 * recall_K asked (once at least: the ranking and the truth are checked when nothing is
 * asked), values written at the end alone. */
static int evaluate(const Ranking *rk, const SlemTruthArrays *truth, const char *const *measures,
                    size_t nmeasures, double *values, SlemError *err) {
  SlemTruth *t = NULL;
  SlemEvalResult *res = NULL;
  SlemMeasureReq *reqs = NULL;
  Ask *ask = NULL;
  double *out = NULL;
  size_t nreqs = 0, k0 = 100;
  int st;

  if (!truth) return slem_error(err, SLEM_EINVAL, "no ground truth (truth is NULL)");
  if (!truth->qrels == !truth->query_labels)
    return slem_error(err, SLEM_EINVAL, "give the ground truth as qrels or as query_labels and "
                      "db_labels, one of them");
  if (truth->query_labels && !truth->db_labels)
    return slem_error(err, SLEM_EINVAL, "query_labels and db_labels go together");
  if (nmeasures > 0 && (!measures || !values))
    return slem_error(err, SLEM_EINVAL, "%s is NULL", !measures ? "measures" : "values");
  ask = calloc(nmeasures ? nmeasures : 1, sizeof *ask);
  reqs = calloc(nmeasures ? nmeasures : 1, sizeof *reqs);
  out = calloc(nmeasures ? nmeasures : 1, sizeof *out);
  if (!ask || !reqs || !out) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = plan(measures, nmeasures, ask, reqs, &nreqs, err)) != SLEM_OK) goto done;
  st = truth->qrels ? slem_truth_read_qrels(&t, truth->qrels, err)
                    : slem_truth_from_labels(&t, truth->query_labels,
                                             truth->nq ? truth->nq : rk->nq, truth->db_labels,
                                             truth->ndb, err);
  if (st != SLEM_OK) goto done;
  /* the first evaluation: the -M measures and the first K asked (100 if none); then one
   * more for each other K */
  for (size_t i = 0; i < nmeasures; i++)
    if (ask[i].what == V_RECALL) {
      k0 = ask[i].k;
      break;
    }
  if ((st = evaluate_once(&res, rk, t, k0, reqs, nreqs, err)) != SLEM_OK) goto done;
  for (size_t i = 0; i < nmeasures; i++) {
    const Ask *a = ask + i;
    if (a->what == V_RECALL && a->k != k0) continue;
    out[i] = a->what == V_MAP ? res->map : a->what == V_P1 ? res->p1 : a->what == V_P5 ? res->p5
             : a->what == V_P10 ? res->p10 : a->what == V_RECALL ? res->rk
             : res->means[a->value];
    ask[i].done = 1;
  }
  for (size_t i = 0; i < nmeasures; i++) {
    if (ask[i].done) continue;
    slem_eval_result_free(res);
    res = NULL;
    if ((st = evaluate_once(&res, rk, t, ask[i].k, NULL, 0, err)) != SLEM_OK) goto done;
    for (size_t j = i; j < nmeasures; j++)
      if (!ask[j].done && ask[j].what == V_RECALL && ask[j].k == ask[i].k) {
        out[j] = res->rk;
        ask[j].done = 1;
      }
  }
  if (nmeasures) memcpy(values, out, nmeasures * sizeof *values);
done:
  slem_eval_result_free(res);
  slem_truth_free(t);
  free(ask);
  free(reqs);
  free(out);
  return st;
}

int slem_evaluate(const int64_t *I, size_t nq, size_t k, const SlemTruthArrays *truth,
                  const char *const *measures, size_t nmeasures, double *values,
                  SlemError *err) {
  Ranking rk = {I, nq, k, truth ? truth->ndb : 0, NULL, SLEM_RANK_AUTO};
  if (nq == 0 || k == 0)
    return slem_error(err, SLEM_EINVAL, "I: %zu x %zu: no rankings", nq, k);
  if (!I) return slem_error(err, SLEM_EINVAL, "I is NULL");
  if (k > SIZE_MAX / sizeof *I / nq)
    return slem_error(err, SLEM_EINVAL, "I: %zu x %zu rows do not fit in memory", nq, k);
  return evaluate(&rk, truth, measures, nmeasures, values, err);
}

int slem_evaluate_file(const char *ranking, const char *format, const SlemTruthArrays *truth,
                       const char *const *measures, size_t nmeasures, double *values,
                       SlemError *err) {
  Ranking rk = {NULL, 0, 0, 0, ranking, SLEM_RANK_AUTO};
  int st;
  if (!ranking) return slem_error(err, SLEM_EINVAL, "no ranking (NULL)");
  if (format && (st = slem_rankformat_parse(&rk.fmt, format, err)) != SLEM_OK) return st;
  if (truth && truth->query_labels && truth->nq == 0)
    return slem_error(err, SLEM_EINVAL, "query_labels without their count (truth->nq)");
  return evaluate(&rk, truth, measures, nmeasures, values, err);
}

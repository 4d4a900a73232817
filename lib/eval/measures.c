#include "measures.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_GEO_MEAN 1e-5 /* trec_eval's floor for the geometric mean of AP */

static long rel_ret(const SlemJudged *q, size_t upto) {
  long r = 0;
  for (size_t i = 0; i < q->n && i < upto; i++) r += q->rel[i] >= q->level;
  return r;
}

double slem_judged_ap(const SlemJudged *q, SlemApKind kind) {
  double ap = 0, r_prev = 0, p_prev = 1;
  long hits = 0;
  if (q->num_rel <= 0) return 0;
  for (size_t i = 0; i < q->n; i++) {
    int rel = q->rel[i] >= q->level;
    hits += rel;
    if (kind == SLEM_AP_TREC) {
      if (rel) ap += (double)hits / (double)(i + 1);
    } else {
      double r = (double)hits / (double)q->num_rel, p = (double)hits / (double)(i + 1);
      ap += (r - r_prev) * (p_prev + p) / 2;
      r_prev = r;
      p_prev = p;
    }
  }
  return kind == SLEM_AP_TREC ? ap / (double)q->num_rel : ap;
}

static void m_num_q(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)q, (void)cuts, (void)ncuts;
  out[0] = 1;
}

static void m_num_ret(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = (double)q->n;
}

static void m_num_rel(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = (double)q->num_rel;
}

static void m_num_rel_ret(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = (double)rel_ret(q, q->n);
}

static void m_map(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = slem_judged_ap(q, SLEM_AP_TREC);
}

/* the logarithm: the aggregate is exp of the mean */
static void m_gm_map(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double ap = slem_judged_ap(q, SLEM_AP_TREC);
  (void)cuts, (void)ncuts;
  out[0] = log(ap > MIN_GEO_MEAN ? ap : MIN_GEO_MEAN);
}

static void m_rprec(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = 0;
  if (q->n > 0 && q->num_rel > 0) out[0] = (double)rel_ret(q, (size_t)q->num_rel) / (double)q->num_rel;
}

static void m_recip_rank(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = 0;
  for (size_t i = 0; i < q->n; i++)
    if (q->rel[i] >= q->level) {
      out[0] = 1.0 / (double)(i + 1);
      break;
    }
}

/* interpolated precision at recall x: the largest precision at any rank from the one where
 * lround(x num_rel) relevant documents are in, walking the ranking backwards */
static void m_iprec(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t nret = q->n;
  long rr = rel_ret(q, nret);
  for (size_t c = 0; c < ncuts; c++) out[c] = 0;
  if (nret > 0) {
    double best = (double)rr / (double)nret;
    long rel_so_far = rr;
    long cc = (long)ncuts - 1;
    size_t cut[64];
    for (size_t c = 0; c < ncuts && c < 64; c++) cut[c] = (size_t)lround(cuts[c] * (double)q->num_rel);
    while (cc >= 0 && cut[cc] > (size_t)rr) cc--;
    for (size_t i = nret; i > 0 && rel_so_far > 0; i--) {
      double prec = (double)rel_so_far / (double)i;
      if (best < prec) best = prec;
      if (q->rel[i - 1] >= q->level) {
        while (cc >= 0 && (size_t)rel_so_far == cut[cc]) out[cc--] = best;
        rel_so_far--;
      }
    }
    while (cc >= 0) out[cc--] = best;
  }
}

/* P at k: a short ranking is filled with non-relevant documents */
static void m_p(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  for (size_t c = 0; c < ncuts; c++) {
    long k = (long)cuts[c];
    out[c] = (double)rel_ret(q, (size_t)k) / (double)k;
  }
}

/* recall at k: relevant in the first k over num_rel; 0 when the query has none */
static void m_recall(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  for (size_t c = 0; c < ncuts; c++)
    out[c] = q->num_rel ? (double)rel_ret(q, (size_t)cuts[c]) / (double)q->num_rel : 0.0;
}

/* DCG of the first k ranks (k = n: all), gains the positive qrels values */
static double dcg(const SlemJudged *q, size_t k) {
  double sum = 0;
  for (size_t i = 0; i < q->n && i < k; i++)
    if (q->rel[i] > 0) sum += (double)q->rel[i] / log2((double)(i + 2));
  return sum;
}

static double ideal_dcg(const SlemJudged *q, size_t k) {
  double sum = 0;
  for (size_t i = 0; i < q->ngains && i < k; i++) sum += (double)q->gains[i] / log2((double)(i + 2));
  return sum;
}

/* nDCG: gains are the qrels values (not the relevance level), the ideal ranking the qrels
 * sorted by gain */
static void m_ndcg(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double ideal = ideal_dcg(q, q->ngains);
  (void)cuts, (void)ncuts;
  out[0] = ideal > 0 ? dcg(q, q->n) / ideal : 0.0;
}

/* nDCG at k: both sums stop at rank k */
static void m_ndcg_cut(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  for (size_t c = 0; c < ncuts; c++) {
    size_t k = (size_t)cuts[c];
    double ideal = ideal_dcg(q, k), d = dcg(q, k);
    out[c] = ideal > 0 ? d / ideal : d;
  }
}

/* success at k: 1 when a relevant document is in the first k */
static void m_success(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  for (size_t c = 0; c < ncuts; c++) out[c] = rel_ret(q, (size_t)cuts[c]) ? 1.0 : 0.0;
}

static const double rank_cuts[] = {5, 10, 15, 20, 30, 100, 200, 500, 1000};
static const double recall_levels[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
static const double success_cuts[] = {1, 5, 10};
#define CUTS(a) a, sizeof a / sizeof *a

static const SlemMeasure table[] = {
    /* name, per query, aggregate, cut-offs, count, official, per topic */
    {"num_q", m_num_q, SLEM_AGG_NUM_Q, SLEM_CUT_NONE, NULL, 0, 1, 1, 0},
    {"num_ret", m_num_ret, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 1, 1},
    {"num_rel", m_num_rel, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 1, 1},
    {"num_rel_ret", m_num_rel_ret, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 1, 1},
    {"map", m_map, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1},
    {"gm_map", m_gm_map, SLEM_AGG_GEO, SLEM_CUT_NONE, NULL, 0, 0, 1, 0},
    {"Rprec", m_rprec, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1},
    {"recip_rank", m_recip_rank, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1},
    {"iprec_at_recall", m_iprec, SLEM_AGG_MEAN, SLEM_CUT_RECALL, CUTS(recall_levels), 0, 1, 1},
    {"P", m_p, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 1, 1},
    {"recall", m_recall, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1},
    {"ndcg", m_ndcg, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1},
    {"ndcg_cut", m_ndcg_cut, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1},
    {"success", m_success, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(success_cuts), 0, 0, 1},
};

const SlemMeasure *slem_measures(size_t *n) {
  *n = sizeof table / sizeof *table;
  return table;
}

long slem_measure_find(const char *name, size_t len) {
  for (size_t m = 0; m < sizeof table / sizeof *table; m++)
    if (strlen(table[m].name) == len && strncmp(name, table[m].name, len) == 0) return (long)m;
  return -1;
}

int slem_measure_parse(SlemMeasureReq *req, const char *spec, SlemError *err) {
  const char *dot = strchr(spec, '.');
  size_t len = dot ? (size_t)(dot - spec) : strlen(spec), n = 0;
  long m = slem_measure_find(spec, len);
  const SlemMeasure *me;
  const char *p;
  double *cut = req->cuts;
  if (m < 0) return -1;
  me = table + m;
  req->m = (size_t)m;
  req->ncuts = me->ncuts;
  if (me->ncuts) memcpy(req->cuts, me->cuts, me->ncuts * sizeof *me->cuts);
  if (!dot) return SLEM_OK;
  if (me->cut == SLEM_CUT_NONE)
    return slem_error(err, SLEM_EINVAL, "%s: %s takes no parameters here", spec, me->name);
  for (p = dot + 1;;) {
    char *end;
    double v;
    errno = 0;
    if (n == SLEM_MAX_CUTS)
      return slem_error(err, SLEM_EINVAL, "%s: at most %d cut-offs", spec, SLEM_MAX_CUTS);
    if (me->cut == SLEM_CUT_RANK) {
      long l = strtol(p, &end, 10);
      if (end == p || errno || l <= 0 || (*end && *end != ','))
        return slem_error(err, SLEM_EINVAL, "%s: cut-offs are positive whole numbers", spec);
      for (size_t i = 0; i < n; i++)
        if (cut[i] == (double)l) return slem_error(err, SLEM_EINVAL, "%s: %ld twice", spec, l);
      v = (double)l;
    } else {
      v = strtod(p, &end);
      if (end == p || errno || !(v >= 0 && v <= 1) || (*end && *end != ','))
        return slem_error(err, SLEM_EINVAL, "%s: recall levels go from 0 to 1", spec);
      for (size_t i = 0; i < n; i++)
        if (cut[i] == v) return slem_error(err, SLEM_EINVAL, "%s: %g twice", spec, v);
    }
    cut[n++] = v;
    if (!*end) break;
    p = end + 1;
  }
  /* trec_eval prints the cut-offs in increasing order, whatever the order given */
  for (size_t a = 1; a < n; a++)
    for (size_t b = a; b > 0 && cut[b - 1] > cut[b]; b--) {
      double t = cut[b];
      cut[b] = cut[b - 1];
      cut[b - 1] = t;
    }
  req->ncuts = n;
  return SLEM_OK;
}

void slem_measure_value_name(const SlemMeasureReq *req, size_t c, char *name, size_t size) {
  const SlemMeasure *me = table + req->m;
  if (me->cut == SLEM_CUT_RANK) snprintf(name, size, "%s_%ld", me->name, (long)req->cuts[c]);
  else if (me->cut == SLEM_CUT_RECALL) snprintf(name, size, "%s_%.2f", me->name, req->cuts[c]);
  else snprintf(name, size, "%s", me->name);
}

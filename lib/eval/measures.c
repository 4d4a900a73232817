#include "measures.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_GEO_MEAN 1e-5 /* trec_eval's floor for the geometric mean of AP */

static long rel_ret(const SlemJudged *q, size_t upto) {
  long r = 0;
  for (size_t i = 0; i < q->n && i < upto; i++) r += q->rel[i] >= q->level;
  return r;
}

/* trec_eval's num_rel_ret (form_res_rels.c): the relevant retrieved among the judged ones
 * only. It differs from rel_ret(q, q->n) under a negative relevance level (-l -1), where a
 * document the qrels do not name (SLEM_UNJUDGED, -1) passes rel >= level: trec_eval counts
 * it as relevant where it scans the ranking (map, P, Rprec) but not in this total, which
 * num_rel_ret, the set measures, utility and the interpolated precisions start from. */
static long num_rel_ret(const SlemJudged *q) {
  long r = 0;
  for (size_t i = 0; i < q->n; i++) r += q->rel[i] >= 0 && q->rel[i] >= q->level;
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
    } else if (kind == SLEM_AP_REVISITOP) {
      if (rel) { /* hits - 1 relevant in the i ranks before */
        double j = (double)(hits - 1);
        ap += ((i == 0 ? 1.0 : j / (double)i) + (j + 1) / (double)(i + 1)) / 2.0 / (double)q->num_rel;
      }
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
  out[0] = (double)num_rel_ret(q);
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
  long rr = num_rel_ret(q);
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

/* The gain of rank i + 1: its qrels value when positive, else 0; or the gain map's
 * (q->rank_gain). */
static double gain(const SlemJudged *q, long i) {
  if (q->rank_gain) return q->rank_gain[i];
  return q->rel[i] > 0 ? (double)q->rel[i] : 0.0;
}

/* The gain at rank i + 1 of the ideal ranking (i = -1: the first); 0 past its end. */
static double ideal(const SlemJudged *q, long i) {
  if (i < 0) i = 0;
  if (q->rank_gain) return (size_t)i < q->nideal ? q->ideal_gain[i] : 0.0;
  return (size_t)i < q->ngains ? (double)q->gains[i] : 0.0;
}

/* DCG of the first k ranks (k = n: all); a gain map's negative gains count too */
static double dcg(const SlemJudged *q, size_t k) {
  double sum = 0;
  for (size_t i = 0; i < q->n && i < k; i++) {
    double g = gain(q, (long)i);
    if (g != 0) sum += g / log2((double)(i + 2));
  }
  return sum;
}

static double ideal_dcg(const SlemJudged *q, size_t k) {
  double sum = 0, g;
  for (size_t i = 0; i < k && (g = ideal(q, (long)i)) > 0; i++) sum += g / log2((double)(i + 2));
  return sum;
}

/* nDCG: gains are the qrels values (not the relevance level) or a gain map's, the ideal
 * ranking the judged documents sorted by gain */
static void m_ndcg(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double best = ideal_dcg(q, SIZE_MAX);
  (void)cuts, (void)ncuts;
  out[0] = best > 0 ? dcg(q, q->n) / best : 0.0;
}

/* DCG and the ideal ranking's DCG, nDCG's two terms (trec_eval's dcg and ideal_dcg) */
static void m_dcg(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = dcg(q, q->n);
}

static void m_ideal_dcg(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = ideal_dcg(q, SIZE_MAX);
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

/* bpref: for each judged relevant document, the fraction of the first min(R, N) judged
 * non-relevant ones (N their number in the qrels) ranked above it; documents outside the
 * qrels or unjudged in the pool are skipped */
static double bpref(const SlemJudged *q) {
  long nonrel_so_far = 0;
  double b = 0;
  for (size_t j = 0; j < q->n; j++) {
    long r = q->rel[j];
    if (r == SLEM_UNJUDGED || r == SLEM_POOLED) continue;
    if (r >= 0 && r < q->level) nonrel_so_far++;
    else if (nonrel_so_far > 0) /* then num_nonrel >= nonrel_so_far > 0 */
      b += 1.0 - (double)(nonrel_so_far < q->num_rel ? nonrel_so_far : q->num_rel) /
                     (double)(q->num_nonrel < q->num_rel ? q->num_nonrel : q->num_rel);
    else b += 1.0;
  }
  return q->num_rel ? b / (double)q->num_rel : b;
}

static void m_bpref(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = bpref(q);
}

static void m_gm_bpref(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double b = bpref(q);
  (void)cuts, (void)ncuts;
  out[0] = log(b > MIN_GEO_MEAN ? b : MIN_GEO_MEAN);
}

#define INFAP_EPSILON 1e-5
/* infAP (Yilmaz and Aslam): precision above each relevant document estimated from the
 * judged documents above it, documents outside the pool counting as non-relevant */
static void m_infap(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  long nonrel = 0, rel = 0, pooled = 0;
  double ap = 0;
  (void)cuts, (void)ncuts;
  for (size_t j = 0; j < q->n; j++) {
    long r = q->rel[j];
    if (r == SLEM_UNJUDGED) continue;
    if (r == SLEM_POOLED) {
      pooled++;
      continue;
    }
    if (r >= 0 && r < q->level) {
      nonrel++;
      continue;
    }
    rel++;
    if (j == 0) ap += 1.0;
    else {
      double fj = (double)j;
      ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((double)(rel - 1 + nonrel + pooled) / fj) *
                                   (((double)(rel - 1) + INFAP_EPSILON) /
                                    ((double)(rel - 1 + nonrel) + 2 * INFAP_EPSILON));
    }
  }
  out[0] = q->num_rel ? ap / (double)q->num_rel : ap;
}

/* precision at ranks that are multiples of R: cut-off (long)(x R + 0.9) */
static void m_rprec_mult(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  long cut[SLEM_MAX_CUTS], rr = num_rel_ret(q), nret = (long)q->n, rel_so_far = rr;
  long cc = (long)ncuts - 1;
  for (size_t c = 0; c < ncuts; c++) {
    cut[c] = (long)(cuts[c] * (double)q->num_rel + 0.9);
    out[c] = 0;
  }
  while (cc >= 0 && cut[cc] > nret) {
    out[cc] = (double)rr / (double)cut[cc];
    cc--;
  }
  for (long i = nret; i > 0 && rel_so_far > 0; i--) {
    double prec = (double)rel_so_far / (double)i;
    while (cc >= 0 && i == cut[cc]) out[cc--] = prec;
    if (q->rel[i - 1] >= q->level) rel_so_far--;
  }
}

/* trec_eval's default utility coefficients: +1 a relevant retrieved, -1 a non-relevant one */
/* utility: p1 a + p2 b + p3 c + p4 d over the contingency table (a relevant retrieved, b
 * non-relevant retrieved, c relevant not retrieved, d the rest of the collection: q->num_docs,
 * trec_eval -N); the coefficients are the parameters, 1, -1, 0, 0 by default */
static void m_utility(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  static const double dflt[] = {1.0, -1.0, 0.0, 0.0};
  const double *p = ncuts == 4 ? cuts : dflt;
  long rr = num_rel_ret(q), nret = (long)q->n;
  out[0] = p[0] * (double)rr + p[1] * (double)(nret - rr) + p[2] * (double)(q->num_rel - rr) +
           p[3] * (q->num_docs + (double)(rr - nret - q->num_rel));
}

/* mean interpolated precision at the recall levels of the parameters (increasing, repeats
 * counted), 0, 0.1, ..., 1 by default */
static void m_11pt(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  static const double dflt[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  const double *lv = ncuts ? cuts : dflt;
  size_t nl = ncuts ? ncuts : sizeof dflt / sizeof *dflt;
  long cut[SLEM_MAX_CUTS], rr = num_rel_ret(q), rel_so_far = rr, cc = (long)nl - 1;
  double sum = 0, best;
  for (size_t c = 0; c < nl; c++) cut[c] = lround(lv[c] * (double)q->num_rel);
  while (cc >= 0 && cut[cc] > rr) cc--;
  best = (double)rr / (double)q->n;
  for (size_t i = q->n; i > 0 && rel_so_far > 0; i--) {
    double prec = (double)rel_so_far / (double)i;
    if (best < prec) best = prec;
    if (q->rel[i - 1] >= q->level) {
      while (cc >= 0 && rel_so_far == cut[cc]) {
        sum += best;
        cc--;
      }
      rel_so_far--;
    }
  }
  while (cc >= 0) {
    sum += best;
    cc--;
  }
  out[0] = sum / (double)nl;
}

/* binary G: each relevant document discounted by the non-relevant ones above it */
static void m_bing(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  long so_far = 0;
  double sum = 0;
  (void)cuts, (void)ncuts;
  out[0] = 0;
  for (size_t i = 0; i < q->n; i++)
    if (q->rel[i] >= q->level) {
      so_far++;
      sum += 1.0 / log2((double)(3 + (long)i - so_far));
    }
  if (so_far) out[0] = sum / (double)q->num_rel;
}

/* G (trec_eval's m_G.c): gains discounted by the cost of reaching them */
static void m_g(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double res_g = 0, sum_res = 0, sum_ideal = 0, sum_cost = 0, ig = ideal(q, -1);
  long i = 0, n = (long)q->n;
  (void)cuts, (void)ncuts;
  for (; i < n && ig > 0.0; i++) {
    double rg = gain(q, i);
    sum_res += rg;
    ig = ideal(q, i);
    if (ig > 0.0) sum_ideal += ig;
    sum_cost += ig >= 1.0 ? ig : 1.0;
    if (rg != 0) res_g += rg / log2(2 + sum_cost - sum_res);
  }
  for (; i < n; i++) {
    double rg = gain(q, i);
    sum_res += rg;
    sum_cost += 1.0;
    if (rg != 0) res_g += rg / log2(2 + sum_cost - sum_res);
  }
  for (; ig > 0.0; i++) {
    ig = ideal(q, i);
    if (ig > 0.0) sum_ideal += ig;
  }
  out[0] = sum_ideal > 0.0 ? res_g / sum_ideal : 0.0;
}

/* nDCG averaged over the relevant documents' ranks (trec_eval's m_ndcg_rel.c) */
static void m_ndcg_rel(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double rdcg = 0, idcg = 0, sum = 0, ig = ideal(q, -1);
  long nrel = 0, nrr = 0, i = 0, n = (long)q->n;
  (void)cuts, (void)ncuts;
  for (; i < n && ig > 0.0; i++) {
    double rg = gain(q, i);
    if (rg != 0) rdcg += rg / log2((double)(i + 2));
    ig = ideal(q, i);
    if (ig > 0.0) {
      nrel++;
      idcg += ig / log2((double)(i + 2));
    }
    if (rg > 0) {
      sum += rdcg / idcg;
      nrr++;
    }
  }
  for (; i < n; i++) {
    double rg = gain(q, i);
    if (rg != 0) rdcg += rg / log2((double)(i + 2));
    if (rg > 0) {
      sum += rdcg / idcg;
      nrr++;
    }
  }
  for (; ig > 0.0; i++) {
    ig = ideal(q, i);
    if (ig > 0.0) {
      nrel++;
      idcg += ig / log2((double)(i + 2));
    }
  }
  sum += (double)(nrel - nrr) * rdcg / idcg;
  out[0] = sum > 0.0 ? sum / (double)nrel : 0.0;
}

/* nDCG averaged over the ranks where the ideal gain changes (trec_eval's m_Rndcg.c) */
static void m_rndcg(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double rdcg = 0, idcg = 0, sum = 0, ig = ideal(q, -1), old = ig;
  long changed = 0, i = 0, n = (long)q->n;
  (void)cuts, (void)ncuts;
  out[0] = 0;
  if (q->num_rel == 0) return;
  for (; i < n && ig > 0.0; i++) {
    double rg = gain(q, i);
    ig = ideal(q, i);
    if (old != ig) {
      if (idcg > 0.0) {
        sum += rdcg / idcg;
        changed++;
      }
      old = ig;
    }
    if (rg != 0) rdcg += rg / log2((double)(i + 2));
    if (ig > 0.0) idcg += ig / log2((double)(i + 2));
  }
  if (i < n) {
    for (; i < n; i++) {
      double rg = gain(q, i);
      if (rg != 0) rdcg += rg / log2((double)(i + 2));
    }
    if (idcg > 0.0) {
      sum += rdcg / idcg;
      changed++;
    }
  }
  for (; ig > 0.0; i++) {
    ig = ideal(q, i);
    if (old != ig) {
      if (idcg > 0.0) {
        sum += rdcg / idcg;
        changed++;
      }
      old = ig;
    }
    if (ig > 0.0) idcg += ig / log2((double)(i + 2));
  }
  out[0] = sum / (double)changed;
}

/* AP of the first k ranks (relevant documents below k add 0) */
static void m_map_cut(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t c = 0;
  long so_far = 0;
  double sum = 0;
  for (size_t i = 0; i < ncuts; i++) out[i] = 0;
  if (q->num_rel == 0) return;
  for (size_t i = 0; i < q->n; i++) {
    if ((double)i == cuts[c]) {
      out[c] = sum / (double)q->num_rel;
      if (++c == ncuts) break;
    }
    if (q->rel[i] >= q->level) {
      so_far++;
      sum += (double)so_far / (double)(i + 1);
    }
  }
  for (; c < ncuts; c++) out[c] = sum / (double)q->num_rel;
}

/* relevant in the first k over min(k, R) */
static void m_relative_p(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t c = 0;
  long so_far = 0, r = q->num_rel;
  for (size_t i = 0; i < ncuts; i++) out[i] = 0;
  if (r == 0) return;
  for (size_t i = 0; i < q->n; i++) {
    if ((double)i == cuts[c]) {
      out[c] = (double)so_far / (double)((long)i > r ? r : (long)i);
      if (++c == ncuts) break;
    }
    so_far += q->rel[i] >= q->level;
  }
  for (; c < ncuts; c++) {
    long k = (long)cuts[c];
    out[c] = (double)so_far / (double)(k > r ? r : k);
  }
}

/* measures of the retrieved set, ranks ignored */
static void m_set_p(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = q->n ? (double)num_rel_ret(q) / (double)q->n : 0.0;
}

static void m_set_relative_p(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  long n = (long)q->n;
  (void)cuts, (void)ncuts;
  out[0] = n && q->num_rel ? (double)num_rel_ret(q) / (double)(n < q->num_rel ? n : q->num_rel) : 0.0;
}

static void m_set_recall(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)cuts, (void)ncuts;
  out[0] = q->num_rel ? (double)num_rel_ret(q) / (double)q->num_rel : 0.0;
}

static void m_set_map(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double rr = (double)num_rel_ret(q);
  (void)cuts, (void)ncuts;
  out[0] = q->n && q->num_rel ? (rr * rr) / ((double)q->n * (double)q->num_rel) : 0.0;
}

/* F: (x + 1) P R / (x P + R), x the parameter (1 by default), as trec_eval writes it */
static void m_set_f(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  long rr = num_rel_ret(q);
  out[0] = 0;
  if (rr) {
    double p = (double)rr / (double)q->n, r = (double)rr / (double)q->num_rel, x = ncuts ? cuts[0] : 1.0;
    out[0] = (x + 1.0) * p * r / (x * p + r);
  }
}

static void m_num_nonrel_judged_ret(const SlemJudged *q, const double *cuts, size_t ncuts,
                                    double *out) {
  long judged = 0;
  (void)cuts, (void)ncuts;
  for (size_t i = 0; i < q->n; i++) judged += q->rel[i] >= 0;
  out[0] = (double)(judged - num_rel_ret(q));
}

/* yaap (Robertson's "yet another AP"): log((1 + S) / (1 + R - S)), S the sum of the
 * precisions at the relevant ranks (AP times R) */
static void m_yaap(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double sum = 0;
  long so_far = 0;
  (void)cuts, (void)ncuts;
  for (size_t i = 0; i < q->n; i++)
    if (q->rel[i] >= q->level) sum += (double)++so_far / (double)(i + 1);
  out[0] = log((1.0 + sum) / (1.0 + (double)q->num_rel - sum));
}

/* residual of rank-biased precision, p the parameter (rbp_resid.p=P; 0.9 by default): as
 * trec_eval 10.0's m_rbp_resid.c computes it (p^n plus (1 - p) times the weights of the
 * unjudged ranks, when any is unjudged) */
static void m_rbp_resid(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  double p = ncuts ? cuts[0] : 0.9, sum = 0, cur = 1.0;
  long unj = 0;
  for (size_t i = 0; i < q->n; i++) {
    if (q->rel[i] < 0) {
      unj++;
      sum += cur;
    }
    cur = cur * p;
  }
  out[0] = unj ? cur + (1 - p) * sum : 0.0;
}

/* the fraction of unjudged documents in the first k (k counted even past the ranking) */
static void m_unj(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t c = 0;
  long so_far = 0;
  for (size_t i = 0; i < ncuts; i++) out[i] = 0;
  for (size_t i = 0; i < q->n; i++) {
    if ((double)i == cuts[c]) {
      out[c] = (double)so_far / (double)i;
      if (++c == ncuts) break;
    }
    so_far += q->rel[i] == SLEM_UNJUDGED || q->rel[i] == SLEM_POOLED;
  }
  for (; c < ncuts; c++) out[c] = (double)so_far / cuts[c];
}

/* the qrels values of the first ranks, 10 or the parameter (at most SLEM_MAX_CUTS - 1), as
 * trec_eval prints them */
static void m_relstring(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t want = ncuts ? (size_t)cuts[0] : 10, len = q->n < want ? q->n : want;
  out[0] = (double)len;
  for (size_t i = 0; i < len; i++) out[i + 1] = (double)q->rel[i];
}

/* revisitop's mP@k: relevant in the first k over min(k, the rank of the last relevant
 * retrieved); 0 when none is retrieved */
static void m_revisitop_p(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  size_t last = 0, j = 0;
  for (size_t i = 0; i < q->n; i++)
    if (q->rel[i] >= q->level) {
      last = i + 1;
      j++;
    }
  for (size_t c = 0; c < ncuts; c++) {
    size_t k = (size_t)cuts[c], kq = last < k ? last : k;
    out[c] = j == 0 ? 0.0 : (double)rel_ret(q, k) / (double)kq;
  }
}

static void m_none(const SlemJudged *q, const double *cuts, size_t ncuts, double *out) {
  (void)q, (void)cuts, (void)ncuts;
  out[0] = 0;
}

static const double rank_cuts[] = {5, 10, 15, 20, 30, 100, 200, 500, 1000};
static const double recall_levels[] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
static const double success_cuts[] = {1, 5, 10};
static const double rprec_mults[] = {0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0};
static const double unj_cuts[] = {5, 10, 20};
#define CUTS(a) a, sizeof a / sizeof *a

static const SlemMeasure table[] = {
    /* name, per query, aggregate, cut-offs, count, official, per topic, zero if missing, trec; in
     * trec_eval's order; trec 1: in its all_trec set, 2: only by name (dcg, ideal_dcg, yaap) */
    {"runid", m_none, SLEM_AGG_TEXT, SLEM_CUT_NONE, NULL, 0, 0, 1, 0, 0, 1},
    {"num_q", m_num_q, SLEM_AGG_NUM_Q, SLEM_CUT_NONE, NULL, 0, 1, 1, 0, 0, 1},
    {"num_ret", m_num_ret, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 1, 1, 1, 1},
    {"num_rel", m_num_rel, SLEM_AGG_NUM_REL, SLEM_CUT_NONE, NULL, 0, 1, 1, 1, 0, 1},
    {"num_rel_ret", m_num_rel_ret, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 1, 1, 0, 1},
    {"map", m_map, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1, 0, 1},
    {"gm_map", m_gm_map, SLEM_AGG_GEO, SLEM_CUT_NONE, NULL, 0, 0, 1, 0, 0, 1},
    {"Rprec", m_rprec, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1, 0, 1},
    {"bpref", m_bpref, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1, 0, 1},
    {"recip_rank", m_recip_rank, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 1, 1, 0, 1},
    {"iprec_at_recall", m_iprec, SLEM_AGG_MEAN, SLEM_CUT_RECALL, CUTS(recall_levels), 0, 1, 1, 0, 1},
    {"P", m_p, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 1, 1, 0, 1},
    {"relstring", m_relstring, SLEM_AGG_STRING, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 1, 1},
    {"recall", m_recall, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1, 0, 1},
    {"infAP", m_infap, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"gm_bpref", m_gm_bpref, SLEM_AGG_GEO, SLEM_CUT_NONE, NULL, 0, 0, 0, 0, 0, 1},
    {"Rprec_mult", m_rprec_mult, SLEM_AGG_MEAN, SLEM_CUT_REAL, CUTS(rprec_mults), 0, 0, 1, 0, 1},
    {"utility", m_utility, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 1, 1},
    {"11pt_avg", m_11pt, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"binG", m_bing, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"G", m_g, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"dcg", m_dcg, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 2},
    {"ideal_dcg", m_ideal_dcg, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 2},
    {"ndcg", m_ndcg, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"ndcg_rel", m_ndcg_rel, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"Rndcg", m_rndcg, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"ndcg_cut", m_ndcg_cut, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1, 0, 1},
    {"map_cut", m_map_cut, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1, 0, 1},
    {"relative_P", m_relative_p, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(rank_cuts), 0, 0, 1, 0, 1},
    {"success", m_success, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(success_cuts), 0, 0, 1, 0, 1},
    {"set_P", m_set_p, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"set_relative_P", m_set_relative_p, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"set_recall", m_set_recall, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"set_map", m_set_map, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"set_F", m_set_f, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 1},
    {"num_nonrel_judged_ret", m_num_nonrel_judged_ret, SLEM_AGG_SUM, SLEM_CUT_NONE, NULL, 0, 1, 0, 1, 0, 1},
    {"yaap", m_yaap, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 0, 2},
    {"rbp_resid", m_rbp_resid, SLEM_AGG_MEAN, SLEM_CUT_NONE, NULL, 0, 0, 0, 1, 1, 1},
    {"unj", m_unj, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(unj_cuts), 0, 0, 1, 1, 1},

    /* slem's own: not in trec_eval */
    {"revisitop_mP", m_revisitop_p, SLEM_AGG_MEAN, SLEM_CUT_RANK, CUTS(success_cuts), 0, 0, 1, 0, 0},
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

/* the largest magnitude of a gain, a coefficient or a beta: sums over any ranking stay finite */
#define BIG 1e100

/* The measures whose parameters are not cut-offs (one value each, printed NAME_PARAMS as
 * trec_eval prints them): what each takes. */
typedef enum ParamKind {
  PARAM_REALS, /* numbers from lo to hi, min to max of them, increasing when sorted */
  PARAM_GAINS, /* LEVEL=GAIN pairs, LEVEL a whole number given once: nDCG's gain map */
  PARAM_P      /* p=P alone, lo < P < hi */
} ParamKind;

static const struct ParamRule {
  const char *name;
  ParamKind kind;
  size_t min, max;
  double lo, hi;
  int sorted;
  const char *what;
} param_rules[] = {
    {"utility", PARAM_REALS, 4, 4, -BIG, BIG, 0,
     "four coefficients (relevant retrieved, non-relevant retrieved, relevant not retrieved, "
     "the collection's other documents) from -1e100 to 1e100, as utility.1,-1,0,0"},
    {"11pt_avg", PARAM_REALS, 1, SLEM_MAX_CUTS, 0, 1, 1,
     "recall levels from 0 to 1 in increasing order, as 11pt_avg.0.2,0.5,0.8"},
    {"set_F", PARAM_REALS, 1, 1, 0, BIG, 0, "one beta from 0 to 1e100, as set_F.0.5"},
    {"relstring", PARAM_REALS, 1, 1, 0, SLEM_MAX_CUTS - 1, 0,
     "one length, a whole number from 0 to 63, as relstring.20"},
    {"rbp_resid", PARAM_P, 1, 1, 0, 1, 0, "p=P, the persistence, 0 < P < 1, as rbp_resid.p=0.95"},
    {"ndcg", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
    {"ndcg_rel", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
    {"Rndcg", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
    {"G", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
    {"dcg", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
    {"ideal_dcg", PARAM_GAINS, 1, SLEM_MAX_CUTS / 2, -BIG, BIG, 0, NULL},
};

/* A finite number filling p[0..len), strtod's syntax; 0 when it is not one. */
static int parse_real(const char *p, size_t len, double *v) {
  char buf[64], *end;
  if (len == 0 || len >= sizeof buf) return 0;
  memcpy(buf, p, len);
  buf[len] = 0;
  errno = 0;
  *v = strtod(buf, &end);
  return *end == 0 && !errno && isfinite(*v) && !strchr(buf, ' ');
}

/* The parameters of a measure of param_rules (text after the dot) into req. */
static int parse_params(SlemMeasureReq *req, const struct ParamRule *rule, const char *spec,
                        const char *text, SlemError *err) {
  const char *p = text;
  size_t n = 0, npairs = 0;
  if (strlen(text) >= sizeof req->text)
    return slem_error(err, SLEM_EINVAL, "%s: parameters longer than %zu characters", spec,
                      sizeof req->text - 1);
  for (;;) {
    size_t len = strcspn(p, ","), eq = strcspn(p, "=,");
    double v;
    if (rule->kind == PARAM_REALS) {
      if (n == rule->max) break;
      if (!parse_real(p, len, &v) || v < rule->lo || v > rule->hi) break;
      if (rule->hi == SLEM_MAX_CUTS - 1 && v != floor(v)) break; /* relstring's length */
      if (rule->sorted && n > 0 && v < req->cuts[n - 1])
        return slem_error(err, SLEM_EINVAL, "%s: %s", spec, rule->what);
      req->cuts[n++] = v;
    } else {
      char *end;
      long level;
      if (eq == len || npairs == rule->max || !parse_real(p + eq + 1, len - eq - 1, &v) ||
          v < rule->lo || v > rule->hi)
        break;
      if (rule->kind == PARAM_P) {
        if (eq != 1 || *p != 'p' || !(v > rule->lo && v < rule->hi)) break;
        req->cuts[n++] = v;
      } else {
        errno = 0;
        level = strtol(p, &end, 10);
        if (end == p || end != p + eq || errno || *p == ' ')
          return slem_error(err, SLEM_EINVAL, "%s: '%.*s' is not a relevance level (gains are "
                            "LEVEL=GAIN pairs, LEVEL a whole number: ndcg.1=0,2=1,3=5)",
                            spec, (int)len, p);
        for (size_t i = 0; i < n; i += 2)
          if (req->cuts[i] == (double)level)
            return slem_error(err, SLEM_EINVAL, "%s: a gain for level %ld twice", spec, level);
        req->cuts[n++] = (double)level;
        req->cuts[n++] = v;
        req->gain_map = 1;
      }
      npairs++;
    }
    if (!p[len]) {
      if (n / (rule->kind == PARAM_GAINS ? 2 : 1) < rule->min) break;
      req->ncuts = n;
      strcpy(req->text, text);
      return SLEM_OK;
    }
    p += len + 1;
  }
  req->gain_map = 0;
  if (rule->kind == PARAM_GAINS)
    return slem_error(err, SLEM_EINVAL, "%s: gains are LEVEL=GAIN pairs, LEVEL a whole number "
                      "and GAIN a number from -1e100 to 1e100 (ndcg.1=0,2=1,3=5)", spec);
  return slem_error(err, SLEM_EINVAL, "%s: %s takes %s", spec, rule->name, rule->what);
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
  req->gain_map = 0;
  req->text[0] = 0;
  if (me->ncuts) memcpy(req->cuts, me->cuts, me->ncuts * sizeof *me->cuts);
  if (!dot) return SLEM_OK;
  if (me->cut == SLEM_CUT_NONE) {
    for (size_t r = 0; r < sizeof param_rules / sizeof *param_rules; r++)
      if (strcmp(param_rules[r].name, me->name) == 0)
        return parse_params(req, param_rules + r, spec, dot + 1, err);
    return slem_error(err, SLEM_EINVAL, "%s: %s takes no parameters here", spec, me->name);
  }
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
      if (end == p || errno || !(v >= 0 && (v <= 1 || me->cut == SLEM_CUT_REAL)) ||
          !isfinite(v) || (*end && *end != ','))
        return slem_error(err, SLEM_EINVAL, me->cut == SLEM_CUT_REAL ? "%s: parameters are "
                          "non-negative numbers" : "%s: recall levels go from 0 to 1", spec);
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
  else if (me->cut != SLEM_CUT_NONE) snprintf(name, size, "%s_%.2f", me->name, req->cuts[c]);
  else if (req->text[0]) snprintf(name, size, "%s_%s", me->name, req->text);
  else snprintf(name, size, "%s", me->name);
}

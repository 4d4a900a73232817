/* Retrieval measures as one table: {name, per-query function, aggregate, cut-offs}.
 *
 * A measure sees one query's judged ranking (SlemJudged: the qrels value of every rank,
 * best first, and the positive qrels values of the query sorted decreasing for the ideal
 * ranking) and writes one value per cut-off (one value when it takes none). The table
 * says how the per-query values become the value of the run (mean, sum, geometric mean,
 * the number of queries), how they are printed (a count or a real), and the cut-offs it
 * takes by default. The definitions are trec_eval 10.0's (m_*.c), so that --trec-compat
 * prints its numbers digit for digit; their order in the table is trec_eval's order of
 * output.
 *
 * Adding a measure: one function `static void m_NAME(const SlemJudged *, const double *cuts,
 * size_t ncuts, double *out)` in measures.c and one line in its table.
 */
#ifndef SLEM_MEASURES_H
#define SLEM_MEASURES_H

#include <stddef.h>

#include "error.h"

/* One query's ranking as the measures see it. rel[i] is the qrels value of rank i + 1
 * (SLEM_UNJUDGED when the qrels do not name it); a value >= level is relevant. gains are
 * the query's positive qrels values in decreasing order (the ideal ranking of nDCG);
 * num_rel counts the query's qrels values >= level, retrieved or not. Everything borrowed. */
typedef struct SlemJudged {
  const long *rel;
  size_t n;
  const long *gains;
  size_t ngains;
  long num_rel;
  long level;
  long num_nonrel; /* the query's qrels values in [0, level): judged non-relevant (bpref) */
  /* nDCG's gain map (ndcg.1=0,2=1 of treceval.c), NULL without one: rank_gain[i] the gain of
   * rank i + 1, ideal_gain the positive gains of the query's judged documents, decreasing */
  const double *rank_gain;
  const double *ideal_gain;
  size_t nideal;
  double num_docs; /* documents in the collection (trec_eval -N: utility's 4th coefficient) */
} SlemJudged;

/* rel[i] of a document the qrels do not name (trec_eval's RELVALUE_NONPOOL), and of one they
 * name with a negative value: in the pool but not judged (RELVALUE_UNJUDGED; infAP, bpref) */
#define SLEM_UNJUDGED (-1L)
#define SLEM_POOLED (-2L)

typedef enum SlemAggregate {
  SLEM_AGG_MEAN = 0, /* arithmetic mean over the queries */
  SLEM_AGG_SUM,      /* sum (the counts) */
  SLEM_AGG_GEO,      /* exp of the mean of the per-query values, which are logarithms */
  SLEM_AGG_NUM_Q,    /* the number of queries */
  SLEM_AGG_TEXT,     /* no value: the run's id, printed by the caller for "all" (runid) */
  SLEM_AGG_STRING,   /* per query only, a string (relstring: out[0] = length, then the
                        qrels values); no summary */
  SLEM_AGG_NUM_REL   /* a sum; trec_eval -c sums instead every qrels value > 0 (num_rel) */
} SlemAggregate;

typedef enum SlemCutKind {
  SLEM_CUT_NONE = 0, /* one value */
  SLEM_CUT_RANK,     /* positive whole cut-offs, printed NAME_%ld */
  SLEM_CUT_RECALL,   /* recall levels in [0, 1], printed NAME_%.2f */
  SLEM_CUT_REAL      /* non-negative reals (multiples of R), printed NAME_%.2f */
} SlemCutKind;

/* Writes the ncuts values of one query into out[0..max(ncuts, 1)); cuts are increasing. */
typedef void (*SlemMeasureFn)(const SlemJudged *q, const double *cuts, size_t ncuts,
                              double *out);

typedef struct SlemMeasure {
  const char *name;       /* trec_eval's name, the -m syntax */
  SlemMeasureFn per_query;
  SlemAggregate aggregate;
  SlemCutKind cut;
  const double *cuts;     /* default cut-offs (NULL when cut is SLEM_CUT_NONE) */
  size_t ncuts;
  int count;              /* printed as a whole number ("%ld") rather than "%6.4f" */
  int official;           /* in trec_eval's default set (-m official) */
  int per_topic;          /* printed for each topic with -q (num_q and gm_map are not) */
  int zero_if_missing;    /* 0 for a topic the run lacks (trec_eval -c), rather than the value
                             on trec_eval's stand-in ranking of one unjudged document */
  int trec;               /* trec_eval 10.0 has it: 1 in its all_trec set, 2 outside it (dcg,
                             ideal_dcg, yaap: asked for by name); 0: slem's own */
} SlemMeasure;

/* The table, in trec_eval's order of output; *n gets its length. Static storage. */
const SlemMeasure *slem_measures(size_t *n);

/* The index in the table of the measure called name[0..len), or -1. */
long slem_measure_find(const char *name, size_t len);

/* How AP integrates precision over recall (slem-eval --ap): the one AP of slem, used by the
 * default mode ("mAP", either rule), --trec-compat's map and gm_map (SLEM_AP_TREC).
 *   SLEM_AP_TREC    (1/R) sum over relevant ranks k of precision@k; relevant items that
 *                   were not retrieved add 0 (trec_eval's non-interpolated AP).
 *   SLEM_AP_OXFORD  the trapezoid of the Oxford/Holidays compute_ap: from (recall 0,
 *                   precision 1), ap += (r - r_prev)(p_prev + p)/2 at every rank.
 *   SLEM_AP_REVISITOP  the same trapezoid as revisitop's compute_ap sums it (--protocol):
 *                   ((p0 + p1) / 2) / R at each relevant rank, p0 the precision of the rank
 *                   before (1 at rank 1), p1 the precision at it; equal to OXFORD but for
 *                   the rounding of the last bits.
 * How ties are ordered is not AP's business: each mode orders the ranking before the
 * measures see it (slem: the rank field; --trec-compat: score, then docno decreasing). */
typedef enum SlemApKind { SLEM_AP_TREC = 0, SLEM_AP_OXFORD = 1, SLEM_AP_REVISITOP = 2 } SlemApKind;

/* AP of q under rule kind, R = q->num_rel; 0 when R is 0 or nothing relevant was
 * retrieved. Cannot fail. */
double slem_judged_ap(const SlemJudged *q, SlemApKind kind);

/* A measure asked for by name with trec_eval's -m syntax ("P.5,10", "ndcg_cut.10",
 * "iprec_at_recall.0,0.5", "map"): its index in the table and its cut-offs, increasing
 * (the table's defaults when none are given).
 * The measures of cut kind SLEM_CUT_NONE that take parameters have one value whatever
 * their number, and the parameters in cuts, in the order given (ncuts 0: the defaults):
 * utility.P1,P2,P3,P4 (1,-1,0,0), set_F.BETA (1), 11pt_avg.LEVEL,... (0,0.1,...,1,
 * increasing), rbp_resid.p=P (0.9); nDCG's gain map LEVEL=GAIN,... (ndcg, ndcg_rel, Rndcg,
 * G; the qrels value by default) as (level, gain) pairs with gain_map set, which the
 * caller turns into SlemJudged's rank_gain and ideal_gain. text is the parameters as given,
 * for their value name ("utility_2,-1,0,0", as trec_eval prints it); "" for cut-offs. */
#define SLEM_MAX_CUTS 64
typedef struct SlemMeasureReq {
  size_t m;
  double cuts[SLEM_MAX_CUTS];
  size_t ncuts;
  int gain_map;
  char text[256];
} SlemMeasureReq;

/* Parses spec into *req. Returns SLEM_OK; SLEM_EINVAL naming spec
 * (parameters to a measure that takes none, a cut-off that is not a positive whole number
 * or a recall level in [0, 1], one given twice, more than SLEM_MAX_CUTS; parameters of the
 * wrong number or range, a gain map's pair that is not LEVEL=GAIN or names a level twice);
 * -1 without a message when no measure has that name (the caller words it). */
int slem_measure_parse(SlemMeasureReq *req, const char *spec, SlemError *err);

/* The value names of req, for output: "map", "P_5", "iprec_at_recall_0.50", one per value,
 * written to name (size bytes) for value c. */
void slem_measure_value_name(const SlemMeasureReq *req, size_t c, char *name, size_t size);

#endif

/* Retrieval evaluation: rankings against ground truth, the way the field measures it.
 *
 * AP, for one query whose ranking (junk removed) has relevance rel[0..n) and R relevant
 * items in all:
 *   SLEM_AP_TREC    (1/R) sum over relevant ranks k of precision@k; relevant items that
 *                   were not retrieved add 0 (trec_eval's non-interpolated AP).
 *   SLEM_AP_OXFORD  the trapezoid of the Oxford/Holidays compute_ap: from (recall 0,
 *                   precision 1), ap += (r - r_prev)(p_prev + p)/2 at every rank.
 * One relevant item at rank 2 gives 0.5 and 0.25.
 *
 * Junk items (per query) are removed from the ranking before anything is counted, and
 * are not relevant. A query with no relevant item is skipped; a query of the ground truth
 * that is not in the ranking gets AP 0 and is counted.
 *
 * Rankings (read with rankings.h; a query's lines may be spread over the file) are taken
 * in the order of their rank field (slem-match has already broken
 * ties by the lower database row); trec_eval instead re-sorts by score, which differs
 * only on exact ties.
 */
#ifndef SLEM_EVAL_H
#define SLEM_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "measures.h"
#include "progress.h"
#include "rankings.h"
#include "truth.h"

struct SlemOut;

/* Parses "trec" or "oxford". Returns SLEM_EINVAL on another name and fills err (may be
 * NULL) with "'NAME' is neither trec nor oxford". */
int slem_eval_apkind_parse(SlemApKind *kind, const char *name, SlemError *err);

/* "trec" or "oxford". Static storage. */
const char *slem_eval_apkind_name(SlemApKind kind);

/* AP of one query: rel[i] is 1 when rank i + 1 is relevant; nrel is R. 0 when R is 0.
 * slem_judged_ap() (measures.h) on that ranking, the one AP; NAN when out of memory. */
double slem_eval_ap(SlemApKind kind, const unsigned char *rel, size_t n, size_t nrel);

/* ---- evaluation ---- */

/* A measure asked for beyond the fixed ones (slem-eval -M, SlemEvalOpts.measures) by its -m
 * syntax (slem_measure_parse()), with the default mode's rules: a measure of the table that
 * has a value (not runid or relstring) and no gain map (--trec-compat's). Errors:
 * SLEM_EINVAL naming spec: "unknown measure 'X' (num_q, num_ret, ...)" (the measures it
 * takes), "X is not a number (--trec-compat prints it)", "X: a gain map goes with
 * --trec-compat (slem-trec_eval)", and slem_measure_parse()'s messages. */
int slem_eval_measure_parse(SlemMeasureReq *req, const char *spec, SlemError *err);

typedef struct SlemEvalOpts {
  SlemApKind ap;
  size_t recall_k;      /* R@K (default 100) */
  size_t curve_points;  /* interpolated precision at this many recall points: 11 or 101 */
  SlemProgressFn progress;  /* may be NULL: called with the ranking's queries read so far */
  void *progress_ctx;
  /* measures of measures.h's table asked for beyond the fixed ones (-M ndcg_cut.10),
   * borrowed; computed on the ranking in rank order, relevance level 1, the qrels grades as
   * gains (labels: 1), documents the qrels do not judge for the query unjudged and those
   * they judge negative in the pool (slem_truth_rel), bpref's N slem_truth_nnonrel; a
   * query with an empty ranking gets trec_eval -c's values for a topic the run lacks */
  const SlemMeasureReq *measures;
  size_t nmeasures;
} SlemEvalOpts;

/* Every field zeroed (no progress callback), then trec AP, R@100, 11 curve points. */
void slem_eval_opts_init(SlemEvalOpts *opts);

enum { SLEM_Q_EVALUATED = 0, SLEM_Q_SKIPPED = 1, SLEM_Q_MISSING = 2 };

typedef struct SlemQueryResult {
  const char *query;  /* owned by the truth */
  int status;         /* SLEM_Q_* */
  size_t nrel;        /* R after junk */
  size_t nret;        /* ranked items after junk */
  double ap, p1, p5, p10, rk;
  const double *values;  /* the asked measures' values(nvalues), owned by the result */
} SlemQueryResult;

typedef struct SlemEvalResult {
  size_t evaluated, skipped, missing;  /* missing queries are among the evaluated */
  double map, p1, p5, p10, rk;         /* means over the evaluated queries */
  double *curve;                       /* curve(curve_points): mean interpolated precision */
  size_t curve_points;
  SlemQueryResult *q;                  /* every query of the ground truth, in its order */
  size_t nq;
  SlemApKind ap;                       /* the options used, for the reports */
  size_t recall_k;
  SlemMeasureReq *measures;            /* the asked measures (copied) */
  size_t nmeasures;
  size_t nvalues;                      /* their values: a measure has one per cut-off */
  double *means;                       /* means(nvalues): the table's aggregate over the
                                        * evaluated queries */
  double *values;                      /* values(nq, nvalues) */
  size_t unknown;                      /* qrels: queries of the ranking the qrels lack, left
                                        * out as trec_eval leaves them out */
  uint64_t unknown_line;               /* the line of the first of them */
} SlemEvalResult;

/* Evaluates the rankings that reader gives, read to their end, against truth (both
 * borrowed; the result's strings point into truth). Errors: those of the reader;
 * SLEM_EFORMAT naming the ranking's file and place, its line or an npy ranking's row and
 * column (slem_rankreader_place()): an id twice for a query whose lines are spread over
 * the file, with labels a query the ground truth does not know, a database id unknown to
 * the labels; SLEM_ENOMEM. With qrels, a query they lack is left out and
 * counted in unknown (trec_eval skips it too). */
int slem_eval_result_new(SlemEvalResult **self, SlemRankReader *rankings, const SlemTruth *truth,
                        const SlemEvalOpts *opts, SlemError *err);

/* slem_eval_result_new() on the ranking file path ("-": stdin) in format fmt
 * (SLEM_RANK_AUTO: recognised). Errors: as slem_rankreader_open() and
 * slem_eval_result_new(). */
int slem_eval_result_read(SlemEvalResult **self, const char *path, SlemRankFormat fmt,
                         const SlemTruth *truth, const SlemEvalOpts *opts, SlemError *err);
void slem_eval_result_free(SlemEvalResult *self);

/* ---- reports ---- */

enum {
  SLEM_EVAL_JSON = 1,       /* one JSON object instead of "key<TAB>value" lines */
  SLEM_EVAL_PER_QUERY = 2   /* every query of the ground truth before the summary */
};

/* Writes the summary of self to path ("-": stdout) atomically. Text: "# query..." and one
 * line per query with SLEM_EVAL_PER_QUERY, then "mAP<TAB>0.123456", P@1, P@5, P@10,
 * R@K (%.6f), then each asked measure's values by trec_eval's names ("ndcg_cut_10", %.6f;
 * in the per-query lines extra columns after status, %.4f), then queries, skipped,
 * missing, ap. JSON: the same keys in lower case ("map", "p@1", ..., "r@K", the asked
 * measures by name, "per_query": [...]). Errors: SLEM_EIO, SLEM_ENOMEM. */
int slem_eval_result_write(const SlemEvalResult *self, const char *path, int flags,
                          SlemError *err);

/* Writes the interpolated precision-recall curve to path atomically: two comment lines
 * (naming run, the ranking's name) then "recall<TAB>precision" per point. Errors:
 * SLEM_EIO. */
int slem_eval_result_write_curve(const SlemEvalResult *self, const char *path, const char *run,
                                SlemError *err);

/* The same two into outputs already open (io.h), not committed: for a caller that commits
 * the summary and the curve together (slem_out_commit_all), so that a failure leaves both
 * files as they were. Errors: SLEM_EIO, SLEM_ENOMEM. */
int slem_eval_result_put(const SlemEvalResult *self, struct SlemOut *out, int flags,
                        SlemError *err);
int slem_eval_result_put_curve(const SlemEvalResult *self, struct SlemOut *out, const char *run,
                              SlemError *err);

/* slem-eval's own measures as one call: the ground truth of spec read into *truth
 * (slem_truth_read(), neighbours with spec->neighbors_k), the ranking path ("-": stdin) in
 * fmt evaluated with opts into *self, the summary written to output with flags and, when
 * curve is not NULL, the precision-recall curve to curve (naming the ranking, "<stdin>"
 * for "-"); the two are committed together, so that a failure leaves both files as they
 * were. The caller frees *self, then *truth, whose strings it holds (both NULL on error).
 * Errors: those of the steps. */
int slem_eval_run(SlemEvalResult **self, SlemTruth **truth, const char *path,
                  SlemRankFormat fmt, const SlemTruthSpec *spec, const SlemEvalOpts *opts,
                  const char *output, const char *curve, int flags, SlemError *err);

#endif

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
 * Rankings are taken in the order of their rank field (slem-match has already broken
 * ties by the lower database row); trec_eval instead re-sorts by score, which differs
 * only on exact ties.
 */
#ifndef SLEM_EVAL_H
#define SLEM_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef enum SlemApKind { SLEM_AP_TREC = 0, SLEM_AP_OXFORD = 1 } SlemApKind;

/* AP of one query: rel[i] is 1 when rank i + 1 is relevant; nrel is R. 0 when R is 0. */
double slem_ap(SlemApKind kind, const unsigned char *rel, size_t n, size_t nrel);

/* ---- rankings ---- */

typedef struct SlemRun SlemRun;

/* Reads a ranking written by slem-match: format "tsv", "trec", "jsonl", or NULL to
 * recognise it from its first line. Errors: SLEM_EIO, SLEM_EFORMAT naming the file and
 * line (too few fields, a rank or score that is not a number, a document twice). */
int slem_run_read(SlemRun **self, const char *path, const char *format, SlemError *err);
void slem_run_free(SlemRun *self);
size_t slem_run_queries(const SlemRun *self);

/* ---- ground truth ---- */

typedef struct SlemTruth SlemTruth;

/* TREC qrels: "qid iter docno rel" per line, rel >= 1 relevant. */
int slem_truth_read_qrels(SlemTruth **self, const char *path, SlemError *err);

/* One label per line for the queries and the database rows, relevant = same label.
 * qids/dbids name the rows as the ranking does (NULL: 0-based row numbers).
 * exclude_self: the database row with the query's index is not counted (queries taken
 * from the database and matched with --exclude-self). */
int slem_truth_read_labels(SlemTruth **self, const char *qlabels, const char *dblabels,
                           const char *qids, const char *dbids, int exclude_self,
                           SlemError *err);

/* Junk: "qid docid" per line; such documents are ignored for that query. */
int slem_truth_read_junk(SlemTruth *self, const char *path, SlemError *err);
void slem_truth_free(SlemTruth *self);

/* ---- evaluation ---- */

typedef struct SlemEvalOpts {
  SlemApKind ap;
  size_t recall_k;      /* R@K (default 100) */
  size_t curve_points;  /* interpolated precision at this many recall points: 11 or 101 */
} SlemEvalOpts;

void slem_eval_opts_init(SlemEvalOpts *opts);

enum { SLEM_Q_EVALUATED = 0, SLEM_Q_SKIPPED = 1, SLEM_Q_MISSING = 2 };

typedef struct SlemQueryResult {
  const char *query;  /* owned by the truth */
  int status;         /* SLEM_Q_* */
  size_t nrel;        /* R after junk */
  size_t nret;        /* ranked items after junk */
  double ap, p1, p5, p10, rk;
} SlemQueryResult;

typedef struct SlemEvalResult {
  size_t evaluated, skipped, missing;  /* missing queries are among the evaluated */
  double map, p1, p5, p10, rk;         /* means over the evaluated queries */
  double *curve;                       /* curve(curve_points): mean interpolated precision */
  size_t curve_points;
  SlemQueryResult *q;                  /* every query of the ground truth, in its order */
  size_t nq;
} SlemEvalResult;

/* Evaluates run against truth (both borrowed; the result's strings point into truth).
 * Errors: SLEM_EFORMAT naming the ranking's file and line (a query the ground truth
 * does not know; a database id unknown to the labels), SLEM_ENOMEM. */
int slem_evaluate(SlemEvalResult **out, const SlemRun *run, const SlemTruth *truth,
                  const SlemEvalOpts *opts, SlemError *err);
void slem_evalresult_free(SlemEvalResult *self);

#endif

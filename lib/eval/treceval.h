/* Evaluation as trec_eval 10.0 computes it, for results that must agree with the numbers
 * a TREC paper reports (slem-eval --trec-compat).
 *
 * Where slem's own evaluation (eval.h) reads a ranking in its rank order, trec_eval
 * re-sorts each topic's results by score, a double, descending, and breaks exact ties by
 * docno in DEcreasing strcmp order; it evaluates the topics of the qrels (in strcmp order)
 * and ignores the run's other topics; a document is relevant when its qrels value is at
 * least the relevance level (1 by default); a negative qrels value marks a document in the
 * pool but not judged (SLEM_POOLED: bpref, infAP), one the qrels do not name is
 * SLEM_UNJUDGED. With `complete` (trec_eval -c) a qrels topic that the run lacks is
 * evaluated, as trec_eval does, on a stand-in ranking of one document the qrels do not name
 * (the measures marked zero_if_missing then print 0), and averages divide by the number of
 * qrels topics; without it such a topic is skipped (trec_eval 10.0 stops with an error
 * there instead) and counted in slem_treceval_write()'s *skipped. max_per_topic (-M) keeps
 * the first results of each re-sorted topic, judged_only (-J) then drops the unjudged ones.
 *
 * Measures: those of measures.h's table that trec_eval has (trec = 1), by its names and in
 * its order of output; "official" is its default set, "all_trec" all of them. runid is the
 * tag of the run's last line. The qrels are read by truth.c (slem_truth_read_graded,
 * strict). Output lines are "%-22s\t%s\t%6.4f" ("%ld" for counts, the string for runid and
 * relstring), per topic when asked, then for "all", in the "C" locale.
 */
#ifndef SLEM_TRECEVAL_H
#define SLEM_TRECEVAL_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "rankings.h"

typedef struct SlemTrecEval SlemTrecEval;

typedef struct SlemTrecOpts {
  long relevance_level; /* qrels value at least this is relevant (trec_eval -l; default 1) */
  int complete;         /* trec_eval -c */
  int per_query;        /* trec_eval -q */
  int judged_only;      /* trec_eval -J: results the qrels do not judge are dropped first */
  long max_per_topic;   /* trec_eval -M: the first N results of each topic (0: all) */
  int no_summary;       /* trec_eval -n: no "all" lines (with per_query, the topics' only) */
  double num_docs;      /* trec_eval -N: documents in the collection (utility's 4th
                           coefficient; 0 by default, as trec_eval) */
} SlemTrecOpts;

void slem_treceval_opts_init(SlemTrecOpts *opts);

/* A new, empty evaluation with opts (copied). Errors: SLEM_ENOMEM. */
int slem_treceval_new(SlemTrecEval **self, const SlemTrecOpts *opts, SlemError *err);
void slem_treceval_free(SlemTrecEval *self);

/* Requests a measure by trec_eval's -m syntax: "map", "P.5,10", "iprec_at_recall.0,0.5,1",
 * "Rprec_mult.0.5,2", "ndcg.1=0,2=1", "utility.2,-1,0,0" (measures.h: the parameters),
 * "official" (runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
 * iprec_at_recall P: trec_eval's own default set), "all_trec" or "set". Without any request
 * slem_treceval_write() prints the official set. Cut-offs must be positive whole numbers
 * (ranks), recall levels from 0 to 1 (iprec_at_recall) or non-negative multiples
 * (Rprec_mult), without duplicates; they are printed in increasing order, as trec_eval
 * does. The first parameters given for a measure are kept, as trec_eval keeps them (a later
 * request is still parsed, and refused when malformed).
 * Errors: SLEM_EINVAL naming the measure: unknown, malformed parameters, or one of trec_eval
 * 10.0's that slem does not compute ("rbp: not supported by slem: " and the reason). */
int slem_treceval_measure(SlemTrecEval *self, const char *spec, SlemError *err);

/* Reads TREC qrels "qid iter docno rel" through truth.c (rel a whole number; negative
 * values are kept as unjudged; lines beginning with '#' skipped, as trec_eval skips them). Errors: SLEM_EIO, SLEM_EFORMAT naming path and line (fields missing, rel
 * not a number, a document judged twice for a topic). */
int slem_treceval_read_qrels(SlemTrecEval *self, const char *path, SlemError *err);

/* Adds one result of the run: topic qid, document docno, score. name and line are for
 * messages. Errors: SLEM_EFORMAT (a score that is not finite; a document retrieved twice
 * for a topic, which trec_eval refuses too), SLEM_ENOMEM. */
int slem_treceval_result(SlemTrecEval *self, const char *qid, const char *docno, double score,
                         const char *name, uint64_t line, SlemError *err);

/* Adds every result that rankings gives, read to its end (any ranking format: query ids
 * are the topics, ids the docnos; ranks are ignored, as trec_eval ignores them). Errors:
 * those of the reader and of slem_treceval_result(). */
int slem_treceval_add_run(SlemTrecEval *self, SlemRankReader *rankings, SlemError *err);

/* Reads a TREC run "qid Q0 docno rank score tag" (blank separated; fields after the sixth
 * ignored, and lines beginning with '#', as trec_eval does) from path ("-": stdin). The rank field is not read (0, a word:
 * trec_eval ignores it too); the last line's tag is the runid. Errors: SLEM_EIO, SLEM_EFORMAT
 * naming path and line (fewer than 6 fields, a score that is not a number), those of
 * slem_treceval_result(). */
int slem_treceval_read_run(SlemTrecEval *self, const char *path, SlemError *err);

/* The run of path in format (SLEM_RANK_AUTO: a TREC run when its first line has six fields,
 * else by the rankings reader's rules; stdin through the rankings reader): TREC runs by
 * slem_treceval_read_run(), ranks ignored; the other formats by slem_treceval_add_run().
 * Errors: theirs. */
int slem_treceval_add_path(SlemTrecEval *self, const char *path, SlemRankFormat format,
                           SlemError *err);

/* slem_treceval_write() into path ("-": stdout), atomically. Errors: the same, SLEM_EIO. */
int slem_treceval_write_path(SlemTrecEval *self, const char *path, uint64_t *skipped,
                             SlemError *err);

/* Evaluates and writes the measures to out. *skipped (if not NULL) gets the number of
 * qrels topics missing from the run that were skipped. Errors: SLEM_EFORMAT (no topic
 * with both results and qrels), SLEM_EIO (a write failed), SLEM_ENOMEM. */
int slem_treceval_write(SlemTrecEval *self, FILE *out, uint64_t *skipped, SlemError *err);

/* slem-eval --trec-compat as one call: a SlemTrecEval with opts, measures[0..nmeasures)
 * selected (slem_treceval_measure(): a refusal is the options', *usage set to 1), the
 * qrels read, the run path ("-": stdin) in format added, trec_eval's lines written to
 * output. *skipped receives the qrels' topics that the run lacks. *usage (may be NULL) is
 * 0 for every other error. Errors: those of the steps. */
int slem_treceval_run(const SlemTrecOpts *opts, const char *const *measures, size_t nmeasures,
                      const char *qrels, const char *path, SlemRankFormat format,
                      const char *output, uint64_t *skipped, int *usage, SlemError *err);

#endif

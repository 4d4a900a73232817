/* The revisited Oxford and Paris protocol (Radenovic, Iscen, Tolias, Avrithis and Chum,
 * CVPR 2018), computed as revisitop's compute_map defines it.
 *
 * Each query has easy and hard positives and junk. Protocol easy: positives are the easy
 * ones, the hard ones are junk; medium: easy and hard are positives; hard: the hard ones
 * are positives, the easy ones junk. In the ranking, junk items are removed before
 * counting: each positive's 0-based position r_j (j = 0, 1, ... in ranking order) is
 * decreased by the junk ranked before it, and
 *   AP   = sum_j (p0 + p1) / 2 / npos,  p0 = 1 when r_j = 0 else j / r_j,  p1 = (j+1)/(r_j+1)
 *   P@k  = #{j : r_j + 1 <= kq} / kq,  kq = min(r_last + 1, k)   (revisitop's mP@k)
 * with npos the query's positives, ranked or not. A query without positives under the
 * protocol is left out of the means; a query of the ground truth that the ranking lacks,
 * or whose ranking holds no positive, scores 0 (revisitop, which ranks the whole database,
 * never meets either). AP is measures.h's slem_judged_ap(SLEM_AP_REVISITOP) and mP@k the
 * table's revisitop_mP, on the ranking with the protocol's junk removed.
 */
#ifndef SLEM_REVISITOP_H
#define SLEM_REVISITOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "rankings.h"

typedef enum SlemProtocol { SLEM_PROTO_EASY = 0, SLEM_PROTO_MEDIUM, SLEM_PROTO_HARD } SlemProtocol;
typedef enum SlemGtKind { SLEM_GT_EASY = 0, SLEM_GT_HARD, SLEM_GT_JUNK } SlemGtKind;

/* Parses "easy", "medium", "hard". Returns SLEM_EINVAL on another name. */
int slem_revisitop_protocol_parse(SlemProtocol *p, const char *name);
const char *slem_revisitop_protocol_name(SlemProtocol p);

#define SLEM_REVISIT_NK 3 /* mP@1, mP@5, mP@10 */
extern const size_t slem_revisit_kappas[SLEM_REVISIT_NK];

typedef struct SlemRevisit SlemRevisit;

/* A new, empty evaluation under protocol p. Errors: SLEM_ENOMEM. */
int slem_revisit_new(SlemRevisit **self, SlemProtocol p, SlemError *err);
void slem_revisit_free(SlemRevisit *self);

/* Reads "query item" lines of one kind of ground truth (the same pair twice, or in two
 * kinds, is an error). Errors: SLEM_EIO, SLEM_EFORMAT naming path and line. */
int slem_revisit_read(SlemRevisit *self, SlemGtKind kind, const char *path, SlemError *err);

/* Reads graded TREC qrels "qid iter docno grade" through truth.h (slem_truth_read_graded,
 * strict): grade 2 easy, 1 hard, -1 junk, 0 a judged negative (ignored). Errors: those of
 * the qrels reader (SLEM_EIO; SLEM_EFORMAT naming path and line: field count, a grade that
 * is not a whole number, a pair judged twice, an empty file), SLEM_EFORMAT naming the line
 * of another grade. */
int slem_revisit_read_qrels(SlemRevisit *self, const char *path, SlemError *err);

/* Evaluates the ranking ids[0..n) (best first) of query qid. A query that the ground truth
 * does not know is an error, as is a query ranked twice. Errors: SLEM_EFORMAT, SLEM_ENOMEM. */
int slem_revisit_query(SlemRevisit *self, const char *qid, const char *const *ids, size_t n,
                       SlemError *err);

/* slem_revisit_query() for every query that rankings gives, read to its end, its entries
 * in order of their rank field (equal ranks in file order). Errors: those of the reader
 * (naming file and line) and of slem_revisit_query() (naming the file and the query's
 * place: its line, or an npy ranking's row, slem_rankreader_place()). */
int slem_revisit_add_run(SlemRevisit *self, SlemRankReader *rankings, SlemError *err);

typedef struct SlemRevisitResult {
  double map, mp[SLEM_REVISIT_NK];
  size_t evaluated; /* queries with positives, in the means */
  size_t empty;     /* queries of the ground truth without positives: left out */
  size_t missing;   /* queries with positives that the ranking lacks: scored 0 */
} SlemRevisitResult;

/* The means over the queries of the ground truth. Errors: SLEM_EFORMAT when no query has
 * a positive. */
int slem_revisit_result(SlemRevisit *self, SlemRevisitResult *out, SlemError *err);

/* The AP and P@k of query i of the ground truth (in order of first appearance), its id,
 * and whether it counts (has positives): for per-query output. */
size_t slem_revisit_nqueries(const SlemRevisit *self);
int slem_revisit_query_result(const SlemRevisit *self, size_t i, const char **qid, double *ap,
                              double mp[SLEM_REVISIT_NK], int *status);

enum {
  SLEM_REVISIT_JSON = 1,      /* one JSON object instead of "key<TAB>value" lines */
  SLEM_REVISIT_PER_QUERY = 2  /* every query of the ground truth before the summary */
};

/* Writes the result to path ("-": stdout) atomically: with SLEM_REVISIT_PER_QUERY first
 * "# query<TAB>AP<TAB>P@1<TAB>P@5<TAB>P@10<TAB>status" and a line per query (status ok,
 * empty or missing), then "protocol<TAB>medium", "mAP<TAB>%.6f", "mP@1", "mP@5", "mP@10",
 * "queries", "empty", "missing". JSON: the same keys in lower case, numbers in full
 * precision, "per_query" an array. Errors: those of slem_revisit_result(), SLEM_EIO,
 * SLEM_ENOMEM. */
int slem_revisit_write(SlemRevisit *self, const char *path, int flags, SlemError *err);

/* slem-eval --protocol as one call: the positives read (graded qrels, or the easy and hard
 * files; either may be NULL), then junk[0..njunk), the ranking path ("-": stdin) in fmt
 * added, the result written to output with flags. Errors: SLEM_EINVAL, the rules of
 * slem_truth_check() with a protocol, before any file is read; those of the steps. */
int slem_revisit_run(SlemProtocol p, const char *qrels, const char *easy, const char *hard,
                     const char *const *junk, size_t njunk, const char *path, SlemRankFormat fmt,
                     const char *output, int flags, SlemError *err);

#endif

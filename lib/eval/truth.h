/* Ground truth for retrieval evaluation: which database items are relevant to which
 * query, and which are junk (ignored for that query).
 *
 * Two sources: TREC qrels ("qid iter docno rel", rel >= 1 relevant, the grade kept as
 * given for the graded measures: nDCG's gains), or one label per
 * query and per database row (relevant = same label), the rows named by ids files or by
 * their 0-based numbers. Query and document ids are strings, as rankings name them.
 */
#ifndef SLEM_TRUTH_H
#define SLEM_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemTruth SlemTruth;

/* TREC qrels: "qid iter docno rel" per line, rel >= 1 relevant; a line beginning with '#' is
 * a comment (trec_eval's). Errors: SLEM_EIO,
 * SLEM_EFORMAT naming the file and line (field count, a relevance that is not a whole
 * number, an empty file), SLEM_ENOMEM. */
int slem_truth_read_qrels(SlemTruth **self, const char *path, SlemError *err);

/* The qrels as slem_truth_read_qrels() reads them; strict (--trec-compat, as trec_eval):
 * a document judged twice for a query is an error, SLEM_EFORMAT naming the file, the line
 * that judges it again, the document and the query. */
int slem_truth_read_graded(SlemTruth **self, const char *path, int strict, SlemError *err);

/* One label per line for the queries and the database rows, relevant = same label.
 * qids/dbids name the rows as the ranking does (NULL: 0-based row numbers).
 * exclude_self: the database row with the query's index is junk (queries taken from the
 * database and matched with --exclude-self). Errors: as slem_ids_read() for each file;
 * SLEM_EFORMAT when an ids file's count differs from its labels' or names a row twice. */
int slem_truth_read_labels(SlemTruth **self, const char *qlabels, const char *dblabels,
                           const char *qids, const char *dbids, int exclude_self,
                           SlemError *err);

/* The same from labels in memory (the C API's slem_evaluate()): qlabels(nq) for the
 * queries, dblabels(nd) for the database rows, relevant = the same label, the rows named by
 * their 0-based numbers ("0", "1", ...), no junk: the truth slem_truth_read_labels() reads
 * from files holding those numbers one a line. Errors: SLEM_EINVAL (an array NULL with
 * rows), SLEM_ENOMEM. */
int slem_truth_from_labels(SlemTruth **self, const int64_t *qlabels, size_t nq,
                           const int64_t *dblabels, size_t nd, SlemError *err);

/* Adds the junk of path: "qid docid" per line; such documents are ignored for that
 * query. With qrels, a line of a query the qrels lack is left out and counted (see
 * slem_truth_junk_unknown()). Errors name the file and line: field count, with labels a
 * query the ground truth does not have or a document that is not a database id. */
int slem_truth_read_junk(SlemTruth *self, const char *path, SlemError *err);

/* The junk lines left out so far because the qrels lack their query. Cannot fail. */
size_t slem_truth_junk_unknown(const SlemTruth *self);
void slem_truth_free(SlemTruth *self);

/* Nearest neighbours as ground truth (ann-benchmarks' measure): path is a vector file of
 * integers, row q the database row numbers (from 0) of query q's true neighbours, nearest
 * first (an ann-benchmarks FILE.hdf5:neighbors, ivecs, ibin, an integer npy); the first k
 * of each row are its relevant documents, so that R@k is recall@k = |top k of the ranking
 * and the true top k| / k. Queries and rows are named by qids / dbids as the ranking names
 * them (NULL: their numbers). Errors: those of the vector reader; SLEM_EFORMAT for a file
 * of floating-point values (fvecs, fbin, a float npy or HDF5 dataset such as
 * ann-benchmarks' FILE:distances: not rows, whatever the values; text is checked value by
 * value); SLEM_EINVAL when the rows hold fewer than k; SLEM_EFORMAT naming the record (a
 * value that is not a row number, a row twice, an ids count that differs), SLEM_ENOMEM. */
int slem_truth_read_neighbors(SlemTruth **self, const char *path, size_t k, const char *qids,
                              const char *dbids, SlemError *err);

/* What a SlemTruthSpec names: qrels, or both label files (with optional ids and
 * exclude_self), or neighbours (with neighbors_k and optional ids), and any number of junk
 * files. */
typedef struct SlemTruthSpec {
  const char *neighbors;
  size_t neighbors_k;
  const char *qrels;
  const char *qlabels, *dblabels, *qids, *dbids;
  int exclude_self;
  const char *const *junk;
  size_t njunk;
} SlemTruthSpec;

/* The rules between the ground truth's options that slem-eval and slem-report share,
 * checked before anything is read. protocol: revisitop's evaluation was asked for, with
 * its positives easy and hard (files, or NULL), or graded qrels. Rules: easy and hard only
 * with protocol; a protocol needs the positives from exactly one of qrels and easy/hard,
 * takes no labels, and no junk with qrels; otherwise the ground truth is neighbours
 * alone, or qrels, or both label files; ids and exclude_self go with labels, not qrels.
 * with_neighbors: the caller offers neighbours (slem-eval's --neighbors), named in the
 * message for a ground truth missing or given twice. Errors: SLEM_EINVAL with the tools'
 * message for the first rule broken. */
int slem_truth_check(const SlemTruthSpec *spec, int protocol, const char *easy, const char *hard,
                     int with_neighbors, SlemError *err);

/* Reads the ground truth that spec names, then its junk files. Errors: those of the
 * readers above; SLEM_EINVAL, those of slem_truth_check() (no protocol), before any file is
 * read. */
int slem_truth_read(SlemTruth **self, const SlemTruthSpec *spec, SlemError *err);

/* Queries: dense indices 0..count-1 in the order of the qrels or query labels. */
size_t slem_truth_queries(const SlemTruth *self);
const char *slem_truth_query(const SlemTruth *self, size_t q);  /* owned by self */
/* The index of the query named s, or -1. */
long slem_truth_find_query(const SlemTruth *self, const char *s);

/* The index of the document named s, or -1 when the ground truth never names it. */
long slem_truth_find_doc(const SlemTruth *self, const char *s);

/* 1 when every database document is known (labels): an unknown id is then an error of
 * the ranking rather than a non-relevant document. */
int slem_truth_knows_all_docs(const SlemTruth *self);

/* Relevance and junk of document d (an index from slem_truth_find_doc) for query q. */
int slem_truth_relevant(const SlemTruth *self, size_t q, size_t d);
int slem_truth_junk(const SlemTruth *self, size_t q, size_t d);

/* Documents: dense indices 0..count-1 of every document the ground truth names (with
 * labels, the database rows in order), for listing a query's relevant documents. */
size_t slem_truth_docs(const SlemTruth *self);
const char *slem_truth_doc(const SlemTruth *self, size_t d);  /* owned by self */

/* R of query q: its relevant documents, junk removed. */
size_t slem_truth_nrel(const SlemTruth *self, size_t q);

/* What the measures see of document d (an index from slem_truth_find_doc, or -1 when the
 * ground truth never names it) at query q (measures.h's SlemJudged rel values): with labels
 * 1 (same label) or 0, every row being judged; with qrels or neighbours the grade as given
 * (of the first line with a value >= 1 when the pair is judged twice, else of its first
 * line) when it is >= 0, SLEM_POOLED when it is negative (in the pool, not judged), and
 * SLEM_UNJUDGED when the pair is not judged. Relevant exactly when >= 1. Cannot fail. */
long slem_truth_rel(const SlemTruth *self, size_t q, long d);

/* The judged non-relevant documents of query q, junk left out (bpref's N): with qrels or
 * neighbours the pairs judged 0, with labels the database rows of another label. */
size_t slem_truth_nnonrel(const SlemTruth *self, size_t q);

/* The positive grades of query q's documents, junk left out, in decreasing order (nDCG's
 * ideal ranking), written to gains, which holds slem_truth_max_gains(self, q) values;
 * returns their number. Cannot fail. */
size_t slem_truth_gains(const SlemTruth *self, size_t q, long *gains);
size_t slem_truth_max_gains(const SlemTruth *self, size_t q);

/* Qrels: the judgements of query q, i from 0 to slem_truth_njudged(self, q) - 1 (0 with
 * labels), one per judged document, with its grade as given (junk not applied) and its
 * line in the qrels (line may be NULL); the name is owned by self. */
size_t slem_truth_njudged(const SlemTruth *self, size_t q);
void slem_truth_judgement(const SlemTruth *self, size_t q, size_t i, const char **docno,
                          long *grade, uint64_t *line);

#endif

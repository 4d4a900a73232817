/* A retrieval report: one self-contained HTML page comparing runs (rankings) against
 * one ground truth, the way papers show results.
 *
 * The page holds, in order: a summary table (one row per run: mAP by trec_eval's and by
 * the Oxford definition, P@1, P@5, P@10, R@K, queries evaluated, and the p-value of a
 * paired randomisation test against the first run, permtest.h; with a revisitop protocol
 * a second table of its measures); the runs' interpolated precision-recall curves, a
 * histogram of per-query AP and a scatter of the second run's per-query AP against the
 * first's, inline SVG (plot.h), both over the span of the APs (slem_plot_span); every
 * query in a table that a small inline script sorts, filters and pages (its data as JSON
 * in the page; the difference of two runs never shown as 0.0000 when they differ); a table of chosen queries with each
 * run's top results as thumbnails framed by relevance (relevant, junk, wrong: with its
 * database label when labels are known) with rank and score, and the relevant items
 * missed; and for each run a table of its worst and best queries. Inline CSS, nothing
 * fetched from the network; pictures come from thumbs.h, embedded or linked relative to
 * the page.
 *
 * Per-query AP (choosing queries, worst and best, the histogram) is by the report's AP
 * kind; the summary gives both. The numbers are slem-eval's: the same library calls.
 */
#ifndef SLEM_REPORT_H
#define SLEM_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "eval.h"
#include "rankings.h"
#include "revisitop.h"
#include "truth.h"
#include "thumbs.h"

#include "ids.h"
#include "strmap.h"

enum { SLEM_HIT_WRONG = 0, SLEM_HIT_RELEVANT = 1, SLEM_HIT_JUNK = 2 };

/* One result of a query as the page shows it. */
typedef struct SlemReportHit {
  char *id;
  long rank;
  double score;
  int rel;  /* SLEM_HIT_* */
  const char *label;  /* the database label of the result (labels given), owned by the
                         report; NULL when unknown */
} SlemReportHit;

/* A relevant document that a ranking holds: its index in the truth and its rank. */
typedef struct SlemReportFound {
  size_t doc;
  long rank;
} SlemReportFound;

/* The measures of one run, everything the page needs from evaluation. Per-query arrays
 * follow the ground truth's queries (SlemReport.qids). */
typedef struct SlemReportRun {
  char *name;                     /* as shown */
  char *source;                   /* the ranking file */
  double map[2];                  /* by SLEM_AP_TREC and SLEM_AP_OXFORD */
  double p1, p5, p10, rk;
  size_t evaluated, skipped, missing;
  double *curve;                  /* curve(curve_points): slem-eval --curve's */
  size_t curve_points;
  double *ap;                     /* ap(nq): by the report's AP kind */
  int *status;                    /* status(nq): SLEM_Q_* */
  SlemReportHit **hits;           /* hits(nq): of the queries the page shows, the first
                                     nhits[q] results by rank; NULL for the others */
  size_t *nhits;                  /* nhits(nq) */
  SlemReportFound **found;        /* found(nq): of the queries the page shows, every
                                     relevant document the ranking holds, in file order;
                                     NULL for the others */
  size_t *nfound;                 /* nfound(nq) */
  double pvalue;                  /* the paired test against run 0 (slem_report_test);
                                     -1 for run 0 or no test */
  SlemRevisitResult revisit;      /* with opts.protocol: revisitop's measures */
  char *path;                     /* the ranking, read again for the results */
  SlemRankFormat fmt;
  int spool_fd;                   /* >= 0: path is "/dev/fd/N" of this unlinked copy of
                                     stdin, closed on free */
} SlemReportRun;

/* The revisited Oxford/Paris ground truth (revisitop.h) and the protocol to read it by:
 * graded qrels, or files of easy and hard positives (either may be NULL) and junk. */
typedef struct SlemReportProtocol {
  SlemProtocol protocol;
  const char *qrels;
  const char *easy, *hard;
  const char *const *junk;
  size_t njunk;
  const char *tmpdir;        /* the folder of the temporary qrels and junk files (removed
                                from it at once); NULL or "": /tmp. cmd/ passes $TMPDIR */
} SlemReportProtocol;

typedef struct SlemReportOpts {
  const char *title;         /* NULL: "Retrieval report" */
  const char *truth_note;    /* a line naming the ground truth, or NULL */
  SlemApKind ap;             /* per-query AP by this definition (SLEM_AP_TREC) */
  size_t recall_k;           /* R@K (100) */
  size_t curve_points;       /* 11 or 101 (11) */
  size_t top;                /* results shown per query (10) */
  size_t nqueries;           /* queries chosen when no list is given (10) */
  size_t extremes;           /* worst and best queries per run (3) */
  size_t bins;               /* histogram bins (10) */
  size_t permutations;       /* the paired randomisation test's sign patterns (10000); 0:
                                no test */
  uint64_t seed;             /* its seed (1) */
  const SlemReportProtocol *protocol; /* NULL, or revisitop's protocol: the truth comes from
                                slem_report_protocol_truth(), per-query AP is revisitop's
                                (equal to the Oxford AP with junk removed) and the summary
                                adds revisitop's mAP, mP@1, mP@5, mP@10 (borrowed) */
  const char *tmpdir;        /* the folder of a temporary copy of a ranking read from a pipe
                                (removed from it at once); NULL or "": /tmp. cmd/ passes
                                $TMPDIR (borrowed) */
} SlemReportOpts;

/* The defaults noted above. */
void slem_report_opts_init(SlemReportOpts *opts);

typedef struct SlemReport {
  SlemReportOpts opts;
  const SlemTruth *truth;  /* borrowed */
  size_t nq;
  const char **qids;       /* qids(nq): the ground truth's queries (owned by it) */
  SlemReportRun *runs;
  size_t nruns;
  size_t *shown;           /* shown(nshown): indices of the chosen queries */
  size_t nshown;
  int listed;              /* 1: shown came from a list of ids */
  SlemIds *dblabels;            /* the database labels (slem_report_set_labels) or NULL */
  SlemStrMap *dbrow;            /* database id -> row of dblabels */
} SlemReport;

/* A new report on truth (borrowed, must outlive self) with no run yet. Errors:
 * SLEM_EINVAL (top, nqueries, bins or curve_points out of range), SLEM_ENOMEM. */
int slem_report_new(SlemReport **self, const SlemTruth *truth, const SlemReportOpts *opts,
                    SlemError *err);
void slem_report_free(SlemReport *self);

/* Reads the database labels at dblabels, one per row, and the rows' ids at dbids (NULL:
 * 0-based row numbers), so that the page names the label of every wrong result. Errors:
 * those of slem_ids_labels_read() and slem_ids_read(); SLEM_EFORMAT when the counts differ;
 * SLEM_ENOMEM. */
int slem_report_set_labels(SlemReport *self, const char *dblabels, const char *dbids,
                           SlemError *err);

/* The ground truth of a revisitop protocol as the page frames results: under protocol
 * p, the positives relevant, the junk and the positives the protocol ignores junk, and
 * every query of the files in their order (queries without positives are skipped, as
 * revisitop leaves them out). Errors: those of revisitop.h's readers (naming the file and
 * line), SLEM_EIO on the temporary files in $TMPDIR (else /tmp), SLEM_ENOMEM. */
int slem_report_protocol_truth(SlemTruth **truth, const SlemReportProtocol *proto, SlemError *err);

/* Evaluates the ranking at path (format fmt, SLEM_RANK_AUTO: recognised) against the
 * truth by both AP definitions and adds it as run name (copied). The file is read twice
 * here and once more by slem_report_read_results(); "-" (stdin) is first copied to a
 * temporary file in $TMPDIR (else /tmp), unlinked at once and read through /dev/fd
 * until slem_report_free(). Errors: those of
 * reading and evaluating the ranking (slem-eval's, naming "<stdin>" for "-"), SLEM_EIO,
 * SLEM_ENOMEM. */
int slem_report_add_run(SlemReport *self, const char *name, const char *path, SlemRankFormat fmt,
                        SlemError *err);

/* Chooses the queries shown in detail: the ids listed in the file path, one per line,
 * or, when path is NULL, opts.nqueries of them: with two runs or more those whose AP
 * differs most between runs (largest max - min, ties by the ground truth's order), with
 * one run queries spread evenly from its worst to its best. Queries with no relevant
 * item are never chosen. Errors: those of slem_ids_read(); SLEM_EFORMAT naming the file
 * and line of a query the ground truth does not have; SLEM_ENOMEM. */
int slem_report_choose(SlemReport *self, const char *path, SlemError *err);

/* Reads each run's ranking once more, keeping the first opts.top results by rank of the
 * queries the page shows (those chosen and each run's worst and best), framed by the
 * truth: relevant, junk, else wrong. Call after slem_report_choose(). Memory: the
 * results of the queries shown only. Errors: those of reading the rankings, SLEM_ENOMEM. */
int slem_report_read_results(SlemReport *self, SlemError *err);

/* The paired randomisation test (permtest.h) of every run r > 0 against run 0 on the
 * per-query AP (the report's AP kind) of the evaluated queries, with opts.permutations
 * and opts.seed, into runs[r].pvalue; nothing when opts.permutations is 0. Errors: those
 * of slem_permtest_paired(), SLEM_ENOMEM. */
int slem_report_test(SlemReport *self, SlemError *err);

/* Indices of run r's worst and best queries by AP (ties by the ground truth's order):
 * worst(nworst) from the lowest up, best(nbest) from the highest down, each at most
 * opts.extremes and together at most the queries evaluated. Out of memory
 * leaves both empty. */
void slem_report_extremes(const SlemReport *self, size_t r, size_t *worst, size_t *nworst,
                          size_t *best, size_t *nbest);

/* Writes the page to path ("-": stdout) atomically, the pictures from thumbs (NULL: name
 * tiles only; every id shown is loaded into it first), the results as
 * slem_report_read_results() left them. Errors: those of slem_thumbs_load(), SLEM_EIO,
 * SLEM_ENOMEM. */
int slem_report_write(const SlemReport *self, SlemThumbs *thumbs, const char *path,
                      SlemError *err);

/* One ranking of slem_report_make(): its file ("-": stdin) and the name shown. */
typedef struct SlemReportInput {
  const char *name;
  const char *path;
} SlemReportInput;

/* A run argument of slem-report, "NAME=PATH" or "PATH", into *in: with '=' after its first
 * byte, and no file named arg itself, arg is split there (its '=' overwritten with '\0':
 * in's strings point into arg); else the path is arg and the name its file's base name
 * without its extension, "stdin" for "-", written into buf (size bytes). Cannot fail. */
void slem_report_input_parse(SlemReportInput *in, char *arg, char *buf, size_t size);

/* The line naming the ground truth on the page (SlemReportOpts.truth_note), written into
 * buf (size bytes) and returned: revisitop's protocol and its files (protocol not NULL:
 * its qrels, easy and hard), else the qrels or the two labels files of spec, by their base
 * names, then the count of junk files of spec. Cannot fail. */
const char *slem_report_truth_note(char *buf, size_t size, const SlemTruthSpec *spec,
                                   const SlemReportProtocol *protocol);

/* The whole page, for slem-report: reads the ground truth of spec, adds runs(nruns) in
 * format fmt, chooses the queries (the ids in queries_file, or opts.nqueries), reads
 * their results and writes the page to output with pictures as thumbs describes, linked
 * relative to the folder of output (of the file a link names) when output is a file.
 * *missing (may be NULL) is set to the number of ids shown that have no picture, and
 * first (first_size bytes, may be NULL) to the first of them. Errors: those of each
 * step; SLEM_EINVAL before any reading: those of slem_truth_check() (truth.h; a protocol
 * when opts.protocol is set), or the database's labels or ids, read twice, are stdin, a
 * pipe or a FIFO. */
int slem_report_make(const char *output, const SlemTruthSpec *spec, const SlemReportInput *runs,
                     size_t nruns, SlemRankFormat fmt, const char *queries_file,
                     const SlemReportOpts *opts, const SlemThumbOpts *thumbs, size_t *missing,
                     char *first, size_t first_size, SlemError *err);

#endif

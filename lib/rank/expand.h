/* Query expansion: average query expansion (AQE), alpha-QE (Radenovic et al.) and, run on
 * the database against itself, database-side augmentation (DBA).
 *
 * For a vector q whose ranking against a database lists x_1, x_2, ... with scores
 * s_1 >= s_2 >= ..., the expanded vector is
 *
 *   normalise(q + sum_{j <= n} w_j x_j),  w_j = s_j^alpha,
 *
 * the definition of naver's dirtorch expand_descriptors (which averages the n + 1 terms:
 * the same direction). alpha = 0 gives w_j = 1 whatever the score (AQE). With alpha > 0 a
 * weight is pow(s_j, alpha), as numpy's power computes it there: a negative score keeps its
 * sign under an odd whole alpha, loses it under an even one, and has no real power under
 * a fractional alpha; dirtorch then produces NaN, slem refuses the query with a message.
 * Alpha must not be negative (dirtorch asserts it).
 *
 * The database is held in memory, float32, N x d.
 */
#ifndef SLEM_EXPAND_H
#define SLEM_EXPAND_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ids.h"
#include "progress.h"
#include "rankings.h"
#include "vecs.h"

typedef struct SlemExpandOpts {
  size_t n;      /* neighbours added, >= 1 */
  double alpha;  /* >= 0; 0 is AQE */
} SlemExpandOpts;

/* Every field zeroed, then the defaults: n 0 (the caller must choose one), alpha 0 (AQE). */
void slem_expand_opts_init(SlemExpandOpts *opts);

typedef struct SlemExpander SlemExpander;

/* Reads the whole database db (borrowed, at its start). ids (borrowed, may be NULL) names
 * its rows; without it rankings name rows by their 0-based number. Errors: SLEM_EINVAL (n
 * of 0, alpha negative or not finite), SLEM_EFORMAT (a read error naming file and record;
 * ids whose count differs from the rows'), SLEM_ENOMEM. */
int slem_expand_new(SlemExpander **self, SlemVecReader *db, const SlemIds *ids,
                      const SlemExpandOpts *opts, SlemError *err);
void slem_expand_free(SlemExpander *self);

size_t slem_expand_dim(const SlemExpander *self);
size_t slem_expand_rows(const SlemExpander *self);

/* The database row named id (len bytes) in a ranking. Errors: SLEM_EFORMAT (an id the
 * database ids do not have; without ids, not a row number below the row count). The
 * message names the id, the caller adds where it was read. */
int slem_expand_row(const SlemExpander *self, const char *id, size_t len, size_t *row,
                      SlemError *err);

/* y(d) = normalise(q(d) + sum_{j < n} w_j x_{rows[j]}) with w_j from scores[j]; rows and
 * scores list the query's ranking best first and must hold at least n entries (nhits).
 * A zero sum gives a zero y, counted by slem_expand_zeros(). Errors: SLEM_EFORMAT
 * (fewer than n entries; a weight that is not a real number), with the message starting
 * "query QNAME: ". */
int slem_expand_run(SlemExpander *self, double *y, const double *q, const size_t *rows,
                      const double *scores, size_t nhits, const char *qname, SlemError *err);

uint64_t slem_expand_zeros(const SlemExpander *self);

/* Expands every vector of in (borrowed) with the ranking that r (borrowed, at its start;
 * rankings.h) reads, and appends the rows to out (borrowed; the caller closes or aborts
 * it). The ranking's queries must be in's vectors, in order: the i-th query's id must be
 * qids' i-th line, or i (0-based) without qids; its entries are taken in the order of
 * their rank field, equal ranks in file order (as slem-eval takes them: slem-match writes
 * them so; a ranking re-sorted by another key still gives its best first). Errors: SLEM_EFORMAT (in's dimension is not the
 * database's, said to be a classifier file when it is one more; a query id out of order;
 * a document that is not a database row; fewer than n entries; more or fewer queries than
 * vectors; a read error naming file and record or line), those of the writer.
 * progress (may be NULL) is called after each block with the vectors done. */
int slem_expand_stream(SlemExpander *self, SlemVecReader *in, const SlemIds *qids,
                       SlemRankReader *r, SlemVecWriter *out, SlemProgressFn progress,
                       void *ctx, SlemError *err);

/* slem-expand as one call: the files it names, opened in turn (the ids, the database and
 * its expander, the vectors, the ranking), the vectors expanded (slem_expand_stream())
 * into output, committed at the end. cmd/slem-expand.c parses its options into it. */
typedef struct SlemExpandFiles {
  const char *db;                 /* the database's vectors */
  SlemFormat db_format;           /* SLEM_FMT_AUTO: recognised */
  const char *input;              /* the vectors to expand ("-": stdin) */
  SlemFormat input_format;
  const char *ranking;            /* their ranking ("-": stdin; NULL: stdin, when the
                                     vectors are not) */
  SlemRankFormat ranking_format;  /* SLEM_RANK_AUTO: recognised */
  const char *qids, *dbids;       /* ids files, or NULL: rows */
  const char *output;             /* "-": stdout */
  SlemFormat output_format;       /* SLEM_FMT_AUTO: from output's name */
  /* may be NULL: the vectors expanded so far, and how many there are (0: unknown) */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
} SlemExpandFiles;

/* The rules between slem-expand's options, before anything is read: a database, opts->n
 * given (not 0), a ranking named when the vectors come from stdin, at most one input from
 * stdin (the vectors, the database, the ranking, the ids files), an output format known
 * (from the output's name when not given: slem_format_for_output()). Errors: SLEM_EINVAL,
 * with the tool's message. */
int slem_expand_check(const SlemExpandFiles *files, const SlemExpandOpts *opts, SlemError *err);

/* Expands files->input with opts into files->output: slem_expand_check(), then the steps.
 * *zeros (may be NULL) receives the expanded vectors that are zero. Errors: those of
 * slem_expand_check(), the readers, slem_expand_new(), slem_expand_stream() and the writer;
 * nothing is written on error. */
int slem_expand_run_files(const SlemExpandFiles *files, const SlemExpandOpts *opts,
                          uint64_t *zeros, SlemError *err);

#endif

/* Scorers: how a block of queries and a tile of database rows become scores(nq, nd).
 *
 * slem_match() streams the database in tiles and keeps the best k of each query; what a
 * score is belongs to a scorer, an implementation of the small interface below:
 *   - the inner product (this file, slem_scorer_ip_new): float32 rows, one sgemm a tile,
 *     cosine when asked to L2-normalise;
 *   - the exact kernel SLEM similarity of base features (kproj.h,
 *     slem_scorer_kernel_new): double rows, projections against a kernel cache.
 * A new way to score (an affine classifier, calibrated scores) is a new implementation,
 * not a branch in the search loop.
 *
 * Life of a scorer: _new for at most max_q queries and tiles of at most max_d rows;
 * then, for each block of queries, slem_scorer_queries() once and slem_scorer_tile() for
 * each tile of the database; slem_scorer_free() at the end.
 */
#ifndef SLEM_SCORER_H
#define SLEM_SCORER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "vecs.h"

typedef struct SlemScorer SlemScorer;

/* What an implementation provides; slem_scorer_* below call through it. */
typedef struct SlemScorerOps {
  const char *name;
  int (*queries)(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err);
  int (*tile)(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
              uint64_t first_record, SlemError *err);
  uint64_t (*clamps)(const SlemScorer *self);  /* may be NULL: none */
  void (*destroy)(SlemScorer *self);           /* frees what the implementation holds */
} SlemScorerOps;

/* The part every implementation starts with (its own struct embeds it first). */
struct SlemScorer {
  const SlemScorerOps *ops;
  size_t d;       /* dimension of queries and database rows */
  size_t max_q;   /* queries per block, at most */
  size_t max_d;   /* database rows per tile, at most */
  int f32;        /* tiles are float32 rows (else double) */
  size_t nq;      /* queries of the current block */
};

/* The inner-product scorer for vectors of dimension d: queries and tiles as float32,
 * scores = Q D^T from one sgemm; with normalize, queries and database rows are first
 * L2-normalised (each row in double, then rounded to float32), so that the score is the
 * cosine. Errors: SLEM_ENOMEM. */
int slem_scorer_ip_new(SlemScorer **self, size_t d, int normalize, size_t max_q, size_t max_d,
                       SlemError *err);

/* Frees self (any implementation). Accepts NULL. */
void slem_scorer_free(SlemScorer *self);

/* Reads the next block of at most max_q queries from r (dimension d) and prepares them;
 * *got is 0 at the end of r. Errors: those of reading r (naming file and record), and the
 * implementation's (a kernel's input domain). */
int slem_scorer_queries(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err);

/* scores(nq, nd), row-major, of the current queries against rows(nd, d), float32 when
 * slem_scorer_f32() else double, which the scorer may overwrite. name and first_record
 * (from 1) name the rows in errors. nd <= max_d. */
int slem_scorer_tile(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
                     uint64_t first_record, SlemError *err);

/* Whether tiles are float32 (else double), for the reader that fills them. */
int slem_scorer_f32(const SlemScorer *self);

/* Queries of the current block. */
size_t slem_scorer_nq(const SlemScorer *self);

/* Kernel scorers: points whose u^2 was clamped (kproj.h), queries and rows together;
 * 0 for the others. */
uint64_t slem_scorer_clamps(const SlemScorer *self);

#endif

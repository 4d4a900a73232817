/* Scorers: how a block of queries and a tile of database rows become scores(nq, nd).
 *
 * slem_match() streams the database in tiles and keeps the best k of each query; what a
 * score is belongs to a scorer, an implementation of the small interface below:
 *   - the inner product (this file, slem_scorer_ip_new): float32 rows, one sgemm a tile,
 *     cosine when asked to L2-normalise;
 *   - the exact kernel SLEM similarity of base features (scorer_kernel.h,
 *     slem_scorer_kernel_new): double rows, projections against a kernel cache;
 *   - the affine classifier w.x + b, optionally calibrated (scorer_affine.h,
 *     slem_scorer_affine_new).
 * A new way to score is a new implementation, not a branch in the search loop.
 *
 * Exact scores. A scorer has two ways to score a pair: the fast one of a whole tile (a
 * BLAS product, whose rounding depends on the tile, the thread count and the row's
 * position), and the exact one, slem_scorer_exact(), a function of the two vectors alone
 * computed in a fixed order. slem_scorer_slack() bounds, with a proof in the
 * implementation, how far the fast score of a pair of the current tile can be from its
 * exact score; slem_match() re-scores exactly every row whose fast score comes within that
 * bound of a query's k-th best, so that its ranking and its printed scores are the exact
 * ones, identical however the work is cut.
 *
 * Life of a scorer: _new for at most max_q queries and tiles of at most max_d rows;
 * then, for each block of queries, slem_scorer_queries() once and slem_scorer_tile() for
 * each tile of the database; slem_scorer_free() at the end.
 */
#ifndef SLEM_SCORER_H
#define SLEM_SCORER_H

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "error.h"
#include "vecs.h"

typedef struct SlemScorer SlemScorer;
typedef struct SlemTileCache SlemTileCache; /* tilecache.h */

/* What an implementation provides; slem_scorer_* below call through it. */
typedef struct SlemScorerOps {
  const char *name;
  int (*queries)(SlemScorer *self, SlemVecReader *r, size_t *got, SlemError *err);
  int (*tile)(SlemScorer *self, float *scores, void *rows, size_t nd, const char *name,
              uint64_t first_record, SlemError *err);
  double (*slack)(const SlemScorer *self, size_t i);
  double (*exact)(const SlemScorer *self, size_t i, size_t j);
  uint64_t (*clamps)(const SlemScorer *self);  /* may be NULL: none */
  void (*destroy)(SlemScorer *self);           /* frees what the implementation holds */
  /* may be NULL: exact() for each row */
  void (*exact_rows)(const SlemScorer *self, size_t i, const size_t *j, size_t m, double *out);
} SlemScorerOps;

/* The part every implementation starts with (its own struct embeds it first). */
struct SlemScorer {
  const SlemScorerOps *ops;
  size_t d;       /* dimension of queries and database rows */
  size_t max_q;   /* queries per block, at most */
  size_t max_d;   /* database rows per tile, at most */
  int f32;        /* tiles are float32 rows (else double) */
  size_t nq;      /* queries of the current block */
  int unit_q, unit_db;  /* inner product: refuse queries / database rows of norm above 1,
                           which are not descriptors (plain vectors against a container's) */
  /* Set through slem_scorer_set_tile() before each tile: its index in the pass over the database;
   * whether slem_match() keeps its rows in memory for the next blocks of queries (keep);
   * whether its rows are such a kept tile, byte for byte those of the tile of that index
   * in the first pass (replay). An implementation may keep what it computed from a kept
   * tile and reuse it for its replays. */
  size_t tile;
  int keep, replay;
  SlemTileCache *tiles;  /* slem_match()'s tile cache (borrowed; NULL: none), where a scorer
                            may keep what it derives from kept tiles */
};

/* The inner-product scorer for vectors of dimension d: queries and tiles as float32,
 * scores = Q D^T from one sgemm; with normalize, queries and database rows are first
 * scaled by the inverse L2 norms, so that the score is the cosine. Exact score: the sum of
 * the products q_l x_l in double (each product of two float32 is exact in double), in a
 * fixed order, divided by |q| |x| (each a fixed-order sum in double) with normalize; 0
 * when either vector is zero. Errors: SLEM_ENOMEM. */
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

/* An upper bound on |fast score - exact score| over the pairs of query i (of the current
 * block) and the rows of the last tile; +0.0 when they agree exactly. The fast score is
 * the float in scores of slem_scorer_tile(); the bound covers its rounding to float. */
double slem_scorer_slack(const SlemScorer *self, size_t i);

/* The exact score of query i of the current block and row j of the last tile: a function
 * of the two vectors alone, whatever the tile, the thread count or the positions. */
double slem_scorer_exact(const SlemScorer *self, size_t i, size_t j);

/* out[r] = slem_scorer_exact(self, i, j[r]) for r < m, bit for bit, m <= SLEM_EXACT_ROWS:
 * several rows at once where the scorer can (the inner product: eight sums side by side). */
#define SLEM_EXACT_ROWS 8
void slem_scorer_exact_rows(const SlemScorer *self, size_t i, const size_t *j, size_t m,
                            double *out);

/* gamma_n = n u / (1 - n u): the bound on the relative error of a sum of n products in
 * any order, for unit roundoff u (2^-24 for float32, 2^-53 for double). */
double slem_scorer_gamma(double n, double u);

/* Whether tiles are float32 (else double), for the reader that fills them. */
int slem_scorer_f32(const SlemScorer *self);

/* Queries of the current block. */
size_t slem_scorer_nq(const SlemScorer *self);

/* Inner product: refuse query rows (unit_q) or database rows (unit_db) of norm above 1,
 * which are not descriptors (plain vectors against a container's). Before the first block
 * of queries; other scorers ignore it. */
void slem_scorer_set_units(SlemScorer *self, int unit_q, int unit_db);

/* Before each tile, from slem_match(): the tile's index in the pass over the database;
 * whether its rows are being kept in memory for the next blocks of queries (keep); whether
 * they are such a kept tile, byte for byte that of the same index in the first pass
 * (replay). An implementation may keep what it computed from a kept tile for its replays. */
void slem_scorer_set_tile(SlemScorer *self, size_t tile, int keep, int replay);

/* Before the first tile, from slem_match(): its tile cache (tilecache.h; borrowed, NULL:
 * none), in which the scorer may keep what it derives from the tiles being kept (keep of
 * slem_scorer_set_tile()) and find it again at their replays. */
void slem_scorer_set_tiles(SlemScorer *self, SlemTileCache *tiles);

/* Kernel scorers: points whose u^2 was clamped (kproj.h), queries and rows together;
 * 0 for the others. */
uint64_t slem_scorer_clamps(const SlemScorer *self);

#endif

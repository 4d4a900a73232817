/* Exhaustive top-k search by inner product, in tiles, with exact scores.
 *
 * Queries are read in blocks of qblock; for each block the database is streamed in
 * tiles of dblock rows (float32, read as such), scores(qblock, dblock) = Q D^T comes from
 * one sgemm, and each query keeps its best k in a heap (topk.h) keyed by the exact score
 * rounded to float and the global row. A row is re-scored exactly (scorer.h) only when
 * its fast score plus the scorer's proven slack reaches the float below the heap's worst
 * exact score, or while the heap is not full; every row of the exact top k passes that
 * test, so the heap ends holding the exact top k. Memory: O((qblock + dblock) d + qblock
 * dblock + qblock k), whatever the database size. With more than one query block the
 * database is read again, so it must then be a regular file.
 *
 * Order: the rule of topk.h, higher score first and equal scores by lower database row,
 * on the printed (float) scores, so that merging the rankings of shards by that rule
 * gives the ranking of the whole. What a score is belongs to a scorer (scorer.h): the
 * inner product, or the exact kernel SLEM similarity with a kernel cache.
 */
#ifndef SLEM_MATCH_H
#define SLEM_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "calibration.h"
#include "db.h"
#include "error.h"
#include "phases.h"
#include "progress.h"
#include "textbuf.h"
#include "scorer_affine.h"
#include "topk.h"
#include "vecs.h"

typedef struct SlemMatchOpts {
  size_t k;          /* results per query (default 100) */
  int exclude_self;  /* skip the database row whose index is the query's */
  int normalize;     /* L2-normalise queries and database rows first (cosine) */
  size_t qblock;     /* queries per block (default 2048) */
  size_t dblock;     /* database rows per tile (0, the default: slem_match_tile_rows(d,
                        threads), or slem_block_rows(d) for a kernel) */
  const SlemCache *kernel;  /* a kernel cache: score by the exact kernel SLEM similarity
                               of base features (kernel_stats.h) instead of the inner product */
  int couple;        /* kernel: the coupling of kproj.h (a cache made with --couple) */
  int affine;        /* queries are classifiers of d + 1 values (w, b): score w.x + b */
  const SlemCalibration *calibration;  /* implies affine: each query's score through its
                                          sigmoid (calibration.h) */
  int unit_queries, unit_db;  /* inner product: refuse query / database rows that are not
                                 unit descriptors (set when the other side is a container) */
  size_t memory;     /* bytes of the database (and, apart, of a kernel's projections of it)
                        kept in memory between blocks of queries (mem.h, slem_mem_match_budget();
                        0: none; default SLEM_MEMORY_AUTO, a quarter of the memory) */
  SlemProgressFn progress;  /* may be NULL: called after each tile with the (query, row)
                               pairs scored so far */
  void *progress_ctx;
} SlemMatchOpts;

typedef struct SlemMatchStats {
  uint64_t nq, ndb;  /* queries and database rows searched (the shard's, with a shard) */
  uint64_t clamps;   /* kernel: points whose u^2 was clamped (see kproj.h) */
  uint64_t pairs;    /* (query, row) pairs scored by the tiles */
  uint64_t rescored; /* pairs re-scored exactly (near or above a k-th best) */
  uint64_t passes;   /* passes over the database, one per block of queries */
  uint64_t reads;    /* of them, passes that read the files (the others read the tiles the
                        first pass kept in memory: SLEM_MATCH_MEMORY) */
  SlemPhases phases; /* where the wall time went: read (the tiles, on the prefetch thread),
                        convert (loading the queries), compute (scoring the tiles), merge
                        (the queries' top-k selections), write (sorting the rankings and
                        formatting them on the threads, then their writing or emit on the
                        writer thread) */
} SlemMatchStats;

/* The rules between the kinds of a search, checked once here for slem_match_db() and the
 * tool (matchrun.h): coupling only with a kernel; a kernel without normalize; classifier
 * queries (affine) with neither a kernel nor normalize. Errors: SLEM_EINVAL, in the tool's
 * words. */
int slem_match_rules(int kernel, int couple, int normalize, int affine, SlemError *err);

/* Zeroes opts, then sets the defaults above. Cannot fail. */
void slem_match_opts_init(SlemMatchOpts *opts);

/* The default tile of an inner-product or classifier search of dimension d on `threads`
 * BLAS threads: slem_block_rows(d / 2) float32 rows (about 2^22 / d, from 256 to 4 096),
 * twice that beyond 4 threads, so that each tile's sgemm and selection, with a barrier
 * between them, give every thread more work per tile. The rankings do not depend on it.
 * Cannot fail. */
size_t slem_match_tile_rows(size_t d, int threads);

/* Called once per query, in query order, with its n <= k hits sorted best first (hits
 * borrowed for the call). The calls come from a writer thread of slem_match_db(), one at a
 * time, while the next block of queries is scored on the caller's thread (and the progress
 * callback called there): emit must not share unguarded state with the progress callback.
 * A non-zero return stops the search and is returned by slem_match() (the error of an
 * earlier block's emission wins over a later block's own). */
typedef int (*SlemHitsFn)(void *ctx, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err);

/* The rankings of a block of queries, each sorted best first: query q0 + i (i < nq) has
 * n[i] hits at hits + i * stride. Borrowed for the call that receives it. */
typedef struct SlemHitsBlock {
  uint64_t q0;
  size_t nq;
  const SlemHit *hits;
  size_t stride;
  const size_t *n;
} SlemHitsBlock;

/* Where slem_match_db_sink() hands its rankings. emit (required) is the serial path: one
 * query at a time, on the writer thread (SlemHitsFn). When format is not NULL it is used
 * instead: after each block's last tile, the worker threads format the block in fixed
 * ranges [lo, hi) of its queries (indices into b), each range appended to its own buffer,
 * several ranges at once (format may read ctx, never change it); then write gets the
 * ranges' texts in query order, on the writer thread, one at a time. A format error
 * (SLEM_ENOMEM, SLEM_EFORMAT: an ids table too short) leaves in buf the text of the
 * queries before the failing one, which is written before the error is returned, as the
 * serial path would have; write returns SLEM_EIO with its message. */
typedef struct SlemHitsSink {
  SlemHitsFn emit;
  int (*format)(void *ctx, const SlemHitsBlock *b, size_t lo, size_t hi, SlemTextBuf *buf,
                SlemError *err);
  int (*write)(void *ctx, const char *text, size_t len, SlemError *err);
  void *ctx;
} SlemHitsSink;

/* Ranks the rows of db (its shard's rows, numbered globally, when slem_db_select() chose
 * one) for every vector of queries (both borrowed, at their start) and calls emit for
 * each query, in order, with its hits under the exact scores of the scorer (scorer.h):
 * the hits and their scores depend on the vectors alone, not on the tile and block sizes,
 * the thread count, the order of the queries or the split of the database into files and
 * shards. A query may get no hits (an empty shard, k rows excluded). stats receives the
 * counts.
 *
 * Threads: each tile's selection is cut into units of queries fixed by the tile's rows
 * (about 2^16 pairs a unit), taken by the threads from a shared counter
 * (slem_blas_par_units()); after a block's last tile its rankings are sorted by the
 * threads in units of queries, and emitted on a writer thread while the next block is
 * scored, with two sets of top-k heaps in memory (2 qblock k hits, plus qblock k lower
 * bounds).
 *
 * Checked before anything is emitted: dimensions; that a database that cannot be read
 * twice (a pipe) is read once, i.e. that the queries fit in one block of qblock, from
 * their count when known, else by reading one query beyond the block before starting.
 * Errors: SLEM_EFORMAT (dimensions differ: queries of d + 1 values against a database of
 * d without affine are named as classifiers; a read error naming file and record, an empty
 * database), SLEM_EIO (a pipe and more than qblock queries), SLEM_EINVAL (normalize with a
 * kernel, normalize or a kernel with affine queries, k 0), SLEM_ENOMEM, or what emit
 * returned. */
int slem_match_db(SlemVecReader *queries, SlemDb *db, const SlemMatchOpts *opts,
                  SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err);

/* slem_match_db() into sink (borrowed): the same rankings, in the same order, through
 * sink->emit, or sink->format and sink->write when format is given (the formatting then
 * on every thread, in ranges of queries fixed by the block alone). */
int slem_match_db_sink(SlemVecReader *queries, SlemDb *db, const SlemMatchOpts *opts,
                       const SlemHitsSink *sink, SlemMatchStats *stats, SlemError *err);

/* slem_match_db() over the one file of db (borrowed, at its start). */
int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err);

#endif

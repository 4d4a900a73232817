/* Exhaustive top-k search by inner product, in tiles.
 *
 * Queries are read in blocks of qblock; for each block the database is streamed in
 * tiles of dblock rows (float32, read as such), scores(qblock, dblock) = Q D^T comes from
 * one sgemm, and each
 * query keeps its best k in a heap that is touched only when a score beats its worst.
 * Memory: O((qblock + dblock) d + qblock dblock + qblock k), whatever the database size.
 * With more than one query block the database is read again, so it must then be a
 * regular file.
 *
 * Order: the rule of topk.h, higher score first and equal scores by lower database row.
 * What a score is belongs to a scorer (scorer.h): the inner product, or the exact kernel
 * SLEM similarity with a kernel cache.
 */
#ifndef SLEM_MATCH_H
#define SLEM_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "topk.h"
#include "vecs.h"

typedef struct SlemMatchOpts {
  size_t k;          /* results per query (default 100) */
  int exclude_self;  /* skip the database row whose index is the query's */
  int normalize;     /* L2-normalise queries and database rows first (cosine) */
  size_t qblock;     /* queries per block (default 2048) */
  size_t dblock;     /* database rows per tile (0, the default: slem_block_rows(d / 2),
                        about 2^22 / d rows of float32, or slem_block_rows(d) for a kernel) */
  const SlemCache *kernel;  /* a kernel cache: score by the exact kernel SLEM similarity
                               of base features (kslem.h) instead of the inner product */
} SlemMatchOpts;

typedef struct SlemMatchStats {
  uint64_t nq, ndb;  /* queries and database rows */
  uint64_t clamps;   /* kernel: points whose u^2 was clamped (see kslem.h) */
} SlemMatchStats;

void slem_match_opts_init(SlemMatchOpts *opts);

/* Called once per query, in query order, with its n <= k hits sorted best first. A
 * non-zero return stops the search and is returned by slem_match(). */
typedef int (*SlemHitsFn)(void *ctx, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err);

/* Ranks db for every vector of queries (both borrowed, positioned at their start) and
 * calls emit for each query; stats receives the counts. Errors: SLEM_EFORMAT (dimensions
 * differ, a read error naming file and record), SLEM_EIO (database not rereadable),
 * SLEM_EINVAL (normalize with a kernel), SLEM_ENOMEM, or what emit returned. */
int slem_match(SlemVecReader *queries, SlemVecReader *db, const SlemMatchOpts *opts,
               SlemHitsFn emit, void *ctx, SlemMatchStats *stats, SlemError *err);

#endif

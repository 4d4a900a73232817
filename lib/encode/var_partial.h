/* The partial kind of cache (slem-negstats --partial): the complete nodes of the statistics
 * tree of stats.h for a run of leaves: sections node_mu(m, d) and node_scatter(m d, d),
 * each node's scatter sum (x - mu)(x - mu)^T over its rows, with the nodes' places and
 * counts ("nodes": [level, index, n] each), the grid of leaves ("rows", "leaf_rows",
 * "leaf_total", "leaves": [first, end)), the shard written and the negatives' content hash
 * in its JSON header; mergeable across shards into exactly the statistics of one pass. It
 * has no section mu.
 */
#ifndef SLEM_VAR_PARTIAL_H
#define SLEM_VAR_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

/* What a partial cache holds (stats.h): the complete nodes of the statistics tree over the
 * leaves [leaf_first, leaf_end) of a set of negatives of `rows` rows cut into leaf_total
 * leaves of leaf_rows rows each. leaf_rows 0: the leaves are whole sets of negatives folded
 * already (a merge of several sets). negatives names the set by the content of its vector
 * files, in order (16 hex digits; "": not recorded, a pipe or an older slem), so that the
 * shards of two sets of the same shape are never taken for one set. */
typedef struct SlemPartialInfo {
  size_t leaf_rows;
  uint64_t leaf_first, leaf_end, leaf_total;
  uint64_t rows;
  uint64_t shard_index, shard_count;  /* the shard written, count 0: none */
  size_t nnodes;
  const uint64_t *node;               /* node(nnodes, 3): level, index, n */
  const double *node_mu;              /* node_mu(nnodes, d) */
  const double *node_scatter;         /* node_scatter(nnodes d, d), lower triangles valid */
  char negatives[17];                 /* last: initialisers by position leave it "" */
} SlemPartialInfo;

/* The nodes of a partial cache, or NULL for another kind. Cannot fail. */
const SlemPartialInfo *slem_cache_partial(const SlemCache *self);

/* Writes a partial cache from its nodes atomically. Errors: those of slem_cache_write(). */
int slem_cache_write_partial(const char *path, size_t d, uint64_t n,
                             const SlemPartialInfo *info, const SlemProvenance *prov,
                             SlemError *err);

#endif

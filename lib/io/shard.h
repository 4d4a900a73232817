/* Shards: the same cut of N rows into parts for every stage (search, encoding, negative
 * statistics), so that the pieces of a sharded run fit together.
 *
 * Shard I of N (0 <= I < N) of R rows is rows floor(I R / N) to floor((I + 1) R / N) - 1:
 * the shards are contiguous, in order, cover every row once, and differ in size by at most
 * one row; a shard may be empty when N > R.
 */
#ifndef SLEM_SHARD_H
#define SLEM_SHARD_H

#include <stdint.h>

#include "error.h"

typedef struct SlemShard {
  uint64_t index;  /* I */
  uint64_t count;  /* N; 0 in a SlemShard means "no sharding" */
} SlemShard;

/* Parses "I/N" (decimal, 0 <= I < N, N <= 2^32). Errors: SLEM_EINVAL with what is wrong. */
int slem_shard_parse(SlemShard *self, const char *text, SlemError *err);

/* The rows [*lo, *hi) of shard self among rows rows (all of them when self->count is 0).
 * Exact for any rows below 2^64 (the product is formed in 128 bits). Cannot fail. */
void slem_shard_range(const SlemShard *self, uint64_t rows, uint64_t *lo, uint64_t *hi);

#endif

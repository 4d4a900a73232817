/* Top-k selection under slem's one ordering rule for ranked hits.
 *
 * The rule, used by every tool that ranks or merges rankings: a higher score comes first,
 * and among equal scores the lower row. Rows are global database rows (0-based), so that
 * the rankings of shards of one database merge into the ranking of the whole.
 *
 * A SlemTopK keeps the best k hits pushed into it in a binary min-heap (the root is the
 * worst hit kept), over memory the caller owns or that slem_topk_new() allocates; a push
 * costs O(1) when the hit does not enter and O(log k) when it does.
 */
#ifndef SLEM_TOPK_H
#define SLEM_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemHit {
  uint64_t row;  /* global database row, 0-based */
  float score;   /* never NaN: callers drop NaN scores before pushing */
} SlemHit;

/* Non-zero when a ranks strictly before b: a higher score, or the same score and a lower
 * row. The ordering rule, written once. */
int slem_topk_hit_before(const SlemHit *a, const SlemHit *b);

/* qsort()/bsearch() comparison of two SlemHit: negative when the first ranks before the
 * second, positive when after, 0 only for the same row and score. Sorting with it puts
 * the best hit first; a k-way merge pops the hit that compares lowest. */
int slem_topk_hit_cmp(const void *a, const void *b);

typedef struct SlemTopK {
  SlemHit *heap;  /* heap(k), borrowed or owned (see slem_topk_new) */
  size_t k;       /* capacity: hits kept */
  size_t n;       /* hits held, n <= k */
  int owned;
} SlemTopK;

/* Empties self over mem(k) (borrowed: the caller keeps it alive and frees it). k may be 0
 * (nothing is ever kept). Cannot fail. */
void slem_topk_init(SlemTopK *self, SlemHit *mem, size_t k);

/* Allocates an empty SlemTopK of capacity k, freed by slem_topk_free(). Errors:
 * SLEM_ENOMEM. */
int slem_topk_new(SlemTopK **self, size_t k, SlemError *err);
void slem_topk_free(SlemTopK *self);

/* Empties self, keeping its memory. */
void slem_topk_clear(SlemTopK *self);

/* Offers c: kept when fewer than k hits are held or when c ranks before the worst one,
 * which it then replaces. Returns 1 when c was kept, else 0. Cannot fail. */
int slem_topk_push(SlemTopK *self, SlemHit c);

/* The worst hit held, the one the next push has to beat; NULL while fewer than k are
 * held (every hit then enters). */
const SlemHit *slem_topk_worst(const SlemTopK *self);

/* Sorts the held hits best first in place, returns their number and empties self: the
 * sorted hits stay at self->heap[0..n-1] until the next push. */
size_t slem_topk_sorted(SlemTopK *self);

#endif

/* The kernel scorer: the scorer interface (scorer.h) over kernel projections (kproj.h). */
#ifndef SLEM_SCORER_KERNEL_H
#define SLEM_SCORER_KERNEL_H

#include "cache.h"
#include "error.h"
#include "scorer.h"

/* The kernel scorer (scorer.h): queries and tiles are base features read as double, the
 * score is the exact similarity above from projections of slem_kproj_run_fixed(), its
 * fast score the same through two dgemm per tile (see scorer_kernel.c for the slack). cache (borrowed, kind kernel)
 * must outlive the scorer. The projections of the tiles slem_match() keeps are kept in its
 * tile cache (slem_scorer_set_tiles(), tilecache.h) for their replays. Errors: SLEM_EINVAL
 * (not a kernel cache), SLEM_ENOMEM. */
int slem_scorer_kernel_new(SlemScorer **self, const SlemCache *cache, size_t max_q,
                           size_t max_d, int couple, SlemError *err);

/* Makes the tiles of a kernel scorer (self) rows of kernel projections of the same cache
 * and coupling (slem_kproj_pack(), SLEM_KPROJ_WIDTH doubles each), read from a container
 * of slem-encode --projections, instead of base features: the database's rows are not
 * projected again. Before the first tile. */
void slem_scorer_kernel_projections(SlemScorer *self);

#endif

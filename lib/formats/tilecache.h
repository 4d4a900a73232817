/* The database tiles slem_match() keeps in memory between blocks of queries, and what a
 * scorer derived from them (the kernel scorer's projections, kproj.h), in one module.
 *
 * The first pass over the database reads the files; while the rows fit in the budget,
 * each tile is copied here as read, so that the next blocks of queries read memory instead
 * of the files (all the tiles or none: past the budget, the rows kept so far are freed and
 * every pass reads the files). Apart, under the same budget counted on its own, a scorer
 * may keep what it computed from each tile of that first pass, for the passes that replay
 * the kept rows (past the budget it stops, and the tiles derived so far stay of use).
 * Nothing here fails once made: past the budget or out of memory, less is kept, and the
 * results are the same.
 */
#ifndef SLEM_TILECACHE_H
#define SLEM_TILECACHE_H

#include <stddef.h>

#include "error.h"
#include "prefetch.h"

typedef struct SlemTileCache SlemTileCache;

/* A cache of at most budget bytes of rows and, apart, budget bytes derived from them
 * (slem_mem_match_budget()); keep_rows 0: no rows are kept (a pipe, or one block of queries),
 * nor anything derived. Freed by slem_tilecache_free(). Errors: SLEM_ENOMEM. */
int slem_tilecache_new(SlemTileCache **self, size_t budget, int keep_rows, SlemError *err);

/* Frees self and everything kept. Accepts NULL. */
void slem_tilecache_free(SlemTileCache *self);

/* Whether rows are still being kept (not past the budget). */
int slem_tilecache_keeping(const SlemTileCache *self);

/* Keeps a copy of the next tile, nd rows of bytes bytes read at pos (pos->name borrowed:
 * it must outlive self). Past the budget, or out of memory, stops keeping rows and frees
 * those kept. */
void slem_tilecache_keep_rows(SlemTileCache *self, const void *rows, size_t nd, size_t bytes,
                              const SlemBlockPos *pos);

/* Tiles of rows kept. */
size_t slem_tilecache_tiles(const SlemTileCache *self);

/* Tile i (< slem_tilecache_tiles()): its rows (owned by self, read only), *nd and *pos. */
const void *slem_tilecache_rows(const SlemTileCache *self, size_t i, size_t *nd,
                                SlemBlockPos *pos);

/* A buffer of bytes (owned by self) for what a scorer derives from tile `tile` of nd rows,
 * to be filled now; tiles come in order from 0. NULL when nothing is to be kept: past the
 * budget or out of memory (it stops; the tiles derived so far stay), or a tile out of
 * order (it stops and frees them all, none can be trusted to be in place). */
void *slem_tilecache_derive(SlemTileCache *self, size_t tile, size_t nd, size_t bytes);

/* What was derived from tile `tile` when it had nd rows, or NULL. Owned by self. */
const void *slem_tilecache_derived(const SlemTileCache *self, size_t tile, size_t nd);

/* Stops keeping derived data and frees it (the files are read again: it is idle); nothing
 * when none is kept. */
void slem_tilecache_drop_derived(SlemTileCache *self);

#endif

/* Reading the next block of vectors while the current one is computed on.
 *
 * A thread reads blocks from a SlemVecReader into one of two buffers; the caller takes
 * them in order. While the BLAS threads work on block i, block i + 1 is read and parsed,
 * so that parsing does not leave the cores idle.
 */
#ifndef SLEM_PREFETCH_H
#define SLEM_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "vecs.h"

typedef struct SlemPrefetch SlemPrefetch;

/* Where a block came from: the file, the record of its first row in that file (from 1),
 * and the row's number in the whole input (from 0; across files for a database made of
 * several, see db.h). */
typedef struct SlemBlockPos {
  const char *name;
  uint64_t record;
  uint64_t row;
} SlemBlockPos;

/* A source of blocks: fills x with up to max rows (float32 when f32, else double), *got
 * 0 at the end; a block may hold fewer than max rows before the end (for example at a
 * file boundary). pos describes the block. Called on the prefetch thread only. */
typedef int (*SlemBlockReadFn)(void *ctx, void *x, size_t max, int f32, size_t *got,
                               SlemBlockPos *pos, SlemError *err);

/* Starts reading blocks of block rows of row_dim values each from fn(ctx) (ctx borrowed,
 * used by the thread only until slem_prefetch_free()). Errors: SLEM_ENOMEM, SLEM_EIO. */
int slem_prefetch_new_fn(SlemPrefetch **self, SlemBlockReadFn fn, void *ctx, size_t row_dim,
                         size_t block, int f32, SlemError *err);

/* slem_prefetch_next(), also telling where the block came from (pos may be NULL). */
int slem_prefetch_next_pos(SlemPrefetch *self, void **rows, size_t *got, SlemBlockPos *pos,
                           SlemError *err);

/* Starts reading r (borrowed, not to be used by the caller until slem_prefetch_free())
 * in blocks of block vectors, as float32 when f32, else double. Errors: SLEM_ENOMEM,
 * SLEM_EIO (the thread could not start). */
int slem_prefetch_new(SlemPrefetch **self, SlemVecReader *r, size_t block, int f32,
                      SlemError *err);

/* slem_prefetch_new() over a window of r, from where r stands: blocks of front rows of
 * zeros, then at most rows rows of r, then zeros up to span rows in all (the blocks of a
 * cut of a larger input: a shard's; span == rows for no zeros after). A block is as long
 * as it would be over the whole input (block rows, fewer only at span's end), so that a
 * row keeps its place in its block; rows outside the window are never read. */
int slem_prefetch_new_window(SlemPrefetch **self, SlemVecReader *r, size_t block, int f32,
                             uint64_t front, uint64_t rows, uint64_t span, SlemError *err);
/* The next block: *rows points to got vectors (double or float), valid and writable until
 * the next call; *got is 0 at the end. Errors: those of slem_vecreader_read(). */
int slem_prefetch_next(SlemPrefetch *self, void **rows, size_t *got, SlemError *err);

/* Before the first slem_prefetch_next(): the caller keeps its last `blocks` blocks (1, the
 * default, or 2) valid and writable, each given back at the blocks-th call after the one
 * that returned it; one more buffer is read into meanwhile. Errors: SLEM_EINVAL,
 * SLEM_ENOMEM. */
int slem_prefetch_keep(SlemPrefetch *self, int blocks, SlemError *err);

/* Seconds so far the thread spent reading (read) and the caller waiting in
 * slem_prefetch_next() for a block not yet read (wait). Cannot fail. */
void slem_prefetch_times(SlemPrefetch *self, double *read, double *wait);

/* Stops the thread and frees self. Accepts NULL. */
void slem_prefetch_free(SlemPrefetch *self);

#endif

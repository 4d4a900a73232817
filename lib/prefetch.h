/* Reading the next block of vectors while the current one is computed on.
 *
 * A thread reads blocks from a SlemVecReader into one of two buffers; the caller takes
 * them in order. While the BLAS threads work on block i, block i + 1 is read and parsed,
 * so that parsing does not leave the cores idle.
 */
#ifndef SLEM_PREFETCH_H
#define SLEM_PREFETCH_H

#include <stddef.h>

#include "error.h"
#include "vecs.h"

typedef struct SlemPrefetch SlemPrefetch;

/* Starts reading r (borrowed, not to be used by the caller until slem_prefetch_free())
 * in blocks of block vectors, as float32 when f32, else double. Errors: SLEM_ENOMEM,
 * SLEM_EIO (the thread could not start). */
int slem_prefetch_new(SlemPrefetch **self, SlemVecReader *r, size_t block, int f32,
                      SlemError *err);

/* The next block: *rows points to got vectors (double or float), valid and writable until
 * the next call; *got is 0 at the end. Errors: those of slem_vecreader_read(). */
int slem_prefetch_next(SlemPrefetch *self, void **rows, size_t *got, SlemError *err);

/* Stops the thread and frees self. Accepts NULL. */
void slem_prefetch_free(SlemPrefetch *self);

#endif

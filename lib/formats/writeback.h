/* Writing the last block while the next one is computed: the other half of prefetch.h.
 *
 * A thread runs fn(ctx) on one block at a time, in the order given; the caller hands a
 * block over and goes on computing the next one into another buffer. fn runs on the
 * writing thread only, so an output (SlemVecWriter) is used by one thread at a time.
 */
#ifndef SLEM_WRITEBACK_H
#define SLEM_WRITEBACK_H

#include <stddef.h>

#include "error.h"

typedef struct SlemWriteback SlemWriteback;

/* Writes n rows from buf; SLEM_OK or an error with its message in err. */
typedef int (*SlemWriteFn)(void *ctx, const void *buf, size_t n, SlemError *err);

/* Starts the thread (ctx borrowed until slem_writeback_free()). Errors: SLEM_ENOMEM,
 * SLEM_EIO (the thread could not start). */
int slem_writeback_new(SlemWriteback **self, SlemWriteFn fn, void *ctx, SlemError *err);

/* Waits until the block handed over before (if any) is written, then hands over buf (n
 * rows, borrowed: not to be changed until the next call of slem_writeback_put() or
 * slem_writeback_finish() returns). Returns the status of that earlier write (its
 * message in err); after an error, buf is not written. */
int slem_writeback_put(SlemWriteback *self, const void *buf, size_t n, SlemError *err);

/* Waits until every block is written; returns the status of the last write. */
int slem_writeback_finish(SlemWriteback *self, SlemError *err);

/* Seconds so far the thread spent in fn (write) and the caller waiting for it (wait).
 * Cannot fail. */
void slem_writeback_times(SlemWriteback *self, double *write, double *wait);

/* Waits for the block being written, stops the thread and frees self. Accepts NULL. */
void slem_writeback_free(SlemWriteback *self);

#endif

/* What the public API's functions (slem.h, lib/api/api_*.c) share: the checks of a
 * caller's SlemArray and its reader, the BLAS threads of one call, set and restored.
 * Internal to lib/api/.
 */
#ifndef SLEM_API_UTIL_H
#define SLEM_API_UTIL_H

#include <stddef.h>

#include "slem.h"
#include "vecs.h"

/* SLEM_OK when x is an array the library can read: not NULL, dtype SLEM_FLOAT32 or
 * SLEM_FLOAT64, rows and cols > 0 (cols at most SLEM_DIM_MAX), data not NULL, and when
 * cols_expected > 0, x->cols equal to it (what says so: "the cache's dimension"). Errors:
 * SLEM_EINVAL naming the array by name ("queries: 127 columns, but the cache's dimension
 * is 128"). */
int slem_api_array_check(const SlemArray *x, const char *name, size_t cols_expected,
                         const char *what, SlemError *err);

/* A reader of the rows of x (slem_api_array_check()ed), named name in its messages, over
 * the caller's memory (vecs.h: slem_vecreader_open_array()). Errors: those of the check,
 * SLEM_ENOMEM. */
int slem_api_array_reader(SlemVecReader **r, const SlemArray *x, const char *name,
                          SlemError *err);

/* The BLAS threads of one call of the API, process-wide: slem_api_threads_begin() sets
 * them (threads > 0: that many; 0: SLEM_THREADS when it is set, else OpenBLAS's own
 * count, all cores) and keeps the count it found, which slem_api_threads_end() restores.
 * Errors: SLEM_EINVAL for threads below 0 or above 1024, or a SLEM_THREADS that is not a
 * whole number from 1 to 1024 (nothing set then; end() is still safe). */
typedef struct SlemApiThreads {
  int saved; /* the count before the call; 0: nothing to restore */
} SlemApiThreads;

int slem_api_threads_begin(SlemApiThreads *self, int threads, SlemError *err);
void slem_api_threads_end(SlemApiThreads *self);

/* Copies err's message behind prefix ("fit: " ...) into err, for a caller's context; err
 * may be NULL. Returns status. */
int slem_api_error_prefix(SlemError *err, int status, const char *prefix);

#endif

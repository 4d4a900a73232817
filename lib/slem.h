/* libslem: square-loss exemplar machine (SLEM) descriptors and cosine retrieval.
 *
 * Ownership, in one line: only *_new, *_read and *_open hand memory to the caller, and
 * each has a *_free (or *_close, *_abort) that accepts NULL; everything else borrows.
 *
 * Modules: error.h (status codes), io.h (buffered input, atomic output), vecs.h (vector
 * files: a table of formats, each implementing the internal vecfmt.h in fmt_vecs.c,
 * fmt_npy.c or fmt_text.c), prefetch.h (reading a block ahead), ids.h, cache.h (the
 * .slem cache), stats.h (negative statistics), encode.h (descriptors), kernel.h (kernels, incomplete Cholesky),
 * kslem.h (kernel SLEM), match.h (top-k search), rank.h (ranking output), fmt.h (%.9g),
 * strmap.h (interned ids), eval.h (mAP and friends), crc32.h.
 */
#ifndef SLEM_H
#define SLEM_H

#define SLEM_VERSION "0.1.0"

#include "error.h"

/* The shared object that cblas_dgemm resolves to in this process (for example
 * ".../libopenblasp-r0.3.21.so"), or "unknown". GSL's own BLAS calls resolve to the same
 * one, so this tells whether the fast BLAS is bound or the reference gslcblas. */
const char *slem_blas_library(void);

/* Sets the number of BLAS threads (OpenBLAS); n <= 0 leaves the default. */
void slem_set_threads(int n);

#endif

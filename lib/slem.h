/* libslem: square-loss exemplar machine (SLEM) descriptors and cosine retrieval.
 *
 * Ownership, in one line: only *_new, *_read and *_open hand memory to the caller, and
 * each has a *_free (or *_close, *_abort) that accepts NULL; everything else borrows.
 *
 * Modules: error.h (status codes), io.h (buffered input, atomic output), negstats.h (the
 * pipeline of slem-negstats: inputs to a cache), encstream.h (the pipeline of slem-encode:
 * a reader encoded into a vector file; encoder.h, its encoders, one file enc_*.c each in one
 * table), vecs.h (vector
 * files: a table of formats, each implementing the internal vecfmt.h in fmt_vecs.c,
 * fmt_npy.c, fmt_text.c or fmt_bin.c), prefetch.h (reading a block ahead), ids.h, cache.h
 * (the .slem cache), stats.h (negative statistics), encode.h (descriptors), kernel.h
 * (kernels, incomplete Cholesky), kslem.h (kernel SLEM statistics), kproj.h (kernel
 * projection, exact similarity, the kernel scorer), topk.h (the ordering rule of hits,
 * top-k selection), scorer.h (the scorer interface, inner-product scorer), dot.h (the
 * fixed-order dot products of exact scores and projections, several side by side in
 * vector registers with the same bits), shard.h (the I/N cut of rows), db.h (a database of several files, a shard of it),
 * match.h (top-k search), rankings.h (the ranking formats: names, writer, reader with an
 * iterator over queries), merge.h (shard rankings merged into the ranking of the whole
 * database), fmt.h (%.9g), strmap.h (interned ids), lines.h (line files: the loop of qrels,
 * junk and rankings), truth.h (ground truth: qrels, labels, junk), eval.h (mAP and friends,
 * and their reports), treceval.h (trec_eval 10.0 measures), revisitop.h (the revisited
 * Oxford/Paris protocol), crc32.h; the baselines and post-processing: esvm.h (exemplar
 * SVMs through LIBLINEAR), calibrate.h (Platt's sigmoids, the affine scorer), expand.h (AQE,
 * alpha-QE, DBA).
 *
 * For slem-report: report.h (the HTML results page), thumbs.h (pictures of ids), image.h
 * (vectors as images), pngenc.h (PNG through libpng), plot.h (SVG curves and histogram),
 * html.h (escaping, data: URIs, relative links).
 */
#ifndef SLEM_H
#define SLEM_H

#define SLEM_VERSION "0.1.0"

#include "error.h"

/* The shared object that cblas_dgemm resolves to in this process (for example
 * ".../libopenblasp-r0.3.21.so"), or "unknown". GSL's own BLAS calls resolve to the same
 * one, so this tells whether the fast BLAS is bound or the reference gslcblas. */
const char *slem_blas_library(void);

/* Turns GSL's default error handler (which prints and aborts) off, once per process, so
 * that every GSL call returns its status to slem instead. Called before the library's
 * first GSL call; cannot fail. */
void slem_gsl_init(void);

/* Sets the number of BLAS threads (OpenBLAS); n <= 0 leaves the default. */
void slem_set_threads(int n);

/* The kernel set OpenBLAS chose for this CPU ("Haswell", "SkylakeX", "Prescott", ...), as
 * openblas_get_corename() reports it, or "unknown" with another BLAS. */
const char *slem_blas_corename(void);

/* One matrix product that every BLAS thread takes part in, so that OpenBLAS allocates the
 * buffers of all its threads now: under an address-space limit, before the tool's own
 * allocations can leave no room for them (OpenBLAS retries for ever when it finds none). */
void slem_blas_warm(void);

/* The threads the BLAS runs with now (OpenBLAS's count; 1 for another CBLAS). */
int slem_blas_threads(void);

/* Rows [0, n) cut into chunks of `chunk` rows from row 0, fn(ctx, lo, hi) called once per
 * chunk, the chunks shared among as many threads as the BLAS has, each of them calling the
 * BLAS single-threaded meanwhile. A chunk's numbers then depend on the chunk alone, not on
 * the thread count (OpenBLAS's own threads cut a product where its thread count says, and
 * the micro-kernels at the cuts round differently), and no BLAS thread spins beside the
 * workers. fn must touch only its rows' outputs. Cannot fail: chunks whose thread did not
 * start run on the caller's. */
void slem_par_chunks(size_t n, size_t chunk, void (*fn)(void *ctx, size_t lo, size_t hi),
                     void *ctx);

/* The core slem_blas_better_core() judges: slem_blas_corename(), or the value of the
 * environment variable SLEM_TEST_BLAS_CORE when set (for tests of that choice on a CPU
 * that OpenBLAS recognises). */
const char *slem_blas_detected_core(void);

/* When OpenBLAS runs kernels without AVX2 and FMA (a generic core such as "Prescott",
 * which it falls back to on CPUs it does not recognise) while this CPU has them, the
 * OPENBLAS_CORETYPE value that selects the kernels it can run ("SkylakeX" with AVX-512,
 * else "Haswell"); NULL when the chosen core is already a vector one or the CPU lacks
 * the instructions. OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, so acting on the
 * answer takes a new process image (cmd/cli.c re-executes the tool once). */
const char *slem_blas_better_core(void);

#endif

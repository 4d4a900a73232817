/* libslem: square-loss exemplar machine (SLEM) descriptors and cosine retrieval.
 *
 * Ownership, in one line: only *_new, *_read and *_open hand memory to the caller, and
 * each has a *_free (or *_close, *_abort) that accepts NULL; everything else borrows.
 *
 * Modules: error.h (status codes), io.h (buffered input, atomic output), negstats.h (the
 * pipeline of slem-negstats: inputs to a cache), encstream.h (the pipeline of slem-encode:
 * a reader encoded into a vector file; encoder.h, its encoders, each in its SLEM variant's
 * file var_*.c, one table of variants in variant.h), vecs.h (vector
 * files: a table of formats, each implementing the internal vecfmt.h in fmt_vecs.c,
 * fmt_npy.c, fmt_text.c, fmt_bin.c or fmt_slem.c), prefetch.h (reading a block ahead), ids.h,
 * container.h (the .slem file layer: header, checksums, block table), cache.h (the .slem
 * cache), stats.h (negative statistics), eigen.h (symmetric eigendecompositions),
 * blas.h (the BLAS bound, its threads, chunked parallel loops), slem_linear.h (linear SLEM
 * descriptors), kernel.h
 * (kernels, incomplete Cholesky), kernel_stats.h (kernel SLEM statistics), kproj.h (kernel
 * projection, exact similarity), scorer_kernel.h (the kernel scorer), topk.h (the ordering rule of hits,
 * top-k selection), scorer.h (the scorer interface, inner-product scorer), dot.h (the
 * fixed-order dot products of exact scores and projections, several side by side in
 * vector registers with the same bits), shard.h (the I/N cut of rows), db.h (a database of several files, a shard of it),
 * match.h (top-k search), rankings.h (the ranking formats: names, writer, reader with an
 * iterator over queries), merge.h (shard rankings merged into the ranking of the whole
 * database), fmt.h (%.9g), strmap.h (interned ids), lines.h (line files: the loop of qrels,
 * junk and rankings), truth.h (ground truth: qrels, labels, junk), eval.h (mAP and friends,
 * and their reports), treceval.h (trec_eval 10.0 measures), revisitop.h (the revisited
 * Oxford/Paris protocol), crc32.h; the baselines and post-processing: esvm.h (exemplar
 * SVMs through LIBLINEAR; esvm_rand.h, outside the library), calibration.h (Platt's
 * sigmoids), scorer_affine.h (the affine scorer of exemplar classifiers), expand.h (AQE,
 * alpha-QE, DBA).
 *
 * For slem-report: report.h (the HTML results page), thumbs.h (pictures of ids), image.h
 * (vectors as images), pngenc.h (PNG through libpng), plot.h (SVG curves and histogram),
 * html.h (escaping, data: URIs, relative links).
 */
#ifndef SLEM_LIBSLEM_H
#define SLEM_LIBSLEM_H

#define SLEM_VERSION "0.1.0"

#include "error.h"

#endif

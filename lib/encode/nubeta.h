/* The [nu; beta] descriptors and adaptive theta_n of the authors' new_full_encoder.m (its
 * linear branch), a recursive SLEM whose stages grow by one value each.
 *
 * Stage s (s = 1..K) takes vectors x of dimension p = d + s - 1 and the negatives encoded by
 * the stages before it (as below), mu_s their mean, A_s = Sigma_s + lambda_s I (Sigma_s
 * divided by n), and writes for a weight t and a numerator c
 *   delta = x - mu_s,  C = c / (t delta.A_s^-1 delta + t + 1),  beta = C A_s^-1 delta,
 *   nu = (t - 1)/(t + 1) - beta.(t x + mu_s) / (t + 1),
 * the descriptor [nu; beta] normalised (p + 1 values, bias first). A positive is encoded
 * with t = theta, c = 2 at every stage (the exemplar classifier of slem_linear.h); the negatives
 * of stage s + 1 are those of stage s encoded with t = theta_n(s), c = 1, as the MATLAB
 * does, where
 *   theta_n(s) = theta + ((1 + m)^2 / (1 - m)^2) / 2,
 * m the mean, over the first 100 positives (or all, when fewer), of the score of each
 * one's stage-s descriptor on its own exemplar [1; x], x its input to stage s. The MATLAB
 * takes [1; x] of the original positive at every stage, which has the dimension of stage
 * 1's input only (its depth 2); for stage 2 onward slem takes the stage's input. Lambda is
 * one absolute value for every stage (the MATLAB's) or lambda_rel times each stage's own
 * trace(Sigma_s) / (d + s - 1). The cache (kind "recursive-nubeta", cache.h) keeps every
 * stage's mu_s and A_s^-1, theta and theta_n.
 */
#ifndef SLEM_NUBETA_H
#define SLEM_NUBETA_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "phases.h"
#include "vecs.h"

/* Positives whose scores give m (new_full_encoder.m's Wposi(:, 1:100)). */
#define SLEM_NUBETA_POSITIVES 100

typedef struct SlemNubeta SlemNubeta;

/* A new encoder over a recursive-nubeta cache (borrowed; it must outlive the encoder) for
 * blocks of at most max_rows vectors. Errors: SLEM_EINVAL (another cache), SLEM_ENOMEM. */
int slem_nubeta_new(SlemNubeta **self, const SlemCache *cache, size_t max_rows,
                    SlemError *err);
void slem_nubeta_free(SlemNubeta *self);

/* Values per output row: d + K. Cannot fail. */
size_t slem_nubeta_out_dim(const SlemNubeta *self);

/* Encodes b <= max_rows positives x(b, d) through every stage into y(b, d + K), float32,
 * unit length (or zero, counted in slem_nubeta_zeros()), in double and in fixed chunks of
 * 256 rows (the result depends neither on the thread count nor on the block when it is a
 * multiple of 256). Cannot fail. */
void slem_nubeta_run(SlemNubeta *self, float *y, const double *x, size_t b);
uint64_t slem_nubeta_zeros(const SlemNubeta *self);

/* Counts in slem_nubeta_zeros() only the rows [lo, hi) of the blocks encoded from now on
 * (a shard's rows of its first and last blocks, encoder.h); every row until called. */
void slem_nubeta_count_rows(SlemNubeta *self, size_t lo, size_t hi);

/* Computes a recursive-nubeta cache of depth >= 2 stages from the negative files
 * inputs[0..ninputs) (read once per stage; not stdin; those that name arrays of arrays, which
 * may be NULL, from memory: vecs.h) and the first SLEM_NUBETA_POSITIVES
 * rows of the vector file positives (read once per stage; the negatives in fmt, the
 * positives in pos_fmt, SLEM_FMT_AUTO: recognised), with theta > 0 and lambda >= 0
 * absolute for every stage, or lambda < 0 and lambda_rel >= 0 relative to each stage's
 * trace; writes it to path. Errors: SLEM_EINVAL (bad arguments, stdin, no positives),
 * SLEM_EFORMAT (dimensions that differ, read errors naming the file and record),
 * SLEM_ENUMERIC (a stage's A singular, naming the stage; m = 1, where theta_n is infinite),
 * those of the cache writer, SLEM_ENOMEM. ph (may be NULL) gets the seconds spent reading,
 * computing, merging, factoring and writing, as slem_recursive_write_cache(). */
int slem_nubeta_write_cache(const char *path, const char *const *inputs, size_t ninputs,
                            const char *positives, SlemFormat fmt,
                            const SlemVecArrays *arrays, SlemFormat pos_fmt, size_t block, int skip,
                            size_t depth, double theta, double lambda, double lambda_rel,
                            const SlemProvenance *prov, SlemPhases *ph, SlemError *err);

#endif

/* SLEM descriptors of positives against a linear cache.
 *
 * For a positive x with delta = x - mu and y = A^-1 delta:
 *   descriptor:  y / |y|                                       (d values)
 *   classifier:  omega = 2 theta / (theta delta.y + theta + 1) y,
 *                nu = (theta - 1)/(theta + 1) - (theta x + mu).omega / (theta + 1)
 *                                                               (d + 1 values, nu last)
 * A block of positives costs one GEMM with A^-1.
 */
#ifndef SLEM_SLEM_LINEAR_H
#define SLEM_SLEM_LINEAR_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "error.h"

typedef enum SlemEncodeMode { SLEM_ENCODE_UNIT = 0, SLEM_ENCODE_CLASSIFIER = 1 } SlemEncodeMode;

typedef struct SlemEncoder SlemEncoder;

/* A new encoder over cache (borrowed; it must outlive the encoder) for blocks of at most
 * max_rows positives. theta > 0 is used by SLEM_ENCODE_CLASSIFIER only. Errors:
 * SLEM_EINVAL (a partial cache, theta not positive), SLEM_ENOMEM. */
int slem_encoder_new(SlemEncoder **self, const SlemCache *cache, SlemEncodeMode mode,
                     double theta, size_t max_rows, SlemError *err);
void slem_encoder_free(SlemEncoder *self);

/* Values per output row: d, or d + 1 for the classifier. */
size_t slem_encoder_out_dim(const SlemEncoder *self);

/* Encodes b <= max_rows positives x(b, d) into y(b, out_dim), as float32. x is left
 * unchanged. A positive equal to mu has no direction: its descriptor is all zeros and
 * it is counted in slem_encoder_zeros(). A classifier whose weights are below float32's
 * range but carry its score at x (|w.x| > 1e-6: an x of magnitude ~1e160) has its weights
 * left NaN, for the caller to refuse (encstream.c names the record): zeros would score -1
 * everywhere. Cannot fail. */
void slem_encoder_run(SlemEncoder *self, float *y, const double *x, size_t b);

typedef enum SlemPrecision {
  SLEM_PRECISION_AUTO = 0,  /* single when the cache's A is well conditioned, else double */
  SLEM_PRECISION_SINGLE,
  SLEM_PRECISION_DOUBLE
} SlemPrecision;

/* The largest |x_j - mu_j| of a float32 row of finite values, each widened exactly: the
 * scale of the float32 path's deltas, by the row loops this process chose (AVX2 or plain;
 * SLEM_TEST_LANES=sse forces the plain ones). The same value as a scalar loop's. */
double slem_encode_row_max(const float *x, const double *mu, size_t d);

/* Parses "auto", "single", "double". Returns SLEM_EINVAL on another name. */
int slem_encode_precision_parse(SlemPrecision *p, const char *name);

/* Largest condition number of A for which SLEM_PRECISION_AUTO computes the unit
 * descriptor in float32: the GEMM's relative error is then about 6e-8 * cond(A) <= 6e-4,
 * so 1 - cos stays near 2e-7 or below. */
#define SLEM_SINGLE_MAX_COND 1e4

/* Chooses the arithmetic of slem_encoder_run() for unit descriptors: x - mu is formed in
 * double either way, then either A^-1 (x - mu) is one dgemm, or both go to float32 for
 * one sgemm (twice as fast). The classifier is always computed in double. Returns the
 * precision chosen (SINGLE or DOUBLE). Errors: SLEM_ENOMEM (a float copy of A^-1). */
int slem_encoder_set_precision(SlemEncoder *self, SlemPrecision p, SlemPrecision *chosen,
                               SlemError *err);

/* Whether slem_encoder_run_f32() applies: unit descriptors computed in float32 (the
 * precision chosen is single). Cannot fail. */
int slem_encoder_takes_f32(const SlemEncoder *self);

/* slem_encoder_run() on rows given as float32 (rows that a double would hold exactly): the
 * same descriptors, bit for bit, without widening the block. x is overwritten (its rows'
 * deltas). Only when slem_encoder_takes_f32(). Cannot fail. */
void slem_encoder_run_f32(SlemEncoder *self, float *y, float *x, size_t b);

/* The same in float64, for callers that keep full precision (tests, the classifier): a
 * delta whose delta.A^-1 delta overflows double (|x - mu| ~ 1e154 and beyond) gives the
 * classifier computed in delta / t (t a power of two), finite and exact. */
void slem_encoder_run_f64(SlemEncoder *self, double *y, const double *x, size_t b);

uint64_t slem_encoder_zeros(const SlemEncoder *self);

/* Counts in slem_encoder_zeros() only the rows [lo, hi) of the blocks encoded from now on
 * (a shard's rows of its first and last blocks, encoder.h); every row until called. */
void slem_encoder_count_rows(SlemEncoder *self, size_t lo, size_t hi);

#endif

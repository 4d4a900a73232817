/* SLEM descriptors of positives against a linear cache.
 *
 * For a positive x with delta = x - mu and y = A^-1 delta:
 *   descriptor:  y / |y|                                       (d values)
 *   classifier:  omega = 2 theta / (theta delta.y + theta + 1) y,
 *                nu = (theta - 1)/(theta + 1) - (theta x + mu).omega / (theta + 1)
 *                                                               (d + 1 values, nu last)
 * A block of positives costs one GEMM with A^-1.
 */
#ifndef SLEM_ENCODE_H
#define SLEM_ENCODE_H

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
 * it is counted in slem_encoder_zeros(). Cannot fail. */
void slem_encoder_run(SlemEncoder *self, float *y, const double *x, size_t b);

/* The same in float64, for callers that keep full precision (tests, the classifier). */
void slem_encoder_run_f64(SlemEncoder *self, double *y, const double *x, size_t b);

uint64_t slem_encoder_zeros(const SlemEncoder *self);

#endif

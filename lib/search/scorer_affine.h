/* The affine scorer, a variant of the scorer family (scorer.h) for exemplar classifiers,
 * optionally calibrated (calibration.h).
 */
#ifndef SLEM_SCORER_AFFINE_H
#define SLEM_SCORER_AFFINE_H

#include <stddef.h>

#include "calibration.h"
#include "error.h"
#include "scorer.h"

/* The affine scorer (scorer.h): queries are classifiers of d + 1 values (w, then b),
 * database rows vectors of d values, and the score of row x is w.x + b (one sgemm a tile
 * in float32, b added in double; exact score: the fixed-order double sum of slem_dot_f32
 * plus b); with cal (borrowed, may be NULL; calibration.h), the i-th query's score goes through the i-th
 * sigmoid, a probability. Queries are counted from the first block
 * on: a query beyond the calibration's count is an error (SLEM_EFORMAT) when its block is
 * read. Errors of _new: SLEM_ENOMEM. */
int slem_scorer_affine_new(SlemScorer **self, size_t d, const SlemCalibration *cal,
                           size_t max_q, size_t max_d, SlemError *err);

#endif

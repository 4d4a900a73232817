/* Calibrated exemplar scores: Platt's sigmoid per exemplar classifier.
 *
 * An exemplar classifier is d + 1 values, w then b (slem-encode --classifier writes omega
 * and nu, slem-esvm --classifier w and b); it scores a vector x as s = w.x + b. Scores of
 * different exemplars are not comparable; a sigmoid fitted per exemplar on held-out data,
 *
 *   P(positive | s) = 1 / (1 + exp(-a (s - b))),
 *
 * maps them to probabilities that are (Malisiewicz et al., esvm_learn_sigmoid). The fit is
 * Platt's: maximum likelihood with the smoothed targets (N+ + 1)/(N+ + 2) for positives and
 * 1/(N- + 2) for negatives, by Newton's method with backtracking as in Lin, Lin and Weng's
 * note, in their parametrisation 1 / (1 + exp(A s + B)): a = -A, b = -B / A.
 *
 * Calibration file: text, one line "a b" per exemplar in the classifiers' order, %.17g in
 * the C locale.
 */
#ifndef SLEM_CALIBRATION_H
#define SLEM_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "progress.h"
#include "vecs.h"

typedef struct SlemSigmoid {
  double a, b;
} SlemSigmoid;

/* Fits the sigmoid to the scores pos(npos) of positives and neg(nneg) of negatives.
 * *iters (may be NULL) receives the Newton steps taken. Errors: SLEM_EINVAL (npos or nneg
 * is 0, a score not finite), SLEM_ENUMERIC (the scores are all equal, or the fit gives
 * A = 0, which no (a, b) expresses, or Newton's method does not converge). The message
 * does not name the exemplar: the caller adds it. */
int slem_calibration_platt_fit(SlemSigmoid *out, const double *pos, size_t npos,
                               const double *neg, size_t nneg, int *iters, SlemError *err);

/* 1 / (1 + exp(-a (s - b))), computed without overflow. */
double slem_calibration_sigmoid(const SlemSigmoid *sg, double s);

/* What slem_calibration_fit() reads. Labels are strings without white space, one per
 * line (ids.h). */
typedef struct SlemCalibrateInput {
  const char *classifiers;      /* m rows of d + 1 values (w, b) */
  const char *exemplar_labels;  /* m labels, one per classifier */
  const char *positives;        /* validation vectors (d values) */
  const char *positive_labels;  /* one label per validation vector */
  const char *negatives;        /* NULL, or held-out vectors: negatives of every exemplar */
  SlemFormat format;            /* of the three vector files (SLEM_FMT_AUTO: each its own) */
  SlemFormat classifiers_format, positives_format, negatives_format; /* each file's, instead
                                   * of format's (SLEM_FMT_AUTO: format's) */
  SlemProgressFn progress;      /* may be NULL: called with the exemplars fitted so far */
  void *progress_ctx;
} SlemCalibrateInput;

typedef struct SlemCalibration SlemCalibration;

/* The rules between slem-calibrate's options, before anything is read: the classifiers,
 * the exemplars' labels, the validation vectors and their labels given; at most one of
 * the five files from stdin. Errors: SLEM_EINVAL, with the tool's message. */
int slem_calibration_check(const SlemCalibrateInput *in, SlemError *err);

/* slem_calibration_check(); then scores every validation vector and held-out negative with
 * every classifier and fits one
 * sigmoid per exemplar: validation vector j is a positive of exemplar i when their labels
 * are equal and a negative otherwise; every held-out vector is a negative of every
 * exemplar. Memory: O(m (N_val + N_neg)) scores. Errors: those of slem_calibration_check(),
 * SLEM_EIO, SLEM_EFORMAT (a read
 * error naming file and record; label counts that differ from the vector counts;
 * dimensions that do not fit, named: a classifier file of d + 1 values against vectors of
 * d), SLEM_EINVAL (an exemplar with no positive or no negative, named by row and label),
 * SLEM_ENUMERIC (a fit that fails, naming the exemplar), SLEM_ENOMEM. */
int slem_calibration_fit(SlemCalibration **self, const SlemCalibrateInput *in,
                         SlemError *err);

/* Reads a calibration file (path, "-": stdin). Errors: SLEM_EIO, SLEM_EFORMAT naming the
 * line (not two finite numbers, an empty file). */
int slem_calibration_read(SlemCalibration **self, const char *path, SlemError *err);
void slem_calibration_free(SlemCalibration *self);

size_t slem_calibration_count(const SlemCalibration *self);
/* The i-th sigmoid; i must be below slem_calibration_count(). */
const SlemSigmoid *slem_calibration_get(const SlemCalibration *self, size_t i);
/* For a fitted calibration: the exemplar's positives and negatives (0 after a read). */
void slem_calibration_counts(const SlemCalibration *self, size_t i, size_t *npos,
                             size_t *nneg);

/* Writes the file atomically (path, "-": stdout). Errors: SLEM_EIO. */
int slem_calibration_write(const SlemCalibration *self, const char *path, SlemError *err);

#endif

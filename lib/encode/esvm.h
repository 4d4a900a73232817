/* Exemplar SVMs (Malisiewicz et al.; Zepeda and Perez) through LIBLINEAR.
 *
 * For each positive x0, one linear SVM separates x0 (label +1) from every negative
 * (label -1):
 *
 *   min_w  (1/2) |w|^2 + C W l(+1, w.x0) + C sum_i l(-1, w.x_i)
 *
 * with l(y, t) = max(0, 1 - y t) (hinge, LIBLINEAR's L2R_L1LOSS_SVC_DUAL) or its square
 * (L2R_L2LOSS_SVC_DUAL), W the positive's weight, and, when the bias B > 0, every vector
 * extended by a constant feature B whose weight w_b is regularised like the others, so
 * that b = B w_b (LIBLINEAR's bias, scikit-learn's intercept_scaling). LIBLINEAR's dual
 * coordinate descent solves it; nothing here is a solver of our own.
 *
 * The negatives are converted once to LIBLINEAR's sparse rows (exact zeros left out,
 * which changes no dot product) and shared read-only by every problem; positives are
 * trained in parallel on worker threads, each writing its own output row, so that the
 * output does not depend on the number of threads.
 *
 * Determinism: LIBLINEAR shuffles its coordinates with rand(), one generator for the
 * whole process, which threads would draw from in an order that varies from run to run.
 * A program that links esvm_rand.o (not in libslem.a; see esvm_rand.h) gives rand() one
 * generator per thread, restarted from the same seed before each problem: every exemplar
 * sees the same sequence whatever its row and whatever the thread count. When LIBLINEAR's
 * rand() is not bound to it (slem_esvm_new() checks), problems are trained one at a time
 * under srand(seed) instead: slower, equally deterministic, other descriptors.
 */
#ifndef SLEM_ESVM_H
#define SLEM_ESVM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "progress.h"
#include "vecs.h"

typedef enum SlemEsvmLoss {
  SLEM_ESVM_HINGE = 0,      /* L2R_L1LOSS_SVC_DUAL, LinearSVC(loss='hinge') */
  SLEM_ESVM_SQUARED_HINGE   /* L2R_L2LOSS_SVC_DUAL, LinearSVC(loss='squared_hinge') */
} SlemEsvmLoss;

typedef struct SlemEsvmOpts {
  double C;           /* > 0 (default 1) */
  double pos_weight;  /* > 0: the positive's C is C * pos_weight (default 1) */
  SlemEsvmLoss loss;  /* default SLEM_ESVM_HINGE */
  double bias;        /* the constant feature B >= 0 (default 1); 0: no bias term */
  double eps;         /* LIBLINEAR's stopping tolerance on the projected gradient
                         (default 1e-4, LinearSVC's tol) */
  int classifier;     /* 1: rows are w and b (d + 1 values); 0: w / |w| (d values) */
  int threads;        /* worker threads; <= 0: the online cores */
} SlemEsvmOpts;

/* The defaults above, those of scikit-learn's LinearSVC(loss='hinge'). */
void slem_esvm_opts_init(SlemEsvmOpts *opts);

typedef struct SlemEsvm SlemEsvm;

/* Reads every negative of r (borrowed, positioned at its start) and prepares the shared
 * problem. opts is copied. Errors: SLEM_EINVAL (C, pos_weight or eps not positive, bias
 * negative; LIBLINEAR's check_parameter() refusing the parameters), SLEM_EFORMAT (no
 * negative, a read error naming file and record; a dimension over INT_MAX - 2),
 * SLEM_ENOMEM. */
int slem_esvm_new(SlemEsvm **self, SlemVecReader *r, const SlemEsvmOpts *opts,
                  SlemError *err);
void slem_esvm_free(SlemEsvm *self);

size_t slem_esvm_dim(const SlemEsvm *self);
size_t slem_esvm_negatives(const SlemEsvm *self);
/* Values per output row: d, or d + 1 with opts.classifier. */
size_t slem_esvm_out_dim(const SlemEsvm *self);
/* Worker threads that slem_esvm_run() uses. */
int slem_esvm_threads(const SlemEsvm *self);

/* Trains one SVM per row of x(m, d) and writes row i of y(m, out_dim) from positive i,
 * as float32. A positive whose w is zero (it cannot be told from the negatives) gets a
 * zero row and is counted by slem_esvm_zeros().
 *
 * Debian's LIBLINEAR (2.3) stops its dual solvers after 1000 passes, which ill-conditioned
 * data (large common offsets, unnormalised features) can reach before a tight tolerance.
 * A solution stopped there can be far from the optimum, so such a problem is solved again
 * at ten times the tolerance, up to 0.1 (LIBLINEAR's default), and the first solution
 * that met its tolerance is kept: slem_esvm_loosened() counts these exemplars,
 * slem_esvm_unconverged() those that met not even 0.1. Errors: SLEM_ENOMEM (LIBLINEAR
 * returned no model, a worker could not allocate). */
int slem_esvm_run(SlemEsvm *self, float *y, const double *x, size_t m, SlemError *err);

/* The same with double output y(m, out_dim), for tests and callers that keep full
 * precision. */
int slem_esvm_run_f64(SlemEsvm *self, double *y, const double *x, size_t m,
                      SlemError *err);

uint64_t slem_esvm_zeros(const SlemEsvm *self);
uint64_t slem_esvm_loosened(const SlemEsvm *self);
uint64_t slem_esvm_unconverged(const SlemEsvm *self);
/* The first such exemplar, as a 0-based index among all the vectors given to
 * slem_esvm_run() since _new (whatever the threads); UINT64_MAX when there is none. */
uint64_t slem_esvm_first_zero(const SlemEsvm *self);
uint64_t slem_esvm_first_loosened(const SlemEsvm *self);

/* Encodes every vector of in (borrowed) in blocks of block rows and appends the rows to
 * out (borrowed; the caller closes or aborts it); progress (may be NULL) is called after
 * each block with the vectors done. Errors: SLEM_EFORMAT (in's dimension
 * differs from the negatives', both named; a read error naming file and record), those
 * of slem_esvm_run() and of the writer. */
int slem_esvm_encode_stream(SlemEsvm *self, SlemVecReader *in, SlemVecWriter *out,
                            size_t block, SlemProgressFn progress, void *ctx,
                            SlemError *err);

/* The LIBLINEAR this process runs, from its liblinear_version, e.g. "LIBLINEAR 2.30
 * (liblinear_version 230; dual coordinate descent)". Static storage; cannot fail. */
const char *slem_esvm_liblinear(void);

/* 1 when LIBLINEAR's rand() calls bind to the per-thread generator of esvm_rand.h (so
 * that problems run in parallel), 0 when they are serialised. Cannot fail. */
int slem_esvm_parallel_rand(void);

#endif

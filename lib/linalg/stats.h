/* Negative statistics: mean and centred scatter of a stream of vectors, computed so that
 * the result is the same bit for bit however the rows are cut into shards, and the inverse
 * of A = Sigma + lambda I that SLEM needs.
 *
 * The rows are cut into leaves of leaf_rows consecutive rows, numbered from the first row
 * of all the negatives (a fixed grid, whatever the shard or the read block). A leaf's
 * statistics are its mean (a sum in row order) and its scatter about that mean (one dsyrk
 * on the centred rows, in double). Leaves are combined along a fixed binary tree: node
 * (level j, index k) covers leaves k 2^j .. (k + 1) 2^j - 1 and is made from its two
 * children by Chan, Golub and LeVeque's pairwise update, always left then right. The
 * result is the left fold of the complete nodes that remain (at most one per level).
 *
 * A shard of whole leaves keeps the nodes it could complete (a partial cache stores them);
 * pushing every shard's nodes in order rebuilds the very same tree, so the merged
 * statistics equal those of one pass over all the rows, byte for byte. A large common
 * offset costs no precision: every leaf is centred on its own mean.
 */
#ifndef SLEM_STATS_H
#define SLEM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemStats SlemStats;

/* A new, empty accumulator for dimension d whose first row starts leaf first_leaf of a
 * grid of leaf_rows rows per leaf (0: slem_stats_add() is not used, only pushed nodes).
 * Errors: SLEM_ENOMEM. */
int slem_stats_new(SlemStats **self, size_t d, size_t leaf_rows, uint64_t first_leaf,
                   SlemError *err);
void slem_stats_free(SlemStats *self);

size_t slem_stats_dim(const SlemStats *self);
/* Rows summarised so far (added and pushed). */
uint64_t slem_stats_count(const SlemStats *self);
size_t slem_stats_leaf_rows(const SlemStats *self);
/* The leaf the next row or node starts: the end of what self holds. */
uint64_t slem_stats_next_leaf(const SlemStats *self);

/* Adds b vectors x(b, d), the next rows of the grid (x is not changed). Errors:
 * SLEM_ENOMEM. */
int slem_stats_add(SlemStats *self, const double *x, size_t b, SlemError *err);
/* The same from float32 rows: kept as float32 in the leaf and widened to double in place by
 * the threads that compute it; the same statistics as slem_stats_add() of the widened rows,
 * without a double copy of them on the caller's thread. */
int slem_stats_add_f32(SlemStats *self, const float *x, size_t b, SlemError *err);

/* Ends the current leaf even if it holds fewer than leaf_rows rows: the last rows of the
 * negatives, or of a shard that stops there; returns once every leaf is a node. Errors:
 * SLEM_ENOMEM. */
int slem_stats_flush(SlemStats *self, SlemError *err);

/* Gathers leaves full leaves before computing them together on the BLAS threads (the
 * work units are leaves x chunks of rows; slem_blas_par_chunks()), the same bits as one by one.
 * With more than one on 4 or more BLAS threads, a batch is computed from a thread of
 * self's own while the caller gathers the next (an error there is returned by a later add,
 * or by the flush): memory grows by 2 x leaves x leaf_rows x d doubles, and until
 * slem_stats_flush() the caller's other threads must not change the BLAS's thread count.
 * Call before the first row; 0 or a later call is ignored. Default 1. Cannot fail. */
void slem_stats_set_batch(SlemStats *self, size_t leaves);

/* Seconds spent so far copying rows into the leaves (convert), computing leaves (compute)
 * and joining nodes into the tree (merge), on the calling thread's clock. Cannot fail. */
void slem_stats_times(const SlemStats *self, double *convert, double *compute, double *merge);

/* Adds node (level, index) summarising n rows: their mean(d) and scatter(d, d) (the lower
 * triangle is read). It must start where self ends: index 2^level = next leaf. Errors:
 * SLEM_EINVAL when it does not, SLEM_ENOMEM. */
int slem_stats_push(SlemStats *self, unsigned level, uint64_t index, uint64_t n,
                    const double *mean, const double *scatter, SlemError *err);

/* The complete nodes self holds (after slem_stats_flush()), left to right. */
size_t slem_stats_nodes(const SlemStats *self);
/* Node i: its place in the tree, rows and mean(d), owned by self; its scatter(d, d) into
 * scatter unless NULL (the lower triangle: row r, columns 0..r; the rest not written). */
void slem_stats_node(const SlemStats *self, size_t i, unsigned *level, uint64_t *index,
                     uint64_t *n, const double **mean, double *scatter);

/* Flushes and folds the nodes into the result; afterwards only the functions below and
 * the ones above that read are valid. Errors: SLEM_ENOMEM. */
int slem_stats_finish(SlemStats *self, SlemError *err);

/* After slem_stats_finish(): the mean mu(d), and the scatter(d, d), symmetric; both
 * owned by self. */
const double *slem_stats_mean(const SlemStats *self);
const double *slem_stats_scatter(const SlemStats *self);

/* trace(Sigma) with Sigma = scatter / n (biased covariance). */
double slem_stats_trace(const SlemStats *self);

/* Computes ainv(d, d) = (Sigma + lambda I)^-1, symmetric, by Cholesky. Pass lambda >= 0
 * for an absolute value, or lambda < 0 and lambda_rel >= 0 for
 * lambda = lambda_rel * trace(Sigma) / d; *lambda_used receives it. Errors:
 * SLEM_ENUMERIC when A is not positive definite or too ill-conditioned to invert
 * (reciprocal condition number below 1e-12), with a suggested lambda; SLEM_EINVAL when
 * no vector was added. */
int slem_stats_inverse(SlemStats *self, double *ainv, double *lambda_used, double lambda,
                       double lambda_rel, SlemError *err);

/* The reciprocal condition number (1-norm estimate) of A from the last successful
 * slem_stats_inverse(); 0 before. */
double slem_stats_rcond(const SlemStats *self);

#endif

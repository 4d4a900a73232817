/* Negative statistics: mean and centred scatter of a stream of vectors, merged exactly
 * across blocks and shards (Chan, Golub and LeVeque's pairwise update), and the inverse
 * of A = Sigma + lambda I that SLEM needs.
 *
 * Accumulation is in double. Each block is centred on its own mean before its scatter
 * (one dsyrk) is added, and the blocks are combined with the pairwise correction, so a
 * large common offset costs no precision.
 */
#ifndef SLEM_STATS_H
#define SLEM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemStats SlemStats;

/* A new, empty accumulator for dimension d. Errors: SLEM_ENOMEM. */
int slem_stats_new(SlemStats **self, size_t d, SlemError *err);
void slem_stats_free(SlemStats *self);

size_t slem_stats_dim(const SlemStats *self);
uint64_t slem_stats_count(const SlemStats *self);

/* Adds b vectors x(b, d). x is overwritten (centred in place). Cannot fail. */
void slem_stats_add(SlemStats *self, double *x, size_t b);

/* Adds the summary of n other vectors: their mean mu(d) and centred scatter
 * scatter(d, d) = sum (x - mu)(x - mu)^T. Cannot fail. */
void slem_stats_merge(SlemStats *self, uint64_t n, const double *mu, const double *scatter);

/* The mean mu(d), and the scatter(d, d) made symmetric; both owned by self. */
const double *slem_stats_mean(const SlemStats *self);
const double *slem_stats_scatter(SlemStats *self);

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

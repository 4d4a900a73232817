/* A paired randomisation test (Fisher's; Smucker, Allan and Carterette, CIKM 2007), the
 * significance test IR papers report between two runs' per-query AP.
 *
 * The statistic is the sum (equivalently the mean) of the differences d_i = b_i - a_i
 * over the n queries. Under the null hypothesis each query's two values are exchangeable,
 * so every sign pattern of the d_i is equally likely. Two-sided p-value: the share of
 * sign patterns whose |sum| reaches the observed |sum| (within a relative 100 epsilon, as
 * scipy.stats.permutation_test compares).
 *   - exact when 2^n <= permutations: every pattern counted, p = count / 2^n;
 *   - otherwise permutations random patterns from a fixed seed (splitmix64, one bit per
 *     query, 64 queries per draw), p = (count + 1) / (permutations + 1), the observed
 *     pattern counted once, as scipy's randomised test does.
 * The same inputs, permutations and seed give the same p-value bit for bit on every
 * machine: no BLAS, no threads, sums in query order.
 */
#ifndef SLEM_PERMTEST_H
#define SLEM_PERMTEST_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The p-value of the paired test of a(n) against b(n) into *p. n = 0 or all differences
 * zero give 1. Errors: SLEM_EINVAL when permutations is 0 or a value is not finite. */
int slem_permtest_paired(double *p, const double *a, const double *b, size_t n,
                         size_t permutations, uint64_t seed, SlemError *err);

#endif

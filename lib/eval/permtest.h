/* A paired randomisation test (Fisher's; Smucker, Allan and Carterette, CIKM 2007), the
 * significance test IR papers report between two runs' per-query AP.
 *
 * The statistic is the sum (equivalently the mean) of the differences d_i = b_i - a_i
 * over the n queries. Under the null hypothesis each query's two values are exchangeable,
 * so every sign pattern of the d_i is equally likely. The p-value is two-sided as
 * scipy.stats.permutation_test(permutation_type="samples", alternative="two-sided")
 * computes it: twice the smaller of the shares of sign patterns whose sum is at most and
 * at least the observed sum (within scipy's max(1e-14, 1e-14 |mean|) on the mean), at most 1.
 *   - exact when 2^n <= permutations: every pattern counted, shares count / 2^n;
 *   - otherwise permutations random patterns from a fixed seed (splitmix64, one bit per
 *     query, 64 queries per draw), shares (count + 1) / (permutations + 1), the observed
 *     pattern counted once, as scipy's randomised test does. Its floor is therefore
 *     2 / (permutations + 1), not 1 / (permutations + 1).
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

#include "permtest.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* scipy's comparison on the mean, max(1e-14, 1e-14 |mean|), as a tolerance on the sum */
static double tolerance(double obs, size_t n) {
  double t = 1e-14 * fabs(obs), floor_t = 1e-14 * (double)n;
  return t > floor_t ? t : floor_t;
}

int slem_permtest_paired(double *p, const double *a, const double *b, size_t n,
                         size_t permutations, uint64_t seed, SlemError *err) {
  double obs = 0, tol, total, adjust, lo, hi;
  size_t less = 0, greater = 0;
  *p = 1;
  if (permutations == 0) return slem_error(err, SLEM_EINVAL, "permutations: at least 1");
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(a[i]) || !isfinite(b[i]))
      return slem_error(err, SLEM_EINVAL, "value %zu of the paired test is not finite", i + 1);
    obs += b[i] - a[i];
  }
  if (n == 0) return SLEM_OK;
  tol = tolerance(obs, n);
  if (n < 63 && ((uint64_t)1 << n) <= permutations) {
    uint64_t all = (uint64_t)1 << n;
    for (uint64_t m = 0; m < all; m++) {
      double s = 0;
      for (size_t i = 0; i < n; i++) s += (m >> i & 1) ? a[i] - b[i] : b[i] - a[i];
      less += s <= obs + tol;
      greater += s >= obs - tol;
    }
    total = (double)all;
    adjust = 0;
  } else {
    for (size_t k = 0; k < permutations; k++) {
      uint64_t state = seed ^ (0xd1b54a32d192ed03ULL * (uint64_t)(k + 1)), bits = 0;
      double s = 0;
      for (size_t i = 0; i < n; i++) {
        if (i % 64 == 0) bits = splitmix64(&state);
        s += (bits >> (i % 64) & 1) ? a[i] - b[i] : b[i] - a[i];
      }
      less += s <= obs + tol;
      greater += s >= obs - tol;
    }
    total = (double)permutations;
    adjust = 1;
  }
  lo = ((double)less + adjust) / (total + adjust);
  hi = ((double)greater + adjust) / (total + adjust);
  *p = 2 * (lo < hi ? lo : hi);
  if (*p > 1) *p = 1;
  return SLEM_OK;
}

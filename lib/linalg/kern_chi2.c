/* The additive chi-squared kernel, chi2: sum_i 2 x_i y_i / (x_i + y_i) for histograms (x,
 * y >= 0), a 0/0 term counting 0; no Gram block, every value its own sum (a member of the
 * kernels' table, kernelfam.h). */
#include "kernelfam.h"

static double pair(const SlemKernel *self, const double *x, const double *y, size_t d) {
  double s = 0;
  (void)self;
  for (size_t j = 0; j < d; j++)
    if (x[j] + y[j] > 0) s += 2 * x[j] * y[j] / (x[j] + y[j]);
  return s;
}

static void lanes(const SlemKernel *self, const double *x, const double *yt, size_t d,
                  double *out) {
  double s[SLEM_KLANES] = {0};
  (void)self;
  /* the pairs with x + y = 0 add nothing, as in pair() (s stays >= +0) */
  for (size_t l = 0; l < d; l++) {
    const double *y = yt + l * SLEM_KLANES;
    for (size_t g = 0; g < SLEM_KLANES; g++)
      if (x[l] + y[g] > 0) s[g] += 2 * x[l] * y[g] / (x[l] + y[g]);
  }
  for (size_t g = 0; g < SLEM_KLANES; g++) out[g] = s[g];
}

const SlemKernelOps slem_kern_chi2 = {.name = "chi2", .histograms = 1, .pair = pair,
                                      .lanes = lanes};

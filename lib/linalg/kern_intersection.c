/* The histogram intersection kernel, intersection[:gamma=G]: sum_i min(x_i^G, y_i^G) for
 * histograms (x, y >= 0), G > 0, default 1 (kernel_matrix.m's 'inter' of the authors'
 * code); the powers are taken once by prepare; no Gram block, every value its own sum (a
 * member of the kernels' table, kernelfam.h). */
#include "kernelfam.h"

#include <math.h>
#include <stdio.h>

static double power(const SlemKernel *self, double v) {
  return self->gamma != 1 ? pow(v, self->gamma) : v;
}

/* gamma 1, the plain intersection, keeps its spec of before */
static void format(const SlemKernel *self, char *buf, size_t n) {
  if (self->gamma != 1)
    snprintf(buf, n, "intersection:gamma=%.17g", self->gamma);
  else
    snprintf(buf, n, "intersection");
}

static double pair(const SlemKernel *self, const double *x, const double *y, size_t d) {
  double s = 0;
  (void)self;
  for (size_t j = 0; j < d; j++) s += fmin(x[j], y[j]);
  return s;
}

static void lanes(const SlemKernel *self, const double *x, const double *yt, size_t d,
                  double *out) {
  double s[SLEM_KLANES] = {0};
  (void)self;
  for (size_t l = 0; l < d; l++) {
    const double *y = yt + l * SLEM_KLANES;
    for (size_t g = 0; g < SLEM_KLANES; g++) s[g] += fmin(x[l], y[g]);
  }
  for (size_t g = 0; g < SLEM_KLANES; g++) out[g] = s[g];
}

const SlemKernelOps slem_kern_intersection = {
    .name = "intersection", .params = SLEM_KERN_GAMMA, .histograms = 1, .prepare = power,
    .format = format, .pair = pair, .lanes = lanes};

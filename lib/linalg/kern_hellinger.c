/* The Hellinger kernel, sum_i sqrt(x_i y_i) for histograms (x, y >= 0): the linear kernel
 * of the square roots, taken once by prepare (a member of the kernels' table,
 * kernelfam.h). */
#include "kernelfam.h"

#include <math.h>

static double root(const SlemKernel *self, double v) {
  (void)self;
  return sqrt(v);
}

static double linear(const SlemKernel *self, double xy) {
  (void)self;
  return xy;
}

const SlemKernelOps slem_kern_hellinger = {.name = "hellinger", .histograms = 1,
                                           .prepare = root, .of_dot = linear};

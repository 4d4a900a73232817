/* incomplete_chol.m's 'hellinger' of the authors' code, hellinger-dot: sqrt(|x.y|) for
 * histograms (x, y >= 0); not slem's hellinger, and not positive semidefinite in general (a
 * member of the kernels' table, kernelfam.h). */
#include "kernelfam.h"

#include <math.h>

static double root_dot(const SlemKernel *self, double xy) {
  (void)self;
  return sqrt(fabs(xy));
}

const SlemKernelOps slem_kern_hellinger_dot = {.name = "hellinger-dot", .histograms = 1,
                                               .of_dot = root_dot};

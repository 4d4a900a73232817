/* The Gaussian kernel, rbf:gamma=G or rbf:g=R: exp(-G |x - y|^2), with g G = R / m, m the
 * median squared distance between negatives (default g=1) (a member of the kernels'
 * table, kernelfam.h). */
#include "kernelfam.h"

#include <math.h>

static double rbf(const SlemKernel *self, double sq) { return exp(-self->gamma * sq); }

static double scale(double median) { return median; }

const SlemKernelOps slem_kern_rbf = {.name = "rbf", .params = SLEM_KERN_GAMMA | SLEM_KERN_G,
                                     .scale = scale, .of_sqdist = rbf};

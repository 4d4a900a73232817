/* The Laplacian kernel, kernel_matrix.m's 'exp' of the authors' code, exp:gamma=G or
 * exp:g=R: exp(-G |x - y|), with g G = R / sqrt(m), m the median squared distance between
 * negatives (default g=1) (a member of the kernels' table, kernelfam.h). */
#include "kernelfam.h"

#include <math.h>

static double exp_(const SlemKernel *self, double sq) { return exp(-self->gamma * sqrt(sq)); }

static double scale(double median) { return sqrt(median); }

/* near: from a Gram block, |x - y| of near pairs would carry the square root of the
 * rounding of |x|^2 + |y|^2 - 2 x.y (1e-8 where the sum has 1e-16): those pairs, at most
 * 1e-4 (|x|^2 + |y|^2) apart, are summed directly */
const SlemKernelOps slem_kern_exp = {.name = "exp", .params = SLEM_KERN_GAMMA | SLEM_KERN_G,
                                     .scale = scale, .of_sqdist = exp_, .near = 1e-4};

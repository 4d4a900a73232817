/* The kernel_matrix.m 'quad' of the authors' code, quad:gamma=G: x.y + G (x.y)^2, positive
 * semidefinite for G >= 0 (default 1) (a member of the kernels' table, kernelfam.h). */
#include "kernelfam.h"

static double quad(const SlemKernel *self, double xy) { return xy + self->gamma * xy * xy; }

const SlemKernelOps slem_kern_quad = {.name = "quad", .params = SLEM_KERN_GAMMA0, .of_dot = quad};

/* The linear kernel, x.y: linear SLEM through the kernel code (a member of the kernels'
 * table, kernelfam.h). */
#include "kernelfam.h"

static double linear(const SlemKernel *self, double xy) {
  (void)self;
  return xy;
}

const SlemKernelOps slem_kern_linear = {.name = "linear", .of_dot = linear};

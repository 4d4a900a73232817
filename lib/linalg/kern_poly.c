/* The polynomial kernel, poly:gamma=G,c=C,p=P: (G x.y + C)^P, by default G 1, C 1, P 2 (a
 * member of the kernels' table, kernelfam.h). */
#include "kernelfam.h"

/* x^p by p - 1 products (p a whole number from 1 to 64): the same bits everywhere, where
 * pow() is the C library's */
static double powi(double x, double p) {
  double r = 1;
  for (int k = (int)p; k > 0; k--) r *= x;
  return r;
}

static double poly(const SlemKernel *self, double xy) {
  return powi(self->gamma * xy + self->c, self->p);
}

const SlemKernelOps slem_kern_poly = {
    .name = "poly", .params = SLEM_KERN_GAMMA | SLEM_KERN_C | SLEM_KERN_P, .of_dot = poly};

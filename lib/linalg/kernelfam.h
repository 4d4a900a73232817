/* Kernels as a family: what one kernel is, behind one interface (kernel.h is what the rest
 * of slem calls).
 *
 * Each kernel is one file lib/linalg/kern_NAME.c defining `const SlemKernelOps
 * slem_kern_NAME`, and one line X(NAME) in SLEM_KERNELS (kernel.c). kernel.c parses and
 * prints the specs, checks and transforms the inputs, and computes single values, lanes and
 * blocks by asking the member's ops alone: no code outside a member's file tests which
 * kernel it is.
 *
 * A member gives k one of three ways, which decides how a block is computed:
 *   of_dot(x.y)        a function of the inner product: a block is one GEMM (or the row
 *                      products of rowmul.h), then of_dot on each value;
 *   of_sqdist(|x-y|^2) a function of the squared distance: a block is one GEMM and the
 *                      rows' squared norms, |x|^2 + |y|^2 - 2 x.y clamped at 0, then
 *                      of_sqdist; with near > 0, the pairs at most near (|x|^2 + |y|^2)
 *                      apart take the direct sum instead (where rounding would show);
 *   pair and lanes     neither (an additive kernel): every value of a block is pair().
 * A single value (slem_kernel_eval) sums x.y or |x-y|^2 in the order of the coordinates and
 * applies of_dot or of_sqdist; the lanes do the same sums side by side, so that each lane is
 * the same double as slem_kernel_eval's.
 */
#ifndef SLEM_KERNELFAM_H
#define SLEM_KERNELFAM_H

#include <stddef.h>

#include "kernel.h"

/* The parameters of a spec (SlemKernelOps.params), a bit each; a SlemKernel starts at
 * gamma 1, c 1, p 2, and a member with g at g=1 relative. */
enum {
  SLEM_KERN_GAMMA = 1u << 0,  /* gamma=G, G > 0 */
  SLEM_KERN_GAMMA0 = 1u << 1, /* gamma=G, G >= 0 (in place of SLEM_KERN_GAMMA) */
  SLEM_KERN_G = 1u << 2,      /* g=R, R > 0: gamma = R / scale(median squared distance) */
  SLEM_KERN_C = 1u << 3,      /* c=C, C >= 0 */
  SLEM_KERN_P = 1u << 4       /* p=P, a whole number from 1 to 64 */
};

struct SlemKernelOps {
  const char *name;  /* as a spec names it */
  unsigned params;   /* SLEM_KERN_* */
  int histograms;    /* 1: inputs must be >= 0 (slem_kernel_prepare refuses the others) */
  /* The input transform of one value (hellinger's square root), or NULL. */
  double (*prepare)(const SlemKernel *self, double v);
  /* With SLEM_KERN_G: the median squared distance m turned into the scale of g, gamma =
   * g / scale(m) (m for rbf, sqrt(m) for exp). NULL otherwise. */
  double (*scale)(double median);
  /* The spec with every parameter into buf of n bytes; NULL: the name, then gamma, c and p
   * as the member takes them, each %.17g ("poly:gamma=1,c=1,p=2"). */
  void (*format)(const SlemKernel *self, char *buf, size_t n);
  /* k, one way of three (above): the others NULL. */
  double (*of_dot)(const SlemKernel *self, double xy);
  double (*of_sqdist)(const SlemKernel *self, double sq);
  double near; /* of_sqdist: see above; 0 for none */
  double (*pair)(const SlemKernel *self, const double *x, const double *y, size_t d);
  /* pair() of x against the SLEM_KLANES rows of the group yt, each the same double. */
  void (*lanes)(const SlemKernel *self, const double *x, const double *yt, size_t d,
                double *out);
};

/* The members of the table in order, NULL past the last. Cannot fail. */
const SlemKernelOps *slem_kernel_member(size_t i);

#endif

/* Kernels and the pivoted incomplete Cholesky factorisation of a kernel matrix.
 *
 * Kernels, by their spec (slem-negstats --kernel):
 *   linear                        x.y
 *   poly:gamma=G,c=C,p=P          (G x.y + C)^P            (defaults G 1, C 1, P 2)
 *   rbf:gamma=G | rbf:g=R         exp(-G |x - y|^2); with g, G = R / m where m is the
 *                                 median squared distance between negatives, estimated
 *                                 on a seeded sample (default g=1)
 *   exp:gamma=G | exp:g=R         exp(-G |x - y|) (Laplacian); with g, G = R / sqrt(m)
 *   quad:gamma=G                  x.y + G (x.y)^2                 (default G 1, G >= 0)
 *   chi2                          sum_i 2 x_i y_i / (x_i + y_i)   (additive, x, y >= 0)
 *   intersection[:gamma=G]        sum_i min(x_i^G, y_i^G)         (x, y >= 0; default G 1)
 *                                 (kernel_matrix.m's 'inter' of the authors' code)
 *   hellinger                     sum_i sqrt(x_i y_i)             (x, y >= 0)
 *   hellinger-dot                 sqrt(|x.y|)                     (x, y >= 0)
 *                                 (incomplete_chol.m's 'hellinger' of the authors' code:
 *                                 not slem's hellinger, and not positive semidefinite in
 *                                 general: the factorisation stops where no residual
 *                                 diagonal is positive)
 * Vectors go through slem_kernel_prepare() first: hellinger takes square roots there, so
 * that it becomes the linear kernel, and intersection with G != 1 the powers x_i^G, and the kernels for histograms refuse negative
 * values. Linear, polynomial, quad, RBF, exp, Hellinger and hellinger-dot blocks come from one
 * GEMM plus norms. exp and quad are those of the authors' kernel_matrix.m. Each kernel is
 * one file lib/linalg/kern_NAME.c and one line of the table in kernel.c (kernelfam.h).
 */
#ifndef SLEM_KERNEL_H
#define SLEM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "error.h"

/* What one kernel is (kernelfam.h): each kernel is a member of the table in kernel.c, one
 * file lib/linalg/kern_NAME.c. */
typedef struct SlemKernelOps SlemKernelOps;

/* How the negatives' kernel matrix is factorised (slem-negstats --factor): pivoted
 * incomplete Cholesky to a rank or a tolerance; the kernel PCA of the authors'
 * slem_similarity.m (the top r eigenpairs of the uncentred K, B = U_r D_r^1/2); or a
 * complete pivoted Cholesky, to the numerical rank. */
typedef enum SlemKernelFactor {
  SLEM_FACTOR_ICD = 0,
  SLEM_FACTOR_KPCA,
  SLEM_FACTOR_FULL
} SlemKernelFactor;

/* "icd", "kpca" or "full"; and back (-1 for another name). */
const char *slem_kernel_factor_name(SlemKernelFactor f);
int slem_kernel_factor_parse(const char *name);

typedef struct SlemKernel {
  const SlemKernelOps *ops;  /* the kernel, set by slem_kernel_parse() */
  double gamma, c, p;  /* p: polynomial degree */
  double g_rel;        /* rbf:g=R: gamma is to be set to R / median squared distance */
  int gamma_relative;
} SlemKernel;

/* Parses a spec such as "rbf:gamma=0.5" or "poly:gamma=1,c=0,p=3": self->ops the member
 * of the kernels' table so named, its parameters as the member takes them (kernelfam.h).
 * Errors: SLEM_EINVAL with what is wrong (an unknown name lists the table's). */
int slem_kernel_parse(SlemKernel *self, const char *spec, SlemError *err);

/* The spec with every parameter, for example "rbf:gamma=0.0125"; buf of n bytes. */
void slem_kernel_format(const SlemKernel *self, char *buf, size_t n);

/* The kernel's name, as a spec names it ("hellinger-dot"). Cannot fail. */
const char *slem_kernel_name(const SlemKernel *self);

/* 1 when the kernel needs histograms (chi2, intersection, hellinger, hellinger-dot: values
 * >= 0, refused otherwise by slem_kernel_prepare()), else 0. Cannot fail. */
int slem_kernel_needs_histograms(const SlemKernel *self);

/* Transforms x(n, d) in place for the kernel (square roots for hellinger) and checks the
 * values it needs non-negative. Errors: SLEM_EFORMAT naming the record (first_record + i,
 * counted from 1) and the value, with name as the file. */
int slem_kernel_prepare(const SlemKernel *self, double *x, size_t n, size_t d,
                        const char *name, uint64_t first_record, SlemError *err);

/* k(x, y) of two prepared vectors. */
double slem_kernel_eval(const SlemKernel *self, const double *x, const double *y, size_t d);

/* Rows side by side, for slem_kernel_eval_lanes(): SLEM_KLANES (dot.h) rows of d values
 * stored as d groups of SLEM_KLANES, value l of every row, then value l + 1. */

/* The doubles yt needs for n rows of d values: ceil(n / SLEM_KLANES) groups. */
size_t slem_kernel_lanes_size(size_t n, size_t d);

/* yt gets y(n, d) side by side, the lanes past the last row zero. */
void slem_kernel_lanes(double *yt, const double *y, size_t n, size_t d);

/* out[g] = k(x, row g of the group yt), g < SLEM_KLANES, each the same double as
 * slem_kernel_eval(self, x, row g, d): the same operations in the same order per pair,
 * SLEM_KLANES pairs at once. */
void slem_kernel_eval_lanes(const SlemKernel *self, const double *x, const double *yt, size_t d,
                            double *out);

/* out(na, nb) = k(a_i, b_j) for prepared a(na, d), b(nb, d). Cannot fail. */
void slem_kernel_block(const SlemKernel *self, double *out, const double *a, size_t na,
                       const double *b, size_t nb, size_t d);

/* Kernel rows of points a against a fixed set b, such as the negatives or the pivots of a
 * cache: out(na, nb) = k(a_i, b_j) as slem_kernel_block() gives them, but each row a
 * function of a_i and b alone, never of the rows beside it (the products by rowmul.h, every
 * norm in a fixed order), so that a point's encoding does not depend on its place in a
 * file. bt(d, nb) = b^T and b2(nb) the squared norms of b's rows, written once by
 * slem_kernel_rows_prepare(). Cannot fail. */
void slem_kernel_rows_prepare(double *bt, double *b2, const double *b, size_t nb, size_t d);
void slem_kernel_rows(const SlemKernel *self, double *out, const double *a, size_t na,
                      const double *b, const double *bt, const double *b2, size_t nb,
                      size_t d);

/* Sets gamma = g_rel / median squared distance over the pairs of a sample of at most
 * sample rows of x(n, d) (all of them when n <= sample), drawn with seed. *median gets
 * the median. Errors: SLEM_ENUMERIC when the median is 0 (duplicates), SLEM_ENOMEM. */
int slem_kernel_estimate_gamma(SlemKernel *self, double *median, const double *x, size_t n,
                               size_t d, size_t sample, uint64_t seed, SlemError *err);

/* Pivoted incomplete Cholesky of K = [k(x_i, x_j)] for prepared x(n, d) (Bach and
 * Jordan 2002): greedy pivot on the largest residual diagonal (ties to the lower index),
 * so that K ~ B B^T with B(n, out->rank) stored in out->b(n, rmax), row-major. Stops at
 * rmax columns, when the residual trace falls to tol * trace(K) or below, or when no
 * residual diagonal is positive. out->piv(rmax) gets the pivot rows; out->trace(rmax + 1)
 * the residual trace before each step and after the last (trace[0] = trace(K)). On the pivots B reproduces K
 * exactly, and B[piv, :] is lower triangular. O(n rank d + n rank^2) time, O(n rmax)
 * memory. Errors: SLEM_ENOMEM. */
/* Where slem_kernel_icl() puts the factorisation; the caller owns the arrays. */
typedef struct SlemKernelIcl {
  size_t rank;    /* out: r, the columns of B computed */
  double *b;      /* b(n, rmax), row-major: B in its first r columns */
  size_t *piv;    /* piv(rmax): the pivot rows in order */
  double *trace;  /* trace(rmax + 1): the residual trace before each step and after the last */
} SlemKernelIcl;

int slem_kernel_icl(SlemKernelIcl *out, const SlemKernel *k, const double *x, size_t n,
                    size_t d, size_t rmax, double tol, SlemError *err);

#endif

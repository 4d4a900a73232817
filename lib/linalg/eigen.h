/* Eigendecompositions of symmetric matrices, the one module behind whitening and PCA
 * (whiten.h, the full decomposition of Sigma by GSL) and kernel PCA (kernel_stats.h,
 * the top eigenpairs of K by LAPACK's dsyevr).
 *
 * Both functions return the pairs in the same form: evals largest first, the vectors by
 * rows, each with its entry of largest magnitude (the first of equals) positive, so that
 * PCA coordinates do not depend on the library's sign convention. Both run on one BLAS
 * thread (and restore the count): GSL's tridiagonalisation and LAPACK's call level-2
 * BLAS, which OpenBLAS shares among threads in a way that changes its sums, and the
 * eigenpairs must not depend on -t.
 *
 * Each keeps its engine: switching the full decomposition to dsyevr (or the top one to
 * GSL) would change the last bits of every eigen, pca and kpca cache already written.
 */
#ifndef SLEM_EIGEN_H
#define SLEM_EIGEN_H

#include <stddef.h>

#include "error.h"

/* All d eigenpairs of the symmetric a(d, d) (read only) by GSL's gsl_eigen_symmv:
 * evals(d) largest first, evecs(d, d) with row k the k-th unit eigenvector. what names
 * the matrix in error messages ("Sigma"). Errors: SLEM_ENOMEM, SLEM_ENUMERIC (GSL's
 * failure, or a non-finite eigenvalue). */
int slem_eigen_sym(const double *a, size_t d, double *evals, double *evecs, const char *what,
                   SlemError *err);

/* The top k (1 <= k <= n) eigenpairs of the symmetric a(n, n), lower triangle read, the
 * whole of a destroyed, by LAPACK's dsyevr (from OpenBLAS): evals(k) largest first,
 * evecs(k, n) with row l the l-th unit eigenvector. O(n^2) memory beside a, O(n^3) time.
 * what names the matrix in error messages ("the kernel matrix"). Errors: SLEM_EINVAL (n
 * beyond LAPACK's int indices), SLEM_ENOMEM, SLEM_ENUMERIC (LAPACK's failure, or a
 * non-finite eigenvalue). */
int slem_eigen_sym_top(double *a, size_t n, size_t k, double *evals, double *evecs,
                       const char *what, SlemError *err);

#endif

#include "eigen.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

/* LAPACK's dsyevr (from OpenBLAS): selected eigenpairs of a symmetric matrix. */
extern void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n,
                    double *a, const int *lda, const double *vl, const double *vu, const int *il,
                    const int *iu, const double *abstol, int *m, double *w, double *z,
                    const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork,
                    const int *liwork, int *info);

/* Copies src (n values, stride step) to dst(n) with the sign that makes the entry of
 * largest magnitude (the first of equals) positive. */
static void fixed_sign(double *dst, const double *src, size_t n, size_t step) {
  size_t jm = 0;
  double sg;
  for (size_t j = 1; j < n; j++)
    if (fabs(src[j * step]) > fabs(src[jm * step])) jm = j;
  sg = src[jm * step] < 0 ? -1 : 1;
  for (size_t j = 0; j < n; j++) dst[j] = sg * src[j * step];
}

int slem_eigen_sym(const double *sigma, size_t d, double *evals, double *evecs, const char *what,
                   SlemError *err) {
  gsl_matrix *a = gsl_matrix_alloc(d, d), *v = gsl_matrix_alloc(d, d);
  gsl_vector *e = gsl_vector_alloc(d);
  gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(d);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int st = SLEM_OK, g, threads = slem_blas_threads();
  if (!a || !v || !e || !w) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for the eigendecomposition (d = %zu)", d);
    goto done;
  }
  memcpy(a->data, sigma, d * d * sizeof *sigma); /* gsl_matrix_alloc: tda == d */
  /* one BLAS thread (see the header): a cache of case A with --eigen differed between
   * -t 1 and -t 2 before */
  if (threads > 1) slem_blas_set_threads(1);
  g = gsl_eigen_symmv(a, e, v, w);
  if (threads > 1) slem_blas_set_threads(threads);
  if (g != GSL_SUCCESS ||
      (g = gsl_eigen_symmv_sort(e, v, GSL_EIGEN_SORT_VAL_DESC)) != GSL_SUCCESS) {
    st = slem_error(err, SLEM_ENUMERIC, "eigendecomposition of %s failed: %s", what,
                    gsl_strerror(g));
    goto done;
  }
  for (size_t k = 0; k < d; k++) {
    evals[k] = gsl_vector_get(e, k);
    if (!isfinite(evals[k])) {
      st = slem_error(err, SLEM_ENUMERIC, "eigendecomposition of %s: eigenvalue %zu is "
                      "not finite", what, k + 1);
      goto done;
    }
    fixed_sign(evecs + k * d, v->data + k, d, v->tda); /* column k of v */
  }
done:
  gsl_set_error_handler(old);
  gsl_matrix_free(a);
  gsl_matrix_free(v);
  gsl_vector_free(e);
  if (w) gsl_eigen_symmv_free(w);
  return st;
}

int slem_eigen_sym_top(double *kk, size_t n, size_t k, double *ev, double *vecs,
                       const char *what, SlemError *err) {
  int nn = (int)n, il = (int)(n - k + 1), iu = (int)n, m = 0, info = 0, lwork = -1, liwork = -1;
  int iq, *isuppz = NULL, *iwork = NULL, threads = slem_blas_threads();
  double vl = 0, vu = 0, abstol = 0, wq, *w = NULL, *z = NULL, *work = NULL;
  int st = SLEM_OK;
  if (n > (size_t)0x7fffffff / (n ? n : 1))
    return slem_error(err, SLEM_EINVAL, "eigendecomposition of %s: n = %zu is too large "
                      "for LAPACK", what, n);
  isuppz = malloc(2 * k * sizeof *isuppz);
  w = malloc(n * sizeof *w);
  z = malloc(n * k * sizeof *z);
  if (!isuppz || !w || !z) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for the eigendecomposition (n = %zu)", n);
    goto done;
  }
  if (threads > 1) slem_blas_set_threads(1); /* see the header */
  dsyevr_("V", "I", "L", &nn, kk, &nn, &vl, &vu, &il, &iu, &abstol, &m, w, z, &nn, isuppz,
          &wq, &lwork, &iq, &liwork, &info);
  lwork = (int)wq;
  liwork = iq;
  work = malloc((size_t)lwork * sizeof *work);
  iwork = malloc((size_t)liwork * sizeof *iwork);
  if (!work || !iwork)
    st = slem_error(err, SLEM_ENOMEM, "out of memory for the eigendecomposition (n = %zu)", n);
  if (!st) {
    dsyevr_("V", "I", "L", &nn, kk, &nn, &vl, &vu, &il, &iu, &abstol, &m, w, z, &nn, isuppz,
            work, &lwork, iwork, &liwork, &info);
    if (info != 0 || (size_t)m != k)
      st = slem_error(err, SLEM_ENUMERIC, "eigendecomposition of %s failed "
                      "(LAPACK dsyevr: info %d, %d of %zu eigenpairs)", what, info, m, k);
  }
  if (threads > 1) slem_blas_set_threads(threads);
  for (size_t l = 0; !st && l < k; l++) { /* LAPACK: ascending, column-major */
    ev[l] = w[k - 1 - l];
    if (!isfinite(ev[l])) {
      st = slem_error(err, SLEM_ENUMERIC, "eigendecomposition of %s: eigenvalue %zu is "
                      "not finite", what, l + 1);
      break;
    }
    fixed_sign(vecs + l * n, z + (k - 1 - l) * n, n, 1);
  }
done:
  free(isuppz);
  free(iwork);
  free(w);
  free(z);
  free(work);
  return st;
}

#define _POSIX_C_SOURCE 200809L
#include "kernel.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *names[] = {"linear", "poly", "rbf", "chi2", "intersection", "hellinger",
                               "exp", "quad"};

const char *slem_kernel_name(SlemKernelType type) {
  return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

static const char *factor_names[] = {"icd", "kpca", "full"};

const char *slem_factor_name(SlemKernelFactor f) {
  return (unsigned)f < 3 ? factor_names[f] : "unknown";
}

int slem_factor_parse(const char *name) {
  for (int i = 0; i < 3; i++)
    if (strcmp(name, factor_names[i]) == 0) return i;
  return -1;
}

static int parse_param(const char *spec, const char *key, const char *val, double *out,
                       SlemError *err) {
  char *end;
  *out = strtod(val, &end);
  if (end == val || *end || !isfinite(*out))
    return slem_error(err, SLEM_EINVAL, "kernel '%s': %s='%s' is not a number", spec, key, val);
  return SLEM_OK;
}

int slem_kernel_parse(SlemKernel *self, const char *spec, SlemError *err) {
  char buf[256], *params, *tok, *save = NULL;
  size_t i;
  int have_gamma = 0, have_g = 0;
  memset(self, 0, sizeof *self);
  if (strlen(spec) >= sizeof buf) return slem_error(err, SLEM_EINVAL, "kernel spec too long");
  strcpy(buf, spec);
  params = strchr(buf, ':');
  if (params) *params++ = '\0';
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(buf, names[i]) == 0) break;
  if (i == sizeof names / sizeof names[0])
    return slem_error(err, SLEM_EINVAL,
                      "unknown kernel '%s' (linear, poly, rbf, exp, quad, chi2, intersection, hellinger)", buf);
  self->type = (SlemKernelType)i;
  self->gamma = 1;
  self->c = 1;
  self->p = 2;
  if (self->type == SLEM_K_RBF || self->type == SLEM_K_EXP) {
    self->gamma_relative = 1;
    self->g_rel = 1;
  }
  for (tok = params ? strtok_r(params, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    double v;
    int st;
    if (!eq) return slem_error(err, SLEM_EINVAL, "kernel '%s': parameter '%s' has no value", spec, tok);
    *eq = '\0';
    if ((st = parse_param(spec, tok, eq + 1, &v, err)) != SLEM_OK) return st;
    if (strcmp(tok, "gamma") == 0 && (self->type == SLEM_K_RBF || self->type == SLEM_K_POLY ||
                                      self->type == SLEM_K_EXP || self->type == SLEM_K_QUAD)) {
      /* quad: x.y + gamma (x.y)^2 is positive semidefinite for gamma >= 0 */
      if (!(v > 0) && !(self->type == SLEM_K_QUAD && v == 0))
        return slem_error(err, SLEM_EINVAL, "kernel '%s': gamma must be positive", spec);
      self->gamma = v;
      self->gamma_relative = 0;
      have_gamma = 1;
    } else if (strcmp(tok, "g") == 0 && (self->type == SLEM_K_RBF || self->type == SLEM_K_EXP)) {
      if (!(v > 0)) return slem_error(err, SLEM_EINVAL, "kernel '%s': g must be positive", spec);
      self->g_rel = v;
      self->gamma_relative = 1;
      have_g = 1;
    } else if (strcmp(tok, "c") == 0 && self->type == SLEM_K_POLY) {
      if (!(v >= 0))
        return slem_error(err, SLEM_EINVAL, "kernel '%s': c must be >= 0 for a positive "
                          "semidefinite kernel", spec);
      self->c = v;
    } else if (strcmp(tok, "p") == 0 && self->type == SLEM_K_POLY) {
      if (!(v >= 1 && v <= 64 && v == floor(v)))
        return slem_error(err, SLEM_EINVAL, "kernel '%s': p must be a whole number from 1 to 64", spec);
      self->p = v;
    } else {
      return slem_error(err, SLEM_EINVAL, "kernel '%s': %s takes no parameter '%s'", spec,
                        names[self->type], tok);
    }
  }
  if (have_gamma && have_g)
    return slem_error(err, SLEM_EINVAL, "kernel '%s': give gamma or g, not both", spec);
  return SLEM_OK;
}

void slem_kernel_format(const SlemKernel *self, char *buf, size_t n) {
  switch (self->type) {
  case SLEM_K_POLY:
    snprintf(buf, n, "poly:gamma=%.17g,c=%.17g,p=%.17g", self->gamma, self->c, self->p);
    break;
  case SLEM_K_RBF:
  case SLEM_K_EXP:
  case SLEM_K_QUAD:
    snprintf(buf, n, "%s:gamma=%.17g", names[self->type], self->gamma);
    break;
  default:
    snprintf(buf, n, "%s", names[self->type]);
    break;
  }
}

int slem_kernel_prepare(const SlemKernel *self, double *x, size_t n, size_t d,
                        const char *name, uint64_t first_record, SlemError *err) {
  if (self->type != SLEM_K_CHI2 && self->type != SLEM_K_INTERSECTION &&
      self->type != SLEM_K_HELLINGER)
    return SLEM_OK;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) {
      double *v = x + i * d + j;
      if (*v < 0)
        return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu is negative (%g); "
                          "the %s kernel needs histograms", name, first_record + i, j + 1, *v,
                          names[self->type]);
      if (self->type == SLEM_K_HELLINGER) *v = sqrt(*v);
    }
  return SLEM_OK;
}

static double powi(double x, double p) {
  double r = 1;
  for (int k = (int)p; k > 0; k--) r *= x;
  return r;
}

double slem_kernel_eval(const SlemKernel *self, const double *x, const double *y, size_t d) {
  double s = 0;
  switch (self->type) {
  case SLEM_K_RBF:
    for (size_t j = 0; j < d; j++) s += (x[j] - y[j]) * (x[j] - y[j]);
    return exp(-self->gamma * s);
  case SLEM_K_EXP:
    for (size_t j = 0; j < d; j++) s += (x[j] - y[j]) * (x[j] - y[j]);
    return exp(-self->gamma * sqrt(s));
  case SLEM_K_CHI2:
    for (size_t j = 0; j < d; j++)
      if (x[j] + y[j] > 0) s += 2 * x[j] * y[j] / (x[j] + y[j]);
    return s;
  case SLEM_K_INTERSECTION:
    for (size_t j = 0; j < d; j++) s += fmin(x[j], y[j]);
    return s;
  default:
    for (size_t j = 0; j < d; j++) s += x[j] * y[j];
    return self->type == SLEM_K_POLY   ? powi(self->gamma * s + self->c, self->p)
           : self->type == SLEM_K_QUAD ? s + self->gamma * s * s
                                       : s;
  }
}

void slem_kernel_block(const SlemKernel *self, double *out, const double *a, size_t na,
                       const double *b, size_t nb, size_t d) {
  if (na == 0 || nb == 0) return;
  if (self->type == SLEM_K_CHI2 || self->type == SLEM_K_INTERSECTION) {
    for (size_t i = 0; i < na; i++)
      for (size_t j = 0; j < nb; j++) out[i * nb + j] = slem_kernel_eval(self, a + i * d, b + j * d, d);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)na, (int)nb, (int)d, 1.0, a, (int)d,
              b, (int)d, 0.0, out, (int)nb);
  if (self->type == SLEM_K_POLY) {
    for (size_t i = 0; i < na * nb; i++) out[i] = powi(self->gamma * out[i] + self->c, self->p);
  } else if (self->type == SLEM_K_QUAD) {
    for (size_t i = 0; i < na * nb; i++) out[i] += self->gamma * out[i] * out[i];
  } else if (self->type == SLEM_K_RBF || self->type == SLEM_K_EXP) {
    /* |a - b|^2 = |a|^2 + |b|^2 - 2 a.b, clamped at 0 against rounding */
    double *nb2 = malloc(nb * sizeof *nb2);
    if (!nb2) { /* no memory for the norms: the direct sum, slower but exact */
      for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) out[i * nb + j] = slem_kernel_eval(self, a + i * d, b + j * d, d);
      return;
    }
    for (size_t j = 0; j < nb; j++) nb2[j] = cblas_ddot((int)d, b + j * d, 1, b + j * d, 1);
    for (size_t i = 0; i < na; i++) {
      double na2 = cblas_ddot((int)d, a + i * d, 1, a + i * d, 1);
      for (size_t j = 0; j < nb; j++) {
        double sq = na2 + nb2[j] - 2 * out[i * nb + j];
        sq = sq > 0 ? sq : 0;
        if (self->type == SLEM_K_RBF) {
          out[i * nb + j] = exp(-self->gamma * sq);
        } else if (sq > 1e-4 * (na2 + nb2[j])) {
          out[i * nb + j] = exp(-self->gamma * sqrt(sq));
        } else {
          /* near pairs: the square root would turn the rounding of |a|^2 + |b|^2 - 2 a.b
           * (about 1e-16 (|a|^2 + |b|^2)) into an error of its square root, 1e-8: the
           * direct sum instead */
          out[i * nb + j] = slem_kernel_eval(self, a + i * d, b + j * d, d);
        }
      }
    }
    free(nb2);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int slem_kernel_estimate_gamma(SlemKernel *self, double *median, const double *x, size_t n,
                               size_t d, size_t sample, uint64_t seed, SlemError *err) {
  size_t m = n < sample ? n : sample, np, k = 0;
  size_t *idx = malloc(n * sizeof *idx);
  double *sq;
  uint64_t s = seed;
  if (!idx) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (m < 2) {
    free(idx);
    return slem_error(err, SLEM_ENUMERIC, "need two negatives or more to estimate gamma");
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  if (m < n) /* partial Fisher-Yates with splitmix64: the same sample for the same seed */
    for (size_t i = 0; i < m; i++) {
      uint64_t z = (s += 0x9E3779B97F4A7C15ull), j;
      size_t t;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      j = i + z % (n - i);
      t = idx[i], idx[i] = idx[j], idx[j] = t;
    }
  np = m * (m - 1) / 2;
  sq = malloc(np * sizeof *sq);
  if (!sq) {
    free(idx);
    return slem_error(err, SLEM_ENOMEM, "out of memory for %zu distances", np);
  }
  for (size_t i = 0; i < m; i++)
    for (size_t j = i + 1; j < m; j++) {
      const double *a = x + idx[i] * d, *b = x + idx[j] * d;
      double t = 0;
      for (size_t l = 0; l < d; l++) t += (a[l] - b[l]) * (a[l] - b[l]);
      sq[k++] = t;
    }
  qsort(sq, np, sizeof *sq, cmp_double);
  *median = np % 2 ? sq[np / 2] : (sq[np / 2 - 1] + sq[np / 2]) / 2;
  free(sq);
  free(idx);
  if (!(*median > 0))
    return slem_error(err, SLEM_ENUMERIC, "the median squared distance between negatives is 0 "
                      "(duplicates?): give gamma directly");
  /* rbf divides by the median squared distance, exp by its square root (the median of
   * the distances when the sample's pair count is odd) */
  self->gamma = self->g_rel / (self->type == SLEM_K_EXP ? sqrt(*median) : *median);
  self->gamma_relative = 0;
  return SLEM_OK;
}

int slem_icl(SlemIcl *out, const SlemKernel *k, const double *x, size_t n, size_t d, size_t rmax,
             double tol, SlemError *err) {
  double *b = out->b, *trace = out->trace;
  size_t *piv = out->piv, *rank = &out->rank;
  double *diag = malloc(n * sizeof *diag), *kcol = malloc(n * sizeof *kcol);
  char *is_piv = calloc(n, 1);
  double trace0 = 0, dmax = 0, floor_;
  size_t j = 0;
  *rank = 0;
  if (!diag || !kcol || !is_piv) {
    free(diag);
    free(kcol);
    free(is_piv);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    diag[i] = slem_kernel_eval(k, x + i * d, x + i * d, d);
    trace0 += diag[i];
    if (diag[i] > dmax) dmax = diag[i];
  }
  /* below this a residual is rounding: the numerical rank is reached */
  floor_ = 1e-10 * dmax;
  for (j = 0; j < rmax; j++) {
    double t = 0, best = -1, bpp;
    size_t p = 0;
    for (size_t i = 0; i < n; i++)
      if (!is_piv[i]) {
        t += diag[i];
        if (diag[i] > best) best = diag[i], p = i;
      }
    trace[j] = t;
    if (best <= floor_ || t <= tol * trace0) break;
    piv[j] = p;
    is_piv[p] = 1;
    bpp = sqrt(diag[p]);
    slem_kernel_block(k, kcol, x, n, x + p * d, 1, d);
    /* kcol -= B[:, :j] B[p, :j] */
    if (j > 0)
      cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)j, -1.0, b, (int)rmax, b + p * rmax, 1,
                  1.0, kcol, 1);
    for (size_t i = 0; i < n; i++) {
      double v = is_piv[i] ? 0 : kcol[i] / bpp;
      b[i * rmax + j] = v;
      diag[i] -= v * v;
    }
    b[p * rmax + j] = bpp;
    diag[p] = 0;
  }
  {
    double t = 0;
    for (size_t i = 0; i < n; i++)
      if (!is_piv[i]) t += diag[i];
    trace[j] = t;
  }
  *rank = j;
  free(diag);
  free(kcol);
  free(is_piv);
  return SLEM_OK;
}

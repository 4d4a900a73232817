#define _POSIX_C_SOURCE 200809L
#include "kernel.h"
#include "kernelfam.h"

#include "dot.h"
#include "blas.h"
#include "rowmul.h"

#include <gsl/gsl_cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernels: to add one, write lib/linalg/kern_NAME.c defining slem_kern_NAME
 * (kernelfam.h) and add X(NAME) here. The order is that of the list in the message for an
 * unknown kernel. */
#define SLEM_KERNELS \
  X(linear) X(poly) X(rbf) X(exp) X(quad) X(chi2) X(intersection) X(hellinger) X(hellinger_dot)

#define X(name) extern const SlemKernelOps slem_kern_##name;
SLEM_KERNELS
#undef X
#define X(name) &slem_kern_##name,
static const SlemKernelOps *const kernels[] = {SLEM_KERNELS};
#undef X
#define NKERNELS (sizeof kernels / sizeof kernels[0])

const SlemKernelOps *slem_kernel_member(size_t i) { return i < NKERNELS ? kernels[i] : NULL; }

const char *slem_kernel_name(const SlemKernel *self) { return self->ops->name; }

static const char *factor_names[] = {"icd", "kpca", "full"};

const char *slem_kernel_factor_name(SlemKernelFactor f) {
  return (unsigned)f < 3 ? factor_names[f] : "unknown";
}

int slem_kernel_factor_parse(const char *name) {
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

/* The parameters a member may take (SlemKernelOps.params): each sets its field of the
 * kernel from v, or answers 0 when v is out of range (refused with must). */
static int set_gamma(SlemKernel *k, double v) {
  /* quad: x.y + gamma (x.y)^2 is positive semidefinite for gamma >= 0 */
  if (!(v > 0) && !(k->ops->params & SLEM_KERN_GAMMA0 && v == 0)) return 0;
  k->gamma = v;
  k->gamma_relative = 0;
  return 1;
}

static int set_g(SlemKernel *k, double v) {
  if (!(v > 0)) return 0;
  k->g_rel = v;
  k->gamma_relative = 1;
  return 1;
}

static int set_c(SlemKernel *k, double v) {
  if (!(v >= 0)) return 0;
  k->c = v;
  return 1;
}

static int set_p(SlemKernel *k, double v) {
  if (!(v >= 1 && v <= 64 && v == floor(v))) return 0;
  k->p = v;
  return 1;
}

static const struct {
  const char *key;
  unsigned flags; /* a member with one of these takes the key */
  int (*set)(SlemKernel *k, double v);
  const char *must;
} keys[] = {
    {"gamma", SLEM_KERN_GAMMA | SLEM_KERN_GAMMA0, set_gamma, "gamma must be positive"},
    {"g", SLEM_KERN_G, set_g, "g must be positive"},
    {"c", SLEM_KERN_C, set_c, "c must be >= 0 for a positive semidefinite kernel"},
    {"p", SLEM_KERN_P, set_p, "p must be a whole number from 1 to 64"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

int slem_kernel_parse(SlemKernel *self, const char *spec, SlemError *err) {
  char buf[256], *params, *tok, *save = NULL;
  size_t i;
  /* the parameters already given (bit i: keys[i]): one given twice is refused, as a cut-off
   * given twice is (-m P.1,1), rather than the last one silently winning */
  unsigned seen = 0;
  memset(self, 0, sizeof *self);
  if (strlen(spec) >= sizeof buf) return slem_error(err, SLEM_EINVAL, "kernel spec too long");
  strcpy(buf, spec);
  params = strchr(buf, ':');
  if (params) *params++ = '\0';
  for (i = 0; i < NKERNELS; i++)
    if (strcmp(buf, kernels[i]->name) == 0) break;
  if (i == NKERNELS) {
    char list[256];
    size_t at = 0;
    for (size_t j = 0; j < NKERNELS && at < sizeof list; j++)
      at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "", kernels[j]->name);
    return slem_error(err, SLEM_EINVAL, "unknown kernel '%s' (%s)", buf, list);
  }
  self->ops = kernels[i];
  self->gamma = 1;
  self->c = 1;
  self->p = 2;
  if (self->ops->params & SLEM_KERN_G) {
    self->gamma_relative = 1;
    self->g_rel = 1;
  }
  for (tok = params ? strtok_r(params, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    double v;
    int st;
    size_t k;
    if (!eq) return slem_error(err, SLEM_EINVAL, "kernel '%s': parameter '%s' has no value", spec, tok);
    *eq = '\0';
    for (k = 0; k < NKEYS; k++)
      if (strcmp(tok, keys[k].key) == 0) {
        if (seen & 1u << k)
          return slem_error(err, SLEM_EINVAL, "kernel '%s': %s twice", spec, tok);
        seen |= 1u << k;
        break;
      }
    if ((st = parse_param(spec, tok, eq + 1, &v, err)) != SLEM_OK) return st;
    if (k == NKEYS || !(self->ops->params & keys[k].flags))
      return slem_error(err, SLEM_EINVAL, "kernel '%s': %s takes no parameter '%s'", spec,
                        self->ops->name, tok);
    if (!keys[k].set(self, v)) return slem_error(err, SLEM_EINVAL, "kernel '%s': %s", spec, keys[k].must);
  }
  if ((seen & 1u) && (seen & 2u)) /* keys[0] and keys[1] */
    return slem_error(err, SLEM_EINVAL, "kernel '%s': give gamma or g, not both", spec);
  return SLEM_OK;
}

void slem_kernel_format(const SlemKernel *self, char *buf, size_t n) {
  char s[256];
  int at;
  char sep = ':';
  if (self->ops->format) {
    self->ops->format(self, buf, n);
    return;
  }
  at = snprintf(s, sizeof s, "%s", self->ops->name);
  if (self->ops->params & (SLEM_KERN_GAMMA | SLEM_KERN_GAMMA0))
    at += snprintf(s + at, sizeof s - (size_t)at, "%cgamma=%.17g", sep, self->gamma), sep = ',';
  if (self->ops->params & SLEM_KERN_C)
    at += snprintf(s + at, sizeof s - (size_t)at, "%cc=%.17g", sep, self->c), sep = ',';
  if (self->ops->params & SLEM_KERN_P)
    snprintf(s + at, sizeof s - (size_t)at, "%cp=%.17g", sep, self->p);
  snprintf(buf, n, "%s", s);
}

int slem_kernel_needs_histograms(const SlemKernel *self) { return self->ops->histograms; }

int slem_kernel_prepare(const SlemKernel *self, double *x, size_t n, size_t d,
                        const char *name, uint64_t first_record, SlemError *err) {
  const SlemKernelOps *o = self->ops;
  if (!o->histograms && !o->prepare) return SLEM_OK;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) {
      double *v = x + i * d + j;
      if (o->histograms && *v < 0)
        return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu is negative (%g); "
                          "the %s kernel needs histograms", name, first_record + i, j + 1, *v,
                          o->name);
      if (o->prepare) *v = o->prepare(self, *v);
    }
  return SLEM_OK;
}

/* x.y and |x - y|^2, summed in the order of the coordinates */
static double sum_dot(const double *x, const double *y, size_t d) {
  double s = 0;
  for (size_t j = 0; j < d; j++) s += x[j] * y[j];
  return s;
}

static double sum_sqdist(const double *x, const double *y, size_t d) {
  double s = 0;
  for (size_t j = 0; j < d; j++) s += (x[j] - y[j]) * (x[j] - y[j]);
  return s;
}

double slem_kernel_eval(const SlemKernel *self, const double *x, const double *y, size_t d) {
  const SlemKernelOps *o = self->ops;
  if (o->of_dot) return o->of_dot(self, sum_dot(x, y, d));
  if (o->of_sqdist) return o->of_sqdist(self, sum_sqdist(x, y, d));
  return o->pair(self, x, y, d);
}

size_t slem_kernel_lanes_size(size_t n, size_t d) {
  return (n + SLEM_KLANES - 1) / SLEM_KLANES * SLEM_KLANES * d;
}

void slem_kernel_lanes(double *yt, const double *y, size_t n, size_t d) {
  size_t groups = (n + SLEM_KLANES - 1) / SLEM_KLANES;
  for (size_t b = 0; b < groups; b++) {
    double *t = yt + b * SLEM_KLANES * d;
    for (size_t g = 0; g < SLEM_KLANES; g++) {
      size_t i = b * SLEM_KLANES + g;
      for (size_t l = 0; l < d; l++) t[l * SLEM_KLANES + g] = i < n ? y[i * d + l] : 0;
    }
  }
}

/* Pairs of doubles (and fours where the CPU has AVX) of GCC's (and clang's) vector
 * extension: element-wise IEEE operations, lowered to what the target has; no fused
 * multiply-add anywhere (-std=c11 turns contraction off, and neither target has FMA), so
 * that both ways give every lane the bits of the scalar sum. */
typedef double V2 __attribute__((vector_size(16)));
_Static_assert(SLEM_KLANES == 8, "the lanes below are written for 8");
typedef double V4 __attribute__((vector_size(32)));

/* s[g] = sum_l (x_l - y_gl)^2 (sq) or sum_l x_l y_gl, in the order of l, 8 lanes. */
static void lanes_sse(int sq, const double *x, const double *yt, size_t d, double *s) {
  V2 a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, a3 = {0, 0}, y0, y1, y2, y3;
  for (size_t l = 0; l < d; l++) {
    V2 xv = {x[l], x[l]};
    memcpy(&y0, yt + l * 8, sizeof y0);
    memcpy(&y1, yt + l * 8 + 2, sizeof y1);
    memcpy(&y2, yt + l * 8 + 4, sizeof y2);
    memcpy(&y3, yt + l * 8 + 6, sizeof y3);
    if (sq) {
      y0 = xv - y0, y1 = xv - y1, y2 = xv - y2, y3 = xv - y3;
      a0 += y0 * y0, a1 += y1 * y1, a2 += y2 * y2, a3 += y3 * y3;
    } else {
      a0 += xv * y0, a1 += xv * y1, a2 += xv * y2, a3 += xv * y3;
    }
  }
  memcpy(s, &a0, sizeof a0);
  memcpy(s + 2, &a1, sizeof a1);
  memcpy(s + 4, &a2, sizeof a2);
  memcpy(s + 6, &a3, sizeof a3);
}

__attribute__((target("avx"))) static void lanes_avx(int sq, const double *x, const double *yt,
                                                      size_t d, double *s) {
  V4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0}, y0, y1;
  for (size_t l = 0; l < d; l++) {
    V4 xv = {x[l], x[l], x[l], x[l]};
    memcpy(&y0, yt + l * 8, sizeof y0);
    memcpy(&y1, yt + l * 8 + 4, sizeof y1);
    if (sq) {
      y0 = xv - y0, y1 = xv - y1;
      a0 += y0 * y0, a1 += y1 * y1;
    } else {
      a0 += xv * y0, a1 += xv * y1;
    }
  }
  memcpy(s, &a0, sizeof a0);
  memcpy(s + 4, &a1, sizeof a1);
}

static void lanes_sum(int sq, const double *x, const double *yt, size_t d, double *s) {
  if (slem_dot_lanes_avx())
    lanes_avx(sq, x, yt, d, s);
  else
    lanes_sse(sq, x, yt, d, s);
}

/* Each lane's sum runs over l in order, as slem_kernel_eval's: only the pairs are side by
 * side. */
void slem_kernel_eval_lanes(const SlemKernel *self, const double *x, const double *yt, size_t d,
                            double *out) {
  const SlemKernelOps *o = self->ops;
  double s[SLEM_KLANES] = {0};
  if (!o->of_dot && !o->of_sqdist) {
    o->lanes(self, x, yt, d, out);
    return;
  }
  lanes_sum(o->of_sqdist != NULL, x, yt, d, s);
  for (size_t g = 0; g < SLEM_KLANES; g++)
    out[g] = o->of_dot ? o->of_dot(self, s[g]) : o->of_sqdist(self, s[g]);
}

/* slem_kernel_block() with the squared norms of a's rows given (a2), or computed here when
 * a2 is NULL (the kernels of the squared distance only use them). With bt (b^T, d x nb) and
 * b2 (the squared norms of b's rows) given, slem_kernel_rows(): the products row by row
 * (rowmul.h) and every norm in a fixed order. */
static void kernel_block(const SlemKernel *self, double *out, const double *a, const double *a2,
                         size_t na, const double *b, const double *bt, const double *b2,
                         size_t nb, size_t d) {
  const SlemKernelOps *o = self->ops;
  double *nb2 = NULL;
  if (na == 0 || nb == 0) return;
  if (!o->of_dot && !o->of_sqdist) {
    for (size_t i = 0; i < na; i++)
      for (size_t j = 0; j < nb; j++) out[i * nb + j] = o->pair(self, a + i * d, b + j * d, d);
    return;
  }
  if (bt)
    slem_rowmul_f64(out, nb, a, d, na, bt, nb, d, nb);
  else if (nb == 1) /* a kernel column (each pivot of the Cholesky): dgemm would copy all of a */
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)na, (int)d, 1.0, a, (int)d, b, 1, 0.0, out, 1);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)na, (int)nb, (int)d, 1.0, a,
                (int)d, b, (int)d, 0.0, out, (int)nb);
  if (o->of_dot) {
    for (size_t i = 0; i < na * nb; i++) out[i] = o->of_dot(self, out[i]);
    return;
  }
  /* |a - b|^2 = |a|^2 + |b|^2 - 2 a.b, clamped at 0 against rounding */
  if (!b2) {
    if (!(nb2 = malloc(nb * sizeof *nb2))) {
      /* no memory for the norms: the direct sum, slower but exact */
      for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
          out[i * nb + j] = slem_kernel_eval(self, a + i * d, b + j * d, d);
      return;
    }
    for (size_t j = 0; j < nb; j++) nb2[j] = cblas_ddot((int)d, b + j * d, 1, b + j * d, 1);
    b2 = nb2;
  }
  for (size_t i = 0; i < na; i++) {
    double na2 = a2   ? a2[i]
                 : bt ? slem_dot_f64(a + i * d, a + i * d, d)
                      : cblas_ddot((int)d, a + i * d, 1, a + i * d, 1);
    for (size_t j = 0; j < nb; j++) {
      double sq = na2 + b2[j] - 2 * out[i * nb + j];
      sq = sq > 0 ? sq : 0;
      if (o->near > 0 && !(sq > o->near * (na2 + b2[j])))
        /* near pairs (exp): the square root would turn the rounding of |a|^2 + |b|^2 - 2 a.b
         * (about 1e-16 (|a|^2 + |b|^2)) into an error of its square root, 1e-8: the direct
         * sum instead */
        out[i * nb + j] = slem_kernel_eval(self, a + i * d, b + j * d, d);
      else
        out[i * nb + j] = o->of_sqdist(self, sq);
    }
  }
  free(nb2);
}

void slem_kernel_block(const SlemKernel *self, double *out, const double *a, size_t na,
                       const double *b, size_t nb, size_t d) {
  kernel_block(self, out, a, NULL, na, b, NULL, NULL, nb, d);
}

void slem_kernel_rows_prepare(double *bt, double *b2, const double *b, size_t nb, size_t d) {
  for (size_t j = 0; j < nb; j++) {
    for (size_t l = 0; l < d; l++) bt[l * nb + j] = b[j * d + l];
    b2[j] = slem_dot_f64(b + j * d, b + j * d, d);
  }
}

void slem_kernel_rows(const SlemKernel *self, double *out, const double *a, size_t na,
                      const double *b, const double *bt, const double *b2, size_t nb,
                      size_t d) {
  kernel_block(self, out, a, NULL, na, b, bt, b2, nb, d);
}

/* Moves the k-th smallest of a[0..n) to a[k], those before it no larger and those after
 * no smaller (Hoare's selection, the pivot a median of three): the value the sorted array
 * holds at k, in time linear in n on average, where sorting took n log n. */
static void select_kth(double *a, size_t n, size_t k) {
  ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
  while (lo < hi) {
    ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
    double p, t;
    if (a[mid] < a[lo]) t = a[mid], a[mid] = a[lo], a[lo] = t;
    if (a[hi] < a[lo]) t = a[hi], a[hi] = a[lo], a[lo] = t;
    if (a[hi] < a[mid]) t = a[hi], a[hi] = a[mid], a[mid] = t;
    p = a[mid];
    while (i <= j) { /* [lo, i) <= p, (j, hi] >= p */
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) t = a[i], a[i] = a[j], a[j] = t, i++, j--;
    }
    if (kk <= j) hi = j;
    else if (kk >= i) lo = i;
    else return; /* between them, every value equals p */
  }
}

/* Squared distances of row a to rows b0..b3, each its own sum in the order of l (the bits
 * of one at a time); four at once, so that their additions overlap. */
static void sqdist4(const double *a, const double *b0, const double *b1, const double *b2,
                    const double *b3, size_t d, double *out) {
  double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  for (size_t l = 0; l < d; l++) {
    double e0 = a[l] - b0[l], e1 = a[l] - b1[l], e2 = a[l] - b2[l], e3 = a[l] - b3[l];
    t0 += e0 * e0;
    t1 += e1 * e1;
    t2 += e2 * e2;
    t3 += e3 * e3;
  }
  out[0] = t0, out[1] = t1, out[2] = t2, out[3] = t3;
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
  for (size_t i = 0; i < m; i++) {
    const double *a = x + idx[i] * d;
    size_t j = i + 1;
    for (; j + 4 <= m; j += 4, k += 4)
      sqdist4(a, x + idx[j] * d, x + idx[j + 1] * d, x + idx[j + 2] * d, x + idx[j + 3] * d, d,
              sq + k);
    for (; j < m; j++) {
      const double *b = x + idx[j] * d;
      double t = 0;
      for (size_t l = 0; l < d; l++) t += (a[l] - b[l]) * (a[l] - b[l]);
      sq[k++] = t;
    }
  }
  /* the middle value, or the mean of the middle two: the largest of the lower half */
  select_kth(sq, np, np / 2);
  if (np % 2) {
    *median = sq[np / 2];
  } else {
    double lower = sq[0];
    for (size_t i = 1; i < np / 2; i++) lower = sq[i] > lower ? sq[i] : lower;
    *median = (lower + sq[np / 2]) / 2;
  }
  free(sq);
  free(idx);
  if (!(*median > 0))
    return slem_error(err, SLEM_ENUMERIC, "the median squared distance between negatives is 0 "
                      "(duplicates?): give gamma directly");
  /* rbf divides by the median squared distance, exp by its square root (the median of
   * the distances when the sample's pair count is odd): the member's scale */
  self->gamma = self->g_rel / (self->ops->scale ? self->ops->scale(*median) : *median);
  self->gamma_relative = 0;
  return SLEM_OK;
}

/* Rows per task of a Cholesky step: fixed, so that no column depends on the thread count
 * (each chunk one BLAS call on one thread). */
#define ICL_CHUNK 2048

/* One step of slem_kernel_icl() for the rows of a chunk. */
typedef struct IclStep {
  const SlemKernel *k;
  const double *x, *x2;
  size_t d, rmax, j, p;
  double bpp;
  const double *bp; /* B[p, :j], copied: row p is written meanwhile */
  double *b, *diag, *kcol;
  const char *is_piv;
} IclStep;

/* Rows lo to hi: the kernel column k(x_i, x_p) - B[i, :j] B[p, :j], divided by the pivot's
 * sqrt(diag) into B[i, j], and the residual diagonal. */
static void icl_rows(void *ctx, size_t lo, size_t hi) {
  const IclStep *s = ctx;
  size_t m = hi - lo, d = s->d, j = s->j;
  kernel_block(s->k, s->kcol + lo, s->x + lo * d, s->x2 + lo, m, s->x + s->p * d, NULL, NULL, 1, d);
  if (j > 0)
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)j, -1.0, s->b + lo * s->rmax,
                (int)s->rmax, s->bp, 1, 1.0, s->kcol + lo, 1);
  for (size_t i = lo; i < hi; i++) {
    double v = s->is_piv[i] ? 0 : s->kcol[i] / s->bpp;
    s->b[i * s->rmax + j] = v;
    s->diag[i] -= v * v;
  }
}

int slem_kernel_icl(SlemKernelIcl *out, const SlemKernel *k, const double *x, size_t n,
                    size_t d, size_t rmax, double tol, SlemError *err) {
  double *b = out->b, *trace = out->trace;
  size_t *piv = out->piv, *rank = &out->rank;
  double *diag = malloc(n * sizeof *diag), *kcol = malloc(n * sizeof *kcol);
  double *x2 = malloc(n * sizeof *x2), *bp = malloc((rmax ? rmax : 1) * sizeof *bp);
  char *is_piv = calloc(n, 1);
  double trace0 = 0, dmax = 0, floor_;
  size_t j = 0;
  *rank = 0;
  if (!diag || !kcol || !x2 || !bp || !is_piv) {
    free(diag);
    free(kcol);
    free(x2);
    free(bp);
    free(is_piv);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  /* the rows' squared norms, once (each kernel column of rbf or exp needs them all) */
  for (size_t i = 0; i < n; i++) x2[i] = cblas_ddot((int)d, x + i * d, 1, x + i * d, 1);
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
    memcpy(bp, b + p * rmax, j * sizeof *bp);
    {
      IclStep step = {k, x, x2, d, rmax, j, p, bpp, bp, b, diag, kcol, is_piv};
      slem_blas_par_chunks(n, ICL_CHUNK, icl_rows, &step);
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
  free(x2);
  free(bp);
  free(is_piv);
  return SLEM_OK;
}

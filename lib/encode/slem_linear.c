#include "slem_linear.h"

#include "mem.h"
#include "blas.h"
#include "rowmul.h"
#include "libslem.h"
#include "var_linear.h"

#include <gsl/gsl_cblas.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void row_loops_init(void);

struct SlemEncoder {
  const SlemCache *cache;
  const SlemCacheLinear *lin;  /* the cache's */
  SlemEncodeMode mode;
  double theta;
  size_t max_rows;
  double *delta;  /* delta(max_rows, d) */
  double *y;      /* y(max_rows, d) */
  float *ainv_f;  /* single precision: A^-1 scaled to float32 and packed (rowmul.h),
                     delta_f(max_rows, d) (x - mu of double rows; float rows become their
                     own delta) */
  float *delta_f;
  uint64_t zeros;
  size_t count_lo, count_hi;  /* the rows of a block whose zeros count */
};

int slem_encoder_new(SlemEncoder **self, const SlemCache *cache, SlemEncodeMode mode,
                     double theta, size_t max_rows, SlemError *err) {
  SlemEncoder *e;
  *self = NULL;
  if (!slem_cache_linear(cache))
    return slem_error(err, SLEM_EINVAL,
                      "%s: a partial cache holds sums, not A^-1: finish it with slem-negstats "
                      "first", slem_cache_path(cache));
  if (mode == SLEM_ENCODE_CLASSIFIER && !(theta > 0 && isfinite(theta)))
    return slem_error(err, SLEM_EINVAL, "theta must be a positive number (got %g)", theta);
  e = calloc(1, sizeof *e);
  if (!e) return slem_error(err, SLEM_ENOMEM, "out of memory");
  row_loops_init();
  e->cache = cache;
  e->lin = slem_cache_linear(cache);
  e->mode = mode;
  e->theta = theta;
  e->max_rows = max_rows;
  e->count_hi = SIZE_MAX;
  e->delta = slem_mem_alloc_large(max_rows * cache->d * sizeof *e->delta);
  e->y = slem_mem_alloc_large(max_rows * cache->d * sizeof *e->y);
  if (!e->delta || !e->y) {
    slem_encoder_free(e);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
  }
  *self = e;
  return SLEM_OK;
}

void slem_encoder_free(SlemEncoder *self) {
  if (!self) return;
  free(self->delta);
  free(self->y);
  free(self->ainv_f);
  free(self->delta_f);
  free(self);
}

size_t slem_encoder_out_dim(const SlemEncoder *self) {
  return self->cache->d + (self->mode == SLEM_ENCODE_CLASSIFIER);
}

uint64_t slem_encoder_zeros(const SlemEncoder *self) { return self->zeros; }

void slem_encoder_count_rows(SlemEncoder *self, size_t lo, size_t hi) {
  self->count_lo = lo;
  self->count_hi = hi;
}

/* Whether row r of a block counts in slem_encoder_zeros(). */
static int counted(const SlemEncoder *self, size_t r) {
  return r >= self->count_lo && r < self->count_hi;
}

/* Rows per product: the blocks are cut into chunks of this many rows from their first, each
 * chunk one GEMM on one BLAS thread (slem_blas_par_chunks), so that a descriptor's bits depend
 * on its place in its block, never on the thread count. */
#define ENC_CHUNK 256

/* Rows [lo, hi) of a block: float32 to outf or float64 to outd, whichever is not NULL (the
 * block's outputs, row 0 at outf / outd). */
static void run(SlemEncoder *self, float *outf, double *outd, const double *x, size_t lo,
                size_t hi) {
  const SlemCache *c = self->cache;
  size_t d = c->d, od = slem_encoder_out_dim(self), b = hi - lo;
  const double *mu = self->lin->mu;
  double th = self->theta, *delta = self->delta + lo * d, *y = self->y + lo * d;
  if (b == 0) return;
  x += lo * d;
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < d; j++) delta[i * d + j] = x[i * d + j] - mu[j];
  /* y(b, d) = delta(b, d) A^-1(d, d), each row on its own (rowmul.h) */
  slem_rowmul_f64(y, d, delta, d, b, self->lin->ainv, d, d, d);
  for (size_t i = 0; i < b; i++) {
    const double *yi = y + i * d, *di = delta + i * d, *xi = x + i * d;
    float *of = outf ? outf + (lo + i) * od : NULL;
    double *odd = outd ? outd + (lo + i) * od : NULL;
    double nrm = cblas_dnrm2((int)d, yi, 1);
    if (nrm == 0 && counted(self, lo + i)) __atomic_fetch_add(&self->zeros, 1, __ATOMIC_RELAXED);
    if (self->mode == SLEM_ENCODE_UNIT) {
      double s = nrm > 0 ? 1.0 / nrm : 0.0;
      for (size_t j = 0; j < d; j++) {
        if (of) of[j] = (float)(yi[j] * s);
        else odd[j] = yi[j] * s;
      }
    } else {
      double q = cblas_ddot((int)d, di, 1, yi, 1);
      double s = 2 * th / (th * q + th + 1), proj = 0, nu;
      int big = !isfinite(th * q + th + 1);
      for (size_t j = 0; j < d; j++) {
        double w = s * yi[j];
        big |= !isfinite(th * xi[j]);
        proj += (th * xi[j] + mu[j]) * w;
        if (of) of[j] = (float)w;
        else odd[j] = w;
      }
      nu = (th - 1) / (th + 1) - proj / (th + 1);
      if (big) {
        /* a theta near DBL_MAX overflowed (w = 0 and nu = 1, or NaN): the same omega and nu
         * divided through by theta instead (only then: other thetas keep their bits). A
         * delta beyond ~1e154 overflowed q = delta.A^-1 delta (to Inf, or NaN from Inf -
         * Inf): the formula is then written in delta / t, y / t and q / t^2 for a power of
         * two t near the largest |delta_j| (exact), omega = 2 theta Y / (theta Q t +
         * (theta + 1) / t), which is of the order of 1 / t and finite */
        double r = 1 / th, t = 1;
        if (!isfinite(q)) {
          double m = 0, *dm = delta + i * d, *ym = y + i * d;
          int e;
          for (size_t j = 0; j < d; j++) m = fabs(dm[j]) > m ? fabs(dm[j]) : m;
          (void)frexp(m, &e);
          t = ldexp(1, e - 1); /* m / t in [1, 2), t finite up to DBL_MAX */
          for (size_t j = 0; j < d; j++) dm[j] /= t;
          cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)d, (int)d, 1.0, self->lin->ainv,
                      (int)d, dm, 1, 0.0, ym, 1);
          q = cblas_ddot((int)d, dm, 1, ym, 1);
        }
        proj = 0;
        if (t > 1 && th <= 1) { /* theta x_j cannot overflow, and 1 / theta might */
          s = 2 * th / (th * q * t + (th + 1) / t);
          for (size_t j = 0; j < d; j++) {
            double w = s * yi[j];
            proj += (th * xi[j] + mu[j]) * w;
            if (of) of[j] = (float)w;
            else odd[j] = w;
          }
          nu = (th - 1) / (th + 1) - proj / (th + 1);
        } else {
          s = 2 / (q * t + 1 / t + r / t);
          for (size_t j = 0; j < d; j++) {
            double w = s * yi[j];
            proj += (xi[j] + mu[j] * r) * w;
            if (of) of[j] = (float)w;
            else odd[j] = w;
          }
          nu = (1 - r) / (1 + r) - proj / (1 + r);
        }
      }
      if (of && nrm > 0) {
        /* weights below float32's range (an x of magnitude ~1e160 gives w ~ 1e-160) are
         * written as zeros, which lose the classifier where they weigh on its scores (w.x0
         * of order 1): the row is then left NaN, which the stream refuses naming the record
         * (encstream.c); tiny weights on a tiny delta weigh nothing and stay zeros */
        float fm = 0;
        double at = 0;
        for (size_t j = 0; j < d; j++) fm = fabsf(of[j]) > fm ? fabsf(of[j]) : fm;
        if (fm < FLT_MIN) {
          for (size_t j = 0; j < d; j++) at += xi[j] * (s * yi[j]);
          if (!(fabs(at) <= 1e-6))
            for (size_t j = 0; j < d; j++) of[j] = NAN;
        }
      }
      if (of) of[d] = (float)nu;
      else odd[d] = nu;
    }
  }
}

int slem_encoder_set_precision(SlemEncoder *self, SlemPrecision p, SlemPrecision *chosen,
                               SlemError *err) {
  size_t d = self->cache->d;
  if (p == SLEM_PRECISION_AUTO)
    p = self->lin->rcond > 0 && 1 / self->lin->rcond <= SLEM_SINGLE_MAX_COND
            ? SLEM_PRECISION_SINGLE : SLEM_PRECISION_DOUBLE;
  if (self->mode != SLEM_ENCODE_UNIT) p = SLEM_PRECISION_DOUBLE;
  if (p == SLEM_PRECISION_SINGLE && !self->ainv_f) {
    self->ainv_f = slem_mem_alloc_large(slem_rowmul_packed_len(d, d, 0) * sizeof *self->ainv_f);
    self->delta_f = slem_mem_alloc_large(self->max_rows * d * sizeof *self->delta_f);
    if (!self->ainv_f || !self->delta_f) {
      free(self->ainv_f);
      self->ainv_f = NULL; /* not taken for a packed A^-1 (slem_encoder_takes_f32) */
      return slem_error(err, SLEM_ENOMEM, "out of memory for float32 buffers");
    }
    /* scaled to a largest entry of 1, so that no scale of the data underflows or
     * overflows float32; the descriptor is normalised, so the direction is unchanged.
     * Packed for the products (rowmul.h): read in the order of their tiles */
    double amax = 0, s;
    for (size_t i = 0; i < d * d; i++) {
      double a = fabs(self->lin->ainv[i]);
      amax = a > amax ? a : amax;
    }
    s = amax > 0 ? 1 / amax : 1;
    slem_rowmul_pack_f32_scaled(self->ainv_f, self->lin->ainv, d, d, d, s);
  }
  if (p == SLEM_PRECISION_DOUBLE) {
    free(self->ainv_f);
    free(self->delta_f);
    self->ainv_f = NULL;
    self->delta_f = NULL;
  }
  if (chosen) *chosen = p;
  return SLEM_OK;
}

/* The row loops of the float32 path, in two builds chosen once per process: one for CPUs
 * with AVX2 (vectorised), one for the others; SLEM_TEST_LANES=sse forces the second (the
 * tests compare both). Every value is that of the plain loops on any CPU: the operations
 * are element by element (neither build may use FMA, which AVX2 does not include), a
 * maximum does not depend on its order, and the one sum keeps its order in fixed lanes. */
#define INLINE static inline __attribute__((always_inline))
#if defined(__clang__)
#define AVX2 __attribute__((target("avx2")))
#else
#define AVX2 __attribute__((target("avx2"), optimize("O3")))
#endif

/* Four doubles, four float32 and their bits, of GCC's (and clang's) vector extension: one
 * AVX register, or two SSE ones. The helpers below are always inlined, so GCC's warning
 * that an AVX vector returned without AVX changes the calling convention concerns no call. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double D4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));
typedef long long L4 __attribute__((vector_size(32)));

/* |v| and the larger of a and b, element by element (no NaN here) */
INLINE D4 d4_abs(D4 v) {
  const L4 bits = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  return (D4)((L4)v & bits);
}
INLINE D4 d4_max(D4 a, D4 b) {
  L4 gt = a > b;
  return (D4)(((L4)a & gt) | ((L4)b & ~gt));
}
INLINE D4 d4_load(const float *x) {
  F4 f;
  memcpy(&f, x, sizeof f);
  return __builtin_convertvector(f, D4);
}

/* The largest |x_j - mu_j| of a float32 row x, widened exactly. The values are finite
 * (the readers refuse others) and not below zero, so a maximum by comparison is exact
 * and the same whatever the order: eight lanes, then the lanes, then the rest (a scalar
 * maximum's chain of dependent comparisons took 9% of case A's encode). */
INLINE double row_max_body(const float *xf, const double *mu, size_t d) {
  D4 m0 = {0, 0, 0, 0}, m1 = m0;
  double m = 0;
  size_t j = 0;
  for (; j + 8 <= d; j += 8) {
    D4 u0, u1;
    memcpy(&u0, mu + j, sizeof u0);
    memcpy(&u1, mu + j + 4, sizeof u1);
    m0 = d4_max(d4_abs(d4_load(xf + j) - u0), m0);
    m1 = d4_max(d4_abs(d4_load(xf + j + 4) - u1), m1);
  }
  m0 = d4_max(m0, m1);
  for (int l = 0; l < 4; l++) m = m0[l] > m ? m0[l] : m;
  for (; j < d; j++) {
    double a = fabs((double)xf[j] - mu[j]);
    m = a > m ? a : m;
  }
  return m;
}

INLINE void row_delta_body(float *delta, const float *xf, const double *mu, double s, size_t d) {
  for (size_t j = 0; j < d; j++) delta[j] = (float)(((double)xf[j] - mu[j]) * s);
}

/* Lanes of the sum of squares below: value j goes to lane j % NORM_LANES, each lane summed
 * in order, the lanes then added pairwise in a fixed order. */
#define NORM_LANES 8

/* A row y of d float32 divided by its Euclidean norm (the sum of squares in double, in
 * NORM_LANES fixed lanes), in place; 1 when the row is all zeros (left as it is), else 0. */
INLINE int row_unit_body(float *y, size_t d) {
  double lane[NORM_LANES] = {0}, ss, s;
  size_t j = 0;
  for (; j + NORM_LANES <= d; j += NORM_LANES)
    for (size_t l = 0; l < NORM_LANES; l++) lane[l] += (double)y[j + l] * y[j + l];
  for (size_t l = 0; j < d; j++, l++) lane[l] += (double)y[j] * y[j];
  ss = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  s = ss > 0 ? 1 / sqrt(ss) : 0;
  for (j = 0; j < d; j++) y[j] = (float)(y[j] * s);
  return ss == 0;
}

typedef struct RowLoops {
  double (*max)(const float *xf, const double *mu, size_t d);
  void (*delta)(float *delta, const float *xf, const double *mu, double s, size_t d);
  int (*unit)(float *y, size_t d);
} RowLoops;

static double row_max(const float *xf, const double *mu, size_t d) {
  return row_max_body(xf, mu, d);
}
static void row_delta(float *delta, const float *xf, const double *mu, double s, size_t d) {
  row_delta_body(delta, xf, mu, s, d);
}
static int row_unit(float *y, size_t d) { return row_unit_body(y, d); }
AVX2 static double row_max_avx2(const float *xf, const double *mu, size_t d) {
  return row_max_body(xf, mu, d);
}
AVX2 static void row_delta_avx2(float *delta, const float *xf, const double *mu, double s,
                                size_t d) {
  row_delta_body(delta, xf, mu, s, d);
}
AVX2 static int row_unit_avx2(float *y, size_t d) { return row_unit_body(y, d); }

static RowLoops row_loops = {row_max, row_delta, row_unit};
static pthread_once_t row_loops_once = PTHREAD_ONCE_INIT;

static void row_loops_choose(void) {
  const char *t = getenv("SLEM_TEST_LANES");
  if (__builtin_cpu_supports("avx2") && !(t && strcmp(t, "sse") == 0))
    row_loops = (RowLoops){row_max_avx2, row_delta_avx2, row_unit_avx2};
}

static void row_loops_init(void) { pthread_once(&row_loops_once, row_loops_choose); }

double slem_encode_row_max(const float *x, const double *mu, size_t d) {
  row_loops_init();
  return row_loops.max(x, mu, d);
}

/* Row i of a block's x - mu, in double, scaled to a largest entry of 1 and rounded once
 * to float32 into delta (which may be xf itself: each entry is read before it is
 * written). The row is xd's when xd is not NULL, else xf's (float32, widened exactly). */
static void delta_row(float *delta, const double *xd, const float *xf, const double *mu,
                      size_t d) {
  double m = 0, s;
  if (!xd) {
    s = (m = row_loops.max(xf, mu, d)) > 0 ? 1 / m : 1;
    row_loops.delta(delta, xf, mu, s, d);
    return;
  }
  for (size_t j = 0; j < d; j++) {
    double a = fabs(xd[j] - mu[j]);
    m = a > m ? a : m;
  }
  s = m > 0 ? 1 / m : 1;
  for (size_t j = 0; j < d; j++) delta[j] = (float)((xd[j] - mu[j]) * s);
}

/* Unit descriptors with one sgemm per chunk: the chunk's deltas (delta_row), their product
 * with A^-1 straight into out, each row then normalised in place. Rows [lo, hi) of the
 * block, whose rows are xd (double) or xf (float32, overwritten by their deltas). The
 * same bits from either: a float32 widens exactly, and the sgemm sees the same deltas. */
static void run_single(SlemEncoder *self, float *out, const double *xd, float *xf, size_t lo,
                       size_t hi) {
  size_t d = self->cache->d, b = hi - lo;
  const double *mu = self->lin->mu;
  float *delta = xf ? xf + lo * d : self->delta_f + lo * d, *y = out + lo * d;
  if (b == 0) return;
  for (size_t i = 0; i < b; i++)
    delta_row(delta + i * d, xd ? xd + (lo + i) * d : NULL, xd ? NULL : delta + i * d, mu, d);
  slem_rowmul_packed_f32(y, d, delta, d, b, self->ainv_f, d, d);
  for (size_t i = 0; i < b; i++)
    if (row_loops.unit(y + i * d, d) && counted(self, lo + i))
      __atomic_fetch_add(&self->zeros, 1, __ATOMIC_RELAXED);
}

typedef struct EncJob {
  SlemEncoder *self;
  float *outf;
  double *outd;
  const double *x;
  float *xf;
} EncJob;

static void run_chunk(void *ctx, size_t lo, size_t hi) {
  EncJob *j = ctx;
  if (j->outf && j->self->ainv_f) run_single(j->self, j->outf, j->x, j->xf, lo, hi);
  else run(j->self, j->outf, j->outd, j->x, lo, hi);
}

void slem_encoder_run(SlemEncoder *self, float *y, const double *x, size_t b) {
  EncJob j = {self, y, NULL, x, NULL};
  slem_blas_par_chunks(b, ENC_CHUNK, run_chunk, &j);
}

int slem_encoder_takes_f32(const SlemEncoder *self) {
  return self->ainv_f != NULL && self->mode == SLEM_ENCODE_UNIT;
}

void slem_encoder_run_f32(SlemEncoder *self, float *y, float *x, size_t b) {
  EncJob j = {self, y, NULL, NULL, x};
  slem_blas_par_chunks(b, ENC_CHUNK, run_chunk, &j);
}

void slem_encoder_run_f64(SlemEncoder *self, double *y, const double *x, size_t b) {
  EncJob j = {self, NULL, y, x, NULL};
  slem_blas_par_chunks(b, ENC_CHUNK, run_chunk, &j);
}

int slem_encode_precision_parse(SlemPrecision *p, const char *name) {
  static const char *const names[] = {"auto", "single", "double"};
  for (int i = 0; i < 3; i++)
    if (strcmp(name, names[i]) == 0) {
      *p = (SlemPrecision)i;
      return SLEM_OK;
    }
  return SLEM_EINVAL;
}

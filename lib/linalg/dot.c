#define _POSIX_C_SOURCE 200809L
#include "dot.h"

#include <immintrin.h> /* SSE2 and, where the CPU has it, AVX */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

double slem_dot_f32(const float *a, const float *b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t l = 0;
  for (; l + 4 <= n; l += 4) {
    s0 += (double)a[l] * b[l];
    s1 += (double)a[l + 1] * b[l + 1];
    s2 += (double)a[l + 2] * b[l + 2];
    s3 += (double)a[l + 3] * b[l + 3];
  }
  for (; l < n; l++) s0 += (double)a[l] * b[l];
  return (s0 + s1) + (s2 + s3);
}

double slem_dot_f64(const double *a, const double *b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t l = 0;
  for (; l + 4 <= n; l += 4) {
    s0 += a[l] * b[l];
    s1 += a[l + 1] * b[l + 1];
    s2 += a[l + 2] * b[l + 2];
    s3 += a[l + 3] * b[l + 3];
  }
  for (; l < n; l++) s0 += a[l] * b[l];
  return (s0 + s1) + (s2 + s3);
}

/* Pairs of doubles (and fours where the CPU has AVX) of GCC's (and clang's) vector
 * extension: element-wise IEEE operations, lowered to what the target has. */
typedef double V2 __attribute__((vector_size(16)));
_Static_assert(SLEM_KLANES == 8, "the lanes below are written for 8");
typedef double V4 __attribute__((vector_size(32)));

static pthread_once_t lanes_once = PTHREAD_ONCE_INIT;
static int lanes_avx_ok, lanes_fma_ok;

/* AVX where the CPU has it, and fused multiply-adds for the float rows where it has AVX2
 * and FMA, unless SLEM_TEST_LANES=sse (SSE2 alone) or =avx (no FMA): the tests compare the
 * three ways. */
static void lanes_choose(void) {
  const char *t = getenv("SLEM_TEST_LANES");
  lanes_avx_ok = __builtin_cpu_supports("avx") && !(t && strcmp(t, "sse") == 0);
  lanes_fma_ok = lanes_avx_ok && __builtin_cpu_supports("avx2") &&
                 __builtin_cpu_supports("fma") && !(t && strcmp(t, "avx") == 0);
}

int slem_dot_lanes_avx(void) {
  pthread_once(&lanes_once, lanes_choose);
  return lanes_avx_ok;
}

int slem_dot_lanes_fma(void) {
  pthread_once(&lanes_once, lanes_choose);
  return lanes_fma_ok;
}

/* out[g] = slem_dot_f64(a, v_g, n) for the 8 vectors v_g side by side in vt: the same four
 * partial sums over l mod 4, the same tail and the same final additions, per lane; four
 * lanes at a time so that the sums stay in the 16 registers. */
static void dot_lanes_sse(const double *a, const double *vt, size_t n, double *out) {
  for (size_t h = 0; h < 8; h += 4) {
    V2 s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0}, s3 = {0, 0}, t0 = {0, 0}, t1 = {0, 0},
       t2 = {0, 0}, t3 = {0, 0}, y0, y1;
    size_t l = 0;
#define DOT_SSE_STEP(k, s, t)                    \
  do {                                           \
    V2 av = {a[l + k], a[l + k]};                \
    memcpy(&y0, vt + (l + k) * 8 + h, 16);       \
    memcpy(&y1, vt + (l + k) * 8 + h + 2, 16);   \
    s += av * y0, t += av * y1;                  \
  } while (0)
    for (; l + 4 <= n; l += 4) {
      DOT_SSE_STEP(0, s0, t0);
      DOT_SSE_STEP(1, s1, t1);
      DOT_SSE_STEP(2, s2, t2);
      DOT_SSE_STEP(3, s3, t3);
    }
    for (; l < n; l++) DOT_SSE_STEP(0, s0, t0);
#undef DOT_SSE_STEP
    s0 = (s0 + s1) + (s2 + s3);
    t0 = (t0 + t1) + (t2 + t3);
    memcpy(out + h, &s0, 16);
    memcpy(out + h + 2, &t0, 16);
  }
}

__attribute__((target("avx"))) static void dot_lanes_avx(const double *a, const double *vt,
                                                          size_t n, double *out) {
  V4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0, y0, y1;
  size_t l = 0;
#define DOT_AVX_STEP(k, s, t)                      \
  do {                                             \
    V4 av = {a[l + k], a[l + k], a[l + k], a[l + k]}; \
    memcpy(&y0, vt + (l + k) * 8, 32);             \
    memcpy(&y1, vt + (l + k) * 8 + 4, 32);         \
    s += av * y0, t += av * y1;                    \
  } while (0)
  for (; l + 4 <= n; l += 4) {
    DOT_AVX_STEP(0, s0, t0);
    DOT_AVX_STEP(1, s1, t1);
    DOT_AVX_STEP(2, s2, t2);
    DOT_AVX_STEP(3, s3, t3);
  }
  for (; l < n; l++) DOT_AVX_STEP(0, s0, t0);
#undef DOT_AVX_STEP
  s0 = (s0 + s1) + (s2 + s3);
  t0 = (t0 + t1) + (t2 + t3);
  memcpy(out, &s0, 32);
  memcpy(out + 4, &t0, 32);
}

void slem_dot_f64_lanes(const double *a, const double *vt, size_t n, double *out) {
  if (slem_dot_lanes_avx())
    dot_lanes_avx(a, vt, n, out);
  else
    dot_lanes_sse(a, vt, n, out);
}

/* out[r] = slem_dot_f32(a, b[r], n) for r < m <= SLEM_KLANES: per row, the four partial
 * sums over l mod 4 are four lanes (of one AVX register or two SSE2 ones), then the same
 * tail (in s0) and the same final additions; the products of two floats are exact in
 * double, so only the additions round, in the scalar order. Eight rows side by side so that eight independent sums hide
 * the latency of the additions (one row alone waits on its own four). Rows past m repeat
 * row 0 and are not written. */
static inline void dot_rows_tail(const float *a, const float *const *p, size_t m, size_t l,
                                 size_t n, const double *s, double *out) {
  for (size_t r = 0; r < m; r++) {
    double s0 = s[4 * r], s1 = s[4 * r + 1], s2 = s[4 * r + 2], s3 = s[4 * r + 3];
    for (size_t t = l; t < n; t++) s0 += (double)a[t] * p[r][t];
    out[r] = (s0 + s1) + (s2 + s3);
  }
}

/* SSE2: lanes 0-1 and 2-3 of each row's four sums in two registers, four rows at a time
 * (sixteen registers). */
static void dot_rows_sse(const float *a, const float *const *b, size_t m, size_t n, double *out) {
  const float *p[SLEM_KLANES];
  double s[4 * SLEM_KLANES];
  size_t l = 0;
  for (size_t r = 0; r < SLEM_KLANES; r++) p[r] = b[r < m ? r : 0];
  for (size_t h = 0; h < SLEM_KLANES; h += 4) {
    const float *p0 = p[h], *p1 = p[h + 1], *p2 = p[h + 2], *p3 = p[h + 3];
    __m128d l0 = _mm_setzero_pd(), l1 = l0, l2 = l0, l3 = l0, h0 = l0, h1 = l0, h2 = l0, h3 = l0;
    for (l = 0; l + 4 <= n; l += 4) {
      __m128 af = _mm_loadu_ps(a + l), bf;
      __m128d alo = _mm_cvtps_pd(af), ahi = _mm_cvtps_pd(_mm_movehl_ps(af, af));
#define DOT_ROWS_SSE(pr, lr, hr)                                               \
  do {                                                                         \
    bf = _mm_loadu_ps(pr + l);                                                 \
    lr = _mm_add_pd(lr, _mm_mul_pd(alo, _mm_cvtps_pd(bf)));                    \
    hr = _mm_add_pd(hr, _mm_mul_pd(ahi, _mm_cvtps_pd(_mm_movehl_ps(bf, bf)))); \
  } while (0)
      DOT_ROWS_SSE(p0, l0, h0);
      DOT_ROWS_SSE(p1, l1, h1);
      DOT_ROWS_SSE(p2, l2, h2);
      DOT_ROWS_SSE(p3, l3, h3);
#undef DOT_ROWS_SSE
    }
    _mm_storeu_pd(s + 4 * h, l0), _mm_storeu_pd(s + 4 * h + 2, h0);
    _mm_storeu_pd(s + 4 * h + 4, l1), _mm_storeu_pd(s + 4 * h + 6, h1);
    _mm_storeu_pd(s + 4 * h + 8, l2), _mm_storeu_pd(s + 4 * h + 10, h2);
    _mm_storeu_pd(s + 4 * h + 12, l3), _mm_storeu_pd(s + 4 * h + 14, h3);
  }
  dot_rows_tail(a, p, m, l, n, s, out);
}

/* The eight rows of 256-bit registers, each row's four sums in one register, written once
 * for the two targets: ACC(av, x, s) adds the products av * x to the sums s. */
#define DOT_ROWS_256(name, isa, ACC)                                                        \
  __attribute__((target(isa))) static void name(   const float *a, const float *const *b,  \
                                                   size_t m, size_t n, double *out) {      \
    const float *p[SLEM_KLANES];                                                            \
    double s[4 * SLEM_KLANES];                                                              \
    __m256d acc[SLEM_KLANES];                                                               \
    size_t l = 0;                                                                           \
    _Pragma("GCC unroll 8")                                                                 \
    for (size_t r = 0; r < SLEM_KLANES; r++) {                                              \
      p[r] = b[r < m ? r : 0];                                                              \
      acc[r] = _mm256_setzero_pd();                                                         \
    }                                                                                       \
    for (; l + 4 <= n; l += 4) {                                                            \
      __m256d av = _mm256_cvtps_pd(_mm_loadu_ps(a + l));                                    \
      _Pragma("GCC unroll 8") /* the sums stay in registers */                              \
      for (size_t r = 0; r < SLEM_KLANES; r++)                                              \
        acc[r] = ACC(av, _mm256_cvtps_pd(_mm_loadu_ps(p[r] + l)), acc[r]);                  \
    }                                                                                       \
    _Pragma("GCC unroll 8")                                                                 \
    for (size_t r = 0; r < SLEM_KLANES; r++) _mm256_storeu_pd(s + 4 * r, acc[r]);           \
    dot_rows_tail(a, p, m, l, n, s, out);                                                   \
  }

/* AVX: a multiply, then an add. */
#define DOT_ACC_AVX(av, x, s) _mm256_add_pd((s), _mm256_mul_pd((av), (x)))
DOT_ROWS_256(dot_rows_avx, "avx", DOT_ACC_AVX)

/* AVX2 with FMA: each product added by one fused multiply-add. The product of two floats
 * is exact in double, so round(p + s) is what the AVX loop's multiply then add gives: the
 * same bits, one instruction fewer per four products (the exact re-scoring of slem-match
 * spends its time here). */
#define DOT_ACC_FMA(av, x, s) _mm256_fmadd_pd((av), (x), (s))
DOT_ROWS_256(dot_rows_fma, "avx2,fma", DOT_ACC_FMA)

void slem_dot_f32_rows(const float *a, const float *const *b, size_t m, size_t n, double *out) {
  if (m == 0) return;
  if (slem_dot_lanes_fma())
    dot_rows_fma(a, b, m, n, out);
  else if (slem_dot_lanes_avx())
    dot_rows_avx(a, b, m, n, out);
  else
    dot_rows_sse(a, b, m, n, out);
}

void slem_dot_f32_at(const float *a, const float *x, size_t n, const size_t *j, size_t m,
                     double *out) {
  const float *rows[SLEM_KLANES] = {NULL};
  for (size_t r = 0; r < m; r++) rows[r] = x + j[r] * n;
  slem_dot_f32_rows(a, rows, m, n, out);
}


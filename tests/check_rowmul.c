/* The position-free products of lib/linalg/rowmul.c against their definition, written here
 * as a plain loop: each entry fma(x_il, b_lj, ...) over l in ascending order from zero, bit
 * for bit, with the AVX-512, AVX2 and scalar kernels (SLEM_TEST_LANES, read once per
 * process: each test is a fork); a row's result the same alone, at every offset of a block
 * and beside any rows; row-major and packed b alike; against a float64 product within
 * float32's rounding (the chain is a dot product, not something else). */
#include "testutil.h"

#include <math.h>

#include "../lib/linalg/rowmul.h"

static uint64_t rng = 88172645463325252ull;
static double unif(void) { /* xorshift64, in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* The definition, one entry at a time */
static void ref_f32(float *y, const float *x, size_t ldx, size_t m, const float *b, size_t ldb,
                    size_t k, size_t n) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float s = 0.0f;
      for (size_t l = 0; l < k; l++) s = fmaf(x[i * ldx + l], b[l * ldb + j], s);
      y[i * n + j] = s;
    }
}
static void ref_f64(double *y, const double *x, size_t ldx, size_t m, const double *b,
                    size_t ldb, size_t k, size_t n) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0.0;
      for (size_t l = 0; l < k; l++) s = fma(x[i * ldx + l], b[l * ldb + j], s);
      y[i * n + j] = s;
    }
}

/* Shapes around the tiles (MR 4, 6, 12; NR 8, 16, 32), the k block (512) and beyond. */
static const size_t ms[] = {1, 2, 5, 6, 7, 11, 12, 13, 25, 40};
static const size_t ks[] = {1, 3, 37, 64, 511, 512, 513, 1100};
static const size_t ns[] = {1, 5, 8, 15, 16, 17, 31, 32, 33, 37, 70};

static void equals_definition(void) {
  for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
    for (size_t c = 0; c < sizeof ks / sizeof *ks; c++)
      for (size_t e = 0; e < sizeof ns / sizeof *ns; e++) {
        size_t m = ms[a], k = ks[c], n = ns[e], ldx = k + 3, ldb = n + 2, ldy = n + 1;
        float *x = malloc(m * ldx * sizeof *x), *b = malloc(k * ldb * sizeof *b);
        float *y = malloc(m * ldy * sizeof *y), *r = malloc(m * n * sizeof *r);
        float *p = malloc(slem_rowmul_packed_len(k, n, 0) * sizeof *p);
        double *xd = malloc(m * ldx * sizeof *xd), *bd = malloc(k * ldb * sizeof *bd);
        double *yd = malloc(m * ldy * sizeof *yd), *rd = malloc(m * n * sizeof *rd);
        double *pd = malloc(slem_rowmul_packed_len(k, n, 1) * sizeof *pd);
        for (size_t i = 0; i < m * ldx; i++) x[i] = (float)(xd[i] = unif());
        for (size_t i = 0; i < k * ldb; i++) b[i] = (float)(bd[i] = unif());
        ref_f32(r, x, ldx, m, b, ldb, k, n);
        ref_f64(rd, xd, ldx, m, bd, ldb, k, n);
        for (int packed = 0; packed < 2; packed++) {
          for (size_t i = 0; i < m * ldy; i++) y[i] = NAN, yd[i] = NAN;
          if (packed) {
            slem_rowmul_pack_f32(p, b, ldb, k, n);
            slem_rowmul_pack_f64(pd, bd, ldb, k, n);
            slem_rowmul_packed_f32(y, ldy, x, ldx, m, p, k, n);
            slem_rowmul_packed_f64(yd, ldy, xd, ldx, m, pd, k, n);
          } else {
            slem_rowmul_f32(y, ldy, x, ldx, m, b, ldb, k, n);
            slem_rowmul_f64(yd, ldy, xd, ldx, m, bd, ldb, k, n);
          }
          for (size_t i = 0; i < m; i++) {
            ck_assert_msg(memcmp(y + i * ldy, r + i * n, n * sizeof *y) == 0,
                          "%s float32 m %zu k %zu n %zu packed %d: row %zu is not the chain",
                          slem_rowmul_kernel(), m, k, n, packed, i);
            ck_assert_msg(memcmp(yd + i * ldy, rd + i * n, n * sizeof *yd) == 0,
                          "%s float64 m %zu k %zu n %zu packed %d: row %zu is not the chain",
                          slem_rowmul_kernel(), m, k, n, packed, i);
            /* the padding of y beyond n is never written */
            ck_assert(isnan(y[i * ldy + n]) && isnan(yd[i * ldy + n]));
          }
        }
        free(x), free(b), free(y), free(r), free(p);
        free(xd), free(bd), free(yd), free(rd), free(pd);
      }
}

START_TEST(products_are_the_chain) { equals_definition(); }
END_TEST

START_TEST(products_are_the_chain_avx2) {
  setenv("SLEM_TEST_LANES", "avx2", 1);
  equals_definition();
  ck_assert(strcmp(slem_rowmul_kernel(), "avx512") != 0);
}
END_TEST

START_TEST(products_are_the_chain_scalar) {
  setenv("SLEM_TEST_LANES", "sse", 1);
  equals_definition();
  ck_assert_str_eq(slem_rowmul_kernel(), "scalar");
}
END_TEST

/* A matrix in double packed scaled to float32 is the float32 matrix packed. */
START_TEST(packing_scaled_is_packing_the_rounded) {
  size_t k = 70, n = 45, ld = 50;
  double *b = malloc(k * ld * sizeof *b), s = 1 / 3.0;
  float *bf = malloc(k * ld * sizeof *bf);
  size_t len = slem_rowmul_packed_len(k, n, 0);
  float *p = malloc(len * sizeof *p), *q = malloc(len * sizeof *q);
  for (size_t i = 0; i < k * ld; i++) bf[i] = (float)((b[i] = unif() * 1e3) * s);
  memset(p, 0xff, len * sizeof *p);
  memset(q, 0x7f, len * sizeof *q);
  slem_rowmul_pack_f32(p, bf, ld, k, n);
  slem_rowmul_pack_f32_scaled(q, b, ld, k, n, s);
  ck_assert(memcmp(p, q, len * sizeof *p) == 0);
  free(b), free(bf), free(p), free(q);
}
END_TEST

/* One row at every offset 0 .. 299 of a block of random rows, and alone: the same bits. */
START_TEST(a_row_does_not_depend_on_its_place) {
  size_t d = 96, m = 300;
  float *x = malloc(m * d * sizeof *x), *b = malloc(d * d * sizeof *b), *v = malloc(d * sizeof *v);
  float *y = malloc(m * d * sizeof *y), *alone = malloc(d * sizeof *alone);
  for (size_t i = 0; i < d * d; i++) b[i] = (float)unif();
  for (size_t l = 0; l < d; l++) v[l] = (float)unif();
  slem_rowmul_f32(alone, d, v, d, 1, b, d, d, d);
  for (size_t o = 0; o < m; o++) {
    for (size_t i = 0; i < m * d; i++) x[i] = (float)unif();
    memcpy(x + o * d, v, d * sizeof *v);
    slem_rowmul_f32(y, d, x, d, m, b, d, d, d);
    ck_assert_msg(memcmp(y + o * d, alone, d * sizeof *y) == 0, "row at offset %zu", o);
  }
  free(x), free(b), free(v), free(y), free(alone);
}
END_TEST

/* The chain is the dot product: within k float32 roundings of the float64 product. */
START_TEST(products_agree_with_float64) {
  size_t m = 20, k = 700, n = 45;
  float *x = malloc(m * k * sizeof *x), *b = malloc(k * n * sizeof *b);
  float *y = malloc(m * n * sizeof *y);
  for (size_t i = 0; i < m * k; i++) x[i] = (float)unif();
  for (size_t i = 0; i < k * n; i++) b[i] = (float)unif();
  slem_rowmul_f32(y, n, x, k, m, b, n, k, n);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0, sa = 0;
      for (size_t l = 0; l < k; l++) {
        s += (double)x[i * k + l] * b[l * n + j];
        sa += fabs((double)x[i * k + l] * b[l * n + j]);
      }
      ck_assert_msg(fabs(y[i * n + j] - s) <= k * 6e-8 * sa, "(%zu, %zu): %g, float64 %g", i, j,
                    y[i * n + j], s);
    }
  free(x), free(b), free(y);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rowmul");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, products_are_the_chain);
  tcase_add_test(tc, products_are_the_chain_avx2);
  tcase_add_test(tc, products_are_the_chain_scalar);
  tcase_add_test(tc, packing_scaled_is_packing_the_rounded);
  tcase_add_test(tc, a_row_does_not_depend_on_its_place);
  tcase_add_test(tc, products_agree_with_float64);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)

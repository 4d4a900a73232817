/* Helpers shared by the Check tests: a deterministic RNG, temporary files, small writers
 * that do not go through the code under test. */
#ifndef SLEM_TESTUTIL_H
#define SLEM_TESTUTIL_H

#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* splitmix64: the same stream on every machine */
static uint64_t tu_state = 0x9E3779B97F4A7C15ull;
static inline void tu_seed(uint64_t s) { tu_state = s; }
static inline uint64_t tu_next(void) {
  uint64_t z = (tu_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double tu_uniform(void) { return (double)(tu_next() >> 11) / 9007199254740992.0; }
static inline double tu_gauss(void) {
  double u = tu_uniform(), v = tu_uniform();
  return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* x(n, d): correlated Gaussian rows, x = z M^T + offset, M with unequal scales. */
static inline void tu_gaussian_rows(double *x, size_t n, size_t d, double offset) {
  double *m = malloc(d * d * sizeof *m);
  for (size_t i = 0; i < d * d; i++) m[i] = tu_gauss() * (0.2 + (double)(i % d) / (double)d);
  for (size_t r = 0; r < n; r++) {
    double z[512];
    for (size_t j = 0; j < d; j++) z[j] = tu_gauss();
    for (size_t i = 0; i < d; i++) {
      double s = offset;
      for (size_t j = 0; j < d; j++) s += m[i * d + j] * z[j];
      x[r * d + i] = s;
    }
  }
  free(m);
}

/* A fresh temporary directory's path + name; the caller frees it. */
static inline char *tu_path(const char *name) {
  static char dir[64];
  char *p;
  if (!dir[0]) {
    strcpy(dir, "/tmp/slem-test.XXXXXX");
    if (!mkdtemp(dir)) abort();
  }
  p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

static inline void tu_write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(p, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
}

/* fvecs written by hand: int32 d, then d float32 per row. */
static inline void tu_write_fvecs(const char *path, const double *x, size_t n, size_t d) {
  FILE *f = fopen(path, "wb");
  int32_t d32 = (int32_t)d;
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++) {
    fwrite(&d32, 4, 1, f);
    for (size_t j = 0; j < d; j++) {
      float v = (float)x[i * d + j];
      fwrite(&v, 4, 1, f);
    }
  }
  ck_assert_int_eq(fclose(f), 0);
}

static inline int tu_file_exists(const char *path) { return access(path, F_OK) == 0; }

/* 1 - cos(a, b) */
static inline double tu_one_minus_cos(const double *a, const double *b, size_t d) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t j = 0; j < d; j++) ab += a[j] * b[j], aa += a[j] * a[j], bb += b[j] * b[j];
  return 1 - ab / sqrt(aa * bb);
}

#define TU_RUN(suite_fn)                                        \
  int main(void) {                                              \
    SRunner *sr = srunner_create(suite_fn());                   \
    int nf;                                                     \
    srunner_run_all(sr, CK_NORMAL);                             \
    nf = srunner_ntests_failed(sr);                             \
    srunner_free(sr);                                           \
    return nf == 0 ? 0 : 1;                                     \
  }

#endif

/* The machine's BLAS peaks, measured through the same OpenBLAS that slem links: the
 * best of several runs of dgemm, sgemm and dsyrk at a given size, in GFLOP/s (a
 * multiply-add counts 2). Prints "name gflops" lines and the OpenBLAS core and threads.
 * Usage: probe [N] (default 2048)
 *        probe read FILE...   the best rate of reading each FILE with read(2) through a
 *                             1 MiB buffer, after a first read that brings it into the page
 *                             cache: "read GB/s" (the bandwidth term of the roofline) */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <gsl/gsl_cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char *openblas_get_corename(void) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Bytes of path read per second, best of reps reads after one warm-up read; 0 on error. */
static double read_rate(const char *path, int reps) {
  static char buf[1 << 20];
  double best = 0;
  for (int r = 0; r <= reps; r++) {
    double t0 = now(), bytes = 0;
    ssize_t got;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    while ((got = read(fd, buf, sizeof buf)) > 0) bytes += (double)got;
    close(fd);
    if (got < 0) return 0;
    if (r > 0 && bytes / (now() - t0) > best) best = bytes / (now() - t0);
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "read") == 0) {
    double total = 0, secs = 0;
    for (int i = 2; i < argc; i++) {
      FILE *f = fopen(argv[i], "rb");
      double rate = read_rate(argv[i], 5);
      long size;
      if (!f || rate <= 0) return 1;
      fseek(f, 0, SEEK_END);
      size = ftell(f);
      fclose(f);
      total += (double)size;
      secs += (double)size / rate;
    }
    printf("read %.2f\n", total / secs / 1e9);
    return 0;
  }
  int n = argc > 1 ? atoi(argv[1]) : 2048, k = 4096, reps = 5;
  double *a = malloc((size_t)n * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b),
         *c = malloc((size_t)n * n * sizeof *c), best[3] = {0, 0, 0};
  float *af = malloc((size_t)n * k * sizeof *af), *bf = malloc((size_t)k * n * sizeof *bf),
        *cf = malloc((size_t)n * n * sizeof *cf);
  if (!a || !b || !c || !af || !bf || !cf) return 1;
  for (size_t i = 0; i < (size_t)n * k; i++) {
    a[i] = b[i] = (double)(i % 17) / 17 - 0.5;
    af[i] = bf[i] = (float)a[i];
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now(), g;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, k, 1.0, a, k, b, n, 0.0, c, n);
    g = 2.0 * n * n * k / (now() - t0) / 1e9;
    if (g > best[0]) best[0] = g;
    t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, k, 1.0f, af, k, bf, n, 0.0f, cf, n);
    g = 2.0 * n * n * k / (now() - t0) / 1e9;
    if (g > best[1]) best[1] = g;
    /* C(n, n) += A^T A with A (k, n): the shape of slem-negstats' accumulation */
    t0 = now();
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, n, k, 1.0, a, n, 0.0, c, n);
    g = 1.0 * n * (n + 1) * k / (now() - t0) / 1e9;
    if (g > best[2]) best[2] = g;
  }
  printf("dgemm %.2f\nsgemm %.2f\ndsyrk %.2f\n", best[0], best[1], best[2]);
  printf("core %s\nthreads %d\n", openblas_get_corename ? openblas_get_corename() : "unknown",
         openblas_get_num_threads ? openblas_get_num_threads() : 0);
  return 0;
}

#define _GNU_SOURCE
#include <dlfcn.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "blas.h"

/* Declared by OpenBLAS; weak so that a build against another CBLAS still links. */
extern void openblas_set_num_threads(int) __attribute__((weak));
extern char *openblas_get_corename(void) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));

const char *slem_blas_library(void) {
  Dl_info info;
  void *sym = dlsym(RTLD_DEFAULT, "cblas_dgemm");
  if (sym && dladdr(sym, &info) && info.dli_fname) return info.dli_fname;
  return "unknown";
}

void slem_blas_set_threads(int n) {
  if (n > 0 && openblas_set_num_threads) openblas_set_num_threads(n);
}

void slem_blas_warm(void) {
  enum { N = 512 };
  double *a = calloc((size_t)3 * N * N, sizeof *a);
  if (!a) return;
  /* large enough for every BLAS thread to take part, and so to get its buffer */
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, a + N * N, N, 0.0,
              a + 2 * N * N, N);
  free(a);
}

int slem_blas_threads(void) {
  return openblas_get_num_threads ? openblas_get_num_threads() : 1;
}

#define PAR_MAX 64

typedef struct ParJob {
  size_t n, chunk, nchunks, stride, first;
  void (*fn)(void *, size_t, size_t);
  void *ctx;
} ParJob;

/* Chunks first, first + stride, ...: a fixed share, so that no lock is needed. */
static void *par_worker(void *arg) {
  const ParJob *job = arg;
  for (size_t c = job->first; c < job->nchunks; c += job->stride) {
    size_t lo = c * job->chunk, hi = lo + job->chunk < job->n ? lo + job->chunk : job->n;
    job->fn(job->ctx, lo, hi);
  }
  return NULL;
}

/* Whether the process runs under an address-space limit (slem_blas_par_chunks()). */
static pthread_once_t as_once = PTHREAD_ONCE_INIT;
static int as_limited;
static void as_probe(void) {
  struct rlimit rl;
  as_limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

void slem_blas_par_chunks(size_t n, size_t chunk, void (*fn)(void *ctx, size_t lo, size_t hi),
                     void *ctx) {
  int threads = slem_blas_threads();
  size_t nchunks = chunk ? (n + chunk - 1) / chunk : 0, nt = (size_t)threads;
  ParJob job[PAR_MAX];
  pthread_t tid[PAR_MAX];
  size_t started = 0;
  if (nchunks == 0) return;
  if (nt > PAR_MAX) nt = PAR_MAX;
  if (nt > nchunks) nt = nchunks;
  pthread_once(&as_once, as_probe);
  if (as_limited) nt = 1; /* no new thread asks OpenBLAS for a buffer (blas.h) */
  if (nt <= 1) { /* the same chunks, on this thread, with the BLAS on one thread */
    if (threads > 1) slem_blas_set_threads(1);
    for (size_t c = 0; c < nchunks; c++) fn(ctx, c * chunk, c * chunk + chunk < n ? c * chunk + chunk : n);
    if (threads > 1) slem_blas_set_threads(threads);
    return;
  }
  slem_blas_set_threads(1);
  for (size_t t = 0; t < nt; t++) job[t] = (ParJob){n, chunk, nchunks, nt, t, fn, ctx};
  for (size_t t = 1; t < nt; t++, started++)
    if (pthread_create(&tid[t - 1], NULL, par_worker, &job[t]) != 0) break;
  for (size_t t = started + 1; t < nt; t++) par_worker(&job[t]); /* threads that did not start */
  par_worker(&job[0]);
  for (size_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
  slem_blas_set_threads(threads);
}

const char *slem_blas_corename(void) {
  return openblas_get_corename ? openblas_get_corename() : "unknown";
}

/* The core the choice below starts from: OpenBLAS's, or SLEM_TEST_BLAS_CORE in tests. */
const char *slem_blas_detected_core(void) {
  const char *test = getenv("SLEM_TEST_BLAS_CORE");
  return test && *test ? test : slem_blas_corename();
}

/* The OpenBLAS x86-64 cores whose kernels use AVX2 and FMA (or AVX-512). Any other core
 * on a CPU that has those instructions leaves a factor of 2 to 7 on the table. */
static const char *const vector_cores[] = {"haswell",  "zen",        "skylakex",
                                           "cooperlake", "sapphirerapids", NULL};

const char *slem_blas_better_core(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  const char *core = slem_blas_detected_core();
  char lower[64];
  size_t i;
  for (i = 0; core[i] && i + 1 < sizeof lower; i++)
    lower[i] = (char)(core[i] >= 'A' && core[i] <= 'Z' ? core[i] - 'A' + 'a' : core[i]);
  lower[i] = 0;
  for (i = 0; vector_cores[i]; i++)
    if (strcmp(lower, vector_cores[i]) == 0) return NULL;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return NULL;
}

static void gsl_quiet(void) { gsl_set_error_handler_off(); }

void slem_blas_gsl_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, gsl_quiet);
}

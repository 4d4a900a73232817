#define _GNU_SOURCE
#include <dlfcn.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

static void pool_set_threads(int n);

void slem_blas_set_threads(int n) {
  if (n <= 0) return;
  pool_set_threads(n); /* while the pool runs: its count, the BLAS staying on one thread */
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

/* OpenBLAS's pthread build exports these (not in its headers): the environment read again,
 * and its pool of threads stopped and started, which is when the pool takes the timeout.
 * Looked up at run time, so that another build (OpenMP, another CBLAS) only skips it. */
int slem_blas_restart_pool(void) {
  void (*read_env)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "openblas_read_env");
  int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
  int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_init");
  if (!read_env || !shutdown || !init) return 0;
  read_env();
  shutdown();
  init();
  return 1;
}

/* A pool of threads that outlives the calls (slem_blas_pool_begin()): its jobs in the order
 * they came, each a ParJob's units with the counters below under the pool's lock. */
typedef struct PoolJob {
  size_t n, unit, nunits, next, done;
  size_t limit; /* the workers that may take its units: those numbered below */
  SlemParUnitFn fn;
  void *ctx;
  struct PoolJob *link;
} PoolJob;

#define PAR_MAX 64

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  PoolJob *head;
  pthread_t tid[PAR_MAX];
  size_t workers;
  int stop;
  atomic_int threads; /* the BLAS's count before the pool, restored after it */
  atomic_int active; /* 1 between slem_blas_pool_begin() and slem_blas_pool_end() */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
            .done = PTHREAD_COND_INITIALIZER};

/* slem_blas_set_threads(): while the pool runs, the count that slem_blas_threads() tells
 * (and the pool restores at its end) changes, and OpenBLAS stays on one thread, so that
 * code saving the count, setting 1 and restoring it never gives the pool's threads a
 * multi-threaded BLAS. */
static void pool_set_threads(int n) {
  if (atomic_load(&pool.active)) pool.threads = n;
  else if (openblas_set_num_threads) openblas_set_num_threads(n);
}

/* Set on the pool's threads: a unit that asks for units itself runs them in place. */
static _Thread_local int on_pool_thread;

int slem_blas_threads(void) {
  if (atomic_load(&pool.active)) return pool.threads;
  return openblas_get_num_threads ? openblas_get_num_threads() : 1;
}

/* Units are taken from one shared counter, in increasing order: a thread that finishes
 * early takes the next unit, and no unit's numbers depend on which thread ran it. */
typedef struct ParJob {
  size_t n, unit, nunits;
  atomic_size_t next;
  SlemParUnitFn fn;
  void *ctx;
} ParJob;

typedef struct ParWorker {
  ParJob *job;
  size_t id;
} ParWorker;

static void *par_worker(void *arg) {
  const ParWorker *w = arg;
  ParJob *job = w->job;
  for (;;) {
    size_t u = atomic_fetch_add(&job->next, 1), lo, hi;
    if (u >= job->nunits) break;
    lo = u * job->unit;
    hi = lo + job->unit < job->n ? lo + job->unit : job->n;
    job->fn(job->ctx, w->id, lo, hi);
  }
  return NULL;
}

/* Whether the process runs under an address-space limit (slem_blas_par_units()). */
static pthread_once_t as_once = PTHREAD_ONCE_INIT;
static int as_limited;
static void as_probe(void) {
  struct rlimit rl;
  as_limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

size_t slem_blas_par_workers(void) {
  size_t nt = (size_t)slem_blas_threads();
  pthread_once(&as_once, as_probe);
  if (as_limited || nt < 1) return 1; /* no new thread asks OpenBLAS for a buffer (blas.h) */
  return nt > PAR_MAX ? PAR_MAX : nt;
}

static void *pool_worker(void *arg) {
  size_t id = (size_t)(uintptr_t)arg;
  on_pool_thread = 1;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    PoolJob *j = pool.head;
    size_t u, lo, hi;
    while (j && (j->next >= j->nunits || id >= j->limit)) j = j->link;
    if (!j) {
      if (pool.stop) break;
      pthread_cond_wait(&pool.work, &pool.mu);
      continue;
    }
    u = j->next++;
    pthread_mutex_unlock(&pool.mu);
    lo = u * j->unit;
    hi = lo + j->unit < j->n ? lo + j->unit : j->n;
    j->fn(j->ctx, id, lo, hi);
    pthread_mutex_lock(&pool.mu);
    if (++j->done == j->nunits) pthread_cond_broadcast(&pool.done);
  }
  pthread_mutex_unlock(&pool.mu);
  return NULL;
}

/* The units of one call on the pool: queued behind the jobs already there, and waited for.
 * The caller takes none, so that the pool's threads are the only ones computing however
 * many callers wait. */
static void pool_run(size_t n, size_t unit, size_t nunits, SlemParUnitFn fn, void *ctx) {
  PoolJob job = {n, unit, nunits, 0, 0, slem_blas_par_workers(), fn, ctx, NULL}, **at;
  pthread_mutex_lock(&pool.mu);
  for (at = &pool.head; *at; at = &(*at)->link) {}
  *at = &job;
  pthread_cond_broadcast(&pool.work);
  while (job.done < job.nunits) pthread_cond_wait(&pool.done, &pool.mu);
  for (at = &pool.head; *at != &job; at = &(*at)->link) {}
  *at = job.link;
  pthread_mutex_unlock(&pool.mu);
}

/* Stops the pool's threads and waits for them. */
static void pool_join(void) {
  pthread_mutex_lock(&pool.mu);
  pool.stop = 1;
  pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.mu);
  for (size_t t = 0; t < pool.workers; t++) pthread_join(pool.tid[t], NULL);
  pool.workers = 0;
}

int slem_blas_pool_begin(void) {
  size_t nt = slem_blas_par_workers();
  if (atomic_load(&pool.active) || nt < 2) return 0;
  pool.threads = slem_blas_threads();
  pool.stop = 0;
  pool.head = NULL;
  for (pool.workers = 0; pool.workers < nt; pool.workers++)
    if (pthread_create(&pool.tid[pool.workers], NULL, pool_worker,
                       (void *)(uintptr_t)pool.workers) != 0)
      break;
  if (pool.workers < nt) { /* ids must cover what callers size their scratch by */
    pool_join();
    return 0;
  }
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  atomic_store(&pool.active, 1);
  return 1;
}

void slem_blas_pool_end(void) {
  if (!atomic_load(&pool.active)) return;
  atomic_store(&pool.active, 0);
  slem_blas_set_threads(pool.threads);
  pool_join();
}

void slem_blas_par_units(size_t n, size_t unit, SlemParUnitFn fn, void *ctx) {
  int threads = slem_blas_threads();
  size_t nunits = unit ? (n + unit - 1) / unit : 0, nt = slem_blas_par_workers();
  ParJob job;
  ParWorker w[PAR_MAX];
  pthread_t tid[PAR_MAX];
  size_t started = 0;
  if (nunits == 0) return;
  if (on_pool_thread) { /* a unit's own units, on its thread (the pool's are taken) */
    for (size_t u = 0; u < nunits; u++)
      fn(ctx, 0, u * unit, (u + 1) * unit < n ? (u + 1) * unit : n);
    return;
  }
  if (atomic_load(&pool.active)) {
    pool_run(n, unit, nunits, fn, ctx);
    return;
  }
  if (nt > nunits) nt = nunits;
  job.n = n;
  job.unit = unit;
  job.nunits = nunits;
  atomic_init(&job.next, 0);
  job.fn = fn;
  job.ctx = ctx;
  /* the same units on every thread count, each calling the BLAS single-threaded */
  if (threads > 1) slem_blas_set_threads(1);
  for (size_t t = 0; t < nt; t++) w[t] = (ParWorker){&job, t};
  for (size_t t = 1; t < nt; t++, started++)
    if (pthread_create(&tid[t - 1], NULL, par_worker, &w[t]) != 0) break;
  par_worker(&w[0]); /* units left by threads that did not start are taken here */
  for (size_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
  if (threads > 1) slem_blas_set_threads(threads);
}

typedef struct ChunkCtx {
  void (*fn)(void *, size_t, size_t);
  void *ctx;
} ChunkCtx;

static void chunk_unit(void *ctx, size_t worker, size_t lo, size_t hi) {
  const ChunkCtx *c = ctx;
  (void)worker;
  c->fn(c->ctx, lo, hi);
}

void slem_blas_par_chunks(size_t n, size_t chunk, void (*fn)(void *ctx, size_t lo, size_t hi),
                     void *ctx) {
  ChunkCtx c = {fn, ctx};
  slem_blas_par_units(n, chunk, chunk_unit, &c);
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

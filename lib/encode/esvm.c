#define _GNU_SOURCE /* dlsym(RTLD_DEFAULT) */
#include "esvm.h"
#include "esvm_rand.h"

#include <dlfcn.h>
#include <limits.h>
#include <linear.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- LIBLINEAR's rand(): one generator per thread when esvm_rand.c is linked ---- */

#define ESVM_SEED 0x5eed5eedU
#define ESVM_EPS_MAX 0.1 /* LIBLINEAR's own default for the dual solvers */

/* weak: esvm_rand.o is linked into some programs only (esvm_rand.h), NULL in the others */
#pragma weak slem_esvm_rand
#pragma weak slem_esvm_rand_seed

static _Thread_local int maxiter_hit;

static int rand_bound = -1; /* 1 when LIBLINEAR's rand() is slem_esvm_rand() */
static void (*reseed)(unsigned) = srand;
static pthread_once_t rand_once = PTHREAD_ONCE_INIT;

static void check_rand_binding(void) {
  int (*ours)(void) = slem_esvm_rand;
  void *mine, *global = dlsym(RTLD_DEFAULT, "rand");
  memcpy(&mine, &ours, sizeof mine);
  rand_bound = ours != NULL && slem_esvm_rand_seed != NULL && global == mine;
  /* per thread when bound; else the C library's one generator, under the lock */
  reseed = rand_bound ? slem_esvm_rand_seed : srand;
}

int slem_esvm_parallel_rand(void) {
  pthread_once(&rand_once, check_rand_binding);
  return rand_bound;
}

/* LIBLINEAR prints through this callback only: nothing reaches the terminal, and the
 * one message that matters, the iteration limit, is noted for the thread that trains. */
static void liblinear_print(const char *s) {
  if (strstr(s, "max number of iterations")) maxiter_hit = 1;
}

static char liblinear_name[128];
static pthread_once_t liblinear_once = PTHREAD_ONCE_INIT;

static void name_liblinear(void) {
  snprintf(liblinear_name, sizeof liblinear_name,
           "LIBLINEAR %d.%02d (liblinear_version %d; dual coordinate descent)",
           liblinear_version / 100, liblinear_version % 100, liblinear_version);
}

const char *slem_esvm_liblinear(void) {
  pthread_once(&liblinear_once, name_liblinear);
  return liblinear_name;
}

/* ---- the shared problem ---- */

struct SlemEsvm {
  SlemEsvmOpts opts;
  size_t d, n;
  struct parameter param;
  int weight_label[1];
  double weight[1];
  struct feature_node *pool; /* every negative's sparse row, terminated by index -1 */
  struct feature_node **neg; /* n pointers into pool */
  double *y;                 /* +1, then n times -1 */
  int threads;
  int parallel;              /* rand() bound per thread: train concurrently */
  pthread_mutex_t serial;    /* otherwise one train() at a time, under srand() */
  uint64_t zeros, loosened, unconverged;
  uint64_t seen;                  /* vectors given to run() so far */
  uint64_t first_zero, first_loosened; /* their indices, UINT64_MAX: none */
};

void slem_esvm_opts_init(SlemEsvmOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->C = 1;
  opts->pos_weight = 1;
  opts->loss = SLEM_ESVM_HINGE;
  opts->bias = 1;
  opts->eps = 1e-4;
  opts->classifier = 0;
  opts->threads = 0;
}

/* Appends x(d) as a sparse row (zeros left out), the bias node, the terminator. */
static size_t sparse_row(struct feature_node *dst, const double *x, size_t d, double bias) {
  size_t k = 0;
  for (size_t j = 0; j < d; j++)
    if (x[j] != 0) {
      dst[k].index = (int)j + 1;
      dst[k++].value = x[j];
    }
  if (bias > 0) {
    dst[k].index = (int)d + 1;
    dst[k++].value = bias;
  }
  dst[k].index = -1;
  dst[k++].value = 0;
  return k;
}

int slem_esvm_new(SlemEsvm **out, SlemVecReader *r, const SlemEsvmOpts *opts,
                  SlemError *err) {
  SlemEsvm *self = NULL;
  double *block = NULL;
  size_t *start = NULL, cap = 0, used = 0, scap = 0;
  size_t d = slem_vecreader_dim(r), rows = slem_block_rows(d);
  int status = SLEM_OK;
  const char *msg;

  *out = NULL;
  if (!(opts->C > 0) || !(opts->pos_weight > 0) || !(opts->eps > 0) || !(opts->bias >= 0) ||
      !isfinite(opts->C) || !isfinite(opts->pos_weight) || !isfinite(opts->bias))
    return slem_error(err, SLEM_EINVAL,
                      "C (%g), the positive's weight (%g) and the tolerance (%g) must be "
                      "positive and the bias (%g) non-negative",
                      opts->C, opts->pos_weight, opts->eps, opts->bias);
  if (d > (size_t)INT_MAX - 2)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu is too large for LIBLINEAR",
                      slem_vecreader_name(r), d);
  self = calloc(1, sizeof *self);
  block = malloc(rows * d * sizeof *block);
  if (!self || !block) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for the negatives");
    goto cleanup;
  }
  self->opts = *opts;
  self->d = d;
  self->first_zero = self->first_loosened = UINT64_MAX;
  pthread_mutex_init(&self->serial, NULL);

  for (;;) {
    size_t got;
    if ((status = slem_vecreader_read(r, block, rows, &got, err)) != SLEM_OK) goto cleanup;
    if (got == 0) break;
    if (self->n + got > (size_t)INT_MAX - 1) {
      status = slem_error(err, SLEM_EFORMAT, "%s: more than %d negatives, LIBLINEAR's limit",
                          slem_vecreader_name(r), INT_MAX - 2);
      goto cleanup;
    }
    for (size_t i = 0; i < got; i++) {
      if (used + d + 2 > cap || self->n + 1 > scap) {
        size_t ncap = cap ? 2 * cap : (d + 2) * 256, nscap = scap ? 2 * scap : 256;
        struct feature_node *p;
        size_t *s;
        while (ncap < used + d + 2) ncap *= 2;
        p = realloc(self->pool, ncap * sizeof *p);
        if (p) self->pool = p;
        s = realloc(start, nscap * sizeof *s);
        if (s) start = s;
        if (!p || !s) {
          status = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives", self->n);
          goto cleanup;
        }
        cap = ncap;
        scap = nscap;
      }
      start[self->n++] = used;
      used += sparse_row(self->pool + used, block + i * d, d, opts->bias);
    }
  }
  if (self->n == 0) {
    status = slem_error(err, SLEM_EFORMAT, "%s: no negatives", slem_vecreader_name(r));
    goto cleanup;
  }
  self->neg = malloc(self->n * sizeof *self->neg);
  self->y = malloc((self->n + 1) * sizeof *self->y);
  if (!self->neg || !self->y) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives", self->n);
    goto cleanup;
  }
  for (size_t i = 0; i < self->n; i++) self->neg[i] = self->pool + start[i];
  self->y[0] = 1;
  for (size_t i = 1; i <= self->n; i++) self->y[i] = -1;

  self->param.solver_type =
      opts->loss == SLEM_ESVM_HINGE ? L2R_L1LOSS_SVC_DUAL : L2R_L2LOSS_SVC_DUAL;
  self->param.eps = opts->eps;
  self->param.C = opts->C;
  self->param.nr_weight = 1;
  self->weight_label[0] = 1;
  self->weight[0] = opts->pos_weight;
  self->param.weight_label = self->weight_label;
  self->param.weight = self->weight;
  self->param.p = 0.1;
  self->param.init_sol = NULL;
  {
    struct problem prob = {.l = (int)self->n, .n = (int)d + (opts->bias > 0), .y = self->y + 1,
                           .x = self->neg, .bias = opts->bias > 0 ? opts->bias : -1};
    if ((msg = check_parameter(&prob, &self->param)) != NULL) {
      status = slem_error(err, SLEM_EINVAL, "LIBLINEAR refuses the parameters: %s", msg);
      goto cleanup;
    }
  }
  set_print_string_function(liblinear_print);
  self->parallel = slem_esvm_parallel_rand();
  if (opts->threads > 0) self->threads = opts->threads;
  else {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    self->threads = c > 0 ? (int)(c < 256 ? c : 256) : 1;
  }
  *out = self;
  self = NULL;
cleanup:
  slem_esvm_free(self);
  free(block);
  free(start);
  return status;
}

void slem_esvm_free(SlemEsvm *self) {
  if (!self) return;
  pthread_mutex_destroy(&self->serial);
  free(self->pool);
  free(self->neg);
  free(self->y);
  free(self);
}

size_t slem_esvm_dim(const SlemEsvm *self) { return self->d; }
size_t slem_esvm_negatives(const SlemEsvm *self) { return self->n; }
size_t slem_esvm_out_dim(const SlemEsvm *self) { return self->d + (self->opts.classifier != 0); }
int slem_esvm_threads(const SlemEsvm *self) { return self->threads; }
uint64_t slem_esvm_zeros(const SlemEsvm *self) { return self->zeros; }
uint64_t slem_esvm_unconverged(const SlemEsvm *self) { return self->unconverged; }
uint64_t slem_esvm_loosened(const SlemEsvm *self) { return self->loosened; }
uint64_t slem_esvm_first_zero(const SlemEsvm *self) { return self->first_zero; }
uint64_t slem_esvm_first_loosened(const SlemEsvm *self) { return self->first_loosened; }

/* ---- training, one problem per positive, on worker threads ---- */

typedef struct Job {
  SlemEsvm *self;
  const double *x;
  size_t m;
  float *yf;
  double *yd;
  pthread_mutex_t lock; /* guards next, status, zeros, unconverged */
  size_t next;
  int status;
  uint64_t zeros, loosened, unconverged;
  uint64_t first_zero, first_loosened; /* indices in this run, UINT64_MAX: none */
} Job;

/* Trains the exemplar x0 with the worker's buffers; w(d + 1) receives w and b. When
 * LIBLINEAR stops at its iteration limit (1000 passes in 2.3) the problem is solved again
 * at ten times the tolerance, up to ESVM_EPS_MAX: *loosened tells that it happened,
 * *unconverged that even ESVM_EPS_MAX was not met. Returns SLEM_OK, or SLEM_ENOMEM when
 * LIBLINEAR returned no model. */
static int train_exemplar(SlemEsvm *self, struct feature_node **xs, struct feature_node *pos,
                          const double *x0, double *w, int *loosened, int *unconverged) {
  struct problem prob;
  struct parameter param;
  struct model *model;
  int labels[2], li, hit, status = SLEM_OK;
  size_t d = self->d;

  sparse_row(pos, x0, d, self->opts.bias);
  xs[0] = pos;
  prob.l = (int)self->n + 1;
  prob.n = (int)d + (self->opts.bias > 0);
  prob.y = self->y;
  prob.x = xs;
  prob.bias = self->opts.bias > 0 ? self->opts.bias : -1;
  param = self->param;
  for (;;) {
    if (!self->parallel) pthread_mutex_lock(&self->serial);
    reseed(ESVM_SEED);
    maxiter_hit = 0;
    model = train(&prob, &param);
    hit = maxiter_hit;
    if (!self->parallel) pthread_mutex_unlock(&self->serial);
    if (!model || !hit || param.eps >= ESVM_EPS_MAX) break;
    /* capped: a solution that met a looser tolerance beats one stopped anywhere */
    free_and_destroy_model(&model);
    param.eps = param.eps * 10 < ESVM_EPS_MAX ? param.eps * 10 : ESVM_EPS_MAX;
    *loosened = 1;
  }
  *unconverged = hit;
  if (!model) return SLEM_ENOMEM;
  get_labels(model, labels);
  li = labels[0] == 1 ? 0 : 1;
  for (size_t j = 0; j < d; j++) w[j] = get_decfun_coef(model, (int)j + 1, li);
  w[d] = get_decfun_bias(model, li);
  free_and_destroy_model(&model);
  return status;
}

static void *worker(void *arg) {
  Job *job = arg;
  SlemEsvm *self = job->self;
  size_t d = self->d, od = slem_esvm_out_dim(self);
  struct feature_node **xs = malloc((self->n + 1) * sizeof *xs);
  struct feature_node *pos = malloc((d + 2) * sizeof *pos);
  double *w = malloc((d + 1) * sizeof *w);
  int status = xs && pos && w ? SLEM_OK : SLEM_ENOMEM;

  if (xs) memcpy(xs + 1, self->neg, self->n * sizeof *xs);
  for (;;) {
    size_t i;
    int loose = 0, unconv = 0, zero;
    double nrm = 0, scale;
    pthread_mutex_lock(&job->lock);
    if (status != SLEM_OK && job->status == SLEM_OK) job->status = status;
    i = job->status == SLEM_OK ? job->next++ : job->m;
    pthread_mutex_unlock(&job->lock);
    if (i >= job->m) break;
    status = train_exemplar(self, xs, pos, job->x + i * d, w, &loose, &unconv);
    if (status != SLEM_OK) continue;
    for (size_t j = 0; j < d; j++) nrm += w[j] * w[j];
    nrm = sqrt(nrm);
    zero = !(nrm > 0);
    scale = self->opts.classifier || zero ? 1 : 1 / nrm;
    if (zero)
      for (size_t j = 0; j < d; j++) w[j] = 0;
    for (size_t j = 0; j < od; j++) {
      double v = j < d ? w[j] * scale : w[d];
      if (job->yf) job->yf[i * od + j] = (float)v;
      else job->yd[i * od + j] = v;
    }
    if (zero || loose || unconv) {
      pthread_mutex_lock(&job->lock);
      job->zeros += (uint64_t)zero;
      job->loosened += (uint64_t)loose;
      if (zero && i < job->first_zero) job->first_zero = i;
      if (loose && i < job->first_loosened) job->first_loosened = i;
      job->unconverged += (uint64_t)unconv;
      pthread_mutex_unlock(&job->lock);
    }
  }
  free(xs);
  free(pos);
  free(w);
  return NULL;
}

static int run(SlemEsvm *self, float *yf, double *yd, const double *x, size_t m,
               SlemError *err) {
  Job job = {.self = self, .x = x, .m = m, .yf = yf, .yd = yd, .status = SLEM_OK,
             .first_zero = UINT64_MAX, .first_loosened = UINT64_MAX};
  size_t nt = (size_t)self->threads < m ? (size_t)self->threads : m, started = 0;
  pthread_t tid[256];
  int status = SLEM_OK;

  if (m == 0) return SLEM_OK;
  pthread_mutex_init(&job.lock, NULL);
  /* the first worker is this thread; the others are started beside it */
  for (size_t t = 1; t < nt; t++, started++)
    if (pthread_create(&tid[t - 1], NULL, worker, &job) != 0) break;
  worker(&job);
  for (size_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&job.lock);
  self->zeros += job.zeros;
  self->loosened += job.loosened;
  if (job.first_zero != UINT64_MAX && self->first_zero == UINT64_MAX)
    self->first_zero = self->seen + job.first_zero;
  if (job.first_loosened != UINT64_MAX && self->first_loosened == UINT64_MAX)
    self->first_loosened = self->seen + job.first_loosened;
  self->seen += m;
  self->unconverged += job.unconverged;
  if (job.status != SLEM_OK)
    status = slem_error(err, job.status, "out of memory training an exemplar SVM against %zu "
                        "negatives", self->n);
  return status;
}

int slem_esvm_run(SlemEsvm *self, float *y, const double *x, size_t m, SlemError *err) {
  return run(self, y, NULL, x, m, err);
}

int slem_esvm_run_f64(SlemEsvm *self, double *y, const double *x, size_t m,
                      SlemError *err) {
  return run(self, NULL, y, x, m, err);
}

int slem_esvm_encode_stream(SlemEsvm *self, SlemVecReader *in, SlemVecWriter *out,
                            size_t block, SlemProgressFn progress, void *ctx,
                            SlemError *err) {
  size_t d = self->d, od = slem_esvm_out_dim(self);
  double *x = NULL;
  float *y = NULL;
  uint64_t done = 0;
  int status = SLEM_OK;

  if (slem_vecreader_dim(in) != d)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives have "
                      "dimension %zu", slem_vecreader_name(in), slem_vecreader_dim(in), d);
  if (block == 0) block = 1;
  x = malloc(block * d * sizeof *x);
  y = malloc(block * od * sizeof *y);
  if (!x || !y) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto cleanup;
  }
  for (;;) {
    size_t got;
    if ((status = slem_vecreader_read(in, x, block, &got, err)) != SLEM_OK) goto cleanup;
    if (got == 0) break;
    if ((status = slem_esvm_run(self, y, x, got, err)) != SLEM_OK ||
        (status = slem_vecwriter_write(out, y, got, err)) != SLEM_OK)
      goto cleanup;
    done += got;
    if (progress) progress(ctx, done);
  }
cleanup:
  free(x);
  free(y);
  return status;
}

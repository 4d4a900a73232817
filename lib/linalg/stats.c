#include "stats.h"

#include "mem.h"

#include "blas.h"
#include "phases.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A node's scatter keeps its lower triangle only, folded into (d + 1) x w doubles, w =
 * ceil(d / 2) (the layout of LAPACK's rectangular full packed format, row by row): with the
 * columns cut into h1 = w and h2 = d - w, the lower triangle of the first h1 x h1 block
 * lies in rows 1..h1, the last h2 x h2 block, transposed, above it in rows 0..h2-1, and the
 * h2 x h1 block between them in rows h1+1..d. Half the memory of d x d, all of it touched
 * (so that it can live on huge pages, mem.h, without a resident upper half), and each leaf
 * still written by BLAS: two dsyrk and one dgemm. */
typedef struct Node {
  unsigned level;
  uint64_t index;
  uint64_t n;
  double *mean;     /* mean(d) */
  double *scatter;  /* the lower triangle of scatter(d, d), folded */
} Node;

static size_t fold_w(size_t d) { return (d + 1) / 2; }
static size_t fold_len(size_t d) { return (d + 1) * fold_w(d); }

/* Where entry (i, k), k <= i, of the lower triangle is kept. */
static size_t fold_pos(size_t d, size_t i, size_t k) {
  size_t w = fold_w(d);
  return k < w ? (1 + i) * w + k : (k - w) * w + (i - w);
}

/* Leaves gathered for one batch: their rows, counts, and whether each holds float32 rows
 * packed at the start of its buffer (widened in place by the threads, batch_centre()). */
typedef struct LeafSet {
  double **leaf;       /* batch buffers of leaf_rows x d doubles, allocated as filled */
  size_t *leafn;       /* rows of each full leaf */
  unsigned char *f32;
  size_t pending;      /* full leaves gathered, not yet computed */
} LeafSet;

struct SlemStats {
  size_t d, leaf_rows;
  uint64_t next_leaf;  /* where the rows being added, or the next node, start */
  uint64_t n;          /* rows summarised */
  LeafSet set[2];      /* the leaves being gathered (set[cur]) and, with a batch thread,
                          those being computed meanwhile: gathering overlaps computing */
  int cur;
  Node *work;          /* batch nodes the leaves' statistics are computed into */
  size_t batch;        /* leaves gathered before they are computed: 1, or more to keep
                          every thread busy whatever d is (slem_stats_set_batch()) */
  size_t fill;         /* rows in set[cur].leaf[set[cur].pending] */
  double t_convert, t_compute, t_merge; /* seconds, for slem_stats_times() */
  Node *nodes;         /* the complete nodes, left to right */
  size_t nnodes, cap;
  double *mean;        /* the result, after slem_stats_finish() */
  double *scatter;
  double rcond;        /* of A, from the last slem_stats_inverse() */
  double *dm;          /* 2d: the difference of two means, and f times it (combine()) */
  Node spare[64];      /* buffers of nodes merged away, for the next ones: a node's d^2
                          doubles are touched once, not once per leaf */
  size_t nspare;
  /* the batch thread (batches of more than one leaf): it computes a full set and joins
   * its nodes to the tree while the caller gathers the other set; everything but the
   * gathering (set[cur], fill, n, t_convert) is its own until batch_wait() */
  int async;           /* 1 once the thread runs */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int inflight;        /* 1 + the set handed over, 0 when none */
  int stop;
  int status;          /* of the sets computed there: the first error stays */
  SlemError err;
};

int slem_stats_new(SlemStats **self, size_t d, size_t leaf_rows, uint64_t first_leaf,
                   SlemError *err) {
  SlemStats *s = calloc(1, sizeof *s);
  *self = NULL;
  if (!s || !(s->dm = malloc(2 * (d ? d : 1) * sizeof *s->dm))) {
    free(s);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  s->d = d;
  s->leaf_rows = leaf_rows;
  s->next_leaf = first_leaf;
  s->batch = 1;
  *self = s;
  return SLEM_OK;
}

static void node_clear(Node *nd) {
  free(nd->mean);
  free(nd->scatter);
  memset(nd, 0, sizeof *nd);
}

static void batch_stop(SlemStats *s);
static int batch_wait(SlemStats *s, SlemError *err);

void slem_stats_free(SlemStats *self) {
  if (!self) return;
  batch_stop(self);
  for (size_t i = 0; i < self->nnodes; i++) node_clear(&self->nodes[i]);
  for (size_t i = 0; i < self->nspare; i++) node_clear(&self->spare[i]);
  free(self->nodes);
  free(self->dm);
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; self->set[k].leaf && i < self->batch; i++) free(self->set[k].leaf[i]);
    free(self->set[k].leaf);
    free(self->set[k].leafn);
    free(self->set[k].f32);
  }
  for (size_t i = 0; self->work && i < self->batch; i++) node_clear(&self->work[i]);
  free(self->work);
  free(self->mean);
  free(self->scatter);
  free(self);
}

size_t slem_stats_dim(const SlemStats *self) { return self->d; }
uint64_t slem_stats_count(const SlemStats *self) { return self->n; }
size_t slem_stats_leaf_rows(const SlemStats *self) { return self->leaf_rows; }
/* What the batch thread writes is read once it is done: the wait changes only the lock of
 * an object that was never made const (slem_stats_new()). */
static void settled(const SlemStats *self) { batch_wait((SlemStats *)self, NULL); }

uint64_t slem_stats_next_leaf(const SlemStats *self) {
  settled(self);
  return self->next_leaf;
}
const double *slem_stats_mean(const SlemStats *self) { return self->mean; }
const double *slem_stats_scatter(const SlemStats *self) { return self->scatter; }
double slem_stats_rcond(const SlemStats *self) { return self->rcond; }

size_t slem_stats_nodes(const SlemStats *self) {
  settled(self);
  return self->nnodes;
}

void slem_stats_node(const SlemStats *self, size_t i, unsigned *level, uint64_t *index,
                     uint64_t *n, const double **mean, double *scatter) {
  const Node *nd;
  size_t d = self->d;
  settled(self);
  nd = &self->nodes[i];
  *level = nd->level;
  *index = nd->index;
  *n = nd->n;
  *mean = nd->mean;
  for (size_t r = 0; scatter && r < d; r++)
    for (size_t k = 0; k <= r; k++) scatter[r * d + k] = nd->scatter[fold_pos(d, r, k)];
}

/* A new node at the right end, its buffers allocated (contents undefined). */
static int node_append(SlemStats *s, Node **out, SlemError *err) {
  Node *nd;
  if (s->nnodes == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    Node *p = realloc(s->nodes, cap * sizeof *p);
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    s->nodes = p;
    s->cap = cap;
  }
  nd = &s->nodes[s->nnodes];
  memset(nd, 0, sizeof *nd);
  if (s->nspare > 0) {
    Node *sp = &s->spare[--s->nspare];
    nd->mean = sp->mean;
    nd->scatter = sp->scatter;
    memset(sp, 0, sizeof *sp);
  } else {
    nd->mean = malloc(s->d * sizeof *nd->mean);
    nd->scatter = slem_mem_alloc_large(fold_len(s->d) * sizeof *nd->scatter);
  }
  if (!nd->mean || !nd->scatter) {
    node_clear(nd);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu scatter matrix", s->d,
                      s->d);
  }
  s->nnodes++;
  *out = nd;
  return SLEM_OK;
}

typedef struct CombineJob {
  Node *a;
  const Node *b;
  size_t d;
  const double *dm, *fdm; /* b's mean - a's, and f times it */
} CombineJob;

/* Rows [lo, hi) of the folded scatter: each entry on its own, in one order. */
static void combine_rows(void *ctx, size_t lo, size_t hi) {
  const CombineJob *j = ctx;
  double *a = j->a->scatter;
  const double *b = j->b->scatter, *dm = j->dm, *fdm = j->fdm;
  size_t d = j->d, w = fold_w(d), h2 = d - w;
  for (size_t r = lo; r < hi; r++) {
    double *ar = a + r * w;
    const double *br = b + r * w;
    if (r >= 1) { /* entries (i, k) for i = r - 1, k < w and k <= i */
      size_t i = r - 1, end = i + 1 < w ? i + 1 : w;
      for (size_t k = 0; k < end; k++) ar[k] = (ar[k] + br[k]) + fdm[i] * dm[k];
    }
    if (r < h2) /* entries (w + c, w + r) for c >= r: the last block, transposed */
      for (size_t c = r; c < h2; c++)
        ar[c] = (ar[c] + br[c]) + fdm[w + c] * dm[w + r];
  }
}

/* a := a then b (the pairwise update; only the lower triangles are read and written). The
 * operations and their order are fixed, in plain loops: the same inputs give the same
 * bits on every machine and thread count. */
static void combine(SlemStats *s, Node *a, const Node *b) {
  size_t d = s->d;
  uint64_t n = a->n + b->n;
  if (b->n == 0) return;
  if (a->n == 0) {
    memcpy(a->mean, b->mean, d * sizeof *a->mean);
    memcpy(a->scatter, b->scatter, fold_len(d) * sizeof *a->scatter);
  } else {
    double f = (double)a->n * (double)b->n / (double)n, w = (double)b->n / (double)n;
    double *dm = s->dm;
    CombineJob job = {a, b, d, dm, dm + d};
    for (size_t i = 0; i < d; i++) {
      dm[i] = b->mean[i] - a->mean[i];
      dm[d + i] = f * dm[i];
    }
    /* the entries are independent: rows shared among threads give the same bits */
    slem_blas_par_chunks(d + 1, 64, combine_rows, &job);
    for (size_t i = 0; i < d; i++) a->mean[i] += (b->mean[i] - a->mean[i]) * w;
  }
  a->n = n;
}

/* Makes parents of the two rightmost nodes while they are the left and right children of
 * one node of the tree. */
static void collapse(SlemStats *s) {
  while (s->nnodes >= 2) {
    Node *a = &s->nodes[s->nnodes - 2], *b = &s->nodes[s->nnodes - 1];
    if (a->level != b->level || a->index % 2 != 0 || b->index != a->index + 1) break;
    combine(s, a, b);
    a->level++;
    a->index /= 2;
    if (s->nspare < sizeof s->spare / sizeof s->spare[0]) { /* b's buffers for a next node */
      s->spare[s->nspare].mean = b->mean;
      s->spare[s->nspare++].scatter = b->scatter;
      memset(b, 0, sizeof *b);
    } else {
      node_clear(b);
    }
    s->nnodes--;
  }
}

typedef struct LeafJob {
  double *leaf, *mean;
  size_t b, d;
} LeafJob;

/* Rows [lo, hi) of the leaf, centred. */
static void leaf_centre(void *ctx, size_t lo, size_t hi) {
  const LeafJob *j = ctx;
  size_t d = j->d;
  for (size_t i = lo; i < hi; i++)
    for (size_t c = 0; c < d; c++) j->leaf[i * d + c] -= j->mean[c];
}

typedef struct ScatterJob {
  const double *x; /* the leaf's b x d centred rows */
  double *out;     /* the folded scatter */
  size_t b, d;
} ScatterJob;

/* The folded scatter in fixed chunks of rows, each chunk's BLAS calls on this thread:
 * OpenBLAS 0.3.21's multithreaded dgemm and dsyrk round differently for some thread counts
 * (by shape and core: a dsyrk on its AVX-512 kernels, a dgemm on every core), fixed chunks
 * on one BLAS thread each do not. x = [x1 x2], cut after w columns. */

/* Rows [lo, hi) of the lower triangle of x1^T x1 (rows 1..w of the fold). */
static void first_rows(void *ctx, size_t lo, size_t hi) {
  const ScatterJob *j = ctx;
  size_t d = j->d, w = fold_w(d);
  double *c = j->out + w + lo * w;
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)(hi - lo), (int)j->b, 1.0, j->x + lo,
              (int)d, 0.0, c + lo, (int)w);
  if (lo > 0)
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(hi - lo), (int)lo, (int)j->b, 1.0,
                j->x + lo, (int)d, j->x, (int)d, 0.0, c, (int)w);
}

/* Rows [lo, hi) of the upper triangle of x2^T x2 (the last block, transposed: rows 0..h2-1
 * of the fold). */
static void last_rows(void *ctx, size_t lo, size_t hi) {
  const ScatterJob *j = ctx;
  size_t d = j->d, w = fold_w(d), h2 = d - w;
  double *c = j->out + lo * w;
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)(hi - lo), (int)j->b, 1.0,
              j->x + w + lo, (int)d, 0.0, c + lo, (int)w);
  if (hi < h2)
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(hi - lo), (int)(h2 - hi),
                (int)j->b, 1.0, j->x + w + lo, (int)d, j->x + w + hi, (int)d, 0.0, c + hi,
                (int)w);
}

/* Rows [lo, hi) of x2^T x1, the block between the triangles (rows w+1..d of the fold). */
static void cross_rows(void *ctx, size_t lo, size_t hi) {
  const ScatterJob *j = ctx;
  size_t w = fold_w(j->d);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(hi - lo), (int)w, (int)j->b, 1.0,
              j->x + w + lo, (int)j->d, j->x, (int)j->d, 0.0, j->out + (1 + w + lo) * w, (int)w);
}

/* Rows per chunk of a leaf's scatter: fixed, each chunk's BLAS calls on one thread. */
#define SCATTER_CHUNK 128

typedef struct BatchJob {
  SlemStats *s;
  LeafSet *ls;        /* the leaves computed */
  size_t n1, n2, per; /* chunks of x1^T x1 and of each x2 part, and all of a leaf's */
} BatchJob;

/* The n float32 values packed at the start of buf become n doubles in place, from the end:
 * the doubles of a piece cover only floats already read (kept in tmp), so no value is
 * lost; the floats are reached through memcpy, never a float pointer into the buffer. */
static void widen_in_place(double *buf, size_t n) {
  float tmp[512];
  for (size_t end = n; end > 0;) {
    size_t k = end < 512 ? end : 512, j = end - k;
    memcpy(tmp, (const char *)buf + j * sizeof(float), k * sizeof(float));
    for (size_t i = 0; i < k; i++) buf[j + i] = tmp[i];
    end = j;
  }
}

/* Leaves [lo, hi) of the batch: float32 rows widened, each column's sum in row order, the
 * mean, the rows centred (the same operations, in the same order, as when the leaves were
 * computed one by one). */
static void batch_centre(void *ctx, size_t lo, size_t hi) {
  const BatchJob *j = ctx;
  SlemStats *s = j->s;
  size_t d = s->d;
  for (size_t l = lo; l < hi; l++) {
    double *x = j->ls->leaf[l], *mean = s->work[l].mean;
    size_t b = j->ls->leafn[l];
    LeafJob lj = {x, mean, b, d};
    if (j->ls->f32[l]) {
      widen_in_place(x, b * d);
      j->ls->f32[l] = 0;
    }
    memset(mean, 0, d * sizeof *mean);
    for (size_t i = 0; i < b; i++)
      for (size_t c = 0; c < d; c++) mean[c] += x[i * d + c];
    for (size_t c = 0; c < d; c++) mean[c] /= (double)b;
    leaf_centre(&lj, 0, b);
  }
}

/* Work units [lo, hi) of the batch: unit u is chunk u % per of leaf u / per, a chunk of
 * rows of x1^T x1, of x2^T x2 or of x2^T x1 (close_batch()). */
static void batch_scatter(void *ctx, size_t lo, size_t hi) {
  const BatchJob *j = ctx;
  SlemStats *s = j->s;
  size_t d = s->d, w = fold_w(d), h2 = d - w;
  for (size_t u = lo; u < hi; u++) {
    size_t l = u / j->per, c = u % j->per;
    ScatterJob sj = {j->ls->leaf[l], s->work[l].scatter, j->ls->leafn[l], d};
    if (c < j->n1) {
      size_t a = c * SCATTER_CHUNK;
      first_rows(&sj, a, a + SCATTER_CHUNK < w ? a + SCATTER_CHUNK : w);
    } else {
      size_t a = (c - j->n1) % j->n2 * SCATTER_CHUNK, e = a + SCATTER_CHUNK < h2 ? a + SCATTER_CHUNK : h2;
      if (c - j->n1 < j->n2) last_rows(&sj, a, e);
      else cross_rows(&sj, a, e);
    }
  }
}

/* The leaves of ls become nodes, in order. Their statistics are computed on the threads
 * together: leaves x chunks of rows are the work units, many more than the threads even
 * for a small d, each one's BLAS calls on one thread, so that a leaf's bits are those of
 * a leaf computed alone; then the nodes join the tree one by one, as before. */
static int compute_set(SlemStats *s, LeafSet *ls, SlemError *err) {
  size_t d = s->d, w = fold_w(d), h2 = d - w;
  BatchJob job = {s, ls, (w + SCATTER_CHUNK - 1) / SCATTER_CHUNK,
                  (h2 + SCATTER_CHUNK - 1) / SCATTER_CHUNK, 0};
  double t0 = slem_now(), t1;
  size_t pending = ls->pending;
  ls->pending = 0;
  if (pending == 0) return SLEM_OK;
  for (size_t l = 0; l < pending; l++)
    if (!s->work[l].mean &&
        (!(s->work[l].mean = malloc(d * sizeof *s->work[l].mean)) ||
         !(s->work[l].scatter = slem_mem_alloc_large(fold_len(d) * sizeof *s->work[l].scatter))))
      return slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu scatter matrix", d, d);
  job.per = job.n1 + 2 * job.n2;
  /* scatter = x^T x, x = [x1 x2] being the b x d centred rows cut after w columns: the
   * lower triangle of x1^T x1, the upper one of x2^T x2 and x2^T x1, folded (Node) */
  slem_blas_par_chunks(pending, 1, batch_centre, &job);
  slem_blas_par_chunks(pending * job.per, 1, batch_scatter, &job);
  t1 = slem_now();
  s->t_compute += t1 - t0;
  for (size_t l = 0; l < pending; l++) {
    Node *nd, tmp;
    int st;
    if ((st = node_append(s, &nd, err)) != SLEM_OK) return st;
    /* the computed buffers become the node's, its fresh ones the next batch's */
    tmp = *nd;
    nd->mean = s->work[l].mean;
    nd->scatter = s->work[l].scatter;
    s->work[l].mean = tmp.mean;
    s->work[l].scatter = tmp.scatter;
    nd->level = 0;
    nd->index = s->next_leaf++;
    nd->n = ls->leafn[l];
    collapse(s);
  }
  s->t_merge += slem_now() - t1;
  return SLEM_OK;
}

static void *batch_thread(void *arg) {
  SlemStats *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    SlemError e;
    int st;
    while (!s->stop && !s->inflight) pthread_cond_wait(&s->cv, &s->mu);
    if (!s->inflight) break; /* stopped, nothing left */
    pthread_mutex_unlock(&s->mu);
    st = s->status == SLEM_OK ? compute_set(s, &s->set[s->inflight - 1], &e) : SLEM_OK;
    pthread_mutex_lock(&s->mu);
    if (st != SLEM_OK && s->status == SLEM_OK) {
      s->status = st;
      s->err = e;
    }
    s->set[s->inflight - 1].pending = 0;
    s->inflight = 0;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Waits until no set is being computed: then everything is the caller's again. The first
 * error of the sets computed on the batch thread. */
static int batch_wait(SlemStats *s, SlemError *err) {
  int st;
  if (!s->async) return SLEM_OK;
  pthread_mutex_lock(&s->mu);
  while (s->inflight) pthread_cond_wait(&s->cv, &s->mu);
  st = s->status;
  if (st != SLEM_OK && err) *err = s->err;
  pthread_mutex_unlock(&s->mu);
  return st;
}

static void batch_stop(SlemStats *s) {
  if (!s->async) return;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  s->async = 0;
}

/* The set being gathered is complete (or ends early): computed here, or handed to the
 * batch thread once the set before it is done, the other set becoming the one gathered. */
static int close_batch(SlemStats *s, SlemError *err) {
  LeafSet *ls = &s->set[s->cur];
  int st;
  if (s->fill > 0) ls->leafn[ls->pending++] = s->fill;
  s->fill = 0;
  if (!s->async) return compute_set(s, ls, err);
  if ((st = batch_wait(s, err)) != SLEM_OK || ls->pending == 0) return st;
  pthread_mutex_lock(&s->mu);
  s->inflight = 1 + s->cur;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  s->cur ^= 1;
  return SLEM_OK;
}

/* BLAS threads from which a batch is computed on the batch thread while the next is
 * gathered. With fewer, gathering is a few percent of the wall and a third busy thread on
 * their cores costs more than it hides (scripts/bench on 2 cores, -t 2: A's slem-negstats
 * 0.088 s in turn, 0.096 s overlapped; B's 2.527 / 2.535 s); at 16 threads it was a third
 * of the wall. */
#define ASYNC_MIN_THREADS 4

/* The buffers of the set being gathered, allocated as they are first filled; the batch
 * thread starts with the first rows of a batch of several leaves on ASYNC_MIN_THREADS or
 * more (without it, the sets are computed by the caller). */
static int batch_alloc(SlemStats *s, SlemError *err) {
  size_t L = s->leaf_rows, d = s->d;
  LeafSet *ls = &s->set[s->cur];
  if (!ls->leaf && (!(ls->leaf = calloc(s->batch, sizeof *ls->leaf)) ||
                    !(ls->leafn = calloc(s->batch, sizeof *ls->leafn)) ||
                    !(ls->f32 = calloc(s->batch, sizeof *ls->f32))))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (!s->work && !(s->work = calloc(s->batch, sizeof *s->work)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (!ls->leaf[ls->pending] && !(ls->leaf[ls->pending] = slem_mem_alloc_large(L * d * sizeof **ls->leaf)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", L);
  if (s->batch > 1 && !s->async && !s->stop && slem_blas_threads() >= ASYNC_MIN_THREADS) {
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, batch_thread, s) == 0) {
      s->async = 1;
    } else {
      pthread_mutex_destroy(&s->mu);
      pthread_cond_destroy(&s->cv);
      s->stop = 1; /* not again */
    }
  }
  return SLEM_OK;
}

/* Adds b rows, each of d doubles or floats (the other pointer NULL), into the leaves. */
static int add_rows(SlemStats *self, const double *x, const float *xf, size_t b, SlemError *err) {
  size_t d = self->d, L = self->leaf_rows;
  double t0 = slem_now();
  int st = SLEM_OK;
  while (b > 0 && st == SLEM_OK) {
    size_t take = L - self->fill < b ? L - self->fill : b;
    LeafSet *ls;
    double *to;
    if ((st = batch_alloc(self, err)) != SLEM_OK) break;
    ls = &self->set[self->cur];
    to = ls->leaf[ls->pending];
    /* copied; float32 kept as it is, packed, and widened by the threads (batch_centre()),
     * unless the leaf already holds doubles or there is no batch thread (widened here, in
     * one pass);
     * the columns are summed with the leaf's other work */
    if (self->fill == 0) ls->f32[ls->pending] = xf != NULL && self->async;
    if (x) {
      if (ls->f32[ls->pending]) { /* floats, then doubles: the floats widened now */
        widen_in_place(to, self->fill * d);
        ls->f32[ls->pending] = 0;
      }
      memcpy(to + self->fill * d, x, take * d * sizeof *x);
      x += take * d;
    } else if (ls->f32[ls->pending]) {
      memcpy((char *)to + self->fill * d * sizeof *xf, xf, take * d * sizeof *xf);
      xf += take * d;
    } else {
      to += self->fill * d;
      for (size_t i = 0; i < take * d; i++) to[i] = xf[i];
      xf += take * d;
    }
    self->fill += take;
    self->n += take;
    b -= take;
    if (self->fill == L) {
      ls->leafn[ls->pending++] = L;
      self->fill = 0;
      if (ls->pending == self->batch) {
        self->t_convert += slem_now() - t0;
        st = close_batch(self, err);
        t0 = slem_now();
      }
    }
  }
  self->t_convert += slem_now() - t0;
  return st;
}

int slem_stats_add(SlemStats *self, const double *x, size_t b, SlemError *err) {
  return add_rows(self, x, NULL, b, err);
}

int slem_stats_add_f32(SlemStats *self, const float *x, size_t b, SlemError *err) {
  return add_rows(self, NULL, x, b, err);
}

int slem_stats_flush(SlemStats *self, SlemError *err) {
  int st = close_batch(self, err);
  return st != SLEM_OK ? st : batch_wait(self, err);
}

void slem_stats_set_batch(SlemStats *self, size_t leaves) {
  if (self->set[0].leaf || leaves == 0) return;
  self->batch = leaves;
}

void slem_stats_times(const SlemStats *self, double *convert, double *compute, double *merge) {
  settled(self);
  *convert = self->t_convert;
  *compute = self->t_compute;
  *merge = self->t_merge;
}

int slem_stats_push(SlemStats *self, unsigned level, uint64_t index, uint64_t n,
                    const double *mean, const double *scatter, SlemError *err) {
  size_t d = self->d;
  Node *nd;
  int st;
  if ((st = batch_wait(self, err)) != SLEM_OK) return st;
  if (level >= 64 || index > (UINT64_MAX >> level) || index << level != self->next_leaf ||
      self->fill > 0 || self->set[self->cur].pending > 0)
    return slem_error(err, SLEM_EINVAL, "node (%u, %llu) does not start at leaf %llu", level,
                      (unsigned long long)index, (unsigned long long)self->next_leaf);
  if ((st = node_append(self, &nd, err)) != SLEM_OK) return st;
  nd->level = level;
  nd->index = index;
  nd->n = n;
  memcpy(nd->mean, mean, d * sizeof *mean);
  for (size_t i = 0; i < d; i++)
    for (size_t k = 0; k <= i; k++) nd->scatter[fold_pos(d, i, k)] = scatter[i * d + k];
  self->next_leaf = (index + 1) << level;
  self->n += n;
  collapse(self);
  return SLEM_OK;
}

int slem_stats_finish(SlemStats *self, SlemError *err) {
  size_t d = self->d;
  Node acc = {0};
  double *full, t0;
  int st = slem_stats_flush(self, err);
  if (st) return st;
  /* no more leaves: the spare buffers go back before the result's are taken */
  for (size_t i = 0; i < self->nspare; i++) node_clear(&self->spare[i]);
  self->nspare = 0;
  acc.mean = calloc(d, sizeof *acc.mean);
  acc.scatter = slem_mem_alloc_large(fold_len(d) * sizeof *acc.scatter);
  full = slem_mem_alloc_large(d * d * sizeof *full);
  if (!acc.mean || !acc.scatter || !full) {
    node_clear(&acc);
    free(full);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu scatter matrix", d, d);
  }
  memset(acc.scatter, 0, fold_len(d) * sizeof *acc.scatter);
  t0 = slem_now();
  for (size_t i = 0; i < self->nnodes; i++) combine(self, &acc, &self->nodes[i]);
  self->t_merge += slem_now() - t0;
  for (size_t i = 0; i < d; i++) /* unfolded, both triangles */
    for (size_t k = 0; k <= i; k++) full[i * d + k] = full[k * d + i] = acc.scatter[fold_pos(d, i, k)];
  free(acc.scatter);
  free(self->mean);
  free(self->scatter);
  self->mean = acc.mean;
  self->scatter = full;
  return SLEM_OK;
}

double slem_stats_trace(const SlemStats *self) {
  double t = 0;
  if (self->n == 0) return 0;
  for (size_t i = 0; i < self->d; i++) t += self->scatter[i * self->d + i];
  return t / (double)self->n;
}

int slem_stats_inverse(SlemStats *self, double *ainv, double *lambda_used, double lambda,
                       double lambda_rel, SlemError *err) {
  size_t d = self->d;
  double tr = slem_stats_trace(self), rcond = 0, suggest;
  int threads = slem_blas_threads();
  gsl_matrix_view a;
  double *work = NULL;
  gsl_vector_view wv;
  int status = SLEM_OK, gs;

  if (self->n == 0) return slem_error(err, SLEM_EINVAL, "no negatives were given");
  if (!isfinite(tr))
    return slem_error(err, SLEM_ENUMERIC, "the covariance of the negatives overflows double "
                      "(trace %g): scale them down", tr);
  if (lambda < 0) lambda = lambda_rel * tr / (double)d;
  if (!isfinite(lambda) || lambda < 0)
    return slem_error(err, SLEM_EINVAL, "lambda %g is not a finite non-negative number", lambda);
  *lambda_used = lambda;
  suggest = tr > 0 ? 1e-3 * tr / (double)d : 1.0;

  slem_blas_gsl_init();
  for (size_t i = 0; i < d; i++)
    for (size_t j = 0; j <= i; j++)
      ainv[i * d + j] = self->scatter[i * d + j] / (double)self->n + (i == j ? lambda : 0.0);
  /* GSL's Cholesky, condition estimate and inverse on one BLAS thread: OpenBLAS's
   * multithreaded level 3 rounds differently for some thread counts (3 and 5 here), and A^-1
   * must not depend on -t */
  if (threads > 1) slem_blas_set_threads(1);
  a = gsl_matrix_view_array(ainv, d, d);
  gs = gsl_linalg_cholesky_decomp1(&a.matrix);
  if (gs == GSL_EDOM) {
    status = slem_error(err, SLEM_ENUMERIC,
                        "A = Sigma + lambda I is not positive definite (lambda = %g; %llu "
                        "negatives in dimension %zu; trace(Sigma)/d = %g): the negatives do not "
                        "span every direction; use a larger lambda, for example lambda_rel 1e-3 "
                        "(lambda = %g)", lambda, (unsigned long long)self->n, d, tr / (double)d,
                        suggest);
    goto done;
  }
  if (gs) {
    status = slem_error(err, SLEM_ENUMERIC, "Cholesky factorisation failed: %s", gsl_strerror(gs));
    goto done;
  }
  /* aligned to 64 bytes: the BLAS's vector kernels round differently at other alignments,
   * and the estimate would then depend on where the heap put its workspace */
  if (!(work = aligned_alloc(64, (3 * d * sizeof *work + 63) / 64 * 64))) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  wv = gsl_vector_view_array(work, 3 * d);
  gs = gsl_linalg_cholesky_rcond(&a.matrix, &rcond, &wv.vector);
  self->rcond = gs ? 0 : rcond;
  if (gs || !(rcond >= 1e-12)) {
    status = slem_error(err, SLEM_ENUMERIC,
                        "A = Sigma + lambda I is too ill-conditioned to invert (reciprocal "
                        "condition number %.3g, lambda = %g; %llu negatives in dimension %zu): "
                        "use a larger lambda, for example lambda_rel 1e-3 (lambda = %g)",
                        rcond, lambda, (unsigned long long)self->n, d, suggest);
    goto done;
  }
  gs = gsl_linalg_cholesky_invert(&a.matrix);
  if (gs) {
    status = slem_error(err, SLEM_ENUMERIC, "inverting A failed: %s", gsl_strerror(gs));
    goto done;
  }
  for (size_t i = 0; i < d * d; i++)
    if (!isfinite(ainv[i])) {
      status = slem_error(err, SLEM_ENUMERIC, "the inverse of A is not finite; use a larger lambda");
      goto done;
    }
done:
  if (threads > 1) slem_blas_set_threads(threads);
  free(work);
  return status;
}

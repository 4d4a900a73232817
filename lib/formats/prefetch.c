#include "prefetch.h"

#include "mem.h"
#include "phases.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The most buffers: two blocks the caller keeps (slem_prefetch_keep()) and one read. */
#define PF_BUFFERS 3

typedef struct Buffer {
  void *rows;
  size_t got;
  int status;
  SlemBlockPos pos;
  SlemError err;
  int full;   /* filled by the thread, not yet taken */
} Buffer;

struct SlemPrefetch {
  SlemBlockReadFn fn;
  void *ctx;
  size_t block;
  int f32;
  Buffer buf[PF_BUFFERS];
  int nbuf;                        /* buffers in use: the blocks the caller keeps, plus 1 */
  size_t bytes;                    /* of a buffer */
  int next_fill, next_take, held;  /* held: how many blocks the caller has (those before
                                    * next_take), given back oldest first */
  int stop, done;                  /* done: the thread has read the end or an error */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  double busy, wait;               /* seconds reading (thread), waiting for a block (caller) */
  void *owned;                     /* a source's state that self frees (a Window), or NULL */
};

static void *worker(void *arg) {
  SlemPrefetch *p = arg;
  for (;;) {
    Buffer *b;
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->buf[p->next_fill].full)
      pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    b = &p->buf[p->next_fill];
    pthread_mutex_unlock(&p->mu);
    /* the reading happens outside the lock */
    double t0 = slem_now();
    b->status = p->fn(p->ctx, b->rows, p->block, p->f32, &b->got, &b->pos, &b->err);
    t0 = slem_now() - t0;
    pthread_mutex_lock(&p->mu);
    p->busy += t0;
    b->full = 1;
    p->next_fill = (p->next_fill + 1) % p->nbuf;
    if (b->status || b->got == 0) p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (b->status || b->got == 0) return NULL;
  }
}

/* A vector reader as a block source. */
static int read_vecs(void *ctx, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                     SlemError *err) {
  SlemVecReader *r = ctx;
  int st = f32 ? slem_vecreader_read_f32(r, x, max, got, err)
               : slem_vecreader_read(r, x, max, got, err);
  if (!st) {
    uint64_t done = slem_vecreader_done(r) - *got;
    *pos = (SlemBlockPos){slem_vecreader_name(r), done + 1, done};
  }
  return st;
}

int slem_prefetch_new(SlemPrefetch **self, SlemVecReader *r, size_t block, int f32,
                      SlemError *err) {
  return slem_prefetch_new_fn(self, read_vecs, r, slem_vecreader_dim(r), block, f32, err);
}

/* A window of a vector reader as a block source (slem_prefetch_new_window()). */
typedef struct Window {
  SlemVecReader *r;
  size_t row_bytes;
  uint64_t front;     /* rows of zeros still to give before the first row read */
  uint64_t left;      /* rows of r still to read */
  uint64_t span_left; /* rows of the blocks still to give, zeros after the rows included */
} Window;

static int read_window(void *ctx, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                       SlemError *err) {
  Window *w = ctx;
  unsigned char *b = x;
  size_t rb = w->row_bytes, want = w->span_left < max ? (size_t)w->span_left : max, front, n,
         real = 0;
  int st;
  *got = 0;
  if (w->left == 0 || want == 0) return SLEM_OK; /* the window is read */
  front = w->front < want ? (size_t)w->front : want;
  n = want - front < w->left ? want - front : (size_t)w->left;
  st = f32 ? slem_vecreader_read_f32(w->r, (float *)(b + front * rb), n, &real, err)
           : slem_vecreader_read(w->r, (double *)(b + front * rb), n, &real, err);
  if (st != SLEM_OK || real == 0) return st;
  if (real < n) want = front + real; /* the input ended early: no row after it either */
  memset(b, 0, front * rb);
  memset(b + (front + real) * rb, 0, (want - front - real) * rb);
  w->front -= front;
  w->left -= real;
  w->span_left -= want;
  *got = want;
  *pos = (SlemBlockPos){slem_vecreader_name(w->r), slem_vecreader_done(w->r) - real + 1,
                        slem_vecreader_done(w->r) - real};
  return SLEM_OK;
}

int slem_prefetch_new_window(SlemPrefetch **self, SlemVecReader *r, size_t block, int f32,
                             uint64_t front, uint64_t rows, uint64_t span, SlemError *err) {
  Window *w = malloc(sizeof *w);
  size_t d = slem_vecreader_dim(r);
  int st;
  *self = NULL;
  if (!w) return slem_error(err, SLEM_ENOMEM, "out of memory");
  *w = (Window){r, d * (f32 ? sizeof(float) : sizeof(double)), front, rows, span};
  if ((st = slem_prefetch_new_fn(self, read_window, w, d, block, f32, err)) != SLEM_OK) {
    free(w);
    return st;
  }
  (*self)->owned = w; /* read by the thread, freed after it stops */
  return SLEM_OK;
}

int slem_prefetch_new_fn(SlemPrefetch **self, SlemBlockReadFn fn, void *ctx, size_t row_dim,
                         size_t block, int f32, SlemError *err) {
  SlemPrefetch *p = calloc(1, sizeof *p);
  size_t bytes = block * row_dim * (f32 ? sizeof(float) : sizeof(double));
  *self = NULL;
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  p->fn = fn;
  p->ctx = ctx;
  p->block = block;
  p->f32 = f32;
  p->nbuf = 2;
  p->bytes = bytes;
  p->buf[0].rows = slem_mem_alloc_large(bytes);
  p->buf[1].rows = slem_mem_alloc_large(bytes);
  if (!p->buf[0].rows || !p->buf[1].rows) {
    free(p->buf[0].rows);
    free(p->buf[1].rows);
    free(p);
    return slem_error(err, SLEM_ENOMEM, "out of memory for two blocks of %zu vectors", block);
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  if (pthread_create(&p->thread, NULL, worker, p) != 0) {
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->buf[0].rows);
    free(p->buf[1].rows);
    free(p);
    return slem_error(err, SLEM_EIO, "cannot start the reading thread");
  }
  *self = p;
  return SLEM_OK;
}

int slem_prefetch_next(SlemPrefetch *self, void **rows, size_t *got, SlemError *err) {
  return slem_prefetch_next_pos(self, rows, got, NULL, err);
}

int slem_prefetch_next_pos(SlemPrefetch *self, void **rows, size_t *got, SlemBlockPos *pos,
                           SlemError *err) {
  Buffer *b;
  int st;
  pthread_mutex_lock(&self->mu);
  if (self->held == self->nbuf - 1) { /* give back the oldest block the caller had */
    self->buf[(self->next_take + self->nbuf - self->held) % self->nbuf].full = 0;
    self->held--;
    pthread_cond_broadcast(&self->cv);
  }
  b = &self->buf[self->next_take];
  if (!b->full) {
    double t0 = slem_now();
    while (!b->full) pthread_cond_wait(&self->cv, &self->mu);
    self->wait += slem_now() - t0;
  }
  st = b->status;
  *rows = b->rows;
  *got = st ? 0 : b->got;
  if (pos && !st) *pos = b->pos;
  if (st && err) *err = b->err;
  if (!st && b->got > 0) {
    self->held++;
    self->next_take = (self->next_take + 1) % self->nbuf;
  }
  pthread_mutex_unlock(&self->mu);
  return st;
}

int slem_prefetch_keep(SlemPrefetch *self, int blocks, SlemError *err) {
  void *rows = NULL;
  if (blocks < 1 || blocks + 1 > PF_BUFFERS)
    return slem_error(err, SLEM_EINVAL, "prefetch: %d blocks kept (1 to %d)", blocks,
                      PF_BUFFERS - 1);
  if (blocks + 1 > 2 && !(rows = slem_mem_alloc_large(self->bytes)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for %d blocks", blocks + 1);
  pthread_mutex_lock(&self->mu);
  /* before the first block is taken, the thread has filled buffers 0 and 1 at most, in
   * turn: a third one comes next in the turn (where the thread has filled both and turned
   * back to 0 already, it goes on at 2 instead) */
  if (rows) self->buf[2].rows = rows;
  if (self->nbuf == 2 && blocks == 2 && self->next_fill == 0 && self->buf[1].full)
    self->next_fill = 2;
  self->nbuf = blocks + 1;
  /* a thread that waits for buffer 0 (both read) has buffer 2 now: woken, it reads ahead */
  pthread_cond_broadcast(&self->cv);
  pthread_mutex_unlock(&self->mu);
  return SLEM_OK;
}

void slem_prefetch_times(SlemPrefetch *self, double *read, double *wait) {
  pthread_mutex_lock(&self->mu);
  *read = self->busy;
  *wait = self->wait;
  pthread_mutex_unlock(&self->mu);
}

void slem_prefetch_free(SlemPrefetch *self) {
  if (!self) return;
  pthread_mutex_lock(&self->mu);
  self->stop = 1;
  pthread_cond_broadcast(&self->cv);
  pthread_mutex_unlock(&self->mu);
  pthread_join(self->thread, NULL);
  pthread_mutex_destroy(&self->mu);
  pthread_cond_destroy(&self->cv);
  for (int i = 0; i < PF_BUFFERS; i++) free(self->buf[i].rows);
  free(self->owned);
  free(self);
}

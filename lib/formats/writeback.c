#include "writeback.h"

#include "phases.h"

#include <pthread.h>
#include <stdlib.h>

struct SlemWriteback {
  SlemWriteFn fn;
  void *ctx;
  const void *buf; /* the block handed over, NULL when none waits */
  size_t n;
  int busy;        /* a block handed over and not yet written */
  int status;      /* of the writes so far: the first error stays */
  SlemError err;
  int stop;
  double write, wait;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
};

static void *worker(void *arg) {
  SlemWriteback *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    const void *buf;
    size_t n;
    int st;
    SlemError err;
    double t0;
    while (!w->stop && !w->busy) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->busy) break; /* stopped, nothing left */
    buf = w->buf;
    n = w->n;
    pthread_mutex_unlock(&w->mu);
    /* the writing happens outside the lock */
    t0 = slem_now();
    st = w->status == SLEM_OK ? w->fn(w->ctx, buf, n, &err) : SLEM_OK;
    t0 = slem_now() - t0;
    pthread_mutex_lock(&w->mu);
    w->write += t0;
    if (st != SLEM_OK && w->status == SLEM_OK) {
      w->status = st;
      w->err = err;
    }
    w->busy = 0;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int slem_writeback_new(SlemWriteback **self, SlemWriteFn fn, void *ctx, SlemError *err) {
  SlemWriteback *w = calloc(1, sizeof *w);
  *self = NULL;
  if (!w) return slem_error(err, SLEM_ENOMEM, "out of memory");
  w->fn = fn;
  w->ctx = ctx;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, worker, w) != 0) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
    return slem_error(err, SLEM_EIO, "cannot start the writing thread");
  }
  *self = w;
  return SLEM_OK;
}

/* Waits, with the lock held, until no block is being written; the time counts as waiting. */
static void drain(SlemWriteback *w) {
  if (w->busy) {
    double t0 = slem_now();
    while (w->busy) pthread_cond_wait(&w->cv, &w->mu);
    w->wait += slem_now() - t0;
  }
}

int slem_writeback_put(SlemWriteback *self, const void *buf, size_t n, SlemError *err) {
  int st;
  pthread_mutex_lock(&self->mu);
  drain(self);
  st = self->status;
  if (st != SLEM_OK) {
    if (err) *err = self->err;
  } else {
    self->buf = buf;
    self->n = n;
    self->busy = 1;
    pthread_cond_broadcast(&self->cv);
  }
  pthread_mutex_unlock(&self->mu);
  return st;
}

int slem_writeback_finish(SlemWriteback *self, SlemError *err) {
  int st;
  pthread_mutex_lock(&self->mu);
  drain(self);
  st = self->status;
  if (st != SLEM_OK && err) *err = self->err;
  pthread_mutex_unlock(&self->mu);
  return st;
}

void slem_writeback_times(SlemWriteback *self, double *write, double *wait) {
  pthread_mutex_lock(&self->mu);
  *write = self->write;
  *wait = self->wait;
  pthread_mutex_unlock(&self->mu);
}

void slem_writeback_free(SlemWriteback *self) {
  if (!self) return;
  pthread_mutex_lock(&self->mu);
  self->stop = 1;
  pthread_cond_broadcast(&self->cv);
  pthread_mutex_unlock(&self->mu);
  pthread_join(self->thread, NULL);
  pthread_mutex_destroy(&self->mu);
  pthread_cond_destroy(&self->cv);
  free(self);
}

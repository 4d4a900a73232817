#include "topk.h"

#include <stdlib.h>

int slem_topk_hit_before(const SlemHit *a, const SlemHit *b) {
  return a->score > b->score || (a->score == b->score && a->row < b->row);
}

int slem_topk_hit_cmp(const void *a, const void *b) {
  const SlemHit *x = a, *y = b;
  if (slem_topk_hit_before(x, y)) return -1;
  if (slem_topk_hit_before(y, x)) return 1;
  return 0;
}

void slem_topk_init(SlemTopK *self, SlemHit *mem, size_t k) {
  self->heap = mem;
  self->k = k;
  self->n = 0;
  self->owned = 0;
}

int slem_topk_new(SlemTopK **self, size_t k, SlemError *err) {
  SlemTopK *t = malloc(sizeof *t);
  SlemHit *mem = malloc((k ? k : 1) * sizeof *mem);
  *self = NULL;
  if (!t || !mem) {
    free(t);
    free(mem);
    return slem_error(err, SLEM_ENOMEM, "out of memory for a top-%zu list", k);
  }
  slem_topk_init(t, mem, k);
  t->owned = 1;
  *self = t;
  return SLEM_OK;
}

void slem_topk_free(SlemTopK *self) {
  if (!self) return;
  if (self->owned) free(self->heap);
  free(self);
}

void slem_topk_clear(SlemTopK *self) { self->n = 0; }

const SlemHit *slem_topk_worst(const SlemTopK *self) {
  return self->n == self->k && self->k > 0 ? &self->heap[0] : NULL;
}

/* Min-heap on "ranks before": a parent never ranks before its children, so the root is
 * the worst hit held. */
int slem_topk_push(SlemTopK *self, SlemHit c) {
  SlemHit *h = self->heap;
  size_t k = self->k, i;
  if (self->n < k) {
    i = self->n++;
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (!slem_topk_hit_before(&h[p], &c)) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = c;
    return 1;
  }
  if (k == 0 || !slem_topk_hit_before(&c, &h[0])) return 0;
  i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const SlemHit *mv = &c;
    if (l < k && slem_topk_hit_before(mv, &h[l])) m = l, mv = &h[l];
    if (r < k && slem_topk_hit_before(mv, &h[r])) m = r, mv = &h[r];
    if (m == i) break;
    h[i] = h[m];
    i = m;
  }
  h[i] = c;
  return 1;
}

size_t slem_topk_sorted(SlemTopK *self) {
  size_t n = self->n;
  qsort(self->heap, n, sizeof *self->heap, slem_topk_hit_cmp);
  self->n = 0;
  return n;
}

#include "tilecache.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

/* Tiles of one kind: their data, rows and positions, in order. */
typedef struct Part {
  void **data;
  size_t *n;
  SlemBlockPos *pos;
  size_t count, cap, bytes;
  int on; /* still keeping */
} Part;

struct SlemTileCache {
  size_t budget;
  Part rows, derived;
};

static void part_clear(Part *p) {
  for (size_t i = 0; i < p->count; i++) free(p->data[i]);
  free(p->data);
  free(p->n);
  free(p->pos);
  p->data = NULL;
  p->n = NULL;
  p->pos = NULL;
  p->count = p->cap = p->bytes = 0;
}

/* A new slot of bytes at the end of p, or NULL past the budget or out of memory. */
static void *part_add(Part *p, size_t budget, size_t nd, size_t bytes, const SlemBlockPos *pos) {
  void *a;
  if (p->bytes + bytes > budget) return NULL;
  if (p->count == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 64;
    void **d = realloc(p->data, cap * sizeof *d);
    size_t *n;
    SlemBlockPos *q;
    if (!d) return NULL;
    p->data = d;
    if (!(n = realloc(p->n, cap * sizeof *n))) return NULL;
    p->n = n;
    if (!(q = realloc(p->pos, cap * sizeof *q))) return NULL;
    p->pos = q;
    p->cap = cap;
  }
  if (!(a = slem_mem_alloc_large(bytes))) return NULL;
  p->data[p->count] = a;
  p->n[p->count] = nd;
  p->pos[p->count] = pos ? *pos : (SlemBlockPos){0};
  p->count++;
  p->bytes += bytes;
  return a;
}

int slem_tilecache_new(SlemTileCache **self, size_t budget, int keep_rows, SlemError *err) {
  SlemTileCache *c = calloc(1, sizeof *c);
  *self = NULL;
  if (!c) return slem_error(err, SLEM_ENOMEM, "out of memory");
  c->budget = budget;
  c->rows.on = keep_rows && budget > 0;
  c->derived.on = 1;
  *self = c;
  return SLEM_OK;
}

void slem_tilecache_free(SlemTileCache *self) {
  if (!self) return;
  part_clear(&self->rows);
  part_clear(&self->derived);
  free(self);
}

int slem_tilecache_keeping(const SlemTileCache *self) { return self->rows.on; }

void slem_tilecache_keep_rows(SlemTileCache *self, const void *rows, size_t nd, size_t bytes,
                              const SlemBlockPos *pos) {
  void *a;
  if (!self->rows.on) return;
  if (!(a = part_add(&self->rows, self->budget, nd, bytes, pos))) {
    self->rows.on = 0;
    part_clear(&self->rows);
    return;
  }
  memcpy(a, rows, bytes);
}

size_t slem_tilecache_tiles(const SlemTileCache *self) { return self->rows.count; }

const void *slem_tilecache_rows(const SlemTileCache *self, size_t i, size_t *nd,
                                SlemBlockPos *pos) {
  *nd = self->rows.n[i];
  *pos = self->rows.pos[i];
  return self->rows.data[i];
}

void *slem_tilecache_derive(SlemTileCache *self, size_t tile, size_t nd, size_t bytes) {
  void *a;
  if (!self->derived.on) return NULL;
  if (tile != self->derived.count) {
    slem_tilecache_drop_derived(self);
    self->derived.on = 0;
    return NULL;
  }
  if (!(a = part_add(&self->derived, self->budget, nd, bytes, NULL))) self->derived.on = 0;
  return a;
}

const void *slem_tilecache_derived(const SlemTileCache *self, size_t tile, size_t nd) {
  return tile < self->derived.count && self->derived.n[tile] == nd ? self->derived.data[tile]
                                                                   : NULL;
}

void slem_tilecache_drop_derived(SlemTileCache *self) {
  if (self->derived.count == 0) return;
  self->derived.on = 0;
  part_clear(&self->derived);
}

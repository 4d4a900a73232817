#include "strmap.h"

#include <stdlib.h>
#include <string.h>

long slem_arena_push(SlemArena *self, const char *s, size_t len) {
  if (self->n == self->off_cap) {
    size_t cap = self->off_cap ? 2 * self->off_cap : 256;
    size_t *p = realloc(self->off, cap * sizeof *p);
    if (!p) return -1;
    self->off = p;
    self->off_cap = cap;
  }
  if (self->len + len + 1 > self->cap) {
    size_t cap = self->cap ? self->cap : 4096;
    char *p;
    while (cap < self->len + len + 1) cap *= 2;
    p = realloc(self->text, cap);
    if (!p) return -1;
    self->text = p;
    self->cap = cap;
  }
  memcpy(self->text + self->len, s, len);
  self->text[self->len + len] = '\0';
  self->off[self->n] = self->len;
  self->len += len + 1;
  return (long)self->n++;
}

void slem_arena_clear(SlemArena *self) {
  free(self->text);
  free(self->off);
  memset(self, 0, sizeof *self);
}

struct SlemStrMap {
  SlemArena a;         /* the strings */
  long *slot;          /* open addressing: index or -1 */
  size_t nslot;        /* a power of two */
};

static uint64_t hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

SlemStrMap *slem_strmap_new(void) {
  SlemStrMap *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->nslot = 1024;
  m->slot = malloc(m->nslot * sizeof *m->slot);
  if (!m->slot) {
    free(m);
    return NULL;
  }
  memset(m->slot, 0xFF, m->nslot * sizeof *m->slot);
  return m;
}

void slem_strmap_free(SlemStrMap *self) {
  if (!self) return;
  slem_arena_clear(&self->a);
  free(self->slot);
  free(self);
}

size_t slem_strmap_count(const SlemStrMap *self) { return self->a.n; }
const char *slem_strmap_get(const SlemStrMap *self, size_t i) { return slem_arena_get(&self->a, i); }

static size_t probe(const SlemStrMap *m, const char *s, size_t len) {
  size_t mask = m->nslot - 1, i = (size_t)hash(s, len) & mask;
  for (;;) {
    long k = m->slot[i];
    if (k < 0) return i;
    {
      const char *t = slem_arena_get(&m->a, (size_t)k);
      if (strncmp(t, s, len) == 0 && t[len] == '\0') return i;
    }
    i = (i + 1) & mask;
  }
}

long slem_strmap_find(const SlemStrMap *self, const char *s, size_t len) {
  return self->slot[probe(self, s, len)];
}

static int grow(SlemStrMap *m) {
  size_t n = m->nslot * 2;
  long *slot = malloc(n * sizeof *slot);
  if (!slot) return -1;
  memset(slot, 0xFF, n * sizeof *slot);
  free(m->slot);
  m->slot = slot;
  m->nslot = n;
  for (size_t k = 0; k < m->a.n; k++) {
    const char *t = slem_arena_get(&m->a, k);
    m->slot[probe(m, t, strlen(t))] = (long)k;
  }
  return 0;
}

long slem_strmap_intern(SlemStrMap *self, const char *s, size_t len) {
  size_t i = probe(self, s, len);
  if (self->slot[i] >= 0) return self->slot[i];
  if (slem_arena_push(&self->a, s, len) < 0) return -1;
  self->slot[i] = (long)self->a.n - 1;
  if (2 * self->a.n > self->nslot && grow(self) != 0) return -1;
  return (long)self->a.n - 1;
}

struct SlemKeySet {
  uint64_t *key;  /* UINT64_MAX: empty */
  size_t n, nslot;
};

SlemKeySet *slem_keyset_new(void) {
  SlemKeySet *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nslot = 1024;
  s->key = malloc(s->nslot * sizeof *s->key);
  if (!s->key) {
    free(s);
    return NULL;
  }
  memset(s->key, 0xFF, s->nslot * sizeof *s->key);
  return s;
}

void slem_keyset_free(SlemKeySet *self) {
  if (!self) return;
  free(self->key);
  free(self);
}

static size_t kprobe(const SlemKeySet *s, uint64_t k) {
  size_t mask = s->nslot - 1, i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & mask;
  while (s->key[i] != UINT64_MAX && s->key[i] != k) i = (i + 1) & mask;
  return i;
}

int slem_keyset_has(const SlemKeySet *self, uint64_t key) {
  return self->key[kprobe(self, key)] == key;
}

int slem_keyset_add(SlemKeySet *self, uint64_t key) {
  size_t i = kprobe(self, key);
  if (self->key[i] == key) return 0;
  self->key[i] = key;
  self->n++;
  if (2 * self->n > self->nslot) {
    uint64_t *old = self->key;
    size_t nold = self->nslot;
    uint64_t *nk = malloc(2 * nold * sizeof *nk);
    if (!nk) return -1;
    memset(nk, 0xFF, 2 * nold * sizeof *nk);
    self->key = nk;
    self->nslot = 2 * nold;
    for (size_t j = 0; j < nold; j++)
      if (old[j] != UINT64_MAX) self->key[kprobe(self, old[j])] = old[j];
    free(old);
  }
  return 1;
}

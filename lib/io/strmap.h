/* Interned strings: each distinct string gets a dense index 0, 1, 2, ... in order of
 * first appearance. Used for query and document ids in evaluation. */
#ifndef SLEM_STRMAP_H
#define SLEM_STRMAP_H

#include <stddef.h>
#include <stdint.h>

/* Strings back to back in one growing buffer, each NUL-terminated and numbered 0, 1, ...
 * in order of appending: the storage of ids files and of interned strings. Zero-initialise
 * one to start; slem_arena_clear() frees what it holds. */
typedef struct SlemArena {
  char *text;
  size_t len, cap;   /* bytes used and allocated in text */
  size_t *off;       /* off[i]: start of string i */
  size_t n, off_cap;
} SlemArena;

/* Appends s (len bytes, a NUL is added) as string number self->n; returns that number, or
 * -1 when out of memory (self unchanged). */
long slem_arena_push(SlemArena *self, const char *s, size_t len);
static inline const char *slem_arena_get(const SlemArena *self, size_t i) {
  return self->text + self->off[i];
}
void slem_arena_clear(SlemArena *self);

typedef struct SlemStrMap SlemStrMap;

/* NULL when out of memory. */
SlemStrMap *slem_strmap_new(void);
void slem_strmap_free(SlemStrMap *self);

/* The index of s (len bytes), adding it when absent. -1 when out of memory. */
long slem_strmap_intern(SlemStrMap *self, const char *s, size_t len);

/* The index of s, or -1 when absent. */
long slem_strmap_find(const SlemStrMap *self, const char *s, size_t len);

size_t slem_strmap_count(const SlemStrMap *self);
/* The string of index i, NUL-terminated, owned by self. */
const char *slem_strmap_get(const SlemStrMap *self, size_t i);

/* A set of 64-bit keys (pairs of indices). */
typedef struct SlemKeySet SlemKeySet;
SlemKeySet *slem_keyset_new(void);
void slem_keyset_free(SlemKeySet *self);
/* Returns 1 when added, 0 when already there, -1 when out of memory. */
int slem_keyset_add(SlemKeySet *self, uint64_t key);
int slem_keyset_has(const SlemKeySet *self, uint64_t key);

static inline uint64_t slem_pair(size_t a, size_t b) { return (uint64_t)a << 32 | (uint64_t)b; }

#endif

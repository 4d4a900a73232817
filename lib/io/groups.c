#include "groups.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

struct SlemGroups {
  const SlemIds *names;
  size_t d, count;
  size_t *group;    /* group(rows): the group of every row */
  uint64_t *size;   /* size(count): rows per group */
  double *sum;      /* sum(count, d), then the means */
  uint64_t rows;    /* rows added so far */
  SlemStrMap *map;
};

int slem_groups_new(SlemGroups **self, const SlemIds *names, size_t d, SlemError *err) {
  SlemGroups *g;
  size_t rows = slem_ids_count(names);
  *self = NULL;
  g = calloc(1, sizeof *g);
  if (!g) return slem_error(err, SLEM_ENOMEM, "out of memory");
  g->names = names;
  g->d = d;
  g->map = slem_strmap_new();
  g->group = malloc((rows ? rows : 1) * sizeof *g->group);
  if (!g->map || !g->group) goto oom;
  for (size_t i = 0; i < rows; i++) {
    const char *s = slem_ids_get(names, i);
    long k = slem_strmap_intern(g->map, s, strlen(s));
    if (k < 0) goto oom;
    g->group[i] = (size_t)k;
  }
  g->count = slem_strmap_count(g->map);
  g->size = calloc(g->count ? g->count : 1, sizeof *g->size);
  g->sum = calloc((g->count ? g->count : 1) * d, sizeof *g->sum);
  if (!g->size || !g->sum) goto oom;
  *self = g;
  return SLEM_OK;
oom:
  slem_groups_free(g);
  return slem_error(err, SLEM_ENOMEM, "out of memory for the groups of %s",
                    slem_ids_name(names));
}

void slem_groups_free(SlemGroups *self) {
  if (!self) return;
  slem_strmap_free(self->map);
  free(self->group);
  free(self->size);
  free(self->sum);
  free(self);
}

size_t slem_groups_count(const SlemGroups *self) { return self->count; }

const char *slem_groups_name(const SlemGroups *self, size_t g) {
  return slem_strmap_get(self->map, g);
}

int slem_groups_add(SlemGroups *self, const double *x, size_t b, const char *src,
                    SlemError *err) {
  size_t d = self->d, rows = slem_ids_count(self->names);
  for (size_t i = 0; i < b; i++) {
    double *s;
    if (self->rows >= rows)
      return slem_error(err, SLEM_EFORMAT,
                        "%s: record %" PRIu64 ": the groups file %s names only %zu rows", src,
                        self->rows + 1, slem_ids_name(self->names), rows);
    s = self->sum + self->group[self->rows] * d;
    for (size_t j = 0; j < d; j++) s[j] += x[i * d + j];
    self->size[self->group[self->rows]]++;
    self->rows++;
  }
  return SLEM_OK;
}

int slem_groups_finish(SlemGroups *self, const char *src, const double **means,
                       SlemError *err) {
  size_t d = self->d, rows = slem_ids_count(self->names);
  *means = NULL;
  if (self->rows != rows)
    return slem_error(err, SLEM_EFORMAT,
                      "%s: %" PRIu64 " records, but the groups file %s names %zu rows", src,
                      self->rows, slem_ids_name(self->names), rows);
  for (size_t g = 0; g < self->count; g++)
    for (size_t j = 0; j < d; j++) self->sum[g * d + j] /= (double)self->size[g];
  self->rows = UINT64_MAX; /* finished: further adds are refused */
  *means = self->sum;
  return SLEM_OK;
}

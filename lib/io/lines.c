#include "lines.h"

#include <stdlib.h>
#include <string.h>

#include "io.h"

struct SlemLines {
  SlemIn *in;
  uint64_t number;
};

int slem_lines_open(SlemLines **self, const char *path, SlemError *err) {
  SlemLines *l = calloc(1, sizeof *l);
  int st;
  *self = NULL;
  if (!l) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_open(&l->in, path, err);
  if (st) {
    free(l);
    return st;
  }
  *self = l;
  return SLEM_OK;
}

void slem_lines_free(SlemLines *self) {
  if (!self) return;
  slem_in_free(self->in);
  free(self);
}

int slem_lines_next(SlemLines *self, char **line, size_t *len, SlemError *err) {
  for (;;) {
    int st = slem_in_getline(self->in, line, len, err);
    if (st) return st;
    if (!*line) return SLEM_OK;
    self->number++;
    if (strspn(*line, " \t") != *len) return SLEM_OK;
  }
}

int slem_lines_fields(SlemLines *self, char **f, size_t max, size_t *nf, SlemError *err) {
  *nf = 0;
  for (;;) {
    char *line;
    size_t len;
    int st = slem_lines_next(self, &line, &len, err);
    if (st || !line) return st;
    *nf = slem_lines_split(line, " \t", 1, f, max);
    if (*nf) return SLEM_OK; /* a NUL first makes a line of no fields: skipped as blank */
  }
}

uint64_t slem_lines_number(const SlemLines *self) { return self->number; }

int slem_lines_peek(SlemLines *self, size_t n, const unsigned char **p, size_t *avail,
                    SlemError *err) {
  return slem_in_peek(self->in, n, p, avail, err);
}

int slem_lines_unterminated(const SlemLines *self) { return slem_in_unterminated(self->in); }

const char *slem_lines_name(const SlemLines *self) { return slem_in_name(self->in); }

size_t slem_lines_split(char *line, const char *seps, int collapse, char **f, size_t max) {
  size_t n = 0;
  char *p = line;
  if (collapse)
    while (*p && strchr(seps, *p)) p++;
  if (!*p) return 0;
  for (;;) {
    char *end = p + strcspn(p, seps);
    if (n < max) f[n] = p;
    n++;
    if (!*end) break;
    *end = '\0';
    p = end + 1;
    if (collapse) {
      while (*p && strchr(seps, *p)) p++;
      if (!*p) break;
    }
  }
  return n;
}

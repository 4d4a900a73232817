#include "textbuf.h"

#include <stdlib.h>
#include <string.h>

char *slem_textbuf_room(SlemTextBuf *self, size_t n) {
  if (self->cap - self->len < n || !self->text) {
    size_t cap = self->cap ? self->cap : 4096;
    char *t;
    while (cap - self->len < n) {
      if (cap > ((size_t)-1) / 2) return NULL;
      cap *= 2;
    }
    if (!(t = realloc(self->text, cap))) return NULL;
    self->text = t;
    self->cap = cap;
  }
  return self->text + self->len;
}

int slem_textbuf_put(SlemTextBuf *self, const char *s, size_t n) {
  char *p = slem_textbuf_room(self, n);
  if (!p) return -1;
  if (n) memcpy(p, s, n);
  self->len += n;
  return 0;
}

void slem_textbuf_free(SlemTextBuf *self) {
  if (!self) return;
  free(self->text);
  self->text = NULL;
  self->len = self->cap = 0;
}

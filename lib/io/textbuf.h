/* A growing buffer of text: what one unit of work formats on its thread before one thread
 * writes the units' texts in order (slem-match's rankings). Zero-initialise one to start;
 * slem_textbuf_free() releases it.
 */
#ifndef SLEM_TEXTBUF_H
#define SLEM_TEXTBUF_H

#include <stddef.h>

typedef struct SlemTextBuf {
  char *text;  /* text[0..len), not NUL-terminated; NULL while cap is 0 */
  size_t len, cap;
} SlemTextBuf;

/* Room for n more bytes after self->text + self->len (the buffer grows, its text kept):
 * returns that end, where the caller writes and then adds what it wrote to self->len; NULL
 * when out of memory (self unchanged). */
char *slem_textbuf_room(SlemTextBuf *self, size_t n);

/* Appends s[0..n): 0, or -1 when out of memory (self unchanged). */
int slem_textbuf_put(SlemTextBuf *self, const char *s, size_t n);

/* Frees the text and zeroes self. Accepts NULL. */
void slem_textbuf_free(SlemTextBuf *self);

#endif

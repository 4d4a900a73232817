#define _POSIX_C_SOURCE 200809L
#include "ids.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "strmap.h"

struct SlemIds {
  char *name;
  SlemArena a;      /* the ids, in order */
  int records;      /* from a container: id i is "record i + 1" in messages, else "line" */
};

void slem_ids_free(SlemIds *self) {
  if (!self) return;
  free(self->name);
  slem_arena_clear(&self->a);
  free(self);
}

size_t slem_ids_count(const SlemIds *self) { return self->a.n; }
const char *slem_ids_get(const SlemIds *self, size_t i) { return slem_arena_get(&self->a, i); }
const char *slem_ids_name(const SlemIds *self) { return self->name; }

static int push(SlemIds *ids, const char *s, size_t len) {
  return slem_arena_push(&ids->a, s, len) < 0 ? -1 : 0;
}

/* 1 when s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or code points
 * past U+10FFFF). */
static int utf8_valid(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  while (p < end) {
    unsigned c = *p++, need, min, cp;
    if (c < 0x80) continue;
    if (c >= 0xc2 && c <= 0xdf) need = 1, min = 0x80, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) need = 2, min = 0x800, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) need = 3, min = 0x10000, cp = c & 0x07;
    else return 0;
    if ((size_t)(end - p) < need) return 0;
    for (unsigned k = 0; k < need; k++) {
      if ((p[k] & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (p[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    p += need;
  }
  return 1;
}

/* Refuses what an id may not be, naming name and where (unit no): empty, white space or
 * NUL (it would shift or split the columns of tsv and trec), another control character
 * (tsv, jsonl and the results page carry ids as they are), or not UTF-8. */
static int check_id(const char *name, const char *unit, uint64_t no, const char *s, size_t len,
                    SlemError *err) {
  if (len == 0) return slem_error(err, SLEM_EFORMAT, "%s: %s %" PRIu64 ": empty id", name, unit, no);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == 0)
      return slem_error(err, SLEM_EFORMAT, "%s: %s %" PRIu64 ": id contains white space or NUL",
                        name, unit, no);
    if (c < 0x20 || c == 0x7f)
      return slem_error(err, SLEM_EFORMAT, "%s: %s %" PRIu64 ": id contains the control character "
                        "0x%02x", name, unit, no, c);
  }
  if (!utf8_valid(s, len))
    return slem_error(err, SLEM_EFORMAT, "%s: %s %" PRIu64 ": id is not UTF-8 text (rankings in "
                      "jsonl and the results page need it)", name, unit, no);
  return SLEM_OK;
}

static int read_list(SlemIds **self, const char *path, int unique, int empty_ok,
                     SlemError *err) {
  SlemIn *in = NULL;
  SlemIds *ids = calloc(1, sizeof *ids);
  SlemStrMap *seen = slem_strmap_new();
  int st;
  uint64_t line_no = 0;
  *self = NULL;
  if (!ids || !seen) {
    free(ids);
    slem_strmap_free(seen);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  st = slem_in_open(&in, path, err);
  if (st) goto fail;
  ids->name = malloc(strlen(slem_in_name(in)) + 1);
  if (!ids->name) goto nomem;
  strcpy(ids->name, slem_in_name(in));
  for (;;) {
    char *line;
    size_t len;
    st = slem_in_getline(in, &line, &len, err);
    if (st) goto fail;
    if (!line) break;
    line_no++;
    if ((st = check_id(ids->name, "line", line_no, line, len, err)) != SLEM_OK) goto fail;
    if (unique) {
      long at = slem_strmap_intern(seen, line, len);
      if (at < 0) goto nomem;
      if ((uint64_t)at != ids->a.n) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' appears twice (line "
                        "%ld): rows named alike could not be told apart", ids->name, line_no,
                        line, at + 1);
        goto fail;
      }
    }
    if (push(ids, line, len) != 0) goto nomem;
  }
  if (ids->a.n == 0 && !empty_ok) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no ids (empty file)", ids->name);
    goto fail;
  }
  slem_in_free(in);
  slem_strmap_free(seen);
  *self = ids;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_in_free(in);
  slem_strmap_free(seen);
  slem_ids_free(ids);
  return st;
}

int slem_ids_read(SlemIds **self, const char *path, SlemError *err) {
  return read_list(self, path, 1, 0, err);
}

int slem_ids_read_empty(SlemIds **self, const char *path, SlemError *err) {
  return read_list(self, path, 1, 1, err);
}

int slem_ids_labels_read(SlemIds **self, const char *path, SlemError *err) {
  return read_list(self, path, 0, 0, err);
}

int slem_ids_concat(SlemIds **self, SlemIds *const *parts, size_t n, SlemError *err) {
  SlemIds *ids = calloc(1, sizeof *ids);
  const char *name = n > 0 ? parts[0]->name : "ids";
  *self = NULL;
  if (!ids || !(ids->name = malloc(strlen(name) + 1))) goto nomem;
  strcpy(ids->name, name);
  for (size_t p = 0; p < n; p++)
    for (size_t i = 0; i < parts[p]->a.n; i++) {
      const char *s = slem_ids_get(parts[p], i);
      if (push(ids, s, strlen(s)) != 0) goto nomem;
    }
  *self = ids;
  return SLEM_OK;
nomem:
  slem_ids_free(ids);
  return slem_error(err, SLEM_ENOMEM, "out of memory for the ids");
}

int slem_ids_unpack(SlemIds **self, const char *name, const char *buf, size_t bytes,
                    uint64_t count, SlemError *err) {
  SlemIds *ids = calloc(1, sizeof *ids);
  size_t pos = 0;
  int st;
  *self = NULL;
  if (!ids || !(ids->name = malloc(strlen(name) + 1))) goto nomem;
  strcpy(ids->name, name);
  ids->records = 1;
  for (uint64_t i = 0; i < count; i++) {
    const char *s = buf + pos;
    size_t len = pos < bytes ? strnlen(s, bytes - pos) : 0;
    if (pos >= bytes || pos + len == bytes) {
      slem_ids_free(ids);
      return slem_error(err, SLEM_EFORMAT, "%s: the ids section holds fewer than %" PRIu64
                        " ids", name, count);
    }
    if ((st = check_id(name, "record", i + 1, s, len, err)) != SLEM_OK) {
      slem_ids_free(ids);
      return st;
    }
    if (push(ids, s, len) != 0) goto nomem;
    pos += len + 1;
  }
  if (pos != bytes) {
    slem_ids_free(ids);
    return slem_error(err, SLEM_EFORMAT, "%s: the ids section holds more than %" PRIu64 " ids",
                      name, count);
  }
  if ((st = slem_ids_unique(&ids, 1, NULL, err)) != SLEM_OK) {
    slem_ids_free(ids);
    return st;
  }
  *self = ids;
  return SLEM_OK;
nomem:
  slem_ids_free(ids);
  return slem_error(err, SLEM_ENOMEM, "out of memory for the ids");
}

int slem_ids_unique(SlemIds *const *parts, size_t n, const char *what, SlemError *err) {
  SlemStrMap *seen = slem_strmap_new();
  size_t *part_of = NULL, cap = 0, total = 0;
  int st = SLEM_OK;
  if (!seen) return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (size_t p = 0; p < n; p++) total += parts[p]->a.n;
  if (!(part_of = malloc((total ? total : 1) * sizeof *part_of))) {
    slem_strmap_free(seen);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  /* part_of[k]: the part of the k-th distinct id; its place there is k minus the ids of
   * the parts before it, as long as every id so far was new */
  for (size_t p = 0; p < n && st == SLEM_OK; p++) {
    for (size_t i = 0; i < parts[p]->a.n; i++) {
      const char *s = slem_ids_get(parts[p], i);
      long at = slem_strmap_intern(seen, s, strlen(s));
      if (at < 0) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory");
        break;
      }
      if ((size_t)at == cap) {
        part_of[cap++] = p;
        continue;
      }
      {
        size_t fp = part_of[at], fi = (size_t)at;
        char here[64] = "", there[64] = "";
        for (size_t q = 0; q < fp; q++) fi -= parts[q]->a.n;
        if (what && n > 1) {
          snprintf(here, sizeof here, " (%s %zu)", what, p + 1);
          snprintf(there, sizeof there, " (%s %zu)", what, fp + 1);
        }
        st = slem_error(err, SLEM_EFORMAT, "%s%s: %s %zu: id '%s' appears twice (%s%s: %s %zu): rows "
                        "named alike could not be told apart", parts[p]->name, here,
                        parts[p]->records ? "record" : "line", i + 1, s, parts[fp]->name, there,
                        parts[fp]->records ? "record" : "line", fi + 1);
        break;
      }
    }
  }
  free(part_of);
  slem_strmap_free(seen);
  return st;
}

/* The ranking reader (rankings.h): recognises the format of the table (rankings.c), reads
 * its lines or hands over to its own files' reader, and groups results by query. */
#define _POSIX_C_SOURCE 200809L
#include "rankings.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankfmt.h"

#define NONE SLEM_RANK_NONE

void slem_rankreader_free(SlemRankReader *self) {
  if (!self) return;
  if (self->ops && self->ops->rfree) self->ops->rfree(self);
  slem_lines_free(self->lines);
  slem_strmap_free(self->qmap);
  free(self->name);
  free(self->arena);
  free(self->e);
  free(self->o);
  free(self->slot);
  free(self->pend);
  free(self);
}

int slem_rankreader_open(SlemRankReader **self, const char *path, SlemRankFormat fmt,
                         SlemError *err) {
  SlemRankReader *r = calloc(1, sizeof *r);
  const SlemRankFormatOps *o;
  int st;
  *self = NULL;
  if (!r || !(r->qmap = slem_strmap_new())) {
    slem_rankreader_free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (fmt != SLEM_RANK_AUTO && !slem_rankformat_ops(fmt)) {
    slem_rankreader_free(r);
    return slem_error(err, SLEM_EINVAL, "unknown ranking format %d", (int)fmt);
  }
  r->ops = slem_rankformat_ops(fmt);
  for (int i = 0; !r->ops && (o = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (o->sniff_path && o->sniff_path(path)) r->ops = o; /* a format known by its files' names */
  st = r->ops && r->ops->ropen ? r->ops->ropen(r, path, err) : slem_lines_open(&r->lines, path, err);
  if (st) {
    slem_rankreader_free(r);
    return st;
  }
  *self = r;
  return SLEM_OK;
}

SlemRankFormat slem_rankreader_format(const SlemRankReader *self) {
  const SlemRankFormatOps *o;
  for (int i = 0; (o = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (o == self->ops) return (SlemRankFormat)i;
  return SLEM_RANK_AUTO;
}

const SlemRankShard *slem_rankreader_shard(const SlemRankReader *self) {
  return self->shard.count > 0 ? &self->shard : NULL;
}

/* A shard line (the first line of a file that slem-match --shard wrote): parsed into
 * r->shard. Returns 1 when line is one, 0 when it is not, -1 with err set when it is a bad
 * one. The format is then the one that carries shard lines. */
static int shard_line(SlemRankReader *r, const char *line, SlemError *err) {
  const SlemRankFormatOps *o;
  if (!slem_rankshard_is_line(line, 0) || (r->ops && !r->ops->shard_lines)) return 0;
  for (int i = 0; !r->ops && (o = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (o->shard_lines) r->ops = o;
  if (slem_rankshard_parse(&r->shard, line, 0, slem_lines_name(r->lines), "line 1", err) !=
      SLEM_OK) {
    r->shard.count = 0;
    return -1;
  }
  return 1;
}

/* The end line of a shard's ranking: parsed into r->shard. Returns 1 when line is one, 0
 * when it is not, -1 with err set when it is a bad one or comes without a first line. */
static int shard_end_line(SlemRankReader *r, const char *line, SlemError *err) {
  char where[48];
  if (!r->ops->shard_lines || !slem_rankshard_is_line(line, 1)) return 0;
  snprintf(where, sizeof where, "line %" PRIu64, slem_lines_number(r->lines));
  if (r->shard.count == 0) {
    slem_error(err, SLEM_EFORMAT, "%s: %s: a shard's end line, but no shard line at line 1",
               slem_lines_name(r->lines), where);
    return -1;
  }
  if (r->shard.has_end) {
    slem_error(err, SLEM_EFORMAT, "%s: %s: a second shard end line", slem_lines_name(r->lines),
               where);
    return -1;
  }
  return slem_rankshard_parse(&r->shard, line, 1, slem_lines_name(r->lines), where, err) ==
                 SLEM_OK ? 1 : -1;
}

const char *slem_rankreader_name(const SlemRankReader *self) {
  return self->lines ? slem_lines_name(self->lines) : self->name;
}
size_t slem_rankreader_queries(const SlemRankReader *self) { return slem_strmap_count(self->qmap); }
int slem_rankreader_unterminated(const SlemRankReader *self) {
  return self->lines && self->eof && slem_lines_unterminated(self->lines);
}
int slem_rankreader_is_text(const SlemRankReader *self) { return self->lines != NULL; }
uint64_t slem_rankreader_line(const SlemRankReader *self) {
  return self->lines ? slem_lines_number(self->lines) : self->line;
}
const char *slem_rankreader_place(const SlemRankReader *self, char *buf, uint64_t line,
                                  size_t pos) {
  if (self->ops && self->ops->place)
    self->ops->place(buf, SLEM_RANK_PLACE_MAX, line, pos);
  else
    snprintf(buf, SLEM_RANK_PLACE_MAX, "line %" PRIu64, line);
  return buf;
}

/* Copies s (len bytes) into the arena; returns its offset, or NONE out of memory. */
static size_t keep(SlemRankReader *r, const char *s, size_t len) {
  size_t off = r->alen;
  if (r->alen + len + 1 > r->acap) {
    size_t cap = r->acap ? r->acap : 4096;
    char *p;
    while (cap < r->alen + len + 1) cap *= 2;
    p = realloc(r->arena, cap);
    if (!p) return NONE;
    r->arena = p;
    r->acap = cap;
  }
  memcpy(r->arena + off, s, len);
  r->arena[off + len] = '\0';
  r->alen += len + 1;
  return off;
}

static size_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (size_t)h;
}

/* Inserts entry i into the id set; 1 when its id was already there, -1 out of memory. */
static int seen_id(SlemRankReader *r, size_t i) {
  const char *id = r->arena + r->o[i].id;
  size_t mask, h;
  if (2 * (i + 1) > r->nslot) {
    size_t ns = r->nslot ? 2 * r->nslot : 64;
    size_t *p = malloc(ns * sizeof *p);
    if (!p) return -1;
    free(r->slot);
    r->slot = p;
    r->nslot = ns;
    for (size_t k = 0; k < ns; k++) p[k] = NONE;
    for (size_t j = 0; j < i; j++) { /* re-insert the others: all distinct */
      h = hash(r->arena + r->o[j].id) & (ns - 1);
      while (p[h] != NONE) h = (h + 1) & (ns - 1);
      p[h] = j;
    }
  }
  mask = r->nslot - 1;
  for (h = hash(id) & mask; r->slot[h] != NONE; h = (h + 1) & mask)
    if (strcmp(r->arena + r->o[r->slot[h]].id, id) == 0) return 1;
  r->slot[h] = i;
  return 0;
}

/* Starts a query whose id is q (len bytes). */
int slem_rankreader_begin(SlemRankReader *r, const char *q, size_t len, uint64_t line, SlemError *err) {
  long qi;
  r->alen = 0;
  r->n = 0;
  for (size_t k = 0; k < r->nslot; k++) r->slot[k] = NONE;
  r->qoff = keep(r, q, len);
  qi = slem_strmap_intern(r->qmap, q, len);
  if (r->qoff == NONE || qi < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->q.index = (size_t)qi;
  r->q.line = line;
  return SLEM_OK;
}

/* Adds an entry to the current query. tag may be NULL, score text too (jsonl). */
int slem_rankreader_add(SlemRankReader *r, const char *id, long rank, double score,
                        const char *stext, int64_t row, const char *tag, uint64_t line,
                        SlemError *err) {
  size_t i = r->n;
  int dup;
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 128;
    SlemRankEntry *e = realloc(r->e, cap * sizeof *e);
    SlemRankOffs *o;
    if (!e) return slem_error(err, SLEM_ENOMEM, "out of memory");
    r->e = e;
    o = realloc(r->o, cap * sizeof *o);
    if (!o) return slem_error(err, SLEM_ENOMEM, "out of memory");
    r->o = o;
    r->cap = cap;
  }
  r->o[i].id = keep(r, id, strlen(id));
  r->o[i].score = stext ? keep(r, stext, strlen(stext)) : NONE;
  r->o[i].tag = tag ? keep(r, tag, strlen(tag)) : NONE;
  if (r->o[i].id == NONE || (stext && r->o[i].score == NONE) || (tag && r->o[i].tag == NONE))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->e[i].rank = rank;
  r->e[i].score = score;
  r->e[i].row = row;
  r->e[i].line = line;
  r->n++;
  dup = seen_id(r, i);
  if (dup < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (dup) {
    char at[SLEM_RANK_PLACE_MAX];
    return slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' appears twice for query '%s'",
                      slem_rankreader_name(r), slem_rankreader_place(r, at, line, i), id,
                      r->arena + r->qoff);
  }
  return SLEM_OK;
}

/* Makes the entries' pointers from the arena offsets and hands out the query. */
void slem_rankreader_finish(SlemRankReader *r, const SlemRankQuery **q) {
  for (size_t i = 0; i < r->n; i++) {
    r->e[i].id = r->arena + r->o[i].id;
    r->e[i].score_text = r->o[i].score == NONE ? NULL : r->arena + r->o[i].score;
    r->e[i].tag = r->o[i].tag == NONE ? NULL : r->arena + r->o[i].tag;
  }
  r->q.query = r->arena + r->qoff;
  r->q.e = r->e;
  r->q.n = r->n;
  r->any = 1; /* a jsonl query with an empty list counts: an empty shard names its queries */
  *q = &r->q;
}

/* The format of a text whose first non-blank line is line: the highest sniff. */
static const SlemRankFormatOps *sniff(const char *line) {
  const SlemRankFormatOps *best = NULL;
  int score = 0;
  const SlemRankFormatOps *o;
  for (int i = 0; (o = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++) {
    int s = o->sniff ? o->sniff(line) : 0;
    if (s > score) {
      score = s;
      best = o;
    }
  }
  return best;
}

/* Whether the text begins with numpy's magic: an npy file given as text (a pipe, or
 * another name). */
static int npy_magic(SlemRankReader *r, int *magic, SlemError *err) {
  const unsigned char *p;
  size_t avail;
  int st = slem_lines_peek(r->lines, 6, &p, &avail, err);
  *magic = st == SLEM_OK && avail == 6 && memcmp(p, "\x93NUMPY", 6) == 0;
  return st;
}

int slem_rankreader_next(SlemRankReader *self, const SlemRankQuery **q, SlemError *err) {
  SlemRankReader *r = self;
  const char *name = slem_rankreader_name(r);
  int st, open = 0;
  *q = NULL;
  if (r->ops && r->ops->rnext) return r->ops->rnext(r, q, err);
  if (r->deferred.status) {
    if (err) *err = r->deferred;
    return r->deferred.status;
  }
  if (r->has_pend) {
    const char *pq = r->pend, *pid = pq + strlen(pq) + 1, *ps = pid + strlen(pid) + 1;
    const char *pt = ps + strlen(ps) + 1;
    r->has_pend = 0;
    if ((st = slem_rankreader_begin(r, pq, strlen(pq), r->pend_line, err)) != SLEM_OK ||
        (st = slem_rankreader_add(r, pid, r->pend_rank, r->pend_score, ps, -1,
                                  r->pend_tag ? pt : NULL, r->pend_line, err)) != SLEM_OK)
      return st;
    open = 1;
  }
  if (slem_lines_number(r->lines) == 0 && !r->eof) {
    int magic;
    if ((st = npy_magic(r, &magic, err)) != SLEM_OK) return st;
    if (magic)
      return slem_error(err, SLEM_EFORMAT, "%s: an npy file: npy rankings are read from their "
                        "two files, OUT.I.npy and OUT.D.npy, by name (not from a pipe or "
                        "stdin)", name);
  }
  while (!r->eof) {
    char *line;
    size_t len;
    uint64_t ln;
    SlemRankLine f;
    st = slem_lines_next(r->lines, &line, &len, err);
    if (st) return st;
    if (!line) {
      r->eof = 1;
      break;
    }
    ln = slem_lines_number(r->lines);
    if (ln == 1) {
      int sh = shard_line(r, line, err);
      if (sh < 0) return SLEM_EFORMAT;
      if (sh > 0) continue;
    }
    if (!r->ops) {
      r->ops = sniff(line);
      /* a comment first: the format is the next line's (a tsv query "#1" is no comment) */
      if (r->ops->comment && line[0] == r->ops->comment) {
        r->ops = NULL;
        continue;
      }
    }
    if (r->ops->comment && line[0] == r->ops->comment) continue;
    if (r->ops->read_query) {
      int sh = shard_end_line(r, line, err);
      if (sh < 0) return SLEM_EFORMAT;
      if (sh > 0) continue;
      if (r->shard.has_end)
        return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": a line after the shard's end "
                          "line", name, ln);
      return r->ops->read_query(r, line, ln, q, err);
    }
    st = r->ops->read_line(r, line, ln, &f, &r->deferred);
    if (st) {
      /* hand out the lines before it first, so that errors come in line order */
      if (open) break;
      if (err) *err = r->deferred;
      return st;
    }
    if (open && strcmp(f.query, r->arena + r->qoff) != 0) {
      /* the next query's first line: kept for the next call */
      const char *tag = f.tag ? f.tag : "";
      size_t lq = strlen(f.query) + 1, li = strlen(f.id) + 1, ls = strlen(f.score_text) + 1;
      size_t need = lq + li + ls + strlen(tag) + 1;
      if (need > r->pend_cap) {
        char *p = realloc(r->pend, need);
        if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
        r->pend = p;
        r->pend_cap = need;
      }
      memcpy(r->pend, f.query, lq);
      memcpy(r->pend + lq, f.id, li);
      memcpy(r->pend + lq + li, f.score_text, ls);
      memcpy(r->pend + lq + li + ls, tag, strlen(tag) + 1);
      r->pend_rank = f.rank;
      r->pend_score = f.score;
      r->pend_line = ln;
      r->pend_tag = f.tag != NULL;
      r->has_pend = 1;
      break;
    }
    if (!open) {
      if ((st = slem_rankreader_begin(r, f.query, strlen(f.query), ln, err)) != SLEM_OK) return st;
      open = 1;
    }
    st = slem_rankreader_add(r, f.id, f.rank, f.score, f.score_text, -1, f.tag, ln, err);
    if (st) return st;
  }
  if (open) {
    slem_rankreader_finish(r, q);
    return SLEM_OK;
  }
  if (!r->any) return slem_error(err, SLEM_EFORMAT, "%s: no rankings (empty file)", name);
  return SLEM_OK;
}

void slem_rankreader_place_rows(char *buf, size_t size, uint64_t line, size_t pos) {
  if (pos == SLEM_RANK_WHOLE_QUERY)
    snprintf(buf, size, "row %" PRIu64, line - 1);
  else
    snprintf(buf, size, "row %" PRIu64 ", column %zu", line - 1, pos);
}

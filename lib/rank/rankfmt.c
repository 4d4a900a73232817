/* What the ranking formats share (rankfmt.h): the reader's query being built, which the
 * readers of rankings.c and of the formats (rank_*.c) fill, and the split of a line of one
 * result. The table of formats and the public writer and reader are rankings.c's. */
#include "rankfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "strmap.h"

#define NONE SLEM_RANK_NONE

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

static int parse_rank(const char *s, long *out) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < 1) return -1;
  *out = v;
  return 0;
}

static int parse_score(const char *s, double *out) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (end == s || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int slem_rankline_split(SlemRankReader *r, char *line, uint64_t ln, const SlemRankFields *fs,
                        SlemRankLine *out, SlemError *err) {
  char *f[8];
  size_t nf = slem_lines_split(line, fs->seps, fs->collapse, f, 8);
  const char *name = slem_rankreader_name(r);
  if (nf != fs->want)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected %zu (%s)",
                      name, ln, nf, fs->want, fs->layout);
  if (parse_rank(f[fs->irank], &out->rank) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": rank '%s' is not a positive whole "
                      "number", name, ln, f[fs->irank]);
  if (parse_score(f[fs->iscore], &out->score) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score '%s' is not a number", name,
                      ln, f[fs->iscore]);
  out->query = f[0];
  out->id = f[fs->iid];
  out->score_text = f[fs->iscore];
  out->tag = fs->itag >= 0 ? f[fs->itag] : NULL;
  return SLEM_OK;
}

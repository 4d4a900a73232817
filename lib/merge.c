#define _POSIX_C_SOURCE 200809L
#include "merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "ids.h"
#include "strmap.h"
#include "topk.h"

void slem_merge_opts_init(SlemMergeOpts *opts) {
  opts->k = 100;
  opts->format = SLEM_RANK_AUTO;
  opts->db_ids = NULL;
  opts->check = NULL;
  opts->check_ctx = NULL;
}

typedef struct Shard {
  SlemRankReader *r;
  const SlemRankQuery *g;  /* the current query */
  SlemKeySet *rows;        /* every row it returned */
  uint64_t nrows;          /* their number */
  /* its shortest list with fewer than k results, if any */
  size_t short_n;
  char *short_query;
  uint64_t short_line;
} Shard;

/* A result of one shard, with its global row. */
typedef struct Cand {
  SlemHit hit;  /* first: the comparison reads it */
  size_t shard, i;
} Cand;

/* The ordering rule of topk.h on candidates: the one place that decides the order. */
static int cand_cmp(const void *a, const void *b) {
  return slem_hit_cmp(&((const Cand *)a)->hit, &((const Cand *)b)->hit);
}

typedef struct Merge {
  Shard *s;
  size_t n;
  const SlemMergeOpts *opts;
  SlemIds *ids;         /* db_ids, and its map id -> row */
  SlemStrMap *idmap;
  Cand *c;
  size_t ccap;
  SlemRankEntry *out;
  size_t ocap;
} Merge;

static const char *name_of(const Merge *m, size_t s) { return slem_rankreader_name(m->s[s].r); }

/* A row number written as an id: decimal digits, no sign, no leading zero. */
static int parse_row(const char *s, uint64_t *row) {
  uint64_t v = 0;
  if (!*s || (s[0] == '0' && s[1])) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *row = v;
  return 0;
}

/* The global row of entry e of shard s. */
static int row_of(Merge *m, size_t s, const SlemRankEntry *e, uint64_t *row, SlemError *err) {
  const char *name = name_of(m, s);
  if (m->idmap) {
    long i = slem_strmap_find(m->idmap, e->id, strlen(e->id));
    if (i < 0)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' is not in %s", name,
                        e->line, e->id, slem_ids_name(m->ids));
    if (e->row >= 0 && (uint64_t)e->row != (uint64_t)i)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' has row %" PRId64
                        ", but line %ld of %s", name, e->line, e->id, e->row, i + 1,
                        slem_ids_name(m->ids));
    *row = (uint64_t)i;
    return SLEM_OK;
  }
  if (e->row >= 0) {
    *row = (uint64_t)e->row;
    return SLEM_OK;
  }
  if (parse_row(e->id, row) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' is not a database row, and "
                      "the %s format does not carry rows: give the database's ids with --db-ids, or "
                      "use jsonl between shards", name, e->line, e->id,
                      slem_rankformat_name(slem_rankreader_format(m->s[s].r)));
  return SLEM_OK;
}

/* 1 when path is a seekable file whose last byte is not a newline: a shard cut short,
 * found before anything is written (a pipe is checked at its end instead). */
static int cut_short(const char *path) {
  FILE *f;
  int cut = 0;
  if (strcmp(path, "-") == 0 || !(f = fopen(path, "rb"))) return 0;
  if (fseek(f, -1, SEEK_END) == 0) cut = getc(f) != '\n';
  fclose(f);
  return cut;
}

/* Reads the next query of every shard and checks they name the same one. *done is set
 * when all shards have ended together. */
static int next_query(Merge *m, size_t *seen, int *done, SlemError *err) {
  const char *first = name_of(m, 0);
  int st;
  *done = 0;
  for (size_t s = 0; s < m->n; s++) {
    const SlemRankQuery *g0 = m->s[0].g, *g;
    st = slem_rankreader_next(m->s[s].r, &m->s[s].g, err);
    if (st) return st;
    g = m->s[s].g;
    if (s == 0) {
      if (!g) {
        *done = 1;
        continue;
      }
      if (g->index < *seen)
        return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' appears again (a "
                          "query's results must be together)", first, g->line, g->query);
      *seen = g->index + 1;
      continue;
    }
    if (*done && g)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' is not in %s, which "
                        "has ended: the shards must list the same queries", name_of(m, s), g->line,
                        g->query, first);
    if (!*done && !g)
      return slem_error(err, SLEM_EFORMAT, "%s: ends before query '%s' (%s, line %" PRIu64 "): the "
                        "shards must list the same queries", name_of(m, s), g0->query, first,
                        g0->line);
    if (g && strcmp(g->query, g0->query) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s', but %s has '%s' "
                        "there (line %" PRIu64 "): the shards must list the same queries in the "
                        "same order", name_of(m, s), g->line, g->query, first, g0->query, g0->line);
  }
  return SLEM_OK;
}

/* Gathers the current query's results of every shard into m->c; returns their number. */
static int gather(Merge *m, size_t *nc, SlemError *err) {
  size_t total = 0, c = 0;
  int st;
  for (size_t s = 0; s < m->n; s++) total += m->s[s].g->n;
  if (total > m->ccap) {
    Cand *p = realloc(m->c, total * sizeof *p);
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    m->c = p;
    m->ccap = total;
  }
  for (size_t s = 0; s < m->n; s++) {
    Shard *sh = m->s + s;
    const SlemRankQuery *g = sh->g;
    for (size_t i = 0; i < g->n; i++) {
      const SlemRankEntry *e = g->e + i;
      uint64_t row = 0;
      float score = (float)e->score;
      int added;
      if ((st = row_of(m, s, e, &row, err)) != SLEM_OK) return st;
      if (e->score_text) {
        char buf[SLEM_FMT_G9_MAX];
        slem_fmt_g9(buf, score);
        if (strcmp(buf, e->score_text) != 0)
          return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score '%s' is not a float32 "
                            "printed with %%.9g ('%s'), as slem-match writes it", name_of(m, s),
                            e->line, e->score_text, buf);
      }
      added = slem_keyset_add(sh->rows, row);
      if (added < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
      if (added) {
        sh->nrows++;
        for (size_t o = 0; o < m->n; o++)
          if (o != s && slem_keyset_has(m->s[o].rows, row))
            return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": row %" PRIu64 " ('%s') is "
                              "also in %s: the shards overlap", name_of(m, s), e->line, row, e->id,
                              name_of(m, o));
      }
      m->c[c].hit.row = row;
      m->c[c].hit.score = score;
      m->c[c].shard = s;
      m->c[c].i = i;
      c++;
    }
    if (g->n < m->opts->k && g->n < sh->short_n) {
      char *q = strdup(g->query);
      if (!q) return slem_error(err, SLEM_ENOMEM, "out of memory");
      free(sh->short_query);
      sh->short_query = q;
      sh->short_n = g->n;
      sh->short_line = g->line;
    }
  }
  *nc = c;
  return SLEM_OK;
}

/* A list shorter than k is only exact when it holds every row of its shard (less the
 * query's own with --exclude-self): the shard must not have returned more rows than
 * that over all its queries. */
/* The shard lines (rankings.h): when one shard has one, every shard must, all of the same
 * database, size and k, each index of 0..N-1 once. */
static int check_shards(const Merge *m, SlemError *err) {
  const SlemRankShard *first = NULL;
  size_t with = 0, at = 0;
  char *seen;
  for (size_t s = 0; s < m->n; s++)
    if (slem_rankreader_shard(m->s[s].r)) {
      if (!first) first = slem_rankreader_shard(m->s[s].r), at = s;
      with++;
    }
  if (!first) return SLEM_OK;
  for (size_t s = 0; s < m->n; s++) {
    const SlemRankShard *x = slem_rankreader_shard(m->s[s].r);
    if (!x)
      return slem_error(err, SLEM_EFORMAT, "%s: not the ranking of a shard (no shard line), "
                        "but %s is shard %llu/%llu", name_of(m, s), name_of(m, at),
                        (unsigned long long)first->index, (unsigned long long)first->count);
    if (strcmp(x->database, first->database) != 0 || x->rows != first->rows)
      return slem_error(err, SLEM_EFORMAT, "%s: a shard of another database (%llu rows, %s) "
                        "than %s (%llu rows, %s)", name_of(m, s), (unsigned long long)x->rows,
                        x->database, name_of(m, at), (unsigned long long)first->rows,
                        first->database);
    if (x->count != first->count)
      return slem_error(err, SLEM_EFORMAT, "%s: shard %llu/%llu, but %s is one of %llu",
                        name_of(m, s), (unsigned long long)x->index, (unsigned long long)x->count,
                        name_of(m, at), (unsigned long long)first->count);
    if (x->k != first->k)
      return slem_error(err, SLEM_EFORMAT, "%s: made with -k %llu, but %s with -k %llu",
                        name_of(m, s), (unsigned long long)x->k, name_of(m, at),
                        (unsigned long long)first->k);
  }
  if (m->n != first->count) {
    if (!(seen = calloc(first->count, 1))) return slem_error(err, SLEM_ENOMEM, "out of memory");
    for (size_t s = 0; s < m->n; s++) seen[slem_rankreader_shard(m->s[s].r)->index] = 1;
    for (uint64_t i = 0; i < first->count; i++)
      if (!seen[i]) {
        free(seen);
        return slem_error(err, SLEM_EFORMAT, "shard %llu/%llu is missing: %zu shard rankings "
                          "given", (unsigned long long)i, (unsigned long long)first->count,
                          m->n);
      }
    free(seen);
  }
  for (size_t s = 0; s < m->n; s++)
    for (size_t t = s + 1; t < m->n; t++)
      if (slem_rankreader_shard(m->s[s].r)->index == slem_rankreader_shard(m->s[t].r)->index)
        return slem_error(err, SLEM_EFORMAT, "%s and %s are both shard %llu/%llu",
                          name_of(m, s), name_of(m, t),
                          (unsigned long long)slem_rankreader_shard(m->s[s].r)->index,
                          (unsigned long long)first->count);
  (void)with;
  return SLEM_OK;
}

static int check_short(const Merge *m, SlemError *err) {
  for (size_t s = 0; s < m->n; s++) {
    const Shard *sh = m->s + s;
    if (sh->short_query && sh->short_n + 1 < sh->nrows)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": query '%s' has %zu results, fewer "
                        "than -k %zu, yet the shard returned %" PRIu64 " different rows: it was made "
                        "with a smaller -k, and the merge would not be exact", name_of(m, s),
                        sh->short_line, sh->short_query, sh->short_n, m->opts->k, sh->nrows);
  }
  return SLEM_OK;
}

int slem_merge(const char *const *shards, size_t n, const char *output,
               const SlemMergeOpts *opts, SlemMergeStats *stats, SlemError *err) {
  Merge m = {0};
  SlemRankWriter *w = NULL;
  size_t seen = 0;
  int st = SLEM_OK, done = 0;
  SlemMergeStats z = {0, 0};
  if (!stats) stats = &z;
  *stats = z;
  if (n == 0 || opts->k == 0)
    return slem_error(err, SLEM_EINVAL, n == 0 ? "no shard to merge" : "k must be at least 1");
  m.n = n;
  m.opts = opts;
  m.s = calloc(n, sizeof *m.s);
  if (!m.s) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (opts->check && (st = opts->check(opts->check_ctx, shards, n, err)) != SLEM_OK) goto done;
  if (opts->db_ids) {
    size_t nid;
    if ((st = slem_ids_read(&m.ids, opts->db_ids, err)) != SLEM_OK) goto done;
    if (!(m.idmap = slem_strmap_new())) goto nomem;
    nid = slem_ids_count(m.ids);
    for (size_t i = 0; i < nid; i++) {
      const char *id = slem_ids_get(m.ids, i);
      long k = slem_strmap_intern(m.idmap, id, strlen(id));
      if (k < 0) goto nomem;
      if ((size_t)k != i) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %zu: id '%s' appears twice", opts->db_ids,
                        i + 1, id);
        goto done;
      }
    }
  }
  for (size_t s = 0; s < n; s++) {
    m.s[s].short_n = SIZE_MAX;
    if ((st = slem_rankreader_open(&m.s[s].r, shards[s], SLEM_RANK_AUTO, err)) != SLEM_OK) goto done;
    if (!(m.s[s].rows = slem_keyset_new())) goto nomem;
  }
  for (size_t s = 0; s < n; s++)
    if (cut_short(shards[s])) {
      st = slem_error(err, SLEM_EFORMAT, "%s: the last line has no newline: the file was cut short",
                      name_of(&m, s));
      goto done;
    }
  for (;;) {
    size_t nc = 0, keep;
    if ((st = next_query(&m, &seen, &done, err)) != SLEM_OK) goto done;
    if (done) break;
    if (!w) {
      SlemRankFormat f = opts->format;
      if ((st = check_shards(&m, err)) != SLEM_OK) goto done;
      const SlemRankQuery *g = m.s[0].g;
      if (f == SLEM_RANK_AUTO) f = slem_rankreader_format(m.s[0].r);
      st = slem_rankwriter_open(&w, output, f, NULL, NULL, g->n && g->e[0].tag ? g->e[0].tag : NULL,
                                err);
      if (st) goto done;
    }
    if ((st = gather(&m, &nc, err)) != SLEM_OK) goto done;
    if (nc > 1) qsort(m.c, nc, sizeof *m.c, cand_cmp); /* m.c is NULL while no query had a result */
    for (size_t i = 1; i < nc; i++)
      if (cand_cmp(m.c + i - 1, m.c + i) == 0) {
        const Cand *c = m.c + i;
        st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": row %" PRIu64 " twice for query "
                        "'%s'", name_of(&m, c->shard), m.s[c->shard].g->e[c->i].line, c->hit.row,
                        m.s[0].g->query);
        goto done;
      }
    keep = nc < opts->k ? nc : opts->k;
    if (keep > m.ocap) {
      SlemRankEntry *p = realloc(m.out, keep * sizeof *p);
      if (!p) goto nomem;
      m.out = p;
      m.ocap = keep;
    }
    for (size_t i = 0; i < keep; i++) {
      const Cand *c = m.c + i;
      m.out[i] = m.s[c->shard].g->e[c->i];
      m.out[i].score = c->hit.score;
      m.out[i].row = (int64_t)c->hit.row;
    }
    st = slem_rankwriter_write_entries(w, m.s[0].g->query, m.out, keep, err);
    if (st) goto done;
    stats->queries++;
    if (opts->progress && (stats->queries & 255) == 0) opts->progress(opts->progress_ctx, stats->queries);
    stats->results += keep;
  }
  for (size_t s = 0; s < n; s++)
    if (slem_rankreader_unterminated(m.s[s].r)) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": the last line has no newline: the "
                      "file was cut short", name_of(&m, s), slem_rankreader_line(m.s[s].r));
      goto done;
    }
  if ((st = check_short(&m, err)) != SLEM_OK) goto done;
  st = slem_rankwriter_close(w, err);
  w = NULL;
  goto done;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
done:
  slem_rankwriter_abort(w);
  for (size_t s = 0; s < n; s++) {
    slem_rankreader_free(m.s[s].r);
    slem_keyset_free(m.s[s].rows);
    free(m.s[s].short_query);
  }
  free(m.s);
  free(m.c);
  free(m.out);
  slem_ids_free(m.ids);
  slem_strmap_free(m.idmap);
  return st;
}

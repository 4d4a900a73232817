#define _POSIX_C_SOURCE 200809L
#include "merge.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arith.h"
#include "fmt.h"
#include "ids.h"
#include "io.h"
#include "mergefast.h"
#include "rankfmt.h"
#include "shard.h"
#include "strmap.h"
#include "topk.h"

void slem_merge_opts_init(SlemMergeOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->k = 100;
  opts->format = SLEM_RANK_AUTO;
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
  /* its lists with fewer than k results, for check_short() */
  struct Short {
    size_t n;         /* results */
    uint64_t own;     /* the query's index: the row --exclude-self skips */
    int own_listed;   /* that row is in the list */
    uint64_t line;
    char *query;
  } *shorts;
  size_t nshort, shortcap;
  const SlemRankShard *shard; /* its shard lines, or NULL (plain) */
  SlemRankShard end;          /* its end line, once known */
  uint64_t lo, hi;            /* with a shard line: the rows [lo, hi) it may return */
} Shard;

/* A result of one shard, with its global row. */
typedef struct Cand {
  SlemHit hit;  /* first: the comparison reads it */
  size_t shard, i;
} Cand;

/* The ordering rule of topk.h on candidates: the one place that decides the order. */
static int cand_cmp(const void *a, const void *b) {
  return slem_topk_hit_cmp(&((const Cand *)a)->hit, &((const Cand *)b)->hit);
}

/* A set of the current query's rows, emptied for the next query by a new generation
 * rather than cleared: slot j holds candidate at[j] when gen[j] is the current one. */
typedef struct RowSet {
  size_t *at;
  uint64_t *gen;
  size_t cap;    /* a power of 2, at least twice the candidates */
  uint64_t now;
} RowSet;

/* Makes room for n candidates and starts a new query. Errors: SLEM_ENOMEM. */
static int rowset_reset(RowSet *h, size_t n, SlemError *err) {
  if (2 * n > h->cap) {
    size_t cap = h->cap ? h->cap : 64;
    while (cap < 2 * n) cap *= 2;
    free(h->at);
    free(h->gen);
    h->at = malloc(cap * sizeof *h->at);
    h->gen = calloc(cap, sizeof *h->gen);
    h->cap = h->at && h->gen ? cap : 0;
    h->now = 0;
    if (!h->cap) return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  h->now++;
  return SLEM_OK;
}

/* Adds candidate i of c; returns the index of an earlier candidate of the same row, or
 * SIZE_MAX when there is none. */
static size_t rowset_add(RowSet *h, const Cand *c, size_t i) {
  size_t mask = h->cap - 1, j = (size_t)((c[i].hit.row * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  for (; h->gen[j] == h->now; j = (j + 1) & mask)
    if (c[h->at[j]].hit.row == c[i].hit.row) return h->at[j];
  h->gen[j] = h->now;
  h->at[j] = i;
  return SIZE_MAX;
}

typedef struct Merge {
  Shard *s;
  size_t n;
  const SlemMergeOpts *opts;
  const char *const *paths;
  int checked;          /* the shards have shard lines, checked */
  SlemRankShard group;  /* a partial merge of consecutive shards: the lines its output carries */
  uint64_t group_span;  /* their span, or 0: no lines */
  size_t group_first;   /* the shard of the lowest index, whose end line the group's is */
  RowSet seen;          /* the current query's rows, for duplicates */
  SlemIds *ids;         /* db_ids, and its map id -> row */
  SlemStrMap *idmap;
  struct RowIds *rowids; /* without db_ids: the id each row carried so far (row_id_check) */
  Cand *c;
  size_t ccap;
  SlemRankEntry *out;
  size_t ocap;
} Merge;

static const char *name_of(const Merge *m, size_t s) { return slem_rankreader_name(m->s[s].r); }

/* The place of shard s's query read at line ("line N"; npy "row R"), in buf of
 * SLEM_RANK_PLACE_MAX bytes. */
static const char *query_at(const Merge *m, size_t s, uint64_t line, char *buf) {
  return slem_rankreader_place(m->s[s].r, buf, line, SLEM_RANK_WHOLE_QUERY);
}

/* The place of e, a result of shard s's current query ("line N"; npy "row R, column C"). */
static const char *entry_at(const Merge *m, size_t s, const SlemRankEntry *e, char *buf) {
  return slem_rankreader_place(m->s[s].r, buf, e->line, (size_t)(e - m->s[s].g->e));
}

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

/* Without --db-ids, what named each row in the lines read so far, in every shard: a row
 * carries one id, and an id names one row. */
typedef struct RowIds {
  uint64_t *row1;   /* row + 1 in an open-addressed table; 0: an empty slot */
  long *id;         /* the row's id: -1 its own number, else an index in ids */
  size_t cap, n;
  SlemStrMap *ids;  /* the ids that are not their row's number */
  uint64_t *idrow;  /* idrow[i]: the row that ids' i names */
  size_t idcap;
} RowIds;

static void rowids_free(RowIds *h) {
  if (!h) return;
  free(h->row1);
  free(h->id);
  slem_strmap_free(h->ids);
  free(h->idrow);
  free(h);
}

static const char *number_text(char *buf, uint64_t row) {
  snprintf(buf, 24, "%" PRIu64, row);
  return buf;
}

/* The slot of row in h: its own, or the empty one where it goes. */
static size_t rowids_slot(const RowIds *h, uint64_t row) {
  size_t mask = h->cap - 1, j = (size_t)((row * 0x9E3779B97F4A7C15ull) >> 29) & mask;
  while (h->row1[j] && h->row1[j] != row + 1) j = (j + 1) & mask;
  return j;
}

/* Checks that entry e of shard s, of row row, carries the id the row carried in every line
 * merged before (its own number when the rankings have no ids) and that its id named no other row:
 * a line edited, or shards of databases with other ids, are refused. The check of --db-ids
 * without the ids file. Errors: SLEM_EFORMAT naming the file and line, SLEM_ENOMEM. */
static int row_id_check(Merge *m, size_t s, const SlemRankEntry *e, uint64_t row, SlemError *err) {
  RowIds *h = m->rowids;
  uint64_t p;
  long id = -1, k;
  size_t j;
  char nb[24], at[SLEM_RANK_PLACE_MAX];
  int own = parse_row(e->id, &p) == 0 && p == row; /* the id is the row's own number */
  if (!h && !(h = m->rowids = calloc(1, sizeof *h))) goto nomem;
  if (2 * (h->n + 1) > h->cap) { /* doubled, rows placed again */
    RowIds old = *h;
    size_t cap = h->cap ? 2 * h->cap : 4096;
    if (!(h->row1 = calloc(cap, sizeof *h->row1)) || !(h->id = malloc(cap * sizeof *h->id))) {
      free(h->row1);
      h->row1 = old.row1;
      h->id = old.id;
      goto nomem;
    }
    h->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
      if (old.row1[i]) {
        j = rowids_slot(h, old.row1[i] - 1);
        h->row1[j] = old.row1[i];
        h->id[j] = old.id[i];
      }
    free(old.row1);
    free(old.id);
  }
  j = rowids_slot(h, row);
  if (h->row1[j]) { /* a row seen before: the same id (which then names this row only) */
    if (h->id[j] < 0 ? own : !own && strcmp(slem_strmap_get(h->ids, (size_t)h->id[j]), e->id) == 0)
      return SLEM_OK;
    return slem_error(err, SLEM_EFORMAT, "%s: %s: row %" PRIu64 " has id '%s', but "
                      "id '%s' in a line before: a row has one id (an edited line, or rankings "
                      "of databases with other ids?)", name_of(m, s), entry_at(m, s, e, at), row,
                      e->id,
                      h->id[j] < 0 ? number_text(nb, row) : slem_strmap_get(h->ids, (size_t)h->id[j]));
  }
  if (!own) { /* an id of its own: it names this row only */
    size_t before = h->ids ? slem_strmap_count(h->ids) : 0;
    if (!h->ids && !(h->ids = slem_strmap_new())) goto nomem;
    if ((id = slem_strmap_intern(h->ids, e->id, strlen(e->id))) < 0) goto nomem;
    if ((size_t)id != before) {
      k = (long)h->idrow[id];
      goto two_rows;
    }
    if ((size_t)id == h->idcap) {
      uint64_t *q = realloc(h->idrow, (h->idcap = h->idcap ? 2 * h->idcap : 1024) * sizeof *q);
      if (!q) goto nomem;
      h->idrow = q;
    }
    h->idrow[id] = row;
    /* a number that another line gave its own row as its id */
    if (parse_row(e->id, &p) == 0 && h->row1[k = (long)rowids_slot(h, p)] && h->id[k] == -1) {
      k = (long)p;
      goto two_rows;
    }
  } else if (h->ids && (k = slem_strmap_find(h->ids, e->id, strlen(e->id))) >= 0) {
    k = (long)h->idrow[k]; /* its number, given before to another row as its id */
    goto two_rows;
  }
  h->row1[j] = row + 1;
  h->id[j] = id;
  h->n++;
  return SLEM_OK;
two_rows:
  return slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' names row %" PRIu64 ", but row "
                    "%ld in a line before: an id names one row (an edited line, or rankings of "
                    "databases with other ids?)", name_of(m, s), entry_at(m, s, e, at), e->id, row,
                    k);
nomem:
  return slem_error(err, SLEM_ENOMEM, "out of memory");
}

/* The global row of entry e of shard s. */
static int row_of(Merge *m, size_t s, const SlemRankEntry *e, uint64_t *row, SlemError *err) {
  const char *name = name_of(m, s);
  char at[SLEM_RANK_PLACE_MAX];
  if (m->idmap) {
    long i = slem_strmap_find(m->idmap, e->id, strlen(e->id));
    if (i < 0)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' is not in %s", name,
                        entry_at(m, s, e, at), e->id, slem_ids_name(m->ids));
    if (e->row >= 0 && (uint64_t)e->row != (uint64_t)i)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' has row %" PRId64
                        ", but line %ld of %s", name, entry_at(m, s, e, at), e->id, e->row, i + 1,
                        slem_ids_name(m->ids));
    *row = (uint64_t)i;
    return SLEM_OK;
  }
  if (e->row >= 0) {
    *row = (uint64_t)e->row;
    return SLEM_OK;
  }
  if (parse_row(e->id, row) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: %s: id '%s' is not a database row, and "
                      "the %s format does not carry rows: give the database's ids with --db-ids, or "
                      "use jsonl between shards", name, entry_at(m, s, e, at), e->id,
                      slem_rankformat_name(slem_rankreader_format(m->s[s].r)));
  return SLEM_OK;
}

/* 1 when path is a regular file whose last byte is not a newline: a shard cut short,
 * found before anything is written (a pipe is checked at its end instead). A file whose
 * size says 0 but that holds bytes (/proc, FUSE) is read through to its last byte. */
static int cut_short(const char *path) {
  struct stat sb;
  SlemIn *in;
  SlemError e;
  uint64_t at;
  size_t got = 0;
  char last = '\n';
  if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      slem_in_open(&in, path, &e) != SLEM_OK)
    return 0;
  if (slem_in_tail(in, &last, 1, &got, &at, &e) != SLEM_OK) got = 0; /* the reader will say */
  slem_in_free(in);
  return got == 1 && last != '\n';
}

/* The end of a message of shards that list other queries, when one is tsv or trec: those
 * have no line for a query without results (slem-match --shard). */
static const char *plain_hint(const Merge *m, size_t s) {
  SlemRankFormat a = slem_rankreader_format(m->s[s].r), b = slem_rankreader_format(m->s[0].r);
  if (a != SLEM_RANK_TSV && a != SLEM_RANK_TREC && b != SLEM_RANK_TSV && b != SLEM_RANK_TREC)
    return "";
  return " (tsv and trec have no line for a query without results, as in a shard of few rows "
         "or none: write the shards in jsonl)";
}

/* 1 when path is a regular file of no bytes: its size says 0 and a read finds none (a
 * pseudo-file of /proc says 0 and holds bytes). */
static int empty_file(const char *path) {
  struct stat sb;
  FILE *f;
  int empty;
  if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size != 0 ||
      !(f = fopen(path, "rb")))
    return 0;
  empty = getc(f) == EOF && !ferror(f);
  fclose(f);
  return empty;
}

/* Reads the next query of every shard and checks they name the same one. *done is set
 * when all shards have ended together. */
static int next_query(Merge *m, size_t *seen, int *done, SlemError *err) {
  const char *first = name_of(m, 0);
  char at[SLEM_RANK_PLACE_MAX], at0[SLEM_RANK_PLACE_MAX];
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
        return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' appears again (a "
                          "query's results must be together)", first, query_at(m, 0, g->line, at),
                          g->query);
      *seen = g->index + 1;
      continue;
    }
    if (*done && g)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' is not in %s, which "
                        "has ended: the shards must list the same queries%s", name_of(m, s),
                        query_at(m, s, g->line, at), g->query, first, plain_hint(m, s));
    if (!*done && !g)
      return slem_error(err, SLEM_EFORMAT, "%s: ends before query '%s' (%s, %s): the "
                        "shards must list the same queries%s", name_of(m, s), g0->query, first,
                        query_at(m, 0, g0->line, at0), plain_hint(m, s));
    if (g && strcmp(g->query, g0->query) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s', but %s has '%s' "
                        "there (%s): the shards must list the same queries in the "
                        "same order%s", name_of(m, s), query_at(m, s, g->line, at), g->query, first,
                        g0->query, query_at(m, 0, g0->line, at0), plain_hint(m, s));
  }
  return SLEM_OK;
}

/* Gathers the current query's results of every shard into m->c; returns their number. */
static int gather(Merge *m, size_t *nc, SlemError *err) {
  size_t total = 0, c = 0;
  char at[SLEM_RANK_PLACE_MAX];
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
      if (sh->shard && row >= sh->shard->rows)
        return slem_error(err, SLEM_EFORMAT, "%s: %s: row %" PRIu64 " ('%s') is beyond "
                          "the database, of %llu rows", name_of(m, s), entry_at(m, s, e, at), row,
                          e->id, (unsigned long long)sh->shard->rows);
      if (sh->shard && (row < sh->lo || row >= sh->hi)) {
        char which[96]; /* a group's shards, I to I + S - 1 */
        const SlemRankShard *x = sh->shard;
        if (x->span > 1)
          snprintf(which, sizeof which, "shards %llu-%llu of %llu", (unsigned long long)x->index,
                   (unsigned long long)(x->index + x->span - 1), (unsigned long long)x->count);
        else
          snprintf(which, sizeof which, "shard %llu/%llu", (unsigned long long)x->index,
                   (unsigned long long)x->count);
        return slem_error(err, SLEM_EFORMAT, "%s: %s: row %" PRIu64 " ('%s') is outside "
                          "its %s, rows %" PRIu64 " to %" PRIu64 " (%s)", name_of(m, s),
                          entry_at(m, s, e, at), row,
                          e->id, which, sh->lo, sh->hi - 1,
                          sh->hi > sh->lo ? "as --shard cuts them"
                          : x->span > 1   ? "none: empty shards"
                                          : "none: an empty shard");
      }
      /* a jsonl score is a double (no text to check): past FLT_MAX it became inf, written
       * as "inf" in a ranking that no reader takes back */
      if (!isfinite(score))
        return slem_error(err, SLEM_EFORMAT, "%s: %s: score %.9g is beyond float32's "
                          "range (slem-match writes float32 scores)", name_of(m, s),
                          entry_at(m, s, e, at), e->score);
      if (e->score_text) {
        char buf[SLEM_FMT_G9_MAX];
        slem_fmt_g9(buf, score);
        if (strcmp(buf, e->score_text) != 0)
          return slem_error(err, SLEM_EFORMAT, "%s: %s: score '%s' is not a float32 "
                            "printed with %%.9g ('%s'), as slem-match writes it", name_of(m, s),
                            entry_at(m, s, e, at), e->score_text, buf);
      }
      if (e->rank != (long)i + 1)
        return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s': rank %ld, but it is "
                          "result %zu of the query: ranks number a list 1, 2, ... as slem-match "
                          "writes it", name_of(m, s), entry_at(m, s, e, at), g->query, e->rank,
                          i + 1);
      /* slem-match and FAISS write a query's list best first: a list in another order was
       * not written by them (edited, or another tool's). Equal scores may come in any order
       * (slem-match lists them by the lower row, FAISS otherwise): the sort below puts them
       * by the lower row; a row twice is refused there. */
      if (i > 0 && m->c[c - 1].hit.score < score)
        return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' lists row %" PRIu64
                          " ('%s', score %.9g) after row %" PRIu64 " (score %.9g): not best first, "
                          "as slem-match and FAISS's inner-product search write a ranking "
                          "(distances smallest first, as FAISS's IndexFlatL2 lists them, are not "
                          "similarities: slem merges no L2 rankings)",
                          name_of(m, s), entry_at(m, s, e, at), g->query, row, e->id, (double)score,
                          m->c[c - 1].hit.row, (double)m->c[c - 1].hit.score);
      added = slem_keyset_add(sh->rows, row);
      if (added < 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
      if (added) {
        sh->nrows++;
        for (size_t o = 0; o < m->n; o++)
          if (o != s && slem_keyset_has(m->s[o].rows, row))
            return slem_error(err, SLEM_EFORMAT, "%s: %s: row %" PRIu64 " ('%s') is "
                              "also in %s: the shards overlap", name_of(m, s), entry_at(m, s, e, at),
                              row, e->id, name_of(m, o));
      }
      m->c[c].hit.row = row;
      m->c[c].hit.score = score;
      m->c[c].shard = s;
      m->c[c].i = i;
      c++;
    }
    if (g->n < m->opts->k) {
      struct Short *x;
      if (sh->nshort == sh->shortcap) {
        size_t cap = sh->shortcap ? 2 * sh->shortcap : 16;
        if (!(x = realloc(sh->shorts, cap * sizeof *x)))
          return slem_error(err, SLEM_ENOMEM, "out of memory");
        sh->shorts = x;
        sh->shortcap = cap;
      }
      x = sh->shorts + sh->nshort;
      if (!(x->query = strdup(g->query))) return slem_error(err, SLEM_ENOMEM, "out of memory");
      sh->nshort++;
      x->n = g->n;
      x->own = g->index;
      x->line = g->line;
      x->own_listed = 0;
      for (size_t i = c - g->n; i < c; i++)
        if (m->c[i].hit.row == x->own) x->own_listed = 1;
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

/* Compares the fields of one shard line (end 0: the first, 1: the end line) by the rule of
 * each (the table of rankings.h, with --allow-mixed-blas), shard s against shard at, or
 * with known (first lines), field i against shard known[i]; prints: the fingerprints of
 * descriptors alone. Those are waived by their arithmetic, of the first line: x and y
 * hold both lines. */
static int same_fields(const Merge *m, size_t s, const SlemRankShard *x, size_t at,
                       const SlemRankShard *y, const size_t *known, int end, int prints,
                       SlemError *err) {
  size_t nf;
  const SlemRankShardField *f = slem_rankshard_fields(&nf);
  int allow = m->opts->allow_mixed_blas;
  for (size_t i = 0; i < nf; i++) {
    char a[SLEM_SHARD_VALUE_MAX], b[SLEM_SHARD_VALUE_MAX], ar[SLEM_ARITH_LIST_MAX];
    size_t t = known ? known[i] : at;
    const SlemRankShard *z = known ? m->s[t].shard : y;
    const char *where = end ? "its end line" : "line 1";
    if (f[i].end != end || (prints && f[i].mixed != SLEM_SHARDM_DESC) ||
        !slem_rankshard_differ(f + i, x, z, allow))
      continue;
    slem_rankshard_value(x, f + i, a);
    slem_rankshard_value(z, f + i, b);
    /* a group of shards that the flag let mix, whatever it is compared with */
    if (strcmp(a, b) == 0 && (slem_rankshard_mixes(f + i, x) || slem_rankshard_mixes(f + i, z))) {
      int g = slem_rankshard_mixes(f + i, x);
      return slem_error(err, SLEM_EFORMAT, "%s: %s: %s %s: a group merged with "
                        "--allow-mixed-blas from shards that differ in it, which one merge of "
                        "the shards refuses without the flag: %s", name_of(m, g ? s : t), where,
                        f[i].key, g ? a : b, f[i].differs);
    }
    /* fingerprints of descriptors of one arithmetic (or of one not recorded), among others */
    if (allow && f[i].mixed == SLEM_SHARDM_DESC && slem_rankshard_prints(f + i, x, z, a, b, ar) == 0)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: %s %s, but %s has %s for descriptors of %s%s: "
                        "%s", name_of(m, s), where, f[i].key, a, name_of(m, t), b,
                        ar[0] ? "the same arithmetic, " : "an arithmetic not recorded", ar,
                        f[i].differs);
    return slem_error(err, SLEM_EFORMAT, "%s: %s: %s %s, but %s has %s: %s", name_of(m, s), where,
                      f[i].key, a, name_of(m, t), b, f[i].differs);
  }
  return SLEM_OK;
}

/* A shard of a checked merge, sorted by its index (ties by position). */
typedef struct ByIndex {
  uint64_t index;
  size_t s;
} ByIndex;

static int by_index(const void *a, const void *b) {
  const ByIndex *x = a, *y = b;
  if (x->index != y->index) return x->index < y->index ? -1 : 1;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Adds to list (size bytes) the arithmetics of the list add (" + " between); with base, only
 * those whose libraries differ from base's, a line. */
static void arith_union(char *list, size_t size, const char *add, const char *base) {
  char one[SLEM_ARITH_LIST_MAX];
  while (*add) {
    const char *e = strstr(add, " + ");
    size_t len = e ? (size_t)(e - add) : strlen(add);
    snprintf(one, sizeof one, "%.*s", (int)len, add);
    if (!base || slem_arith_differ_libs(one, base)) slem_arith_list_add(list, size, one);
    add += e ? len + 3 : len;
  }
}

/* The first line of the group of consecutive shards ord[0..m->n-1] (sorted by index), span
 * next - I: the lowest's fields with the merge's k, a text that only needs to agree where
 * known from the first shard that records it, and the arithmetics of every shard. These
 * differ only under --allow-mixed-blas; carrying them all (as slem-match's "A + B") makes
 * the next level refuse without the flag a group of a mix beside a group of one arithmetic,
 * as one level refuses the mix, and whatever the order of the shards on the command line.
 * The match's arithmetic adds only lines of other libraries than its first (the core alone
 * is not compared, SLEM_SHARDR_LIBS). A group of descriptors of several arithmetics also
 * records each one with its database (desc_databases): the next level refuses it without
 * the flag whatever it is beside, a group of the same mix included, and compares its
 * fingerprints arithmetic by arithmetic with the flag, as one level compares its shards.
 * Errors: SLEM_EFORMAT (more arithmetics than a group's lines record). */
static int group_lines(Merge *m, const ByIndex *ord, uint64_t next, SlemError *err) {
  size_t nf, nc = 0;
  const SlemRankShardField *f = slem_rankshard_fields(&nf);
  SlemRankShard *g = &m->group;
  SlemRankShardClass c[SLEM_SHARD_CLASSES], one[SLEM_SHARD_CLASSES];
  int over = 0;
  *g = *m->s[ord[0].s].shard;
  g->span = next - g->index;
  g->k = m->opts->k;
  g->has_end = 0;
  g->desc_databases[0] = g->desc_query_sets[0] = '\0';
  /* the descriptors' arithmetics of its shards, each with its fingerprint: what the next
   * level compares, as one level compares the shards (the union below cannot tell them
   * apart); their query sets come with the end lines (group_end()) */
  for (size_t j = 0; j < m->n && !over; j++) {
    size_t n1 = slem_rankshard_classes(m->s[ord[j].s].shard, one), l;
    for (size_t i = 0; i < n1; i++) {
      for (l = 0; l < nc && strcmp(c[l].arith, one[i].arith) != 0; l++) continue;
      if (l < nc) continue;
      if (nc == SLEM_SHARD_CLASSES) {
        over = 1;
        break;
      }
      c[nc] = one[i];
      c[nc++].query_set[0] = '\0';
    }
  }
  if (over || slem_rankshard_set_classes(g, c, nc) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s and the shards beside it: their descriptors name "
                      "more arithmetics than a group's lines record (%d, in %d bytes): merge "
                      "them in one level", name_of(m, ord[0].s), SLEM_SHARD_CLASSES,
                      SLEM_SHARD_CLASSES_MAX);
  for (size_t i = 0; i < nf; i++) {
    char *v = (char *)g + f[i].offset, base[SLEM_ARITH_LIST_MAX];
    if (f[i].type != SLEM_SHARDF_TEXT || f[i].rule == SLEM_SHARDR_ANY) continue;
    for (size_t j = 1; j < m->n; j++) {
      const char *x = (const char *)m->s[ord[j].s].shard + f[i].offset, *e;
      if (!*x) continue;
      if (!*v) {
        memcpy(v, x, f[i].size);
      } else if (f[i].mixed == SLEM_SHARDM_ALWAYS) {
        e = strstr(v, " + ");
        snprintf(base, sizeof base, "%.*s", e ? (int)(e - v) : (int)strlen(v), v);
        arith_union(v, f[i].size, x, f[i].rule == SLEM_SHARDR_LIBS ? base : NULL);
      }
    }
  }
  m->group_span = g->span;
  return SLEM_OK;
}

/* The shard lines (rankings.h): when one shard has one, every shard must, of the same
 * database and split, together holding each index of 0..N-1 once (a group of a partial
 * merge holds those of its span), each made with a k of at least the merge's. A partial
 * merge may lack indices; one whose shards hold consecutive indices, I to I + S - 1, is
 * the group m->group (group_span S, else 0), whose lines its output carries. The end lines
 * too when they are known (read ahead from a file; a pipe's at its end). */
static int check_shards(Merge *m, SlemError *err) {
  size_t at = SIZE_MAX, nf, *known = NULL;
  ByIndex *ord = NULL;
  const SlemRankShard *first;
  const SlemRankShardField *f = slem_rankshard_fields(&nf);
  uint64_t next = 0, miss = UINT64_MAX; /* the first index no shard holds */
  int st = SLEM_OK, gap = 0;
  for (size_t s = 0; s < m->n; s++) {
    m->s[s].shard = slem_rankreader_shard(m->s[s].r);
    if (m->s[s].shard && at == SIZE_MAX) at = s;
  }
  if (at == SIZE_MAX) return SLEM_OK;
  first = m->s[at].shard;
  if (!(known = malloc(nf * sizeof *known)) || !(ord = malloc(m->n * sizeof *ord))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  /* each field against the first shard that records it: a text only compared where known
   * ("" matches any) is then compared between any two shards that record it, whatever
   * their order on the command line */
  for (size_t i = 0; i < nf; i++) {
    known[i] = at;
    if (f[i].type == SLEM_SHARDF_TEXT)
      for (size_t s = at; s < m->n; s++)
        if (m->s[s].shard && *((const char *)m->s[s].shard + f[i].offset)) {
          known[i] = s;
          break;
        }
  }
  for (size_t s = 0; s < m->n; s++) {
    const SlemRankShard *x = m->s[s].shard;
    uint64_t lo, hi;
    if (!x && first->span > 1) {
      st = slem_error(err, SLEM_EFORMAT, "%s: not the ranking of a shard (no shard line; a "
                      "--partial merge of shards that are not consecutive writes none), but %s "
                      "holds shards %llu-%llu of %llu", name_of(m, s), name_of(m, at),
                      (unsigned long long)first->index,
                      (unsigned long long)(first->index + first->span - 1),
                      (unsigned long long)first->count);
      goto done;
    }
    if (!x) {
      st = slem_error(err, SLEM_EFORMAT, "%s: not the ranking of a shard (no shard line), "
                      "but %s is shard %llu/%llu", name_of(m, s), name_of(m, at),
                      (unsigned long long)first->index, (unsigned long long)first->count);
      goto done;
    }
    if ((st = same_fields(m, s, x, at, first, known, 0, 0, err)) != SLEM_OK) goto done;
    /* under the flag, the fingerprints of two shards are waived by their descriptors'
     * arithmetics, which a reference shard does not stand for: every two are compared */
    for (size_t t = 0; t < s && m->opts->allow_mixed_blas; t++)
      if ((st = same_fields(m, s, x, t, m->s[t].shard, NULL, 0, 1, err)) != SLEM_OK) goto done;
    if (x->k < m->opts->k) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line 1: made with -k %llu, fewer than the merge's "
                      "-k %zu: the merge would not be exact", name_of(m, s),
                      (unsigned long long)x->k, m->opts->k);
      goto done;
    }
    /* the rows of its shards, I to I + S - 1: consecutive ranges */
    slem_shard_range(&(SlemShard){x->index, x->count}, x->rows, &m->s[s].lo, &hi);
    slem_shard_range(&(SlemShard){x->index + x->span - 1, x->count}, x->rows, &lo, &m->s[s].hi);
  }
  for (size_t s = 0; s < m->n; s++) ord[s] = (ByIndex){m->s[s].shard->index, s};
  qsort(ord, m->n, sizeof *ord, by_index);
  for (size_t i = 0; i < m->n; i++) {
    const SlemRankShard *x = m->s[ord[i].s].shard;
    if (i > 0 && x->index < next) { /* held by the shard before it too */
      const SlemRankShard *p = m->s[ord[i - 1].s].shard;
      if (x->span == 1 && p->span == 1)
        st = slem_error(err, SLEM_EFORMAT, "%s and %s are both shard %llu/%llu",
                        name_of(m, ord[i - 1].s), name_of(m, ord[i].s),
                        (unsigned long long)x->index, (unsigned long long)first->count);
      else
        st = slem_error(err, SLEM_EFORMAT, "%s and %s both hold shard %llu/%llu (they hold "
                        "shards %llu-%llu and %llu-%llu)", name_of(m, ord[i - 1].s),
                        name_of(m, ord[i].s), (unsigned long long)x->index,
                        (unsigned long long)first->count, (unsigned long long)p->index,
                        (unsigned long long)(p->index + p->span - 1),
                        (unsigned long long)x->index,
                        (unsigned long long)(x->index + x->span - 1));
      goto done;
    }
    if (x->index > next && miss == UINT64_MAX) miss = next; /* none holds miss */
    if (i > 0 && x->index > next) gap = 1;
    next = x->index + x->span;
  }
  if (miss == UINT64_MAX && next < first->count) miss = next;
  if (miss != UINT64_MAX && !m->opts->partial) {
    st = slem_error(err, SLEM_EFORMAT, "shard %llu/%llu is missing: %zu shard rankings given",
                    (unsigned long long)miss, (unsigned long long)first->count, m->n);
    goto done;
  }
  /* a group of consecutive shards: the lines its output carries */
  m->group_span = 0;
  if (m->opts->partial && !gap) {
    m->group_first = ord[0].s;
    if ((st = group_lines(m, ord, next, err)) != SLEM_OK) goto done;
  }
  /* the end lines of the shards that are files, before anything is written */
  for (size_t s = 0; s < m->n; s++) {
    int found;
    SlemRankShard *e = &m->s[s].end;
    *e = *m->s[s].shard; /* its first line's fields, for the end line's comparison */
    if ((st = slem_rankshard_read_end(m->paths[s], e, &found, err)) != SLEM_OK) goto done;
    if (!found) continue;
    for (size_t t = 0; t < s; t++)
      if (m->s[t].end.has_end &&
          (st = same_fields(m, s, e, t, &m->s[t].end, NULL, 1, 0, err)) != SLEM_OK)
        goto done;
  }
  m->checked = 1;
done:
  free(known);
  free(ord);
  return st;
}

/* At the end: every shard of a checked merge has its end line, all alike. */
static int check_ends(Merge *m, SlemError *err) {
  int st;
  if (!m->checked) return SLEM_OK;
  for (size_t s = 0; s < m->n; s++) {
    const SlemRankShard *x = slem_rankreader_shard(m->s[s].r);
    char at[SLEM_RANK_PLACE_MAX];
    if (!x || !x->has_end)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: no shard end line after the last "
                        "query (cut short, or not written by slem-match --shard): the queries "
                        "cannot be checked", name_of(m, s),
                        query_at(m, s, slem_rankreader_line(m->s[s].r), at));
    m->s[s].end = *x;
    if (s > 0 && (st = same_fields(m, s, &m->s[s].end, 0, &m->s[0].end, NULL, 1, 0, err)) != SLEM_OK)
      return st;
    for (size_t t = 1; t < s && m->opts->allow_mixed_blas; t++) /* as in check_shards() */
      if ((st = same_fields(m, s, &m->s[s].end, t, &m->s[t].end, NULL, 1, 1, err)) != SLEM_OK)
        return st;
  }
  return SLEM_OK;
}

/* The end line of a group (check_shards()): the queries of its shards' end lines, all
 * alike (check_ends(), or read ahead by check_shards()) but for the query set under
 * --allow-mixed-blas, which is the lowest shard's as the first line's fields are; and
 * with the arithmetics of its descriptors (group_lines()) the query set of each, which
 * the shards of that arithmetic share. */
static void group_end(Merge *m) {
  SlemRankShardClass c[SLEM_SHARD_CLASSES], one[SLEM_SHARD_CLASSES];
  size_t nc = slem_rankshard_classes(&m->group, c);
  m->group.queries = m->s[m->group_first].end.queries;
  memcpy(m->group.query_set, m->s[m->group_first].end.query_set, sizeof m->group.query_set);
  m->group.has_end = 1;
  if (nc < 2) return;
  for (size_t s = 0; s < m->n; s++) {
    size_t n1 = slem_rankshard_classes(&m->s[s].end, one);
    for (size_t i = 0; i < n1; i++)
      for (size_t l = 0; l < nc; l++)
        if (!c[l].query_set[0] && strcmp(c[l].arith, one[i].arith) == 0)
          memcpy(c[l].query_set, one[i].query_set, sizeof c[l].query_set);
  }
  /* fits: the first line's call took the same arithmetics */
  (void)slem_rankshard_set_classes(&m->group, c, nc);
}

/* A list shorter than k is only exact when it holds every row of its shard, less at most
 * the query's own (--exclude-self skips the row whose index is the query's): the shard must
 * not have returned more rows than that over all its queries, and a list that lacks one of
 * them must lack that one. This is all a plain shard (no shard line) can prove of its k: a
 * shard made with a smaller k whose lists hold all its rows but one, that one each query's
 * own, passes (and is then exact for the queries of a database searched with itself). */
static int check_short(const Merge *m, SlemError *err) {
  for (size_t s = 0; s < m->n; s++) {
    const Shard *sh = m->s + s;
    char at[SLEM_RANK_PLACE_MAX];
    if (sh->short_query && sh->short_n + 1 < sh->nrows)
      return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' has %zu results, fewer "
                        "than -k %zu, yet the shard returned %" PRIu64 " different rows: it was made "
                        "with a smaller -k, and the merge would not be exact", name_of(m, s),
                        query_at(m, s, sh->short_line, at), sh->short_query, sh->short_n,
                        m->opts->k, sh->nrows);
    for (size_t i = 0; i < sh->nshort; i++) {
      const struct Short *x = sh->shorts + i;
      if (x->n + 1 == sh->nrows && (x->own_listed || !slem_keyset_has(sh->rows, x->own)))
        return slem_error(err, SLEM_EFORMAT, "%s: %s: query '%s' has %zu results, "
                          "fewer than -k %zu, of the %" PRIu64 " rows the shard returned, and the row "
                          "it lacks is not its own (row %" PRIu64 ", which --exclude-self skips): it "
                          "was made with a smaller -k, and the merge would not be exact",
                          name_of(m, s), query_at(m, s, x->line, at), x->query, x->n, m->opts->k,
                          sh->nrows, x->own);
    }
  }
  return SLEM_OK;
}

static void merge_free(Merge *m) {
  for (size_t s = 0; s < m->n && m->s; s++) {
    slem_rankreader_free(m->s[s].r);
    slem_keyset_free(m->s[s].rows);
    free(m->s[s].short_query);
    for (size_t i = 0; i < m->s[s].nshort; i++) free(m->s[s].shorts[i].query);
    free(m->s[s].shorts);
  }
  free(m->s);
  free(m->c);
  free(m->seen.at);
  free(m->seen.gen);
  free(m->out);
}

/* 1 when path names a shard in files: a regular file, or a name that a format of its own
 * files claims (npy's NAME and NAME.npy for NAME.I.npy and NAME.D.npy); 0 for "-", a
 * pipe, a device. */
static int file_shard(const char *path) {
  struct stat sb;
  const SlemRankFormatOps *f;
  if (strcmp(path, "-") == 0) return 0;
  if (stat(path, &sb) == 0) return S_ISREG(sb.st_mode);
  for (int i = 0; (f = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (f->sniff_path && f->sniff_path(path)) return 1;
  return 0;
}

/* Before the fast path (mergefast.h): the checks of the shard lines, run by this merge's
 * own code on the first query of each shard, all in files (file_shard()). Returns 0 when the fast path
 * may try (*lines: the shards have shard lines, checked, each end line found in its file,
 * info filled), -1 when the general merge is to run (an error it will report again, a pipe,
 * an end line it reads at the end). */
static int fast_prepass(const char *const *shards, size_t n, const SlemMergeOpts *opts,
                        SlemMergeFastShard *info, int *lines, SlemRankShard *group) {
  Merge m = {0};
  SlemError e;
  size_t seen = 0;
  int done = 0, ok = -1;
  *lines = 0;
  for (size_t s = 0; s < n; s++)
    if (!file_shard(shards[s])) return -1;
  m.n = n;
  m.opts = opts;
  m.paths = shards;
  if (!(m.s = calloc(n, sizeof *m.s))) return -1;
  for (size_t s = 0; s < n; s++) {
    m.s[s].short_n = SIZE_MAX;
    if (slem_rankreader_open(&m.s[s].r, shards[s], SLEM_RANK_AUTO, &e) != SLEM_OK ||
        !(m.s[s].rows = slem_keyset_new()))
      goto done;
  }
  if (next_query(&m, &seen, &done, &e) != SLEM_OK || done || check_shards(&m, &e) != SLEM_OK)
    goto done;
  if (m.checked) {
    for (size_t s = 0; s < n; s++) {
      if (!m.s[s].end.has_end) goto done;
      info[s].lines = 1;
      info[s].lo = m.s[s].lo;
      info[s].hi = m.s[s].hi;
    }
    *lines = 1;
    if (m.group_span) { /* its end line: the shards' own, compared */
      group_end(&m);
      *group = m.group;
    }
  }
  ok = 0;
done:
  merge_free(&m);
  return ok;
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
  m.paths = shards;
  m.s = calloc(n, sizeof *m.s);
  if (!m.s) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (opts->check && (st = opts->check(opts->check_ctx, shards, n, err)) != SLEM_OK) goto done;
  /* the shards as slem-match writes them, fast; anything else (errors included) here */
  if (!opts->db_ids) {
    SlemMergeFastShard *info = calloc(n, sizeof *info);
    SlemRankShard group = {0};
    char *glines[2] = {NULL, NULL};
    const SlemRankFormatOps *fo = slem_rankformat_ops(opts->format);
    int lines = 0;
    if (!info) goto nomem;
    if (fast_prepass(shards, n, opts, info, &lines, &group) == 0) {
      /* a group's lines, where the output carries them (shards with lines are jsonl) */
      if (group.has_end && (opts->format == SLEM_RANK_AUTO || (fo && fo->shard_lines)) &&
          (!(glines[0] = slem_rankshard_line(&group, 0)) ||
           !(glines[1] = slem_rankshard_line(&group, 1)))) {
        free(glines[0]);
        free(info);
        goto nomem;
      }
      st = slem_mergefast(shards, n, output, opts, lines ? info : NULL,
                          glines[0] ? (const char *const *)glines : NULL, stats, err);
    } else {
      st = SLEM_MERGEFAST_DECLINED;
    }
    free(glines[0]);
    free(glines[1]);
    free(info);
    if (st != SLEM_MERGEFAST_DECLINED) goto done;
    st = SLEM_OK;
  }
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
    if (slem_rankreader_is_text(m.s[s].r) && empty_file(shards[s])) {
      st = slem_error(err, SLEM_EFORMAT, "%s: no rankings (empty file): tsv and trec have no line "
                      "for a query without results, so a shard of no rows is empty there and names "
                      "no query to merge: write the shards in jsonl", name_of(&m, s));
      goto done;
    }
  for (size_t s = 0; s < n; s++)
    if (slem_rankreader_is_text(m.s[s].r) && cut_short(shards[s])) {
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
      st = slem_rankwriter_open_k(&w, output, f, NULL, NULL, g->n && g->e[0].tag ? g->e[0].tag : NULL,
                                  opts->k, err);
      if (st) goto done;
      /* a group of consecutive shards proves to the next level which shards it holds */
      if (m.group_span && (st = slem_rankwriter_shard(w, &m.group, err)) != SLEM_OK) goto done;
    }
    if ((st = gather(&m, &nc, err)) != SLEM_OK) goto done;
    /* a row once per query, whatever its scores */
    if ((st = rowset_reset(&m.seen, nc, err)) != SLEM_OK) goto done;
    for (size_t i = 0; i < nc; i++) {
      size_t j = rowset_add(&m.seen, m.c, i);
      if (j != SIZE_MAX) {
        const Cand *c = m.c + i, *p = m.c + j;
        char at[SLEM_RANK_PLACE_MAX], atp[SLEM_RANK_PLACE_MAX];
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: row %" PRIu64 " twice for query "
                        "'%s' (also %s, %s)", name_of(&m, c->shard),
                        entry_at(&m, c->shard, m.s[c->shard].g->e + c->i, at), c->hit.row,
                        m.s[0].g->query, name_of(&m, p->shard),
                        entry_at(&m, p->shard, m.s[p->shard].g->e + p->i, atp));
        goto done;
      }
      if (!m.idmap && m.s[m.c[i].shard].g->e[m.c[i].i].row >= 0 &&
          (st = row_id_check(&m, m.c[i].shard, m.s[m.c[i].shard].g->e + m.c[i].i, m.c[i].hit.row,
                             err)) != SLEM_OK)
        goto done;
    }
    if (nc > 1) qsort(m.c, nc, sizeof *m.c, cand_cmp); /* m.c is NULL while no query had a result */
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
  if ((st = check_ends(&m, err)) != SLEM_OK) goto done;
  if ((st = check_short(&m, err)) != SLEM_OK) goto done;
  if (w && m.group_span) {
    group_end(&m);
    if ((st = slem_rankwriter_shard_end(w, &m.group, err)) != SLEM_OK) goto done;
  }
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
    for (size_t i = 0; i < m.s[s].nshort; i++) free(m.s[s].shorts[i].query);
    free(m.s[s].shorts);
  }
  free(m.s);
  free(m.c);
  free(m.seen.at);
  free(m.seen.gen);
  free(m.out);
  slem_ids_free(m.ids);
  slem_strmap_free(m.idmap);
  rowids_free(m.rowids);
  return st;
}

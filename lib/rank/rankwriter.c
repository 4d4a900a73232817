/* The ranking writer (rankings.h): opens the format of the table (rankings.c) and writes
 * through its hooks (rankfmt.h), serially or from formatting threads. */
#define _POSIX_C_SOURCE 200809L
#include "rankings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "rankfmt.h"

int slem_rankwriter_open_k(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                           const SlemIds *qids, const SlemIds *dbids, const char *tag, size_t k,
                           SlemError *err) {
  SlemRankWriter *w = calloc(1, sizeof *w);
  int st;
  *self = NULL;
  if (!w || !(w->tag = strdup(tag ? tag : "slem"))) {
    free(w);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (!(w->ops = slem_rankformat_ops(fmt))) {
    free(w->tag);
    free(w);
    return slem_error(err, SLEM_EINVAL, "a ranking writer needs a format (%s)",
                      slem_rankformat_names());
  }
  w->qids = qids;
  w->dbids = dbids;
  w->k = k;
  st = w->ops->open ? w->ops->open(w, path, err) : slem_out_open(&w->out, path, err);
  if (st) {
    free(w->tag);
    free(w);
    return st;
  }
  *self = w;
  return SLEM_OK;
}

int slem_rankwriter_open(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                         const SlemIds *qids, const SlemIds *dbids, const char *tag,
                         SlemError *err) {
  return slem_rankwriter_open_k(self, path, fmt, qids, dbids, tag, 0, err);
}

/* The id of row i: from ids, else the row number in buf. NULL when ids is too short. */
static const char *id_of(const SlemIds *ids, uint64_t i, char *buf, size_t n) {
  if (!ids) {
    snprintf(buf, n, "%" PRIu64, i);
    return buf;
  }
  return i < slem_ids_count(ids) ? slem_ids_get(ids, i) : NULL;
}

#define ROW_TEXT 24 /* a row number's text */
#define ENTRY_TEXT (ROW_TEXT + SLEM_FMT_G9_MAX)

/* Room for n entries and their texts in w. */
static int reserve(SlemRankWriter *w, size_t n) {
  if (n <= w->cap) return 0;
  {
    size_t cap = w->cap ? w->cap : 128;
    SlemRankEntry *e;
    char *t;
    while (cap < n) cap *= 2;
    if (!(e = realloc(w->e, cap * sizeof *e))) return -1;
    w->e = e;
    if (!(t = realloc(w->text, cap * ENTRY_TEXT))) return -1;
    w->text = t;
    w->cap = cap;
  }
  return 0;
}

/* The entries of n hits (ids from dbids, else the rows' numbers; scores' %.9g text) in
 * e(n), their texts in text(n * ENTRY_TEXT). Errors: SLEM_EFORMAT (dbids too short). */
static int hit_entries(const SlemIds *dbids, const SlemHit *hits, size_t n, SlemRankEntry *e,
                       char *text, SlemError *err) {
  for (size_t i = 0; i < n; i++) {
    char *t = text + i * ENTRY_TEXT;
    if (!(e[i].id = id_of(dbids, hits[i].row, t, ROW_TEXT)))
      return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but the database has more rows",
                        slem_ids_name(dbids), slem_ids_count(dbids));
    slem_fmt_g9(t + ROW_TEXT, hits[i].score);
    e[i].score_text = t + ROW_TEXT;
    e[i].score = hits[i].score;
    e[i].row = (int64_t)hits[i].row;
    e[i].rank = (long)(i + 1);
    e[i].tag = NULL;
    e[i].line = 0;
  }
  return SLEM_OK;
}

static int more_queries(const SlemRankWriter *w, SlemError *err) {
  return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but there are more queries",
                    slem_ids_name(w->qids), slem_ids_count(w->qids));
}

static int write_error(SlemRankWriter *w, SlemError *err) {
  return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
}

/* One query's entries written: through the format's text (format), else write_entries. */
static int put_entries(SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                       SlemError *err) {
  int st;
  if (!w->ops->format) return w->ops->write_entries(w, qid, e, n, err);
  w->buf.len = 0;
  if ((st = w->ops->format(w, qid, e, n, &w->buf, err)) != SLEM_OK) return st;
  if (w->buf.len && fwrite(w->buf.text, 1, w->buf.len, slem_out_file(w->out)) != w->buf.len)
    return write_error(w, err);
  return SLEM_OK;
}

int slem_rankwriter_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err) {
  SlemRankWriter *w = self;
  char qbuf[ROW_TEXT];
  const char *qid;
  int st;
  if (w->ops->write_hits) return w->ops->write_hits(w, query, hits, n, err);
  if (!(qid = id_of(w->qids, query, qbuf, sizeof qbuf))) return more_queries(w, err);
  if (reserve(w, n) != 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = hit_entries(w->dbids, hits, n, w->e, w->text, err)) != SLEM_OK) return st;
  return put_entries(w, qid, w->e, n, err);
}

int slem_rankwriter_write_entries(SlemRankWriter *self, const char *query,
                                  const SlemRankEntry *e, size_t n, SlemError *err) {
  SlemRankWriter *w = self;
  if (reserve(w, n) != 0) return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    char *t = w->text + i * ENTRY_TEXT;
    w->e[i] = e[i];
    slem_fmt_g9(t, (float)e[i].score);
    w->e[i].score_text = t;
  }
  return put_entries(w, query, w->e, n, err);
}

/* The sink's format: queries [lo, hi) of b into buf, with entries of their own (the writer
 * is only read: several ranges at once on different threads). */
static int sink_format(void *ctx, const SlemHitsBlock *b, size_t lo, size_t hi,
                       SlemTextBuf *buf, SlemError *err) {
  const SlemRankWriter *w = ctx;
  SlemRankEntry *e = NULL;
  char *text = NULL, qbuf[ROW_TEXT];
  size_t cap = 0;
  int st = SLEM_OK;
  for (size_t i = lo; i < hi && st == SLEM_OK; i++) {
    size_t n = b->n[i];
    const char *qid = id_of(w->qids, b->q0 + i, qbuf, sizeof qbuf);
    if (!qid) {
      st = more_queries(w, err);
      break;
    }
    if (n > cap) {
      SlemRankEntry *ne = realloc(e, n * sizeof *e);
      char *nt = ne ? realloc(text, n * ENTRY_TEXT) : NULL;
      if (ne) e = ne;
      if (nt) text = nt;
      if (!ne || !nt) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory");
        break;
      }
      cap = n;
    }
    if ((st = hit_entries(w->dbids, b->hits + i * b->stride, n, e, text, err)) == SLEM_OK)
      st = w->ops->format(w, qid, e, n, buf, err);
  }
  free(e);
  free(text);
  return st;
}

static int sink_write(void *ctx, const char *text, size_t len, SlemError *err) {
  SlemRankWriter *w = ctx;
  if (fwrite(text, 1, len, slem_out_file(w->out)) != len) return write_error(w, err);
  return SLEM_OK;
}

void slem_rankwriter_sink(SlemRankWriter *self, SlemHitsSink *sink) {
  int text = self->ops->format && !self->ops->write_hits && self->out;
  *sink = (SlemHitsSink){slem_rankwriter_write, text ? sink_format : NULL,
                         text ? sink_write : NULL, self};
}

static int put_shard(SlemRankWriter *self, const SlemRankShard *m, int end, SlemError *err) {
  char *line;
  int bad;
  if (!self->ops->shard_lines) return SLEM_OK;
  if (!(line = slem_rankshard_line(m, end))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  bad = fputs(line, slem_out_file(self->out)) == EOF;
  free(line);
  if (bad) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(self->out), strerror(errno));
  return SLEM_OK;
}

int slem_rankwriter_shard(SlemRankWriter *self, const SlemRankShard *m, SlemError *err) {
  return put_shard(self, m, 0, err);
}

int slem_rankwriter_shard_end(SlemRankWriter *self, const SlemRankShard *m, SlemError *err) {
  return put_shard(self, m, 1, err);
}

static void writer_free(SlemRankWriter *w) {
  free(w->tag);
  slem_textbuf_free(&w->buf);
  free(w->e);
  free(w->text);
  free(w);
}

int slem_rankwriter_close(SlemRankWriter *self, SlemError *err) {
  int st = self->ops->close ? self->ops->close(self, err) : slem_out_commit(self->out, err);
  writer_free(self);
  return st;
}

void slem_rankwriter_abort(SlemRankWriter *self) {
  if (!self) return;
  if (self->ops->abort) self->ops->abort(self);
  else slem_out_abort(self->out);
  writer_free(self);
}

#define _POSIX_C_SOURCE 200809L
#include "rankings.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fmt.h"
#include "io.h"
#include "lines.h"
#include "rankfmt.h"
#include "strmap.h"

#define NONE SLEM_RANK_NONE

/* ---- the formats ---- */

/* The table: a format's index is its SlemRankFormat (the order of the enum's names). */
static const SlemRankFormatOps *const formats[] = {
    &slem_rank_tsv,
    &slem_rank_trec,
    &slem_rank_jsonl,
    &slem_rank_npy,
};
#define NFORMATS (sizeof formats / sizeof *formats)

static const SlemRankFormatOps *ops_of(SlemRankFormat fmt) {
  return fmt >= 0 && (size_t)fmt < NFORMATS ? formats[fmt] : NULL;
}

const SlemRankFormatOps *slem_rankformat_ops(SlemRankFormat fmt) { return ops_of(fmt); }

int slem_rankings_key_cmp(const void *a, const void *b) {
  const SlemRankKey *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int slem_rankformat_parse(SlemRankFormat *fmt, const char *name, SlemError *err) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (strcmp(name, formats[i]->name) == 0) {
      *fmt = (SlemRankFormat)i;
      return SLEM_OK;
    }
  return slem_error(err, SLEM_EINVAL, "unknown format '%s' (%s)", name,
                    slem_rankformat_names());
}

const char *slem_rankformat_name(SlemRankFormat fmt) {
  return ops_of(fmt) ? ops_of(fmt)->name : "auto";
}

const char *slem_rankformat_names(void) {
  static char names[256];
  if (!names[0]) /* the table is constant: the same text whoever writes it first */
    for (size_t i = 0, pos = 0; i < NFORMATS && pos < sizeof names; i++)
      pos += (size_t)snprintf(names + pos, sizeof names - pos, "%s%s", i ? ", " : "",
                              formats[i]->name);
  return names;
}

const char *slem_rankformat_extensions(void) {
  static char exts[256];
  if (!exts[0])
    for (size_t i = 0, pos = 0; i < NFORMATS && pos < sizeof exts; i++)
      pos += (size_t)snprintf(exts + pos, sizeof exts - pos, "%s%s", i ? ", " : "",
                              formats[i]->extension);
  return exts;
}

SlemRankFormat slem_rankformat_from_path(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL, *slash = path ? strrchr(path, '/') : NULL;
  if (!dot || (slash && slash > dot)) return SLEM_RANK_AUTO;
  for (size_t i = 0; i < NFORMATS; i++)
    if (strcmp(dot, formats[i]->extension) == 0) return (SlemRankFormat)i;
  return SLEM_RANK_AUTO;
}

int slem_rankformat_files(SlemRankFormat fmt, const char *path, char names[2][4096], size_t *n) {
  const SlemRankFormatOps *ops = ops_of(fmt);
  if (ops && ops->files) return ops->files(path, names, n);
  *n = 0;
  if (strlen(path) >= sizeof names[0]) return -1;
  strcpy(names[0], path);
  *n = 1;
  return 0;
}

int slem_rankformat_has_shard(SlemRankFormat fmt) {
  return ops_of(fmt) && ops_of(fmt)->shard_lines;
}

/* ---- writer ---- */

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
  if (!(w->ops = ops_of(fmt))) {
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

/* The fields, in the order of their lines. The arithmetics (arith.h): descriptors
 * encoded on other BLAS cores differ in their last bits, and so do their scores; the
 * match's own core does not matter (its exact scores use the BLAS only to find candidates
 * within a proven bound, match.h), its libraries do. The fingerprints of descriptors differ
 * with their arithmetic, so --allow-mixed-blas lets them differ where it does. */
#define SHARD_FIELD(key, end, type, member, rule, mixed, differs) \
  {key, end, type, offsetof(SlemRankShard, member), sizeof(((SlemRankShard *)0)->member), \
   rule, mixed, differs, 0}
static const SlemRankShardField shard_fields[] = {
    SHARD_FIELD("index", 0, SLEM_SHARDF_U64, index, SLEM_SHARDR_ANY, SLEM_SHARDM_NEVER, NULL),
    /* a group's (slem-merge --partial): written when not 1 */
    {"span", 0, SLEM_SHARDF_U64, offsetof(SlemRankShard, span), sizeof(uint64_t),
     SLEM_SHARDR_ANY, SLEM_SHARDM_NEVER, NULL, 1},
    SHARD_FIELD("count", 0, SLEM_SHARDF_U64, count, SLEM_SHARDR_EXACT, SLEM_SHARDM_NEVER,
                "another split of the database"),
    SHARD_FIELD("rows", 0, SLEM_SHARDF_U64, rows, SLEM_SHARDR_EXACT, SLEM_SHARDM_NEVER,
                "a shard of another database"),
    SHARD_FIELD("k", 0, SLEM_SHARDF_U64, k, SLEM_SHARDR_ANY, SLEM_SHARDM_NEVER, NULL),
    SHARD_FIELD("database", 0, SLEM_SHARDF_HEX16, database, SLEM_SHARDR_EXACT, SLEM_SHARDM_DESC,
                "a shard of another database (its vectors, ids or cache differ)"),
    SHARD_FIELD("arithmetic", 0, SLEM_SHARDF_TEXT, arith, SLEM_SHARDR_LIBS, SLEM_SHARDM_ALWAYS,
                "shards scored with other libraries (OpenBLAS, GSL, the C library; the BLAS "
                "core alone does not matter) may score differently, and the merge would not be "
                "the ranking of one run; match every shard with the same libraries, or pass "
                "--allow-mixed-blas"),
    SHARD_FIELD("descriptors_arithmetic", 0, SLEM_SHARDF_TEXT, desc_arith, SLEM_SHARDR_KNOWN,
                SLEM_SHARDM_ALWAYS,
                "descriptors encoded on other BLAS cores differ in their last bits, and so do "
                "their scores: the merge would not be the ranking of one run; encode on one "
                "core (OPENBLAS_CORETYPE), or pass --allow-mixed-blas"),
    /* a group's of several descriptors' arithmetics, compared with the fingerprints */
    SHARD_FIELD("descriptors_databases", 0, SLEM_SHARDF_TEXT, desc_databases, SLEM_SHARDR_ANY,
                SLEM_SHARDM_NEVER, NULL),
    SHARD_FIELD("scoring", 0, SLEM_SHARDF_TEXT, scoring, SLEM_SHARDR_KNOWN, SLEM_SHARDM_NEVER,
                "shards scored by another similarity (--normalize, --affine, --calibration, "
                "-c and its cache, --couple or --exclude-self differ): their scores do not "
                "compare, and the merge would not be the ranking of one run"),
    SHARD_FIELD("queries", 1, SLEM_SHARDF_U64, queries, SLEM_SHARDR_EXACT, SLEM_SHARDM_NEVER,
                "the ranking of other queries"),
    SHARD_FIELD("query_set", 1, SLEM_SHARDF_HEX16, query_set, SLEM_SHARDR_EXACT, SLEM_SHARDM_DESC,
                "the ranking of other queries (their vectors or ids differ)"),
    SHARD_FIELD("descriptors_query_sets", 1, SLEM_SHARDF_TEXT, desc_query_sets, SLEM_SHARDR_ANY,
                SLEM_SHARDM_NEVER, NULL),
};
#undef SHARD_FIELD

const SlemRankShardField *slem_rankshard_fields(size_t *n) {
  *n = sizeof shard_fields / sizeof *shard_fields;
  return shard_fields;
}

const char *slem_rankshard_value(const SlemRankShard *m, const SlemRankShardField *f,
                                 char buf[SLEM_SHARD_VALUE_MAX]) {
  const char *p = (const char *)m + f->offset;
  if (f->type == SLEM_SHARDF_U64) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    if (f->absent_one && v == 0) v = 1; /* not read from a line: one shard */
    snprintf(buf, SLEM_SHARD_VALUE_MAX, "%" PRIu64, v);
  } else {
    snprintf(buf, SLEM_SHARD_VALUE_MAX, "%s", p);
  }
  return buf;
}

/* ---- a group's descriptors' arithmetics ---- */

static const char class_sep[] = " | ";

static int hex16(const char *p) { return strspn(p, "0123456789abcdef") >= 16; }

/* Parses desc_databases (text) and desc_query_sets (qsets, may be "") into c; returns the
 * number of classes, or 0 when the texts are not as slem_rankshard_set_classes() writes
 * them: at least two distinct arithmetics, each after 16 hex digits and '=', and as many
 * query sets, or none. */
static size_t parse_classes(const char *text, const char *qsets, SlemRankShardClass *c) {
  size_t n = 0;
  const char *p = text;
  for (;;) {
    const char *e = strstr(p, class_sep), *a = p + 17;
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (n == SLEM_SHARD_CLASSES || len < 17 || !hex16(p) || p[16] != '=' ||
        len - 17 >= sizeof c[n].arith)
      return 0;
    memcpy(c[n].database, p, 16);
    c[n].database[16] = '\0';
    memcpy(c[n].arith, a, len - 17);
    c[n].arith[len - 17] = '\0';
    c[n].query_set[0] = '\0';
    for (size_t i = 0; i < n; i++)
      if (strcmp(c[i].arith, c[n].arith) == 0) return 0;
    n++;
    if (!e) break;
    p = e + sizeof class_sep - 1;
  }
  if (n < 2) return 0;
  if (*qsets) {
    for (size_t i = 0; i < n; i++, qsets += 17) {
      if (!hex16(qsets) || qsets[16] != (i + 1 < n ? ' ' : '\0')) return 0;
      memcpy(c[i].query_set, qsets, 16);
      c[i].query_set[16] = '\0';
    }
  }
  return n;
}

size_t slem_rankshard_classes(const SlemRankShard *m, SlemRankShardClass *c) {
  size_t n = m->desc_databases[0] ? parse_classes(m->desc_databases, m->desc_query_sets, c) : 0;
  if (n > 0) return n;
  snprintf(c[0].arith, sizeof c[0].arith, "%s", m->desc_arith);
  memcpy(c[0].database, m->database, sizeof c[0].database);
  memcpy(c[0].query_set, m->query_set, sizeof c[0].query_set);
  return 1;
}

int slem_rankshard_set_classes(SlemRankShard *m, const SlemRankShardClass *c, size_t n) {
  char text[sizeof m->desc_databases], qsets[sizeof m->desc_query_sets];
  size_t at = 0, qat = 0;
  int known = 1;
  if (n > SLEM_SHARD_CLASSES) return -1;
  text[0] = qsets[0] = '\0';
  for (size_t i = 0; i < n && n > 1; i++) {
    int w = snprintf(text + at, sizeof text - at, "%s%s=%s", i ? class_sep : "", c[i].database,
                     c[i].arith);
    /* a text the reader would take apart otherwise */
    if (w < 0 || (size_t)w >= sizeof text - at || strstr(c[i].arith, class_sep)) return -1;
    at += (size_t)w;
    if (!c[i].query_set[0]) known = 0;
    else qat += (size_t)snprintf(qsets + qat, sizeof qsets - qat, "%s%s", i ? " " : "", c[i].query_set);
  }
  memcpy(m->desc_databases, text, at + 1);
  memcpy(m->desc_query_sets, known ? qsets : "", known ? qat + 1 : 1);
  return 0;
}

/* The fingerprint f (a SLEM_SHARDM_DESC field) of class c. */
static const char *class_print(const SlemRankShardField *f, const SlemRankShardClass *c) {
  return f->offset == offsetof(SlemRankShard, database) ? c->database : c->query_set;
}

int slem_rankshard_prints(const SlemRankShardField *f, const SlemRankShard *a,
                          const SlemRankShard *b, char va[17], char vb[17],
                          char arith[SLEM_ARITH_LIST_MAX]) {
  SlemRankShardClass ca[SLEM_SHARD_CLASSES], cb[SLEM_SHARD_CLASSES];
  size_t na = slem_rankshard_classes(a, ca), nb = slem_rankshard_classes(b, cb);
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++) {
      const char *x = class_print(f, ca + i), *y = class_print(f, cb + j);
      if (slem_arith_differ(ca[i].arith, cb[j].arith) || strcmp(x, y) == 0) continue;
      if (va) snprintf(va, 17, "%s", x);
      if (vb) snprintf(vb, 17, "%s", y);
      if (arith && ca[i].arith[0] && cb[j].arith[0]) memcpy(arith, ca[i].arith, sizeof ca[i].arith);
      else if (arith) arith[0] = '\0';
      return 0;
    }
  return -1;
}

int slem_rankshard_mixes(const SlemRankShardField *f, const SlemRankShard *m) {
  SlemRankShardClass c[SLEM_SHARD_CLASSES];
  size_t n, known = 0;
  if (f->mixed != SLEM_SHARDM_ALWAYS) return 0;
  if (f->rule == SLEM_SHARDR_LIBS) return strstr((const char *)m + f->offset, " + ") != NULL;
  n = slem_rankshard_classes(m, c);
  for (size_t i = 0; i < n; i++) known += c[i].arith[0] != '\0';
  return known > 1;
}

int slem_rankshard_differ(const SlemRankShardField *f, const SlemRankShard *a,
                          const SlemRankShard *b, int allow_mixed_blas) {
  char x[SLEM_SHARD_VALUE_MAX], y[SLEM_SHARD_VALUE_MAX];
  if (allow_mixed_blas && f->mixed == SLEM_SHARDM_ALWAYS) return 0;
  if (allow_mixed_blas && f->mixed == SLEM_SHARDM_DESC) {
    /* two shards: their own fingerprints, unless their descriptors' arithmetics differ */
    if (!a->desc_databases[0] && !b->desc_databases[0])
      return !slem_arith_differ(a->desc_arith, b->desc_arith) &&
             strcmp((const char *)a + f->offset, (const char *)b + f->offset) != 0;
    return slem_rankshard_prints(f, a, b, NULL, NULL, NULL) == 0;
  }
  if (slem_rankshard_mixes(f, a) || slem_rankshard_mixes(f, b)) return 1;
  slem_rankshard_value(a, f, x);
  slem_rankshard_value(b, f, y);
  switch (f->rule) {
  case SLEM_SHARDR_ANY: return 0;
  case SLEM_SHARDR_EXACT: return strcmp(x, y) != 0;
  case SLEM_SHARDR_KNOWN: return *x && *y && strcmp(x, y) != 0;
  case SLEM_SHARDR_LIBS: return slem_arith_differ_libs(x, y);
  }
  return 1;
}

static const char shard_head[] = "{\"slem_shard\":", shard_tail[] = "{\"slem_shard_end\":";

/* The JSON of the fields of one line (end 0: the first, 1: the end line), in table order. */
static char *shard_json(const SlemRankShard *m, int end) {
  cJSON *o = cJSON_CreateObject();
  char *text;
  if (!o) return NULL;
  for (size_t i = 0; i < sizeof shard_fields / sizeof *shard_fields; i++) {
    const SlemRankShardField *f = shard_fields + i;
    const char *p = (const char *)m + f->offset;
    if (f->end != end) continue;
    if (f->type == SLEM_SHARDF_U64) {
      uint64_t v;
      memcpy(&v, p, sizeof v);
      if (!f->absent_one || v > 1) cJSON_AddNumberToObject(o, f->key, (double)v);
    } else if (f->type != SLEM_SHARDF_TEXT || *p) { /* a text not recorded is not written */
      cJSON_AddStringToObject(o, f->key, p);
    }
  }
  text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}

char *slem_rankshard_line(const SlemRankShard *m, int end) {
  char *text = shard_json(m, end), *line;
  const char *head = end ? shard_tail : shard_head;
  size_t len;
  if (!text) return NULL;
  len = strlen(head) + strlen(text) + 3;
  if ((line = malloc(len)) != NULL) snprintf(line, len, "%s%s}\n", head, text);
  free(text);
  return line;
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

/* Parses the fields of one shard line (end 0: the first, 1: the end line) from the text
 * line into m. Errors name the file and where (a line number, or "the last line"). */
static int parse_shard(SlemRankShard *m, const char *line, int end, const char *name,
                       const char *where, SlemError *err) {
  cJSON *all = cJSON_Parse(line);
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(all, end ? "slem_shard_end" : "slem_shard");
  int st = SLEM_OK;
  for (size_t i = 0; i < sizeof shard_fields / sizeof *shard_fields && st == SLEM_OK; i++) {
    const SlemRankShardField *f = shard_fields + i;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, f->key);
    char *p = (char *)m + f->offset;
    if (f->end != end) continue;
    if (f->type == SLEM_SHARDF_U64) {
      uint64_t v = 1;
      if (f->absent_one && !it) {
        memcpy(p, &v, sizeof v);
        continue;
      }
      if (!cJSON_IsNumber(it) || !(it->valuedouble >= f->absent_one) ||
          it->valuedouble > 9007199254740992.0 || it->valuedouble != floor(it->valuedouble)) {
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line (no whole '%s')", name, where,
                        f->key);
        break;
      }
      v = (uint64_t)it->valuedouble;
      memcpy(p, &v, sizeof v);
    } else if (f->type == SLEM_SHARDF_HEX16) {
      if (!cJSON_IsString(it) || strlen(it->valuestring) != 16 ||
          strspn(it->valuestring, "0123456789abcdef") != 16) {
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line (no '%s' of 16 hex digits)",
                        name, where, f->key);
        break;
      }
      memcpy(p, it->valuestring, 17);
    } else if (f->type == SLEM_SHARDF_TEXT) {
      size_t len = cJSON_IsString(it) ? strlen(it->valuestring) : 0;
      int printable = 1;
      for (size_t j = 0; j < len; j++)
        if ((unsigned char)it->valuestring[j] < 0x20 || it->valuestring[j] == 0x7f) printable = 0;
      if (it && (!cJSON_IsString(it) || len >= f->size || !printable)) {
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line ('%s' not a text of at most "
                        "%zu printable characters)", name, where, f->key, f->size - 1);
        break;
      }
      memcpy(p, it ? it->valuestring : "", len + 1); /* absent: not recorded */
    } else {
      static const char word[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
      size_t len = cJSON_IsString(it) ? strlen(it->valuestring) : 0;
      if (len == 0 || len >= SLEM_SHARD_WORD || strspn(it->valuestring, word) != len) {
        st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line (no word '%s')", name, where,
                        f->key);
        break;
      }
      memcpy(p, it->valuestring, len + 1);
    }
  }
  if (st == SLEM_OK && !end && (m->count == 0 || m->index >= m->count))
    st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line (index %" PRIu64 " of %" PRIu64
                    ")", name, where, m->index, m->count);
  if (st == SLEM_OK && !end && m->span > m->count - m->index)
    st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line (span %" PRIu64 " from index %"
                    PRIu64 " of %" PRIu64 ")", name, where, m->span, m->index, m->count);
  if (st == SLEM_OK) { /* a group's arithmetics, and as many query sets in its end line */
    SlemRankShardClass c[SLEM_SHARD_CLASSES];
    if (!end && m->desc_databases[0] && !parse_classes(m->desc_databases, "", c))
      st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line ('descriptors_databases' not "
                      "two to %d of FINGERPRINT=ARITHMETIC, ' | ' between)", name, where,
                      SLEM_SHARD_CLASSES);
    else if (end && (m->desc_databases[0] ? !m->desc_query_sets[0] ||
                                                !parse_classes(m->desc_databases, m->desc_query_sets, c)
                                          : m->desc_query_sets[0] != '\0'))
      st = slem_error(err, SLEM_EFORMAT, "%s: %s: a bad shard line ('descriptors_query_sets' not "
                      "one query set for each of line 1's 'descriptors_databases')", name, where);
  }
  if (st == SLEM_OK && end) m->has_end = 1;
  cJSON_Delete(all);
  return st;
}

int slem_rankshard_read_end(const char *path, SlemRankShard *m, int *found, SlemError *err) {
  char buf[4096 + 1];
  SlemIn *in;
  SlemError e;
  uint64_t from;
  size_t got, len;
  char *line;
  int st;
  struct stat sb;
  *found = 0;
  /* a pipe (stdin, a FIFO) is read later, never here; a file whose size says 0 but that
   * holds bytes (/proc, FUSE) is read through, as its end line is found before anything
   * is written in any other file */
  if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      slem_in_open(&in, path, &e) != SLEM_OK)
    return SLEM_OK;
  st = slem_in_tail(in, buf, 4096, &got, &from, err);
  slem_in_free(in);
  if (st) return st;
  buf[got] = '\0';
  len = got;
  if (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
  line = NULL;
  for (size_t i = len; i > 0 && !line; i--)
    if (buf[i - 1] == '\n') line = buf + i;
  if (!line && from == 0) line = buf;
  if (!line || strncmp(line, shard_tail, sizeof shard_tail - 1) != 0) return SLEM_OK;
  if ((st = parse_shard(m, line, 1, path, "the last line", err)) != SLEM_OK) return st;
  *found = 1;
  return SLEM_OK;
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

/* ---- reader ---- */

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
  int st;
  *self = NULL;
  if (!r || !(r->qmap = slem_strmap_new())) {
    slem_rankreader_free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (fmt != SLEM_RANK_AUTO && !ops_of(fmt)) {
    slem_rankreader_free(r);
    return slem_error(err, SLEM_EINVAL, "unknown ranking format %d", (int)fmt);
  }
  r->ops = ops_of(fmt);
  for (size_t i = 0; i < NFORMATS && !r->ops; i++) /* a format known by its files' names */
    if (formats[i]->sniff_path && formats[i]->sniff_path(path)) r->ops = formats[i];
  st = r->ops && r->ops->ropen ? r->ops->ropen(r, path, err) : slem_lines_open(&r->lines, path, err);
  if (st) {
    slem_rankreader_free(r);
    return st;
  }
  *self = r;
  return SLEM_OK;
}

SlemRankFormat slem_rankreader_format(const SlemRankReader *self) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (formats[i] == self->ops) return (SlemRankFormat)i;
  return SLEM_RANK_AUTO;
}

const SlemRankShard *slem_rankreader_shard(const SlemRankReader *self) {
  return self->shard.count > 0 ? &self->shard : NULL;
}

/* A shard line (the first line of a file that slem-match --shard wrote): parsed into
 * r->shard. Returns 1 when line is one, 0 when it is not, -1 with err set when it is a bad
 * one. The format is then the one that carries shard lines. */
static int shard_line(SlemRankReader *r, const char *line, SlemError *err) {
  if (strncmp(line, shard_head, sizeof shard_head - 1) != 0 || (r->ops && !r->ops->shard_lines))
    return 0;
  for (size_t i = 0; i < NFORMATS && !r->ops; i++)
    if (formats[i]->shard_lines) r->ops = formats[i];
  if (parse_shard(&r->shard, line, 0, slem_lines_name(r->lines), "line 1", err) != SLEM_OK) {
    r->shard.count = 0;
    return -1;
  }
  return 1;
}

/* The end line of a shard's ranking: parsed into r->shard. Returns 1 when line is one, 0
 * when it is not, -1 with err set when it is a bad one or comes without a first line. */
static int shard_end_line(SlemRankReader *r, const char *line, SlemError *err) {
  char where[48];
  if (!r->ops->shard_lines || strncmp(line, shard_tail, sizeof shard_tail - 1) != 0) return 0;
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
  return parse_shard(&r->shard, line, 1, slem_lines_name(r->lines), where, err) == SLEM_OK ? 1 : -1;
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

/* The format of a text whose first non-blank line is line: the highest sniff. */
static const SlemRankFormatOps *sniff(const char *line) {
  const SlemRankFormatOps *best = NULL;
  int score = 0;
  for (size_t i = 0; i < NFORMATS; i++) {
    int s = formats[i]->sniff ? formats[i]->sniff(line) : 0;
    if (s > score) {
      score = s;
      best = formats[i];
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

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
#include "strmap.h"

/* ---- format names ---- */

static const char *const format_names[] = {"tsv", "trec", "jsonl"};
#define NFORMATS (sizeof format_names / sizeof *format_names)

int slem_rankformat_parse(SlemRankFormat *fmt, const char *name, SlemError *err) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (strcmp(name, format_names[i]) == 0) {
      *fmt = (SlemRankFormat)i;
      return SLEM_OK;
    }
  return slem_error(err, SLEM_EINVAL, "unknown format '%s' (%s)", name,
                    slem_rankformat_names());
}

const char *slem_rankformat_name(SlemRankFormat fmt) {
  return fmt >= 0 && (size_t)fmt < NFORMATS ? format_names[fmt] : "auto";
}

const char *slem_rankformat_names(void) { return "tsv, trec, jsonl"; }

SlemRankFormat slem_rankformat_from_path(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL, *slash = path ? strrchr(path, '/') : NULL;
  SlemRankFormat f = SLEM_RANK_AUTO;
  if (!dot || (slash && slash > dot) || slem_rankformat_parse(&f, dot + 1, NULL) != SLEM_OK)
    return SLEM_RANK_AUTO;
  return f;
}

/* ---- writer ---- */

struct SlemRankWriter {
  SlemOut *out;
  SlemRankFormat fmt;
  const SlemIds *qids, *dbids;
  char *tag;
};

int slem_rankwriter_open(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                         const SlemIds *qids, const SlemIds *dbids, const char *tag,
                         SlemError *err) {
  SlemRankWriter *w = calloc(1, sizeof *w);
  int st;
  *self = NULL;
  if (!w || !(w->tag = strdup(tag ? tag : "slem"))) {
    free(w);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (fmt < 0 || (size_t)fmt >= NFORMATS) {
    free(w->tag);
    free(w);
    return slem_error(err, SLEM_EINVAL, "a ranking writer needs a format (%s)",
                      slem_rankformat_names());
  }
  st = slem_out_open(&w->out, path, err);
  if (st) {
    free(w->tag);
    free(w);
    return st;
  }
  w->fmt = fmt;
  w->qids = qids;
  w->dbids = dbids;
  *self = w;
  return SLEM_OK;
}

/* The id of row i: from ids, else the row number in buf. NULL when ids is too short. */
static const char *id_of(const SlemIds *ids, uint64_t i, char *buf, size_t n) {
  if (!ids) {
    snprintf(buf, n, "%" PRIu64, i);
    return buf;
  }
  return i < slem_ids_count(ids) ? slem_ids_get(ids, i) : NULL;
}

/* A query's lines in progress: jsonl builds one object, the others write line by line. */
typedef struct Lines {
  cJSON *obj, *arr;
} Lines;

static int begin_query(SlemRankWriter *w, Lines *l, const char *qid) {
  l->obj = l->arr = NULL;
  if (w->fmt != SLEM_RANK_JSONL) return 0;
  l->obj = cJSON_CreateObject();
  if (!l->obj || !cJSON_AddStringToObject(l->obj, "query", qid)) return -1;
  l->arr = cJSON_AddArrayToObject(l->obj, "results");
  return l->arr ? 0 : -1;
}

/* Writes one result. Returns 0, -1 out of memory, -2 write error. */
static int put_result(SlemRankWriter *w, Lines *l, const char *qid, size_t rank, const char *did,
                      int64_t row, const char *sbuf) {
  FILE *fp = slem_out_file(w->out);
  switch (w->fmt) {
  case SLEM_RANK_TSV: {
    /* by hand: fprintf per line was most of the writing time */
    char line[256], rbuf[24];
    size_t lq = strlen(qid), ld = strlen(did), ls = strlen(sbuf), pos;
    int lr = snprintf(rbuf, sizeof rbuf, "%zu", rank);
    if (lq + ld + ls + (size_t)lr + 4 > sizeof line)
      return fprintf(fp, "%s\t%s\t%s\t%s\n", qid, rbuf, did, sbuf) > 0 ? 0 : -2;
    memcpy(line, qid, lq);
    pos = lq;
    line[pos++] = '\t';
    memcpy(line + pos, rbuf, (size_t)lr);
    pos += (size_t)lr;
    line[pos++] = '\t';
    memcpy(line + pos, did, ld);
    pos += ld;
    line[pos++] = '\t';
    memcpy(line + pos, sbuf, ls);
    pos += ls;
    line[pos++] = '\n';
    return fwrite(line, 1, pos, fp) == pos ? 0 : -2;
  }
  case SLEM_RANK_TREC:
    return fprintf(fp, "%s Q0 %s %zu %s %s\n", qid, did, rank, sbuf, w->tag) > 0 ? 0 : -2;
  default: {
    cJSON *h = cJSON_CreateObject();
    if (!h) return -1;
    cJSON_AddItemToArray(l->arr, h);
    if (!cJSON_AddNumberToObject(h, "rank", (double)rank) || !cJSON_AddStringToObject(h, "id", did))
      return -1;
    if (row >= 0 && !cJSON_AddNumberToObject(h, "row", (double)row)) return -1;
    {
      cJSON *s = cJSON_CreateRaw(sbuf);
      if (!s) return -1;
      cJSON_AddItemToObject(h, "score", s);
    }
    return 0;
  }
  }
}

/* Writes the jsonl object, if any, and frees it. Returns as put_result. */
static int end_query(SlemRankWriter *w, Lines *l) {
  FILE *fp = slem_out_file(w->out);
  char *text;
  int ok;
  if (!l->obj) return 0;
  text = cJSON_PrintUnformatted(l->obj);
  cJSON_Delete(l->obj);
  l->obj = NULL;
  if (!text) return -1;
  ok = fputs(text, fp) >= 0 && putc('\n', fp) != EOF;
  free(text);
  return ok ? 0 : -2;
}

static int write_failed(SlemRankWriter *w, Lines *l, int r, SlemError *err) {
  cJSON_Delete(l->obj);
  l->obj = NULL;
  if (r == -1) return slem_error(err, SLEM_ENOMEM, "out of memory");
  return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
}

int slem_rankwriter_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err) {
  SlemRankWriter *w = self;
  char qbuf[24], dbuf[24], sbuf[SLEM_FMT_G9_MAX];
  const char *qid = id_of(w->qids, query, qbuf, sizeof qbuf);
  Lines l;
  int r;
  if (!qid)
    return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but there are more queries",
                      slem_ids_name(w->qids), slem_ids_count(w->qids));
  if ((r = begin_query(w, &l, qid)) != 0) return write_failed(w, &l, r, err);
  for (size_t i = 0; i < n; i++) {
    const char *did = id_of(w->dbids, hits[i].row, dbuf, sizeof dbuf);
    if (!did) {
      cJSON_Delete(l.obj);
      return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but the database has more rows",
                        slem_ids_name(w->dbids), slem_ids_count(w->dbids));
    }
    slem_fmt_g9(sbuf, hits[i].score);
    if ((r = put_result(w, &l, qid, i + 1, did, (int64_t)hits[i].row, sbuf)) != 0)
      return write_failed(w, &l, r, err);
  }
  if ((r = end_query(w, &l)) != 0) return write_failed(w, &l, r, err);
  return SLEM_OK;
}

int slem_rankwriter_write_entries(SlemRankWriter *self, const char *query,
                                  const SlemRankEntry *e, size_t n, SlemError *err) {
  char sbuf[SLEM_FMT_G9_MAX];
  Lines l;
  int r;
  if ((r = begin_query(self, &l, query)) != 0) return write_failed(self, &l, r, err);
  for (size_t i = 0; i < n; i++) {
    slem_fmt_g9(sbuf, (float)e[i].score);
    if ((r = put_result(self, &l, query, i + 1, e[i].id, e[i].row, sbuf)) != 0)
      return write_failed(self, &l, r, err);
  }
  if ((r = end_query(self, &l)) != 0) return write_failed(self, &l, r, err);
  return SLEM_OK;
}

/* The fields, in the order of their lines. The arithmetics (arith.h): descriptors
 * encoded on other BLAS cores differ in their last bits, and so do their scores; the
 * match's own core does not matter (its exact scores use the BLAS only to find candidates
 * within a proven bound, match.h), its libraries do. The fingerprints of descriptors differ
 * with their arithmetic, so --allow-mixed-blas lets them differ where it does. */
#define SHARD_FIELD(key, end, type, member, rule, mixed, differs) \
  {key, end, type, offsetof(SlemRankShard, member), sizeof(((SlemRankShard *)0)->member), \
   rule, mixed, differs}
static const SlemRankShardField shard_fields[] = {
    SHARD_FIELD("index", 0, SLEM_SHARDF_U64, index, SLEM_SHARDR_ANY, SLEM_SHARDM_NEVER, NULL),
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
    SHARD_FIELD("scoring", 0, SLEM_SHARDF_TEXT, scoring, SLEM_SHARDR_KNOWN, SLEM_SHARDM_NEVER,
                "shards scored by another similarity (--normalize, --affine, --calibration, "
                "-c and its cache, --couple or --exclude-self differ): their scores do not "
                "compare, and the merge would not be the ranking of one run"),
    SHARD_FIELD("queries", 1, SLEM_SHARDF_U64, queries, SLEM_SHARDR_EXACT, SLEM_SHARDM_NEVER,
                "the ranking of other queries"),
    SHARD_FIELD("query_set", 1, SLEM_SHARDF_HEX16, query_set, SLEM_SHARDR_EXACT, SLEM_SHARDM_DESC,
                "the ranking of other queries (their vectors or ids differ)"),
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
    snprintf(buf, SLEM_SHARD_VALUE_MAX, "%" PRIu64, v);
  } else {
    snprintf(buf, SLEM_SHARD_VALUE_MAX, "%s", p);
  }
  return buf;
}

int slem_rankshard_differ(const SlemRankShardField *f, const SlemRankShard *a,
                          const SlemRankShard *b, int allow_mixed_blas) {
  char x[SLEM_SHARD_VALUE_MAX], y[SLEM_SHARD_VALUE_MAX];
  if (allow_mixed_blas &&
      (f->mixed == SLEM_SHARDM_ALWAYS ||
       (f->mixed == SLEM_SHARDM_DESC && slem_arith_differ(a->desc_arith, b->desc_arith))))
    return 0;
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
      cJSON_AddNumberToObject(o, f->key, (double)v);
    } else if (f->type != SLEM_SHARDF_TEXT || *p) { /* a text not recorded is not written */
      cJSON_AddStringToObject(o, f->key, p);
    }
  }
  text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}

static int put_shard(SlemRankWriter *self, const SlemRankShard *m, int end, SlemError *err) {
  char *text;
  int bad;
  if (self->fmt != SLEM_RANK_JSONL) return SLEM_OK;
  if (!(text = shard_json(m, end))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  bad = fprintf(slem_out_file(self->out), "%s%s}\n", end ? shard_tail : shard_head, text) < 0;
  free(text);
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
      uint64_t v;
      if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > 9007199254740992.0 ||
          it->valuedouble != floor(it->valuedouble)) {
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
  if (st == SLEM_OK && end) m->has_end = 1;
  cJSON_Delete(all);
  return st;
}

int slem_rankshard_read_end(const char *path, SlemRankShard *m, int *found, SlemError *err) {
  char buf[4096 + 1];
  FILE *f;
  long size, from;
  size_t got, len;
  char *line;
  int st = SLEM_OK;
  struct stat sb;
  *found = 0;
  /* a pipe (stdin, a FIFO) is read later, never here */
  if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      !(f = fopen(path, "rb")))
    return SLEM_OK;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
    fclose(f); /* not seekable: read later */
    return SLEM_OK;
  }
  from = size > 4096 ? size - 4096 : 0;
  if (fseek(f, from, SEEK_SET) != 0) {
    fclose(f);
    return SLEM_OK;
  }
  got = fread(buf, 1, 4096, f);
  if (ferror(f)) st = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
  fclose(f);
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

int slem_rankwriter_close(SlemRankWriter *self, SlemError *err) {
  int st = slem_out_commit(self->out, err);
  free(self->tag);
  free(self);
  return st;
}

void slem_rankwriter_abort(SlemRankWriter *self) {
  if (!self) return;
  slem_out_abort(self->out);
  free(self->tag);
  free(self);
}

/* ---- reader ---- */

#define NONE SIZE_MAX

/* Where an entry's strings are in the arena (they move while it grows). */
typedef struct Offs {
  size_t id, score, tag;
} Offs;

struct SlemRankReader {
  SlemLines *lines;
  SlemRankFormat fmt;
  SlemStrMap *qmap;      /* query ids seen */
  char *arena;           /* strings of the query being read */
  size_t alen, acap;
  SlemRankEntry *e;
  Offs *o;
  size_t n, cap;
  size_t *slot;          /* open-addressing set of entry indices, by id; nslot a power of 2 */
  size_t nslot;
  size_t qoff;           /* the query id in the arena */
  SlemRankQuery q;
  /* a tsv/trec line read ahead: it starts the next query */
  char *pend;            /* "query\0id\0score\0tag\0" */
  size_t pend_cap;
  long pend_rank;
  double pend_score;
  uint64_t pend_line;
  int has_pend, eof, any;
  SlemRankShard shard;   /* the shard line, if any (shard.count > 0) */
  SlemError deferred;    /* a bad line after a query's lines: reported on the next call */
};

void slem_rankreader_free(SlemRankReader *self) {
  if (!self) return;
  slem_lines_free(self->lines);
  slem_strmap_free(self->qmap);
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
  if (fmt < SLEM_RANK_AUTO || fmt > SLEM_RANK_JSONL) {
    slem_rankreader_free(r);
    return slem_error(err, SLEM_EINVAL, "unknown ranking format %d", (int)fmt);
  }
  st = slem_lines_open(&r->lines, path, err);
  if (st) {
    slem_rankreader_free(r);
    return st;
  }
  r->fmt = fmt;
  *self = r;
  return SLEM_OK;
}

SlemRankFormat slem_rankreader_format(const SlemRankReader *self) { return self->fmt; }
const SlemRankShard *slem_rankreader_shard(const SlemRankReader *self) {
  return self->shard.count > 0 ? &self->shard : NULL;
}

/* A shard line (the first line of a file that slem-match --shard wrote): parsed into
 * r->shard. Returns 1 when line is one, 0 when it is not, -1 with err set when it is a bad
 * one. */
static int shard_line(SlemRankReader *r, const char *line, SlemError *err) {
  if (strncmp(line, shard_head, sizeof shard_head - 1) != 0 || r->fmt == SLEM_RANK_TSV ||
      r->fmt == SLEM_RANK_TREC)
    return 0;
  if (r->fmt == SLEM_RANK_AUTO) r->fmt = SLEM_RANK_JSONL;
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
  if (r->fmt != SLEM_RANK_JSONL || strncmp(line, shard_tail, sizeof shard_tail - 1) != 0) return 0;
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
const char *slem_rankreader_name(const SlemRankReader *self) { return slem_lines_name(self->lines); }
size_t slem_rankreader_queries(const SlemRankReader *self) { return slem_strmap_count(self->qmap); }
int slem_rankreader_unterminated(const SlemRankReader *self) {
  return self->eof && slem_lines_unterminated(self->lines);
}
uint64_t slem_rankreader_line(const SlemRankReader *self) { return slem_lines_number(self->lines); }

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
static int begin(SlemRankReader *r, const char *q, size_t len, uint64_t line, SlemError *err) {
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
static int add(SlemRankReader *r, const char *id, long rank, double score, const char *stext,
               int64_t row, const char *tag, uint64_t line, SlemError *err) {
  size_t i = r->n;
  int dup;
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 128;
    SlemRankEntry *e = realloc(r->e, cap * sizeof *e);
    Offs *o;
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
  if (dup)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": id '%s' appears twice for query '%s'",
                      slem_rankreader_name(r), line, id, r->arena + r->qoff);
  return SLEM_OK;
}

/* Makes the entries' pointers from the arena offsets and hands out the query. */
static void finish(SlemRankReader *r, const SlemRankQuery **q) {
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

/* A whole number in [lo, 2^53]. */
static int whole(const cJSON *x, double lo) {
  return cJSON_IsNumber(x) && x->valuedouble >= lo && x->valuedouble <= 9007199254740992.0 &&
         x->valuedouble == floor(x->valuedouble);
}

/* One jsonl line: one query. */
static int read_jsonl(SlemRankReader *r, const char *line, const SlemRankQuery **q, SlemError *err) {
  uint64_t ln = slem_lines_number(r->lines);
  const char *name = slem_rankreader_name(r);
  cJSON *o = cJSON_Parse(line), *qs, *res, *h;
  long pos = 0;
  int st = SLEM_OK;
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": not a JSON object", name, ln);
  }
  qs = cJSON_GetObjectItemCaseSensitive(o, "query");
  res = cJSON_GetObjectItemCaseSensitive(o, "results");
  if (!cJSON_IsString(qs) || !cJSON_IsArray(res)) {
    cJSON_Delete(o);
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": needs a string \"query\" and an "
                      "array \"results\"", name, ln);
  }
  st = begin(r, qs->valuestring, strlen(qs->valuestring), ln, err);
  if (st) goto done;
  cJSON_ArrayForEach(h, res) {
    cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "id");
    cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "score");
    cJSON *rk = cJSON_GetObjectItemCaseSensitive(h, "rank");
    cJSON *row = cJSON_GetObjectItemCaseSensitive(h, "row");
    pos++;
    if (!cJSON_IsString(id) || !cJSON_IsNumber(sc) || (rk && !cJSON_IsNumber(rk))) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": result %ld needs a string \"id\" "
                      "and a number \"score\"", name, ln, pos);
      goto done;
    }
    if ((rk && !whole(rk, 1)) || !isfinite(sc->valuedouble) || (row && !whole(row, 0))) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": result %ld: %s", name, ln, pos,
                      rk && !whole(rk, 1) ? "\"rank\" is not a positive whole number"
                      : !isfinite(sc->valuedouble) ? "\"score\" is not a finite number"
                                                   : "\"row\" is not a whole number >= 0");
      goto done;
    }
    st = add(r, id->valuestring, rk ? (long)rk->valuedouble : pos, sc->valuedouble, NULL,
             row ? (int64_t)row->valuedouble : -1, NULL, ln, err);
    if (st) goto done;
  }
  finish(r, q);
done:
  cJSON_Delete(o);
  return st;
}

int slem_rankreader_next(SlemRankReader *self, const SlemRankQuery **q, SlemError *err) {
  SlemRankReader *r = self;
  const char *name = slem_rankreader_name(r);
  int st, open = 0;
  *q = NULL;
  if (r->deferred.status) {
    if (err) *err = r->deferred;
    return r->deferred.status;
  }
  if (r->has_pend) {
    const char *pq = r->pend, *pid = pq + strlen(pq) + 1, *ps = pid + strlen(pid) + 1;
    const char *pt = ps + strlen(ps) + 1;
    r->has_pend = 0;
    if ((st = begin(r, pq, strlen(pq), r->pend_line, err)) != SLEM_OK ||
        (st = add(r, pid, r->pend_rank, r->pend_score, ps, -1, *pt ? pt : NULL, r->pend_line,
                  err)) != SLEM_OK)
      return st;
    open = 1;
  }
  while (!r->eof) {
    char *line, *f[8];
    size_t len, nf;
    uint64_t ln;
    long rank = 0;
    double score = 0;
    int tsv;
    size_t want, irank, iscore;
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
    if (r->fmt == SLEM_RANK_AUTO) {
      if (line[strspn(line, " \t")] == '{') r->fmt = SLEM_RANK_JSONL;
      else if (strchr(line, '\t') && !strchr(line, ' ')) r->fmt = SLEM_RANK_TSV;
      else r->fmt = SLEM_RANK_TREC;
    }
    if (r->fmt == SLEM_RANK_JSONL) {
      int sh = shard_end_line(r, line, err);
      if (sh < 0) return SLEM_EFORMAT;
      if (sh > 0) continue;
      if (r->shard.has_end)
        return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": a line after the shard's end "
                          "line", name, ln);
      return read_jsonl(r, line, q, err);
    }
    /* tsv: query rank id score, tabs; trec: qid Q0 docno rank score tag, white space */
    tsv = r->fmt == SLEM_RANK_TSV;
    want = tsv ? 4 : 6, irank = tsv ? 1 : 3, iscore = tsv ? 3 : 4;
    nf = tsv ? slem_split(line, "\t", 0, f, 8) : slem_split(line, " \t", 1, f, 8);
    if (nf != want) {
      st = slem_error(&r->deferred, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected %zu (%s)",
                        name, ln, nf, want,
                        tsv ? "query, rank, id, score, separated by tabs"
                            : "qid Q0 docno rank score tag");
    } else if (parse_rank(f[irank], &rank) != 0) {
      st = slem_error(&r->deferred, SLEM_EFORMAT, "%s: line %" PRIu64 ": rank '%s' is not a "
                      "positive whole number", name, ln, f[irank]);
    } else if (parse_score(f[iscore], &score) != 0) {
      st = slem_error(&r->deferred, SLEM_EFORMAT, "%s: line %" PRIu64 ": score '%s' is not a "
                      "number", name, ln, f[iscore]);
    }
    if (st) {
      /* hand out the lines before it first, so that errors come in line order */
      if (open) break;
      if (err) *err = r->deferred;
      return st;
    }
    if (open && strcmp(f[0], r->arena + r->qoff) != 0) {
      /* the next query's first line: kept for the next call */
      const char *tag = tsv ? "" : f[5];
      size_t lq = strlen(f[0]) + 1, li = strlen(f[2]) + 1, ls = strlen(f[iscore]) + 1;
      size_t need = lq + li + ls + strlen(tag) + 1;
      if (need > r->pend_cap) {
        char *p = realloc(r->pend, need);
        if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
        r->pend = p;
        r->pend_cap = need;
      }
      memcpy(r->pend, f[0], lq);
      memcpy(r->pend + lq, f[2], li);
      memcpy(r->pend + lq + li, f[iscore], ls);
      memcpy(r->pend + lq + li + ls, tag, strlen(tag) + 1);
      r->pend_rank = rank;
      r->pend_score = score;
      r->pend_line = ln;
      r->has_pend = 1;
      break;
    }
    if (!open) {
      if ((st = begin(r, f[0], strlen(f[0]), ln, err)) != SLEM_OK) return st;
      open = 1;
    }
    st = add(r, f[2], rank, score, f[iscore], -1, tsv ? NULL : f[5], ln, err);
    if (st) return st;
  }
  if (open) {
    finish(r, q);
    return SLEM_OK;
  }
  if (!r->any) return slem_error(err, SLEM_EFORMAT, "%s: no rankings (empty file)", name);
  return SLEM_OK;
}

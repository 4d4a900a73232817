/* The shard lines of slem-match --shard's rankings (rankings.h): their fields, written and
 * parsed, and a group's descriptors' arithmetics. */
#define _POSIX_C_SOURCE 200809L
#include "rankings.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io.h"
#include "rankfmt.h"

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

int slem_rankshard_is_line(const char *line, int end) {
  const char *head = end ? shard_tail : shard_head;
  return strncmp(line, head, strlen(head)) == 0;
}

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

int slem_rankshard_parse(SlemRankShard *m, const char *line, int end, const char *name,
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
  if ((st = slem_rankshard_parse(m, line, 1, path, "the last line", err)) != SLEM_OK) return st;
  *found = 1;
  return SLEM_OK;
}

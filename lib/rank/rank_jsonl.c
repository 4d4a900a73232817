/* The jsonl rankings (rankings.h): one query a line, {"query":"q","results":[{"rank":1,
 * "id":"d","row":17,"score":0.93}]}; the only format that carries slem-match --shard's
 * first and end lines (their fields: the table of rankshard.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "mergefmt.h"
#include "rankfmt.h"

static int sniff(const char *line) { return line[strspn(line, " \t")] == '{' ? 3 : 0; }

/* One query's line through cJSON (its strings escaped by it): a malloc'ed text without
 * the newline, or NULL when out of memory. */
static char *json_line(const char *qid, const SlemRankEntry *e, size_t n) {
  cJSON *obj = cJSON_CreateObject(), *arr;
  char *text;
  if (!obj || !cJSON_AddStringToObject(obj, "query", qid) ||
      !(arr = cJSON_AddArrayToObject(obj, "results")))
    goto nomem;
  for (size_t i = 0; i < n; i++) {
    cJSON *h = cJSON_CreateObject(), *s;
    if (!h) goto nomem;
    cJSON_AddItemToArray(arr, h);
    if (!cJSON_AddNumberToObject(h, "rank", (double)(i + 1)) ||
        !cJSON_AddStringToObject(h, "id", e[i].id))
      goto nomem;
    if (e[i].row >= 0 && !cJSON_AddNumberToObject(h, "row", (double)e[i].row)) goto nomem;
    if (!(s = cJSON_CreateRaw(e[i].score_text))) goto nomem;
    cJSON_AddItemToObject(h, "score", s);
  }
  text = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  return text;
nomem:
  cJSON_Delete(obj);
  return NULL;
}

/* A string that cJSON prints as it is, between quotes: no byte below 0x20, no '"' or '\\'. */
static int json_plain(const char *s, size_t *len) {
  const char *p = s;
  for (; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\') return 0;
  *len = (size_t)(p - s);
  return 1;
}

/* The line of cJSON_PrintUnformatted() written by hand, where its bytes are plain: strings
 * that need no escape, numbers it prints with "%d" (below 2^31); else through cJSON. */
static int format(const SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                  SlemTextBuf *buf, SlemError *err) {
  size_t lq, len0 = buf->len;
  char *p;
  (void)w;
  if (!json_plain(qid, &lq) || n >= 2147483647u) goto slow;
  if (!(p = slem_textbuf_room(buf, lq + 32))) goto nomem;
  memcpy(p, "{\"query\":\"", 10);
  memcpy(p + 10, qid, lq);
  p += 10 + lq;
  memcpy(p, "\",\"results\":[", 13);
  buf->len = (size_t)(p + 13 - buf->text);
  for (size_t i = 0; i < n; i++) {
    size_t ld, ls = strlen(e[i].score_text);
    if (!json_plain(e[i].id, &ld) || e[i].row >= 2147483647) {
      buf->len = len0;
      goto slow;
    }
    if (!(p = slem_textbuf_room(buf, ld + ls + 96))) goto nomem;
    if (i) *p++ = ',';
    memcpy(p, "{\"rank\":", 8);
    p = slem_fmt_u64(p + 8, (uint64_t)i + 1);
    memcpy(p, ",\"id\":\"", 7);
    memcpy(p + 7, e[i].id, ld);
    p += 7 + ld;
    *p++ = '"';
    if (e[i].row >= 0) {
      memcpy(p, ",\"row\":", 7);
      p = slem_fmt_u64(p + 7, (uint64_t)e[i].row);
    }
    memcpy(p, ",\"score\":", 9);
    memcpy(p + 9, e[i].score_text, ls);
    p += 9 + ls;
    *p++ = '}';
    buf->len = (size_t)(p - buf->text);
  }
  if (slem_textbuf_put(buf, "]}\n", 3) != 0) goto nomem;
  return SLEM_OK;
slow: {
  char *text = json_line(qid, e, n);
  int bad = !text || slem_textbuf_put(buf, text, strlen(text)) != 0 ||
            slem_textbuf_put(buf, "\n", 1) != 0;
  free(text);
  if (!bad) return SLEM_OK;
}
nomem:
  buf->len = len0;
  return slem_error(err, SLEM_ENOMEM, "out of memory");
}

/* A whole number in [lo, 2^53]. */
static int whole(const cJSON *x, double lo) {
  return cJSON_IsNumber(x) && x->valuedouble >= lo && x->valuedouble <= 9007199254740992.0 &&
         x->valuedouble == floor(x->valuedouble);
}

/* The first key that object o holds twice, or NULL: cJSON keeps both, and a lookup takes
 * the first, so a line saying two things would be read as the first silently. */
static const char *key_twice(const cJSON *o) {
  for (const cJSON *a = o->child; a; a = a->next)
    for (const cJSON *b = a->next; b; b = b->next)
      if (a->string && b->string && strcmp(a->string, b->string) == 0) return a->string;
  return NULL;
}

/* One jsonl line: one query. */
static int read_query(SlemRankReader *r, const char *line, uint64_t ln, const SlemRankQuery **q,
                      SlemError *err) {
  const char *name = slem_rankreader_name(r);
  cJSON *o = cJSON_Parse(line), *qs, *res, *h;
  const char *dup;
  long pos = 0;
  int st = SLEM_OK;
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": not a JSON object", name, ln);
  }
  if ((dup = key_twice(o)) != NULL) {
    st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": the key \"%s\" twice", name, ln,
                    dup);
    cJSON_Delete(o);
    return st;
  }
  qs = cJSON_GetObjectItemCaseSensitive(o, "query");
  res = cJSON_GetObjectItemCaseSensitive(o, "results");
  if (!cJSON_IsString(qs) || !cJSON_IsArray(res)) {
    cJSON_Delete(o);
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": needs a string \"query\" and an "
                      "array \"results\"", name, ln);
  }
  st = slem_rankreader_begin(r, qs->valuestring, strlen(qs->valuestring), ln, err);
  if (st) goto done;
  cJSON_ArrayForEach(h, res) {
    cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "id");
    cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "score");
    cJSON *rk = cJSON_GetObjectItemCaseSensitive(h, "rank");
    cJSON *row = cJSON_GetObjectItemCaseSensitive(h, "row");
    pos++;
    if (cJSON_IsObject(h) && (dup = key_twice(h)) != NULL) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": result %ld: the key \"%s\" twice",
                      name, ln, pos, dup);
      goto done;
    }
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
    st = slem_rankreader_add(r, id->valuestring, rk ? (long)rk->valuedouble : pos, sc->valuedouble, NULL,
             row ? (int64_t)row->valuedouble : -1, NULL, ln, err);
    if (st) goto done;
  }
  slem_rankreader_finish(r, q);
done:
  cJSON_Delete(o);
  return st;
}

/* Reads shard s's next query for slem-merge's fast path (mergefmt.h), a line {"query":"Q","results":[{"rank":1,"id":"D","row":R,"score":S},
 * ...]} as slem's writer prints it. */
static int fast_read(SlemFast *m, size_t s, const char **q, size_t *ql, const char *q0, size_t ql0) {
  SlemFastShard *sh = m->s + s;
  const char *p = sh->p, *nl, *t;
  sh->n = 0;
  if (p == sh->end) return 1;
  if (!(nl = memchr(p, '\n', (size_t)(sh->end - p)))) return -1;
  if (SLEM_FAST_LIT(&p, nl, "{\"query\":\"") != 0 || !(t = memchr(p, '"', (size_t)(nl - p)))) return -1;
  *q = p;
  *ql = (size_t)(t - p);
  if (*ql == 0 || *ql > SLEM_FAST_MAXTOK || !slem_fast_plain_all(p, *ql)) return -1;
  if (q0 && (*ql != ql0 || !slem_fast_same(p, q0, ql0))) return -1;
  p = t;
  if (SLEM_FAST_LIT(&p, nl, "\",\"results\":[") != 0) return -1;
  for (;;) {
    SlemFastRes *r;
    uint32_t rank;
    if (SLEM_FAST_LIT(&p, nl, "{\"rank\":") != 0 || !(t = memchr(p, ',', (size_t)(nl - p)))) return -1;
    if (slem_mergefast_push(sh, &r) != 0) return -1;
    if (slem_mergefast_u31(p, (size_t)(t - p), &rank) != 0 || rank != sh->n) return -1;
    p = t;
    if (SLEM_FAST_LIT(&p, nl, ",\"id\":\"") != 0 || !(t = memchr(p, '"', (size_t)(nl - p)))) return -1;
    r->id = p;
    if ((size_t)(t - p) > SLEM_FAST_MAXTOK || t == p || !slem_fast_plain_all(p, (size_t)(t - p))) return -1;
    r->idlen = (uint16_t)(t - p);
    p = t;
    if (SLEM_FAST_LIT(&p, nl, "\",\"row\":") != 0 || !(t = memchr(p, ',', (size_t)(nl - p)))) return -1;
    if (slem_mergefast_u31(p, (size_t)(t - p), &r->row) != 0) return -1;
    p = t;
    if (SLEM_FAST_LIT(&p, nl, ",\"score\":") != 0 || !(t = memchr(p, '}', (size_t)(nl - p)))) return -1;
    r->st = p;
    /* the length checked whole before it is kept in 16 bits: a score of 65 536 bytes and
     * more was otherwise taken for its first bytes */
    if (slem_mergefast_score(r->st, (size_t)(t - p), &r->score, &r->canon) != 0 || !r->canon)
      return -1;
    r->stlen = (uint16_t)(t - p);
    if (sh->n > 1 && !slem_fast_before(r - 1, r)) return -1;
    if (slem_mergefast_take(m, s, r) != 0) return -1;
    p = t + 1;
    if (p < nl && *p == ',') {
      p++;
      continue;
    }
    break;
  }
  if (SLEM_FAST_LIT(&p, nl, "]}") != 0 || p != nl) return -1;
  sh->p = nl + 1;
  return 0;
}

/* A shard of slem-match's jsonl: its first line starts with '{'. */
static int fast_first_line(const char *l, size_t len) { return len && l[0] == '{'; }

static char *fast_write(char *o, const char *q, size_t ql, const SlemFastRes *const *hs,
                        size_t first, size_t c, size_t k) {
  if (first == 0) {
    memcpy(o, "{\"query\":\"", 10);
    memcpy(o + 10, q, ql);
    o += 10 + ql;
    memcpy(o, "\",\"results\":[", 13);
    o += 13;
  }
  for (size_t i = first; i < first + c; i++) {
    const SlemFastRes *h = hs[i];
    if (i) *o++ = ',';
    memcpy(o, "{\"rank\":", 8);
    o = slem_fast_put_u32(o + 8, (uint32_t)i + 1);
    memcpy(o, ",\"id\":\"", 7);
    memcpy(o + 7, h->id, h->idlen);
    o += 7 + h->idlen;
    memcpy(o, "\",\"row\":", 8);
    o = slem_fast_put_u32(o + 8, h->row);
    memcpy(o, ",\"score\":", 9);
    memcpy(o + 9, h->st, h->stlen);
    o += 9 + h->stlen;
    *o++ = '}';
  }
  if (first + c == k) {
    memcpy(o, "]}\n", 3);
    o += 3;
  }
  return o;
}

static const SlemRankFastOps fast = {
    .ids = 1,
    .first_line = fast_first_line,
    .read = fast_read,
    .write = fast_write,
};

const SlemRankFormatOps slem_rank_jsonl = {
    .name = "jsonl",
    .extension = ".jsonl",
    .shard_lines = 1,
    .sniff = sniff,
    .format = format,
    .read_query = read_query,
    .fast = &fast,
};

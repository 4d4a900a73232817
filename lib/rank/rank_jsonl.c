/* The jsonl rankings (rankings.h): one query a line, {"query":"q","results":[{"rank":1,
 * "id":"d","row":17,"score":0.93}]}; the only format that carries slem-match --shard's
 * first and end lines (their fields: the table of rankings.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankfmt.h"

static int sniff(const char *line) { return line[strspn(line, " \t")] == '{' ? 3 : 0; }

static int write_entries(SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                         SlemError *err) {
  cJSON *obj = cJSON_CreateObject(), *arr;
  FILE *fp = slem_out_file(w->out);
  char *text;
  int ok;
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
  if (!text) return slem_error(err, SLEM_ENOMEM, "out of memory");
  ok = fputs(text, fp) >= 0 && putc('\n', fp) != EOF;
  free(text);
  if (!ok) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
  return SLEM_OK;
nomem:
  cJSON_Delete(obj);
  return slem_error(err, SLEM_ENOMEM, "out of memory");
}

/* A whole number in [lo, 2^53]. */
static int whole(const cJSON *x, double lo) {
  return cJSON_IsNumber(x) && x->valuedouble >= lo && x->valuedouble <= 9007199254740992.0 &&
         x->valuedouble == floor(x->valuedouble);
}

/* One jsonl line: one query. */
static int read_query(SlemRankReader *r, const char *line, uint64_t ln, const SlemRankQuery **q,
                      SlemError *err) {
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
  st = slem_rankreader_begin(r, qs->valuestring, strlen(qs->valuestring), ln, err);
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
    st = slem_rankreader_add(r, id->valuestring, rk ? (long)rk->valuedouble : pos, sc->valuedouble, NULL,
             row ? (int64_t)row->valuedouble : -1, NULL, ln, err);
    if (st) goto done;
  }
  slem_rankreader_finish(r, q);
done:
  cJSON_Delete(o);
  return st;
}

const SlemRankFormatOps slem_rank_jsonl = {
    .name = "jsonl",
    .extension = ".jsonl",
    .shard_lines = 1,
    .sniff = sniff,
    .write_entries = write_entries,
    .read_query = read_query,
};

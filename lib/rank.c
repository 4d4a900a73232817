#include "rank.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "io.h"

struct SlemRankWriter {
  SlemOut *out;
  SlemRankFormat fmt;
  const SlemIds *qids, *dbids;
  const char *tag;
};

int slem_rankformat_parse(SlemRankFormat *fmt, const char *name) {
  if (strcmp(name, "tsv") == 0) *fmt = SLEM_RANK_TSV;
  else if (strcmp(name, "trec") == 0) *fmt = SLEM_RANK_TREC;
  else if (strcmp(name, "jsonl") == 0 || strcmp(name, "json") == 0) *fmt = SLEM_RANK_JSONL;
  else return SLEM_EINVAL;
  return SLEM_OK;
}

int slem_rankwriter_open(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                         const SlemIds *qids, const SlemIds *dbids, const char *tag,
                         SlemError *err) {
  SlemRankWriter *w = calloc(1, sizeof *w);
  int st;
  *self = NULL;
  if (!w) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_out_open(&w->out, path, err);
  if (st) {
    free(w);
    return st;
  }
  w->fmt = fmt;
  w->qids = qids;
  w->dbids = dbids;
  w->tag = tag ? tag : "slem";
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

int slem_rankwriter_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err) {
  SlemRankWriter *w = self;
  FILE *fp = slem_out_file(w->out);
  char qbuf[24], dbuf[24], sbuf[32];
  const char *qid = id_of(w->qids, query, qbuf, sizeof qbuf);
  cJSON *obj = NULL, *arr = NULL;
  if (!qid)
    return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but there are more queries",
                      slem_ids_name(w->qids), slem_ids_count(w->qids));
  if (w->fmt == SLEM_RANK_JSONL) {
    obj = cJSON_CreateObject();
    if (!obj || !cJSON_AddStringToObject(obj, "query", qid)) goto nomem;
    arr = cJSON_AddArrayToObject(obj, "results");
    if (!arr) goto nomem;
  }
  for (size_t r = 0; r < n; r++) {
    const char *did = id_of(w->dbids, hits[r].row, dbuf, sizeof dbuf);
    int ok = 1;
    if (!did) {
      cJSON_Delete(obj);
      return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but the database has more rows",
                        slem_ids_name(w->dbids), slem_ids_count(w->dbids));
    }
    slem_fmt_g9(sbuf, hits[r].score);
    switch (w->fmt) {
    case SLEM_RANK_TSV: {
      /* by hand: fprintf per line was most of the writing time */
      char line[256];
      size_t lq = strlen(qid), ld = strlen(did), ls = strlen(sbuf), pos;
      int lr;
      char rbuf[24];
      lr = snprintf(rbuf, sizeof rbuf, "%zu", r + 1);
      if (lq + ld + ls + (size_t)lr + 4 > sizeof line) {
        ok = fprintf(fp, "%s\t%s\t%s\t%s\n", qid, rbuf, did, sbuf) > 0;
        break;
      }
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
      ok = fwrite(line, 1, pos, fp) == pos;
      break;
    }
    case SLEM_RANK_TREC:
      ok = fprintf(fp, "%s Q0 %s %zu %s %s\n", qid, did, r + 1, sbuf, w->tag) > 0;
      break;
    default: {
      cJSON *h = cJSON_CreateObject();
      if (!h) goto nomem;
      cJSON_AddItemToArray(arr, h);
      cJSON_AddNumberToObject(h, "rank", (double)(r + 1));
      cJSON_AddStringToObject(h, "id", did);
      cJSON_AddNumberToObject(h, "row", (double)hits[r].row);
      cJSON_AddItemToObject(h, "score", cJSON_CreateRaw(sbuf));
      break;
    }
    }
    if (!ok) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
  }
  if (obj) {
    char *text = cJSON_PrintUnformatted(obj);
    int ok;
    cJSON_Delete(obj);
    if (!text) return slem_error(err, SLEM_ENOMEM, "out of memory");
    ok = fputs(text, fp) >= 0 && putc('\n', fp) != EOF;
    free(text);
    if (!ok) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
  }
  return SLEM_OK;
nomem:
  cJSON_Delete(obj);
  return slem_error(err, SLEM_ENOMEM, "out of memory");
}

int slem_rankwriter_close(SlemRankWriter *self, SlemError *err) {
  int st = slem_out_commit(self->out, err);
  free(self);
  return st;
}

void slem_rankwriter_abort(SlemRankWriter *self) {
  if (!self) return;
  slem_out_abort(self->out);
  free(self);
}

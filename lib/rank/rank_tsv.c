/* The tsv rankings (rankings.h): "query<TAB>rank<TAB>id<TAB>score", one result a line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rankfmt.h"

static int sniff(const char *line) { return strchr(line, '\t') && !strchr(line, ' ') ? 2 : 0; }

static int write_entries(SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                         SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  size_t lq = strlen(qid);
  for (size_t i = 0; i < n; i++) {
    /* by hand: fprintf per line was most of the writing time */
    char line[256], rbuf[24];
    const char *did = e[i].id, *sbuf = e[i].score_text;
    size_t ld = strlen(did), ls = strlen(sbuf), pos;
    int lr = snprintf(rbuf, sizeof rbuf, "%zu", i + 1), ok;
    if (lq + ld + ls + (size_t)lr + 4 > sizeof line) {
      ok = fprintf(fp, "%s\t%s\t%s\t%s\n", qid, rbuf, did, sbuf) > 0;
    } else {
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
    }
    if (!ok) return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
  }
  return SLEM_OK;
}

static const SlemRankFields fields = {"\t", 0, 4, 2, 1, 3, -1,
                                      "query, rank, id, score, separated by tabs"};

static int read_line(SlemRankReader *r, char *line, uint64_t ln, SlemRankLine *out,
                     SlemError *err) {
  return slem_rankline_split(r, line, ln, &fields, out, err);
}

const SlemRankFormatOps slem_rank_tsv = {
    .name = "tsv",
    .extension = ".tsv",
    .sniff = sniff,
    .write_entries = write_entries,
    .read_line = read_line,
};

/* The trec rankings (rankings.h): a TREC run, "qid Q0 docno rank score tag", white space
 * separated, one result a line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rankfmt.h"

static int sniff(const char *line) {
  (void)line;
  return 1; /* what is neither jsonl nor tsv */
}

static int format(const SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                  SlemTextBuf *buf, SlemError *err) {
  size_t lq = strlen(qid), lt = strlen(w->tag);
  for (size_t i = 0; i < n; i++) {
    size_t ld = strlen(e[i].id), ls = strlen(e[i].score_text), room = lq + ld + ls + lt + 24 + 9;
    char *p = slem_textbuf_room(buf, room);
    int len;
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    len = snprintf(p, room, "%s Q0 %s %zu %s %s\n", qid, e[i].id, i + 1, e[i].score_text, w->tag);
    if (len < 0 || (size_t)len >= room) return slem_error(err, SLEM_ENOMEM, "out of memory");
    buf->len += (size_t)len;
  }
  return SLEM_OK;
}

static const SlemRankFields fields = {" \t", 1, 6, 2, 3, 4, 5, "qid Q0 docno rank score tag"};

static int read_line(SlemRankReader *r, char *line, uint64_t ln, SlemRankLine *out,
                     SlemError *err) {
  return slem_rankline_split(r, line, ln, &fields, out, err);
}

const SlemRankFormatOps slem_rank_trec = {
    .name = "trec",
    .extension = ".trec",
    .comment = '#',
    .sniff = sniff,
    .format = format,
    .read_line = read_line,
};

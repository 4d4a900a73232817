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

static int write_entries(SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                         SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  for (size_t i = 0; i < n; i++)
    if (fprintf(fp, "%s Q0 %s %zu %s %s\n", qid, e[i].id, i + 1, e[i].score_text, w->tag) <= 0)
      return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
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
    .sniff = sniff,
    .write_entries = write_entries,
    .read_line = read_line,
};

/* What the ranking formats share (rankfmt.h): the split of a line of one result (tsv,
 * trec). The table of formats is rankings.c's; the writer and the reader (with the query
 * that the readers of the formats build) are rankwriter.c's and rankreader.c's. */
#include "rankfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


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

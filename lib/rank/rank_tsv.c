/* The tsv rankings (rankings.h): "query<TAB>rank<TAB>id<TAB>score", one result a line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "mergefmt.h"
#include "rankfmt.h"

/* Tabs and no space, but not the six fields of a TREC run written with tabs
 * ("q\tQ0\tdoc\t1\t0.9\ttag", which was refused as "6 fields, expected 4"). */
static int sniff(const char *line) {
  size_t tabs = 0;
  for (const char *p = line; (p = strchr(p, '\t')) != NULL; p++) tabs++;
  return tabs > 0 && tabs != 5 && !strchr(line, ' ') ? 2 : 0;
}

static int format(const SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                  SlemTextBuf *buf, SlemError *err) {
  size_t lq = strlen(qid);
  (void)w;
  for (size_t i = 0; i < n; i++) {
    /* by hand: fprintf per line was most of the writing time */
    const char *did = e[i].id, *sbuf = e[i].score_text;
    size_t ld = strlen(did), ls = strlen(sbuf);
    char *p = slem_textbuf_room(buf, lq + ld + ls + 24 + 4);
    if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
    memcpy(p, qid, lq);
    p += lq;
    *p++ = '\t';
    p = slem_fmt_u64(p, (uint64_t)i + 1);
    *p++ = '\t';
    memcpy(p, did, ld);
    p += ld;
    *p++ = '\t';
    memcpy(p, sbuf, ls);
    p += ls;
    *p++ = '\n';
    buf->len = (size_t)(p - buf->text);
  }
  return SLEM_OK;
}

static const SlemRankFields fields = {"\t", 0, 4, 2, 1, 3, -1,
                                      "query, rank, id, score, separated by tabs"};

static int read_line(SlemRankReader *r, char *line, uint64_t ln, SlemRankLine *out,
                     SlemError *err) {
  return slem_rankline_split(r, line, ln, &fields, out, err);
}

/* Reads shard s's next query (tsv: its lines) into sh->r; *q, *ql: its name, which must be
 * q0 when q0 is given. Returns 1 at the end of the file, 0 with a query, -1 to give up. */
static int fast_read(SlemFast *m, size_t s, const char **q, size_t *ql, const char *q0, size_t ql0) {
  SlemFastShard *sh = m->s + s;
  sh->n = 0;
  if (sh->p == sh->end) return 1;
  for (;;) {
    const char *l = sh->p, *nl, *t1, *t2, *t3;
    SlemFastRes *r;
    uint32_t rank;
    if (l == sh->end) break;
    nl = memchr(l, '\n', (size_t)(sh->end - l));
    if (!nl || !(t1 = memchr(l, '\t', (size_t)(nl - l)))) return -1;
    if (sh->n == 0) {
      *q = l;
      *ql = (size_t)(t1 - l);
      if (*ql == 0 || *ql > SLEM_FAST_MAXTOK || !slem_fast_plain_all(l, *ql)) return -1;
      if (q0 && (*ql != ql0 || !slem_fast_same(l, q0, ql0))) return -1;
    } else if ((size_t)(t1 - l) != *ql || !slem_fast_same(l, *q, *ql)) {
      break;
    }
    if (!(t2 = memchr(t1 + 1, '\t', (size_t)(nl - t1 - 1))) ||
        !(t3 = memchr(t2 + 1, '\t', (size_t)(nl - t2 - 1))))
      return -1;
    if (slem_mergefast_push(sh, &r) != 0) return -1;
    if (slem_mergefast_u31(t1 + 1, (size_t)(t2 - t1 - 1), &rank) != 0 || rank != sh->n) return -1;
    /* the lengths checked whole before they are kept in 16 bits (a field of 65 536 bytes
     * and more was otherwise taken for its first bytes) */
    r->id = t2 + 1;
    if (slem_mergefast_u31(r->id, (size_t)(t3 - t2 - 1), &r->row) != 0) return -1;
    r->idlen = (uint16_t)(t3 - t2 - 1);
    r->st = t3 + 1;
    if (slem_mergefast_score(r->st, (size_t)(nl - t3 - 1), &r->score, &r->canon) != 0 || !r->canon)
      return -1;
    r->stlen = (uint16_t)(nl - t3 - 1);
    if (sh->n > 1 && !slem_fast_before(r - 1, r)) return -1;
    if (slem_mergefast_take(m, s, r) != 0) return -1;
    sh->p = nl + 1;
  }
  return 0;
}

/* A shard of slem-match's tsv: tabs and no space on its first line. */
static int fast_first_line(const char *l, size_t len) {
  return len && l[0] != '{' && memchr(l, '\t', len) && !memchr(l, ' ', len);
}

static char *fast_write(char *o, const char *q, size_t ql, const SlemFastRes *const *hs,
                        size_t first, size_t c, size_t k) {
  (void)k;
  for (size_t i = first; i < first + c; i++) {
    const SlemFastRes *h = hs[i];
    memcpy(o, q, ql);
    o += ql;
    *o++ = '\t';
    o = slem_fast_put_u32(o, (uint32_t)i + 1);
    *o++ = '\t';
    memcpy(o, h->id, h->idlen);
    o += h->idlen;
    *o++ = '\t';
    memcpy(o, h->st, h->stlen);
    o += h->stlen;
    *o++ = '\n';
  }
  return o;
}

static const SlemRankFastOps fast = {
    .first_line = fast_first_line,
    .read = fast_read,
    .write = fast_write,
};

const SlemRankFormatOps slem_rank_tsv = {
    .name = "tsv",
    .extension = ".tsv",
    .sniff = sniff,
    .format = format,
    .read_line = read_line,
    .fast = &fast,
};

/* The formats' side of slem-merge's fast path (mergefast.h): what a ranking format of
 * rankfmt.h fills to be read and written there (SlemRankFormatOps.fast; NULL where it has
 * none, such as trec), and the pieces of mergefast.c they share. Private to
 * lib/rank/mergefast.c and lib/rank/rank_*.c. A format reads a shard from its memory map,
 * checks each result through slem_mergefast_push() and slem_mergefast_take(), and gives up
 * (-1) at anything it does not recognise: the general merge then decides. */
#ifndef SLEM_MERGEFMT_H
#define SLEM_MERGEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "merge.h"
#include "strmap.h"

#define SLEM_FAST_MAXTOK 4096          /* longest query or id taken */
#define SLEM_FAST_MAXROWS (1u << 27)   /* rows beyond: the general merge */

/* One result, its strings inside the map. */
typedef struct SlemFastRes {
  float score;
  uint32_t row;
  const char *id, *st;  /* the id; the score's text */
  uint16_t idlen, stlen; /* stored once checked whole: at most SLEM_FAST_MAXTOK, 40 */
  int canon;            /* st is the %.9g of score */
} SlemFastRes;

typedef struct SlemFastShard {
  const char *base, *p, *end;
  uint64_t lo, hi;      /* the rows it may return */
  size_t len;
  SlemFastRes *r;
  size_t n, cap;
  size_t at;            /* the merge's head */
} SlemFastShard;

/* What the merge knows of a database row: 8 bytes, so that the table of a database of
 * millions of rows stays in the cache (with the id beside them, 40 bytes a row, the table
 * of 500 000 rows missed the cache at every result: 5 M results/s instead of 13) */
typedef struct SlemFastRow {
  uint32_t owner;       /* shard + 1; 0: not seen */
  uint32_t stamp;       /* the query (+ 1) that last listed it */
} SlemFastRow;

/* A row's id, for a format whose ids are text of their own (SlemFast.idmode 2). */
typedef struct SlemFastRowId {
  const char *id;       /* its id, in the map */
  uint32_t idlen;
  char idb[20];         /* and a copy when it fits: the first place it was read is far
                           away in the map by the time the row comes again */
} SlemFastRowId;

typedef struct SlemFast {
  SlemFastShard *s;
  size_t n;
  SlemFastRow *rows;
  size_t nrows;
  SlemFastRowId *rid;   /* idmode 2: each row's id (nrows of them) */
  SlemStrMap *ids;      /* a format with ids: ids seen, for their being one per row */
  int idmode;           /* a format with ids: 0 until the first result, 1 when that id was
                         * its row's number (slem-match without --db-ids): then every id
                         * must be, and rows once per query make ids once per query; 2
                         * otherwise: ids checked one per row through ids and rid */
  uint32_t query;       /* queries done + 1 */
} SlemFast;

/* A byte of a query or id the fast path takes: printable, not one JSON escapes, no space
 * (a tsv shard's layout test), no tab. */
static inline int slem_fast_plain(unsigned char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; }

static inline int slem_fast_plain_all(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!slem_fast_plain((unsigned char)s[i])) return 0;
  return 1;
}

/* memcmp for the short strings of a line, inlined: libc's call was a fifth of the time. */
static inline int slem_fast_same(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* The order of topk.h: a before b. */
static inline int slem_fast_before(const SlemFastRes *a, const SlemFastRes *b) {
  return a->score > b->score || (a->score == b->score && a->row < b->row);
}

/* Appends the decimal of v. */
static inline char *slem_fast_put_u32(char *p, uint32_t v) {
  char t[10];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *p++ = t[--n];
  return p;
}

/* Matches the literal lit at *p (before end). */
static inline int slem_fast_lit(const char **p, const char *end, const char *lit, size_t n) {
  if ((size_t)(end - *p) < n || !slem_fast_same(*p, lit, n)) return -1;
  *p += n;
  return 0;
}
#define SLEM_FAST_LIT(p, end, s) slem_fast_lit(p, end, s, sizeof s - 1)

/* A whole number as slem writes it (no sign, no leading zero) below 2^31 into *v: 0, or -1
 * for anything else. */
int slem_mergefast_u31(const char *s, size_t n, uint32_t *v);
/* The score text s[0..n): *f = (float)strtod(s) and *canon = whether s is the %.9g of *f;
 * -1 when s is not a finite number as slem writes them. */
int slem_mergefast_score(const char *s, size_t n, float *f, int *canon);
/* A table of row records grown to cap entries of size bytes, zero but for the n of table
 * (then freed) copied at its start; NULL out of memory, table kept. Allocated zero rather
 * than zeroed: the pages of rows that never come are not written, when a row of 2^27 - 1
 * reaches 1 GiB of 8-byte records (5 GiB with ids of their own), which a memset wrote,
 * 5 GB in 11 s. */
void *slem_mergefast_grow(void *table, size_t n, size_t cap, size_t size);
/* One more result for shard sh (its list grows): *r. -1 out of memory. */
int slem_mergefast_push(SlemFastShard *sh, SlemFastRes **r);
/* Checks result r of shard s against the others of its query and the earlier ones (rows in
 * the shard's range, once per query, from one shard; with m->ids, one id per row). 0, or
 * -1 to give up. */
int slem_mergefast_take(SlemFast *m, size_t s, const SlemFastRes *r);

typedef struct SlemRankFastOps {
  int ids;  /* 1: the format's ids are text of their own: checked to be one per row */
  /* 1 when a text shard whose first line (len bytes, no newline) is this is read by read */
  int (*first_line)(const char *line, size_t len);
  /* Reads shard s's next query into m->s[s].r; *q, *ql: its name, which must be q0 when q0
   * is given. 1 at the end of the file, 0 with a query, -1 to give up. */
  int (*read)(SlemFast *m, size_t s, const char **q, size_t *ql, const char *q0, size_t ql0);
  /* Writes results h[first .. first + c) of query q's k results h[] at o, which has room
   * for c + 1 results of 2 SLEM_FAST_MAXTOK + 256 bytes (the query's own text included:
   * first 0 starts it, first + c == k ends it); returns the end. NULL: not written by the
   * fast path. */
  char *(*write)(char *o, const char *q, size_t ql, const SlemFastRes *const *h, size_t first,
                 size_t c, size_t k);
  /* A format of its own files: merges shards into output whole, as slem_mergefast() does
   * (SLEM_MERGEFAST_DECLINED with nothing written, SLEM_OK, or the output's error).
   * Tried when the format's sniff_path claims the first shard. NULL: none. */
  int (*merge)(const char *const *shards, size_t n, const char *output,
               const SlemMergeOpts *opts, SlemMergeStats *stats, SlemError *err);
} SlemRankFastOps;

#endif

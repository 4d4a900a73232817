/* The ranking formats' interface: what one format of rankings.h implements, and the
 * writer and reader that the formats share (the reader's query being built is
 * rankreader.c's, the split of a line rankfmt.c's). Private to lib/rank/: the table
 * (rankings.c), the writer (rankwriter.c), the reader (rankreader.c), the shard lines
 * (rankshard.c), rankfmt.c, the format members rank_*.c and slem-merge (merge.c,
 * mergefast.c): callers use rankings.h.
 *
 * A format is one file lib/rank/rank_NAME.c defining a const SlemRankFormatOps, and one line
 * in the table of rankings.c (its index is its SlemRankFormat). A text format fills
 * sniff, one of read_line/read_query and one of format/write_entries, and leaves the file
 * hooks NULL:
 * the writer then opens its output (atomic, "-" for stdout), and the reader reads its lines
 * (pipes included), groups its results by query and checks them (ids once per query). A
 * format of its own files (npy) fills the file hooks instead.
 */
#ifndef SLEM_RANKFMT_H
#define SLEM_RANKFMT_H

#include <stddef.h>
#include <stdint.h>

#include "io.h"
#include "lines.h"
#include "rankings.h"
#include "strmap.h"
#include "textbuf.h"

/* One result of a tsv/trec line, its strings inside the line. */
typedef struct SlemRankLine {
  const char *query, *id, *score_text, *tag; /* tag: NULL when the format has none */
  long rank;
  double score;
} SlemRankLine;

struct SlemRankFastOps;

typedef struct SlemRankFormatOps {
  const char *name;       /* "tsv": -F's word */
  const char *extension;  /* ".tsv": an output named so is written in this format */
  int shard_lines;        /* 1: carries slem-match --shard's first and end lines (jsonl) */
  char comment;           /* a line beginning with this byte is a comment, skipped by the
                             reader (trec: '#', as trec_eval); 0: none */
  /* How strongly the first non-blank line of a text looks like this format: the highest
   * wins (jsonl 3 on '{', tsv 2 on tabs and no space, trec 1 on anything). NULL: never
   * recognised from text (npy). */
  int (*sniff)(const char *line);
  /* 1 when path names a ranking of this format by name alone (an npy pair); NULL: no */
  int (*sniff_path)(const char *path);
  /* The files that path names (at most 2); NULL: path itself. -1 when they do not fit. */
  int (*files)(const char *path, char names[2][4096], size_t *n);

  /* writer. open: NULL for a text output (w->out opened on path); else opens the format's
   * own files (w->k is set). write_hits: NULL to write through write_entries with the ids
   * of the writer's tables. close: NULL commits w->out. */
  int (*open)(SlemRankWriter *w, const char *path, SlemError *err);
  int (*write_hits)(SlemRankWriter *w, uint64_t query, const SlemHit *hits, size_t n,
                    SlemError *err);
  /* one query's results ranked 1..n in the order given, e[i].score_text its %.9g text */
  int (*write_entries)(SlemRankWriter *w, const char *query, const SlemRankEntry *e, size_t n,
                       SlemError *err);
  /* A text format may fill format instead of write_entries: the same query's text appended
   * to buf (the bytes write_entries would write), with w only read, so that several
   * threads format ranges of queries at once, each into its own buffer, and one thread
   * writes the buffers in order (slem_rankwriter_sink()). rankwriter.c writes a query of the
   * serial path through it too. Errors: SLEM_ENOMEM (buf keeps the text of the results
   * before). NULL: the serial path alone (write_entries, write_hits). */
  int (*format)(const SlemRankWriter *w, const char *query, const SlemRankEntry *e, size_t n,
                SlemTextBuf *buf, SlemError *err);
  int (*close)(SlemRankWriter *w, SlemError *err);
  void (*abort)(SlemRankWriter *w);

  /* reader of a text format: read_line splits one line that holds one result (tsv, trec)
   * into *out (its strings inside line), or fills err (SLEM_EFORMAT naming the file and
   * line) and returns its status; read_query reads one line that holds a whole query
   * (jsonl) through slem_rankreader_begin()/_add()/_finish(). */
  int (*read_line)(SlemRankReader *r, char *line, uint64_t ln, SlemRankLine *out,
                   SlemError *err);
  int (*read_query)(SlemRankReader *r, const char *line, uint64_t ln, const SlemRankQuery **q,
                    SlemError *err);
  /* reader of a format of its own files: ropen sets r->state, r->name; rnext hands out the
   * next query (NULL at the end) through _begin()/_add()/_finish(); rfree frees r->state. */
  int (*ropen)(SlemRankReader *r, const char *path, SlemError *err);
  int (*rnext)(SlemRankReader *r, const SlemRankQuery **q, SlemError *err);
  void (*rfree)(SlemRankReader *r);

  /* The place of a query (pos SLEM_RANK_WHOLE_QUERY) or of its result e[pos], read at line
   * (SlemRankQuery.line, SlemRankEntry.line: for a format of its own files, the number its
   * reader gives them), for messages: written into buf (size bytes) the way the format's
   * own messages name places. NULL: "line N" (the text formats). */
  void (*place)(char *buf, size_t size, uint64_t line, size_t pos);

  /* slem-merge's fast path (mergefmt.h): NULL where the format has none (trec) */
  const struct SlemRankFastOps *fast;
} SlemRankFormatOps;

extern const SlemRankFormatOps slem_rank_tsv, slem_rank_trec, slem_rank_jsonl, slem_rank_npy;

/* The format of the table of rankings.c at index fmt (its SlemRankFormat), NULL past its
 * end or for SLEM_RANK_AUTO: for walking the table (i = 0, 1, ... until NULL). Static. */
const SlemRankFormatOps *slem_rankformat_ops(SlemRankFormat fmt);

struct SlemRankWriter {
  const SlemRankFormatOps *ops;
  SlemOut *out;          /* the text output (NULL for a format of its own files) */
  const SlemIds *qids, *dbids;
  char *tag;
  size_t k;              /* results per query; 0: unknown */
  void *state;           /* the format's own */
  SlemRankEntry *e;      /* write_hits' entries, and their ids' and scores' text */
  char *text;
  size_t cap;
  SlemTextBuf buf;       /* the serial path's text of one query (formats with format) */
};

#define SLEM_RANK_NONE SIZE_MAX

/* Where an entry's strings are in the arena (they move while it grows). */
typedef struct SlemRankOffs {
  size_t id, score, tag;
} SlemRankOffs;

struct SlemRankReader {
  const SlemRankFormatOps *ops; /* NULL until recognised */
  SlemLines *lines;      /* a text format's lines; NULL for a format of its own files */
  void *state;           /* the format's own (npy) */
  char *name;            /* the name for messages when lines is NULL */
  uint64_t line;         /* when lines is NULL: the "line" of messages (npy: row + 1) */
  SlemStrMap *qmap;      /* query ids seen */
  char *arena;           /* strings of the query being read */
  size_t alen, acap;
  SlemRankEntry *e;
  SlemRankOffs *o;
  size_t n, cap;
  size_t *slot;          /* open-addressing set of entry indices, by id; nslot a power of 2 */
  size_t nslot;
  size_t qoff;           /* the query id in the arena */
  SlemRankQuery q;
  /* a tsv/trec line read ahead: it starts the next query */
  char *pend;            /* "query\0id\0score\0tag\0" */
  size_t pend_cap;
  long pend_rank;
  double pend_score;
  uint64_t pend_line;
  int has_pend, pend_tag, eof, any;
  SlemRankShard shard;   /* the shard line, if any (shard.count > 0) */
  SlemError deferred;    /* a bad line after a query's lines: reported on the next call */
};

/* The query being read: starts one whose id is q (len bytes) at line; adds an entry to it
 * (score_text and tag may be NULL; an id twice is SLEM_EFORMAT, naming the file and the
 * entry's place, slem_rankreader_place()); hands it out in *q. */
int slem_rankreader_begin(SlemRankReader *r, const char *q, size_t len, uint64_t line,
                          SlemError *err);
int slem_rankreader_add(SlemRankReader *r, const char *id, long rank, double score,
                        const char *score_text, int64_t row, const char *tag, uint64_t line,
                        SlemError *err);
void slem_rankreader_finish(SlemRankReader *r, const SlemRankQuery **q);

/* The place() of the readers of arrays of rows (npy pairs, the API's I in memory): a
 * query's row ("row R"), or a result's row and column ("row R, column C"), counted from 0;
 * such a reader numbers a query's "line" its row + 1. Cannot fail. */
void slem_rankreader_place_rows(char *buf, size_t size, uint64_t line, size_t pos);

/* Whether line begins as a shard line of slem-match --shard (end 0: the first line,
 * {"slem_shard":...}; 1: the end line, {"slem_shard_end":...}). Cannot fail. */
int slem_rankshard_is_line(const char *line, int end);
/* Parses the fields of one shard line (end 0: the first, 1: the end line) from the text
 * line into m. Errors (SLEM_EFORMAT) name the file and where (a line number, or "the last
 * line"). */
int slem_rankshard_parse(SlemRankShard *m, const char *line, int end, const char *name,
                         const char *where, SlemError *err);

/* The line of a format of one result per line, in fields: split at seps (collapse: runs
 * of them count once) into want fields, the query first, the id at iid, the rank at
 * irank, the score at iscore, the tag at itag (-1: none). Errors (SLEM_EFORMAT, naming
 * the file and line ln): another field count (the message ends "expected N (layout)"), a
 * rank that is not a positive whole number, a score that is not a finite number. */
typedef struct SlemRankFields {
  const char *seps;
  int collapse;
  size_t want, iid, irank, iscore;
  int itag;
  const char *layout;
} SlemRankFields;
int slem_rankline_split(SlemRankReader *r, char *line, uint64_t ln, const SlemRankFields *fs,
                        SlemRankLine *out, SlemError *err);

#endif

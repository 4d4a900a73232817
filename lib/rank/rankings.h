/* Rankings: the result lists that slem-match and slem-merge write and slem-eval,
 * slem-merge, slem-expand and slem-report read, in four formats:
 *   tsv    "query<TAB>rank<TAB>id<TAB>score", each query's results on consecutive lines
 *   trec   "qid Q0 docno rank score tag" (a TREC run; white space separated), the same
 *   jsonl  one query per line: {"query":"q","results":[{"rank":1,"id":"d","row":17,
 *          "score":0.93}]}
 *   npy    FAISS's I and D matrices, OUT.I.npy (int64 rows) and OUT.D.npy (float32 scores),
 *          one row per query (npypair.h); queries are named by their row "0", "1", ...,
 *          results by their database row; two files, never a pipe
 * Ranks count from 1; ids are the ids files' lines, else 0-based database rows. Scores
 * print with %.9g (float32) in the C locale. This module owns the format names (the table
 * and its lookup, rankings.c), the writer (rankwriter.c), the reader (rankreader.c) and the
 * shard lines (rankshard.c); each format is one file lib/rank/rank_NAME.c implementing
 * SlemRankFormatOps (rankfmt.h) and one line of the table in rankings.c.
 */
#ifndef SLEM_RANKINGS_H
#define SLEM_RANKINGS_H

#include <stddef.h>
#include <stdint.h>

#include "arith.h"
#include "error.h"
#include "ids.h"
#include "match.h"

/* A format is its index in the table of formats (rankings.c); the names below are those of
 * the first four, for the callers that pick one in code. A format added to the table needs
 * no name here: slem_rankformat_parse() finds it. */
typedef enum SlemRankFormat {
  SLEM_RANK_AUTO = -1,  /* reader only: recognise the format from the name or first line */
  SLEM_RANK_TSV = 0,
  SLEM_RANK_TREC,
  SLEM_RANK_JSONL,
  SLEM_RANK_NPY
} SlemRankFormat;

/* Parses "tsv", "trec", "jsonl", "npy". Returns SLEM_EINVAL on another name, and fills err
 * (may be NULL) with "unknown format 'NAME' (tsv, trec, jsonl, npy)". */
int slem_rankformat_parse(SlemRankFormat *fmt, const char *name, SlemError *err);

/* The name of fmt ("tsv", ...; "auto" for SLEM_RANK_AUTO). Static storage. */
const char *slem_rankformat_name(SlemRankFormat fmt);

/* "tsv, trec, jsonl, npy": the names, for help and messages. Static storage. */
const char *slem_rankformat_names(void);
/* ".tsv, .trec, .jsonl, .npy": the extensions, in the same order, for help and messages.
 * Static storage. */
const char *slem_rankformat_extensions(void);

/* The format that path's extension names (".tsv", ".trec", ".jsonl", ".npy"), so that an
 * output's format can follow its name; SLEM_RANK_AUTO when it names none. */
SlemRankFormat slem_rankformat_from_path(const char *path);

/* ---- writer ---- */

typedef struct SlemRankWriter SlemRankWriter;

/* Opens path ("-": stdout) atomically. qids and dbids may be NULL (rows are used) and
 * are borrowed; tag names the run in TREC output ("slem" when NULL; copied). k: the results
 * asked per query, for the formats of fixed width (npy pads each query's row to k; 0 there
 * is SLEM_EINVAL); the others ignore it. Errors: SLEM_EINVAL (no format; npy to "-" or
 * to a pipe: two files), SLEM_EIO, SLEM_ENOMEM. */
int slem_rankwriter_open_k(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                           const SlemIds *qids, const SlemIds *dbids, const char *tag, size_t k,
                           SlemError *err);

/* slem_rankwriter_open_k() with k 0 (unknown): npy refuses it. */
int slem_rankwriter_open(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                         const SlemIds *qids, const SlemIds *dbids, const char *tag,
                         SlemError *err);

/* The files that path names in fmt, for the callers that must not overwrite their inputs:
 * names[0..*n) (at most 2; npy: OUT.I.npy, OUT.D.npy; the others: path itself). -1 when
 * they do not fit. */
int slem_rankformat_files(SlemRankFormat fmt, const char *path, char names[2][4096], size_t *n);

/* Whether fmt carries the shard lines (jsonl): the others cannot record them. */
int slem_rankformat_has_shard(SlemRankFormat fmt);

/* Writes the hits of one query (npy: queries in order 0, 1, ...). Errors: SLEM_EFORMAT when
 * an ids file is too short, SLEM_EINVAL (npy: a query out of order), SLEM_EIO. Has the signature of SlemHitsFn, with self as the context. */
int slem_rankwriter_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err);

/* Fills sink (slem_match_db_sink(), match.h) with self as its context: emit is
 * slem_rankwriter_write(); for a text format that can format queries apart (tsv, trec,
 * jsonl) format and write too, so that the match's threads format ranges of queries at
 * once and the writer thread writes their texts in order: the same bytes, and the same
 * errors in the same order, as slem_rankwriter_write() query by query. npy: emit alone.
 * self is borrowed while sink is used. Cannot fail. */
void slem_rankwriter_sink(SlemRankWriter *self, SlemHitsSink *sink);

/* One result as the reader gives it and slem_rankwriter_write_entries() takes it. */
typedef struct SlemRankEntry {
  long rank;               /* as read (the writer numbers 1, 2, ... instead) */
  const char *id;
  double score;            /* the writer prints (float)score with %.9g */
  const char *score_text;  /* tsv, trec: the score as written; jsonl: NULL */
  int64_t row;             /* jsonl "row": the database row; -1 when absent */
  const char *tag;         /* trec: the run tag of the line; NULL otherwise */
  uint64_t line;           /* line of the file (1-based) */
} SlemRankEntry;

/* Writes the n entries of query with their string ids as given, ranked 1..n in the
 * order given; "row" in jsonl when entry.row >= 0; npy writes the rows alone (and not
 * the query's name: queries are its rows in the order written) and needs every
 * entry.row >= 0 (else SLEM_EFORMAT naming the entry's line). The writer's ids tables are
 * not used. Errors: SLEM_EIO, SLEM_ENOMEM. */
int slem_rankwriter_write_entries(SlemRankWriter *self, const char *query,
                                  const SlemRankEntry *e, size_t n, SlemError *err);

/* A field of the shard lines: a whole number, 16 hex digits, a word (1 to 31 letters,
 * digits, '_', '-', '.': a name such as a BLAS kernel's), stored in char[SLEM_SHARD_WORD],
 * or a text (printable characters, fewer than its member's size: an arithmetic line of
 * arith.h), which may be absent: an older slem's line, or nothing recorded, reads as "",
 * and "" is not written. */
typedef enum SlemRankShardType {
  SLEM_SHARDF_U64,
  SLEM_SHARDF_HEX16,
  SLEM_SHARDF_WORD,
  SLEM_SHARDF_TEXT
} SlemRankShardType;
#define SLEM_SHARD_WORD 32
#define SLEM_SHARD_SCORING_MAX 96
#define SLEM_SHARD_CLASSES 8         /* the most descriptors' arithmetics a group's lines name */
#define SLEM_SHARD_CLASSES_MAX 2048  /* room for them, with their fingerprints */
#define SLEM_SHARD_VALUE_MAX SLEM_SHARD_CLASSES_MAX /* the text of any field's value, its NUL
                                                       included (the longest: a group's
                                                       descriptors_databases) */

/* How slem-merge compares a field among shards. */
typedef enum SlemRankShardRule {
  SLEM_SHARDR_ANY,    /* may differ (index, k) */
  SLEM_SHARDR_EXACT,  /* the same value in every shard */
  SLEM_SHARDR_KNOWN,  /* the same where both record one: "" (not recorded) matches any */
  SLEM_SHARDR_LIBS    /* an arithmetic line (arith.h) where both record one: the same libraries,
                         whatever the BLAS core (slem_arith_differ_libs) */
} SlemRankShardRule;

/* When --allow-mixed-blas (SlemMergeOpts.allow_mixed_blas) waives the rule. */
typedef enum SlemRankShardMixed {
  SLEM_SHARDM_NEVER,  /* never */
  SLEM_SHARDM_ALWAYS, /* always: an arithmetic */
  SLEM_SHARDM_DESC    /* between shards whose descriptors' arithmetics differ: a fingerprint
                         of descriptors, whose last bits their arithmetic decides */
} SlemRankShardMixed;

/* What a shard's ranking (slem-match --shard I/N) records of where it comes from, so that
 * slem-merge can prove that the pieces belong together. In jsonl only, in two lines: the
 * first line, {"slem_shard":{"index":I,"count":N,"rows":R,"k":K,"database":"...",
 * "arithmetic":"...","descriptors_arithmetic":"..."}} (the last two when known), and,
 * after the last query, the end line {"slem_shard_end":{"queries":Q,"query_set":"..."}}
 * (what is known once the queries were read). tsv and trec stay plain, for the programs
 * that read them. A slem-merge --partial of consecutive shards writes the lines of the
 * group, "span" after "index": shards I to I + S - 1 of N. The fields are the table of
 * slem_rankshard_fields(): a field is added there and here, and the writer, the reader and
 * slem-merge's comparison follow it. */
typedef struct SlemRankShard {
  uint64_t index, count;  /* shard I of N (count 0: not a shard) */
  uint64_t span;          /* S: the shards it holds, I to I + S - 1 (1: absent from the line;
                             0 in a shard not read from a line means 1 too) */
  uint64_t rows;          /* R, the rows of the whole database */
  uint64_t k;             /* the results asked per query */
  char database[17];      /* 16 hex digits naming the database, its content and ids
                             (slem_db_content_fingerprint) */
  /* "arithmetic", "descriptors_arithmetic" (arith.h): the arithmetic that scored, and those
   * that made the descriptors, queries and database ("A + B" when they differ); "" when
   * not recorded. A group's (slem-merge --partial) lists those of its shards, the match's
   * those of other libraries than the first, so that a mix allowed in a group is seen at
   * the next level */
  char arith[SLEM_ARITH_MAX];
  char desc_arith[SLEM_ARITH_LIST_MAX];
  /* "descriptors_databases": a group's whose shards' descriptors name more than one
   * arithmetic (recorded or not): each one with the database fingerprint of its shards,
   * "FINGERPRINT=ARITHMETIC | ..." (ARITHMETIC as descriptors_arithmetic records it, empty
   * when not recorded), in the order of the shards' indices; "" in a shard and in a group
   * of one. desc_arith's list of a group cannot tell its shards' arithmetics apart (one
   * shard of queries and database of two records "A + B" too): these are what the next
   * level compares (slem_rankshard_classes()) */
  char desc_databases[SLEM_SHARD_CLASSES_MAX];
  /* "scoring": what the score is ("dot", "cosine", "affine", "calibrated", "kernel
   * FINGERPRINT" with " couple"; then " exclude-self" when the query's own row is
   * skipped); "" when not recorded (an older slem-match) */
  char scoring[SLEM_SHARD_SCORING_MAX];
  /* the end line */
  int has_end;            /* 1 once it was read (or is to be written) */
  uint64_t queries;       /* Q, the queries searched */
  char query_set[17];     /* 16 hex digits naming the queries, their vectors and ids in order
                             (slem_db_query_fingerprint) */
  /* "descriptors_query_sets": with desc_databases, the query set of each of its
   * arithmetics, in its order, " " between; "" without */
  char desc_query_sets[SLEM_SHARD_CLASSES * 17];
} SlemRankShard;

/* One descriptors' arithmetic of a shard or a group, with the fingerprints it decides. */
typedef struct SlemRankShardClass {
  char arith[SLEM_ARITH_LIST_MAX]; /* as descriptors_arithmetic records it; "" not recorded */
  char database[17];
  char query_set[17];              /* "" until the end line is known */
} SlemRankShardClass;

/* The descriptors' arithmetics of m into c (room for SLEM_SHARD_CLASSES); returns their
 * number, at least 1: a shard's (and a group's of one) is its descriptors_arithmetic with
 * its database and query set; a group's of several, its desc_databases and
 * desc_query_sets (the reader checked them). Cannot fail. */
size_t slem_rankshard_classes(const SlemRankShard *m, SlemRankShardClass *c);

/* Records in m the n classes c of a group (desc_databases, and desc_query_sets when every
 * query set is known); n == 1 records none (the group's own fields say it). Returns 0, or
 * -1 when they do not fit (more than SLEM_SHARD_CLASSES, or too long a text; m is then
 * unchanged). */
int slem_rankshard_set_classes(SlemRankShard *m, const SlemRankShardClass *c, size_t n);

/* A field of the shard lines. */
typedef struct SlemRankShardField {
  const char *key;          /* the JSON key */
  int end;                  /* 0: in the first line; 1: in the end line */
  SlemRankShardType type;   /* uint64_t, char[17] of 16 hex digits, char[SLEM_SHARD_WORD],
                               char[size] of text */
  size_t offset;            /* in SlemRankShard */
  size_t size;              /* of the member */
  SlemRankShardRule rule;   /* how shards are compared */
  SlemRankShardMixed mixed; /* when --allow-mixed-blas waives the rule */
  const char *differs;      /* NULL for SLEM_SHARDR_ANY; else what differs when the rule
                               fails (the end of slem-merge's message) */
  int absent_one;           /* SLEM_SHARDF_U64: 1 is not written, and absent reads as 1 */
} SlemRankShardField;

/* The table of the fields, *n of them. Static storage. */
const SlemRankShardField *slem_rankshard_fields(size_t *n);

/* The value of field f of m as text (decimal, the hex digits, the word, the text), in buf. */
const char *slem_rankshard_value(const SlemRankShard *m, const SlemRankShardField *f,
                                 char buf[SLEM_SHARD_VALUE_MAX]);

/* Whether shards a and b break field f's rule, unless allow_mixed_blas waives it (f->mixed).
 * A group that mixed arithmetics under the flag (slem_rankshard_mixes()) breaks the rule
 * of the arithmetic it mixed whatever the other, itself included: one level refuses its
 * shards without the flag. Under the flag, a fingerprint of descriptors (SLEM_SHARDM_DESC)
 * is compared arithmetic by arithmetic (slem_rankshard_classes()): those of descriptors
 * of one arithmetic, or of one not recorded, must be equal, as between every two shards
 * of one level. Cannot fail. */
int slem_rankshard_differ(const SlemRankShardField *f, const SlemRankShard *a,
                          const SlemRankShard *b, int allow_mixed_blas);

/* Whether m is a group whose shards broke the rule of f, an arithmetic (SLEM_SHARDM_ALWAYS),
 * under --allow-mixed-blas: its "arithmetic" lists several (a shard records one), or its
 * descriptors name two recorded arithmetics (desc_databases). 0 for other fields. */
int slem_rankshard_mixes(const SlemRankShardField *f, const SlemRankShard *m);

/* For a fingerprint f of descriptors that differs under the flag (slem_rankshard_differ()):
 * the two values that differ, in va and vb, and the descriptors' arithmetic of a that
 * they share, in arith ("" when one is not recorded). 0 when found, -1 when none differs. */
int slem_rankshard_prints(const SlemRankShardField *f, const SlemRankShard *a,
                          const SlemRankShard *b, char va[17], char vb[17],
                          char arith[SLEM_ARITH_LIST_MAX]);

/* The text of the shard's first line (end 0) or end line (end 1), its newline included,
 * as slem_rankwriter_shard() writes it; NULL when out of memory. Free with free(). */
char *slem_rankshard_line(const SlemRankShard *m, int end);

/* Writes the shard's first line, before any query (jsonl; nothing for tsv and trec).
 * Errors: SLEM_EIO. */
int slem_rankwriter_shard(SlemRankWriter *self, const SlemRankShard *m, SlemError *err);

/* Writes the shard's end line, after the last query (jsonl; nothing for tsv and trec).
 * Errors: SLEM_EIO. */
int slem_rankwriter_shard_end(SlemRankWriter *self, const SlemRankShard *m, SlemError *err);

/* Reads the end line of the ranking at path, a regular file, without reading the rest
 * (but for a file whose size says 0 and that holds bytes, /proc or FUSE, read through):
 * *found is 1 and m's end fields are filled when its last line is a shard's end line, 0
 * otherwise (a pipe, "-", a file without one). Errors: SLEM_EIO, SLEM_EFORMAT (a bad end
 * line, naming the file and the line "last"). */
int slem_rankshard_read_end(const char *path, SlemRankShard *m, int *found, SlemError *err);

/* Finishes and moves the file into place; frees self whatever happens. */
int slem_rankwriter_close(SlemRankWriter *self, SlemError *err);
void slem_rankwriter_abort(SlemRankWriter *self);
/* The order in which a query's results count wherever they are measured or used (slem-eval,
 * slem-expand, the revisitop evaluation): by the rank field as read, equal ranks in the
 * order of the file (by line, then by place on the line: a jsonl query is one line),
 * whatever order the lines come in. A caller's entry begins with a SlemRankKey, and
 * slem_rankings_key_cmp() is the qsort() comparison of such entries, a total order. */
typedef struct SlemRankKey {
  long rank;
  uint64_t line;
  size_t pos;  /* the entry's place in its SlemRankQuery (e[pos]) */
} SlemRankKey;

int slem_rankings_key_cmp(const void *a, const void *b);

/* ---- reader ---- */

/* The results of one query: the consecutive lines (one line in jsonl) that name it. */
typedef struct SlemRankQuery {
  const char *query;
  size_t index;            /* dense index of the query id in order of first appearance;
                              below the count of earlier groups when the id was seen
                              before, its lines not being together */
  uint64_t line;           /* its first line */
  const SlemRankEntry *e;  /* e(n), in file order */
  size_t n;
} SlemRankQuery;

typedef struct SlemRankReader SlemRankReader;

/* Opens a ranking file ("-": stdin) in format fmt, SLEM_RANK_AUTO to recognise it: an npy
 * pair by its name (OUT.I.npy, OUT.D.npy, OUT.npy, or OUT when OUT.I.npy exists), the
 * text formats from the first non-blank line ('{' jsonl; tabs and no space tsv; else
 * trec; a trec run's lines beginning with '#' are comments, skipped as trec_eval skips
 * them, and so is one first that would make the text trec). npy rankings are read from OUT.I.npy and OUT.D.npy whichever of the names is
 * given: their shapes must agree, I int64 and D float32, each row's results first and
 * its padding (I -1, D -FLT_MAX) last; a file whose size says 0 but that holds bytes
 * (/proc, FUSE) is read as a stream, its size checked when its data end, with the
 * message of a file whose size is known. Errors: SLEM_EIO, SLEM_EFORMAT (npy: a bad header,
 * shapes or sizes that disagree; an npy file on stdin), SLEM_EINVAL (npy from "-"). */
int slem_rankreader_open(SlemRankReader **self, const char *path, SlemRankFormat fmt,
                         SlemError *err);
void slem_rankreader_free(SlemRankReader *self);

/* A ranking in memory (the C API's slem_evaluate()): FAISS's I, nq x k database rows
 * (int64, row-major; borrowed, it must outlive self), read as the npy reader reads the I of
 * a pair: query q named "q", its results the rows of row q in column order, named by their
 * number, scores 0 (the measures go by rank), -1 skipped (no result; a row of -1 alone is a
 * query without results). name names it in messages. Not a format of the table: no file
 * has it. Reading: SLEM_EINVAL naming the row and column for a value below -1 or, when
 * ndb > 0, at ndb or beyond; SLEM_EFORMAT for a row twice in one query. Errors:
 * SLEM_ENOMEM. */
int slem_rank_array_open(SlemRankReader **self, const char *name, const int64_t *I, size_t nq,
                         size_t k, uint64_t ndb, SlemError *err);

/* Reads the next query: *q points to storage owned by self, valid until the next call;
 * NULL at end of file. Memory holds one query at a time. Errors name the file and the
 * line: SLEM_EFORMAT for a wrong field count, a rank that is not a positive whole number,
 * a score that is not a finite number, a jsonl line that is not an object with a string
 * "query" and an array "results" of objects with a string "id", a number "score" and
 * optional number "rank" and whole "row" >= 0, an id twice in a query's lines, a file
 * with no ranking at all; SLEM_EIO; SLEM_ENOMEM. A tsv or trec line that cannot be
 * parsed ends the query before it, which is handed out first; the error comes on the
 * next call (so a consumer sees errors in line order). */
int slem_rankreader_next(SlemRankReader *self, const SlemRankQuery **q, SlemError *err);

/* The shard lines of the file (the first once the first query was read, the end line's
 * fields, has_end set, once the end was reached), or NULL when it has none. A jsonl file
 * with an end line but no first line, or a line after the end line, is an error of
 * slem_rankreader_next(). */
const SlemRankShard *slem_rankreader_shard(const SlemRankReader *self);

/* The format (known once the first query was read, else what was asked). */
SlemRankFormat slem_rankreader_format(const SlemRankReader *self);

/* The file's name for messages ("<stdin>" for stdin). Owned by self. */
const char *slem_rankreader_name(const SlemRankReader *self);

/* 1 once the end was reached when the file's last line has no newline: slem-match always
 * ends its lines, so the file was most likely cut short. */
int slem_rankreader_unterminated(const SlemRankReader *self);

/* 1 when the ranking is read as lines of text (tsv, trec, jsonl: its last line should end
 * in a newline), 0 for a format of its own files (npy). */
int slem_rankreader_is_text(const SlemRankReader *self);

/* The line number of the last line read (0 before the first; npy: the row + 1). */
uint64_t slem_rankreader_line(const SlemRankReader *self);

/* The place in the ranking of a query or of one of its results, for messages that name
 * the file and the record ("NAME: PLACE: ..."): line is the query's or the entry's line
 * (SlemRankQuery.line, SlemRankEntry.line, slem_rankreader_line()), pos the entry's index
 * in its SlemRankQuery (e[pos]), or SLEM_RANK_WHOLE_QUERY for the query as a whole. The
 * text formats have lines: "line N"; npy has rows and columns, counted from 0 as its
 * reader's messages count them: "row R" for a query, "row R, column C" for a result
 * (the format's place hook, rankfmt.h: a new format needs no edit of its callers).
 * Written into buf, of SLEM_RANK_PLACE_MAX bytes, which it returns. Cannot fail. */
#define SLEM_RANK_PLACE_MAX 64
#define SLEM_RANK_WHOLE_QUERY SIZE_MAX
const char *slem_rankreader_place(const SlemRankReader *self, char *buf, uint64_t line,
                                  size_t pos);

/* The number of distinct query ids seen so far. */
size_t slem_rankreader_queries(const SlemRankReader *self);

#endif

/* slem-match as one library call: the database files (and their list), the queries, their
 * ids, a kernel cache or the calibration of classifier queries, opened and checked against
 * each other; the search of match.h; the ranking written in its format (rankings.h) and
 * committed. cmd/slem-match.c parses its options into SlemMatchRunOpts and reports; a test
 * can drive a whole search the same way, without a process.
 */
#ifndef SLEM_MATCHRUN_H
#define SLEM_MATCHRUN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "match.h"
#include "shard.h"
#include "vecs.h"

/* A warning for the user (the library prints nothing): msg is borrowed for the call. */
typedef void (*SlemWarnFn)(void *ctx, const char *msg);

/* Progress: queries scored so far out of total (0: unknown). */
typedef void (*SlemQueriesFn)(void *ctx, uint64_t done, uint64_t total);

typedef struct SlemMatchRunOpts {
  SlemMatchOpts match;          /* k, qblock, dblock, exclude_self, normalize, affine and
                                   memory; the run sets kernel, couple, calibration,
                                   unit_queries, unit_db and progress itself */
  const char *queries;          /* path of the queries ("-", the default: stdin) */
  const char *query_ids;        /* their ids, one a line (NULL: rows) */
  const char *const *db;        /* database files (borrowed), ndb of them, in order */
  size_t ndb;
  const char *db_list;          /* a file listing more, after db ("-": stdin); NULL: none */
  const char *const *db_ids;    /* ids files, one per database file in order; ndb_ids */
  size_t ndb_ids;
  SlemShard shard;              /* count 0: the whole database */
  const char *cache;            /* a kernel cache (NULL: the inner product) */
  int couple;                   /* with cache: its coupling */
  const char *calibration;      /* classifier queries with sigmoids (implies match.affine) */
  SlemFormat informat;          /* format of all inputs (SLEM_FMT_AUTO by default) */
  SlemFormat query_format;      /* the queries' format; SLEM_FMT_END (default): informat */
  SlemFormat db_format;         /* the database's format; SLEM_FMT_END (default): informat */
  int no_check;                 /* skip the compatibility checks of descriptors */
  const char *output;           /* "-" (the default): stdout */
  const char *output_format;    /* a name of the rankings' formats (rankings.h: tsv, trec,
                                   jsonl, npy); NULL (default): from output's extension,
                                   else tsv */
  const char *tag;              /* trec run tag (NULL: slem) */
  SlemWarnFn warn;              /* may be NULL: no warnings */
  void *warn_ctx;
  SlemQueriesFn progress;       /* may be NULL; called while rows are known */
  void *progress_ctx;
} SlemMatchRunOpts;

typedef struct SlemMatchRunResult {
  SlemMatchStats stats;         /* of match.h */
  int usage;                    /* on error: 1 when it is in the options themselves (a
                                   usage error for a tool), 0 for the data or the system */
} SlemMatchRunResult;

/* Zeroes opts, then sets the defaults (slem_match_opts_init(), queries and output "-").
 * Cannot fail. */
void slem_matchrun_opts_init(SlemMatchRunOpts *opts);

/* Checks the rules between options alone, before anything is read: a database given; not
 * the queries and a database (or its list) both from stdin, nor any two of the inputs
 * (queries, databases, their list, ids files, calibration); one ids file per database file
 * (when there is no list); --couple only with a cache; a cache with neither normalize nor
 * classifier queries; classifier queries without normalize; an output format of its own
 * files (npy) not to stdout (slem_rankformat_check_output()). Errors: SLEM_EINVAL, with the
 * tool's message. */
int slem_matchrun_check(const SlemMatchRunOpts *opts, SlemError *err);

/* Runs the search of opts: slem_matchrun_check(); the calibration, the cache (of kind kernel,
 * with --couple when asked), the database list; refuses an output that is an input (or a
 * directory) before any work; opens the ids, the database (its shard) and the queries;
 * checks what they are (kernel projections only as the database of a kernel search,
 * descriptors of one cache unless no_check, ids counts), warns of mixed BLAS cores and of a
 * shard written in a format without shard lines; writes the ranking (jsonl shard lines
 * included) and commits it once the counts of queries, sigmoids and ids agree. On error
 * nothing is written (the output keeps its old content). res receives the counts, and
 * res->usage says whether an error is the options'. Errors: SLEM_EINVAL, SLEM_EFORMAT,
 * SLEM_EIO, SLEM_ENUMERIC, SLEM_ENOMEM, with a message naming file and record. */
int slem_matchrun(const SlemMatchRunOpts *opts, SlemMatchRunResult *res, SlemError *err);

#endif

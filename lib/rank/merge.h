/* Merging the rankings of database shards into the ranking of the whole database.
 *
 * Each shard's ranking lists, for the same queries in the same order, the best hits
 * among its own rows, named by their global database rows (slem-match --shard I/N).
 * The merge keeps, per query, the best k of the union under the ordering rule of topk.h
 * (higher score first, equal scores by the lower global row), and writes them the way
 * one slem-match over the whole database would, byte for byte: the ids as the shards
 * wrote them, scores reprinted from their float32 value with %.9g (tsv and trec check on
 * reading that this gives back the text of the shard).
 *
 * A shard's list must be best first (scores never going up: FAISS's L2 distances, smallest
 * first, are refused, named); equal scores may come in any order (FAISS lists exact ties in
 * an order of its own) and are put by the lower row, like every tie of the merge.
 *
 * The global row of a result: jsonl's "row"; else, with an ids table (the database's
 * ids file), the line of its id; else the id itself, which is then the row number.
 */
#ifndef SLEM_MERGE_H
#define SLEM_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "progress.h"
#include "rankings.h"

/* A check that the shards belong together (the same queries, database and cache), for
 * the metadata of descriptor files: called once with the shard paths before anything is
 * read. Returns SLEM_OK or an error status with err filled, naming the file. */
typedef int (*SlemMergeCheckFn)(void *ctx, const char *const *shards, size_t n, SlemError *err);

typedef struct SlemMergeOpts {
  size_t k;              /* results per query (default 100) */
  SlemRankFormat format; /* output format; SLEM_RANK_AUTO (default): the first shard's */
  const char *db_ids;    /* the database's ids file, for tsv and trec shards with ids */
  SlemMergeCheckFn check;  /* NULL (default): no check beyond the rankings themselves */
  int allow_mixed_blas;    /* merge shards whose lines name descriptors of other
                              arithmetics, or matches with other libraries (arith.h):
                              refused by default (SLEM_EFORMAT naming both); the fields
                              that it waives are marked in slem_rankshard_fields() */
  int partial;             /* the shards are some of a split's (slem-scale's first level of
                              a merge in two levels): shards missing from it are not an
                              error; every other check holds */
  void *check_ctx;
  SlemProgressFn progress; /* may be NULL: called with the queries merged so far */
  void *progress_ctx;
} SlemMergeOpts;

typedef struct SlemMergeStats {
  uint64_t queries, results;  /* written */
} SlemMergeStats;

void slem_merge_opts_init(SlemMergeOpts *opts);

/* Merges the n >= 1 ranking files shards (each in any of the three formats, recognised)
 * into output ("-": stdout), written atomically: nothing appears under output unless
 * the merge succeeds. stdout gets the queries as they are merged, whole lines: an error
 * found after the first query leaves those before it there (holding them back would take
 * memory or a file of the output's size; a file output is that). stats (may be NULL)
 * receives the counts.
 * Errors (SLEM_EFORMAT naming the file and, where there is one, the place: the line, an
 * npy shard's row and column, slem_rankreader_place()): a shard that
 * lists other queries or another order than the first; a query twice in a shard; a
 * result whose row is not known (a tsv/trec id that is not a row number and no db_ids,
 * or an id missing from db_ids, with a hint to use jsonl between shards); a row in two
 * shards, or twice for one query; without db_ids, a jsonl row that carries another id than
 * in a line merged before (its number, or an id of its own), or an id that names another
 * row than in a line merged before, in any shard; a score that is not a float32 printed with %.9g; a
 * query with fewer than k results in a shard that returned more distinct rows than that
 * over all its queries, or one more while the row it lacks is not the query's own (it was
 * made with a smaller -k, so the merge cannot be exact); a file whose last line has no
 * newline (cut short; checked before anything is written for a shard that is a file, at
 * its end for a pipe); every error of the reader. With shard lines (rankings.h), also:
 * a shard without them among shards with them; a field that must be shared
 * (slem_rankshard_fields()) breaking its rule, naming both files, the field and both
 * values: among them the descriptors' arithmetics and the match's libraries (arith.h),
 * which allow_mixed_blas waives, with the fingerprints of descriptors of other
 * arithmetics (the database, the query set), and a group that a partial merge with
 * allow_mixed_blas made of shards of several arithmetics, refused without it whatever it
 * is beside (slem_rankshard_mixes()); under it, the fingerprints of every two shards
 * whose descriptors are of one arithmetic (or of one not recorded) still differing, a
 * group's compared arithmetic by arithmetic; more arithmetics in one partial merge's
 * group than its lines record (SLEM_SHARD_CLASSES); a shard missing
 * or given twice; a shard's k below k; a row beyond the database or outside its shard's
 * range; an end line missing. The end lines of shards that are regular files are
 * compared before anything is written, those of pipes at their end. SLEM_EIO (a missing
 * shard, a write error), SLEM_EINVAL (n == 0, k == 0), SLEM_ENOMEM, or what opts->check
 * returned. */
int slem_merge(const char *const *shards, size_t n, const char *output,
               const SlemMergeOpts *opts, SlemMergeStats *stats, SlemError *err);

#endif

/* The fast path of slem_merge() (merge.h): the shards as slem-match writes them, read
 * from memory maps without the general ranking reader.
 *
 * It takes the shards of a format whose SlemRankFastOps (mergefmt.h) reads them: tsv or
 * jsonl (jsonl with shard lines once slem_merge() checked them; no --db-ids) that are
 * regular files, or npy pairs merged by rank_npy.c's own hook,
 * and an output that is a file, and merges them with no allocation per result: lines
 * found with memchr, rows and ranks parsed by hand, scores checked to be the %.9g of the
 * float they give by an exact test in double arithmetic (slem_fmt_g9() only where that
 * test cannot decide), each query's lists merged k-way (the shards' lists are in the order
 * of topk.h, which it checks). Whatever it does not recognise as well formed (an error, a
 * short list, a blank line, an id with characters that JSON would escape, another layout)
 * makes it give up before committing anything, and slem_merge() then runs the general
 * merge, which finds the same output or reports the error: the fast path never decides
 * an error itself, so its outputs and messages are those of the general merge.
 */
#ifndef SLEM_MERGEFAST_H
#define SLEM_MERGEFAST_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "merge.h"

/* What the general merge's checks of the shard lines (rankings.h) found, for a shard that
 * has them: the first line and the end line are skipped, and its rows must lie in
 * [lo, hi). */
typedef struct SlemMergeFastShard {
  int lines;          /* 1: the file has a first line and an end line, checked */
  uint64_t lo, hi;
} SlemMergeFastShard;

/* slem_mergefast() gave up: nothing was written; run the general merge. */
#define SLEM_MERGEFAST_DECLINED (-1)

/* Merges the n shards into output as slem_merge() would (opts->check has run already;
 * opts->db_ids must be NULL). info: NULL for shards without shard lines, else n records
 * of the checks of their shard lines that slem_merge() ran (their first query read, every
 * end line found in its file and compared). lines: NULL, or the first and end lines the
 * output carries (a group of shards, slem_rankshard_line()), written before the first
 * query and after the last. Returns SLEM_OK with the output committed and stats filled,
 * SLEM_MERGEFAST_DECLINED with nothing written, or the error of committing the output
 * (SLEM_EIO, with err filled). */
int slem_mergefast(const char *const *shards, size_t n, const char *output,
                   const SlemMergeOpts *opts, const SlemMergeFastShard *info,
                   const char *const lines[2], SlemMergeStats *stats, SlemError *err);

#endif

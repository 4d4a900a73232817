/* Ranking output: TSV "query<TAB>rank<TAB>id<TAB>score", TREC run
 * "qid Q0 docno rank score tag", or JSON Lines, one query per line:
 * {"query":"q","results":[{"rank":1,"id":"d","row":17,"score":0.93}]}.
 * Ranks count from 1; ids are the ids files' lines, else 0-based rows. Scores print with
 * %.9g in the C locale.
 */
#ifndef SLEM_RANK_H
#define SLEM_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ids.h"
#include "match.h"

typedef enum SlemRankFormat { SLEM_RANK_TSV = 0, SLEM_RANK_TREC, SLEM_RANK_JSONL } SlemRankFormat;

/* Parses "tsv", "trec", "jsonl". Returns SLEM_EINVAL on another name. */
int slem_rankformat_parse(SlemRankFormat *fmt, const char *name);

typedef struct SlemRankWriter SlemRankWriter;

/* Opens path ("-": stdout) atomically. qids and dbids may be NULL (rows are used) and
 * are borrowed; tag names the run in TREC output ("slem" when NULL). */
int slem_rankwriter_open(SlemRankWriter **self, const char *path, SlemRankFormat fmt,
                         const SlemIds *qids, const SlemIds *dbids, const char *tag,
                         SlemError *err);

/* Writes the hits of one query. Errors: SLEM_EFORMAT when an ids file is too short,
 * SLEM_EIO. Has the signature of SlemHitsFn, with self as the context. */
int slem_rankwriter_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                          SlemError *err);

/* Finishes and moves the file into place; frees self whatever happens. */
int slem_rankwriter_close(SlemRankWriter *self, SlemError *err);
void slem_rankwriter_abort(SlemRankWriter *self);

#endif

/* Rankings as numpy matrices, the way FAISS returns a search: I(nq, k), int64 database rows
 * (0-based, global), and D(nq, k), float32 scores, row q holding query q's results best
 * first. Queries with fewer than k results are padded with I = -1 and D = -FLT_MAX, as
 * FAISS pads its inner-product searches. Both files are npy version 1.0, C order, written
 * through temporary files and committed together at the close (slem_out_commit_all(): both
 * complete and synced before either is renamed, so that a write error leaves both old files).
 *
 * Names: for an output "BASE.npy" (or "BASE"), the files are "BASE.I.npy" and "BASE.D.npy";
 * a name that is already one of a pair's, its letter I or D before ".npy" after '.', '_',
 * '-', '/' or nothing ("BASE.I.npy", "x_D.npy" as FAISS users np.save them, "I.npy"), names
 * the pair with the letter swapped ("BASE.I.npy" and "BASE.D.npy"; "x_I.npy" and "x_D.npy").
 * Ids files do not apply: I holds rows. This is the writer of the npy member of the
 * ranking formats (rank_npy.c, which also reads the pair back): callers go through
 * rankings.h, which slem's tools use to write and read npy rankings like the others.
 */
#ifndef SLEM_NPYPAIR_H
#define SLEM_NPYPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "topk.h"

typedef struct SlemNpyPair SlemNpyPair;

/* Opens the two outputs of path for k results per query. Errors: SLEM_EINVAL (path "-":
 * two files cannot go to stdout; k 0), SLEM_EIO, SLEM_ENOMEM. */
int slem_npypair_open(SlemNpyPair **self, const char *path, size_t k, SlemError *err);

/* Writes query's row (queries must come in order 0, 1, ...). Has the signature of
 * SlemHitsFn, with self as the context. Errors: SLEM_EIO, SLEM_EINVAL (out of order). */
int slem_npypair_write(void *self, uint64_t query, const SlemHit *hits, size_t n,
                       SlemError *err);

/* Writes the final shapes into both headers and moves the files into place; frees self
 * whatever happens. */
int slem_npypair_close(SlemNpyPair *self, SlemError *err);
void slem_npypair_abort(SlemNpyPair *self);

/* The two file names for path (the rule above), in buffers of n bytes; -1 when they do
 * not fit. The one rule of npy pairs' names: the writer's and the reader's. */
int slem_npypair_names(const char *path, char *i_name, char *d_name, size_t n);

/* Where path's letter I or D is when path is already one of a pair's names (the rule
 * above), else -1. */
long slem_npypair_letter(const char *path);

#endif

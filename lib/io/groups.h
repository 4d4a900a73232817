/* Groups of positives: several vectors that stand for one exemplar.
 *
 * A groups file names, one per line, the group of each input vector (same order). The
 * groups are numbered 0, 1, ... in order of first appearance; each group's positive is
 * x0 = the mean of its rows, which slem_encoder_run() then encodes as one positive
 * (the seeds' "LDA and SLEM": with several positives x0 is their centre of mass).
 *
 * Sums are accumulated in double per group, so memory is O(groups * d).
 */
#ifndef SLEM_GROUPS_H
#define SLEM_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ids.h"

typedef struct SlemGroups SlemGroups;

/* A new accumulator for the rows named by names (borrowed; it must outlive self), each
 * row of dimension d. Errors: SLEM_ENOMEM. */
int slem_groups_new(SlemGroups **self, const SlemIds *names, size_t d, SlemError *err);
void slem_groups_free(SlemGroups *self);

/* Number of distinct groups, and the name of group g (owned by self). */
size_t slem_groups_count(const SlemGroups *self);
const char *slem_groups_name(const SlemGroups *self, size_t g);

/* Adds the next b rows x(b, d) of the input called src. Errors: SLEM_EFORMAT when the
 * input has more rows than the groups file has lines (naming both files and the row). */
int slem_groups_add(SlemGroups *self, const double *x, size_t b, const char *src,
                    SlemError *err);

/* Ends the input src: the means of every group, means(count, d), owned by self. Errors:
 * SLEM_EFORMAT when src had fewer rows than the groups file has lines. */
int slem_groups_finish(SlemGroups *self, const char *src, const double **means,
                       SlemError *err);

#endif

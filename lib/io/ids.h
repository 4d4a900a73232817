/* Ids files: one id per line, in the order of the vectors they name.
 *
 * An id is a non-empty UTF-8 string with no white space and no other control character
 * (so that it survives TSV, TREC and JSON lines output). Blank lines are errors, since they would shift every id after them.
 */
#ifndef SLEM_IDS_H
#define SLEM_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemIds SlemIds;

/* Reads path ("-": stdin) into a new list of ids, freed by slem_ids_free(). Errors:
 * SLEM_EIO, SLEM_EFORMAT naming the line (empty id, white space inside an id, not UTF-8,
 * an id that appears twice, empty file). */
int slem_ids_read(SlemIds **self, const char *path, SlemError *err);

/* The same, but an empty file is a list of no ids (the ids of an empty segment). */
int slem_ids_read_empty(SlemIds **self, const char *path, SlemError *err);

/* The same for a list whose names may repeat: labels, group names. */
int slem_ids_labels_read(SlemIds **self, const char *path, SlemError *err);
void slem_ids_free(SlemIds *self);

/* A new list holding the ids of parts[0..n-1] one after the other (parts borrowed),
 * named after the first part, freed by slem_ids_free(). Errors: SLEM_ENOMEM. */
int slem_ids_concat(SlemIds **self, SlemIds *const *parts, size_t n, SlemError *err);

/* A new list from count NUL-terminated ids packed in buf(bytes) (a descriptor container's ids
 * section), named name, freed by slem_ids_free(). Errors: SLEM_EFORMAT naming name and the
 * record (a count or a length that disagrees, an empty id, white space or another control
 * character in an id, an id that is not UTF-8, an id that appears twice), SLEM_ENOMEM. */
int slem_ids_unpack(SlemIds **self, const char *name, const char *buf, size_t bytes,
                    uint64_t count, SlemError *err);

/* Refuses an id that appears twice in the lists parts[0..n-1] taken together (the ids of
 * the files of one database): SLEM_EFORMAT naming the list, the line (ids files) or record
 * (containers) of the second occurrence and of the first, and, when what is not NULL and
 * n > 1, the lists' numbers ("db.slem (database file 2): record 1: id 'a' appears twice
 * (db.slem (database file 1): record 1)"). Errors: SLEM_ENOMEM. */
int slem_ids_unique(SlemIds *const *parts, size_t n, const char *what, SlemError *err);

size_t slem_ids_count(const SlemIds *self);
/* The i-th id (0-based), owned by self; i must be below slem_ids_count(). */
const char *slem_ids_get(const SlemIds *self, size_t i);
const char *slem_ids_name(const SlemIds *self);

#endif

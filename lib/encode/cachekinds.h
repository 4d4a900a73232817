/* The kinds of cache (cache.h is their container): each kind's struct, accessor, writer
 * and reader in its variant's file lib/encode/var_NAME.c (declared in var_NAME.h where
 * other files use them; "recursive" and "recursive-nubeta", one reader and writer for two
 * variants, in kind_recursive.[ch]), its SlemCacheKindOps named by its variant in the table
 * of variants (variant.h), through which slem_cache_read() finds it.
 */
#ifndef SLEM_CACHEKINDS_H
#define SLEM_CACHEKINDS_H

#include <stddef.h>

#include "cache.h"
#include "error.h"

typedef struct SlemCacheKindOps {
  const char *name;  /* the JSON header's kind */
  int has_mu;        /* 1: section mu(d) is looked for before the kind's own and handed to
                        read(); 0: the kind has none of that name */
  /* Reads the kind's members (slem_cache_header()) and sections (slem_cache_section()) of
   * c, loaded by slem_cache_load(), and sets its data (slem_cache_set_kind()). Errors:
   * SLEM_EFORMAT naming the file and what is wrong, SLEM_ENOMEM. */
  int (*read)(SlemCache *c, const double *mu, SlemError *err);
} SlemCacheKindOps;

/* Maps and checks path (slem_cache_load()), then reads its kind's members and sections with
 * the kind's reader. *self is set to a new cache freed by slem_cache_free(). Errors: those
 * of slem_cache_load(), SLEM_EFORMAT for a kind this slem does not know ("cache kind 'x' is
 * not known to this slem") or a member or section of the kind that is missing or wrong. */
int slem_cache_read(SlemCache **self, const char *path, SlemError *err);

/* The kind of the variants' table named name, or NULL. */
const SlemCacheKindOps *slem_cachekinds_find(const char *name);

#endif

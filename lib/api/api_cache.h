/* The caches of the public API (slem.h): a fit run by the pipeline of slem-negstats
 * (negstats.h) into a private temporary file, loaded from it (mapped) and the file unlinked,
 * so that a cache in memory is the very file the tool writes. Internal to lib/api/.
 */
#ifndef SLEM_API_CACHE_H
#define SLEM_API_CACHE_H

#include <stddef.h>

#include "negstats.h"
#include "slem.h"

/* Runs slem_negstats_run(inputs[0..n), o) into a new file of mode 0600 in $TMPDIR (else
 * /tmp), reads the cache it wrote (slem_cache_read()), names it name in messages and
 * unlinks the file: *out is the cache, mapped, whose bytes slem_save() writes. res (may be
 * NULL) gets the run's result. Errors: those of the run and of the read (the temporary
 * file removed; nothing is left), SLEM_EIO when no temporary file can be made. */
int slem_api_cache_run(SlemCache **out, const char *const *inputs, size_t n,
                       const SlemNegstatsOpts *o, const char *name, SlemNegstatsResult *res,
                       SlemError *err);

/* A private temporary directory (mode 0700) in $TMPDIR, else /tmp, into dir (cap bytes),
 * for files the API writes only to hand them to a pipeline. Errors: SLEM_EIO. */
int slem_api_cache_tmpdir(char *dir, size_t cap, SlemError *err);

#endif

#include "cachekinds.h"

#include <string.h>

/* The kinds of cache: to add one, write lib/encode/kind_NAME.c defining slem_kind_NAME
 * and add X(NAME) here; the Makefile builds every C file of lib/. */
#define SLEM_CACHE_KINDS X(linear) X(recursive) X(nubeta) X(pca) X(partial) X(kernel) X(krec)

#define X(name) extern const SlemCacheKindOps slem_kind_##name;
SLEM_CACHE_KINDS
#undef X

#define X(name) &slem_kind_##name,
static const SlemCacheKindOps *const kinds[] = {SLEM_CACHE_KINDS};
#undef X

const SlemCacheKindOps *slem_cachekinds_find(const char *name) {
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (strcmp(name, kinds[k]->name) == 0) return kinds[k];
  return NULL;
}

int slem_cache_read(SlemCache **self, const char *path, SlemError *err) {
  SlemCache *c;
  const SlemCacheKindOps *kind;
  const double *mu = NULL;  /* linear, recursive, pca: found before the kind's sections */
  int status;
  *self = NULL;
  if ((status = slem_cache_load(&c, path, err)) != SLEM_OK) return status;
  kind = slem_cachekinds_find(slem_cache_kind(c));
  /* an unknown kind's mu is looked for too, as before the table: the same message first */
  if (!kind || kind->has_mu) status = slem_cache_section(c, "mu", c->d, 0, &mu, err);
  if (!status)
    status = kind ? kind->read(c, mu, err)
                  : slem_error(err, SLEM_EFORMAT, "%s: cache kind '%s' is not known to this slem",
                               path, slem_cache_kind(c));
  if (status) {
    slem_cache_free(c);
    return status;
  }
  *self = c;
  return SLEM_OK;
}

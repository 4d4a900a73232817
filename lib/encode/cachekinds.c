#include "cachekinds.h"

#include <string.h>

#include "variant.h"

const SlemCacheKindOps *slem_cachekinds_find(const char *name) {
  for (size_t i = 0; i < slem_variants_count(); i++) {
    const SlemCacheKindOps *k = slem_variants_get(i)->kind;
    if (k && strcmp(name, k->name) == 0) return k;
  }
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

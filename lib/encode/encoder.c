#include "encoder.h"

#include "variant.h"

int slem_encoder_choose(const SlemEncoderOps **ops, const SlemCache *cache,
                        const SlemEncStreamOpts *opts, SlemError *err) {
  *ops = NULL;
  /* the variants' encoders, in the table's order (variants.c) */
  for (size_t i = 0; i < slem_variants_count(); i++) {
    const SlemEncoderOps *e = slem_variants_get(i)->encoder;
    int a = e ? e->accepts(cache, opts, err) : SLEM_ENC_NOT_MINE;
    if (a == SLEM_ENC_REFUSED) return err ? err->status : SLEM_EINVAL;
    if (a == SLEM_ENC_MINE) {
      *ops = e;
      return SLEM_OK;
    }
  }
  return slem_error(err, SLEM_EINVAL, "%s: no encoder takes this cache with these options",
                    slem_cache_path(cache));
}

#include "encoder.h"

/* The encoders: to add one, write lib/encode/enc_NAME.c defining slem_enc_NAME and add
 * X(NAME) here; the Makefile builds every C file of lib/. */
/* basic first: it takes --basic with any cache, and refuses all but a full linear one
 * (enc_basic.c), so the other encoders of a cache's kind never see that option. */
#define SLEM_ENCODERS X(basic) X(esvm) X(kernel) X(krec) X(nubeta) X(recursive) X(pca) X(whiten) X(linear)

#define X(name) extern const SlemEncoderOps slem_enc_##name;
SLEM_ENCODERS
#undef X

#define X(name) &slem_enc_##name,
static const SlemEncoderOps *const encoders[] = {SLEM_ENCODERS};
#undef X

int slem_encoder_choose(const SlemEncoderOps **ops, const SlemCache *cache,
                        const SlemEncStreamOpts *opts, SlemError *err) {
  *ops = NULL;
  for (size_t i = 0; i < sizeof encoders / sizeof *encoders; i++) {
    int a = encoders[i]->accepts(cache, opts, err);
    if (a == SLEM_ENC_REFUSED) return err ? err->status : SLEM_EINVAL;
    if (a == SLEM_ENC_MINE) {
      *ops = encoders[i];
      return SLEM_OK;
    }
  }
  return slem_error(err, SLEM_EINVAL, "%s: no encoder takes this cache with these options",
                    slem_cache_path(cache));
}

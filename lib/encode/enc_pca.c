/* PCA-reduced SLEM (whiten.h) from a pca cache (slem-negstats --pca R), the power of
 * Lambda_R + lambda I given by --alpha (default -1). */
#include "enc_whiten.h"
#include "kind_pca.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if (!slem_cache_pca(cache)) return SLEM_ENC_NOT_MINE;
  if (o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "--classifier needs a full linear cache: %s is PCA-reduced",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

/* the whitener's ops, shared with enc_whiten.c */
const SlemEncoderOps slem_enc_pca = {"pca", accepts, slem_enc_whiten_new,
                                     slem_enc_whiten_out_dim, slem_enc_whiten_run,
                                     slem_enc_whiten_counts, NULL, slem_enc_whiten_free,
    NULL, NULL, 1, slem_enc_whiten_count_rows};

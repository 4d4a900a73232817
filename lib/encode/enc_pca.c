/* PCA-reduced SLEM (whiten.h) from a pca cache (slem-negstats --pca R), the power of
 * Lambda_R + lambda I given by --alpha (default -1). */
#include "encoder.h"
#include "whiten.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: enc_esvm.c */
  if (cache->kind != SLEM_CACHE_PCA) return SLEM_ENC_NOT_MINE;
  if (o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "--classifier needs a full linear cache: %s is PCA-reduced",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  return slem_whiten_new((SlemWhitener **)self, cache, o->alpha, max_rows, err);
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_whiten_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  slem_whiten_run(self, y, x, b);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_whiten_zeros(self);
}

static void free_(void *self) { slem_whiten_free(self); }

const SlemEncoderOps slem_enc_pca = {"pca", accepts, new_, out_dim, run, counts, NULL, free_};

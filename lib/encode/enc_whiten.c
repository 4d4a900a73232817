/* The whitening family (whiten.h) from a linear cache holding its eigendecomposition:
 * slem-encode --alpha A. */
#include "enc_whiten.h"
#include "whiten.h"
#include "var_pca.h"
#include "kind_partial.h"
#include "var_linear.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if ((!slem_cache_linear(cache) && !slem_cache_partial(cache)) || !o->alpha_set)
    return SLEM_ENC_NOT_MINE;
  if (slem_cache_linear(cache) && !slem_cache_eigen(cache)) {
    slem_error(err, SLEM_EINVAL, "--alpha needs the eigendecomposition: %s holds none; make "
               "it with slem-negstats --eigen", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "%s: --classifier needs a full linear cache and no --alpha",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

int slem_enc_whiten_new(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                        size_t max_rows, SlemError *err) {
  return slem_whiten_new((SlemWhitener **)self, cache, o->alpha, max_rows, err);
}

size_t slem_enc_whiten_out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_whiten_out_dim(self);
}

int slem_enc_whiten_run(void *self, void *y, const double *x, size_t b, const char *name,
                        uint64_t first_record, SlemError *err) {
  slem_whiten_run(self, y, x, b);
  return SLEM_OK;
}

void slem_enc_whiten_counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_whiten_zeros(self);
}

void slem_enc_whiten_count_rows(void *self, size_t lo, size_t hi) {
  slem_whiten_count_rows(self, lo, hi);
}

void slem_enc_whiten_free(void *self) { slem_whiten_free(self); }

const SlemEncoderOps slem_enc_whiten = {"whiten", accepts, slem_enc_whiten_new,
                                        slem_enc_whiten_out_dim, slem_enc_whiten_run,
                                        slem_enc_whiten_counts, NULL, slem_enc_whiten_free,
    NULL, NULL, 1, slem_enc_whiten_count_rows};

/* The [nu; beta] descriptors of new_full_encoder.m (nubeta.h) from a recursive-nubeta cache
 * (slem-negstats --depth K --adaptive-theta POSITIVES): unit descriptors of d + K values,
 * with the cache's theta. */
#include "encoder.h"
#include "nubeta.h"
#include "kind_recursive.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  const SlemCacheRecursive *rec;
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  rec = slem_cache_recursive(cache);
  if (!rec || !rec->nu_beta) return SLEM_ENC_NOT_MINE;
  if (o->mode == SLEM_ENCODE_CLASSIFIER || o->alpha_set) {
    slem_error(err, SLEM_EINVAL, "%s is a recursive-nubeta cache: it gives unit [nu; beta] "
               "descriptors only (no --%s)", slem_cache_path(cache),
               o->alpha_set ? "alpha" : "classifier");
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  return slem_nubeta_new((SlemNubeta **)self, cache, max_rows, err);
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_nubeta_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  slem_nubeta_run(self, y, x, b);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_nubeta_zeros(self);
}

static void count_rows(void *self, size_t lo, size_t hi) {
  slem_nubeta_count_rows(self, lo, hi);
}

static void free_(void *self) { slem_nubeta_free(self); }

const SlemEncoderOps slem_enc_nubeta = {"nubeta", accepts, new_, out_dim, run, counts, NULL,
                                        free_,
    NULL, NULL, 1, count_rows};

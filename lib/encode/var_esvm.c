/* Exemplar SVMs (esvm.h) as an encoder of the table (encoder.h): the rows of a block are
 * trained one exemplar each against the negatives of opts->esvm, which stand in for a
 * cache (cache NULL). Each exemplar is one work unit, trained from the same seed whatever
 * thread takes it (esvm.c), so the rows do not depend on the threads or the block. */
#include "encoder.h"
#include "esvm.h"
#include "variant.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!o->esvm) return SLEM_ENC_NOT_MINE;
  if (cache || o->groups || o->alpha_set || o->couple || o->projections || o->coordinates ||
      o->mode == SLEM_ENCODE_CLASSIFIER) {
    slem_error(err, SLEM_EINVAL, "exemplar SVMs take their negatives and no cache, groups, "
               "--alpha or kernel option (--classifier is the ESVM's own option)");
    return SLEM_ENC_REFUSED;
  }
  return SLEM_ENC_MINE;
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  (void)cache;
  (void)max_rows;
  (void)err;
  *self = o->esvm; /* borrowed: the caller owns and frees it */
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_esvm_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  (void)name;
  (void)first_record;
  return slem_esvm_run(self, y, x, b, err);
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_esvm_zeros(self);
}

static void free_(void *self) { (void)self; }

const SlemEncoderOps slem_enc_esvm = {"esvm", accepts, new_, out_dim, run, counts, NULL, free_,
    NULL, NULL, 0, NULL};

const SlemVariant slem_variant_esvm = {
    "esvm",
    "exemplar SVMs against their negatives, LIBLINEAR's (slem-esvm)",
    NULL, NULL, &slem_enc_esvm, NULL, NULL};

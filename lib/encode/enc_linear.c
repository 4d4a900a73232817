/* The linear SLEM encoder (slem_linear.h): unit descriptors or classifiers from a linear cache
 * without --alpha. A partial cache comes here too, and slem_encoder_new() refuses it. */
#include "slem_linear.h"
#include "encoder.h"
#include "kind_linear.h"
#include "kind_partial.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if ((!slem_cache_linear(cache) && !slem_cache_partial(cache)) || o->alpha_set)
    return SLEM_ENC_NOT_MINE;
  /* the classifier's omega and nu solve the loss of the negatives' own mu and Sigma */
  if (o->mode == SLEM_ENCODE_CLASSIFIER && slem_cache_linear(cache) &&
      slem_cache_linear(cache)->mixed) {
    slem_error(err, SLEM_EINVAL, "--classifier needs the negatives' own statistics: %s holds "
               "the mixed covariance of positives and negatives (slem-negstats --mixed)",
               slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  SlemEncoder *e = NULL;
  int st;
  *self = NULL;
  if ((st = slem_encoder_new(&e, cache, o->mode, o->theta, max_rows, err)) != SLEM_OK ||
      (st = slem_encoder_set_precision(e, o->precision, NULL, err)) != SLEM_OK) {
    slem_encoder_free(e);
    return st;
  }
  *self = e;
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_encoder_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  slem_encoder_run(self, y, x, b);
  return SLEM_OK;
}

static int takes_f32(const void *self) { return slem_encoder_takes_f32(self); }

static int run_f32(void *self, void *y, float *x, size_t b, const char *name,
                   uint64_t first_record, SlemError *err) {
  slem_encoder_run_f32(self, y, x, b);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_encoder_zeros(self);
}

static void count_rows(void *self, size_t lo, size_t hi) {
  slem_encoder_count_rows(self, lo, hi);
}

static void free_(void *self) { slem_encoder_free(self); }

const SlemEncoderOps slem_enc_linear = {"linear", accepts, new_, out_dim, run, counts, NULL,
                                        free_, takes_f32, run_f32, 1, count_rows};

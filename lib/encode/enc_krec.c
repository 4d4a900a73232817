/* Kernel recursive SLEM (krec.h) from a kernel-recursive cache (slem-negstats --kernel SPEC
 * --depth K): the last stage's explicit descriptors only, as the linear recursive encoder
 * gives unit descriptors only. */
#include "encoder.h"
#include "krec.h"
#include "kind_kernel.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  const char *what;
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if (!slem_cache_kernel_recursive(cache)) return SLEM_ENC_NOT_MINE;
  what = o->mode == SLEM_ENCODE_CLASSIFIER ? "--classifier"
         : o->alpha_set                    ? "--alpha"
         : o->couple                       ? "--couple"
         : o->projections                  ? "--projections"
         : o->coordinates                  ? "--coordinates"
         : o->groups                       ? "--groups"
                                           : NULL;
  if (!what) return SLEM_ENC_MINE;
  slem_error(err, SLEM_EINVAL, "%s is a kernel cache of %zu stages (--depth): it gives the last "
             "stage's explicit descriptors only (no %s)", slem_cache_path(cache),
             slem_cache_kernel_recursive(cache)->depth, what);
  return SLEM_ENC_REFUSED;
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  return slem_krec_new((SlemKRec **)self, cache, max_rows, err);
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_krec_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  return slem_krec_run(self, y, x, b, name, first_record, err);
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->clamps += slem_krec_clamps(self);
}

static void free_(void *self) { slem_krec_free(self); }

const SlemEncoderOps slem_enc_krec = {"krec", accepts, new_, out_dim, run, counts, NULL, free_,
    NULL, NULL, 0, NULL};

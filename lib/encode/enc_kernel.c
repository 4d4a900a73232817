/* Kernel SLEM from a kernel cache (kproj.h): the explicit descriptors z / N (r values), or
 * with --projections the projections slem-match -c reads (SLEM_KPROJ_WIDTH doubles, computed
 * in the fixed order slem_match() uses). */
#include <stdlib.h>

#include "encoder.h"
#include "kproj.h"

typedef struct KernelEnc {
  SlemKProj *kp;
  size_t d, r, out_dim;
  int couple, projections;
} KernelEnc;

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  const char *path = slem_cache_path(cache);
  if (cache->kind != SLEM_CACHE_KERNEL) return SLEM_ENC_NOT_MINE;
  if (o->alpha_set)
    slem_error(err, SLEM_EINVAL, "--alpha needs a linear cache made with --eigen: %s is a "
               "kernel cache", path);
  else if (o->couple && !cache->couple)
    slem_error(err, SLEM_EINVAL, "--couple: %s was made without --couple (make it with "
               "slem-negstats --kernel SPEC --couple)", path);
  else if (o->groups)
    slem_error(err, SLEM_EINVAL, "--groups needs a linear cache: %s is a kernel cache (the "
               "mean of the rows is not the mean of their features)", path);
  else
    return SLEM_ENC_MINE;
  return SLEM_ENC_REFUSED;
}

static void free_(void *self) {
  KernelEnc *k = self;
  if (!k) return;
  slem_kproj_free(k->kp);
  free(k);
}

/* --classifier is refused here, when encoding starts, not by accepts(): slem-encode has
 * always reported it as a data error (exit 1), which its tests check. */
static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  KernelEnc *k;
  int st;
  *self = NULL;
  if (o->mode == SLEM_ENCODE_CLASSIFIER)
    return slem_error(err, SLEM_EINVAL, "%s: --classifier needs a linear cache",
                      slem_cache_path(cache));
  if (!(k = calloc(1, sizeof *k)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for a kernel encoder");
  k->d = cache->d;
  k->r = cache->r;
  k->couple = o->couple;
  k->projections = o->projections;
  k->out_dim = o->projections ? SLEM_KPROJ_WIDTH(cache->d, cache->r, o->couple) : cache->r;
  if ((st = slem_kproj_new(&k->kp, cache, max_rows, o->couple, err)) != SLEM_OK) {
    free_(k);
    return st;
  }
  *self = k;
  return SLEM_OK;
}

static size_t out_dim(const void *self, int *f64) {
  const KernelEnc *k = self;
  *f64 = k->projections;
  return k->out_dim;
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  KernelEnc *k = self;
  int st;
  if (k->projections) { /* the fixed-order projections, which slem_match() would compute */
    if ((st = slem_kproj_run_fixed(k->kp, x, b, name, first_record, err)) != SLEM_OK)
      return st;
    slem_kproj_pack(k->kp, y);
    return SLEM_OK;
  }
  if ((st = slem_kproj_run(k->kp, x, b, name, first_record, err)) != SLEM_OK) return st;
  slem_kproj_descriptors(k->kp, y);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->clamps += slem_kproj_clamps(((const KernelEnc *)self)->kp);
}

static void describe(const void *self, SlemDescMeta *m) {
  const KernelEnc *k = self;
  if (!k->projections) return;
  m->kernel_d = k->d;
  m->kernel_r = k->r;
  m->kernel_couple = k->couple;
}

const SlemEncoderOps slem_enc_kernel = {"kernel", accepts, new_, out_dim, run, counts,
                                        describe, free_};

/* Kernel SLEM from a kernel cache (kproj.h): the explicit descriptors z / N (r values), or
 * with --projections the projections slem-match -c reads (SLEM_KPROJ_WIDTH doubles, computed
 * in the fixed order slem_match() uses), or with --coordinates v (r values), or with
 * --classifier the exemplar classifier in the factor's space (r + 1 values): the linear
 * classifier of slem_linear.h with v for x, mu_B for mu and G for A, as the kernel branch of
 * the authors' new_full_encoder.m computes it,
 *   omega = 2 theta / (theta (v - mu_B).z + theta + 1) z,  z = G^-1 (v - mu_B),
 *   nu = (theta - 1)/(theta + 1) - (theta v + mu_B).omega / (theta + 1),
 * whose score omega.v' + nu is that of the row's coordinates v' (--coordinates). */
#include <stdlib.h>

#include "encoder.h"
#include "kproj.h"
#include "kind_kernel.h"

typedef struct KernelEnc {
  SlemKProj *kp;
  size_t d, r, out_dim;
  int couple, projections, coordinates, classifier;
  double theta;
  const double *mu;  /* mu_B(r), the cache's */
} KernelEnc;

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  const char *path = slem_cache_path(cache);
  if (!slem_cache_kernel(cache)) return SLEM_ENC_NOT_MINE;
  if (o->alpha_set)
    slem_error(err, SLEM_EINVAL, "--alpha needs a linear cache made with --eigen: %s is a "
               "kernel cache", path);
  else if (o->couple && !slem_cache_kernel(cache)->couple)
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

/* A coupled --classifier is refused here, when encoding starts, as slem-encode reported
 * every kernel --classifier before there was one (a data error, exit 1): the coupled
 * exemplar has a part outside the factor's space. */
static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  KernelEnc *k;
  int st;
  *self = NULL;
  if (o->mode == SLEM_ENCODE_CLASSIFIER && o->couple)
    return slem_error(err, SLEM_EINVAL, "%s: --classifier with --couple: the coupled exemplar "
                      "is not in the factor's space (drop --couple)", slem_cache_path(cache));
  if (!(k = calloc(1, sizeof *k)))
    return slem_error(err, SLEM_ENOMEM, "out of memory for a kernel encoder");
  k->d = cache->d;
  k->r = slem_cache_kernel(cache)->r;
  k->couple = o->couple;
  k->projections = o->projections;
  k->coordinates = o->coordinates;
  k->classifier = o->mode == SLEM_ENCODE_CLASSIFIER;
  k->theta = o->theta;
  k->mu = slem_cache_kernel(cache)->mu;
  k->out_dim = o->projections ? SLEM_KPROJ_WIDTH(cache->d, k->r, o->couple)
               : k->classifier ? k->r + 1
                               : k->r;
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

/* y(b, r + 1): omega then nu of each row of the last block (formulas above). */
static void classifiers(const KernelEnc *k, float *y, size_t b) {
  const double *v = slem_kproj_v(k->kp), *z = slem_kproj_z(k->kp), *mu = k->mu;
  size_t r = k->r;
  double th = k->theta;
  for (size_t i = 0; i < b; i++) {
    const double *vi = v + i * r, *zi = z + i * r;
    double dz = 0, c, vw = 0;
    float *yi = y + i * (r + 1);
    for (size_t l = 0; l < r; l++) dz += (vi[l] - mu[l]) * zi[l];
    c = 2 * th / (th * dz + th + 1);
    for (size_t l = 0; l < r; l++) {
      double w = c * zi[l];
      yi[l] = (float)w;
      vw += (th * vi[l] + mu[l]) * w;
    }
    yi[r] = (float)((th - 1) / (th + 1) - vw / (th + 1));
  }
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
  if (k->classifier)
    classifiers(k, y, b);
  else if (k->coordinates)
    for (size_t i = 0; i < b * k->r; i++) ((float *)y)[i] = (float)slem_kproj_v(k->kp)[i];
  else
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
                                        describe, free_,
    NULL, NULL, 0, NULL};

/* Kernel recursive SLEM (slem-negstats -K SPEC --depth K): its computation (var_krec.h),
 * its encoder, its fit and its line in the table of variants (variant.h); its kind of cache,
 * "kernel-recursive", is read and written with the kernel kind's readers and writers
 * (var_kernel.c).
 */
#include "var_krec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "kernel_stats.h"
#include "kproj.h"
#include "var_kernel.h"
#include "fit.h"
#include "io.h"
#include "variant.h"

/* Rows of the negatives projected at once while a cache is made: the kpca factor and the
 * coupling hold k(x, negatives) for a whole block. */
#define KREC_BLOCK 256

struct SlemKRec {
  size_t depth, max_rows;
  SlemKProj **kp;   /* one projector per stage */
  double **y;       /* y[s](max_rows, r_s): stage s's descriptors, the input of s + 1 */
};

size_t slem_krec_out_dim(const SlemKRec *self) {
  return slem_cache_kernel(self->kp[self->depth - 1]->c)->r;
}

void slem_krec_free(SlemKRec *self) {
  if (!self) return;
  for (size_t s = 0; s < self->depth; s++) {
    if (self->kp) slem_kproj_free(self->kp[s]);
    if (self->y) free(self->y[s]);
  }
  free(self->kp);
  free(self->y);
  free(self);
}

int slem_krec_new(SlemKRec **self, const SlemCache *cache, size_t max_rows, SlemError *err) {
  const SlemCacheKernelRecursive *kr = slem_cache_kernel_recursive(cache);
  SlemKRec *k;
  int st;
  *self = NULL;
  if (!kr)
    return slem_error(err, SLEM_EINVAL, "%s is not a kernel-recursive cache",
                      slem_cache_path(cache));
  if (!(k = calloc(1, sizeof *k))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  k->depth = kr->depth;
  k->max_rows = max_rows;
  k->kp = calloc(k->depth, sizeof *k->kp);
  k->y = calloc(k->depth, sizeof *k->y);
  if (!k->kp || !k->y) {
    slem_krec_free(k);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  for (size_t s = 0; s < k->depth; s++) {
    size_t r = slem_cache_kernel(kr->stage[s])->r;
    if ((st = slem_kproj_new(&k->kp[s], kr->stage[s], max_rows, 0, err)) != SLEM_OK) {
      slem_krec_free(k);
      return st;
    }
    if (s + 1 < k->depth && !(k->y[s] = malloc((max_rows ? max_rows : 1) * r * sizeof **k->y))) {
      slem_krec_free(k);
      return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", max_rows);
    }
  }
  *self = k;
  return SLEM_OK;
}

uint64_t slem_krec_clamps(const SlemKRec *self) {
  uint64_t c = 0;
  for (size_t s = 0; s < self->depth; s++) c += slem_kproj_clamps(self->kp[s]);
  return c;
}

/* Stages 1..depth of x(b, d): the last one's projections left in kp[depth - 1]. */
static int stages(SlemKRec *self, const double *x, size_t b, const char *name,
                  uint64_t first_record, SlemError *err) {
  const double *in = x;
  for (size_t s = 0; s < self->depth; s++) {
    char sname[512];
    int st;
    if (s == 0)
      snprintf(sname, sizeof sname, "%s", name);
    else
      snprintf(sname, sizeof sname, "%s (its stage %zu descriptors)", name, s);
    if ((st = slem_kproj_run(self->kp[s], in, b, sname, first_record, err)) != SLEM_OK)
      return st;
    if (s + 1 < self->depth) {
      slem_kproj_descriptors_f64(self->kp[s], self->y[s]);
      in = self->y[s];
    }
  }
  return SLEM_OK;
}

int slem_krec_run_f64(SlemKRec *self, double *y, const double *x, size_t b, const char *name,
                      uint64_t first_record, SlemError *err) {
  int st = stages(self, x, b, name, first_record, err);
  if (st == SLEM_OK) slem_kproj_descriptors_f64(self->kp[self->depth - 1], y);
  return st;
}

int slem_krec_run(SlemKRec *self, float *y, const double *x, size_t b, const char *name,
                  uint64_t first_record, SlemError *err) {
  int st = stages(self, x, b, name, first_record, err);
  if (st == SLEM_OK) slem_kproj_descriptors(self->kp[self->depth - 1], y);
  return st;
}

/* The explicit descriptors y(n, r) of the raw rows x(n, d) through the kernel stage of
 * ks, projected in blocks of KREC_BLOCK rows as slem-encode would project them. */
static int stage_descriptors(double *y, const SlemKernelStats *ks, const double *x, size_t n,
                             size_t d, const char *name, SlemError *err) {
  SlemKernelSections sec = {ks->pivots, ks->lp, ks->mu_b, ks->ginv, ks->negs, ks->proj, NULL};
  SlemCache *view = NULL;
  SlemKProj *kp = NULL;
  size_t r = ks->info.r;
  int st = slem_cache_kernel_view(&view, name, d, ks->n, &ks->info, &sec, err);
  if (st == SLEM_OK) st = slem_kproj_new(&kp, view, KREC_BLOCK, 0, err);
  for (size_t i = 0; st == SLEM_OK && i < n; i += KREC_BLOCK) {
    size_t b = n - i < KREC_BLOCK ? n - i : KREC_BLOCK;
    if ((st = slem_kproj_run(kp, x + i * d, b, name, i + 1, err)) == SLEM_OK)
      slem_kproj_descriptors_f64(kp, y + i * r);
  }
  slem_kproj_free(kp);
  slem_cache_free(view);
  return st;
}

int slem_krec_check(const char *kernel, size_t depth, SlemError *err) {
  SlemKernel k;
  int st = slem_kernel_parse(&k, kernel, err);
  if (st != SLEM_OK) return st;
  if (depth < 2) return slem_error(err, SLEM_EINVAL, "a kernel-recursive cache has 2 stages or more");
  if (slem_kernel_needs_histograms(&k))
    return slem_error(err, SLEM_EINVAL, "--depth %zu is not for the %s kernel: it needs "
                      "histograms (values >= 0), and stage 2 takes stage 1's descriptors, "
                      "whose values can be negative", depth, slem_kernel_name(&k));
  return SLEM_OK;
}

int slem_krec_write_cache(const char *path, const double *x, size_t n, size_t d,
                          const char *name, const SlemKRecOpts *o,
                          const SlemProvenance *prov, size_t *rank, double *residual,
                          SlemPhases *ph, SlemError *err) {
  SlemPhases none = {0};
  size_t depth = o->depth, ds = d;
  double t = slem_now();
  SlemKernelStats **ks = calloc(depth ? depth : 1, sizeof *ks);
  double **prep = calloc(depth ? depth : 1, sizeof *prep);  /* stage inputs, prepared */
  double **raw = calloc(depth ? depth : 1, sizeof *raw);    /* stage inputs 2.. (y of s - 1) */
  const SlemKernelInfo **info = calloc(depth ? depth : 1, sizeof *info);
  SlemKernelSections *sec = calloc(depth ? depth : 1, sizeof *sec);
  const SlemKernelSections **secp = calloc(depth ? depth : 1, sizeof *secp);
  int st = SLEM_OK;
  if (!ks || !prep || !raw || !info || !sec || !secp) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  if (!ph) ph = &none;
  if ((st = slem_krec_check(o->kernel, depth, err)) != SLEM_OK) goto done;
  for (size_t s = 0; s < depth; s++) {
    const double *in = s == 0 ? x : raw[s];
    char sname[512];
    SlemKernel k;
    double median = -1;
    if (s == 0)
      snprintf(sname, sizeof sname, "%s", name);
    else
      snprintf(sname, sizeof sname, "%s (their stage %zu descriptors)", name, s);
    if ((st = slem_kernel_parse(&k, o->kernel, err)) != SLEM_OK) goto done;
    if (!(prep[s] = malloc((n ? n : 1) * ds * sizeof **prep))) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives of dimension %zu", n,
                      ds);
      goto done;
    }
    memcpy(prep[s], in, n * ds * sizeof **prep);
    if ((st = slem_kernel_prepare(&k, prep[s], n, ds, sname, 1, err)) != SLEM_OK) goto done;
    if (k.gamma_relative &&
        (st = slem_kernel_estimate_gamma(&k, &median, prep[s], n, ds, o->sample, o->seed, err)))
      goto stage_error;
    slem_phases_lap(&ph->compute, &t);
    st = slem_kernel_stats_new(&ks[s], &k, prep[s], n, ds, o->rank, o->tol, o->lambda,
                               o->lambda_rel, o->factor, 0, err);
    slem_phases_lap(&ph->factor, &t);
    if (st != SLEM_OK) goto stage_error;
    ks[s]->info.gamma_median = median;
    ks[s]->info.seed = o->seed;
    info[s] = &ks[s]->info;
    sec[s] = (SlemKernelSections){ks[s]->pivots, ks[s]->lp, ks[s]->mu_b, ks[s]->ginv,
                                  ks[s]->negs, ks[s]->proj, NULL};
    secp[s] = &sec[s];
    if (s + 1 < depth) {
      size_t r = ks[s]->info.r;
      if (!(raw[s + 1] = malloc(n * r * sizeof **raw))) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory for %zu descriptors of %zu values", n,
                        r);
        goto done;
      }
      st = stage_descriptors(raw[s + 1], ks[s], in, n, ds, sname, err);
      slem_phases_lap(&ph->compute, &t);
      if (st != SLEM_OK) goto done;
      ds = r;
    }
    continue;
  stage_error: {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err->msg);
      slem_error(err, st, "stage %zu of %zu: %s", s + 1, depth, msg);
      goto done;
    }
  }
  *rank = ks[depth - 1]->info.r;
  *residual = ks[depth - 1]->info.residual_trace;
  t = slem_now();
  st = slem_cache_write_kernel_recursive(path, d, n, depth, info, secp, prov, err);
  slem_phases_lap(&ph->write, &t);
done:
  for (size_t s = 0; s < depth && ks; s++) slem_kernel_stats_free(ks[s]);
  for (size_t s = 0; s < depth && prep; s++) free(prep[s]);
  for (size_t s = 0; s < depth && raw; s++) free(raw[s]);
  free(ks);
  free(prep);
  free(raw);
  free(info);
  free(sec);
  free(secp);
  return st;
}

/* Kernel recursive SLEM (var_krec.h) from a kernel-recursive cache (slem-negstats --kernel SPEC
 * --depth K): the last stage's explicit descriptors only, as the linear recursive encoder
 * gives unit descriptors only. */

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

/* -K SPEC --depth K: kernel recursive SLEM, every negative held. */
static int takes_krec(const SlemNegstatsOpts *o) { return o->kernel && o->depth > 1; }

static int fit_krec(const char *output, const char *const *inputs, size_t npaths,
                    const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemKernel k;
  double *x = NULL;
  size_t n = 0, d = 0;
  int st = slem_kernel_stats_read_negatives(&k, &x, &n, &d, inputs, npaths, o, &res->phases,
                                            err);
  if (st == SLEM_OK) {
    SlemProvenance prov = {"slem-negstats", inputs, npaths, NULL};
    SlemKRecOpts ko = {o->kernel, o->depth, o->rank, o->tol, o->lambda, o->lambda_rel,
                       o->factor, o->sample, o->seed};
    (void)k;
    if (o->couple)
      st = slem_error(err, SLEM_EINVAL, "--couple is for a kernel cache of depth 1");
    else
      st = slem_krec_write_cache(output, x, n, d, npaths == 1 ? inputs[0] : "negatives", &ko,
                                 &prov, &res->rank, &res->residual_trace, &res->phases, err);
    res->n = n;
    res->d = d;
    res->rank_asked = o->factor == SLEM_FACTOR_FULL ? n : o->rank < n ? o->rank : n;
  }
  free(x);
  return st;
}

const SlemFitOps slem_fit_krec = {"kernel-recursive", takes_krec, NULL, NULL, NULL, fit_krec, NULL};

extern const SlemCacheKindOps slem_kind_krec;
extern const SlemEncoderOps slem_enc_krec;
const SlemVariant slem_variant_krec = {
    "kernel-recursive",
    "stages of kernel SLEM (slem-negstats -K SPEC --depth K)",
    &slem_kind_krec, &slem_fit_krec, &slem_enc_krec, NULL, NULL};

/* Recursive SLEM (slem-negstats --depth K): its encoder, its fit and its line in the table
 * of variants (variant.h); its kind of cache is kind_recursive.c's "recursive", the stages'
 * computations recursive.c's (the [nu; beta] variant, var_nubeta.c, shares them).
 *
 * The encoder: recursive SLEM (recursive.h) from a recursive cache (slem-negstats --depth
 * K): unit descriptors only. */
#include "encoder.h"
#include "fit.h"
#include "recursive.h"
#include "kind_recursive.h"
#include "variant.h"

static int accepts(const SlemCache *cache, const SlemEncStreamOpts *o, SlemError *err) {
  if (!cache || o->esvm) return SLEM_ENC_NOT_MINE; /* ESVM negatives: var_esvm.c */
  if (!slem_cache_recursive(cache) || slem_cache_recursive(cache)->nu_beta)
    return SLEM_ENC_NOT_MINE; /* [nu; beta] stages: var_nubeta.c */
  if (o->mode == SLEM_ENCODE_CLASSIFIER || o->alpha_set) {
    slem_error(err, SLEM_EINVAL, "%s is a recursive cache: it gives unit descriptors only "
               "(no --%s)", slem_cache_path(cache), o->alpha_set ? "alpha" : "classifier");
    return SLEM_ENC_REFUSED;
  }
  return slem_encoder_refuse_kernel_options(cache, o, err);
}

static int new_(void **self, const SlemCache *cache, const SlemEncStreamOpts *o,
                size_t max_rows, SlemError *err) {
  return slem_recursive_new((SlemRecursive **)self, cache, max_rows, err);
}

static size_t out_dim(const void *self, int *f64) {
  *f64 = 0;
  return slem_recursive_out_dim(self);
}

static int run(void *self, void *y, const double *x, size_t b, const char *name,
               uint64_t first_record, SlemError *err) {
  slem_recursive_run(self, y, x, b);
  return SLEM_OK;
}

static void counts(const void *self, SlemEncStreamResult *res) {
  res->zeros += slem_recursive_zeros(self);
}

static void count_rows(void *self, size_t lo, size_t hi) {
  slem_recursive_count_rows(self, lo, hi);
}

static void free_(void *self) { slem_recursive_free(self); }

const SlemEncoderOps slem_enc_recursive = {"recursive", accepts, new_, out_dim, run, counts,
                                           NULL, free_,
    NULL, NULL, 1, count_rows};

/* --depth K (K > 1, linear): the stages, each on the negatives encoded by the ones before. */
static int takes_recursive(const SlemNegstatsOpts *o) { return o->depth > 1; }

static int fit_recursive(const char *output, const char *const *inputs, size_t n,
                         const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemProvenance prov = {"slem-negstats", inputs, n, NULL};
  int st = slem_recursive_check_inputs(inputs, n, o->format, &o->arrays, err);
  if (st == SLEM_OK)
    st = slem_recursive_write_cache(output, inputs, n, o->format, &o->arrays, o->block,
                                    o->skip_nonfinite, o->depth, o->lambda, o->lambda_rel,
                                    &prov, &res->phases, err);
  return st;
}

const SlemFitOps slem_fit_recursive = {"recursive", takes_recursive, NULL, NULL, NULL,
                                       fit_recursive, NULL};

extern const SlemCacheKindOps slem_kind_recursive;
extern const SlemEncoderOps slem_enc_recursive;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec recursive_fit_options[] = {
    {.name = "depth", .metavar = "K", .type = SLEM_OPT_WHOLE, O(depth), .min = 1, .max = 1024,
     .help = "recursive SLEM: K stages, stage s + 1 computed on the\n"
             "negatives encoded by stages 1..s, each with the same\n"
             "--lambda-rel of its own trace (default 1; K > 1 reads\n"
             "the negative files K times, and takes no partial\n"
             "caches); with --kernel, K stages of kernel SLEM, each\n"
             "on the negatives' explicit descriptors of the stages\n"
             "before (same spec, factor and rank; --lambda or\n"
             "--lambda-rel per stage)"},
    {0}};
#undef O

const SlemVariant slem_variant_recursive = {
    "recursive",
    "stages of linear SLEM, each on the negatives encoded by the ones before (slem-negstats "
    "--depth K)",
    &slem_kind_recursive, &slem_fit_recursive, &slem_enc_recursive, recursive_fit_options, NULL};

#include "kind_kernel.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"
#include "vecs.h"
#include "variant.h"

const SlemCacheKernel *slem_cache_kernel(const SlemCache *self) {
  return self->kind_data && strcmp(self->kind, "kernel") == 0 ? self->kind_data : NULL;
}

const SlemCacheKernelRecursive *slem_cache_kernel_recursive(const SlemCache *self) {
  return self->kind_data && strcmp(self->kind, "kernel-recursive") == 0 ? self->kind_data
                                                                         : NULL;
}

/* The name of a kernel section: name itself, or name.suffix for a stage of a
 * kernel-recursive cache (suffix its number). */
static const char *kname(char *buf, size_t size, const char *name, const char *suffix) {
  if (!suffix) return name;
  snprintf(buf, size, "%.15s.%.15s", name, suffix);  /* names of 9 letters, stages < 1025 */
  return buf;
}

/* A kernel cache's members (in json) and sections (named with suffix, NULL for none). */
static int read_kernel_sections(SlemCache *c, SlemCacheKernel *kc, const cJSON *json,
                                const char *suffix, SlemError *err) {
  const char *path = slem_cache_path(c);
  char nb[64];
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(json, "kernel");
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  uint64_t r;
  int st;
  SlemError kerr;
  if (!cJSON_IsString(spec) || slem_kernel_parse(&kc->kernel, spec->valuestring, &kerr) != SLEM_OK ||
      kc->kernel.gamma_relative)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid kernel", path);
  if (slem_cache_member_uint(json, "r", c->n < SLEM_DIM_MAX ? c->n : SLEM_DIM_MAX, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..n)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble > 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda (> 0)", path);
  kc->r = r;
  slem_cache_set_rank(c, r);
  kc->lambda = lam->valuedouble;
  {
    const cJSON *fac = cJSON_GetObjectItemCaseSensitive(json, "factor");
    const cJSON *cpl = cJSON_GetObjectItemCaseSensitive(json, "couple");
    int f = fac ? (cJSON_IsString(fac) ? slem_kernel_factor_parse(fac->valuestring) : -1) : SLEM_FACTOR_ICD;
    if (f < 0)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid factor (icd, kpca, "
                        "full)", path);
    if (cpl && !cJSON_IsBool(cpl))
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's couple is not true or false",
                        path);
    kc->factor = (SlemKernelFactor)f;
    kc->couple = cJSON_IsTrue(cpl);
  }
  if (kc->factor == SLEM_FACTOR_KPCA) {
    if ((st = slem_cache_section(c, kname(nb, sizeof nb, "proj", suffix), r, c->n, &kc->proj, err)))
      return st;
  } else {
    if ((st = slem_cache_section(c, kname(nb, sizeof nb, "pivots", suffix), r, c->d, &kc->pivots, err)) ||
        (st = slem_cache_section(c, kname(nb, sizeof nb, "lp", suffix), r, r, &kc->lp, err)))
      return st;
    /* the triangular solves divide by the diagonal of lp */
    for (uint64_t i = 0; i < r; i++)
      if (!(kc->lp[i * r + i] > 0))
        return slem_error(err, SLEM_EFORMAT, "%s: section '%s' is not a Cholesky factor", path,
                          kname(nb, sizeof nb, "lp", suffix));
  }
  if ((kc->factor == SLEM_FACTOR_KPCA || kc->couple) &&
      (st = slem_cache_section(c, kname(nb, sizeof nb, "negatives", suffix), c->n, c->d, &kc->negs, err)))
    return st;
  if (kc->couple &&
      (st = slem_cache_section(c, kname(nb, sizeof nb, "bneg", suffix), c->n, r, &kc->bneg, err)))
    return st;
  if ((st = slem_cache_section(c, kname(nb, sizeof nb, "mu", suffix), r, 0, &kc->mu, err)) ||
      (st = slem_cache_section(c, kname(nb, sizeof nb, "ginv", suffix), r, r, &kc->ginv, err)))
    return st;
  return SLEM_OK;
}

/* c's kernel data from json's members and its sections named with suffix. */
static int read_kernel_data(SlemCache *c, const cJSON *json, const char *suffix,
                            SlemError *err) {
  SlemCacheKernel *kc = calloc(1, sizeof *kc);
  int st;
  if (!kc) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = read_kernel_sections(c, kc, json, suffix, err)) != SLEM_OK) {
    free(kc);
    return st;
  }
  slem_cache_set_kind(c, kc, kc, free);
  return SLEM_OK;
}

/* The kernel kind: its kernel, rank, lambda and four sections. */
static int read_kernel(SlemCache *c, const double *mu, SlemError *err) {
  (void)mu;
  return read_kernel_data(c, slem_cache_header(c), NULL, err);
}

const SlemCacheKindOps slem_kind_kernel = {"kernel", 0, read_kernel};

/* The kernel-recursive data: a kernel cache per stage, views over the cache's sections. */
typedef struct Stages {
  SlemCacheKernelRecursive krec;
  SlemCache **stage;
  size_t n;
} Stages;

static void stages_free(void *q) {
  Stages *p = q;
  if (!p) return;
  for (size_t s = 0; s < p->n; s++) slem_cache_free(p->stage[s]);
  free(p->stage);
  free(p);
}

/* depth >= 2 and one object per stage in "stages" (the members of a kernel cache and its
 * input dimension d: the cache's d, then the rank of the stage before), each read as a
 * kernel cache whose sections end in .S (S = 1..depth). */
static int read_stages(SlemCache *c, Stages *p, SlemError *err) {
  const char *path = slem_cache_path(c);
  const cJSON *json = slem_cache_header(c);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(json, "stages");
  uint64_t depth, sd;
  size_t d = c->d;
  if (slem_cache_member_uint(json, "depth", 1024, &depth) != 0 || depth < 2)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid depth (2..1024)", path);
  if (!cJSON_IsArray(stages) || (uint64_t)cJSON_GetArraySize(stages) != depth)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no object per stage", path);
  if (!(p->stage = calloc(depth, sizeof *p->stage)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (uint64_t s = 0; s < depth; s++) {
    const cJSON *o = cJSON_GetArrayItem(stages, (int)s);
    char name[4096], suffix[32];
    SlemCache *st;
    int status;
    snprintf(name, sizeof name, "%s (stage %" PRIu64 ")", path, s + 1);
    snprintf(suffix, sizeof suffix, "%" PRIu64, s + 1);
    if ((status = slem_cache_view_new(&st, name, "kernel", d, c->n, c, err)) != SLEM_OK)
      return status;
    p->stage[p->n++] = st;
    if (!cJSON_IsObject(o) || slem_cache_member_uint(o, "d", SLEM_DIM_MAX, &sd) != 0 || sd != d)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no input dimension d = %zu",
                        name, d);
    if ((status = read_kernel_data(st, o, suffix, err)))
      return status;
    d = slem_cache_kernel(st)->r;  /* the next stage's input: this one's descriptors */
  }
  p->krec.depth = depth;
  p->krec.stage = (const SlemCache *const *)p->stage;
  return SLEM_OK;
}

static int read_kernel_recursive(SlemCache *c, const double *mu, SlemError *err) {
  Stages *p = calloc(1, sizeof *p);
  int st;
  (void)mu;
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = read_stages(c, p, err)) != SLEM_OK) {
    stages_free(p);
    return st;
  }
  slem_cache_set_kind(c, &p->krec, p, stages_free);
  return SLEM_OK;
}

const SlemCacheKindOps slem_kind_krec = {"kernel-recursive", 0, read_kernel_recursive};

/* A kernel cache's members, in the order of its JSON header. */
static void kernel_members(cJSON *meta, const SlemKernelInfo *info) {
  char spec[256];
  slem_kernel_format(info->kernel, spec, sizeof spec);
  cJSON_AddStringToObject(meta, "kernel", spec);
  if (info->gamma_median >= 0) {
    cJSON_AddNumberToObject(meta, "gamma_median_sq_distance", info->gamma_median);
    cJSON_AddNumberToObject(meta, "gamma_seed", (double)info->seed);
  }
  cJSON_AddNumberToObject(meta, "r", (double)info->r);
  cJSON_AddNumberToObject(meta, "trace_k", info->trace_k);
  cJSON_AddNumberToObject(meta, "residual_trace", info->residual_trace);
  cJSON_AddNumberToObject(meta, "lambda", info->lambda);
  if (info->lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", info->lambda_rel);
  cJSON_AddNumberToObject(meta, "trace_sigma_b", info->trace_sigma_b);
  cJSON_AddStringToObject(meta, "factor", slem_kernel_factor_name(info->factor));
  if (info->couple) cJSON_AddBoolToObject(meta, "couple", 1);
}

/* A kernel cache's sections into sec (6 at most), their names name.suffix in names (6
 * entries) unless suffix is NULL; returns their number. */
static size_t kernel_sections(SlemCacheSection *sec, char (*names)[32], const char *suffix, size_t d,
                              uint64_t n, const SlemKernelInfo *info,
                              const SlemKernelSections *ks) {
  size_t r = info->r, nsec = 0;
#define KSEC(nm, data, rows, cols) \
  sec[nsec] = (SlemCacheSection){kname(names[nsec], sizeof names[nsec], nm, suffix), data, rows, cols}, \
  nsec++
  if (info->factor == SLEM_FACTOR_KPCA) {
    KSEC("negatives", ks->negs, n, d);
    KSEC("proj", ks->proj, r, n);
  } else {
    KSEC("pivots", ks->pivots, r, d);
    KSEC("lp", ks->lp, r, r);
    if (info->couple) KSEC("negatives", ks->negs, n, d);
  }
  if (info->couple) KSEC("bneg", ks->bneg, n, r);
  KSEC("mu", ks->mu_b, r, 0);
  KSEC("ginv", ks->ginv, r, r);
#undef KSEC
  return nsec;
}

int slem_cache_write_kernel(const char *path, size_t d, uint64_t n, const SlemKernelInfo *info,
                            const SlemKernelSections *ks, const SlemProvenance *prov,
                            SlemError *err) {
  cJSON *meta = cJSON_CreateObject();
  SlemCacheSection sec[6];
  char names[6][32];
  size_t nsec;
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  kernel_members(meta, info);
  nsec = kernel_sections(sec, names, NULL, d, n, info, ks);
  status = slem_cache_write(path, "kernel", d, n, meta, sec, nsec, prov, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_kernel_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                                      const SlemKernelInfo *const *info,
                                      const SlemKernelSections *const *ks,
                                      const SlemProvenance *prov, SlemError *err) {
  cJSON *meta = cJSON_CreateObject(), *stages;
  SlemCacheSection *sec = calloc(6 * depth, sizeof *sec);
  char (*names)[32] = calloc(6 * depth, sizeof *names);
  size_t nsec = 0, ds = d;
  int status;
  if (!meta || !sec || !names || depth < 2) {
    cJSON_Delete(meta);
    free(sec);
    free(names);
    return depth < 2 ? slem_error(err, SLEM_EINVAL, "a kernel-recursive cache has 2 stages or more")
                     : slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  cJSON_AddNumberToObject(meta, "depth", (double)depth);
  stages = cJSON_AddArrayToObject(meta, "stages");
  for (size_t s = 0; s < depth; s++) {
    cJSON *o = cJSON_CreateObject();
    char suffix[32];
    cJSON_AddNumberToObject(o, "d", (double)ds);
    kernel_members(o, info[s]);
    cJSON_AddItemToArray(stages, o);
    snprintf(suffix, sizeof suffix, "%zu", s + 1);
    nsec += kernel_sections(sec + nsec, names + nsec, suffix, ds, n, info[s], ks[s]);
    ds = info[s]->r;
  }
  status = slem_cache_write(path, "kernel-recursive", d, n, meta, sec, nsec, prov, err);
  cJSON_Delete(meta);
  free(sec);
  free(names);
  return status;
}

int slem_cache_kernel_view(SlemCache **self, const char *name, size_t d, uint64_t n,
                           const SlemKernelInfo *info, const SlemKernelSections *ks,
                           SlemError *err) {
  SlemCache *c;
  SlemCacheKernel *kc;
  int st;
  *self = NULL;
  if ((st = slem_cache_view_new(&c, name, "kernel", d, n, NULL, err)) != SLEM_OK) return st;
  if (!(kc = calloc(1, sizeof *kc))) {
    slem_cache_free(c);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  kc->kernel = *info->kernel;
  kc->r = info->r;
  slem_cache_set_rank(c, info->r);
  kc->lambda = info->lambda;
  kc->factor = info->factor;
  kc->couple = info->couple;
  kc->mu = ks->mu_b;
  kc->ginv = ks->ginv;
  kc->pivots = ks->pivots;
  kc->lp = ks->lp;
  kc->negs = ks->negs;
  kc->proj = ks->proj;
  kc->bneg = ks->bneg;
  slem_cache_set_kind(c, kc, kc, free);
  *self = c;
  return SLEM_OK;
}

extern const SlemFitOps slem_fit_kernel;
extern const SlemEncoderOps slem_enc_kernel;
#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
/* -K: a kernel spec that slem_kernel_parse() takes, kept as given. */
static int set_kernel(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemKernel k;
  SlemError e;
  if (slem_kernel_parse(&k, value, &e) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: %s", s->name, e.msg);
  ((SlemNegstatsOpts *)opts)->kernel = value;
  return SLEM_OK;
}

static int set_factor(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  int factor = slem_kernel_factor_parse(value);
  if (factor < 0)
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not icd, kpca or full", s->name, value);
  ((SlemNegstatsOpts *)opts)->factor = (SlemKernelFactor)factor;
  return SLEM_OK;
}

static const SlemOptSpec kernel_fit_options[] = {
    {.name = "kernel", .key = 'K', .metavar = "SPEC", .type = SLEM_OPT_CUSTOM, O(kernel),
     .parse = set_kernel,
     .help = "kernel SLEM: linear, poly:gamma=G,c=C,p=P, rbf:gamma=G\n"
             "or rbf:g=R (gamma = R / median squared distance,\n"
             "default g=1), exp:gamma=G or exp:g=R (exp(-G |x - y|),\n"
             "G = R / median distance), quad:gamma=G (x.y + G\n"
             "(x.y)^2), chi2, intersection or intersection:gamma=G\n"
             "(sum min(x_i^G, y_i^G)), hellinger (sum sqrt(x_i\n"
             "y_i)), hellinger-dot (sqrt|x.y|, the authors'\n"
             "incomplete_chol.m 'hellinger')"},
    {.name = "factor", .metavar = "F", .type = SLEM_OPT_CUSTOM, O(factor), .parse = set_factor,
     .given = SLEM_NEGSTATS_GIVEN_FACTOR,
     .help = "kernel: icd (pivoted incomplete Cholesky, the\n"
             "default), kpca (the top R eigenpairs of K), full\n"
             "(Cholesky to the numerical rank; no --rank, --tol)"},
    {.name = "couple", .type = SLEM_OPT_FLAG, O(couple),
     .help = "kernel: also keep the negatives and the factor, for\n"
             "slem-encode --couple and slem-match --couple"},
    {.name = "rank", .metavar = "R", .type = SLEM_OPT_WHOLE, O(rank), .min = 1, .max = 1L << 20,
     .given = SLEM_NEGSTATS_GIVEN_RANK, .help = "kernel: rank of the factorisation (default 256)"},
    {.name = "tol", .metavar = "T", .type = SLEM_OPT_REAL, O(tol), .real = SLEM_OPT_UNIT,
     .given = SLEM_NEGSTATS_GIVEN_TOL,
     .help = "kernel: stop when the residual trace is T * trace(K)\n"
             "(default 0)"},
    {.name = "sample", .metavar = "M", .type = SLEM_OPT_WHOLE, O(sample), .min = 2,
     .max = 100000,
     .help = "kernel: negatives sampled for the median distance\n"
             "(default 1000)"},
    {.name = "seed", .metavar = "S", .type = SLEM_OPT_WHOLE, O(seed), .min = 0,
     .max = 0x7fffffffL, .help = "kernel: seed of that sample (default 1)"},
    {0}};
#undef O
#define O(f) SLEM_OPT_FIELD(SlemEncStreamOpts, f)

/* --couple [MODE]: a coupling's name (vectypes.h); without one, the exact coupling. */
static int set_couple(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  int c = value ? slem_couple_parse(value) : SLEM_COUPLE_EXACT;
  if (c < 0)
    return slem_error(err, SLEM_EINVAL, "--%s: unknown coupling '%s' (exact, authors)", s->name,
                      value);
  ((SlemEncStreamOpts *)opts)->couple = c;
  return SLEM_OK;
}

static const SlemOptSpec kernel_encode_options[] = {
    {.name = "couple", .metavar = "[MODE]", .type = SLEM_OPT_CUSTOM, O(couple),
     .parse = set_couple,
     .help = "kernel caches made with slem-negstats --couple:\n"
             "couple the negatives with each vector (the ICD\n"
             "branch of the authors' slem_similarity.m); costs n\n"
             "(d + r) per vector. MODE exact (default): the\n"
             "coupled exemplars; authors: slem_similarity.m's\n"
             "score (1 / lambda^2, uncoupled N)"},
    {.name = "projections", .type = SLEM_OPT_FLAG, O(projections),
     .help = "kernel caches: write what slem-match -c computes of\n"
             "each database vector (its features, v, z, N), in\n"
             "double, to a container (.slem), so that slem-match\n"
             "reads them instead"},
    {.name = "coordinates", .type = SLEM_OPT_FLAG, O(coordinates),
     .help = "kernel caches: write v, the coordinates of each\n"
             "vector in the factor's space (r values), for\n"
             "slem-match --affine"},
    {0}};
#undef O

const SlemVariant slem_variant_kernel = {
    "kernel",
    "kernel SLEM: explicit descriptors, projections, the exact similarity (slem-negstats -K "
    "SPEC)",
    &slem_kind_kernel, &slem_fit_kernel, &slem_enc_kernel, kernel_fit_options, kernel_encode_options};

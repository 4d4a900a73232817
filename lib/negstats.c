#define _POSIX_C_SOURCE 200809L
#include "negstats.h"

#include "recursive.h"
#include "whiten.h"

#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "kernel.h"
#include "kslem.h"
#include "prefetch.h"
#include "stats.h"

void slem_negstats_opts_init(SlemNegstatsOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->format = SLEM_FMT_AUTO;
  opts->lambda = -1;
  opts->lambda_rel = 1;
  opts->rank = 256;
  opts->sample = 1000;
  opts->seed = 1;
}

static void progress(const SlemNegstatsOpts *o, uint64_t n) {
  if (o->progress) o->progress(o->progress_ctx, n);
}

/* A partial cache among the inputs: merged into *stats. */
static int merge_partial(SlemStats **stats, const char *path, SlemError *err) {
  SlemCache *c = NULL;
  int st = slem_cache_read(&c, path, err);
  if (st) return st;
  if (c->kind != SLEM_CACHE_PARTIAL)
    st = slem_error(err, SLEM_EFORMAT, "%s: only partial caches (--partial) can be merged", path);
  else if (!*stats)
    st = slem_stats_new(stats, c->d, err);
  if (st == SLEM_OK && slem_stats_dim(*stats) != c->d)
    st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                    path, c->d, slem_stats_dim(*stats));
  if (st == SLEM_OK) slem_stats_merge(*stats, c->n, c->mu, c->scatter);
  slem_cache_free(c);
  return st;
}

/* One input: a partial cache (merged) or a vector file (streamed, the next block read while
 * the current one is accumulated). */
static int add_input(SlemStats **stats, const char *path, const SlemNegstatsOpts *o,
                     uint64_t *row, uint64_t lo, uint64_t hi, SlemNegstatsResult *res,
                     SlemError *err) {
  SlemVecReader *r = NULL;
  SlemPrefetch *pf = NULL;
  int st;
  if (strcmp(path, "-") != 0 && o->format == SLEM_FMT_AUTO && slem_cache_sniff(path))
    return merge_partial(stats, path, err);
  st = slem_vecreader_open(&r, path, o->format, err);
  if (st) return st;
  slem_vecreader_skip_nonfinite(r, o->skip_nonfinite);
  if (!*stats && (st = slem_stats_new(stats, slem_vecreader_dim(r), err)) != SLEM_OK) goto done;
  if (slem_stats_dim(*stats) != slem_vecreader_dim(r)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                    slem_vecreader_name(r), slem_vecreader_dim(r), slem_stats_dim(*stats));
    goto done;
  }
  st = slem_prefetch_new(&pf, r, o->block ? o->block : slem_block_rows(slem_vecreader_dim(r)), 0,
                         err);
  if (st) goto done;
  for (;;) {
    void *rows;
    size_t got;
    size_t skip, d = slem_vecreader_dim(r);
    st = slem_prefetch_next(pf, &rows, &got, err);
    if (st || got == 0) break;
    /* the part of the block inside the shard: global rows [lo, hi) */
    skip = *row < lo ? (size_t)(lo - *row < got ? lo - *row : got) : 0;
    *row += got;
    if (*row > hi) got -= (size_t)(*row - hi < got ? *row - hi : got);
    if (got > skip) slem_stats_add(*stats, (double *)rows + skip * d, got - skip);
    progress(o, slem_stats_count(*stats));
  }
done:
  slem_prefetch_free(pf); /* before the reader it reads */
  if (st == SLEM_OK && slem_vecreader_skipped(r) > 0) {
    res->skipped += slem_vecreader_skipped(r);
    res->skipped_in = path;
  }
  slem_vecreader_free(r);
  return st;
}

/* The global rows [lo, hi) of the shard among the rows of all the inputs, which must be
 * vector files whose number of vectors their headers or sizes tell. */
static int shard_window(const char *const *inputs, size_t n, const SlemNegstatsOpts *o,
                        uint64_t *lo, uint64_t *hi, SlemError *err) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    SlemVecReader *r = NULL;
    int64_t count;
    int st;
    if (strcmp(inputs[i], "-") != 0 && o->format == SLEM_FMT_AUTO && slem_cache_sniff(inputs[i]))
      return slem_error(err, SLEM_EINVAL, "%s: --shard cuts vector files, not partial caches",
                        inputs[i]);
    if ((st = slem_vecreader_open(&r, inputs[i], o->format, err)) != SLEM_OK) return st;
    count = slem_vecreader_count(r);
    if (count < 0 || !slem_vecreader_seekable(r)) {
      st = slem_error(err, SLEM_EINVAL, "%s: the number of vectors is not known before reading "
                      "it (text, or a pipe), so it cannot be cut into shards",
                      slem_vecreader_name(r));
      slem_vecreader_free(r);
      return st;
    }
    total += (uint64_t)count;
    slem_vecreader_free(r);
  }
  slem_shard_range(&o->shard, total, lo, hi);
  return SLEM_OK;
}

static int linear(const char *output, const char *const *inputs, size_t n,
                  const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemStats *stats = NULL;
  SlemProvenance prov = {"slem-negstats", inputs, n};
  double *ainv = NULL, used;
  uint64_t row = 0, lo = 0, hi = UINT64_MAX;
  int st = SLEM_OK;
  if (o->depth > 1) {
    for (size_t i = 0; i < n; i++)
      if (strcmp(inputs[i], "-") != 0 && o->format == SLEM_FMT_AUTO && slem_cache_sniff(inputs[i]))
        return slem_error(err, SLEM_EINVAL, "%s: a partial cache cannot make a recursive cache: "
                          "stage 2 needs the negatives themselves", inputs[i]);
    return slem_recursive_write_cache(output, inputs, n, o->format, o->block, o->skip_nonfinite,
                                      o->depth, o->lambda, o->lambda_rel, &prov, err);
  }
  if (o->shard.count > 0 && (st = shard_window(inputs, n, o, &lo, &hi, err)) != SLEM_OK) return st;
  for (size_t i = 0; i < n && st == SLEM_OK; i++)
    st = add_input(&stats, inputs[i], o, &row, lo, hi, res, err);
  if (st) goto done;
  res->n = slem_stats_count(stats);
  res->d = slem_stats_dim(stats);
  if (res->n == 0 && !o->partial) {
    st = slem_error(err, SLEM_EINVAL, "no negatives were given (every record was skipped)");
    goto done;
  }
  if (o->partial) {
    st = slem_cache_write_partial(output, res->d, res->n, slem_stats_mean(stats),
                                  slem_stats_scatter(stats), &prov, err);
    goto done;
  }
  if (o->eigen || o->pca) {
    st = slem_whiten_write_cache(output, stats, o->lambda, o->lambda >= 0 ? -1 : o->lambda_rel,
                                 o->pca, &prov, err);
    goto done;
  }
  if (!(ainv = malloc(res->d * res->d * sizeof *ainv))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", res->d, res->d);
    goto done;
  }
  st = slem_stats_inverse(stats, ainv, &used, o->lambda, o->lambda_rel, err);
  if (st == SLEM_OK) {
    SlemLinearInfo info = {used, o->lambda >= 0 ? -1 : o->lambda_rel, slem_stats_trace(stats),
                           slem_stats_rcond(stats)};
    st = slem_cache_write_linear(output, res->d, res->n, &info, slem_stats_mean(stats), ainv,
                                 &prov, err);
  }
done:
  free(ainv);
  slem_stats_free(stats);
  return st;
}

/* Reads every vector of the inputs into one growing array (kernel SLEM needs them all). */
static int read_all(double **x, size_t *n, size_t *d, const char *const *paths, size_t npaths,
                    const SlemNegstatsOpts *o, SlemError *err) {
  size_t cap = 0, block = o->block ? o->block : 4096;
  int st = SLEM_OK;
  *x = NULL;
  *n = *d = 0;
  for (size_t i = 0; i < npaths && st == SLEM_OK; i++) {
    SlemVecReader *r = NULL;
    if (strcmp(paths[i], "-") != 0 && o->format == SLEM_FMT_AUTO && slem_cache_sniff(paths[i]))
      return slem_error(err, SLEM_EINVAL, "%s: a kernel cache is built from vectors, not from "
                        "partial caches", paths[i]);
    st = slem_vecreader_open(&r, paths[i], o->format, err);
    if (st) break;
    if (*d == 0) *d = slem_vecreader_dim(r);
    if (slem_vecreader_dim(r) != *d)
      st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), *d);
    while (st == SLEM_OK) {
      size_t got;
      if (*n + block > cap) {
        size_t ncap = cap ? 2 * cap : 4 * block;
        double *p = realloc(*x, ncap * *d * sizeof *p);
        if (!p) {
          st = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives of dimension %zu",
                          ncap, *d);
          break;
        }
        *x = p;
        cap = ncap;
      }
      st = slem_vecreader_read(r, *x + *n * *d, block, &got, err);
      if (st || got == 0) break;
      *n += got;
      progress(o, *n);
    }
    slem_vecreader_free(r);
  }
  return st;
}

static int kernel(const char *output, const char *const *inputs, size_t npaths,
                  const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemKernel k;
  SlemKernelStats *ks = NULL;
  double *x = NULL, median = -1;
  size_t n = 0, d = 0;
  int st = slem_kernel_parse(&k, o->kernel, err);
  if (st == SLEM_OK) st = read_all(&x, &n, &d, inputs, npaths, o, err);
  if (st == SLEM_OK)
    st = slem_kernel_prepare(&k, x, n, d, npaths == 1 ? inputs[0] : "negatives", 1, err);
  if (st == SLEM_OK && k.gamma_relative)
    st = slem_kernel_estimate_gamma(&k, &median, x, n, d, o->sample, o->seed, err);
  if (st == SLEM_OK)
    st = slem_kernel_stats_new(&ks, &k, x, n, d, o->rank, o->tol, o->lambda, o->lambda_rel, err);
  if (st == SLEM_OK) {
    SlemProvenance prov = {"slem-negstats", inputs, npaths};
    ks->info.gamma_median = median;
    ks->info.seed = o->seed;
    res->n = n;
    res->d = d;
    res->rank = ks->info.r;
    res->rank_asked = o->rank < n ? o->rank : n;
    res->residual_trace = ks->info.residual_trace;
    st = slem_cache_write_kernel(output, d, n, &ks->info, ks->pivots, ks->lp, ks->mu_b, ks->ginv,
                                 &prov, err);
  }
  slem_kernel_stats_free(ks);
  free(x);
  return st;
}

int slem_negstats_run(const char *output, const char *const *inputs, size_t n,
                      const SlemNegstatsOpts *opts, SlemNegstatsResult *res, SlemError *err) {
  memset(res, 0, sizeof *res);
  if (n == 0) return slem_error(err, SLEM_EINVAL, "no negatives");
  if (opts->kernel && opts->partial)
    return slem_error(err, SLEM_EINVAL, "a kernel cache has no partial form");
  if (opts->shard.count > 0 && !opts->partial)
    return slem_error(err, SLEM_EINVAL, "--shard makes partial statistics: add --partial, and "
                      "merge the shards' partial caches into the cache");
  return opts->kernel ? kernel(output, inputs, n, opts, res, err)
                      : linear(output, inputs, n, opts, res, err);
}

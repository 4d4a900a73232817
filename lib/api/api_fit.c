/* Fits of the public API (slem.h): the options of slem-negstats by name, and the fit of an
 * array, of files and of partial caches, each one run of the tool's pipeline
 * (slem_negstats_run(), negstats.h) into a cache held in memory (api_cache.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_cache.h"
#include "api_util.h"
#include "cache.h"
#include "negstats.h"
#include "optspec.h"

/* slem-negstats' default lambda_rel, applied as the tool applies it (after the rules) */
#define DEFAULT_LAMBDA_REL 1.0

struct SlemFitOptions {
  SlemNegstatsOpts o;
  char **texts; /* the copies of the values set, which o borrows */
  size_t ntexts;
};

/* The options as slem-negstats starts from them: lambda_rel unset, so that the rules tell
 * a lambda-rel given from its default. */
static void fit_defaults(SlemNegstatsOpts *o) {
  slem_negstats_opts_init(o);
  o->lambda_rel = -1;
}

int slem_fit_options_new(SlemFitOptions **out, SlemError *err) {
  SlemFitOptions *f;
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_fit_options_new: out is NULL");
  if (!(*out = f = calloc(1, sizeof *f))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  fit_defaults(&f->o);
  return SLEM_OK;
}

void slem_fit_options_free(SlemFitOptions *opts) {
  if (!opts) return;
  for (size_t i = 0; i < opts->ntexts; i++) free(opts->texts[i]);
  free(opts->texts);
  free(opts);
}

int slem_fit_options_set(SlemFitOptions *opts, const char *name, const char *value,
                         SlemError *err) {
  char *copy = NULL, **grown;
  int st;
  if (!opts || !name)
    return slem_error(err, SLEM_EINVAL, "slem_fit_options_set: no %s (a null pointer)",
                      opts ? "name" : "options");
  /* room first, so that nothing can fail once the option is set */
  if (!(grown = realloc(opts->texts, (opts->ntexts + 1) * sizeof *grown)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  opts->texts = grown;
  if (value && !(copy = strdup(value))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_negstats_opts_set(&opts->o, name, copy, err)) != SLEM_OK) {
    free(copy);
    return st;
  }
  if (copy) opts->texts[opts->ntexts++] = copy;
  return SLEM_OK;
}

size_t slem_fit_options_count(void) { return slem_negstats_opts_count(); }

const char *slem_fit_option_name(size_t i) {
  return i < slem_negstats_opts_count() ? slem_negstats_opts_get(i)->name : NULL;
}
const char *slem_fit_option_metavar(size_t i) {
  return i < slem_negstats_opts_count() ? slem_negstats_opts_get(i)->metavar : NULL;
}
const char *slem_fit_option_help(size_t i) {
  return i < slem_negstats_opts_count() ? slem_negstats_opts_get(i)->help : NULL;
}

/* The run of slem-negstats over inputs[0..n) (arrays among them) with opts (NULL: the
 * defaults), its rules checked and its default lambda applied as the tool does, on threads
 * BLAS threads, into *out. */
static int fit_run(SlemCache **out, const char *const *inputs, size_t n,
                   const SlemVecArrays *arrays, const SlemFitOptions *opts, int threads,
                   int merge, SlemError *err) {
  SlemNegstatsOpts o;
  SlemNegstatsResult res;
  SlemApiThreads th;
  int st;
  if (opts) o = opts->o;
  else fit_defaults(&o);
  o.arrays = *arrays;
  o.progress = NULL;
  o.progress_ctx = NULL;
  if (merge) o.format = SLEM_FMT_AUTO; /* partial caches are recognised by their magic */
  if ((st = slem_negstats_check(&o, inputs, n, err)) != SLEM_OK) return st;
  if (o.lambda < 0 && o.lambda_rel < 0) o.lambda_rel = DEFAULT_LAMBDA_REL;
  if ((st = slem_api_threads_begin(&th, threads, err)) != SLEM_OK) return st;
  memset(&res, 0, sizeof res);
  st = slem_api_cache_run(out, inputs, n, &o, merge ? "merged cache" : "fitted cache", &res, err);
  slem_api_threads_end(&th);
  /* slem-negstats' usage error, which the run leaves to it */
  if (st != SLEM_OK && o.pca > 0 && res.d > 0 && o.pca > res.d)
    st = slem_error(err, SLEM_EINVAL, "--pca %zu: more than the dimension %zu of the negatives",
                    o.pca, res.d);
  return st;
}

int slem_fit(SlemCache **out, const SlemArray *x, const SlemFitOptions *opts, int threads,
             SlemError *err) {
  SlemVecReader *r = NULL;
  SlemVecArrays arrays;
  const char *inputs[1];
  int st;
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_fit: out is NULL");
  *out = NULL;
  if ((st = slem_api_array_reader(&r, x, "negatives", err)) != SLEM_OK) return st;
  inputs[0] = slem_vecreader_name(r); /* the array, by this very pointer (vecs.h) */
  arrays = (SlemVecArrays){&r, 1};
  st = fit_run(out, inputs, 1, &arrays, opts, threads, 0, err);
  slem_vecreader_free(r);
  return st;
}

int slem_fit_files(SlemCache **out, const char *const *paths, size_t n,
                   const SlemFitOptions *opts, int threads, SlemError *err) {
  SlemVecArrays none = {NULL, 0};
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_fit_files: out is NULL");
  *out = NULL;
  if (n > 0 && !paths) return slem_error(err, SLEM_EINVAL, "slem_fit_files: paths is NULL");
  for (size_t i = 0; i < n; i++)
    if (!paths[i])
      return slem_error(err, SLEM_EINVAL, "slem_fit_files: paths[%zu] is NULL", i);
  return fit_run(out, paths, n, &none, opts, threads, 0, err);
}

/* Removes every "dir/" from err's message: the parts' temporary files are named by their
 * place in the caller's list alone ("parts[1] (shard 2/2)"). */
static void unname_dir(SlemError *err, const char *dir) {
  char pat[4200], *p;
  size_t len;
  if (!err) return;
  len = (size_t)snprintf(pat, sizeof pat, "%s/", dir);
  while ((p = strstr(err->msg, pat))) memmove(p, p + len, strlen(p + len) + 1);
}

int slem_fit_merge(SlemCache **out, const SlemCache *const *parts, size_t n,
                   const SlemFitOptions *opts, int threads, SlemError *err) {
  SlemVecArrays none = {NULL, 0};
  char dir[4096];
  char **paths = NULL;
  size_t written = 0;
  int st;
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_fit_merge: out is NULL");
  *out = NULL;
  if (n == 0 || !parts)
    return slem_error(err, SLEM_EINVAL, "slem_fit_merge: no partial caches to merge");
  for (size_t i = 0; i < n; i++)
    if (!parts[i]) return slem_error(err, SLEM_EINVAL, "slem_fit_merge: parts[%zu] is NULL", i);
  if ((st = slem_api_cache_tmpdir(dir, sizeof dir, err)) != SLEM_OK) return st;
  if (!(paths = calloc(n, sizeof *paths))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  /* each part as the file it was fitted as, where the pipeline merges partial caches */
  for (size_t i = 0; i < n && st == SLEM_OK; i++) {
    size_t len = strlen(dir) + 32;
    if (!(paths[i] = malloc(len))) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      break;
    }
    snprintf(paths[i], len, "%s/parts[%zu]", dir, i);
    if ((st = slem_save(parts[i], paths[i], err)) == SLEM_OK) written = i + 1;
  }
  if (st == SLEM_OK)
    st = fit_run(out, (const char *const *)paths, n, &none, opts, threads, 1, err);
  if (st != SLEM_OK) unname_dir(err, dir);
done:
  for (size_t i = 0; i < written; i++) unlink(paths[i]);
  for (size_t i = 0; paths && i < n; i++) free(paths[i]);
  free(paths);
  rmdir(dir);
  return st;
}

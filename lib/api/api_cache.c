/* Caches of the public API (slem.h): slem_load(), slem_save(), what a cache tells, and
 * the fit into a private temporary file (api_cache.h). */
#define _POSIX_C_SOURCE 200809L
#include "api_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cachekinds.h"
#include "io.h"

/* $TMPDIR when set and not empty, else /tmp */
static const char *tmp_root(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

int slem_api_cache_tmpdir(char *dir, size_t cap, SlemError *err) {
  const char *root = tmp_root();
  if ((size_t)snprintf(dir, cap, "%s/slem-api.XXXXXX", root) >= cap)
    return slem_error(err, SLEM_EIO, "%s: TMPDIR is too long a path", root);
  if (!mkdtemp(dir))
    return slem_error(err, SLEM_EIO, "%s: cannot make a temporary directory there (TMPDIR): "
                      "%s", root, strerror(errno));
  return SLEM_OK;
}

int slem_api_cache_run(SlemCache **out, const char *const *inputs, size_t n,
                       const SlemNegstatsOpts *o, const char *name, SlemNegstatsResult *res,
                       SlemError *err) {
  const char *root = tmp_root();
  char path[4096];
  SlemNegstatsResult own;
  SlemCache *c = NULL;
  int fd, st;
  *out = NULL;
  if (!res) res = &own;
  if ((size_t)snprintf(path, sizeof path, "%s/slem-fit.XXXXXX", root) >= sizeof path)
    return slem_error(err, SLEM_EIO, "%s: TMPDIR is too long a path", root);
  /* mkstemp's 0600, which the cache written over it keeps (io.h: the mode of the file an
   * output replaces) */
  if ((fd = mkstemp(path)) < 0)
    return slem_error(err, SLEM_EIO, "%s: cannot make a temporary file there (TMPDIR): %s",
                      root, strerror(errno));
  close(fd);
  st = slem_negstats_run(path, inputs, n, o, res, err);
  if (st == SLEM_OK) st = slem_cache_read(&c, path, err);
  if (st == SLEM_OK) st = slem_cache_set_path(c, name, err);
  unlink(path); /* the mapping stays */
  if (st != SLEM_OK) {
    slem_cache_free(c);
    return st;
  }
  *out = c;
  return SLEM_OK;
}

int slem_load(SlemCache **out, const char *path, SlemError *err) {
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_load: no place for the cache (out NULL)");
  *out = NULL;
  if (!path) return slem_error(err, SLEM_EINVAL, "slem_load: no path (a null pointer)");
  return slem_cache_read(out, path, err);
}

int slem_save(const SlemCache *cache, const char *path, SlemError *err) {
  SlemOut *o = NULL;
  const void *p;
  size_t n;
  int st;
  if (!cache || !path)
    return slem_error(err, SLEM_EINVAL, "slem_save: no %s (a null pointer)",
                      cache ? "path" : "cache");
  if (strcmp(path, "-") == 0)
    return slem_error(err, SLEM_EINVAL, "slem_save: a cache is not written to stdout ('-'): "
                      "give the path of the .slem file");
  if (!slem_cache_bytes(cache, &p, &n))
    return slem_error(err, SLEM_EINVAL, "%s: a stage of a cache, not a file of its own",
                      slem_cache_path(cache));
  if ((st = slem_out_open(&o, path, err)) != SLEM_OK) return st;
  if (fwrite(p, 1, n, slem_out_file(o)) != n) {
    int e = errno;
    slem_out_abort(o);
    return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(e));
  }
  return slem_out_commit(o, err);
}

const char *slem_cache_info(const SlemCache *cache) { return slem_cache_json(cache); }
const char *slem_cache_kind_name(const SlemCache *cache) { return slem_cache_kind(cache); }
size_t slem_cache_dim(const SlemCache *cache) { return cache->d; }
const char *slem_cache_fingerprint_of(const SlemCache *cache) {
  return slem_cache_fingerprint(cache);
}

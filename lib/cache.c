#define _POSIX_C_SOURCE 200809L
#include "cache.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arith.h"
#include "crc32.h"
#include "io.h"
#include "mem.h"
#include "slem.h"
#include "vecs.h"

#define FIXED_LEN 64
#define ALIGN 64
#define BOM 0x01020304u

static const unsigned char magic[8] = {0x89, 'S', 'L', 'E', 'M', '\r', '\n', 0x1a};

struct SlemCachePriv {
  void *map;
  size_t map_len;
  char *json_text;  /* pretty-printed, with the fingerprint: made at the first call */
  cJSON *json;      /* the header, until then */
  /* the fingerprint, computed at the first call: hashing a large payload byte by byte
   * costs more than reading it, and most runs never need it */
  pthread_mutex_t lock;
  int fp_done;
  char fingerprint[17];
  const unsigned char *payload;
  uint64_t payload_len;
  char *path;
  const double **stage_mu, **stage_ainv;  /* recursive caches: their stages, */
  double *stage_lambda;
  SlemCacheRecursive rec;                  /* pointing to these (kind_data) */
  SlemPartialInfo partial;  /* partial caches */
  uint64_t *node;
  char arith[SLEM_ARITH_MAX];  /* the line of the arithmetic that made it (arith.h), or "" */
};

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static uint64_t get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static uint64_t align_up(uint64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

int slem_cache_sniff(const char *path) {
  unsigned char buf[8];
  struct stat st;
  int fd;
  ssize_t r;
  /* only a regular file can be a cache: a pipe or a FIFO (process substitution, a named
   * pipe) is neither opened nor read here, so none of its bytes is lost to the sniffing */
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return 0;
  r = read(fd, buf, 8);
  close(fd);
  return r == 8 && memcmp(buf, magic, 8) == 0;
}

void slem_cache_free(SlemCache *self) {
  if (!self) return;
  if (self->priv) {
    free(self->priv->map);
    free(self->priv->json_text);
    cJSON_Delete(self->priv->json);
    pthread_mutex_destroy(&self->priv->lock);
    free(self->priv->path);
    free(self->priv->stage_mu);
    free(self->priv->stage_ainv);
    free(self->priv->stage_lambda);
    free(self->priv->node);
    free(self->priv);
  }
  free(self);
}

const char *slem_cache_fingerprint(const SlemCache *self) {
  struct SlemCachePriv *p = self->priv;
  pthread_mutex_lock(&p->lock);
  if (!p->fp_done) { /* FNV-1a, 64 bits, of the payload */
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < p->payload_len; i++) h = (h ^ p->payload[i]) * 1099511628211ull;
    snprintf(p->fingerprint, sizeof p->fingerprint, "%016" PRIx64, h);
    p->fp_done = 1;
  }
  pthread_mutex_unlock(&p->lock);
  return p->fingerprint;
}

const char *slem_cache_json(const SlemCache *self) {
  struct SlemCachePriv *p = self->priv;
  const char *fp = slem_cache_fingerprint(self);
  pthread_mutex_lock(&p->lock);
  if (!p->json_text && p->json) {
    cJSON_DeleteItemFromObjectCaseSensitive(p->json, "fingerprint");
    if (cJSON_AddStringToObject(p->json, "fingerprint", fp)) p->json_text = cJSON_Print(p->json);
  }
  pthread_mutex_unlock(&p->lock);
  return p->json_text;
}
const char *slem_cache_path(const SlemCache *self) { return self->priv->path; }

const SlemCacheRecursive *slem_cache_recursive(const SlemCache *self) {
  return self->kind == SLEM_CACHE_RECURSIVE ? self->kind_data : NULL;
}

const char *slem_cache_arith(const SlemCache *self) {
  return self->priv->arith[0] ? self->priv->arith : NULL;
}

/* Reads a non-negative integer member that is exactly representable. */
static int json_uint(const cJSON *obj, const char *key, uint64_t max, uint64_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  double v;
  if (!cJSON_IsNumber(it)) return -1;
  v = it->valuedouble;
  if (!(v >= 0) || v > (double)max || v != floor(v)) return -1;
  *out = (uint64_t)v;
  return 0;
}

/* Finds section name in the JSON header and checks it lies inside the payload with the
 * expected shape; *data points into the mapping. */
static int find_section(SlemCache *c, const cJSON *sections, const char *name, uint64_t rows,
                        uint64_t cols, uint64_t pay_off, uint64_t pay_len, const double **data,
                        SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *s;
  cJSON_ArrayForEach(s, sections) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(s, "shape");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(s, "dtype");
    uint64_t off, want = cols ? 2 : 1, bytes, dims[2] = {0, 0};
    if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name) != 0) continue;
    if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "<f8") != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': dtype is not <f8", path, name);
    if (json_uint(s, "offset", UINT64_MAX / 2, &off) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': bad offset", path, name);
    if (!cJSON_IsArray(shape) || (uint64_t)cJSON_GetArraySize(shape) != want)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': bad shape", path, name);
    for (uint64_t i = 0; i < want; i++) {
      const cJSON *it = cJSON_GetArrayItem(shape, (int)i);
      if (!cJSON_IsNumber(it) || it->valuedouble != (double)(i ? cols : rows))
        return slem_error(err, SLEM_EFORMAT,
                          "%s: section '%s': shape disagrees with d = %zu%s", path, name, c->d,
                          c->r ? " and r" : "");
      dims[i] = (uint64_t)it->valuedouble;
    }
    /* sections of n rows (kernel negatives) can claim sizes that overflow */
    if (cols && dims[0] > UINT64_MAX / 8 / (dims[1] ? dims[1] : 1))
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': shape too large", path, name);
    bytes = dims[0] * (cols ? dims[1] : 1) * 8;
    if (off % ALIGN != 0 || off < pay_off || bytes > pay_len || off - pay_off > pay_len - bytes)
      return slem_error(err, SLEM_EFORMAT,
                        "%s: section '%s' (offset %" PRIu64 ", %" PRIu64 " bytes) lies outside "
                        "the payload", path, name, off, bytes);
    *data = (const double *)((const unsigned char *)c->priv->map + off);
    return SLEM_OK;
  }
  return slem_error(err, SLEM_EFORMAT, "%s: section '%s' is missing", path, name);
}

static int has_section(const cJSON *sections, const char *name) {
  const cJSON *s;
  cJSON_ArrayForEach(s, sections) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
    if (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0) return 1;
  }
  return 0;
}

/* The pca kind: lambda, the rank R and three sections. */
static int read_pca(SlemCache *c, const cJSON *json, const cJSON *sections, uint64_t pay_off,
                    uint64_t pay_len, SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  uint64_t r;
  int st;
  c->kind = SLEM_CACHE_PCA;
  if (json_uint(json, "r", c->d, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..d)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda", path);
  c->neig = c->r = r;
  c->lambda = lam->valuedouble;
  if ((st = find_section(c, sections, "evals", r, 0, pay_off, pay_len, &c->evals, err)) ||
      (st = find_section(c, sections, "evecs", r, c->d, pay_off, pay_len, &c->evecs, err)))
    return st;
  return SLEM_OK;
}

/* The recursive kind: depth, the lambda of every stage, and mu.S, ainv.S per stage. */
static int read_recursive(SlemCache *c, const cJSON *json, const cJSON *sections,
                          uint64_t pay_off, uint64_t pay_len, SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *lams = cJSON_GetObjectItemCaseSensitive(json, "lambdas");
  struct SlemCachePriv *p = c->priv;
  uint64_t depth;
  int st;
  c->kind = SLEM_CACHE_RECURSIVE;
  if (json_uint(json, "depth", 1024, &depth) != 0 || depth < 2)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid depth (2..1024)", path);
  if (!cJSON_IsArray(lams) || (uint64_t)cJSON_GetArraySize(lams) != depth)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no lambda per stage", path);
  p->stage_mu = calloc(depth, sizeof *p->stage_mu);
  p->stage_ainv = calloc(depth, sizeof *p->stage_ainv);
  p->stage_lambda = calloc(depth, sizeof *p->stage_lambda);
  if (!p->stage_mu || !p->stage_ainv || !p->stage_lambda)
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (uint64_t s = 0; s < depth; s++) {
    const cJSON *l = cJSON_GetArrayItem(lams, (int)s);
    char mu[32], ainv[32];
    if (!cJSON_IsNumber(l) || !(l->valuedouble >= 0) || !isfinite(l->valuedouble))
      return slem_error(err, SLEM_EFORMAT, "%s: stage %" PRIu64 ": no valid lambda", path, s + 1);
    p->stage_lambda[s] = l->valuedouble;
    if (s == 0) {
      strcpy(mu, "mu");
      strcpy(ainv, "ainv");
    } else {
      snprintf(mu, sizeof mu, "mu.%" PRIu64, s + 1);
      snprintf(ainv, sizeof ainv, "ainv.%" PRIu64, s + 1);
    }
    if ((st = find_section(c, sections, mu, c->d, 0, pay_off, pay_len, &p->stage_mu[s], err)) ||
        (st = find_section(c, sections, ainv, c->d, c->d, pay_off, pay_len, &p->stage_ainv[s],
                           err)))
      return st;
  }
  c->depth = depth;
  p->rec.mu = p->stage_mu;
  p->rec.ainv = p->stage_ainv;
  p->rec.lambda = p->stage_lambda;
  c->kind_data = &p->rec;
  c->ainv = p->stage_ainv[0];
  c->lambda = p->stage_lambda[0];
  return SLEM_OK;
}

/* The partial kind: the grid of leaves, the nodes (which must tile the leaves it claims,
 * each in its place of the tree, their counts adding up to n) and two sections. */
static int read_partial(SlemCache *c, const cJSON *json, const cJSON *sections,
                        uint64_t pay_off, uint64_t pay_len, SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *leaves = cJSON_GetObjectItemCaseSensitive(json, "leaves");
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(json, "nodes");
  SlemPartialInfo *pi = &c->priv->partial;
  uint64_t lr, m, at, sum = 0, v[3];
  int st;
  c->kind = SLEM_CACHE_PARTIAL;
  if (json_uint(json, "leaf_rows", (uint64_t)1 << 32, &lr) != 0 ||
      json_uint(json, "leaf_total", (uint64_t)1 << 53, &pi->leaf_total) != 0 ||
      json_uint(json, "rows", (uint64_t)1 << 53, &pi->rows) != 0 || !cJSON_IsArray(leaves) ||
      cJSON_GetArraySize(leaves) != 2 || !cJSON_IsArray(nodes))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header of a partial cache lacks its "
                      "leaves or nodes (a partial cache of an older slem: compute it again)",
                      path);
  pi->leaf_rows = (size_t)lr;
  for (int i = 0; i < 2; i++) {
    const cJSON *it = cJSON_GetArrayItem(leaves, i);
    double x = cJSON_IsNumber(it) ? it->valuedouble : -1;
    if (!(x >= 0) || x > 9007199254740992.0 || x != floor(x))
      return slem_error(err, SLEM_EFORMAT, "%s: bad leaves in the JSON header", path);
    v[i] = (uint64_t)x;
  }
  pi->leaf_first = v[0];
  pi->leaf_end = v[1];
  if (pi->leaf_first > pi->leaf_end || pi->leaf_end > pi->leaf_total)
    return slem_error(err, SLEM_EFORMAT, "%s: leaves %" PRIu64 "..%" PRIu64 " do not lie in the "
                      "%" PRIu64 " leaves", path, pi->leaf_first, pi->leaf_end, pi->leaf_total);
  m = (uint64_t)cJSON_GetArraySize(nodes);
  if (m > 128 * 64)
    return slem_error(err, SLEM_EFORMAT, "%s: %" PRIu64 " nodes: too many", path, m);
  pi->nnodes = (size_t)m;
  if (m && !(c->priv->node = malloc(m * 3 * sizeof *c->priv->node)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  at = pi->leaf_first;
  for (uint64_t k = 0; k < m; k++) {
    const cJSON *nd = cJSON_GetArrayItem(nodes, (int)k);
    for (int i = 0; i < 3; i++) {
      const cJSON *it = cJSON_IsArray(nd) && cJSON_GetArraySize(nd) == 3 ?
                        cJSON_GetArrayItem(nd, i) : NULL;
      double x = cJSON_IsNumber(it) ? it->valuedouble : -1;
      if (!(x >= 0) || x > 9007199254740992.0 || x != floor(x) || (i == 0 && x >= 63))
        return slem_error(err, SLEM_EFORMAT, "%s: node %" PRIu64 " is not [level, index, n]",
                          path, k + 1);
      v[i] = (uint64_t)x;
    }
    /* in its place: it starts where the previous one ends, within the leaves claimed, and
     * holds no more rows than its leaves can */
    if (v[1] > (UINT64_MAX >> v[0]) || v[1] << v[0] != at ||
        ((v[1] + 1) << v[0]) > pi->leaf_end ||
        (lr && v[2] > (lr << v[0])) || v[2] > c->n - sum)
      return slem_error(err, SLEM_EFORMAT, "%s: node %" PRIu64 " (level %" PRIu64 ", index %"
                        PRIu64 ", %" PRIu64 " rows) is out of place", path, k + 1, v[0], v[1],
                        v[2]);
    at = (v[1] + 1) << v[0];
    sum += v[2];
    memcpy(c->priv->node + 3 * k, v, sizeof v);
  }
  if (at != pi->leaf_end || sum != c->n)
    return slem_error(err, SLEM_EFORMAT, "%s: the nodes do not cover the leaves %" PRIu64 "..%"
                      PRIu64 " with the %" PRIu64 " rows the header counts", path,
                      pi->leaf_first, pi->leaf_end, c->n);
  {
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(json, "shard");
    if (cJSON_IsArray(sh) && cJSON_GetArraySize(sh) == 2 &&
        cJSON_IsNumber(cJSON_GetArrayItem(sh, 0)) && cJSON_IsNumber(cJSON_GetArrayItem(sh, 1))) {
      pi->shard_index = (uint64_t)cJSON_GetArrayItem(sh, 0)->valuedouble;
      pi->shard_count = (uint64_t)cJSON_GetArrayItem(sh, 1)->valuedouble;
    }
  }
  pi->node = c->priv->node;
  if ((st = find_section(c, sections, "node_mu", m, c->d, pay_off, pay_len, &pi->node_mu,
                         err)) ||
      (st = find_section(c, sections, "node_scatter", m * c->d, c->d, pay_off, pay_len,
                         &pi->node_scatter, err)))
    return st;
  c->partial = pi;
  return SLEM_OK;
}

/* The kernel kind: its kernel, rank, lambda and four sections. */
static int read_kernel(SlemCache *c, const cJSON *json, const cJSON *sections, uint64_t pay_off,
                       uint64_t pay_len, SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(json, "kernel");
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  uint64_t r;
  int st;
  SlemError kerr;
  c->kind = SLEM_CACHE_KERNEL;
  if (!cJSON_IsString(spec) || slem_kernel_parse(&c->kernel, spec->valuestring, &kerr) != SLEM_OK ||
      c->kernel.gamma_relative)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid kernel", path);
  if (json_uint(json, "r", c->n < SLEM_DIM_MAX ? c->n : SLEM_DIM_MAX, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..n)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble > 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda (> 0)", path);
  c->r = r;
  c->lambda = lam->valuedouble;
  {
    const cJSON *fac = cJSON_GetObjectItemCaseSensitive(json, "factor");
    const cJSON *cpl = cJSON_GetObjectItemCaseSensitive(json, "couple");
    int f = fac ? (cJSON_IsString(fac) ? slem_factor_parse(fac->valuestring) : -1) : SLEM_FACTOR_ICD;
    if (f < 0)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid factor (icd, kpca, "
                        "full)", path);
    if (cpl && !cJSON_IsBool(cpl))
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's couple is not true or false",
                        path);
    c->factor = (SlemKernelFactor)f;
    c->couple = cJSON_IsTrue(cpl);
  }
  if (c->factor == SLEM_FACTOR_KPCA) {
    if ((st = find_section(c, sections, "proj", r, c->n, pay_off, pay_len, &c->proj, err)))
      return st;
  } else {
    if ((st = find_section(c, sections, "pivots", r, c->d, pay_off, pay_len, &c->pivots, err)) ||
        (st = find_section(c, sections, "lp", r, r, pay_off, pay_len, &c->lp, err)))
      return st;
    /* the triangular solves divide by the diagonal of lp */
    for (uint64_t i = 0; i < r; i++)
      if (!(c->lp[i * r + i] > 0))
        return slem_error(err, SLEM_EFORMAT, "%s: section 'lp' is not a Cholesky factor", path);
  }
  if ((c->factor == SLEM_FACTOR_KPCA || c->couple) &&
      (st = find_section(c, sections, "negatives", c->n, c->d, pay_off, pay_len, &c->negs, err)))
    return st;
  if (c->couple &&
      (st = find_section(c, sections, "bneg", c->n, r, pay_off, pay_len, &c->bneg, err)))
    return st;
  if ((st = find_section(c, sections, "mu", r, 0, pay_off, pay_len, &c->mu, err)) ||
      (st = find_section(c, sections, "ginv", r, r, pay_off, pay_len, &c->ginv, err)))
    return st;
  return SLEM_OK;
}

int slem_cache_read(SlemCache **self, const char *path, SlemError *err) {
  SlemCache *c = calloc(1, sizeof *c);
  cJSON *json = NULL;
  const unsigned char *p;
  struct stat st;
  int fd = -1, status;
  uint32_t version, bom, fixed_len, json_len;
  uint64_t json_off, pay_off, pay_len, n, d;
  const cJSON *kind, *sections;
  *self = NULL;
  if (!c || !(c->priv = calloc(1, sizeof *c->priv)) || !(c->priv->path = malloc(strlen(path) + 1))) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto fail;
  }
  strcpy(c->priv->path, path);
  pthread_mutex_init(&c->priv->lock, NULL);
  if (strcmp(path, "-") == 0) {
    status = slem_error(err, SLEM_EINVAL, "a cache cannot be read from stdin ('-'): it is used in "
                        "place from its file; give the path of the .slem file");
    goto fail;
  }
  /* O_NONBLOCK: a FIFO named as the cache must not block the tool in open() */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    status = slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
    goto fail;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = slem_error(err, SLEM_EIO, "%s: not a regular file", path);
    goto fail;
  }
  if (st.st_size < FIXED_LEN) {
    status = slem_error(err, SLEM_EFORMAT, "%s: %s (%lld bytes): not a slem cache, or truncated",
                        path, st.st_size ? "too short" : "empty", (long long)st.st_size);
    goto fail;
  }
  /* The cache is read into private memory, not mapped: a mapping of a file that another
   * process truncates in place (cp over it, truncate) kills the reader with SIGBUS at the
   * first page past the new end. A file that changes size while it is read is an error. */
  c->priv->map_len = (size_t)st.st_size;
  /* aligned as in the file; a large cache on huge pages (mem.h), which fault once per 2 MiB */
  if ((uint64_t)st.st_size > SIZE_MAX ||
      (c->priv->map_len >= ((size_t)2 << 20)
           ? !(c->priv->map = slem_alloc_large(c->priv->map_len))
           : posix_memalign(&c->priv->map, ALIGN, c->priv->map_len) != 0)) {
    c->priv->map = NULL;
    status = slem_error(err, SLEM_ENOMEM, "%s: out of memory for a cache of %lld bytes", path,
                        (long long)st.st_size);
    goto fail;
  }
  {
    size_t got = 0;
    char extra;
    ssize_t r = 1;
    while (got < c->priv->map_len) {
      r = read(fd, (char *)c->priv->map + got, c->priv->map_len - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (r > 0)
      while ((r = read(fd, &extra, 1)) < 0 && errno == EINTR) {}
    if (r < 0) {
      status = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
      goto fail;
    }
    if (got != c->priv->map_len || r != 0) {
      status = slem_error(err, SLEM_EFORMAT,
                          "%s: the file changed size while it was read (%zu bytes expected, "
                          "%s): it is being rewritten in place; replace a cache by renaming "
                          "a new file over it", path, c->priv->map_len,
                          r != 0 ? "more found" : "fewer found");
      goto fail;
    }
  }
  close(fd);
  fd = -1;
  p = c->priv->map;
  if (memcmp(p, magic, 8) != 0) {
    status = slem_error(err, SLEM_EFORMAT, "%s: not a slem cache (bad magic)", path);
    goto fail;
  }
  bom = get32(p + 12);
  if (bom != BOM) {
    status = slem_error(err, SLEM_EFORMAT, "%s: %s", path,
                        bom == 0x04030201u ? "written on a host of the other byte order; "
                                             "rebuild it with slem-negstats here"
                                           : "bad byte-order mark");
    goto fail;
  }
  version = get32(p + 8);
  if (version != SLEM_CACHE_VERSION) {
    status = slem_error(err, SLEM_EFORMAT,
                        "%s: cache format version %" PRIu32 "; this slem reads version %d: "
                        "rebuild it with slem-negstats", path, version, SLEM_CACHE_VERSION);
    goto fail;
  }
  if (slem_crc32(0, p, 60) != get32(p + 60)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the fixed header", path);
    goto fail;
  }
  fixed_len = get32(p + 16);
  json_len = get32(p + 20);
  json_off = get64(p + 24);
  pay_off = get64(p + 32);
  pay_len = get64(p + 40);
  if (fixed_len != FIXED_LEN || json_off < FIXED_LEN || json_off > pay_off ||
      json_len > pay_off - json_off || pay_off % ALIGN != 0 || pay_off > c->priv->map_len ||
      pay_len != c->priv->map_len - pay_off) {
    status = slem_error(err, SLEM_EFORMAT,
                        "%s: header offsets disagree with the file size %zu: truncated or "
                        "corrupt", path, c->priv->map_len);
    goto fail;
  }
  if (slem_crc32(0, p + json_off, json_len) != get32(p + 48)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the JSON header", path);
    goto fail;
  }
  if (slem_crc32(0, p + pay_off, pay_len) != get32(p + 52)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the payload: corrupt", path);
    goto fail;
  }
  /* every section is float64, the padding zeros: a NaN or an infinity is refused even
   * under a right checksum (a cache written by something else) */
  for (uint64_t off = 0; off + 8 <= pay_len; off += 8) {
    double v;
    memcpy(&v, p + pay_off + off, 8);
    if (!isfinite(v)) {
      status = slem_error(err, SLEM_EFORMAT, "%s: the payload holds %s at byte %" PRIu64
                          ": not a cache slem wrote", path, isnan(v) ? "a NaN" : "an infinity",
                          pay_off + off);
      goto fail;
    }
  }
  json = cJSON_ParseWithLength((const char *)p + json_off, json_len);
  if (!json || !cJSON_IsObject(json)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header does not parse", path);
    goto fail;
  }
  kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
  /* n = 0 only in a partial cache: a shard with no row, which merges as nothing */
  if (json_uint(json, "d", SLEM_DIM_MAX, &d) != 0 || d == 0 ||
      json_uint(json, "n", (uint64_t)1 << 53, &n) != 0 || !cJSON_IsString(kind) ||
      (n == 0 && strcmp(kind->valuestring, "partial") != 0)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header lacks a valid kind, d or n", path);
    goto fail;
  }
  c->d = d;
  c->n = n;
  c->depth = 1;
  sections = cJSON_GetObjectItemCaseSensitive(json, "sections");
  if (!cJSON_IsArray(sections)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no sections", path);
    goto fail;
  }
  if (strcmp(kind->valuestring, "kernel") != 0 && strcmp(kind->valuestring, "partial") != 0) {
    status = find_section(c, sections, "mu", d, 0, pay_off, pay_len, &c->mu, err);
    if (status) goto fail;
  }
  if (strcmp(kind->valuestring, "linear") == 0) {
    const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
    c->kind = SLEM_CACHE_LINEAR;
    if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble)) {
      status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda", path);
      goto fail;
    }
    c->lambda = lam->valuedouble;
    {
      const cJSON *rc = cJSON_GetObjectItemCaseSensitive(json, "rcond");
      if (cJSON_IsNumber(rc) && rc->valuedouble > 0 && rc->valuedouble <= 1) c->rcond = rc->valuedouble;
    }
    status = find_section(c, sections, "ainv", d, d, pay_off, pay_len, &c->ainv, err);
    if (!status && has_section(sections, "evecs")) {
      c->neig = d;
      if ((status = find_section(c, sections, "evals", d, 0, pay_off, pay_len, &c->evals, err)) == 0)
        status = find_section(c, sections, "evecs", d, d, pay_off, pay_len, &c->evecs, err);
    }
  } else if (strcmp(kind->valuestring, "recursive") == 0) {
    status = read_recursive(c, json, sections, pay_off, pay_len, err);
  } else if (strcmp(kind->valuestring, "pca") == 0) {
    status = read_pca(c, json, sections, pay_off, pay_len, err);
  } else if (strcmp(kind->valuestring, "partial") == 0) {
    status = read_partial(c, json, sections, pay_off, pay_len, err);
  } else if (strcmp(kind->valuestring, "kernel") == 0) {
    status = read_kernel(c, json, sections, pay_off, pay_len, err);
  } else {
    status = slem_error(err, SLEM_EFORMAT, "%s: cache kind '%s' is not known to this slem", path,
                        kind->valuestring);
  }
  if (status) goto fail;
  /* what descriptors record of the cache that made them, when they ask for it */
  c->priv->payload = p + pay_off;
  c->priv->payload_len = pay_len;
  c->priv->json = json;
  slem_arith_from_json(json, c->priv->arith, sizeof c->priv->arith);
  *self = c;
  return SLEM_OK;
fail:
  if (fd >= 0) close(fd);
  cJSON_Delete(json);
  slem_cache_free(c);
  return status;
}

/* ---- writing ---- */

typedef struct Section {
  const char *name;
  const double *data;
  size_t rows, cols; /* cols 0: a vector */
} Section;

static cJSON *provenance_json(const SlemProvenance *prov) {
  cJSON *o = cJSON_CreateObject();
  cJSON *in = cJSON_CreateArray();
  char when[32];
  time_t t = time(NULL);
  const char *sde = getenv("SOURCE_DATE_EPOCH"); /* reproducible builds of caches */
  struct tm tm;
  if (sde && *sde) t = (time_t)strtoll(sde, NULL, 10);
  gmtime_r(&t, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(o, "tool", prov && prov->tool ? prov->tool : "libslem");
  cJSON_AddStringToObject(o, "version", SLEM_VERSION);
  for (size_t i = 0; prov && i < prov->ninputs; i++)
    cJSON_AddItemToArray(in, cJSON_CreateString(prov->inputs[i]));
  cJSON_AddItemToObject(o, "inputs", in);
  cJSON_AddStringToObject(o, "time", when);
  return o;
}

/* The arithmetic that made the cache (arith.h), then the provenance. */
static void add_provenance(cJSON *meta, const SlemProvenance *prov) {
  slem_arith_to_json(meta, prov ? prov->arith_mixed : NULL);
  cJSON_AddItemToObject(meta, "provenance", provenance_json(prov));
}

/* Fills in the section offsets for a payload starting at pay_off; returns the payload
 * length. */
static uint64_t place_sections(cJSON *secs, const Section *sec, size_t nsec, uint64_t pay_off) {
  uint64_t off = pay_off;
  for (size_t i = 0; i < nsec; i++) {
    cJSON *s = cJSON_GetArrayItem(secs, (int)i);
    uint64_t bytes = (uint64_t)sec[i].rows * (sec[i].cols ? sec[i].cols : 1) * 8;
    cJSON_ReplaceItemInObjectCaseSensitive(s, "offset", cJSON_CreateNumber((double)off));
    off = align_up(off + bytes);
  }
  return off - pay_off;
}

static int write_cache(const char *path, cJSON *meta, const Section *sec, size_t nsec,
                       SlemError *err) {
  static const unsigned char zeros[ALIGN] = {0};
  cJSON *secs = cJSON_CreateArray();
  char *text = NULL;
  unsigned char hdr[FIXED_LEN];
  uint64_t pay_off = 0, pay_len = 0, pos;
  uint32_t json_len = 0, crc_json, crc_pay = 0, v32;
  SlemOut *out = NULL;
  FILE *fp;
  int status;

  /* a cache holds finite numbers only: an overflow upstream is said here, not written */
  for (size_t i = 0; i < nsec; i++) {
    size_t count = sec[i].rows * (sec[i].cols ? sec[i].cols : 1);
    for (size_t j = 0; j < count; j++)
      if (!isfinite(sec[i].data[j]))
        {
          cJSON_Delete(secs);
          return slem_error(err, SLEM_ENUMERIC, "%s: section '%s' would hold %s (value %zu): "
                            "the statistics overflow double; scale the negatives down",
                            path, sec[i].name, isnan(sec[i].data[j]) ? "NaN" : "an infinity",
                            j + 1);
        }
  }
  for (size_t i = 0; i < nsec; i++) {
    cJSON *s = cJSON_CreateObject(), *shape = cJSON_CreateArray();
    cJSON_AddStringToObject(s, "name", sec[i].name);
    cJSON_AddNumberToObject(s, "offset", 0);
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sec[i].rows));
    if (sec[i].cols) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sec[i].cols));
    cJSON_AddItemToObject(s, "shape", shape);
    cJSON_AddStringToObject(s, "dtype", "<f8");
    cJSON_AddItemToArray(secs, s);
  }
  cJSON_AddItemToObject(meta, "sections", secs);
  /* the offsets are in the JSON, whose length decides them: iterate to a fixed point */
  for (int iter = 0; iter < 8; iter++) {
    uint64_t want;
    pay_len = place_sections(secs, sec, nsec, pay_off);
    free(text);
    text = cJSON_PrintUnformatted(meta);
    if (!text) {
      status = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto done;
    }
    json_len = (uint32_t)strlen(text);
    want = align_up(FIXED_LEN + json_len + 1);
    if (want == pay_off) break;
    pay_off = want;
  }
  crc_json = slem_crc32(0, text, json_len);
  for (size_t i = 0; i < nsec; i++) {
    uint64_t bytes = (uint64_t)sec[i].rows * (sec[i].cols ? sec[i].cols : 1) * 8;
    crc_pay = slem_crc32(crc_pay, sec[i].data, bytes);
    if (align_up(bytes) != bytes) crc_pay = slem_crc32(crc_pay, zeros, align_up(bytes) - bytes);
  }

  memset(hdr, 0, sizeof hdr);
  memcpy(hdr, magic, 8);
  v32 = SLEM_CACHE_VERSION; memcpy(hdr + 8, &v32, 4);
  v32 = BOM; memcpy(hdr + 12, &v32, 4);
  v32 = FIXED_LEN; memcpy(hdr + 16, &v32, 4);
  memcpy(hdr + 20, &json_len, 4);
  pos = FIXED_LEN; memcpy(hdr + 24, &pos, 8);
  memcpy(hdr + 32, &pay_off, 8);
  memcpy(hdr + 40, &pay_len, 8);
  memcpy(hdr + 48, &crc_json, 4);
  memcpy(hdr + 52, &crc_pay, 4);
  v32 = slem_crc32(0, hdr, 60); memcpy(hdr + 60, &v32, 4);

  status = slem_out_open(&out, path, err);
  if (status) goto done;
  fp = slem_out_file(out);
  if (fwrite(hdr, 1, FIXED_LEN, fp) != FIXED_LEN || fwrite(text, 1, json_len, fp) != json_len)
    goto ioerr;
  /* a newline after the JSON so that `head -c` shows it whole; zeros up to the payload */
  if (putc('\n', fp) == EOF) goto ioerr;
  for (pos = FIXED_LEN + json_len + 1; pos < pay_off; pos++)
    if (putc(0, fp) == EOF) goto ioerr;
  for (size_t i = 0; i < nsec; i++) {
    uint64_t bytes = (uint64_t)sec[i].rows * (sec[i].cols ? sec[i].cols : 1) * 8;
    if (fwrite(sec[i].data, 1, bytes, fp) != bytes) goto ioerr;
    if (align_up(bytes) != bytes &&
        fwrite(zeros, 1, align_up(bytes) - bytes, fp) != align_up(bytes) - bytes)
      goto ioerr;
  }
  status = slem_out_commit(out, err);
  out = NULL;
  goto done;
ioerr:
  status = slem_error(err, SLEM_EIO, "%s: write: %s", path, strerror(errno));
done:
  slem_out_abort(out);
  free(text);
  return status;
}

/* The JSON header's common members; NULL when out of memory. */
static cJSON *meta_new(const char *kind, size_t d, uint64_t n) {
  cJSON *meta = cJSON_CreateObject();
  if (!meta) return NULL;
  cJSON_AddStringToObject(meta, "format", "slem-cache");
  cJSON_AddNumberToObject(meta, "format_version", SLEM_CACHE_VERSION);
  cJSON_AddStringToObject(meta, "kind", kind);
  cJSON_AddNumberToObject(meta, "d", (double)d);
  cJSON_AddNumberToObject(meta, "n", (double)n);
  return meta;
}

int slem_cache_write_linear(const char *path, size_t d, uint64_t n, const SlemLinearInfo *info,
                            const double *mu, const double *ainv, const SlemProvenance *prov,
                            SlemError *err) {
  double lambda = info->lambda, lambda_rel = info->lambda_rel, trace_sigma = info->trace_sigma,
         rcond = info->rcond;
  cJSON *meta = meta_new("linear", d, n);
  Section sec[2] = {{"mu", mu, d, 0}, {"ainv", ainv, d, d}};
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  cJSON_AddNumberToObject(meta, "lambda", lambda);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", lambda_rel);
  cJSON_AddNumberToObject(meta, "trace_sigma", trace_sigma);
  if (rcond > 0) cJSON_AddNumberToObject(meta, "rcond", rcond);
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 2, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_partial(const char *path, size_t d, uint64_t n,
                             const SlemPartialInfo *info, const SlemProvenance *prov,
                             SlemError *err) {
  cJSON *meta = meta_new("partial", d, n), *leaves, *nodes;
  Section sec[2] = {{"node_mu", info->node_mu, info->nnodes, d},
                    {"node_scatter", info->node_scatter, info->nnodes * d, d}};
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  cJSON_AddNumberToObject(meta, "rows", (double)info->rows);
  cJSON_AddNumberToObject(meta, "leaf_rows", (double)info->leaf_rows);
  cJSON_AddNumberToObject(meta, "leaf_total", (double)info->leaf_total);
  leaves = cJSON_AddArrayToObject(meta, "leaves");
  cJSON_AddItemToArray(leaves, cJSON_CreateNumber((double)info->leaf_first));
  cJSON_AddItemToArray(leaves, cJSON_CreateNumber((double)info->leaf_end));
  if (info->shard_count > 0) {
    cJSON *sh = cJSON_AddArrayToObject(meta, "shard");
    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)info->shard_index));
    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)info->shard_count));
  }
  nodes = cJSON_AddArrayToObject(meta, "nodes");
  for (size_t k = 0; k < info->nnodes; k++) {
    cJSON *nd = cJSON_CreateArray();
    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(nd, cJSON_CreateNumber((double)info->node[3 * k + i]));
    cJSON_AddItemToArray(nodes, nd);
  }
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 2, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_kernel(const char *path, size_t d, uint64_t n, const SlemKernelInfo *info,
                            const SlemKernelSections *ks, const SlemProvenance *prov,
                            SlemError *err) {
  cJSON *meta = meta_new("kernel", d, n);
  size_t r = info->r, nsec = 0;
  Section sec[6];
  char spec[256];
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  slem_kernel_format(info->kernel, spec, sizeof spec);
  cJSON_AddStringToObject(meta, "kernel", spec);
  if (info->gamma_median >= 0) {
    cJSON_AddNumberToObject(meta, "gamma_median_sq_distance", info->gamma_median);
    cJSON_AddNumberToObject(meta, "gamma_seed", (double)info->seed);
  }
  cJSON_AddNumberToObject(meta, "r", (double)r);
  cJSON_AddNumberToObject(meta, "trace_k", info->trace_k);
  cJSON_AddNumberToObject(meta, "residual_trace", info->residual_trace);
  cJSON_AddNumberToObject(meta, "lambda", info->lambda);
  if (info->lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", info->lambda_rel);
  cJSON_AddNumberToObject(meta, "trace_sigma_b", info->trace_sigma_b);
  cJSON_AddStringToObject(meta, "factor", slem_factor_name(info->factor));
  if (info->couple) cJSON_AddBoolToObject(meta, "couple", 1);
  add_provenance(meta, prov);
  if (info->factor == SLEM_FACTOR_KPCA) {
    sec[nsec++] = (Section){"negatives", ks->negs, n, d};
    sec[nsec++] = (Section){"proj", ks->proj, r, n};
  } else {
    sec[nsec++] = (Section){"pivots", ks->pivots, r, d};
    sec[nsec++] = (Section){"lp", ks->lp, r, r};
    if (info->couple) sec[nsec++] = (Section){"negatives", ks->negs, n, d};
  }
  if (info->couple) sec[nsec++] = (Section){"bneg", ks->bneg, n, r};
  sec[nsec++] = (Section){"mu", ks->mu_b, r, 0};
  sec[nsec++] = (Section){"ginv", ks->ginv, r, r};
  status = write_cache(path, meta, sec, nsec, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_eigen(const char *path, size_t d, uint64_t n, double lambda,
                           double lambda_rel, double trace_sigma, double rcond,
                           const double *mu, const double *ainv, const double *evals,
                           const double *evecs, const SlemProvenance *prov, SlemError *err) {
  cJSON *meta = meta_new("linear", d, n);
  Section sec[4] = {{"mu", mu, d, 0}, {"ainv", ainv, d, d}, {"evals", evals, d, 0},
                    {"evecs", evecs, d, d}};
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  cJSON_AddNumberToObject(meta, "lambda", lambda);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", lambda_rel);
  cJSON_AddNumberToObject(meta, "trace_sigma", trace_sigma);
  if (rcond > 0) cJSON_AddNumberToObject(meta, "rcond", rcond);
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 4, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_pca(const char *path, size_t d, uint64_t n, size_t rank, double lambda,
                         double lambda_rel, double trace_sigma, const double *mu,
                         const double *evals, const double *evecs, const SlemProvenance *prov,
                         SlemError *err) {
  cJSON *meta = meta_new("pca", d, n);
  Section sec[3] = {{"mu", mu, d, 0}, {"evals", evals, rank, 0}, {"evecs", evecs, rank, d}};
  double kept = 0;
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (size_t k = 0; k < rank; k++) kept += evals[k];
  cJSON_AddNumberToObject(meta, "r", (double)rank);
  cJSON_AddNumberToObject(meta, "lambda", lambda);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", lambda_rel);
  cJSON_AddNumberToObject(meta, "trace_sigma", trace_sigma);
  cJSON_AddNumberToObject(meta, "variance_kept", trace_sigma > 0 ? kept / trace_sigma : 1.0);
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 3, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                               double lambda_rel, const double *lambda,
                               const double *trace_sigma, const double *rcond,
                               const double *const *mu, const double *const *ainv,
                               const SlemProvenance *prov, SlemError *err) {
  cJSON *meta = meta_new("recursive", d, n), *lams, *traces, *rconds;
  Section *sec = calloc(2 * depth, sizeof *sec);
  char (*names)[32] = calloc(2 * depth, sizeof *names);
  int status;
  if (!meta || !sec || !names) {
    cJSON_Delete(meta);
    free(sec);
    free(names);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  cJSON_AddNumberToObject(meta, "depth", (double)depth);
  cJSON_AddNumberToObject(meta, "lambda", lambda[0]);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(meta, "lambda_rel", lambda_rel);
  lams = cJSON_AddArrayToObject(meta, "lambdas");
  traces = cJSON_AddArrayToObject(meta, "trace_sigmas");
  rconds = cJSON_AddArrayToObject(meta, "rconds");
  for (size_t s = 0; s < depth; s++) {
    cJSON_AddItemToArray(lams, cJSON_CreateNumber(lambda[s]));
    cJSON_AddItemToArray(traces, cJSON_CreateNumber(trace_sigma[s]));
    cJSON_AddItemToArray(rconds, cJSON_CreateNumber(rcond[s]));
    if (s == 0) {
      strcpy(names[0], "mu");
      strcpy(names[1], "ainv");
    } else {
      snprintf(names[2 * s], 32, "mu.%zu", s + 1);
      snprintf(names[2 * s + 1], 32, "ainv.%zu", s + 1);
    }
    sec[2 * s] = (Section){names[2 * s], mu[s], d, 0};
    sec[2 * s + 1] = (Section){names[2 * s + 1], ainv[s], d, d};
  }
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 2 * depth, err);
  cJSON_Delete(meta);
  free(sec);
  free(names);
  return status;
}

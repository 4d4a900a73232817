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
#include "container.h"
#include "crc32.h"
#include "io.h"
#include "mem.h"
#include "slem.h"
#include "vecs.h"

#define FIXED_LEN SLEM_CONTAINER_FIXED_LEN
#define ALIGN SLEM_CONTAINER_ALIGN
_Static_assert(SLEM_CACHE_VERSION == SLEM_CONTAINER_VERSION,
               "a cache's JSON and its fixed header name one version");

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
  double *stage_lambda, *stage_theta_n;
  /* the kinds' data, one of which kind_data points to */
  SlemCacheLinear lin;
  SlemCacheEigen pca;
  SlemCacheKernel ker;
  SlemCacheRecursive rec;   /* pointing to the stages above */
  SlemCache **kstage;       /* kernel-recursive caches: a kernel cache per stage, its */
  size_t nkstage;           /* sections in this one's mapping (kernel_stage_free()) */
  SlemCacheKernelRecursive krec;
  SlemPartialInfo partial;
  size_t r;  /* the rank of a kernel or pca cache, named in the messages on its sections */
  uint64_t *node;
  char arith[SLEM_ARITH_MAX];  /* the line of the arithmetic that made it (arith.h), or "" */
  char arith_mixed[SLEM_ARITH_LIST_MAX]; /* the lines it mixes (a merge allowed to), or "" */
};


int slem_cache_sniff(const char *path) {
  unsigned char buf[SLEM_CONTAINER_FIXED_LEN];
  struct stat st;
  int fd, cache;
  ssize_t r;
  /* only a regular file can be a cache: a pipe or a FIFO (process substitution, a named
   * pipe) is neither opened nor read here, so none of its bytes is lost to the sniffing */
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return 0;
  r = read(fd, buf, sizeof buf);
  cache = r >= 8 && slem_container_sniff(buf, 8);
  /* a descriptor container (kind "descriptors", fmt_slem.c) holds vectors: it is read as
   * one, not refused as a cache whose mu is missing. Anything unreadable stays a cache, for
   * the cache reader's message. */
  if (cache && r == (ssize_t)sizeof buf) {
    uint32_t jl = 0;
    uint64_t jo = 0;
    for (int i = 3; i >= 0; i--) jl = jl << 8 | buf[20 + i];
    for (int i = 7; i >= 0; i--) jo = jo << 8 | buf[24 + i];
    if (jl > 0 && jl <= (1u << 24) && jo < (uint64_t)st.st_size) {
      char *text = malloc(jl);
      cJSON *json = NULL;
      if (text && pread(fd, text, jl, (off_t)jo) == (ssize_t)jl &&
          (json = cJSON_ParseWithLength(text, jl)) != NULL) {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
        if (cJSON_IsString(kind) && strcmp(kind->valuestring, "descriptors") == 0) cache = 0;
      }
      cJSON_Delete(json);
      free(text);
    }
  }
  close(fd);
  return cache;
}

/* A stage of a kernel-recursive cache, or a view (slem_cache_kernel_view()): its sections
 * are borrowed, so its mapping is not its own. */
static void kernel_stage_free(SlemCache *stage) {
  if (stage && stage->priv) stage->priv->map = NULL;
  slem_cache_free(stage);
}

void slem_cache_free(SlemCache *self) {
  if (!self) return;
  if (self->priv) {
    for (size_t s = 0; s < self->priv->nkstage; s++) kernel_stage_free(self->priv->kstage[s]);
    free(self->priv->kstage);
    free(self->priv->map);
    free(self->priv->json_text);
    cJSON_Delete(self->priv->json);
    pthread_mutex_destroy(&self->priv->lock);
    free(self->priv->path);
    free(self->priv->stage_mu);
    free(self->priv->stage_ainv);
    free(self->priv->stage_lambda);
    free(self->priv->stage_theta_n);
    free(self->priv->node);
    free(self->priv);
  }
  free(self);
}

const char *slem_cache_fingerprint(const SlemCache *self) {
  struct SlemCachePriv *p = self->priv;
  pthread_mutex_lock(&p->lock);
  if (!p->fp_done) {
    slem_container_fingerprint(p->fingerprint, p->payload, p->payload_len);
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

const SlemCacheLinear *slem_cache_linear(const SlemCache *self) {
  return self->kind == SLEM_CACHE_LINEAR ? self->kind_data : NULL;
}

const SlemCacheEigen *slem_cache_pca(const SlemCache *self) {
  return self->kind == SLEM_CACHE_PCA ? self->kind_data : NULL;
}

const SlemCacheEigen *slem_cache_eigen(const SlemCache *self) {
  const SlemCacheLinear *lin = slem_cache_linear(self);
  if (lin) return lin->eigen.evecs ? &lin->eigen : NULL;
  return slem_cache_pca(self);
}

const SlemPartialInfo *slem_cache_partial(const SlemCache *self) {
  return self->kind == SLEM_CACHE_PARTIAL ? self->kind_data : NULL;
}

const SlemCacheKernel *slem_cache_kernel(const SlemCache *self) {
  return self->kind == SLEM_CACHE_KERNEL ? self->kind_data : NULL;
}

const SlemCacheRecursive *slem_cache_recursive(const SlemCache *self) {
  return self->kind == SLEM_CACHE_RECURSIVE ? self->kind_data : NULL;
}

const SlemCacheKernelRecursive *slem_cache_kernel_recursive(const SlemCache *self) {
  return self->kind == SLEM_CACHE_KERNEL_RECURSIVE ? self->kind_data : NULL;
}

const char *slem_cache_arith(const SlemCache *self) {
  return self->priv->arith[0] ? self->priv->arith : NULL;
}

const char *slem_cache_arith_mixed(const SlemCache *self) {
  return self->priv->arith_mixed[0] ? self->priv->arith_mixed : NULL;
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
  uint64_t off, want[2] = {rows, cols};
  char what[64];
  int st;
  snprintf(what, sizeof what, "d = %zu%s", c->d, c->priv->r ? " and r" : "");
  st = slem_container_section_find(&off, sections, name, cols ? 2 : 1, want, pay_off, pay_len,
                                   what, c->priv->path, err);
  if (st == SLEM_OK) *data = (const double *)((const unsigned char *)c->priv->map + off);
  return st;
}

static int has_section(const cJSON *sections, const char *name) {
  return slem_container_section_has(sections, name);
}

/* The linear kind: lambda, rcond when recorded, ainv, and the eigenpairs when stored. */
static int read_linear(SlemCache *c, const cJSON *json, const cJSON *sections,
                       uint64_t pay_off, uint64_t pay_len, const double *mu, SlemError *err) {
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  const cJSON *rc = cJSON_GetObjectItemCaseSensitive(json, "rcond");
  const cJSON *cov = cJSON_GetObjectItemCaseSensitive(json, "covariance");
  SlemCacheLinear *lin = &c->priv->lin;
  size_t d = c->d;
  int status;
  c->kind = SLEM_CACHE_LINEAR;
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda",
                      c->priv->path);
  lin->lambda = lin->eigen.lambda = lam->valuedouble;
  /* "mixed" (slem-negstats --mixed) or absent: another is a covariance this slem cannot use */
  if (cov && !(cJSON_IsString(cov) && strcmp(cov->valuestring, "mixed") == 0))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's covariance is not 'mixed', the "
                      "one this slem knows", c->priv->path);
  lin->mixed = cov != NULL;
  lin->mu = lin->eigen.mu = mu;
  if (cJSON_IsNumber(rc) && rc->valuedouble > 0 && rc->valuedouble <= 1) lin->rcond = rc->valuedouble;
  status = find_section(c, sections, "ainv", d, d, pay_off, pay_len, &lin->ainv, err);
  if (!status && has_section(sections, "evecs")) {
    lin->eigen.neig = d;
    if ((status = find_section(c, sections, "evals", d, 0, pay_off, pay_len, &lin->eigen.evals,
                               err)) == 0)
      status = find_section(c, sections, "evecs", d, d, pay_off, pay_len, &lin->eigen.evecs,
                            err);
  }
  if (status) return status;
  c->kind_data = lin;
  return SLEM_OK;
}

/* The pca kind: lambda, the rank R and three sections (mu found already). */
static int read_pca(SlemCache *c, const cJSON *json, const cJSON *sections, uint64_t pay_off,
                    uint64_t pay_len, const double *mu, SlemError *err) {
  const char *path = c->priv->path;
  SlemCacheEigen *e = &c->priv->pca;
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  uint64_t r;
  int st;
  c->kind = SLEM_CACHE_PCA;
  if (json_uint(json, "r", c->d, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..d)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble >= 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda", path);
  e->neig = c->priv->r = r;
  e->lambda = lam->valuedouble;
  e->mu = mu;
  if ((st = find_section(c, sections, "evals", r, 0, pay_off, pay_len, &e->evals, err)) ||
      (st = find_section(c, sections, "evecs", r, c->d, pay_off, pay_len, &e->evecs, err)))
    return st;
  c->kind_data = e;
  return SLEM_OK;
}

/* The recursive kinds: depth, the lambda of every stage, and mu.S, ainv.S per stage; with
 * nb (recursive-nubeta) stage S in dimension d + S - 1, theta and theta_n per stage but the
 * last. */
static int read_stages(SlemCache *c, const cJSON *json, const cJSON *sections,
                       uint64_t pay_off, uint64_t pay_len, int nb, SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *lams = cJSON_GetObjectItemCaseSensitive(json, "lambdas");
  struct SlemCachePriv *p = c->priv;
  uint64_t depth;
  int st;
  c->kind = SLEM_CACHE_RECURSIVE;
  if (json_uint(json, "depth", 1024, &depth) != 0 || depth < 2)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid depth (2..1024)", path);
  if (nb) {
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(json, "theta");
    const cJSON *tn = cJSON_GetObjectItemCaseSensitive(json, "theta_n");
    if (!cJSON_IsNumber(th) || !(th->valuedouble > 0) || !isfinite(th->valuedouble) ||
        !cJSON_IsArray(tn) || (uint64_t)cJSON_GetArraySize(tn) != depth - 1)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid theta and "
                        "theta_n per stage", path);
    if (!(p->stage_theta_n = calloc(depth, sizeof *p->stage_theta_n)))
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    for (uint64_t s = 0; s + 1 < depth; s++) {
      const cJSON *t = cJSON_GetArrayItem(tn, (int)s);
      if (!cJSON_IsNumber(t) || !(t->valuedouble > 0) || !isfinite(t->valuedouble))
        return slem_error(err, SLEM_EFORMAT, "%s: stage %" PRIu64 ": no valid theta_n", path,
                          s + 1);
      p->stage_theta_n[s] = t->valuedouble;
    }
    p->rec.nu_beta = 1;
    p->rec.theta = th->valuedouble;
    p->rec.theta_n = p->stage_theta_n;
  }
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
    if ((st = find_section(c, sections, mu, c->d + (nb ? s : 0), 0, pay_off, pay_len,
                           &p->stage_mu[s], err)) ||
        (st = find_section(c, sections, ainv, c->d + (nb ? s : 0), c->d + (nb ? s : 0), pay_off,
                           pay_len, &p->stage_ainv[s], err)))
      return st;
  }
  p->rec.depth = depth;
  p->rec.mu = p->stage_mu;
  p->rec.ainv = p->stage_ainv;
  p->rec.lambda = p->stage_lambda;
  c->kind_data = &p->rec;
  return SLEM_OK;
}

static int read_recursive(SlemCache *c, const cJSON *json, const cJSON *sections,
                          uint64_t pay_off, uint64_t pay_len, const double *mu0,
                          SlemError *err) {
  return read_stages(c, json, sections, pay_off, pay_len, 0, err);
}

static int read_nubeta(SlemCache *c, const cJSON *json, const cJSON *sections,
                       uint64_t pay_off, uint64_t pay_len, const double *mu0, SlemError *err) {
  return read_stages(c, json, sections, pay_off, pay_len, 1, err);
}

/* The partial kind: the grid of leaves, the nodes (which must tile the leaves it claims,
 * each in its place of the tree, their counts adding up to n) and two sections. */
static int read_partial(SlemCache *c, const cJSON *json, const cJSON *sections,
                        uint64_t pay_off, uint64_t pay_len, const double *mu, SlemError *err) {
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
  {
    const cJSON *neg = cJSON_GetObjectItemCaseSensitive(json, "negatives");
    if (neg && (!cJSON_IsString(neg) || strlen(neg->valuestring) != 16 ||
                strspn(neg->valuestring, "0123456789abcdef") != 16))
      return slem_error(err, SLEM_EFORMAT, "%s: bad negatives in the JSON header", path);
    if (neg) memcpy(pi->negatives, neg->valuestring, 17);
  }
  pi->node = c->priv->node;
  if ((st = find_section(c, sections, "node_mu", m, c->d, pay_off, pay_len, &pi->node_mu,
                         err)) ||
      (st = find_section(c, sections, "node_scatter", m * c->d, c->d, pay_off, pay_len,
                         &pi->node_scatter, err)))
    return st;
  c->kind_data = pi;
  return SLEM_OK;
}

/* The name of a kernel section: name itself, or name.suffix for a stage of a
 * kernel-recursive cache (suffix its number). */
static const char *kname(char *buf, size_t size, const char *name, const char *suffix) {
  if (!suffix) return name;
  snprintf(buf, size, "%.15s.%.15s", name, suffix);  /* names of 9 letters, stages < 1025 */
  return buf;
}

/* A kernel cache's members (in json) and sections (named with suffix, NULL for none). */
static int read_kernel_sections(SlemCache *c, const cJSON *json, const cJSON *sections,
                                uint64_t pay_off, uint64_t pay_len, const char *suffix,
                                SlemError *err) {
  const char *path = c->priv->path;
  char nb[64];
  SlemCacheKernel *kc = &c->priv->ker;
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(json, "kernel");
  const cJSON *lam = cJSON_GetObjectItemCaseSensitive(json, "lambda");
  uint64_t r;
  int st;
  SlemError kerr;
  c->kind = SLEM_CACHE_KERNEL;
  if (!cJSON_IsString(spec) || slem_kernel_parse(&kc->kernel, spec->valuestring, &kerr) != SLEM_OK ||
      kc->kernel.gamma_relative)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid kernel", path);
  if (json_uint(json, "r", c->n < SLEM_DIM_MAX ? c->n : SLEM_DIM_MAX, &r) != 0 || r == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid rank r (1..n)", path);
  if (!cJSON_IsNumber(lam) || !(lam->valuedouble > 0) || !isfinite(lam->valuedouble))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid lambda (> 0)", path);
  kc->r = c->priv->r = r;
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
    if ((st = find_section(c, sections, kname(nb, sizeof nb, "proj", suffix), r, c->n, pay_off,
                           pay_len, &kc->proj, err)))
      return st;
  } else {
    if ((st = find_section(c, sections, kname(nb, sizeof nb, "pivots", suffix), r, c->d, pay_off,
                            pay_len, &kc->pivots, err)) ||
        (st = find_section(c, sections, kname(nb, sizeof nb, "lp", suffix), r, r, pay_off,
                            pay_len, &kc->lp, err)))
      return st;
    /* the triangular solves divide by the diagonal of lp */
    for (uint64_t i = 0; i < r; i++)
      if (!(kc->lp[i * r + i] > 0))
        return slem_error(err, SLEM_EFORMAT, "%s: section '%s' is not a Cholesky factor", path,
                          kname(nb, sizeof nb, "lp", suffix));
  }
  if ((kc->factor == SLEM_FACTOR_KPCA || kc->couple) &&
      (st = find_section(c, sections, kname(nb, sizeof nb, "negatives", suffix), c->n, c->d,
                         pay_off, pay_len, &kc->negs, err)))
    return st;
  if (kc->couple &&
      (st = find_section(c, sections, kname(nb, sizeof nb, "bneg", suffix), c->n, r, pay_off,
                         pay_len, &kc->bneg, err)))
    return st;
  if ((st = find_section(c, sections, kname(nb, sizeof nb, "mu", suffix), r, 0, pay_off,
                          pay_len, &kc->mu, err)) ||
      (st = find_section(c, sections, kname(nb, sizeof nb, "ginv", suffix), r, r, pay_off,
                          pay_len, &kc->ginv, err)))
    return st;
  c->kind_data = kc;
  return SLEM_OK;
}

/* The kernel kind: its kernel, rank, lambda and four sections. */
static int read_kernel(SlemCache *c, const cJSON *json, const cJSON *sections, uint64_t pay_off,
                       uint64_t pay_len, const double *mu, SlemError *err) {
  (void)mu;
  return read_kernel_sections(c, json, sections, pay_off, pay_len, NULL, err);
}

/* A new cache of kind kernel sharing the mapping of parent (NULL for none), named path;
 * freed by kernel_stage_free(). */
static SlemCache *kernel_stage_new(const char *path, void *map) {
  SlemCache *c = calloc(1, sizeof *c);
  if (!c || !(c->priv = calloc(1, sizeof *c->priv)) || !(c->priv->path = strdup(path))) {
    if (c) free(c->priv);
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->priv->lock, NULL);
  c->priv->map = map;
  c->kind = SLEM_CACHE_KERNEL;
  return c;
}

/* The kernel-recursive kind: depth >= 2 and one object per stage in "stages" (the members of
 * a kernel cache and its input dimension d: the cache's d, then the rank of the stage
 * before), each read as a kernel cache whose sections end in .S (S = 1..depth). */
static int read_kernel_recursive(SlemCache *c, const cJSON *json, const cJSON *sections,
                                 uint64_t pay_off, uint64_t pay_len, const double *mu,
                                 SlemError *err) {
  const char *path = c->priv->path;
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(json, "stages");
  struct SlemCachePriv *p = c->priv;
  uint64_t depth, sd;
  size_t d = c->d;
  (void)mu;
  c->kind = SLEM_CACHE_KERNEL_RECURSIVE;
  if (json_uint(json, "depth", 1024, &depth) != 0 || depth < 2)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid depth (2..1024)", path);
  if (!cJSON_IsArray(stages) || (uint64_t)cJSON_GetArraySize(stages) != depth)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no object per stage", path);
  if (!(p->kstage = calloc(depth, sizeof *p->kstage)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (uint64_t s = 0; s < depth; s++) {
    const cJSON *o = cJSON_GetArrayItem(stages, (int)s);
    char name[4096], suffix[32];
    SlemCache *st;
    int status;
    snprintf(name, sizeof name, "%s (stage %" PRIu64 ")", path, s + 1);
    snprintf(suffix, sizeof suffix, "%" PRIu64, s + 1);
    if (!(st = kernel_stage_new(name, p->map)))
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    p->kstage[p->nkstage++] = st;
    if (!cJSON_IsObject(o) || json_uint(o, "d", SLEM_DIM_MAX, &sd) != 0 || sd != d)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no input dimension d = %zu",
                        name, d);
    st->d = d;
    st->n = c->n;
    if ((status = read_kernel_sections(st, o, sections, pay_off, pay_len, suffix, err)))
      return status;
    d = slem_cache_kernel(st)->r;  /* the next stage's input: this one's descriptors */
  }
  p->krec.depth = depth;
  p->krec.stage = (const SlemCache *const *)p->kstage;
  c->kind_data = &p->krec;
  return SLEM_OK;
}

/* The kinds a cache can be: the JSON header's "kind", whether mu(d) is looked for before
 * the kind's own sections (and handed to its reader), and the reader, which checks the
 * kind's members and sections, fills its struct in the private part and points kind_data
 * at it. A new kind is one reader and one line here. */
typedef struct KindReader {
  const char *name;
  int has_mu;
  int (*read)(SlemCache *c, const cJSON *json, const cJSON *sections, uint64_t pay_off,
              uint64_t pay_len, const double *mu, SlemError *err);
} KindReader;

static const KindReader kinds[] = {
  {"linear", 1, read_linear},
  {"recursive", 1, read_recursive},
  {"recursive-nubeta", 1, read_nubeta},
  {"pca", 1, read_pca},
  {"partial", 0, read_partial},
  {"kernel", 0, read_kernel},
  {"kernel-recursive", 0, read_kernel_recursive},
};

int slem_cache_read(SlemCache **self, const char *path, SlemError *err) {
  SlemCache *c = calloc(1, sizeof *c);
  cJSON *json = NULL;
  const unsigned char *p;
  int status;
  SlemContainerHead head;
  uint64_t pay_off, pay_len, n, d;
  const double *mu = NULL;  /* linear, recursive, pca: found before the kind's sections */
  const KindReader *entry;
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
  if ((status = slem_container_load(&c->priv->map, &c->priv->map_len, &head, &json, path,
                                    SLEM_CONTAINER_CACHE, err)) != SLEM_OK)
    goto fail;
  p = c->priv->map;
  pay_off = head.pay_off;
  pay_len = head.pay_len;
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
  sections = cJSON_GetObjectItemCaseSensitive(json, "sections");
  if (!cJSON_IsArray(sections)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no sections", path);
    goto fail;
  }
  entry = NULL;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (strcmp(kind->valuestring, kinds[k].name) == 0) entry = &kinds[k];
  /* an unknown kind's mu is looked for too, as before the table: the same message first */
  if (!entry || entry->has_mu) {
    status = find_section(c, sections, "mu", d, 0, pay_off, pay_len, &mu, err);
    if (status) goto fail;
  }
  if (entry)
    status = entry->read(c, json, sections, pay_off, pay_len, mu, err);
  else
    status = slem_error(err, SLEM_EFORMAT, "%s: cache kind '%s' is not known to this slem", path,
                        kind->valuestring);
  if (status) goto fail;
  /* what descriptors record of the cache that made them, when they ask for it */
  c->priv->payload = p + pay_off;
  c->priv->payload_len = pay_len;
  c->priv->json = json;
  slem_arith_from_json(json, c->priv->arith, sizeof c->priv->arith);
  slem_arith_mixed_from_json(json, c->priv->arith_mixed, sizeof c->priv->arith_mixed);
  *self = c;
  return SLEM_OK;
fail:
  cJSON_Delete(json);
  slem_cache_free(c);
  return status;
}

/* ---- writing ---- */

typedef SlemContainerSection Section;

/* The provenance time of the caches this process writes: now, unless slem_cache_set_time()
 * fixed it (cmd/ passes SOURCE_DATE_EPOCH: reproducible caches). Set once, at start-up. */
static int fixed_time;
static int64_t fixed_epoch;

void slem_cache_set_time(int fixed, int64_t epoch) {
  fixed_time = fixed;
  fixed_epoch = epoch;
}

static cJSON *provenance_json(const SlemProvenance *prov) {
  cJSON *o = cJSON_CreateObject();
  cJSON *in = cJSON_CreateArray();
  char when[32];
  time_t t = fixed_time ? (time_t)fixed_epoch : time(NULL);
  struct tm tm;
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

/* The sections under meta, in the container's layout (container.h), written atomically. */
static int write_cache(const char *path, cJSON *meta, const Section *sec, size_t nsec,
                       SlemError *err) {
  /* a cache holds finite numbers only: an overflow upstream is said here, not written */
  for (size_t i = 0; i < nsec; i++) {
    size_t count = sec[i].rows * (sec[i].cols ? sec[i].cols : 1);
    for (size_t j = 0; j < count; j++)
      if (!isfinite(sec[i].data[j]))
        return slem_error(err, SLEM_ENUMERIC, "%s: section '%s' would hold %s (value %zu): "
                          "the statistics overflow double; scale the negatives down",
                          path, sec[i].name, isnan(sec[i].data[j]) ? "NaN" : "an infinity",
                          j + 1);
  }
  return slem_container_write_sections(path, meta, sec, nsec, err);
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
  if (info->negatives[0]) cJSON_AddStringToObject(meta, "negatives", info->negatives);
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
static size_t kernel_sections(Section *sec, char (*names)[32], const char *suffix, size_t d,
                              uint64_t n, const SlemKernelInfo *info,
                              const SlemKernelSections *ks) {
  size_t r = info->r, nsec = 0;
#define KSEC(nm, data, rows, cols) \
  sec[nsec] = (Section){kname(names[nsec], sizeof names[nsec], nm, suffix), data, rows, cols}, \
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
  cJSON *meta = meta_new("kernel", d, n);
  Section sec[6];
  char names[6][32];
  size_t nsec;
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  kernel_members(meta, info);
  add_provenance(meta, prov);
  nsec = kernel_sections(sec, names, NULL, d, n, info, ks);
  status = write_cache(path, meta, sec, nsec, err);
  cJSON_Delete(meta);
  return status;
}

int slem_cache_write_kernel_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                                      const SlemKernelInfo *const *info,
                                      const SlemKernelSections *const *ks,
                                      const SlemProvenance *prov, SlemError *err) {
  cJSON *meta = meta_new("kernel-recursive", d, n), *stages;
  Section *sec = calloc(6 * depth, sizeof *sec);
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
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, nsec, err);
  cJSON_Delete(meta);
  free(sec);
  free(names);
  return status;
}

int slem_cache_kernel_view(SlemCache **self, const char *name, size_t d, uint64_t n,
                           const SlemKernelInfo *info, const SlemKernelSections *ks,
                           SlemError *err) {
  SlemCache *c = kernel_stage_new(name, NULL);
  SlemCacheKernel *kc;
  *self = NULL;
  if (!c) return slem_error(err, SLEM_ENOMEM, "out of memory");
  c->d = d;
  c->n = n;
  kc = &c->priv->ker;
  kc->kernel = *info->kernel;
  kc->r = c->priv->r = info->r;
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
  c->kind_data = kc;
  *self = c;
  return SLEM_OK;
}

int slem_cache_write_eigen(const char *path, size_t d, uint64_t n, double lambda,
                           double lambda_rel, double trace_sigma, double rcond, int mixed,
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
  if (mixed) cJSON_AddStringToObject(meta, "covariance", "mixed");
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

/* The recursive kinds' writer: nb NULL for "recursive", else "recursive-nubeta" with stage
 * s in dimension d + s and nb's members. */
static int write_stages(const char *path, size_t d, uint64_t n, size_t depth,
                        double lambda_rel, const double *lambda, const double *trace_sigma,
                        const double *rcond, const double *const *mu, const double *const *ainv,
                        const SlemNubetaInfo *nb, const SlemProvenance *prov, SlemError *err) {
  cJSON *meta = meta_new(nb ? "recursive-nubeta" : "recursive", d, n), *lams, *traces, *rconds;
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
    sec[2 * s] = (Section){names[2 * s], mu[s], d + (nb ? s : 0), 0};
    sec[2 * s + 1] = (Section){names[2 * s + 1], ainv[s], d + (nb ? s : 0), d + (nb ? s : 0)};
  }
  if (nb) {
    cJSON *tn = cJSON_AddArrayToObject(meta, "theta_n"), *ms = cJSON_AddArrayToObject(meta, "m");
    cJSON_AddNumberToObject(meta, "theta", nb->theta);
    cJSON_AddNumberToObject(meta, "positives", (double)nb->npos);
    for (size_t s = 0; s + 1 < depth; s++) {
      cJSON_AddItemToArray(tn, cJSON_CreateNumber(nb->theta_n[s]));
      cJSON_AddItemToArray(ms, cJSON_CreateNumber(nb->m[s]));
    }
  }
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, 2 * depth, err);
  cJSON_Delete(meta);
  free(sec);
  free(names);
  return status;
}

int slem_cache_write_recursive(const char *path, size_t d, uint64_t n, size_t depth,
                               double lambda_rel, const double *lambda,
                               const double *trace_sigma, const double *rcond,
                               const double *const *mu, const double *const *ainv,
                               const SlemProvenance *prov, SlemError *err) {
  return write_stages(path, d, n, depth, lambda_rel, lambda, trace_sigma, rcond, mu, ainv,
                      NULL, prov, err);
}

int slem_cache_write_nubeta(const char *path, size_t d, uint64_t n, size_t depth,
                            double lambda_rel, const double *lambda, const double *trace_sigma,
                            const double *rcond, const double *const *mu,
                            const double *const *ainv, const SlemNubetaInfo *nb,
                            const SlemProvenance *prov, SlemError *err) {
  return write_stages(path, d, n, depth, lambda_rel, lambda, trace_sigma, rcond, mu, ainv, nb,
                      prov, err);
}

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
#include "libslem.h"
#include "vecs.h"

#define FIXED_LEN SLEM_CONTAINER_FIXED_LEN
#define ALIGN SLEM_CONTAINER_ALIGN
_Static_assert(SLEM_CACHE_VERSION == SLEM_CONTAINER_VERSION,
               "a cache's JSON and its fixed header name one version");

struct SlemCachePriv {
  void *map;          /* the file's bytes; NULL for a view (slem_cache_view_new()) */
  size_t map_len;
  char *json_text;  /* pretty-printed, with the fingerprint: made at the first call */
  cJSON *json;      /* the header, until then */
  const cJSON *sections;  /* the header's sections (a view: its parent's), or NULL */
  uint64_t pay_off, pay_len;
  const SlemCache *parent;  /* a view's, whose mapping and sections it reads; else NULL */
  /* the fingerprint, computed at the first call: hashing a large payload byte by byte
   * costs more than reading it, and most runs never need it */
  pthread_mutex_t lock;
  int fp_done;
  char fingerprint[17];
  const unsigned char *payload;
  uint64_t payload_len;
  char *path;
  void (*kind_free)(void *);  /* frees kind_data (slem_cache_set_kind()) */
  void *kind_own;
  size_t r;  /* the rank of a kernel or pca cache, named in the messages on its sections */
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

void slem_cache_free(SlemCache *self) {
  if (!self) return;
  if (self->priv) {
    if (self->priv->kind_free) self->priv->kind_free(self->priv->kind_own);
    free(self->priv->map);
    free(self->priv->json_text);
    cJSON_Delete(self->priv->json);
    pthread_mutex_destroy(&self->priv->lock);
    free(self->priv->path);
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

int slem_cache_set_path(SlemCache *self, const char *name, SlemError *err) {
  char *copy = strdup(name);
  if (!copy) return slem_error(err, SLEM_ENOMEM, "out of memory");
  free(self->priv->path);
  self->priv->path = copy;
  return SLEM_OK;
}

int slem_cache_bytes(const SlemCache *self, const void **p, size_t *n) {
  if (!self->priv->map) return 0;
  *p = self->priv->map;
  *n = self->priv->map_len;
  return 1;
}

const char *slem_cache_kind(const SlemCache *self) { return self->kind; }

void slem_cache_set_kind(SlemCache *self, const void *data, void *own, void (*own_free)(void *)) {
  self->kind_data = data;
  self->priv->kind_own = own;
  self->priv->kind_free = own_free;
}

void slem_cache_set_rank(SlemCache *self, size_t r) { self->priv->r = r; }

const cJSON *slem_cache_header(const SlemCache *self) {
  return self->priv->parent ? slem_cache_header(self->priv->parent) : self->priv->json;
}

const char *slem_cache_arith(const SlemCache *self) {
  return self->priv->arith[0] ? self->priv->arith : NULL;
}

const char *slem_cache_arith_mixed(const SlemCache *self) {
  return self->priv->arith_mixed[0] ? self->priv->arith_mixed : NULL;
}

int slem_cache_member_uint(const cJSON *obj, const char *key, uint64_t max, uint64_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  double v;
  if (!cJSON_IsNumber(it)) return -1;
  v = it->valuedouble;
  if (!(v >= 0) || v > (double)max || v != floor(v)) return -1;
  *out = (uint64_t)v;
  return 0;
}

int slem_cache_section(const SlemCache *self, const char *name, uint64_t rows, uint64_t cols,
                       const double **data, SlemError *err) {
  const struct SlemCachePriv *p = self->priv, *m = p->parent ? p->parent->priv : p;
  uint64_t off, want[2] = {rows, cols};
  char what[64];
  int st;
  if (!m->sections)
    return slem_error(err, SLEM_EFORMAT, "%s: section '%s' is missing", p->path, name);
  snprintf(what, sizeof what, "d = %zu%s", self->d, p->r ? " and r" : "");
  st = slem_container_section_find(&off, m->sections, name, cols ? 2 : 1, want, m->pay_off,
                                   m->pay_len, what, p->path, err);
  if (st == SLEM_OK) *data = (const double *)((const unsigned char *)m->map + off);
  return st;
}

int slem_cache_has_section(const SlemCache *self, const char *name) {
  const struct SlemCachePriv *m = self->priv->parent ? self->priv->parent->priv : self->priv;
  return m->sections && slem_container_section_has(m->sections, name);
}

/* A cache with no file yet, named path; NULL when out of memory. */
static SlemCache *cache_new(const char *path) {
  SlemCache *c = calloc(1, sizeof *c);
  if (!c || !(c->priv = calloc(1, sizeof *c->priv)) || !(c->priv->path = strdup(path))) {
    if (c) free(c->priv);
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->priv->lock, NULL);
  return c;
}

int slem_cache_view_new(SlemCache **self, const char *name, const char *kind, size_t d,
                        uint64_t n, const SlemCache *parent, SlemError *err) {
  SlemCache *c = cache_new(name);
  *self = NULL;
  if (!c) return slem_error(err, SLEM_ENOMEM, "out of memory");
  c->kind = kind;
  c->d = d;
  c->n = n;
  c->priv->parent = parent;
  *self = c;
  return SLEM_OK;
}

int slem_cache_load(SlemCache **self, const char *path, SlemError *err) {
  SlemCache *c = cache_new(path);
  cJSON *json = NULL;
  const unsigned char *p;
  int status;
  SlemContainerHead head;
  uint64_t pay_off, pay_len, n, d;
  const cJSON *kind, *sections;
  *self = NULL;
  if (!c) return slem_error(err, SLEM_ENOMEM, "out of memory");
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
  if (slem_cache_member_uint(json, "d", SLEM_DIM_MAX, &d) != 0 || d == 0 ||
      slem_cache_member_uint(json, "n", (uint64_t)1 << 53, &n) != 0 || !cJSON_IsString(kind) ||
      (n == 0 && strcmp(kind->valuestring, "partial") != 0)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header lacks a valid kind, d or n", path);
    goto fail;
  }
  c->d = d;
  c->n = n;
  c->kind = kind->valuestring;
  sections = cJSON_GetObjectItemCaseSensitive(json, "sections");
  if (!cJSON_IsArray(sections)) {
    status = slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no sections", path);
    goto fail;
  }
  c->priv->sections = sections;
  c->priv->pay_off = pay_off;
  c->priv->pay_len = pay_len;
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

int slem_cache_prov_append(SlemProvenance *prov, const char ***pin, const char *const *inputs,
                           size_t n, const char *extra, SlemError *err) {
  if (!(*pin = calloc(n + 1, sizeof **pin))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  memcpy(*pin, inputs, n * sizeof **pin);
  (*pin)[n] = extra;
  prov->inputs = *pin;
  prov->ninputs = n + 1;
  return SLEM_OK;
}

int slem_cache_write(const char *path, const char *kind, size_t d, uint64_t n, cJSON *members,
                     const SlemCacheSection *sec, size_t nsec, const SlemProvenance *prov,
                     SlemError *err) {
  cJSON *meta = meta_new(kind, d, n);
  int status;
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  /* the kind's members, in their order, after the common ones */
  while (members && members->child) {
    cJSON *it = members->child;
    char *name = it->string;
    cJSON_DetachItemViaPointer(members, it);
    it->string = NULL;
    cJSON_AddItemToObject(meta, name, it);
    free(name);
  }
  add_provenance(meta, prov);
  status = write_cache(path, meta, sec, nsec, err);
  cJSON_Delete(meta);
  return status;
}


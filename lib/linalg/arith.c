#define _GNU_SOURCE
#include "arith.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_version.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "dot.h"
#include "blas.h"

/* Declared by OpenBLAS; weak so that a build against another CBLAS still links. */
extern char *openblas_get_config(void) __attribute__((weak));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char name[SLEM_ARITH_MAX], blas[64], config[128], libc[48];

/* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64": the first two words
 * name the library and its version; the rest is how it was built. */
static void describe(void) {
  const char *cfg = openblas_get_config ? openblas_get_config() : NULL;
  if (cfg) {
    const char *sp = strchr(cfg, ' '), *end = sp ? strchr(sp + 1, ' ') : NULL;
    size_t len = end ? (size_t)(end - cfg) : strlen(cfg);
    snprintf(config, sizeof config, "%s", cfg);
    snprintf(blas, sizeof blas, "%.*s", (int)(len < sizeof blas ? len : sizeof blas - 1), cfg);
  } else {
    const char *lib = slem_blas_library(), *slash = strrchr(lib, '/');
    snprintf(config, sizeof config, "%s", lib);
    snprintf(blas, sizeof blas, "%s", slash ? slash + 1 : lib);
  }
#ifdef __GLIBC__
  snprintf(libc, sizeof libc, "glibc %s", gnu_get_libc_version());
#else
  snprintf(libc, sizeof libc, "libc unknown");
#endif
  snprintf(name, sizeof name, "%s (%s, GSL %s, %s)", slem_blas_corename(), blas, gsl_version,
           libc);
}

const char *slem_arith_name(void) {
  pthread_once(&once, describe);
  return name;
}

const char *slem_arith_core(void) { return slem_blas_corename(); }

int slem_arith_to_json(struct cJSON *obj, const char *mixed) {
  cJSON *a = cJSON_CreateObject();
  pthread_once(&once, describe);
  if (!a || !cJSON_AddStringToObject(a, "name", name) ||
      !cJSON_AddStringToObject(a, "blas_core", slem_blas_corename()) ||
      !cJSON_AddStringToObject(a, "blas_config", config) ||
      !cJSON_AddStringToObject(a, "gsl", gsl_version) || !cJSON_AddStringToObject(a, "libc", libc) ||
      !cJSON_AddStringToObject(a, "lanes", slem_dot_lanes_avx() ? "avx" : "sse2") ||
      (mixed && *mixed && !cJSON_AddStringToObject(a, "mixed", mixed)) ||
      !cJSON_AddItemToObject(obj, "arithmetic", a)) {
    cJSON_Delete(a);
    return -1;
  }
  return 0;
}

void slem_arith_from_json(const struct cJSON *obj, char *out, size_t size) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "arithmetic");
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(a, "name");
  snprintf(out, size, "%s", cJSON_IsString(nm) ? nm->valuestring : "");
}

void slem_arith_mixed_from_json(const struct cJSON *obj, char *list, size_t size) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "arithmetic");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(a, "mixed");
  snprintf(list, size, "%s", cJSON_IsString(m) ? m->valuestring : "");
}

int slem_arith_differ(const char *a, const char *b) {
  return a && b && *a && *b && strcmp(a, b) != 0;
}

int slem_arith_differ_libs(const char *a, const char *b) {
  const char *la, *lb;
  if (!slem_arith_differ(a, b)) return 0;
  la = strstr(a, " (");
  lb = strstr(b, " (");
  return !la || !lb || strcmp(la, lb) != 0;
}

void slem_arith_core_of(const char *line, char *core, size_t size) {
  const char *p = strstr(line, " (");
  size_t len = p ? (size_t)(p - line) : strlen(line);
  snprintf(core, size, "%.*s", (int)(len < size ? len : size - 1), line);
}

void slem_arith_list_add(char *list, size_t size, const char *line) {
  size_t len = strlen(list);
  if (!line || !*line) return;
  for (const char *p = list; (p = strstr(p, line)) != NULL; p++) {
    size_t l = strlen(line);
    if ((p == list || (p - list >= 3 && strncmp(p - 3, " + ", 3) == 0)) && (p[l] == 0 || strncmp(p + l, " + ", 3) == 0))
      return;
  }
  snprintf(list + len, size - len, "%s%s", len ? " + " : "", line);
}

void slem_arith_list_merge(char *list, size_t size, const char *other) {
  char line[SLEM_ARITH_MAX];
  while (other && *other) {
    const char *end = strstr(other, " + ");
    size_t len = end ? (size_t)(end - other) : strlen(other);
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), other);
    slem_arith_list_add(list, size, line);
    other = end ? end + 3 : NULL;
  }
}

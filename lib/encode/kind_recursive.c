#include "kind_recursive.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"

/* The stages' data, one allocation's arrays. */
typedef struct Stages {
  SlemCacheRecursive rec;
  const double **mu, **ainv;
  double *lambda, *theta_n;
} Stages;

static void stages_free(void *p) {
  Stages *s = p;
  if (!s) return;
  free(s->mu);
  free(s->ainv);
  free(s->lambda);
  free(s->theta_n);
  free(s);
}

const SlemCacheRecursive *slem_cache_recursive(const SlemCache *self) {
  return self->kind_data && (strcmp(self->kind, "recursive") == 0 ||
                             strcmp(self->kind, "recursive-nubeta") == 0) ? self->kind_data : NULL;
}

/* depth, the lambda of every stage, and mu.S, ainv.S per stage; with nb (recursive-nubeta)
 * stage S in dimension d + S - 1, theta and theta_n per stage but the last. */
static int read_stages(SlemCache *c, Stages *p, int nb, SlemError *err) {
  const char *path = slem_cache_path(c);
  const cJSON *json = slem_cache_header(c);
  const cJSON *lams = cJSON_GetObjectItemCaseSensitive(json, "lambdas");
  uint64_t depth;
  int st;
  if (slem_cache_member_uint(json, "depth", 1024, &depth) != 0 || depth < 2)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid depth (2..1024)", path);
  if (nb) {
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(json, "theta");
    const cJSON *tn = cJSON_GetObjectItemCaseSensitive(json, "theta_n");
    if (!cJSON_IsNumber(th) || !(th->valuedouble > 0) || !isfinite(th->valuedouble) ||
        !cJSON_IsArray(tn) || (uint64_t)cJSON_GetArraySize(tn) != depth - 1)
      return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no valid theta and "
                        "theta_n per stage", path);
    if (!(p->theta_n = calloc(depth, sizeof *p->theta_n)))
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    for (uint64_t s = 0; s + 1 < depth; s++) {
      const cJSON *t = cJSON_GetArrayItem(tn, (int)s);
      if (!cJSON_IsNumber(t) || !(t->valuedouble > 0) || !isfinite(t->valuedouble))
        return slem_error(err, SLEM_EFORMAT, "%s: stage %" PRIu64 ": no valid theta_n", path,
                          s + 1);
      p->theta_n[s] = t->valuedouble;
    }
    p->rec.nu_beta = 1;
    p->rec.theta = th->valuedouble;
    p->rec.theta_n = p->theta_n;
  }
  if (!cJSON_IsArray(lams) || (uint64_t)cJSON_GetArraySize(lams) != depth)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header has no lambda per stage", path);
  p->mu = calloc(depth, sizeof *p->mu);
  p->ainv = calloc(depth, sizeof *p->ainv);
  p->lambda = calloc(depth, sizeof *p->lambda);
  if (!p->mu || !p->ainv || !p->lambda) return slem_error(err, SLEM_ENOMEM, "out of memory");
  for (uint64_t s = 0; s < depth; s++) {
    const cJSON *l = cJSON_GetArrayItem(lams, (int)s);
    char mu[32], ainv[32];
    size_t ds = c->d + (nb ? s : 0);
    if (!cJSON_IsNumber(l) || !(l->valuedouble >= 0) || !isfinite(l->valuedouble))
      return slem_error(err, SLEM_EFORMAT, "%s: stage %" PRIu64 ": no valid lambda", path, s + 1);
    p->lambda[s] = l->valuedouble;
    if (s == 0) {
      strcpy(mu, "mu");
      strcpy(ainv, "ainv");
    } else {
      snprintf(mu, sizeof mu, "mu.%" PRIu64, s + 1);
      snprintf(ainv, sizeof ainv, "ainv.%" PRIu64, s + 1);
    }
    if ((st = slem_cache_section(c, mu, ds, 0, &p->mu[s], err)) ||
        (st = slem_cache_section(c, ainv, ds, ds, &p->ainv[s], err)))
      return st;
  }
  p->rec.depth = depth;
  p->rec.mu = p->mu;
  p->rec.ainv = p->ainv;
  p->rec.lambda = p->lambda;
  return SLEM_OK;
}

static int read_kind(SlemCache *c, int nb, SlemError *err) {
  Stages *p = calloc(1, sizeof *p);
  int st;
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = read_stages(c, p, nb, err)) != SLEM_OK) {
    stages_free(p);
    return st;
  }
  slem_cache_set_kind(c, &p->rec, p, stages_free);
  return SLEM_OK;
}

static int read_recursive(SlemCache *c, const double *mu0, SlemError *err) {
  (void)mu0;
  return read_kind(c, 0, err);
}

static int read_nubeta(SlemCache *c, const double *mu0, SlemError *err) {
  (void)mu0;
  return read_kind(c, 1, err);
}

const SlemCacheKindOps slem_kind_recursive = {"recursive", 1, read_recursive};
const SlemCacheKindOps slem_kind_nubeta = {"recursive-nubeta", 1, read_nubeta};

/* Both kinds' writer: nb NULL for "recursive", else "recursive-nubeta" with stage s in
 * dimension d + s and nb's members. */
static int write_stages(const char *path, size_t d, uint64_t n, size_t depth,
                        double lambda_rel, const double *lambda, const double *trace_sigma,
                        const double *rcond, const double *const *mu, const double *const *ainv,
                        const SlemNubetaInfo *nb, const SlemProvenance *prov, SlemError *err) {
  cJSON *m = cJSON_CreateObject(), *lams, *traces, *rconds;
  SlemCacheSection *sec = calloc(2 * depth, sizeof *sec);
  char (*names)[32] = calloc(2 * depth, sizeof *names);
  int status;
  if (!m || !sec || !names) {
    cJSON_Delete(m);
    free(sec);
    free(names);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  cJSON_AddNumberToObject(m, "depth", (double)depth);
  cJSON_AddNumberToObject(m, "lambda", lambda[0]);
  if (lambda_rel >= 0) cJSON_AddNumberToObject(m, "lambda_rel", lambda_rel);
  lams = cJSON_AddArrayToObject(m, "lambdas");
  traces = cJSON_AddArrayToObject(m, "trace_sigmas");
  rconds = cJSON_AddArrayToObject(m, "rconds");
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
    sec[2 * s] = (SlemCacheSection){names[2 * s], mu[s], d + (nb ? s : 0), 0};
    sec[2 * s + 1] = (SlemCacheSection){names[2 * s + 1], ainv[s], d + (nb ? s : 0),
                                        d + (nb ? s : 0)};
  }
  if (nb) {
    cJSON *tn = cJSON_AddArrayToObject(m, "theta_n"), *ms = cJSON_AddArrayToObject(m, "m");
    cJSON_AddNumberToObject(m, "theta", nb->theta);
    cJSON_AddNumberToObject(m, "positives", (double)nb->npos);
    for (size_t s = 0; s + 1 < depth; s++) {
      cJSON_AddItemToArray(tn, cJSON_CreateNumber(nb->theta_n[s]));
      cJSON_AddItemToArray(ms, cJSON_CreateNumber(nb->m[s]));
    }
  }
  status = slem_cache_write(path, nb ? "recursive-nubeta" : "recursive", d, n, m, sec,
                            2 * depth, prov, err);
  cJSON_Delete(m);
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

#include "kind_partial.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"
#include "fit.h"
#include "phases.h"
#include "stats.h"
#include "variant.h"

/* The nodes' data: the info and the node table it points to. */
typedef struct Partial {
  SlemPartialInfo info;
  uint64_t *node;
} Partial;

static void partial_free(void *q) {
  Partial *p = q;
  if (p) free(p->node);
  free(p);
}

const SlemPartialInfo *slem_cache_partial(const SlemCache *self) {
  return self->kind_data && strcmp(self->kind, "partial") == 0 ? self->kind_data : NULL;
}

/* The grid of leaves, the nodes (which must tile the leaves it claims, each in its place
 * of the tree, their counts adding up to n) and two sections. */
static int read_partial(SlemCache *c, Partial *p, SlemError *err) {
  const char *path = slem_cache_path(c);
  const cJSON *json = slem_cache_header(c);
  const cJSON *leaves = cJSON_GetObjectItemCaseSensitive(json, "leaves");
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(json, "nodes");
  SlemPartialInfo *pi = &p->info;
  uint64_t lr, m, at, sum = 0, v[3];
  int st;
  if (slem_cache_member_uint(json, "leaf_rows", (uint64_t)1 << 32, &lr) != 0 ||
      slem_cache_member_uint(json, "leaf_total", (uint64_t)1 << 53, &pi->leaf_total) != 0 ||
      slem_cache_member_uint(json, "rows", (uint64_t)1 << 53, &pi->rows) != 0 || !cJSON_IsArray(leaves) ||
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
  if (m && !(p->node = malloc(m * 3 * sizeof *p->node)))
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
    memcpy(p->node + 3 * k, v, sizeof v);
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
  pi->node = p->node;
  if ((st = slem_cache_section(c, "node_mu", m, c->d, &pi->node_mu, err)) ||
      (st = slem_cache_section(c, "node_scatter", m * c->d, c->d, &pi->node_scatter, err)))
    return st;
  return SLEM_OK;
}

static int read_kind(SlemCache *c, const double *mu, SlemError *err) {
  Partial *p = calloc(1, sizeof *p);
  int st;
  (void)mu;
  if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = read_partial(c, p, err)) != SLEM_OK) {
    partial_free(p);
    return st;
  }
  slem_cache_set_kind(c, &p->info, p, partial_free);
  return SLEM_OK;
}

const SlemCacheKindOps slem_kind_partial = {"partial", 0, read_kind};

int slem_cache_write_partial(const char *path, size_t d, uint64_t n,
                             const SlemPartialInfo *info, const SlemProvenance *prov,
                             SlemError *err) {
  cJSON *meta = cJSON_CreateObject(), *leaves, *nodes;
  SlemCacheSection sec[2] = {{"node_mu", info->node_mu, info->nnodes, d},
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
  status = slem_cache_write(path, "partial", d, n, meta, sec, 2, prov, err);
  cJSON_Delete(meta);
  return status;
}


/* Writes the nodes of st as a partial cache. */
static int write_partial(const char *output, SlemStats *st, const SlemPartialInfo *grid,
                         const SlemProvenance *prov, SlemError *err) {
  size_t m = slem_stats_nodes(st), d = slem_stats_dim(st);
  SlemPartialInfo pi = *grid;
  uint64_t *node = malloc((m ? m : 1) * 3 * sizeof *node);
  double *mu = malloc((m ? m : 1) * d * sizeof *mu);
  double *sc = calloc((m ? m : 1) * d * d, sizeof *sc);
  int status;
  if (!node || !mu || !sc) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for %zu nodes of dimension %zu", m, d);
    goto done;
  }
  for (size_t k = 0; k < m; k++) {
    unsigned level;
    const double *nm;
    slem_stats_node(st, k, &level, &node[3 * k + 1], &node[3 * k + 2], &nm, sc + k * d * d);
    node[3 * k] = level;
    memcpy(mu + k * d, nm, d * sizeof *mu);
  }
  pi.nnodes = m;
  pi.node = node;
  pi.node_mu = mu;
  pi.node_scatter = sc;
  pi.leaf_end = slem_stats_next_leaf(st);
  status = slem_cache_write_partial(output, d, slem_stats_count(st), &pi, prov, err);
done:
  free(node);
  free(mu);
  free(sc);
  return status;
}

/* --partial: the nodes of the stream's statistics, unfinished, so that merging stays
 * exact. */
static int takes_partial(const SlemNegstatsOpts *o) { return o->partial; }

static int finish_partial(const SlemFitStream *s, const SlemNegstatsOpts *o,
                          SlemNegstatsResult *res, SlemError *err) {
  double t0 = slem_now();
  int st = write_partial(s->output, s->stats, s->grid, s->prov, err);
  (void)o;
  res->phases.write += slem_now() - t0;
  return st;
}

const SlemFitOps slem_fit_partial = {"partial", takes_partial, finish_partial, NULL, NULL, NULL, NULL};

#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
static const SlemOptSpec partial_fit_options[] = {
    {.name = "partial", .type = SLEM_OPT_FLAG, O(partial),
     .help = "write mergeable partial statistics (counts, means,\n"
             "scatters)"},
    {.name = "shard", .metavar = "I/N", .type = SLEM_OPT_CUSTOM, O(shard),
     .parse = slem_optspec_shard,
     .help = "with --partial: only leaves floor(I*L/N) ..\n"
             "floor((I+1)*L/N)-1 of the L leaves of rows of the\n"
             "inputs; the N partial caches merge into the statistics\n"
             "of all rows, bit for bit those of one run over them"},
    {0}};
#undef O

const SlemVariant slem_variant_partial = {
    "partial",
    "mergeable partial statistics of shards (slem-negstats --partial)",
    &slem_kind_partial, &slem_fit_partial, NULL, partial_fit_options, NULL};

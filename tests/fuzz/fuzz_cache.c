/* Caches: a file that passes every check must have sections that can be read whole. */
#define _GNU_SOURCE /* memfd_create */
#include "../../lib/formats/cache.h"
#include "fuzz.h"

/* where the sums go, so that the reads are not optimised away */
volatile double fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  SlemCache *c = NULL;
  SlemError err;
  int fd = fuzz_file(path, data, size);
  if (fd < 0) return 0;
  if (slem_cache_read(&c, path, &err) == SLEM_OK) {
    double s = 0;
    size_t d = c->d, r = c->r;
    size_t nmu = c->kind == SLEM_CACHE_KERNEL ? r : c->kind == SLEM_CACHE_PARTIAL ? 0 : d;
    for (size_t i = 0; i < nmu; i++) s += c->mu[i];
    if (c->ainv) for (size_t i = 0; i < d * d; i++) s += c->ainv[i];
    if (c->partial)
      for (size_t k = 0; k < c->partial->nnodes; k++) {
        s += (double)c->partial->node[3 * k + 2] + c->partial->node_mu[k * d];
        for (size_t i = 0; i < d * d; i++) s += c->partial->node_scatter[k * d * d + i];
      }
    if (c->pivots) for (size_t i = 0; i < r * d; i++) s += c->pivots[i];
    if (c->lp) for (size_t i = 0; i < r * r; i++) s += c->lp[i] + c->ginv[i];
    fuzz_sink = s;
    (void)slem_cache_json(c);
    slem_cache_free(c);
  }
  close(fd);
  return 0;
}

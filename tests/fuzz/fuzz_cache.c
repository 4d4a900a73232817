/* Caches: a file that passes every check must have sections that can be read whole. */
#define _GNU_SOURCE /* memfd_create */
#include "../../lib/cache.h"
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
    size_t nmu = c->kind == SLEM_CACHE_KERNEL ? r : d;
    for (size_t i = 0; i < nmu; i++) s += c->mu[i];
    if (c->ainv) for (size_t i = 0; i < d * d; i++) s += c->ainv[i];
    if (c->scatter) for (size_t i = 0; i < d * d; i++) s += c->scatter[i];
    if (c->pivots) for (size_t i = 0; i < r * d; i++) s += c->pivots[i];
    if (c->lp) for (size_t i = 0; i < r * r; i++) s += c->lp[i] + c->ginv[i];
    fuzz_sink = s;
    (void)slem_cache_json(c);
    slem_cache_free(c);
  }
  close(fd);
  return 0;
}

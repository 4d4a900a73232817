/* Caches: a file that passes every check must have sections that can be read whole. */
#define _GNU_SOURCE /* memfd_create */
#include "../../lib/formats/cache.h"
#include "../../lib/encode/var_linear.h"
#include "../../lib/encode/var_pca.h"
#include "../../lib/encode/kind_recursive.h"
#include "../../lib/encode/var_partial.h"
#include "../../lib/encode/var_kernel.h"
#include "../../lib/encode/cachekinds.h"
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
    size_t d = c->d;
    const SlemCacheLinear *lin = slem_cache_linear(c);
    const SlemCacheEigen *eig = slem_cache_eigen(c);
    const SlemPartialInfo *pi = slem_cache_partial(c);
    const SlemCacheRecursive *rec = slem_cache_recursive(c);
    if (lin)
      for (size_t i = 0; i < d * d; i++) s += lin->ainv[i] + (i < d ? lin->mu[i] : 0);
    if (eig)
      for (size_t k = 0; k < eig->neig; k++) {
        s += eig->evals[k];
        for (size_t i = 0; i < d; i++) s += eig->evecs[k * d + i] + eig->mu[i];
      }
    if (pi)
      for (size_t k = 0; k < pi->nnodes; k++) {
        s += (double)pi->node[3 * k + 2] + pi->node_mu[k * d];
        for (size_t i = 0; i < d * d; i++) s += pi->node_scatter[k * d * d + i];
      }
    const SlemCacheKernelRecursive *krec = slem_cache_kernel_recursive(c);
    for (size_t k = 0; k < (krec ? krec->depth : 0) + 1; k++) {
      /* a kernel cache, or each stage of a kernel-recursive one (a kernel cache of its d) */
      const SlemCache *kc = krec ? (k < krec->depth ? krec->stage[k] : NULL) : k == 0 ? c : NULL;
      const SlemCacheKernel *ker = kc ? slem_cache_kernel(kc) : NULL;
      size_t r, kd;
      if (!ker) continue;
      r = ker->r, kd = kc->d;
      for (size_t i = 0; i < r; i++) s += ker->mu[i];
      for (size_t i = 0; i < r * r; i++) s += ker->ginv[i];
      if (ker->pivots) for (size_t i = 0; i < r * kd; i++) s += ker->pivots[i];
      if (ker->lp) for (size_t i = 0; i < r * r; i++) s += ker->lp[i];
      if (ker->proj) for (size_t i = 0; i < r * c->n; i++) s += ker->proj[i];
      if (ker->negs) for (size_t i = 0; i < c->n * kd; i++) s += ker->negs[i];
      if (ker->bneg) for (size_t i = 0; i < c->n * r; i++) s += ker->bneg[i];
    }
    if (rec)
      for (size_t k = 0; k < rec->depth; k++)
        for (size_t i = 0; i < d * d; i++) s += rec->ainv[k][i] + (i < d ? rec->mu[k][i] : 0);
    fuzz_sink = s;
    (void)slem_cache_json(c);
    slem_cache_free(c);
  }
  close(fd);
  return 0;
}

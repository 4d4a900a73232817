#define _GNU_SOURCE
#include <dlfcn.h>

#include "slem.h"

/* Declared by OpenBLAS; weak so that a build against another CBLAS still links. */
extern void openblas_set_num_threads(int) __attribute__((weak));

const char *slem_blas_library(void) {
  Dl_info info;
  void *sym = dlsym(RTLD_DEFAULT, "cblas_dgemm");
  if (sym && dladdr(sym, &info) && info.dli_fname) return info.dli_fname;
  return "unknown";
}

void slem_set_threads(int n) {
  if (n > 0 && openblas_set_num_threads) openblas_set_num_threads(n);
}

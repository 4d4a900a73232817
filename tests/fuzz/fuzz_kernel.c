/* Kernel specs, and the kernels on the vectors that follow them: the input is a spec, a
 * NUL, then text vectors used as negatives for a small factorisation. */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>

#include "../../lib/linalg/kernel.h"
#include "../../lib/formats/vecs.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep = memchr(data, 0, size);
  char spec[128], path[64];
  SlemKernel k;
  SlemVecReader *r = NULL;
  SlemError err;
  int fd;
  size_t n;
  if (!sep || (size_t)(sep - data) >= sizeof spec) return 0;
  memcpy(spec, data, (size_t)(sep - data));
  spec[sep - data] = '\0';
  if (slem_kernel_parse(&k, spec, &err) != SLEM_OK) return 0;
  fd = fuzz_file(path, sep + 1, size - (size_t)(sep - data) - 1);
  if (fd < 0) return 0;
  if (slem_vecreader_open(&r, path, SLEM_FMT_TEXT, &err) == SLEM_OK && slem_vecreader_dim(r) <= 64) {
    size_t d = slem_vecreader_dim(r);
    double *x = malloc(32 * d * sizeof *x), *b = malloc(32 * 8 * sizeof *b), trace[9], median;
    size_t piv[8], rank;
    if (x && b && slem_vecreader_read(r, x, 32, &n, &err) == SLEM_OK && n > 0 &&
        slem_kernel_prepare(&k, x, n, d, "fuzz", 1, &err) == SLEM_OK) {
      if (k.gamma_relative) slem_kernel_estimate_gamma(&k, &median, x, n, d, 16, 1, &err);
      SlemKernelIcl icl = {0, b, piv, trace};
      if (!k.gamma_relative) slem_kernel_icl(&icl, &k, x, n, d, 8, 0, &err);
      rank = icl.rank;
      (void)rank;
    }
    free(x);
    free(b);
  }
  slem_vecreader_free(r);
  close(fd);
  return 0;
}
